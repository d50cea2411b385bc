//! Shared fixtures: the Node.js excerpt behind a traversal, a test clock and
//! a small lexical search provider (the real providers live in their own crate).

#![allow(dead_code)]

use std::cell::Cell;
use std::path::Path;
use std::sync::Arc;

use ucpkit_core::{BlockId, Document, Role};
use ucpkit_engine::Engine;
use ucpkit_search::{BlockLengths, SearchConfig, SearchIndex, TermPostings};
use ucpkit_sessions::{
    AgentError, GlobalLimits, RagCapabilities, RagProvider, SearchError, SearchOptions, SessionConfig, SessionHost,
    SessionId, Step,
};

thread_local! {
    static NOW: Cell<i64> = const { Cell::new(1_700_000_000_000) };
}

/// The test clock (per test thread).
pub fn clock() -> i64 {
    NOW.with(Cell::get)
}

/// Moves the test clock forward.
pub fn advance(ms: i64) {
    NOW.with(|now| now.set(now.get() + ms));
}

/// The Node.js documentation excerpt shipped with the repository.
pub fn node_excerpt() -> Document {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/node-excerpt");
    ucpkit_ingest::ingest(&[dir], "node", &ucpkit_ingest::IngestOptions::default(), &()).unwrap().document
}

/// A traversal over the excerpt with the test clock.
pub fn traversal() -> SessionHost {
    traversal_with(GlobalLimits::default())
}

/// A traversal over the excerpt with limits and the test clock.
pub fn traversal_with(limits: GlobalLimits) -> SessionHost {
    let mut traversal = SessionHost::with_limits(Engine::new(node_excerpt()), limits);
    traversal.set_clock(clock);
    traversal
}

/// A session with default settings.
pub fn session(traversal: &SessionHost) -> SessionId {
    traversal.create_session(SessionConfig::default()).unwrap()
}

/// Runs one UCL command, panicking on parse errors.
pub fn exec(traversal: &SessionHost, session: SessionId, ucl: &str) -> Result<Step, AgentError> {
    let commands = ucpkit_ucl::parse_commands(ucl).unwrap_or_else(|e| panic!("{}", e.render(ucl)));
    assert_eq!(commands.len(), 1, "{ucl}");
    traversal.execute(session, &commands[0])
}

/// Runs one command that must succeed.
pub fn ok(traversal: &SessionHost, session: SessionId, ucl: &str) -> Step {
    exec(traversal, session, ucl).unwrap_or_else(|e| panic!("{ucl}: {e}"))
}

/// Runs one command that must fail, checking the session did not change.
pub fn fails(traversal: &SessionHost, session: SessionId, ucl: &str) -> AgentError {
    let before = record_json(traversal, session);
    let error = exec(traversal, session, ucl).expect_err(ucl);
    assert_eq!(record_json(traversal, session), before, "{ucl} failed but changed the session");
    error
}

/// The session's persistent form without counters and times.
pub fn record_json(traversal: &SessionHost, session: SessionId) -> String {
    let record = traversal.with_session(session, |s| serde_json::to_value(s).unwrap()).unwrap();
    let serde_json::Value::Object(mut fields) = record else { panic!("a session serializes to an object") };
    for counter in ["metrics", "breaker", "last_active_ms"] {
        fields.remove(counter);
    }
    serde_json::Value::Object(fields).to_string()
}

/// The first block with this role, in document order.
pub fn first(doc: &Document, role: Role) -> BlockId {
    doc.document_order().find(|id| doc.get(*id).unwrap().role() == Some(&role)).unwrap()
}

/// The built-in BM25 index of a document, in a directory that lives as
/// long as it does.
pub struct TempIndex {
    index: SearchIndex,
    _dir: tempfile::TempDir,
}

impl TempIndex {
    /// Indexes `doc`.
    pub fn new(doc: &Document) -> TempIndex {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = SearchIndex::open(&dir.path().join("index"), doc, None, SearchConfig::default(), &()).unwrap();
        TempIndex { index, _dir: dir }
    }
}

impl RagProvider for TempIndex {
    fn name(&self) -> &str {
        self.index.name()
    }

    fn capabilities(&self) -> RagCapabilities {
        self.index.capabilities()
    }

    fn search(&self, query: &str, options: &SearchOptions) -> Result<Vec<ucpkit_search::SearchHit>, SearchError> {
        self.index.search(query, options)
    }

    fn semantic_search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Option<Result<Vec<ucpkit_search::SearchHit>, SearchError>> {
        self.index.semantic_search(query, options)
    }

    fn sync(&self, document: &Document) -> Result<(), SearchError> {
        RagProvider::sync(&self.index, document)
    }

    fn term_weights(&self, text: &str) -> Vec<(String, f64)> {
        self.index.term_weights(text)
    }

    fn term_postings(&self, text: &str) -> Option<Vec<TermPostings>> {
        self.index.term_postings(text)
    }

    fn block_lengths(&self) -> Option<Vec<BlockLengths>> {
        self.index.block_lengths()
    }
}

/// A traversal with a BM25 index of its document as its search provider.
pub fn searchable() -> SessionHost {
    let mut traversal = traversal();
    traversal.set_search(Arc::new(TempIndex::new(&node_excerpt())));
    traversal
}
