//! The workspace: the one API every UCP front end (the `ucp` command line,
//! the MCP server, the Python bindings) stands on. Front ends translate
//! arguments and output; what they do lives here, once.
//!
//! A [`Library`] opens a store and keeps the documents it loaded, each as a
//! [`Workspace`]: the engine with its agent sessions and its search index.
//! On top of them:
//! - [`Library::index`]: ingest paths into a document, written only when it
//!   changed;
//! - [`Library::run_script`]: UCL in a session under the one durability
//!   rule (a failed script keeps none of its edits, or those up to its last
//!   COMMIT; see [`ucpkit_engine::Engine::begin_script`]), saving the document
//!   and a named session afterwards;
//! - named sessions that load and save themselves ([`Library::open_named`],
//!   [`Library::save_session`]);
//! - [`Library::context`]: the main job, a context for a question within a
//!   token budget;
//! - [`Workspace::search`]: hits with their source file, lines, heading path
//!   and preview;
//! - [`Library::run_commands`]: documents kept by commands (the agents'
//!   memory and plans, which `ucpkit-memory` writes through it);
//! - agent transcripts by session name ([`Library::save_transcript`]);
//! - [`stats`] and [`find_block`]: counts and `@label` resolution.
//!
//! ```no_run
//! use ucpkit_workspace::{Library, LibraryConfig, ContextOptions};
//!
//! let library = Library::open(LibraryConfig::new(".ucp")).unwrap();
//! let workspace = library.workspace(&library.default_document().unwrap()).unwrap();
//! let built = library.context(&workspace, &ContextOptions::new("How do I read a file?")).unwrap();
//! println!("{}", built.text);
//! ```

mod across;
mod context;
mod follow;
mod indexing;
mod inspect;
mod library;
mod map;
mod parts;
mod replay;
mod script;
mod script_part;
mod search;
mod sessions;
mod state;
mod transcripts;
mod vectors;

/// The store's conformance places (SQLite, and PostgreSQL when a test
/// server is named), for unit tests that run on both.
#[cfg(test)]
#[path = "../../ucpkit-store/src/testing.rs"]
mod testing;
#[cfg(test)]
use ucpkit_store::Store;

pub use across::Sources;
pub use context::{ContextOptions, SharedPolicy, DEFAULT_BUDGET, MIN_BUDGET};
pub use indexing::{IndexOptions, IndexProgress, Indexed, IndexedStored};
pub use inspect::{find_block, stats, BlockView, DocumentStats, SectionView};
pub use library::{Library, LibraryConfig, Workspace, EVICT_IDLE_AFTER};
pub use map::{MapRequest, DEFAULT_MAP_BUDGET};
pub use parts::RankedStored;
pub use replay::{replayed, STATE_TRIES};
pub use script::ScriptRun;
pub use search::{FileHit, SearchHit, SearchRequest, SearchResults, FILE_EVIDENCE};
pub use sessions::{Followed, NewSession, SessionHandle};
pub use ucpkit_code::map::{MapFile, MapSymbol, RepoMap};
pub use ucpkit_orchestrator::Scope;

/// The vocabulary of the layers below that front ends speak: they depend
/// on this crate (and the tool registry) alone.
pub mod vocabulary {
    pub use ucpkit_context::ExtractiveSummarizer;
    pub use ucpkit_core::{
        now_ms, outline, printable, terminal_text, Block, BlockId, BpeTokenizer, Content, Document, Tokenizer,
    };
    pub use ucpkit_engine::{export_ucl, import_ucl, FOLDED_KEY};
    pub use ucpkit_ingest::{default_name, to_markdown, IngestReport, Progress, DEFAULT_MAX_FILE_SIZE};
    pub use ucpkit_orchestrator::{policy::Policy, BuiltContext, ContextRequest, LlmPolicy};
    pub use ucpkit_search::{index_dir, load_embedder, Mode, SyncProgress, MAX_HITS};
    pub use ucpkit_sessions::{AgentError, GlobalLimits, Reply, ScriptReport, SessionId, SessionLimits};
    pub use ucpkit_store::{check_document_name, store_hosts, Copied, DocumentSummary, StoreError, DEFAULT_STORE_DIR};
    pub use ucpkit_ucl::{parse_script, print_document, LineIndex, RenderFormat, Script};
}

/// Why a workspace call failed.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] ucpkit_store::StoreError),
    /// Indexing a path failed.
    #[error(transparent)]
    Ingest(#[from] ucpkit_ingest::IngestError),
    /// The search index failed.
    #[error(transparent)]
    Search(#[from] ucpkit_search::SearchError),
    /// A session command failed.
    #[error("{0}")]
    Agent(#[from] ucpkit_sessions::AgentError),
    /// No stored document has this name.
    #[error("no document {0:?} in the store (call open with no arguments to list them)")]
    NoDocument(String),
    /// A path cannot be read (the message names it).
    #[error("{0}")]
    Path(String),
    /// A path that does not exist or lies outside the folders the server
    /// may index: both get this answer, so a client cannot probe the host.
    #[error("{0} does not exist or is outside the folders this server may index (the server's --allow folders)")]
    NotAllowed(String),
    /// A change refused because the library is read-only.
    #[error("this server is read-only: {0}")]
    ReadOnly(String),
    /// Another connection holds the named session.
    #[error("session {0:?} is in use by another connection")]
    SessionInUse(String),
    /// A stored record cannot be read.
    #[error("damaged record: {0}")]
    Damaged(String),
    /// A request that cannot be served as asked (the message says why).
    #[error("{0}")]
    Invalid(String),
    /// The document was edited since it was last indexed: indexing it again
    /// would replace the edits with what the files hold.
    #[error(
        "{name:?} was edited since it was last indexed: indexing {path} again would replace those edits with what \
         the files hold; open the document by name to keep them, or index with --force (a snapshot \
         before-index-<time> keeps the edited version)"
    )]
    Edited {
        /// The document.
        name: String,
        /// The path given.
        path: String,
    },
    /// Blocks match the question, but none fits in the budget.
    #[error(
        "no relevant block fits in {budget} tokens: the smallest takes {smallest} tokens before its heading line; \
         ask for a larger budget"
    )]
    NothingFits {
        /// The budget asked for.
        budget: usize,
        /// Tokens of the smallest matching block.
        smallest: usize,
    },
}

impl WorkspaceError {
    /// Whether another writer changed the document since it was read (the
    /// write changed nothing; reading again and replaying it can land).
    pub fn is_conflict(&self) -> bool {
        matches!(self, WorkspaceError::Store(ucpkit_store::StoreError::Conflict { .. }))
    }

    /// A stable, machine-readable code: the underlying error's own code
    /// (`block_not_found`, `parse`, `conflict` ...) or this layer's.
    pub fn code(&self) -> &'static str {
        match self {
            WorkspaceError::Store(e) => e.code(),
            WorkspaceError::Ingest(e) => e.code(),
            WorkspaceError::Search(e) => e.code(),
            WorkspaceError::Agent(e) => e.code(),
            WorkspaceError::NoDocument(_) => "no_document",
            WorkspaceError::Path(_) => "path",
            WorkspaceError::NotAllowed(_) => "not_allowed",
            WorkspaceError::ReadOnly(_) => "read_only",
            WorkspaceError::SessionInUse(_) => "session_in_use",
            WorkspaceError::Damaged(_) => "damaged",
            WorkspaceError::Invalid(_) => "invalid_argument",
            WorkspaceError::Edited { .. } => "edited",
            WorkspaceError::NothingFits { .. } => "nothing_fits",
        }
    }
}
