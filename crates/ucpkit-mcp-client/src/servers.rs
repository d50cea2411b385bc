//! The configured servers of one UCP process: their lists (from the
//! store's cache, or from the server the first time), and one connection
//! each, opened by the first call that needs it, shared by the calls that
//! race for it, closed when idle, opened again when the server died.
//!
//! The connections live on a small runtime of their own, on its own
//! thread; the methods here are blocking, for the registry's tool
//! handlers (which run engine work on blocking threads).

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, GetPromptRequestParams, GetPromptResult, ReadResourceRequestParams,
    ReadResourceResult,
};
use rmcp::service::{Peer, RoleClient, ServiceError};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::cache::{Cache, Listing};
use crate::config::{ServerConfig, ServersConfig};
use crate::connect::{connect, Connected, Service, StderrTail, Watcher};
use crate::McpClientError;

/// How often idle connections are looked for.
const IDLE_CHECK: Duration = Duration::from_millis(500);

/// The servers of one configuration.
pub struct McpServers {
    inner: Arc<Inner>,
    runtime: RuntimeThread,
}

struct Inner {
    servers: BTreeMap<String, Server>,
    /// The servers configured with `enabled = false`.
    disabled: Vec<String>,
    cache: Cache,
    changed: tokio::sync::mpsc::UnboundedSender<String>,
}

/// One server: its configuration, its lists, its connection.
struct Server {
    name: String,
    config: ServerConfig,
    /// Its lists, once loaded from the cache or listed.
    listing: Mutex<Option<Arc<Listing>>>,
    /// The connection; the lock is held while one is opened, so calls that
    /// race for a closed server open it once.
    live: tokio::sync::Mutex<Option<Live>>,
    /// Connections opened (for tests and figures).
    connects: AtomicUsize,
}

struct Live {
    service: Service,
    /// A stdio server's process, killed when dropped.
    child: Option<tokio::process::Child>,
    stderr: StderrTail,
    last_used: Instant,
    /// Which connection of its server this is (its number among them).
    generation: usize,
    /// Requests sent and not answered yet: not idle while any is.
    in_flight: Arc<AtomicUsize>,
}

impl Live {
    /// Whether the server still answers: its connection is open and its
    /// process (a stdio server's) has not exited.
    fn alive(&mut self) -> bool {
        !self.service.is_closed()
            && !self.service.peer().is_transport_closed()
            && self.child.as_mut().is_none_or(|child| matches!(child.try_wait(), Ok(None)))
    }

    /// Closes the connection (a stdio server sees its input end and may
    /// exit), waits a moment for the process, then kills what is left.
    async fn close(mut self) {
        let _ = self.service.close_with_timeout(CLOSE_WAIT).await;
        if let Some(child) = self.child.as_mut() {
            let _ = tokio::time::timeout(CLOSE_WAIT, child.wait()).await;
        }
    }
}

/// Counts a request in flight until dropped.
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn start(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        InFlight(count.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How long a closing server is given to stop before it is killed.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

impl McpServers {
    /// The enabled servers of `config`, their lists cached under `store`
    /// (none cached when `None`). Nothing is started here: a server is
    /// connected by the first listing its cache cannot answer, or call.
    pub fn new(config: &ServersConfig, store: Option<&Path>) -> Result<Self, McpClientError> {
        let runtime = RuntimeThread::start()?;
        let (changed, changes) = tokio::sync::mpsc::unbounded_channel();
        let servers = config
            .enabled()
            .map(|(name, config)| {
                let server = Server {
                    name: name.clone(),
                    config: config.clone(),
                    listing: Mutex::new(None),
                    live: tokio::sync::Mutex::new(None),
                    connects: AtomicUsize::new(0),
                };
                (name.clone(), server)
            })
            .collect();
        let disabled = config.servers.iter().filter(|(_, s)| !s.enabled).map(|(name, _)| name.clone()).collect();
        let inner = Arc::new(Inner { servers, disabled, cache: Cache::new(store), changed });
        runtime.handle.spawn(close_idle(Arc::downgrade(&inner)));
        runtime.handle.spawn(relist_changed(Arc::downgrade(&inner), changes));
        Ok(McpServers { inner, runtime })
    }

    /// The servers' names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.inner.servers.keys().map(String::as_str)
    }

    /// The configuration of `server`.
    pub fn config(&self, server: &str) -> Option<&ServerConfig> {
        self.inner.servers.get(server).map(|s| &s.config)
    }

    /// `server`'s lists if they are in memory or cached (nothing is
    /// started).
    pub fn cached(&self, server: &str) -> Option<Arc<Listing>> {
        self.inner.cached(self.inner.servers.get(server)?)
    }

    /// How many connections were opened so far, to all servers.
    pub fn connects(&self) -> usize {
        self.inner.servers.values().map(|s| s.connects.load(Ordering::Relaxed)).sum()
    }

    /// How many servers are connected now.
    pub fn connected(&self) -> usize {
        let inner = self.inner.clone();
        self.runtime
            .run(async move {
                let mut n = 0;
                for server in inner.servers.values() {
                    n += usize::from(server.live.lock().await.as_mut().is_some_and(Live::alive));
                }
                n
            })
            .unwrap_or(0)
    }

    /// Every server's lists: from memory, else the store's cache, else
    /// (or with `refresh`) from the server, the servers that need it
    /// connected at once. A server that cannot be listed gives its error,
    /// and does not hold up the others.
    pub fn listings(&self, refresh: bool) -> Vec<(String, Result<Arc<Listing>, McpClientError>)> {
        let inner = self.inner.clone();
        self.runtime
            .run(async move {
                let listed = inner.servers.keys().map(|name| {
                    let inner = inner.clone();
                    let name = name.clone();
                    tokio::spawn(async move {
                        let listing = inner.listing(&name, refresh).await;
                        (name, listing)
                    })
                });
                let mut all = Vec::new();
                for task in listed.collect::<Vec<_>>() {
                    all.extend(task.await.ok());
                }
                all
            })
            .unwrap_or_default()
    }

    /// `server`'s lists (see [`McpServers::listings`]).
    pub fn listing(&self, server: &str, refresh: bool) -> Result<Arc<Listing>, McpClientError> {
        let inner = self.inner.clone();
        let server = server.to_owned();
        self.runtime.run(async move { inner.listing(&server, refresh).await })?
    }

    /// Calls `server`'s tool `tool` (its own name) with `arguments`; a
    /// tool its configuration does not offer is refused.
    pub fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<CallToolResult, McpClientError> {
        if !self.inner.server(server)?.config.offers_tool(tool) {
            return Err(McpClientError::Config(format!(
                "the tool {tool} of the MCP server {server} is not offered (enabled_tools or disabled_tools)"
            )));
        }
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        self.request(server, format!("tools/call {tool}"), |peer| async move { peer.call_tool(params).await })
    }

    /// Reads `server`'s resource `uri`.
    pub fn read_resource(&self, server: &str, uri: &str) -> Result<ReadResourceResult, McpClientError> {
        let params = ReadResourceRequestParams::new(uri.to_owned());
        self.request(server, format!("resources/read {uri}"), |peer| async move { peer.read_resource(params).await })
    }

    /// Gets `server`'s prompt `name` with `arguments`.
    pub fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<GetPromptResult, McpClientError> {
        let params = GetPromptRequestParams::new(name.to_owned()).with_arguments(arguments);
        self.request(server, format!("prompts/get {name}"), |peer| async move { peer.get_prompt(params).await })
    }

    /// Sends one request (`what`, for errors) to `server` and waits for
    /// its answer.
    fn request<T, F, Fut>(&self, server: &str, what: String, send: F) -> Result<T, McpClientError>
    where
        T: Send + 'static,
        F: FnOnce(Peer<RoleClient>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, ServiceError>> + Send,
    {
        let inner = self.inner.clone();
        let server = server.to_owned();
        self.runtime.run(async move { inner.request(&server, &what, send).await })?
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        // Closes every connection (a child process sees its input end, is
        // given a moment to stop, then killed) before the runtime stops.
        let inner = self.inner.clone();
        let _ = self.runtime.run(async move {
            for server in inner.servers.values() {
                if let Some(live) = server.live.lock().await.take() {
                    live.close().await;
                }
            }
        });
    }
}

impl Inner {
    fn server(&self, name: &str) -> Result<&Server, McpClientError> {
        if self.disabled.iter().any(|d| d == name) {
            return Err(McpClientError::Config(format!("the MCP server {name} is disabled (enabled = false)")));
        }
        self.servers.get(name).ok_or_else(|| McpClientError::UnknownServer {
            server: name.to_owned(),
            known: self.servers.keys().cloned().collect::<Vec<_>>().join(", "),
        })
    }

    /// `server`'s lists from memory, else from the store's cache (then
    /// kept in memory).
    fn cached(&self, server: &Server) -> Option<Arc<Listing>> {
        let mut listing = server.listing.lock().unwrap_or_else(|e| e.into_inner());
        if listing.is_none() {
            *listing = self.cache.load(&server.name, &server.config.cache_key()).map(Arc::new);
        }
        listing.clone()
    }

    async fn listing(&self, name: &str, refresh: bool) -> Result<Arc<Listing>, McpClientError> {
        let server = self.server(name)?;
        if let Some(listing) = self.cached(server).filter(|_| !refresh) {
            return Ok(listing);
        }
        let mut live = server.live.lock().await;
        let opened = self.connected(server, &mut live).await?;
        self.relist(server, &opened.peer).await
    }

    /// Lists `server` again over `service`, and keeps the lists.
    async fn relist(&self, server: &Server, service: &Peer<RoleClient>) -> Result<Arc<Listing>, McpClientError> {
        let timeout = server.config.tool_timeout();
        let failed = |what: &str, e: ServiceError| McpClientError::from_service(&server.name, what, e, "");
        let info = service.peer_info();
        let implementation = info.as_ref().and_then(|i| i.server_info.clone());
        let capabilities = info.as_ref().map(|i| i.capabilities.clone()).unwrap_or_default();
        let listed = async {
            let tools = match capabilities.tools {
                Some(_) => service.list_all_tools().await.map_err(|e| failed("tools/list", e))?,
                None => Vec::new(),
            };
            let resources = match capabilities.resources {
                Some(_) => service.list_all_resources().await.map_err(|e| failed("resources/list", e))?,
                None => Vec::new(),
            };
            let prompts = match capabilities.prompts {
                Some(_) => service.list_all_prompts().await.map_err(|e| failed("prompts/list", e))?,
                None => Vec::new(),
            };
            Ok::<_, McpClientError>((tools, resources, prompts))
        };
        let (tools, resources, prompts) = tokio::time::timeout(timeout, listed).await.map_err(|_| {
            McpClientError::Timeout { server: server.name.clone(), what: "list".into(), seconds: timeout.as_secs_f64() }
        })??;
        let listing = Arc::new(Listing {
            key: server.config.cache_key(),
            server_name: implementation.as_ref().map(|i| i.name.clone()).unwrap_or_default(),
            server_version: implementation.as_ref().map(|i| i.version.clone()).unwrap_or_default(),
            tools,
            resources,
            prompts,
        });
        if let Err(e) = self.cache.store(&server.name, &listing) {
            tracing::warn!(server = server.name, "the server's lists cannot be cached: {e}");
        }
        *server.listing.lock().unwrap_or_else(|e| e.into_inner()) = Some(listing.clone());
        Ok(listing)
    }

    /// The live connection of `server`, opened if there is none or the
    /// one there is closed (the server died); a server that reports
    /// another version than its cached lists is listed again.
    async fn connected(&self, server: &Server, live: &mut Option<Live>) -> Result<Opened, McpClientError> {
        if let Some(open) = live.as_mut() {
            if open.alive() {
                open.last_used = Instant::now();
                return Ok(Opened::of(open));
            }
        }
        if let Some(dead) = live.take() {
            tracing::info!(server = server.name, "the MCP server stopped; starting it again");
            dead.close().await;
        }
        let watcher = Watcher::new(&server.name, self.changed.clone());
        let generation = server.connects.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::info!(server = server.name, "connecting the MCP server");
        let Connected { service, child, stderr } = connect(&server.name, &server.config, watcher).await?;
        let version = service.peer().peer_info().and_then(|i| i.server_info.clone()).map(|i| i.version);
        let cached = server.listing.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let in_flight = Arc::new(AtomicUsize::new(0));
        let open = live.insert(Live { service, child, stderr, last_used: Instant::now(), generation, in_flight });
        let opened = Opened::of(open);
        if cached.is_some_and(|c| c.server_version != version.unwrap_or_default()) {
            // The call goes on with the old lists if listing fails.
            if let Err(e) = self.relist(server, &opened.peer).await {
                tracing::warn!(server = server.name, "listing the server's new version failed: {e}");
            }
        }
        Ok(opened)
    }

    /// Runs one request on `name`'s connection, within its tool time; a
    /// connection that broke is dropped, so the next request opens it again.
    async fn request<T, F, Fut>(&self, name: &str, what: &str, send: F) -> Result<T, McpClientError>
    where
        F: FnOnce(Peer<RoleClient>) -> Fut,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        let server = self.server(name)?;
        let (opened, in_flight) = {
            let mut live = server.live.lock().await;
            let opened = self.connected(server, &mut live).await?;
            // Counted before the lock is let go: the idle closer sees it.
            let in_flight = InFlight::start(&opened.in_flight);
            (opened, in_flight)
        };
        let timeout = server.config.tool_timeout();
        let answer = tokio::time::timeout(timeout, send(opened.peer)).await;
        drop(in_flight);
        let mut live = server.live.lock().await;
        // The connection this request used, if it is still the open one.
        let same = live.as_mut().filter(|l| l.generation == opened.generation);
        let said = opened.stderr.said();
        match answer {
            Ok(Ok(value)) => {
                if let Some(open) = same {
                    open.last_used = Instant::now();
                }
                Ok(value)
            }
            Ok(Err(e)) => {
                if matches!(e, ServiceError::TransportClosed | ServiceError::TransportSend(_)) && same.is_some() {
                    if let Some(broken) = live.take() {
                        broken.close().await;
                    }
                }
                Err(McpClientError::from_service(name, what, e, &said))
            }
            Err(_) => {
                Err(McpClientError::Timeout { server: name.into(), what: what.into(), seconds: timeout.as_secs_f64() })
            }
        }
    }
}

/// What a request needs of an open connection.
struct Opened {
    peer: Peer<RoleClient>,
    generation: usize,
    in_flight: Arc<AtomicUsize>,
    stderr: StderrTail,
}

impl Opened {
    fn of(live: &Live) -> Self {
        Opened {
            peer: live.service.peer().clone(),
            generation: live.generation,
            in_flight: live.in_flight.clone(),
            stderr: live.stderr.clone(),
        }
    }
}

/// Closes the connections unused for longer than their server's idle time.
async fn close_idle(inner: std::sync::Weak<Inner>) {
    let mut tick = tokio::time::interval(IDLE_CHECK);
    loop {
        tick.tick().await;
        let Some(inner) = inner.upgrade() else { return };
        for server in inner.servers.values() {
            // A server being connected (the lock is held) or called (a
            // request is in flight) is not idle.
            let Ok(mut live) = server.live.try_lock() else { continue };
            let idle = live.as_ref().is_some_and(|l| {
                l.in_flight.load(Ordering::SeqCst) == 0 && l.last_used.elapsed() >= server.config.idle_timeout()
            });
            if let Some(idle) = live.take_if(|_| idle) {
                tracing::info!(server = server.name, "disconnecting the idle server");
                idle.close().await;
            }
        }
    }
}

/// Lists a server again when it says its lists changed.
async fn relist_changed(inner: std::sync::Weak<Inner>, mut changes: UnboundedReceiver<String>) {
    while let Some(name) = changes.recv().await {
        let Some(inner) = inner.upgrade() else { return };
        let Ok(server) = inner.server(&name) else { continue };
        let peer = server.live.lock().await.as_mut().and_then(|l| l.alive().then(|| l.service.peer().clone()));
        if let Some(peer) = peer {
            if let Err(e) = inner.relist(server, &peer).await {
                tracing::warn!(server = name, "listing the changed server failed: {e}");
            }
        }
    }
}

/// A runtime on a thread of its own, which blocking callers hand work to.
struct RuntimeThread {
    handle: tokio::runtime::Handle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RuntimeThread {
    fn start() -> Result<Self, McpClientError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("ucp-mcp-client")
            .enable_all()
            .build()
            .map_err(|e| McpClientError::Config(format!("the MCP client's runtime cannot start: {e}")))?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("ucp-mcp-client".into())
            .spawn(move || {
                let _ = runtime.block_on(stopped);
                runtime.shutdown_timeout(Duration::from_secs(2));
            })
            .map_err(|e| McpClientError::Config(format!("the MCP client's thread cannot start: {e}")))?;
        Ok(RuntimeThread { handle, stop: Some(stop), thread: Some(thread) })
    }

    /// Runs `work` on the runtime and waits for it (from any thread, in
    /// an async context or not).
    fn run<T: Send + 'static>(&self, work: impl Future<Output = T> + Send + 'static) -> Result<T, McpClientError> {
        let (done, result) = std::sync::mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = done.send(work.await);
        });
        result.recv().map_err(|_| McpClientError::Config("the MCP client's work stopped unfinished".into()))
    }
}

impl Drop for RuntimeThread {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
