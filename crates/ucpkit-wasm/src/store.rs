//! Documents held in memory, as the WebAssembly build serves them: each
//! with its UCL sessions and an in-memory search index, and the main job,
//! the context for a question within a token budget. Plain Rust, so the
//! same calls are tested natively against the CLI.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use ucpkit_core::{outline, BlockId, Document};
use ucpkit_engine::Engine;
use ucpkit_ingest::{IngestError, IngestOptions};
use ucpkit_orchestrator::policy::HeuristicPolicy;
use ucpkit_orchestrator::{BuiltContext, ContextRequest, Orchestrator, OrchestratorConfig};
use ucpkit_search::{MemoryIndex, SearchOptions};
use ucpkit_sessions::{AgentError, GlobalLimits, SessionConfig, SessionHost};
use ucpkit_ucl::parse_script;

/// The most hits one search returns.
pub const MAX_SEARCH_HITS: usize = 1_000;
/// The most bytes one `index` call reads, all files together: a page
/// holds what it indexes several times over (text, blocks, index) in a
/// memory of at most 4 GiB, and running out of it kills the page.
pub const MAX_INPUT_BYTES: usize = 64 << 20;
/// The most bytes of a question, a query or a UCL script.
pub const MAX_TEXT_BYTES: usize = 4 << 20;

/// Why a call was refused. A refused call changes nothing.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No document has this name.
    #[error("no document named {0:?}; index one first")]
    NoDocument(String),
    /// No document was named and the store holds none or several.
    #[error("name the document: the store holds {0}")]
    WhichDocument(String),
    /// An argument is out of range or malformed.
    #[error("{0}")]
    Invalid(String),
    /// The files could not be ingested.
    #[error(transparent)]
    Ingest(#[from] IngestError),
    /// A session or UCL command was refused.
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// An exported document could not be read.
    #[error("not a document in UCP's JSON form: {0}")]
    Json(String),
}

impl StoreError {
    /// A stable code for programs.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::NoDocument(_) => "no_document",
            StoreError::WhichDocument(_) => "which_document",
            StoreError::Invalid(_) => "invalid_argument",
            StoreError::Ingest(error) => error.code(),
            StoreError::Agent(error) => error.code(),
            StoreError::Json(_) => "invalid_json",
        }
    }
}

/// What indexing made.
#[derive(Debug, Clone, Serialize)]
pub struct IndexReport {
    /// The document's name.
    pub document: String,
    /// Files read.
    pub files: usize,
    /// Blocks made.
    pub blocks: usize,
    /// Tokens of every block's text (o200k).
    pub tokens: u64,
    /// Files skipped, and why.
    pub warnings: Vec<String>,
}

/// One document of the store.
#[derive(Debug, Clone, Serialize)]
pub struct DocumentSummary {
    /// Its name.
    pub name: String,
    /// Its blocks.
    pub blocks: usize,
    /// Tokens of every block's text.
    pub tokens: u64,
}

/// One search hit with its block.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// The block.
    pub id: BlockId,
    /// Its score (0..1).
    pub score: f64,
    /// Its role.
    pub role: Option<String>,
    /// Titles of the headings (and file) above it, outermost first.
    pub heading_path: Vec<String>,
    /// Its text, verbatim.
    pub text: String,
    /// Its tokens.
    pub tokens: u32,
}

/// One command of a script and what it answered.
#[derive(Debug, Clone, Serialize)]
pub struct StepReport {
    /// 1-based line of the command.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The command as written.
    pub command: String,
    /// What it answered (absent when it failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<serde_json::Value>,
    /// Its answer as text, or why it failed.
    pub text: String,
    /// The failure's code, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'static str>,
}

/// A script that ran.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// Whether every command succeeded (a failed script's edits are undone).
    pub ok: bool,
    /// Every command that ran, up to and including the first failure.
    pub steps: Vec<StepReport>,
    /// The whole report as `ucp run` prints it.
    pub text: String,
}

/// A UCL script parsed, or where it does not parse.
#[derive(Debug, Clone, Serialize)]
pub struct ParseReport {
    /// Whether it parses.
    pub ok: bool,
    /// The parsed document form (as `ucp parse`), when it parses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<serde_json::Value>,
    /// Every error, with its line and column.
    pub errors: Vec<ParseDiagnostic>,
    /// The errors with caret snippets, as `ucp parse` prints them.
    pub rendered: String,
}

/// One parse error.
#[derive(Debug, Clone, Serialize)]
pub struct ParseDiagnostic {
    /// What went wrong.
    pub message: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

/// Documents in memory (see the module documentation).
#[derive(Default)]
pub struct MemoryStore {
    documents: BTreeMap<String, Arc<SessionHost>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryStore::default()
    }

    /// Ingests `files`, `(path, bytes)`, into the document `name` (replacing
    /// one of that name): markdown, HTML, plain text and source code (kept
    /// as plain chunks: this build has no grammars), by extension.
    pub fn index(&mut self, name: &str, files: &[(String, Vec<u8>)]) -> Result<IndexReport, StoreError> {
        check_name(name)?;
        let total: usize = files.iter().map(|(_, bytes)| bytes.len()).sum();
        if total > MAX_INPUT_BYTES {
            return Err(StoreError::Invalid(format!(
                "{total} bytes is over the {MAX_INPUT_BYTES}-byte limit of one index call; index fewer files at once"
            )));
        }
        let options = IngestOptions { max_file_size: MAX_INPUT_BYTES as u64, ..IngestOptions::default() };
        let ingested = ucpkit_ingest::ingest_texts(files, name, &options)?;
        let report = IndexReport {
            document: name.to_owned(),
            files: ingested.report.files,
            blocks: ingested.report.blocks,
            tokens: ingested.report.tokens,
            warnings: ingested.report.warnings.iter().map(ToString::to_string).collect(),
        };
        self.hold(ingested.document);
        Ok(report)
    }

    /// The documents held, by name.
    pub fn documents(&self) -> Vec<DocumentSummary> {
        self.documents
            .iter()
            .map(|(name, host)| {
                let engine = host.engine();
                let doc = engine.document();
                DocumentSummary { name: name.clone(), blocks: doc.len(), tokens: tokens_of(doc) }
            })
            .collect()
    }

    /// Forgets the document `name`; whether there was one.
    pub fn remove(&mut self, name: &str) -> bool {
        self.documents.remove(name).is_some()
    }

    /// The best context for `question` from document `doc` (the only one
    /// when `None`) within `budget` tokens, as `ucp context` builds it.
    pub fn context(&self, doc: Option<&str>, question: &str, budget: usize) -> Result<BuiltContext, StoreError> {
        check_size("the question", question)?;
        let request = ContextRequest::asked(question, budget).map_err(StoreError::Invalid)?;
        let host = self.host(doc)?;
        // One sub-agent, on the caller's thread: a page has no threads.
        let config = OrchestratorConfig { agents: 1, ..OrchestratorConfig::default() };
        let orchestrator = Orchestrator::new(Arc::new(HeuristicPolicy::default()), config);
        Ok(orchestrator.context(host, &request)?)
    }

    /// The best `limit` blocks of document `doc` for `query` (BM25).
    pub fn search(&self, doc: Option<&str>, query: &str, limit: usize) -> Result<Vec<Hit>, StoreError> {
        if !(1..=MAX_SEARCH_HITS).contains(&limit) {
            return Err(StoreError::Invalid(format!("the limit must be 1 to {MAX_SEARCH_HITS}, not {limit}")));
        }
        check_size("the query", query)?;
        let host = self.host(doc)?;
        let provider = host.search_provider().ok_or(AgentError::SearchNotConfigured)?;
        let engine = host.engine();
        let document = engine.document();
        let failed = |e: ucpkit_search::SearchError| AgentError::SearchFailed(e.to_string());
        provider.sync(document).map_err(failed)?;
        let options = SearchOptions { limit, ..SearchOptions::default() };
        let hits = provider.search(query, &options).map_err(failed)?;
        Ok(hits
            .into_iter()
            .filter_map(|hit| {
                let block = document.get(hit.id)?;
                Some(Hit {
                    id: hit.id,
                    score: hit.score,
                    role: block.role().map(|role| role.as_str().to_owned()),
                    heading_path: outline::path_titles(document, hit.id),
                    text: block.plain_text().into_owned(),
                    tokens: block.metadata.tokens.unwrap_or(0),
                })
            })
            .collect())
    }

    /// Runs UCL `source` on document `doc`, in the session named `session`
    /// (opened on first use and kept: cursor, window, results) or in a
    /// new one. A script's edits stand together: when a command fails, they
    /// are undone.
    pub fn run(&self, doc: Option<&str>, source: &str, session: Option<&str>) -> Result<RunReport, StoreError> {
        check_size("the script", source)?;
        let host = self.host(doc)?;
        let id = match session.and_then(|name| host.find_session(name)) {
            Some(id) => id,
            None => {
                host.create_session(SessionConfig { name: session.map(str::to_owned), ..SessionConfig::default() })?
            }
        };
        let report = host.run_script(id, source);
        if session.is_none() {
            // A one-off session goes with its script.
            let _ = host.close_session(id);
        }
        let report = report?;
        let steps = report
            .steps
            .iter()
            .map(|step| match &step.result {
                Ok(done) => StepReport {
                    line: step.line,
                    column: step.column,
                    command: step.text.clone(),
                    reply: serde_json::to_value(&done.reply).ok(),
                    text: done.to_string(),
                    error: None,
                },
                Err(error) => StepReport {
                    line: step.line,
                    column: step.column,
                    command: step.text.clone(),
                    reply: None,
                    text: error.to_string(),
                    error: Some(error.code()),
                },
            })
            .collect();
        Ok(RunReport { ok: report.ok(), steps, text: report.to_string() })
    }

    /// Closes the session named `session` of document `doc` (the only one
    /// when `None`), freeing its slot; whether there was one.
    pub fn close_session(&self, doc: Option<&str>, session: &str) -> Result<bool, StoreError> {
        let host = self.host(doc)?;
        Ok(host.find_session(session).is_some_and(|id| host.close_session(id).is_ok()))
    }

    /// The document `name` in UCP's JSON form (as `ucp export --format
    /// json`), for a page to keep it (IndexedDB) and import it again.
    pub fn export(&self, name: &str) -> Result<String, StoreError> {
        let host = self.documents.get(name).ok_or_else(|| StoreError::NoDocument(name.to_owned()))?;
        let json = host.engine().document().to_json(false);
        Ok(json)
    }

    /// Holds a document exported in UCP's JSON form (by [`Self::export`]
    /// or `ucp export --format json`), under its own name or `name`;
    /// returns the name it is held under.
    pub fn import(&mut self, json: &str, name: Option<&str>) -> Result<String, StoreError> {
        if json.len() > MAX_INPUT_BYTES {
            return Err(StoreError::Invalid(format!(
                "the document is {} bytes, over the {MAX_INPUT_BYTES}-byte limit",
                json.len()
            )));
        }
        let mut document = Document::from_json(json).map_err(|e| StoreError::Json(e.to_string()))?;
        if let Some(issue) = document.validate().tree_issue() {
            return Err(StoreError::Json(format!("the blocks do not form a tree: {issue}")));
        }
        if let Some(name) = name {
            check_name(name)?;
            document.set_name(name);
        }
        check_name(document.name())?;
        Ok(self.hold(document))
    }

    /// Holds `document` with its search index; returns its name. The
    /// engine-wide rate limit, which keeps one client of a server from
    /// starving the others, is lifted: a page is the only client of its
    /// store, and the limit would only refuse its own long scripts.
    fn hold(&mut self, document: Document) -> String {
        let name = document.name().to_owned();
        let index = Arc::new(MemoryIndex::new(&document));
        let limits = GlobalLimits { max_ops_per_second: u32::MAX, ..GlobalLimits::default() };
        let mut host = SessionHost::with_limits(Engine::new(document), limits);
        host.set_search(index);
        self.documents.insert(name.clone(), Arc::new(host));
        name
    }

    /// The host of document `doc`, or of the only document.
    fn host(&self, doc: Option<&str>) -> Result<&SessionHost, StoreError> {
        match doc {
            Some(name) => self.documents.get(name).map(Arc::as_ref).ok_or_else(|| StoreError::NoDocument(name.into())),
            None if self.documents.len() == 1 => Ok(self.documents.values().next().expect("one document")),
            None => {
                let held = match self.documents.len() {
                    0 => "no document".to_owned(),
                    _ => self.documents.keys().cloned().collect::<Vec<_>>().join(", "),
                };
                Err(StoreError::WhichDocument(held))
            }
        }
    }
}

/// Parses UCL `source`: its document form, or every error with where it is.
pub fn parse(source: &str) -> Result<ParseReport, StoreError> {
    check_size("the script", source)?;
    Ok(match parse_script(source) {
        Ok(script) => ParseReport {
            ok: true,
            document: serde_json::to_value(&script.document).ok(),
            errors: Vec::new(),
            rendered: String::new(),
        },
        Err(errors) => ParseReport {
            ok: false,
            document: None,
            errors: errors
                .0
                .iter()
                .map(|e| ParseDiagnostic { message: e.message.clone(), line: e.line, column: e.column })
                .collect(),
            rendered: errors.render(source),
        },
    })
}

fn check_name(name: &str) -> Result<(), StoreError> {
    match ucpkit_core::document_name_rule(name) {
        Some(rule) => Err(StoreError::Invalid(format!("document name {name:?}: {rule}"))),
        None => Ok(()),
    }
}

fn check_size(what: &str, text: &str) -> Result<(), StoreError> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(StoreError::Invalid(format!(
            "{what} is {} bytes, over the {MAX_TEXT_BYTES}-byte limit",
            text.len()
        )));
    }
    Ok(())
}

fn tokens_of(doc: &Document) -> u64 {
    doc.blocks().map(|b| u64::from(b.metadata.tokens.unwrap_or(0))).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(pairs: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        pairs.iter().map(|(path, text)| (path.to_string(), text.as_bytes().to_vec())).collect()
    }

    fn guide() -> MemoryStore {
        let mut store = MemoryStore::new();
        let pages = files(&[
            ("streams.md", "# Streams\n\nA readable stream emits `data` events.\n\n## Backpressure\n\nWhen `write()` returns false, wait for `drain` before writing more.\n"),
            ("fs.md", "# File system\n\n`fs.readFile()` reads a whole file into memory.\n"),
        ]);
        let report = store.index("guide", &pages).unwrap();
        assert_eq!((report.files, report.document.as_str()), (2, "guide"));
        store
    }

    #[test]
    fn a_context_quotes_the_answer_within_its_budget() {
        let store = guide();
        let built = store.context(None, "what to do when write returns false?", 200).unwrap();
        assert!(built.tokens <= 200 && built.tokens > 0);
        assert!(built.text.contains("wait for `drain` before writing more."), "{}", built.text);
        assert!(matches!(store.context(None, " ", 200), Err(StoreError::Invalid(_))));
        assert!(matches!(store.context(None, "q", 5), Err(StoreError::Invalid(_))));
        assert!(matches!(store.context(Some("other"), "q", 200), Err(StoreError::NoDocument(_))));
    }

    #[test]
    fn search_returns_blocks_verbatim() {
        let store = guide();
        let hits = store.search(Some("guide"), "readFile", 5).unwrap();
        assert_eq!(hits[0].text, "`fs.readFile()` reads a whole file into memory.");
        assert_eq!(hits[0].heading_path.last().map(String::as_str), Some("File system"));
        assert!(store.search(None, "x", 0).is_err());
    }

    #[test]
    fn scripts_edit_run_in_named_sessions_and_failures_undo() {
        let store = guide();
        let found = store.run(None, "FIND PATTERN=\"drain\"", Some("s")).unwrap();
        assert!(found.ok, "{}", found.text);
        let id = store.search(None, "readFile", 1).unwrap()[0].id;
        let edit =
            format!("EDIT {id} SET text = \"Reads a file.\"\nEDIT blk_000000000000000000000000 SET text = \"x\"");
        let failed = store.run(None, &edit, None).unwrap();
        assert!(!failed.ok && failed.steps.len() == 2 && failed.steps[1].error.is_some());
        assert!(store.search(None, "readFile", 1).unwrap()[0].text.contains("readFile"), "the failed script is undone");
        let done = store.run(None, &format!("EDIT {id} SET text = \"Reads a file.\""), None).unwrap();
        assert!(done.ok, "{}", done.text);
        assert_eq!(store.search(None, "reads file", 1).unwrap()[0].text, "Reads a file.");
    }

    #[test]
    fn closed_sessions_free_their_slots() {
        let store = guide();
        let limit = GlobalLimits::default().max_sessions;
        for round in 0..2 {
            for n in 0..limit {
                assert!(
                    store.run(None, "GOTO blk_000000000000000000000000", Some(&format!("s{n}"))).is_ok(),
                    "{round}"
                );
            }
            let refused = store.run(None, "GOTO blk_000000000000000000000000", Some("one-more"));
            assert!(matches!(refused, Err(StoreError::Agent(AgentError::MaxSessionsReached(_)))), "{refused:?}");
            for n in 0..limit {
                assert!(store.close_session(None, &format!("s{n}")).unwrap());
            }
        }
        assert!(!store.close_session(None, "s0").unwrap(), "a closed session is gone");
    }

    #[test]
    fn export_and_import_round_trip() {
        let mut store = guide();
        let json = store.export("guide").unwrap();
        assert_eq!(store.import(&json, Some("copy")).unwrap(), "copy");
        let (a, b) = (
            store.context(Some("guide"), "readFile", 100).unwrap(),
            store.context(Some("copy"), "readFile", 100).unwrap(),
        );
        assert_eq!(a.text, b.text);
        assert!(matches!(store.import("{", None), Err(StoreError::Json(_))));
        assert!(matches!(store.context(None, "q", 100), Err(StoreError::WhichDocument(_))));
    }

    /// An exported document edited so its blocks no longer form a tree:
    /// each block's child list is rewritten by `edit`.
    fn import_edited(edit: impl Fn(&str, &mut Vec<serde_json::Value>)) -> Result<String, StoreError> {
        let mut store = guide();
        let mut json: serde_json::Value = serde_json::from_str(&store.export("guide").unwrap()).unwrap();
        let blocks = json["blocks"].as_array_mut().unwrap();
        let root = blocks[0]["id"].as_str().unwrap().to_owned();
        // Leaves list no children.
        for children in blocks.iter_mut().filter_map(|block| block.get_mut("children")?.as_array_mut()) {
            edit(&root, children);
        }
        let result = store.import(&json.to_string(), Some("edited"));
        assert_eq!(
            result.is_ok(),
            store.documents().iter().any(|d| d.name == "edited"),
            "a refused import holds nothing"
        );
        result
    }

    #[test]
    fn an_import_whose_blocks_are_not_a_tree_is_refused() {
        // A block listing the root as its child: a walk would never end.
        let cycle = import_edited(|root, children| {
            if !children.is_empty() && children[0] != root {
                children.push(serde_json::Value::from(root));
            }
        });
        assert!(matches!(&cycle, Err(StoreError::Json(m)) if m.contains("tree")), "{cycle:?}");
        // Every child listed twice: a walk would double at each level.
        let doubled = import_edited(|_, children| {
            let copy = children.clone();
            children.extend(copy);
        });
        assert!(matches!(&doubled, Err(StoreError::Json(m)) if m.contains("tree")), "{doubled:?}");
        assert_eq!(import_edited(|_, _| {}).unwrap(), "edited");
    }

    #[test]
    fn bad_input_is_refused_with_a_reason() {
        let mut store = MemoryStore::new();
        let bad = vec![("a.md".to_string(), vec![0xff, 0xfe, b'x'])];
        assert!(matches!(store.index("d", &bad), Err(StoreError::Ingest(IngestError::Unusable { .. }))));
        assert!(matches!(store.index("", &files(&[("a.md", "x")])), Err(StoreError::Invalid(_))));
        assert!(matches!(store.index("d", &[]), Err(StoreError::Ingest(IngestError::NoInput))));
        let deep_path = "d/".repeat(10_000) + "x.md";
        for path in ["../up.md", "a/./../b.md", deep_path.as_str(), "./"] {
            let refused = store.index("d", &files(&[(path, "x"), ("ok.md", "y")]));
            assert!(matches!(refused, Err(StoreError::Ingest(IngestError::Unusable { .. }))), "{path}: {refused:?}");
        }
        let clash = store.index("d", &files(&[("./a//b.md", "x"), ("a/b.md", "y")]));
        assert!(matches!(clash, Err(StoreError::Ingest(IngestError::NameClash { .. }))), "{clash:?}");
        assert!(store.documents().is_empty(), "nothing was held");
        let deep = "> ".repeat(100_000) + "x";
        store.index("deep", &files(&[("deep.md", &deep)])).unwrap();
        let huge = vec![("big.md".to_string(), vec![b'a'; MAX_INPUT_BYTES + 1])];
        assert!(matches!(store.index("big", &huge), Err(StoreError::Invalid(_))));
        assert!(matches!(store.context(None, &"q ".repeat(MAX_TEXT_BYTES), 100), Err(StoreError::Invalid(_))));
        let report = parse("GOTO").unwrap();
        assert!(!report.ok && report.errors[0].line == 1 && !report.rendered.is_empty());
        assert!(parse("GOTO blk_000000000000000000000000").unwrap().ok);
    }
}
