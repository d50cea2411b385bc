//! UCP's tools for agents, protocol-neutral: what a tool is ([`ToolDef`]),
//! which tools a client is offered ([`ToolOffer`]), and one client's
//! [`Connection`]: its session in a document the [`Library`] keeps
//! loaded, its coding tools, its sub-agents, and [`tools::call`], the one
//! place every call is checked (offered, arguments known) and run.
//!
//! Front ends only translate: the MCP server (`ucp-mcp`) maps definitions
//! and results to the protocol, `ucp agent` hands the same tools to its
//! loop ([`agents::ConnectionTools`]). The tools are few and token-frugal
//! (`ucl`, `context`, `search`, `open`; see [`tools`]), with memory,
//! rules and skills ([`guidance_tools`]), the coding tools of `ucp-tools`
//! over a workspace root ([`coding`]), language servers ([`lsp_tools`]),
//! tool discovery ([`discovery`]) and sub-agents ([`agents`]) beside
//! them; every result is bounded by a token cap and cut at block
//! boundaries into pages ([`bound`]).

pub mod agents;
pub mod bound;
pub mod coding;
mod connection;
pub mod discovery;
pub mod guidance_tools;
pub mod lsp_tools;
pub mod tools;

use std::sync::Arc;

use serde::Serialize;

pub use coding::ToolOffer;
pub use connection::{Connection, ToolOutput};
pub use ucp_workspace::{Library, LibraryConfig, Workspace, WorkspaceError, EVICT_IDLE_AFTER};

/// Default most tokens of one tool result.
pub const DEFAULT_RESULT_TOKENS: usize = 8000;

/// Smallest token cap a connection takes (a page must hold a block and a note).
pub const MIN_RESULT_TOKENS: usize = 256;

/// A JSON object: a tool's arguments, or its input schema.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// A tool as every front end lists it. It serializes as MCP's tool
/// definition does (`name`, `description`, `inputSchema`, `annotations`),
/// which is also what `find_tools` returns and what a tool list costs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDef {
    /// Its name.
    pub name: String,
    /// What it does, for a model.
    pub description: String,
    /// The JSON schema of its arguments.
    pub input_schema: Arc<JsonObject>,
    /// What it may do.
    pub annotations: Annotations,
}

/// Hints about what a tool does (MCP's tool annotations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// It changes nothing.
    pub read_only_hint: bool,
    /// It reaches beyond the workspace (never, for UCP's own tools).
    pub open_world_hint: bool,
}

impl ToolDef {
    /// A tool named `name` doing `description`, with arguments as
    /// `input_schema` says.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: JsonObject,
        read_only: bool,
    ) -> Self {
        ToolDef {
            name: name.into(),
            description: description.into(),
            input_schema: Arc::new(input_schema),
            annotations: Annotations { read_only_hint: read_only, open_world_hint: false },
        }
    }
}

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
    Tool(#[from] ucp_tools::ToolError),
    /// A language server could not answer.
    #[error(transparent)]
    Lsp(#[from] ucp_lsp::LspError),
    /// Rules or skills could not be read as asked.
    #[error(transparent)]
    Guidance(#[from] ucp_guidance::GuidanceError),
}

impl From<ucp_agent::AgentError> for CallError {
    fn from(error: ucp_agent::AgentError) -> Self {
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
