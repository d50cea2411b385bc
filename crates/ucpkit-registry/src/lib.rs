//! UCP's tools for agents, protocol-neutral. A tool is one record
//! ([`Tool`]: its definition with the schema derived from its argument
//! type, what it may do, what it needs offered, its handler); the offer
//! ([`ToolOffer`]) decides which records a client gets; one client's
//! [`Connection`] holds its session in a document the [`Library`] keeps
//! loaded, its coding tools and its sub-agents; and [`tools::call`] is the
//! one place every call is checked (offered, arguments of the right
//! shape, past the guard's rules and whoever approves: [`guarded`]) and run.
//!
//! Front ends only translate: the MCP server (`ucpkit-mcp`) maps definitions
//! and results to the protocol, `ucp agent` hands the same tools to its
//! loop ([`agents::ConnectionTools`]). The tools are few and token-frugal:
//! the document tools ([`documents`]), memory, rules and skills
//! ([`guidance_tools`]), the coding tools of `ucpkit-tools` over a workspace
//! root ([`coding`]), language servers ([`lsp_tools`]), tool discovery
//! ([`discovery`]) and sub-agents ([`agents`]); every result is bounded by
//! a token cap and cut at block boundaries into pages ([`bound`]).

pub mod agents;
pub mod approval;
pub mod bound;
pub mod coding;
mod connection;
pub mod discovery;
pub mod documents;
pub mod guarded;
pub mod guidance_tools;
pub mod judge;
pub mod lsp_tools;
mod offer;
pub mod tool;
pub mod tools;

pub use approval::{describe, Action, ActionKind, Approval, FileChange, Location, Supervisor};
pub use connection::{Connection, ToolOutput};
pub use guarded::{ChangeJudge, GuardSetup, SharedGuard};
pub use offer::{SharedBuffers, ToolOffer};

/// The libraries the tools are made of, for a front end that uses one
/// directly (the CLI's coding and LSP commands, `ucp agent`'s loop and
/// models, rules and skills from the command line).
pub mod parts {
    pub use ucpkit_agent as agent;
    pub use ucpkit_guard as guard;
    pub use ucpkit_guidance as guidance;
    pub use ucpkit_llm as llm;
    pub use ucpkit_lsp as lsp;
    pub use ucpkit_memory as memory;
    pub use ucpkit_tools as files;
}
pub use tool::{Annotations, Effects, Needs, Pages, Tool, ToolDef, Writes};
pub use ucpkit_workspace::{vocabulary, Library, LibraryConfig, Workspace, WorkspaceError, EVICT_IDLE_AFTER};

/// Default most tokens of one tool result.
pub const DEFAULT_RESULT_TOKENS: usize = 8000;

/// Smallest token cap a connection takes (a page must hold a block and a note).
pub const MIN_RESULT_TOKENS: usize = 256;

/// A JSON object: a tool's arguments, or its input schema.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The workspace refused or failed (store, index, session, path ...).
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// No tool has this name (or none is offered by it).
    #[error("unknown tool {0:?}")]
    UnknownTool(String),
    /// Arguments that do not fit the tool's schema.
    #[error("{0}")]
    Arguments(String),
    /// The page asked for does not exist.
    #[error("{0}")]
    NoPage(String),
    /// A coding tool refused or failed.
    #[error(transparent)]
    Tool(#[from] ucpkit_tools::ToolError),
    /// A language server could not answer.
    #[error(transparent)]
    Lsp(#[from] ucpkit_lsp::LspError),
    /// Rules or skills could not be read as asked.
    #[error(transparent)]
    Guidance(#[from] ucpkit_guidance::GuidanceError),
    /// A tool from elsewhere (another MCP server) could not be reached or
    /// did not answer; the message names where.
    #[error("{0}")]
    External(String),
    /// The user (or whoever approves calls) declined the call.
    #[error("not approved: {0}")]
    Declined(String),
    /// A guard rule blocked the call; the reason is the rule's.
    #[error("blocked: {0}")]
    Blocked(String),
}

impl CallError {
    /// A stable, machine-readable code: the workspace's or the coding
    /// tools' own, or this layer's.
    pub fn code(&self) -> &'static str {
        match self {
            CallError::Workspace(e) => e.code(),
            CallError::UnknownTool(_) => "unknown_tool",
            CallError::Arguments(_) => "invalid_argument",
            CallError::NoPage(_) => "no_page",
            CallError::Tool(e) => e.code(),
            CallError::Lsp(_) => "language_server",
            CallError::Guidance(_) => "guidance",
            CallError::External(_) => "external_server",
            CallError::Declined(_) => "declined",
            CallError::Blocked(_) => "blocked",
        }
    }
}

impl From<ucpkit_sessions::AgentError> for CallError {
    fn from(error: ucpkit_sessions::AgentError) -> Self {
        CallError::Workspace(error.into())
    }
}

/// The text a client is shown for `error`: the full error goes to the
/// log, and the store's place on the host is hidden.
pub fn client_message(library: &Library, error: &CallError) -> String {
    let text = error.to_string();
    tracing::info!("request failed: {text}");
    library.hide_store_path(&text)
}
