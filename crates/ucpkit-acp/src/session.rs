//! The sessions of one client: each a registry `Connection` over the
//! client's `cwd` with the client's MCP servers, the supervisor that asks
//! the client's permission, and a transcript in the store under the
//! session's id (the name `ucp agent --session` takes, so either front end
//! takes up the other's session).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use agent_client_protocol::v1::schema::{ClientCapabilities, McpServer, PromptResponse};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use ucpkit_mcp_client::{registry_tools, McpServers, ServerConfig};
use ucpkit_registry::agents::ConnectionTools;
use ucpkit_registry::parts::agent::Transcript;
use ucpkit_registry::parts::files::{broad_folder, Buffers};
use ucpkit_registry::vocabulary::BpeTokenizer;
use ucpkit_registry::{Connection, SharedBuffers, ToolOffer};

use crate::files::ClientFiles;
use crate::permission::ClientSupervisor;
use crate::updates::Updates;
use crate::AcpConfig;

/// The open sessions, by id.
pub(crate) struct Sessions {
    config: Arc<AcpConfig>,
    tokenizer: Arc<OnceLock<BpeTokenizer>>,
    /// What the client said it can do (at `initialize`).
    client: Mutex<ClientCapabilities>,
    open: Mutex<HashMap<String, Arc<Session>>>,
}

/// The error for a session id that is not open.
pub(crate) fn unknown(id: &str) -> Error {
    Error::invalid_params().data(format!("no session {id:?} is open: call session/new or session/load first"))
}

impl Sessions {
    /// No session open yet.
    pub(crate) fn new(config: AcpConfig) -> Self {
        let tokenizer = Arc::default();
        Sessions { config: Arc::new(config), tokenizer, client: Mutex::default(), open: Mutex::new(HashMap::new()) }
    }

    /// The store the sessions live in.
    pub(crate) fn library(&self) -> &Arc<ucpkit_registry::Library> {
        &self.config.library
    }

    /// Keeps what the client can do.
    pub(crate) fn set_client(&self, capabilities: ClientCapabilities) {
        *self.client.lock().unwrap_or_else(|e| e.into_inner()) = capabilities;
    }

    /// Whether the client reads and writes files for the agent.
    fn client_files(&self) -> bool {
        let client = self.client.lock().unwrap_or_else(|e| e.into_inner());
        client.fs.read_text_file && client.fs.write_text_file
    }

    fn open_sessions(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The open session `id`.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.open_sessions().get(id).cloned()
    }

    /// Opens a session in `cwd` with the client's `servers`: new (`id`
    /// `None`), or the stored transcript `id` taken up again.
    pub(crate) fn open(
        &self,
        id: Option<String>,
        cwd: PathBuf,
        servers: Vec<McpServer>,
        client: &ConnectionTo<Client>,
    ) -> Result<Arc<Session>, Error> {
        if !cwd.is_absolute() {
            return Err(Error::invalid_params().data(format!("cwd must be an absolute path, not {}", cwd.display())));
        }
        let library = &self.config.library;
        let (id, transcript, revision) = match id {
            None => (new_id(library, &self.open_sessions())?, Transcript::default(), 0),
            Some(id) => {
                if self.get(&id).is_some_and(|open| open.is_running()) {
                    return Err(Error::invalid_request().data(format!("session {id:?} is running a turn")));
                }
                let stored = library
                    .load_transcript(&id)
                    .map_err(internal)?
                    .ok_or_else(|| Error::invalid_params().data(format!("no session {id:?} is stored")))?;
                let transcript: Transcript = serde_json::from_str(&stored.body)
                    .map_err(|e| internal(format!("the stored session {id:?} cannot be read: {e}")))?;
                (id, transcript, stored.revision)
            }
        };
        // The tokenizer the turns count with, loaded before the first one.
        self.tokenizer.get_or_init(BpeTokenizer::default);
        let mut notes = Vec::new();
        let mut config = self.config.servers.clone();
        for server in servers {
            match client_server(server) {
                Ok((name, server)) => {
                    if config.servers.contains_key(&name) {
                        notes.push(format!("the editor's MCP server {name:?} is used instead of the configured one"));
                    }
                    if let Err(e) = config.add(&name, server) {
                        notes.push(format!("the MCP server {name:?} from the editor is not used: {e}"));
                    }
                }
                Err(note) => notes.push(note),
            }
        }
        let servers = Arc::new(McpServers::new(&config, self.config.cache.as_deref()).map_err(internal)?);
        let (others, listed) = registry_tools(&servers);
        notes.extend(listed);
        // As `ucp agent`: in / or the home folder the coding tools are off.
        let root = match broad_folder(&cwd) {
            Some(what) => {
                notes.push(format!("{} is {what}: the coding tools, rules and skills are off", cwd.display()));
                None
            }
            None => Some(cwd.clone()),
        };
        let updates = Updates::new(client.clone(), &id);
        let buffers: Option<Arc<dyn Buffers>> = match self.client_files() {
            true => Some(Arc::new(ClientFiles(updates.clone()))),
            false => None,
        };
        // The folder's own store and configuration are never written.
        let mut protected = self.config.offer.protected.clone();
        protected.push(cwd.join(ucpkit_registry::vocabulary::DEFAULT_STORE_DIR));
        let guard = (self.config.guard)(&cwd).map_err(|e| Error::invalid_params().data(e))?;
        let offer = ToolOffer {
            root,
            guard: Some(guard),
            protected,
            buffers: buffers.map(SharedBuffers),
            agents: Some(self.config.setup.clone()),
            only: self.config.allowed.clone(),
            others,
            ..self.config.offer.clone()
        };
        let connection = Connection::new(library.clone(), Arc::new(offer));
        let supervisor = ClientSupervisor::new(updates.clone());
        connection.set_supervisor(supervisor.clone());
        let mut transcript = transcript;
        transcript.cwd = Some(cwd.display().to_string());
        let session = Arc::new(Session {
            id: id.clone(),
            config: self.config.clone(),
            tokenizer: self.tokenizer.clone(),
            host: ConnectionTools(connection),
            supervisor,
            updates,
            notes,
            _servers: servers,
            state: Mutex::new(State { transcript, revision, turn: None, running: false }),
        });
        if let Some(old) = self.open_sessions().insert(id, session.clone()) {
            old.cancel();
        }
        Ok(session)
    }

    /// Closes session `id`: its turn cancelled, its servers stopped.
    pub(crate) fn close(&self, id: &str) {
        if let Some(session) = self.open_sessions().remove(id) {
            session.cancel();
        }
    }

    /// Closes every session and waits (up to 2 s) for their turns to end.
    pub(crate) fn close_all(&self) {
        let sessions: Vec<Arc<Session>> = self.open_sessions().drain().map(|(_, s)| s).collect();
        sessions.iter().for_each(|s| s.cancel());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while sessions.iter().any(|s| s.is_running()) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// A new session's id: `acp-`, the time and a count, unique among the
/// open sessions and the stored ones.
fn new_id(library: &ucpkit_registry::Library, open: &HashMap<String, Arc<Session>>) -> Result<String, Error> {
    let now = ucpkit_registry::vocabulary::now_ms();
    for n in 0..1000 {
        let id = if n == 0 { format!("acp-{now}") } else { format!("acp-{now}-{n}") };
        if !open.contains_key(&id) && library.load_transcript(&id).map_err(internal)?.is_none() {
            return Ok(id);
        }
    }
    Err(internal("no free session id"))
}

/// An internal error with its reason.
pub(crate) fn internal(reason: impl std::fmt::Display) -> Error {
    Error::internal_error().data(reason.to_string())
}

/// A client's MCP server as a configured one, or why it is not used.
fn client_server(server: McpServer) -> Result<(String, ServerConfig), String> {
    match server {
        McpServer::Stdio(stdio) => {
            let mut config = ServerConfig::stdio(stdio.command.display().to_string(), stdio.args);
            config.env = stdio.env.into_iter().map(|v| (v.name, v.value)).collect();
            Ok((stdio.name, config))
        }
        McpServer::Http(http) => {
            let mut config = ServerConfig::http(http.url);
            config.http_headers = http.headers.into_iter().map(|h| (h.name, h.value)).collect();
            Ok((http.name, config))
        }
        McpServer::Sse(sse) => Err(format!(
            "the MCP server {:?} from the editor is not used: UCP reaches servers over stdio or streamable HTTP, \
             not SSE",
            sse.name
        )),
        other => Err(format!("an MCP server from the editor is not used: its transport is unknown here ({other:?})")),
    }
}

/// The answer to one `session/prompt`, until it is given.
pub(crate) type Answer = Arc<Mutex<Option<Responder<PromptResponse>>>>;

/// Takes the responder out of `answer` (`None`: answered already).
pub(crate) fn take(answer: &Answer) -> Option<Responder<PromptResponse>> {
    answer.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// A session's transcript and its turn.
pub(crate) struct State {
    /// The conversation so far.
    pub(crate) transcript: Transcript,
    /// The stored revision it was read or last saved at.
    pub(crate) revision: u64,
    /// The latest prompt's answer.
    pub(crate) turn: Option<Answer>,
    /// A turn's thread is running (a cancelled one may still be
    /// finishing its current step; the next turn waits for it).
    pub(crate) running: bool,
}

/// One session.
pub(crate) struct Session {
    id: String,
    config: Arc<AcpConfig>,
    /// Counts the conversation (built once for the client's sessions).
    tokenizer: Arc<OnceLock<BpeTokenizer>>,
    pub(crate) host: ConnectionTools,
    pub(crate) supervisor: Arc<ClientSupervisor>,
    pub(crate) updates: Updates,
    notes: Vec<String>,
    /// Its MCP servers, stopped when the session goes.
    _servers: Arc<McpServers>,
    pub(crate) state: Mutex<State>,
}

impl Session {
    /// Its id.
    pub(crate) fn id(&self) -> String {
        self.id.clone()
    }

    /// What the server serves with.
    pub(crate) fn config(&self) -> &AcpConfig {
        &self.config
    }

    /// The tokenizer the loop counts with.
    pub(crate) fn tokenizer(&self) -> &BpeTokenizer {
        self.tokenizer.get_or_init(BpeTokenizer::default)
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a turn is running.
    pub(crate) fn is_running(&self) -> bool {
        self.state().running
    }

    /// Whether a prompt still waits for its answer.
    pub(crate) fn is_answering(&self) -> bool {
        self.state().turn.as_ref().is_some_and(|answer| answer.lock().unwrap_or_else(|e| e.into_inner()).is_some())
    }

    /// Tells the client what it should know once the session is open: the
    /// slash commands, and what of its setup was not used (a server that
    /// could not start ...).
    pub(crate) fn announce(&self) {
        self.updates.commands(&crate::turn::COMMANDS);
        for note in &self.notes {
            self.updates.message(&format!("ucp: {note}\n"));
        }
    }

    /// Sends the conversation so far as updates (for `session/load`).
    pub(crate) fn replay(&self) {
        let transcript = self.state().transcript.clone();
        self.updates.replay(&transcript, self.host.0.offer());
    }
}
