//! UCP's agent over the Agent Client Protocol (ACP v1, JSON-RPC on stdio),
//! so that editors (Zed and every ACP client) drive it.
//!
//! This crate only translates, on the `agent-client-protocol` SDK:
//! `session/new`, `session/load`, `session/resume`, `session/list` and
//! `session/close` open and list `session`s (a registry `Connection`
//! over the client's `cwd`, the client's MCP servers joined to the
//! configured ones, a transcript in the store that `ucp agent --session`
//! shares); `session/prompt` runs one `turn` of `ucpkit-agent`'s loop on a
//! thread, its events sent as `session/update`s (`updates`); the
//! registry's gate asks the `permission` supervisor before a call that
//! changes something or runs a command, which asks the client;
//! `session/cancel` stops the turn.

mod files;
mod listing;
mod permission;
mod session;
mod turn;
mod updates;

use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, CloseSessionRequest, CloseSessionResponse, Implementation,
    InitializeRequest, InitializeResponse, ListSessionsRequest, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, McpServer, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    ResumeSessionRequest, ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities,
    SessionListCapabilities, SessionResumeCapabilities,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{on_receive_notification, on_receive_request, Agent, Client, JsonRpcResponse, Stdio};
use ucpkit_mcp_client::ServersConfig;
use ucpkit_registry::agents::AgentSetup;
use ucpkit_registry::parts::agent::AgentSpec;
use ucpkit_registry::parts::llm::Provider;
use ucpkit_registry::{Library, ToolOffer};

use session::Sessions;

/// What `ucp acp` serves with.
pub struct AcpConfig {
    /// The store: transcripts, documents, memory, plans.
    pub library: Arc<Library>,
    /// The model configuration (sub-agents are built from it).
    pub setup: Arc<AgentSetup>,
    /// The model each turn calls.
    pub provider: Arc<dyn Provider>,
    /// How the loop runs (budget, steps).
    pub spec: AgentSpec,
    /// The tools the model may call (`None`: all offered).
    pub allowed: Option<Vec<String>>,
    /// The offer every session starts from (its root is the session's
    /// `cwd`; read-only, protected paths, passed variables ...).
    pub offer: ToolOffer,
    /// The configured MCP servers; a session adds its client's.
    pub servers: ServersConfig,
    /// Where the servers' lists are cached (the store folder).
    pub cache: Option<PathBuf>,
    /// Makes the guard of a session in a folder (its rules are the user's
    /// and the folder's own `.ucp/config.toml`'s); an error refuses the
    /// session with it.
    pub guard: GuardFactory,
}

/// Makes a session's guard for its folder.
pub type GuardFactory = Arc<dyn Fn(&std::path::Path) -> Result<ucpkit_registry::SharedGuard, String> + Send + Sync>;

/// Why serving stopped.
#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    /// The runtime could not start.
    #[error("the ACP server could not start: {0}")]
    Start(#[from] std::io::Error),
    /// The connection failed (not a client that went away: that ends it
    /// cleanly).
    #[error("the ACP connection failed: {0}")]
    Connection(String),
}

/// Serves ACP on stdin and stdout until the client closes them; every turn
/// still running is then cancelled and waited for (briefly).
pub fn serve_stdio(config: AcpConfig) -> Result<(), AcpError> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let sessions = Arc::new(Sessions::new(config));
    let served = runtime.block_on(serve(sessions.clone()));
    sessions.close_all();
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    served
}

/// The version of UCP, as `initialize` names the agent.
const VERSION: &str = env!("CARGO_PKG_VERSION");

async fn serve(sessions: Arc<Sessions>) -> Result<(), AcpError> {
    let (initialize, new, load, resume) = (sessions.clone(), sessions.clone(), sessions.clone(), sessions.clone());
    let (list, close, prompt, cancel) = (sessions.clone(), sessions.clone(), sessions.clone(), sessions);
    Agent
        .v1()
        .name("ucp")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                initialize.set_client(request.client_capabilities.clone());
                let version = request.protocol_version.min(ProtocolVersion::V1);
                responder.respond(
                    InitializeResponse::new(version)
                        .agent_capabilities(
                            AgentCapabilities::new()
                                .load_session(true)
                                .prompt_capabilities(PromptCapabilities::new().embedded_context(true))
                                .mcp_capabilities(McpCapabilities::new().http(true))
                                .session_capabilities(
                                    SessionCapabilities::new()
                                        .list(SessionListCapabilities::new())
                                        .resume(SessionResumeCapabilities::new())
                                        .close(SessionCloseCapabilities::new()),
                                ),
                        )
                        .agent_info(Implementation::new("ucp", VERSION).title("UCP")),
                )
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx| {
                let opening = Opening { id: None, cwd: request.cwd, servers: request.mcp_servers, replay: false };
                open_session(new.clone(), opening, responder, cx, NewSessionResponse::new)
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| {
                let id = Some(request.session_id.0.to_string());
                let opening = Opening { id, cwd: request.cwd, servers: request.mcp_servers, replay: true };
                open_session(load.clone(), opening, responder, cx, |_| LoadSessionResponse::new())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ResumeSessionRequest, responder, cx| {
                let id = Some(request.session_id.0.to_string());
                let opening = Opening { id, cwd: request.cwd, servers: request.mcp_servers, replay: false };
                open_session(resume.clone(), opening, responder, cx, |_| ResumeSessionResponse::new())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ListSessionsRequest, responder, cx| {
                let library = list.library().clone();
                cx.spawn(async move {
                    let cursor = request.cursor;
                    let listed =
                        blocking(move || listing::list(&library, request.cwd.as_deref(), cursor.as_deref())).await;
                    responder.respond_with_result(listed)
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CloseSessionRequest, responder, cx| {
                let (sessions, id) = (close.clone(), request.session_id.0.to_string());
                // Its MCP servers may take a moment to stop.
                cx.spawn(async move {
                    blocking(move || {
                        sessions.close(&id);
                        Ok(())
                    })
                    .await?;
                    responder.respond(CloseSessionResponse::new())
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, _cx| match prompt.get(&request.session_id.0) {
                Some(session) => session.prompt(request.prompt, responder),
                None => responder.respond_with_error(session::unknown(&request.session_id.0)),
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                if let Some(session) = cancel.get(&notification.session_id.0) {
                    session.cancel();
                }
                Ok(())
            },
            on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await
        .map_err(|e| AcpError::Connection(e.to_string()))
}

/// How a session is opened: new (no `id`), or the stored one `id` taken
/// up, its conversation replayed first when `replay`.
struct Opening {
    id: Option<String>,
    cwd: PathBuf,
    servers: Vec<McpServer>,
    replay: bool,
}

/// Opens a session off the dispatch loop (its servers may take a while),
/// answers with `answer` of its id, then tells the client its commands and
/// what of its setup was not used.
fn open_session<R: JsonRpcResponse + Send + 'static>(
    sessions: Arc<Sessions>,
    opening: Opening,
    responder: Responder<R>,
    cx: ConnectionTo<Client>,
    answer: fn(String) -> R,
) -> Result<(), agent_client_protocol::Error> {
    cx.clone().spawn(async move {
        let Opening { id, cwd, servers, replay } = opening;
        match blocking(move || sessions.open(id, cwd, servers, &cx)).await {
            Ok(session) => {
                if replay {
                    session.replay();
                }
                responder.respond(answer(session.id()))?;
                session.announce();
                Ok(())
            }
            Err(e) => responder.respond_with_error(e),
        }
    })
}

/// Runs `work` (store and process work) off the connection's threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, agent_client_protocol::Error> + Send + 'static,
) -> Result<T, agent_client_protocol::Error> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(agent_client_protocol::Error::internal_error().data(e.to_string())))
}
