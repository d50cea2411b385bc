//! UCP as an MCP client. The servers a user configures
//! (`[mcp_servers.NAME]`, [`config`]) are reached over stdio or
//! streamable HTTP ([`connect`](crate::servers)); their tool, resource
//! and prompt lists are kept in the store ([`cache`]), so once listed
//! UCP starts without starting any of them; a server is connected by the first call
//! that needs it, closed when idle and started again when it died
//! ([`servers`]). Their tools become records of UCP's registry
//! ([`tools`]), named `mcp__<server>__<tool>` ([`names`]), offered, found
//! by `find_tools` and checked like UCP's own.

pub mod cache;
pub mod config;
mod connect;
pub mod names;
pub mod servers;
pub mod tools;

pub use cache::Listing;
pub use config::{ServerConfig, ServersConfig, Transport};
pub use connect::{confine_servers, BASE_ENV};
pub use servers::McpServers;
pub use tools::registry_tools;

use rmcp::service::ServiceError;

/// Why a server could not be used.
#[derive(Debug, thiserror::Error)]
pub enum McpClientError {
    /// The configuration is wrong.
    #[error("{0}")]
    Config(String),
    /// No server has this name.
    #[error("no MCP server {server:?} is configured (configured: {known})")]
    UnknownServer {
        /// The name asked for.
        server: String,
        /// The configured ones.
        known: String,
    },
    /// The server could not be started or did not initialize.
    #[error("the MCP server {server} did not start: {message}")]
    Start {
        /// Its name.
        server: String,
        /// Why, with the end of what it wrote to stderr.
        message: String,
    },
    /// The server did not answer in time.
    #[error("the MCP server {server} did not answer {what} within {seconds} s")]
    Timeout {
        /// Its name.
        server: String,
        /// What it was asked.
        what: String,
        /// The time it had.
        seconds: f64,
    },
    /// The server answered with an error, or the connection broke.
    #[error("the MCP server {server} failed {what}: {message}")]
    Server {
        /// Its name.
        server: String,
        /// What it was asked.
        what: String,
        /// What went wrong.
        message: String,
    },
}

impl McpClientError {
    fn from_service(server: &str, what: &str, error: ServiceError, said: &str) -> Self {
        let message = match error {
            ServiceError::TransportClosed => {
                format!("the connection closed (it is started again on the next call){said}")
            }
            other => format!("{other}{said}"),
        };
        McpClientError::Server { server: server.to_owned(), what: what.to_owned(), message }
    }
}
