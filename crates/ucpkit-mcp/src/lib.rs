//! The UCP server for the Model Context Protocol, on the official Rust SDK
//! (`rmcp`), over stdio ([`serve_stdio`]) or streamable HTTP at `/mcp`
//! with a bearer token ([`serve_http`]).
//!
//! It only translates: every client connection gets its own
//! `ucpkit_registry::Connection`, whose tools (defined, offered, checked and
//! run in `ucpkit-registry`) it lists and calls ([`definition`] maps one to
//! MCP's form); documents and blocks are resources (`ucp://<doc>/<block>`,
//! cut to the result cap at block boundaries), one prompt teaches UCL
//! ([`guide`]), and `ask_user` asks the client's user by elicitation
//! ([`ElicitingAsker`]).

mod elicit;
pub mod guide;
mod handler;
mod http;
mod listen;
mod resources;

use std::sync::Arc;

pub use elicit::ElicitingAsker;
pub use handler::{definition, UcpServer};
pub use http::{router, HttpConfig, BODY_READ_TIMEOUT, MAX_REQUEST_BYTES, SESSION_IDLE_TIMEOUT};
pub use listen::{serve_http, ConnectionLimits};
pub use tokio_util::sync::CancellationToken;
use ucpkit_registry::{Library, ToolOffer};

/// Serves one client over stdin/stdout until it disconnects.
pub async fn serve_stdio(library: Arc<Library>, offer: ToolOffer) -> Result<(), std::io::Error> {
    use rmcp::ServiceExt as _;
    let server = UcpServer::new(library, Arc::new(offer));
    let running = server.serve(rmcp::transport::stdio()).await.map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
