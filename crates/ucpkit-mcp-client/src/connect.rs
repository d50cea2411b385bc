//! Connecting one server: a child process over stdio or a streamable-HTTP
//! endpoint, initialized within the server's start-up time, with what it
//! writes to stderr kept (its end only) for the error that names why it
//! stopped, and its `list_changed` notifications passed on.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt as _};
use tokio::io::AsyncReadExt as _;
use tokio::sync::mpsc::UnboundedSender;

use crate::config::{ServerConfig, Transport};
use crate::McpClientError;

/// The variables every stdio server gets from UCP's environment (when
/// set), besides those its section names: what programs need to run.
pub const BASE_ENV: [&str; 10] = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ"];

/// How much of a server's stderr is kept: the end, for error messages.
const STDERR_TAIL: usize = 2048;

/// The longest message read from a stdio server (a longer one is dropped
/// and its request times out); an answer this long is read, then capped.
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// A connected server.
pub(crate) type Service = RunningService<RoleClient, Watcher>;

/// The client side of one connection: says who UCP is, and passes a
/// server's `list_changed` notifications on as the server's name.
#[derive(Clone)]
pub(crate) struct Watcher {
    server: String,
    changed: UnboundedSender<String>,
}

impl Watcher {
    /// A watcher that sends `server` down `changed` when its lists change.
    pub(crate) fn new(server: &str, changed: UnboundedSender<String>) -> Self {
        Watcher { server: server.to_owned(), changed }
    }

    fn changed(&self) -> std::future::Ready<()> {
        // The receiver is gone only when the servers are dropped.
        let _ = self.changed.send(self.server.clone());
        std::future::ready(())
    }
}

impl ClientHandler for Watcher {
    fn get_info(&self) -> ClientConfig {
        // The latest version negotiated by `initialize`, which every
        // released server understands or answers with its own.
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("ucp", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        self.changed()
    }

    fn on_resource_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        self.changed()
    }

    fn on_prompt_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        self.changed()
    }
}

/// The end of what a server wrote to stderr.
#[derive(Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<Vec<u8>>>);

impl StderrTail {
    fn push(&self, bytes: &[u8]) {
        let mut tail = self.0.lock().unwrap_or_else(|e| e.into_inner());
        tail.extend_from_slice(bytes);
        let excess = tail.len().saturating_sub(STDERR_TAIL);
        tail.drain(..excess);
    }

    /// `"; it wrote: …"` with the last lines it wrote, or nothing.
    pub(crate) fn said(&self) -> String {
        let tail = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let text = String::from_utf8_lossy(&tail);
        let text = text.trim();
        match text.is_empty() {
            true => String::new(),
            false => format!("; it wrote: {}", text.replace('\n', " | ")),
        }
    }
}

/// A connected server, with its child process (killed when dropped) and
/// the end of what it wrote to stderr.
pub(crate) struct Connected {
    pub service: Service,
    pub child: Option<tokio::process::Child>,
    pub stderr: StderrTail,
}

/// Connects the server `name` and initializes it, within its start-up
/// time.
pub(crate) async fn connect(name: &str, config: &ServerConfig, watcher: Watcher) -> Result<Connected, McpClientError> {
    let startup = config.startup_timeout();
    let tail = StderrTail::default();
    let mut drained = None;
    let mut child = None;
    let started = match config.transport(name)? {
        Transport::Stdio => {
            let (mut process, drain) = spawn(name, config, &tail)?;
            drained = drain;
            let (Some(stdout), Some(stdin)) = (process.stdout.take(), process.stdin.take()) else {
                return Err(McpClientError::Start { server: name.into(), message: "its pipes did not open".into() });
            };
            child = Some(process);
            let transport = AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(MAX_MESSAGE_BYTES);
            tokio::time::timeout(startup, watcher.serve(transport)).await
        }
        Transport::Http => {
            let transport = StreamableHttpClientTransport::from_config(http_config(name, config)?);
            tokio::time::timeout(startup, watcher.serve(transport)).await
        }
    };
    match started {
        Ok(Ok(service)) => Ok(Connected { service, child, stderr: tail }),
        Ok(Err(e)) => {
            // A server that stopped has said why on stderr: read it to the end.
            if let Some(drained) = drained {
                let _ = tokio::time::timeout(std::time::Duration::from_millis(500), drained).await;
            }
            Err(McpClientError::Start { server: name.to_owned(), message: format!("{e}{}", tail.said()) })
        }
        Err(_) => Err(McpClientError::Start {
            server: name.to_owned(),
            message: format!("no answer to initialize within {} s{}", startup.as_secs_f64(), tail.said()),
        }),
    }
}

/// The sandbox every stdio server this process starts runs in, with the
/// workspace it may write to (set once, by an agent inside the agent
/// sandbox: the property is the whole process's).
static CONFINED: std::sync::OnceLock<(ucpkit_tools::Sandbox, ucpkit_tools::Jail)> = std::sync::OnceLock::new();

/// Runs every stdio server started from now on inside `sandbox`, writing
/// only where it lets them under `jail`'s root (the store read-only).
pub fn confine_servers(sandbox: ucpkit_tools::Sandbox, jail: ucpkit_tools::Jail) {
    let _ = CONFINED.set((sandbox, jail));
}

/// Starts the child process of a stdio server, its stderr drained into
/// `tail` by the task returned.
fn spawn(
    name: &str,
    config: &ServerConfig,
    tail: &StderrTail,
) -> Result<(tokio::process::Child, Option<tokio::task::JoinHandle<()>>), McpClientError> {
    let command = config.command.as_deref().unwrap_or_default();
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(&config.args).env_clear().kill_on_drop(true);
    for var in BASE_ENV.iter().copied().chain(config.env_vars.iter().map(String::as_str)) {
        if let Some(value) = std::env::var_os(var) {
            cmd.env(var, value);
        }
    }
    cmd.envs(&config.env);
    if let Some(cwd) = &config.cwd {
        cmd.current_dir(cwd);
    }
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    if let Some((sandbox, jail)) = CONFINED.get() {
        sandbox.confine(jail, cmd.as_std_mut()).map_err(|e| McpClientError::Start {
            server: name.to_owned(),
            message: format!("cannot sandbox {command:?}: {e}"),
        })?;
    }
    let mut process = cmd.spawn().map_err(|e| McpClientError::Start {
        server: name.to_owned(),
        message: format!("cannot run {command:?}: {e}"),
    })?;
    let drain = process.stderr.take().map(|mut stderr| {
        let tail = tail.clone();
        let server = name.to_owned();
        tokio::spawn(async move {
            let mut buffer = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut buffer).await {
                tracing::debug!(server, "stderr: {}", String::from_utf8_lossy(&buffer[..n]).trim_end());
                tail.push(&buffer[..n]);
            }
        })
    });
    Ok((process, drain))
}

/// How a streamable-HTTP server is reached, its bearer token read from
/// the variable its section names.
fn http_config(name: &str, config: &ServerConfig) -> Result<StreamableHttpClientTransportConfig, McpClientError> {
    // TLS with ring, the provider the rest of UCP's HTTPS uses; another
    // part of the process may have installed one already.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut http = StreamableHttpClientTransportConfig::with_uri(config.url.clone().unwrap_or_default());
    if let Some(var) = &config.bearer_token_env_var {
        let token = std::env::var(var).ok().filter(|t| !t.trim().is_empty()).ok_or_else(|| {
            McpClientError::Config(format!("[mcp_servers.{name}]: the token variable {var} is not set"))
        })?;
        http = http.auth_header(token.trim().to_owned());
    }
    if !config.http_headers.is_empty() {
        let mut headers = std::collections::HashMap::new();
        for (header, value) in &config.http_headers {
            let bad = || McpClientError::Config(format!("[mcp_servers.{name}]: the header {header:?} is not valid"));
            let header = http::HeaderName::from_bytes(header.as_bytes()).map_err(|_| bad())?;
            headers.insert(header, http::HeaderValue::from_str(value).map_err(|_| bad())?);
        }
        http = http.custom_headers(headers);
    }
    Ok(http)
}
