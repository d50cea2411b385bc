//! The documents a server serves: the store, each document loaded once
//! (engine, sessions, search index) and shared by every client, and the
//! folders clients may ask to index.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use ucm_core::{BpeTokenizer, Document, Tokenizer};
use ucm_engine::{Engine, Snapshot};
use ucp_agent::{
    AgentError, AgentTraversal, Capabilities, GlobalLimits, SessionConfig, SessionId, SessionLimits, SessionRecord,
};
use ucp_search::{load_embedder, SearchConfig, SearchIndex};
use ucp_store::{DocumentSummary, Store};

use crate::McpError;

/// How a server opens its store and the sessions it gives clients.
#[derive(Debug, Clone)]
pub struct LibraryConfig {
    /// The store directory (`.ucp`).
    pub store_dir: PathBuf,
    /// The document clients start in (the store's only one when `None`).
    pub document: Option<String>,
    /// An embedding model directory: hybrid search when set.
    pub model: Option<PathBuf>,
    /// Files and folders under these paths may be indexed by clients.
    pub allowed_roots: Vec<PathBuf>,
    /// Limits over all sessions of a document.
    pub limits: GlobalLimits,
    /// Limits of each client's session.
    pub session_limits: SessionLimits,
    /// Sessions may not run edit commands.
    pub read_only: bool,
    /// When a document has `limits.max_sessions` open, a new client's
    /// session takes the place of the one idle longest, if it has been
    /// idle at least this long (a named one is saved first).
    pub evict_idle_after: Duration,
}

/// Default idle time after which a session may give its place to a new one.
pub const EVICT_IDLE_AFTER: Duration = Duration::from_secs(30);

impl LibraryConfig {
    /// A configuration over `store_dir` with the defaults of SPEC §5.
    pub fn new(store_dir: impl Into<PathBuf>) -> Self {
        LibraryConfig {
            store_dir: store_dir.into(),
            document: None,
            model: None,
            allowed_roots: Vec::new(),
            limits: GlobalLimits::default(),
            session_limits: SessionLimits::default(),
            read_only: false,
            evict_idle_after: EVICT_IDLE_AFTER,
        }
    }
}

/// One loaded document: its engine and sessions, and its search index.
pub struct Workspace {
    name: String,
    traversal: AgentTraversal,
    index: Arc<SearchIndex>,
    /// The version and snapshots last written to the store.
    saved: Mutex<(u64, Vec<Snapshot>)>,
}

impl Workspace {
    /// The document's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The engine and sessions over the document.
    pub fn traversal(&self) -> &AgentTraversal {
        &self.traversal
    }
}

/// The store and the documents loaded from it.
pub struct Library {
    config: LibraryConfig,
    /// The store directory as written in errors (absolute, resolved).
    store_paths: Vec<String>,
    store: Mutex<Store>,
    loaded: Mutex<HashMap<String, Arc<Workspace>>>,
    tokenizer: BpeTokenizer,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Library {
    /// Opens (or creates) the store. The allowed roots are resolved now, so
    /// a link added later cannot widen them.
    pub fn open(mut config: LibraryConfig) -> Result<Library, McpError> {
        let store = Store::open(&config.store_dir)?;
        config.allowed_roots = config
            .allowed_roots
            .iter()
            .map(|root| root.canonicalize().map_err(|e| McpError::Path(format!("cannot read {}: {e}", root.display()))))
            .collect::<Result<_, _>>()?;
        let mut store_paths: Vec<String> =
            [config.store_dir.canonicalize().ok(), std::path::absolute(&config.store_dir).ok()]
                .into_iter()
                .flatten()
                .map(|p| p.display().to_string())
                .collect();
        // The longest first, so a path is never half replaced.
        store_paths.sort_by_key(|p| std::cmp::Reverse(p.len()));
        store_paths.dedup();
        Ok(Library {
            store_paths,
            config,
            store: Mutex::new(store),
            loaded: Mutex::new(HashMap::new()),
            tokenizer: BpeTokenizer::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &LibraryConfig {
        &self.config
    }

    /// The exact tokenizer results are counted with (o200k).
    pub fn tokenizer(&self) -> &dyn Tokenizer {
        &self.tokenizer
    }

    /// The stored documents.
    pub fn documents(&self) -> Result<Vec<DocumentSummary>, McpError> {
        Ok(lock(&self.store).documents()?)
    }

    /// The document clients start in.
    pub fn default_document(&self) -> Result<String, McpError> {
        Ok(lock(&self.store).resolve_name(self.config.document.as_deref())?)
    }

    /// The document `name`, loaded on first use with its search index
    /// (built or caught up when it is missing or behind).
    pub fn workspace(&self, name: &str) -> Result<Arc<Workspace>, McpError> {
        let mut loaded = lock(&self.loaded);
        if let Some(workspace) = loaded.get(name) {
            return Ok(Arc::clone(workspace));
        }
        let (doc, snapshots) = {
            let store = lock(&self.store);
            if !store.documents()?.iter().any(|d| d.name == name) {
                return Err(McpError::NoDocument(name.to_owned()));
            }
            (store.load_document(name)?, store.load_snapshots(name)?)
        };
        let workspace = Arc::new(self.load(doc, snapshots)?);
        loaded.insert(name.to_owned(), Arc::clone(&workspace));
        Ok(workspace)
    }

    fn load(&self, doc: Document, snapshots: Vec<Snapshot>) -> Result<Workspace, McpError> {
        let embedder = self.config.model.as_deref().map(load_embedder).transpose()?;
        let dir = ucp_search::index_dir(&self.config.store_dir, doc.name());
        let (index, _) = SearchIndex::open(&dir, &doc, embedder, SearchConfig::default(), &())?;
        let index = Arc::new(index);
        let name = doc.name().to_owned();
        let version = doc.version();
        let mut traversal =
            AgentTraversal::with_limits(Engine::with_snapshots(doc, snapshots.clone()), self.config.limits.clone());
        traversal.set_search(index.clone());
        Ok(Workspace { name, traversal, index, saved: Mutex::new((version, snapshots)) })
    }

    /// Ingests `path` (which must lie under an allowed root) as the document
    /// `name` and saves it unless the stored one is the same; returns the
    /// workspace and whether anything changed. A read-only server writes
    /// nothing: it only opens a stored document whose content is the same.
    pub fn index_path(&self, path: &Path, name: Option<&str>) -> Result<(Arc<Workspace>, bool), McpError> {
        let not_allowed = || McpError::NotAllowed(path.display().to_string());
        let resolved = path.canonicalize().map_err(|_| not_allowed())?;
        if !self.config.allowed_roots.iter().any(|root| resolved.starts_with(root)) {
            return Err(not_allowed());
        }
        let name = name.map_or_else(|| ucp_ingest::default_name(&resolved), str::to_owned);
        ucp_store::check_document_name(&name)?;
        let ingested =
            ucp_ingest::ingest(std::slice::from_ref(&resolved), &name, &ucp_ingest::IngestOptions::default(), &())
                // The client named `path`: the error says that, not where it resolved to.
                .map_err(|e| {
                    McpError::Path(e.to_string().replace(&resolved.display().to_string(), &path.display().to_string()))
                })?;
        let changed = {
            let mut store = lock(&self.store);
            let stored =
                store.documents()?.iter().any(|d| d.name == name).then(|| store.load_document(&name)).transpose()?;
            let exists = stored.is_some();
            let changed = !stored.is_some_and(|stored| stored.same_content(&ingested.document));
            if changed && self.config.read_only {
                let why = if exists { "differs from the stored document" } else { "is not stored as the document" };
                return Err(McpError::ReadOnly(format!(
                    "{} {why} {name:?}, and nothing may be indexed (open a stored document by name instead)",
                    path.display()
                )));
            }
            if changed {
                store.save_document(&ingested.document)?;
            }
            changed
        };
        if changed {
            // Clients already in the old version keep it until they open again.
            let workspace = Arc::new(self.load(ingested.document, Vec::new())?);
            lock(&self.loaded).insert(name, Arc::clone(&workspace));
            Ok((workspace, true))
        } else {
            Ok((self.workspace(&name)?, false))
        }
    }

    /// The text a client is shown for `error`: the full error goes to the
    /// server's log, and the store's place on the host is hidden.
    pub fn client_message(&self, error: &McpError) -> String {
        let text = error.to_string();
        tracing::info!("request failed: {text}");
        self.store_paths.iter().fold(text, |text, path| text.replace(path.as_str(), "<store>"))
    }

    /// A new session for one client in `workspace` (making room, when the
    /// document is full, by closing the session idle longest).
    pub fn create_session(&self, workspace: &Workspace, name: Option<&str>) -> Result<SessionId, McpError> {
        self.making_room(workspace, || {
            workspace.traversal.create_session(SessionConfig {
                name: name.map(str::to_owned),
                limits: self.config.session_limits.clone(),
                capabilities: self.capabilities(),
                ..SessionConfig::default()
            })
        })
    }

    /// Runs `open`; when the document has `max_sessions` open, closes the
    /// session idle longest (at least `evict_idle_after`) and runs it again.
    fn making_room(
        &self,
        workspace: &Workspace,
        open: impl Fn() -> Result<SessionId, AgentError>,
    ) -> Result<SessionId, McpError> {
        match open() {
            Err(AgentError::MaxSessionsReached(_)) if self.evict_idlest(workspace) => Ok(open()?),
            opened => Ok(opened?),
        }
    }

    /// Closes the session of `workspace` idle longest, if one has been idle
    /// at least `evict_idle_after`; a named one is saved first, so its
    /// client (or another) takes it up as it was. Returns whether one went.
    fn evict_idlest(&self, workspace: &Workspace) -> bool {
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
        let idle_ms = self.config.evict_idle_after.as_millis() as i64;
        let idlest = workspace
            .traversal
            .list_sessions()
            .into_iter()
            .filter(|s| now - s.last_active_ms >= idle_ms)
            .min_by_key(|s| s.last_active_ms);
        let Some(idlest) = idlest else { return false };
        if idlest.name.is_some() {
            if let Err(e) = self.save_session(workspace, idlest.id) {
                tracing::warn!("session {} not saved, so not closed to make room: {e}", idlest.id);
                return false;
            }
        }
        tracing::info!(
            "closed session {} (idle {} ms) to make room for a new one",
            idlest.id,
            now - idlest.last_active_ms
        );
        workspace.traversal.close_session(idlest.id).is_ok()
    }

    fn capabilities(&self) -> Capabilities {
        if self.config.read_only {
            Capabilities::read_only()
        } else {
            Capabilities::default()
        }
    }

    /// The named session of `workspace` as last saved, opened again; a new
    /// one when it was never saved. Refused while another client holds it.
    pub fn open_named(&self, workspace: &Workspace, name: &str) -> Result<SessionId, McpError> {
        if workspace.traversal.find_session(name).is_some() {
            return Err(McpError::SessionInUse(name.to_owned()));
        }
        let stored = lock(&self.store).load_session(&workspace.name, name)?;
        match stored {
            None => self.create_session(workspace, Some(name)),
            Some(json) => {
                let mut record: SessionRecord =
                    serde_json::from_str(&json).map_err(|e| McpError::Damaged(format!("session {name:?}: {e}")))?;
                record.capabilities = self.capabilities();
                self.making_room(workspace, || workspace.traversal.restore_session(record.clone()))
            }
        }
    }

    /// Writes a named session to the store (the document too, when an
    /// edit changed it), so another connection can take it up.
    pub fn save_session(&self, workspace: &Workspace, session: SessionId) -> Result<(), McpError> {
        let record = workspace.traversal.with_session(session, |s| s.record())?;
        let Some(name) = record.name.clone() else { return Ok(()) };
        let json = serde_json::to_string(&record).map_err(|e| McpError::Damaged(e.to_string()))?;
        self.persist(workspace)?;
        lock(&self.store).save_session(&workspace.name, &name, &json, None)?;
        Ok(())
    }

    /// Saves the document and its snapshots when an edit changed them since
    /// the last save, and brings the search index up to date. Returns
    /// whether it wrote.
    pub fn persist(&self, workspace: &Workspace) -> Result<bool, McpError> {
        let mut saved = lock(&workspace.saved);
        let engine = workspace.traversal.engine();
        let version = engine.document().version();
        // Cheap when nothing changed (snapshot texts are shared `Arc`s).
        if version == saved.0 && engine.snapshots().eq(saved.1.iter()) {
            return Ok(false);
        }
        let snapshots: Vec<Snapshot> = engine.snapshots().cloned().collect();
        lock(&self.store).save_with_snapshots(engine.document(), &snapshots)?;
        workspace.index.sync(engine.document())?;
        *saved = (version, snapshots);
        Ok(true)
    }
}
