//! `ucp mcp`: the MCP server over stdio, or streamable HTTP with `--http`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use ucp_agent::{GlobalLimits, SessionLimits};
use ucp_mcp::{CancellationToken, HttpConfig, Library, LibraryConfig};

use crate::Cli;

/// Arguments of `ucp mcp`.
#[derive(clap::Args)]
pub(crate) struct McpArgs {
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Bearer token HTTP requests must carry (required off loopback).
    #[arg(long, env = "UCP_MCP_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    token: Option<String>,
    /// A file or folder clients may index with the `open` tool (repeatable).
    #[arg(long, value_name = "PATH")]
    allow: Vec<PathBuf>,
    /// Most tokens of one tool result or resource read; longer ones are
    /// cut at block boundaries into pages.
    #[arg(long, default_value_t = ucp_mcp::DEFAULT_RESULT_TOKENS, value_name = "TOKENS")]
    max_result_tokens: usize,
    /// Largest HTTP request body in bytes.
    #[arg(long, default_value_t = ucp_mcp::MAX_REQUEST_BYTES, value_name = "BYTES")]
    max_request_bytes: usize,
    /// Each client session's context window budget in tokens.
    #[arg(long, default_value_t = SessionLimits::default().max_context_tokens, value_name = "TOKENS")]
    budget: usize,
    /// Most sessions open at once per document.
    #[arg(long, default_value_t = GlobalLimits::default().max_sessions, value_name = "N")]
    max_sessions: usize,
    /// Commands per second over all sessions of a document.
    #[arg(long, default_value_t = GlobalLimits::default().max_ops_per_second, value_name = "N")]
    max_ops_per_second: u32,
    /// Sessions may not edit documents.
    #[arg(long)]
    read_only: bool,
}

pub(crate) fn run(cli: &Cli, args: &McpArgs) -> anyhow::Result<()> {
    let mut config = LibraryConfig::new(cli.store_dir());
    config.document = cli.doc.clone();
    config.model = cli.model.clone();
    config.allowed_roots = args.allow.clone();
    config.read_only = args.read_only;
    config.limits.max_sessions = args.max_sessions;
    config.limits.max_ops_per_second = args.max_ops_per_second;
    config.session_limits.max_context_tokens = args.budget;
    let library = Arc::new(Library::open(config)?);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    let Some(addr) = args.http else {
        return runtime.block_on(ucp_mcp::serve_stdio(library, args.max_result_tokens)).context("serving stdio");
    };
    let http = HttpConfig {
        addr,
        token: args.token.clone(),
        max_request_bytes: args.max_request_bytes,
        max_result_tokens: args.max_result_tokens,
    };
    http.check().map_err(anyhow::Error::msg)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("listening on {addr}"))?;
        let bound = listener.local_addr()?;
        let shutdown = CancellationToken::new();
        let router = ucp_mcp::router(library, &http, shutdown.clone());
        eprintln!(
            "ucp mcp: serving http://{bound}/mcp{}",
            if http.token.is_some() { " (bearer token required)" } else { "" }
        );
        ucp_mcp::serve_http(listener, router, shutdown).await.context("serving HTTP")
    })
}
