//! Ingest of the two real corpora `scripts/test` fetches from Debian
//! packages: the Node.js API docs (markdown, `UCP_NODE_CORPUS`) and the
//! PostgreSQL docs (HTML, `UCP_PG_HTML`). Without them these tests say so
//! and the shipped excerpt in `tests/data/node-excerpt` stands in.

use std::path::PathBuf;

use ucpkit_core::{Content, EdgeType, Role};
use ucpkit_ingest::{ingest, WarningKind};

fn corpus(var: &str) -> Option<PathBuf> {
    match std::env::var(var) {
        Ok(dir) => Some(PathBuf::from(dir)),
        Err(_) => {
            eprintln!("{var} not set (scripts/test sets it): skipping the full corpus");
            None
        }
    }
}

/// The folder or file the environment variable `var` names; a test that
/// needs it is `#[ignore]`d (scripts/test sets it and runs ignored tests),
/// so reaching here without it is a mistake worth failing on.
fn required(var: &str) -> PathBuf {
    std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| panic!("{var} is not set (scripts/test sets it)"))
}

fn node_dir() -> PathBuf {
    corpus("UCP_NODE_CORPUS")
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/node-excerpt"))
}

#[test]
fn node_docs_become_a_linked_section_tree() {
    let ingested = ingest(&[node_dir()], "node", &Default::default(), &()).unwrap();
    let doc = &ingested.document;
    assert!(doc.validate().is_valid(), "{:?}", doc.validate().issues.first());
    let files = doc.blocks().filter(|b| b.role() == Some(&Role::File)).count();
    assert_eq!(files, ingested.report.files);
    // Every heading below the page title sits under a heading of a lower level.
    for block in doc.blocks() {
        if let Some(level) = block.heading_level().filter(|l| *l > 1) {
            let parent = doc.get(doc.parent(block.id).unwrap()).unwrap();
            let parent_level = parent.heading_level().unwrap_or(0);
            assert!(parent_level < level, "{} under {}", block.to_markdown(), parent.to_markdown());
        }
    }
    assert!(doc.edges().iter().all(|e| e.edge_type == EdgeType::LinksTo));
    assert!(doc.blocks().all(|b| b.metadata.tokens.is_some()));
    if std::env::var_os("UCP_NODE_CORPUS").is_some() {
        // The excerpt links to pages it does not ship; the full corpus must not.
        let unresolved = ingested.report.warning_counts().get(&WarningKind::UnresolvedLink).copied().unwrap_or(0);
        assert!(unresolved * 100 <= ingested.report.links, "{unresolved} unresolved of {}", ingested.report.links);
    }
}

#[test]
#[ignore = "needs UCP_NODE_CORPUS: scripts/test fetches it and runs this"]
fn every_gold_heading_of_the_eval_set_is_a_heading_block() {
    let dir = required("UCP_NODE_CORPUS");
    let questions = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/eval/node-questions.jsonl");
    let questions = std::fs::read_to_string(&questions).expect("the repository ships the Node.js question set");
    let doc = ingest(&[dir], "node", &Default::default(), &()).unwrap().document;
    let headings: std::collections::HashSet<(String, String)> = doc
        .blocks()
        .filter(|b| b.heading_level().is_some())
        .filter_map(|b| match (&b.content, &b.metadata.source) {
            (Content::Text { text, .. }, Some(source)) => Some((source.file.to_string(), text.clone())),
            _ => None,
        })
        .collect();
    let mut checked = 0;
    for line in questions.lines().filter(|l| !l.trim().is_empty()) {
        let question: serde_json::Value = serde_json::from_str(line).unwrap();
        for gold in question["gold"].as_array().unwrap() {
            let key = (gold["file"].as_str().unwrap().to_owned(), gold["heading"].as_str().unwrap().to_owned());
            assert!(headings.contains(&key), "{}: heading {:?} missing in {}", question["id"], key.1, key.0);
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} gold entries");
}

#[test]
#[ignore = "needs UCP_PG_HTML: scripts/test fetches it and runs this"]
fn postgresql_html_docs_drop_navigation_and_resolve_anchors() {
    let dir = required("UCP_PG_HTML");
    let ingested = ingest(&[dir], "pg", &Default::default(), &()).unwrap();
    let doc = &ingested.document;
    assert!(doc.validate().is_valid());
    assert!(ingested.report.files > 1000, "{} pages", ingested.report.files);
    for block in doc.blocks() {
        let text = block.to_markdown();
        assert!(!text.contains("| Prev |") && !text.starts_with("Prev "), "navigation kept: {text}");
    }
    let select = doc.blocks().find(|b| b.metadata.label.as_deref() == Some("sql-select.html")).unwrap();
    let headings: Vec<String> = doc
        .descendants(select.id)
        .filter_map(|id| doc.get(id))
        .filter(|b| b.heading_level().is_some())
        .map(|b| b.to_markdown())
        .collect();
    assert!(headings.contains(&"## Synopsis".to_owned()), "{headings:?}");
    assert!(headings.contains(&"### GROUP BY Clause".to_owned()), "{headings:?}");
    let unresolved = ingested.report.warning_counts().get(&WarningKind::UnresolvedLink).copied().unwrap_or(0);
    assert!(ingested.report.links > 5000 && unresolved * 100 <= ingested.report.links, "{unresolved} unresolved");
}
