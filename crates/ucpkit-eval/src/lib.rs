//! The evaluation harness of UCP's main job.
//!
//! A question file (JSON lines: question, answer strings, gold places,
//! kind) is run through systems that build a context within a token
//! budget: the engine's orchestrator ([`Orchestrated`]) and the flat chunk
//! baselines ([`FlatChunks`]: ~300-token chunks ranked by BM25, or by
//! embeddings). A question is answered when every answer string appears in
//! the context, whitespace collapsed ([`answered`]). The [`Report`] gives
//! answer recall (all / any) per budget and per question kind, the share of
//! contexts drawing on a gold file, tokens used and latency percentiles,
//! with every budget counted by the same exact tokenizer.

mod baseline;
pub mod code;
mod harness;
mod metric;
mod questions;

pub use baseline::{chunk_document, Chunk, ChunkBaseline, FlatChunks, Ranking, CHUNK_TOKENS};
pub use harness::{evaluate, Across, ContextSystem, KindRecall, Orchestrated, Outcome, Report, Retrieved, Row};
pub use metric::{answered, collapse_whitespace, Answered};
pub use questions::{load_questions, parse_questions, Gold, Question};

/// What can go wrong in an evaluation.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A file could not be read.
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    /// A line of the question file is not a valid question.
    #[error("question file line {line}: {message}")]
    BadQuestion {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The question file holds no question.
    #[error("the question file holds no question")]
    NoQuestions,
    /// The chunk document could not be built.
    #[error("chunking the document: {0}")]
    Chunking(String),
    /// Searching failed.
    #[error(transparent)]
    Search(#[from] ucpkit_search::SearchError),
    /// Building a context failed.
    #[error(transparent)]
    Agent(#[from] ucpkit_sessions::AgentError),
    /// Indexing, searching or building a context in a store failed.
    #[error(transparent)]
    Workspace(#[from] ucpkit_workspace::WorkspaceError),
    /// A system returned more tokens than the budget.
    #[error("{system} went over the budget on {question}: {tokens} tokens for {budget}")]
    OverBudget {
        /// The system.
        system: String,
        /// The question's id.
        question: String,
        /// The budget.
        budget: usize,
        /// Tokens it returned.
        tokens: usize,
    },
}
