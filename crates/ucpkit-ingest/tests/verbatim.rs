//! Verbatim text over the real corpora `scripts/test` fetches: every
//! text, code and table block's text, whitespace collapsed, occurs in the
//! visible text of its HTML page or in the raw text of its markdown file;
//! and every answer string of the two dev question sets occurs in a block
//! of its gold files. Without a corpus the test says so and passes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use scraper::{Html, Node};
use ucpkit_core::{Content, Document};
use ucpkit_ingest::ingest;

/// The folder or file the environment variable `var` names; a test that
/// needs it is `#[ignore]`d (scripts/test sets it and runs ignored tests),
/// so reaching here without it is a mistake worth failing on.
fn required(var: &str) -> PathBuf {
    std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| panic!("{var} is not set (scripts/test sets it)"))
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Elements whose boundaries separate text (the eval's visible-text rule).
const BLOCK_ELEMENTS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "dd",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "main",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "ul",
    "br",
];

/// What a browser shows of a page: text outside head, script, style,
/// template and noscript, block elements separated, whitespace collapsed.
fn visible_text(html: &str) -> String {
    fn walk(node: ego_tree::NodeRef<'_, Node>, out: &mut String) {
        match node.value() {
            Node::Text(text) => out.push_str(text),
            Node::Element(el) => {
                if matches!(el.name(), "head" | "script" | "style" | "template" | "noscript") {
                    return;
                }
                let block = BLOCK_ELEMENTS.contains(&el.name());
                if block {
                    out.push('\n');
                }
                node.children().for_each(|child| walk(child, out));
                if block {
                    out.push('\n');
                }
            }
            _ => node.children().for_each(|child| walk(child, out)),
        }
    }
    let page = Html::parse_document(html);
    let mut out = String::new();
    walk(page.tree.root(), &mut out);
    collapse(&out)
}

/// The pieces of a block's text that must each occur in the source.
fn texts(content: &Content) -> Vec<String> {
    match content {
        Content::Text { text, .. } => vec![collapse(text)],
        Content::Code { source, .. } => vec![collapse(source)],
        Content::Table { columns, rows, .. } => {
            columns.iter().chain(rows.iter().flatten()).map(|c| collapse(c)).collect()
        }
        _ => Vec::new(),
    }
}

/// Each file's blocks' texts, by the file's path in the corpus.
fn texts_by_file(doc: &Document) -> HashMap<String, Vec<String>> {
    let mut by_file: HashMap<String, Vec<String>> = HashMap::new();
    for block in doc.blocks() {
        if let Some(source) = &block.metadata.source {
            by_file.entry(source.file.to_string()).or_default().extend(texts(&block.content));
        }
    }
    by_file
}

/// Asserts every block text of the corpus occurs in its source file.
fn assert_blocks_quote_sources(dir: &Path, by_file: &HashMap<String, Vec<String>>) {
    let mut checked = 0;
    let mut missing = Vec::new();
    // Folder blocks name a folder, not a file.
    for (file, texts) in by_file.iter().filter(|(file, _)| dir.join(file).is_file()) {
        let raw = std::fs::read_to_string(dir.join(file)).unwrap();
        let source =
            if file.ends_with(".html") || file.ends_with(".htm") { visible_text(&raw) } else { collapse(&raw) };
        for text in texts.iter().filter(|t| !t.is_empty()) {
            checked += 1;
            if !source.contains(text.as_str()) {
                missing.push(format!("{file}: {text:.120}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} of {checked} block texts not in their source:\n{}",
        missing.len(),
        missing[..missing.len().min(20)].join("\n")
    );
    assert!(checked > 1000, "only {checked} block texts");
}

/// Asserts every answer string of `questions` occurs in one block of its
/// question's gold files.
fn assert_answers_present(questions: &Path, by_file: &HashMap<String, Vec<String>>) {
    let Ok(questions) = std::fs::read_to_string(questions) else {
        eprintln!("{} not found: skipping the answer check", questions.display());
        return;
    };
    let mut checked = 0;
    let mut missing = Vec::new();
    for line in questions.lines().filter(|l| !l.trim().is_empty()) {
        let question: serde_json::Value = serde_json::from_str(line).unwrap();
        let gold: Vec<&str> =
            question["gold"].as_array().unwrap().iter().map(|g| g["file"].as_str().unwrap()).collect();
        for answer in question["answers"].as_array().unwrap() {
            let answer = collapse(answer.as_str().unwrap());
            checked += 1;
            let found = gold.iter().filter_map(|f| by_file.get(*f)).flatten().any(|t| t.contains(&answer));
            if !found {
                missing.push(format!("{}: {answer:?}", question["id"]));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} of {checked} answers not in a block of their gold files:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

fn eval_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/eval")
}

#[test]
#[ignore = "needs UCP_PY_DOCS: scripts/test fetches it and runs this"]
fn python_docs_blocks_are_the_pages_visible_text() {
    let dir = required("UCP_PY_DOCS");
    let doc = ingest(std::slice::from_ref(&dir), "python", &Default::default(), &()).unwrap().document;
    let by_file = texts_by_file(&doc);
    assert_blocks_quote_sources(&dir, &by_file);
    assert_answers_present(&eval_dir().join("python-questions.jsonl"), &by_file);
}

#[test]
#[ignore = "needs UCP_NODE_CORPUS: scripts/test fetches it and runs this"]
fn node_docs_blocks_are_the_files_raw_text() {
    let dir = required("UCP_NODE_CORPUS");
    let doc = ingest(std::slice::from_ref(&dir), "node", &Default::default(), &()).unwrap().document;
    let by_file = texts_by_file(&doc);
    assert_blocks_quote_sources(&dir, &by_file);
    assert_answers_present(&eval_dir().join("node-questions.jsonl"), &by_file);
}

#[test]
#[ignore = "needs UCP_PG_HTML: scripts/test fetches it and runs this"]
fn postgresql_blocks_are_the_pages_visible_text() {
    let dir = required("UCP_PG_HTML");
    let doc = ingest(std::slice::from_ref(&dir), "pg", &Default::default(), &()).unwrap().document;
    assert_blocks_quote_sources(&dir, &texts_by_file(&doc));
}
