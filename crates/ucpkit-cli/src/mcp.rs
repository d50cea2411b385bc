//! `ucp mcp`: the MCP server over stdio, or streamable HTTP with `--http`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use ucpkit_mcp::{CancellationToken, ConnectionLimits, HttpConfig};
use ucpkit_registry::{Library, LibraryConfig, ToolOffer};
use ucpkit_workspace::vocabulary::{GlobalLimits, SessionLimits};

use ucpkit_workspace::vocabulary::StoreError;
use ucpkit_workspace::WorkspaceError;

use crate::Cli;

/// Arguments of `ucp mcp`.
#[derive(clap::Args)]
pub(crate) struct McpArgs {
    /// A TOML file naming the language servers of the lsp_* tools
    /// (default: built-in pylsp, rust-analyzer, typescript-language-server,
    /// gopls).
    #[arg(long, env = "UCP_LSP_CONFIG", value_name = "FILE")]
    lsp_config: Option<PathBuf>,
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio (an IP
    /// and port, or localhost:PORT for loopback).
    #[arg(long, value_name = "ADDR", value_parser = listen_address)]
    http: Option<SocketAddr>,
    /// Create the store when it does not exist (by default a missing store
    /// is an error: a mistyped --store would serve an empty one).
    #[arg(long)]
    create: bool,
    /// Bearer token HTTP requests must carry (required off loopback).
    /// Prefer the UCP_MCP_TOKEN variable: a command line is visible to
    /// every local user in `ps`.
    #[arg(long, env = "UCP_MCP_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    token: Option<String>,
    /// A browser origin allowed to call the HTTP server, e.g.
    /// `https://app.example.com:443` (repeatable; `:*` for any port). On
    /// loopback, loopback origins are allowed too; any other Origin gets 403.
    #[arg(long, value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// Seconds a client has to send a request's headers.
    #[arg(long, default_value_t = ConnectionLimits::default().header_read_timeout.as_secs(), value_name = "SECS")]
    header_timeout: u64,
    /// Seconds a client has to send a request's body.
    #[arg(long, default_value_t = ucpkit_mcp::BODY_READ_TIMEOUT.as_secs(), value_name = "SECS")]
    body_timeout: u64,
    /// Most HTTP connections open at once that have not yet sent an
    /// authenticated request; at the cap the oldest is closed.
    #[arg(long, default_value_t = ConnectionLimits::default().max_pending, value_name = "N")]
    max_pending_connections: usize,
    /// Seconds after which an HTTP client's idle MCP session is closed,
    /// freeing its place under --max-sessions (a named session is saved).
    #[arg(long, default_value_t = ucpkit_mcp::SESSION_IDLE_TIMEOUT.as_secs(), value_name = "SECS")]
    session_idle_timeout: u64,
    /// A file or folder clients may index with the `open` tool (repeatable).
    #[arg(long, value_name = "PATH")]
    allow: Vec<PathBuf>,
    /// Most tokens of one tool result or resource read; longer ones are
    /// cut at block boundaries into pages.
    #[arg(long, default_value_t = ucpkit_registry::DEFAULT_RESULT_TOKENS, value_name = "TOKENS")]
    max_result_tokens: usize,
    /// Largest HTTP request body in bytes.
    #[arg(long, default_value_t = ucpkit_mcp::MAX_REQUEST_BYTES, value_name = "BYTES")]
    max_request_bytes: usize,
    /// Each client session's context window budget in tokens.
    #[arg(long, default_value_t = SessionLimits::default().max_context_tokens, value_name = "TOKENS")]
    budget: usize,
    /// Most client sessions open at once per document (the `context`
    /// tool's sub-agents do not count).
    #[arg(long, default_value_t = GlobalLimits::default().max_sessions, value_name = "N")]
    max_sessions: usize,
    /// Seconds a session must have been idle before a new client may take
    /// its place when --max-sessions are open (a named one is saved, and
    /// its client gets it back on its next call while there is room).
    #[arg(long, default_value_t = ucpkit_registry::EVICT_IDLE_AFTER.as_secs(), value_name = "SECS")]
    evict_idle_after: u64,
    /// Commands per second over all sessions of a document.
    #[arg(long, default_value_t = GlobalLimits::default().max_ops_per_second, value_name = "N")]
    max_ops_per_second: u32,
    /// Sessions may not edit documents, and the coding tools that write
    /// (write, edit, bash) are not offered.
    #[arg(long)]
    read_only: bool,
    /// Offer only these tools (comma-separated), e.g. context,grep,read.
    /// By default: ucl, context, search, repo_map, open, the memory tools,
    /// and over --root (over stdio the current folder by default; over
    /// HTTP only with --root given) rules_for, skills_list, skill_load, the
    /// coding tools grep, glob, read, write, edit, bash, ast_search and the
    /// lsp_* tools.
    #[arg(long, value_delimiter = ',', value_name = "TOOLS")]
    tools: Option<Vec<String>>,
    /// Over stdio, run the server inside the agent sandbox (see
    /// docs/guard.md): secrets unread, no network but the models' and
    /// `[sandbox]` allow_hosts, limits; its commands and MCP servers write
    /// only under --root and a scratch folder. Over HTTP, run every bash
    /// command in the OS sandbox: writes only under --root, /tmp and
    /// /dev, and no network. Refused where the kernel has no Landlock.
    #[arg(long)]
    sandbox: bool,
    /// List only the core tools (context, search, ucl) and find_tools,
    /// which returns the definitions of the others that fit an intent
    /// (all offered tools can be called).
    #[arg(long)]
    discover_tools: bool,
    /// Serve the tools of the other MCP servers of the configuration
    /// (`[mcp_servers.NAME]`) too, behind tool discovery (as with
    /// --discover-tools): their lists come from the store's cache (a
    /// server not listed before is listed at start), and a server is
    /// started by the first call to one of its tools.
    #[arg(long)]
    gateway: bool,
    /// Another folder of skills for skills_list and skill_load
    /// (repeatable), besides skills/, .agents/skills/ and .claude/skills/
    /// under --root.
    #[arg(long = "skills", value_name = "DIR")]
    skill_dirs: Vec<PathBuf>,
    /// Offer the agent tools: `task` (sub-agents with the models of
    /// .ucp/config.toml or the flags below) and `ask_user` (the client's
    /// user, by elicitation).
    #[arg(long)]
    agents: bool,
    #[command(flatten)]
    llm: crate::agent::LlmArgs,
}

pub(crate) fn run(cli: &Cli, args: &McpArgs) -> anyhow::Result<()> {
    if args.gateway && args.sandbox && args.http.is_some() {
        // Over HTTP only commands are sandboxed: the configured servers
        // would run outside it.
        anyhow::bail!(
            "--gateway over --http runs the configured MCP servers outside the sandbox: it cannot go with --sandbox"
        );
    }
    if args.llm.given() && !args.agents {
        anyhow::bail!("the model flags (--api, --base-url, --llm, --provider) need --agents");
    }
    let agents = args.agents.then(|| args.llm.setup(cli)).transpose()?.map(Arc::new);
    // Over stdio the whole server runs inside the agent sandbox.
    let inside = match args.sandbox && args.http.is_none() {
        true => Some(crate::sandbox::enter(cli, &crate::sandbox::endpoints(cli, agents.as_deref())?)?),
        false => None,
    };
    let mut config = LibraryConfig::new(cli.store_location());
    config.document = cli.doc().map(str::to_owned);
    config.model = cli.model.clone();
    config.allowed_roots = Some(args.allow.clone());
    config.read_only = args.read_only;
    config.limits.max_sessions = args.max_sessions;
    config.evict_idle_after = Duration::from_secs(args.evict_idle_after);
    config.limits.max_ops_per_second = args.max_ops_per_second;
    config.session_limits.max_context_tokens = args.budget;
    let library = Arc::new(match args.create {
        true => Library::open(config)?,
        false => Library::open_existing(config).map_err(|e| match e {
            WorkspaceError::Store(StoreError::Missing(dir)) => {
                anyhow::anyhow!("no store at {}: index a corpus into it first, or pass --create", dir.display())
            }
            other => other.into(),
        })?,
    });
    // On a database server's store, other nodes' writes are read again as
    // they commit, not when the next call finds the copy stale.
    library.follow_changes()?;
    // Over stdio the client started the server as its own user, in its
    // project: the coding tools work there (unless that is / or the home
    // folder, which only a --root naming them opens). Over HTTP they run
    // commands for remote callers, so only a --root given on purpose
    // offers them.
    let (root, unrooted) = match (&cli.root, args.http) {
        (Some(root), _) => (Some(root.clone()), None),
        (None, None) => cli.optional_root(),
        (None, Some(_)) => (None, None),
    };
    let mut protected = cli.protected_paths();
    protected.extend(args.lsp_config.iter().cloned());
    let mut offer = ToolOffer {
        max_result_tokens: args.max_result_tokens,
        root,
        read_only: args.read_only,
        only: args.tools.clone(),
        sandbox: args.sandbox.then_some(ucpkit_registry::parts::files::Sandbox {
            network: false,
            scratch: None,
            hidden: None,
        }),
        lsp: None,
        discover: args.discover_tools || args.gateway,
        skill_dirs: args.skill_dirs.clone(),
        agents: agents.clone(),
        protected,
        passed_env: cli.pass_env.clone(),
        others: Vec::new(),
        buffers: None,
        guard: None,
    };
    if let Some(inside) = &inside {
        // Before any MCP server starts (listing one starts it).
        crate::sandbox::confine(inside, &mut offer)?;
    }
    if args.gateway {
        offer.others = crate::mcp_servers::external_tools(&crate::mcp_servers::servers(cli)?);
    }
    let sandbox_rules = if inside.is_some() { crate::sandbox::rules(cli)? } else { Vec::new() };
    offer.guard = Some(crate::guard::setup(cli, sandbox_rules, None, false)?);
    // The language servers start on a client's first lsp_* call.
    if let Some(root) = &offer.root {
        let lsp = ucpkit_registry::parts::lsp::Lsp::new(root, crate::lsp::config(args.lsp_config.as_ref())?)?;
        offer.lsp = Some(ucpkit_registry::lsp_tools::SharedLsp(Arc::new(lsp)));
    }
    Cli::checked_offer(&offer, unrooted.as_deref(), "--tools", true, "ucp mcp")?;
    // Fails now, not at a client's first call, when the root is unusable.
    if let Some(root) = &offer.root {
        let jail = ucpkit_registry::parts::files::Jail::new(root)?.with_protected(offer.protected.iter().cloned());
        if let Some(sandbox) = &offer.sandbox {
            sandbox.check(&jail)?;
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    let Some(addr) = args.http else {
        return runtime.block_on(ucpkit_mcp::serve_stdio(library, offer)).context("serving stdio");
    };
    let http = HttpConfig {
        addr,
        token: args.token.clone(),
        max_request_bytes: args.max_request_bytes,
        offer,
        allowed_origins: args.allow_origin.clone(),
        body_read_timeout: Duration::from_secs(args.body_timeout),
        connections: ConnectionLimits {
            header_read_timeout: Duration::from_secs(args.header_timeout),
            max_pending: args.max_pending_connections,
        },
        session_idle_timeout: Duration::from_secs(args.session_idle_timeout),
    };
    http.check().map_err(anyhow::Error::msg)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("listening on {addr}"))?;
        let bound = listener.local_addr()?;
        let shutdown = CancellationToken::new();
        let router = ucpkit_mcp::router(library, &http, shutdown.clone());
        eprintln!(
            "ucp mcp: serving http://{bound}/mcp{}",
            if http.token.is_some() { " (bearer token required)" } else { "" }
        );
        ucpkit_mcp::serve_http(listener, router, shutdown, http.connections).await.context("serving HTTP")
    })
}

/// An address to listen on: `IP:PORT`, or `localhost:PORT` (loopback).
fn listen_address(text: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    match text.rsplit_once(':') {
        Some((host, port)) if host.eq_ignore_ascii_case("localhost") => port
            .parse::<u16>()
            .map(|port| SocketAddr::from(([127, 0, 0, 1], port)))
            .map_err(|_| format!("{port:?} is not a port number")),
        _ => Err(format!("{text:?} is not IP:PORT or localhost:PORT (e.g. 127.0.0.1:8848)")),
    }
}

#[cfg(test)]
mod tests {
    use super::listen_address;

    #[test]
    fn addresses_are_ip_and_port_or_localhost() {
        assert_eq!(listen_address("127.0.0.1:80").unwrap().to_string(), "127.0.0.1:80");
        assert_eq!(listen_address("[::1]:80").unwrap().to_string(), "[::1]:80");
        assert_eq!(listen_address("localhost:8848").unwrap().to_string(), "127.0.0.1:8848");
        assert_eq!(listen_address("LOCALHOST:0").unwrap().to_string(), "127.0.0.1:0");
        assert!(listen_address("localhost:http").unwrap_err().contains("port number"));
        assert!(listen_address("example.com:80").unwrap_err().contains("localhost:PORT"));
    }
}
