//! The UCP server for the Model Context Protocol, on the official Rust SDK
//! (`rmcp`), over stdio ([`serve_stdio`]) or streamable HTTP at `/mcp`
//! with a bearer token ([`serve_http`]).
//!
//! Every client connection gets its own agent session ([`Connection`]) in
//! a document the server keeps loaded ([`Library`], from `ucp-workspace`,
//! which does the work; this crate translates MCP requests and results). The tools are few and
//! token-frugal (`ucl`, `context`, `search`, `open`; see [`tools`]), with
//! the coding tools of `ucp-tools` beside them over a workspace root
//! (`grep`, `glob`, `read`, `write`, `edit`, `bash`; see [`coding`]); every
//! result is bounded by a token cap and cut at block boundaries into pages
//! ([`bound`]). Documents and blocks are resources (`ucp://<doc>/<block>`),
//! and one prompt teaches UCL ([`guide`]).

pub mod agents;
pub mod bound;
pub mod coding;
mod connection;
pub mod discovery;
pub mod guidance_tools;
pub mod guide;
mod handler;
mod http;
mod listen;
pub mod lsp_tools;
mod resources;
pub mod tools;

use std::sync::Arc;

pub use coding::ToolOffer;
pub use connection::{Connection, ToolOutput};
pub use handler::UcpServer;
pub use handler::MIN_RESULT_TOKENS;
pub use http::{router, HttpConfig, BODY_READ_TIMEOUT, MAX_REQUEST_BYTES, SESSION_IDLE_TIMEOUT};
pub use listen::{serve_http, ConnectionLimits};
pub use tokio_util::sync::CancellationToken;
pub use ucp_workspace::{Library, LibraryConfig, Workspace, WorkspaceError, EVICT_IDLE_AFTER};

/// Default most tokens of one tool result or resource read.
pub const DEFAULT_RESULT_TOKENS: usize = 8000;

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The workspace refused or failed (store, index, session, path ...).
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    /// No tool has this name.
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
}

impl From<ucp_agent::AgentError> for McpError {
    fn from(error: ucp_agent::AgentError) -> Self {
        McpError::Workspace(error.into())
    }
}

/// The text a client is shown for `error`: the full error goes to the
/// server's log, and the store's place on the host is hidden.
pub(crate) fn client_message(library: &Library, error: &McpError) -> String {
    let text = error.to_string();
    tracing::info!("request failed: {text}");
    library.hide_store_path(&text)
}

/// Serves one client over stdin/stdout until it disconnects.
pub async fn serve_stdio(library: Arc<Library>, offer: ToolOffer) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt as _;
    let server = UcpServer::new(library, Arc::new(offer));
    let running = server.serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
