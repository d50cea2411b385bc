//! The UCP server for the Model Context Protocol, on the official Rust SDK
//! (`rmcp`), over stdio ([`serve_stdio`]) or streamable HTTP at `/mcp`
//! with a bearer token ([`serve_http`]).
//!
//! Every client connection gets its own agent session ([`Connection`]) in
//! a document the server keeps loaded ([`Library`]). The tools are few and
//! token-frugal (`ucl`, `context`, `search`, `open`; see [`tools`]); every
//! result is bounded by a token cap and cut at block boundaries into pages
//! ([`bound`]). Documents and blocks are resources (`ucp://<doc>/<block>`),
//! and one prompt teaches UCL ([`guide`]).

pub mod bound;
mod connection;
pub mod guide;
mod handler;
mod http;
mod library;
mod listen;
mod resources;
pub mod tools;

use std::sync::Arc;

pub use connection::{Connection, ToolOutput};
pub use handler::UcpServer;
pub use handler::MIN_RESULT_TOKENS;
pub use http::{router, HttpConfig, BODY_READ_TIMEOUT, MAX_REQUEST_BYTES, SESSION_IDLE_TIMEOUT};
pub use library::{Library, LibraryConfig, Workspace, EVICT_IDLE_AFTER};
pub use listen::{serve_http, ConnectionLimits};
pub use tokio_util::sync::CancellationToken;

/// Default most tokens of one tool result or resource read.
pub const DEFAULT_RESULT_TOKENS: usize = 8000;

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] ucp_store::StoreError),
    /// Indexing a path failed.
    #[error(transparent)]
    Ingest(#[from] ucp_ingest::IngestError),
    /// The search index failed.
    #[error(transparent)]
    Search(#[from] ucp_search::SearchError),
    /// A session command failed.
    #[error("{0}")]
    Agent(#[from] ucp_agent::AgentError),
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
    /// A change refused because the server is read-only.
    #[error("this server is read-only: {0}")]
    ReadOnly(String),
    /// Another connection holds the named session.
    #[error("session {0:?} is in use by another connection")]
    SessionInUse(String),
    /// A stored record cannot be read.
    #[error("damaged record: {0}")]
    Damaged(String),
    /// No tool has this name.
    #[error("unknown tool {0:?}")]
    UnknownTool(String),
    /// Arguments that do not fit the tool's schema.
    #[error("{0}")]
    Arguments(String),
    /// The page asked for does not exist.
    #[error("{0}")]
    NoPage(String),
}

/// Serves one client over stdin/stdout until it disconnects.
pub async fn serve_stdio(library: Arc<Library>, max_result_tokens: usize) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt as _;
    let server = UcpServer::new(library, max_result_tokens);
    let running = server.serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
