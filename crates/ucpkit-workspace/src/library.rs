//! The store and the documents loaded from it: each document once (engine,
//! sessions, search index), shared by every caller; writing back what
//! changed. Indexing paths into it is in `indexing`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use ucpkit_core::Snapshot;
use ucpkit_core::{BpeTokenizer, Document, Tokenizer};
use ucpkit_engine::Engine;
use ucpkit_search::{load_embedder, ChangedSince, Embedder, SearchConfig, SearchIndex, SyncProgress, SyncReport};
use ucpkit_sessions::{GlobalLimits, SessionHost, SessionLimits};
use ucpkit_store::{DocumentSummary, Part, PooledStore, SessionWrite, Store, StorePool};

use crate::vectors::StoredVectors;
use crate::WorkspaceError;

/// How a library opens its store and the sessions it gives out.
#[derive(Clone)]
pub struct LibraryConfig {
    /// The store directory (`.ucp`); for a store on a database server,
    /// this node's folder for its caches of it (search indexes).
    pub store_dir: PathBuf,
    /// The database server holding the store (`postgres://…`), if not
    /// the SQLite database in `store_dir`.
    pub store_url: Option<String>,
    /// The document callers start in (the store's only one when `None`).
    pub document: Option<String>,
    /// An embedding model directory: hybrid search when set. The vectors
    /// of blocks are kept in the store, so each is embedded once.
    pub model: Option<PathBuf>,
    /// Paths under these folders may be indexed (none by default, as a
    /// server wants); `None` allows any path (a local command line).
    pub allowed_roots: Option<Vec<PathBuf>>,
    /// Limits over all sessions of a document.
    pub limits: GlobalLimits,
    /// Limits of each new session.
    pub session_limits: SessionLimits,
    /// Sessions may not run edit commands, and nothing is indexed.
    pub read_only: bool,
    /// When a document has `limits.max_sessions` open, a new session takes
    /// the place of the one idle longest, if it has been idle at least this
    /// long (a named one is saved first).
    pub evict_idle_after: Duration,
    /// Told how building or catching up a search index goes.
    pub sync_progress: Option<Arc<dyn SyncProgress + Send + Sync>>,
    /// Writes the summaries of `CTX COMPRESS METHOD=SUMMARIZE` (the
    /// extractive summarizer when `None`; an LLM summarizer plugs in here).
    pub summarizer: Option<Arc<dyn ucpkit_context::Summarizer>>,
    /// How many handles (connections) on the store its callers share at
    /// most: calls beyond that wait for one.
    pub store_handles: usize,
    /// Start building the tokenizer's tables in the background when the
    /// library opens, for a caller that will count tokens soon (on by
    /// default). A one-shot call that may count none turns it off: the
    /// tables are then built only if it does, and a two-core machine is
    /// not kept busy for nothing.
    pub warm_tokenizer: bool,
}

/// Default number of store handles a library's callers share.
pub const STORE_HANDLES: usize = 4;

/// How long a call waits for a store handle when all are in use.
const STORE_WAIT: Duration = Duration::from_secs(10);

/// Default idle time after which a session may give its place to a new one.
pub const EVICT_IDLE_AFTER: Duration = Duration::from_secs(30);

impl LibraryConfig {
    /// A configuration over the store at `location` with the default
    /// limits: a store directory, or a database server's URL
    /// (`postgres://…`, its caches then in [`ucpkit_store::node_cache_dir`]).
    pub fn new(location: impl Into<PathBuf>) -> Self {
        let location = location.into();
        let store_url = location.to_str().filter(|l| ucpkit_store::is_store_url(l)).map(str::to_owned);
        LibraryConfig {
            store_dir: store_url.as_deref().map_or(location, ucpkit_store::node_cache_dir),
            store_url,
            document: None,
            model: None,
            allowed_roots: Some(Vec::new()),
            limits: GlobalLimits::default(),
            session_limits: SessionLimits::default(),
            read_only: false,
            evict_idle_after: EVICT_IDLE_AFTER,
            sync_progress: None,
            summarizer: None,
            store_handles: STORE_HANDLES,
            warm_tokenizer: true,
        }
    }
}

/// One loaded document: its engine and sessions, and its search index.
pub struct Workspace {
    name: String,
    traversal: SessionHost,
    pub(crate) index: Arc<SearchIndex>,
    /// What opening the search index did (built, caught up, nothing).
    opened: SyncReport,
    /// What was last written to (or read from) the store.
    pub(crate) saved: Mutex<Saved>,
    /// For a document held in part (a one-shot script on the blocks it
    /// names): what was read, which writes go through
    /// ([`Store::save_part`]). `None` for a whole document.
    pub(crate) part: Option<Part>,
}

impl Workspace {
    /// The document's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The engine and sessions over the document.
    pub fn traversal(&self) -> &SessionHost {
        &self.traversal
    }

    /// The document's search index.
    pub fn index(&self) -> &SearchIndex {
        &self.index
    }

    /// The store revision this copy was last read or saved at, and the
    /// document version that was then: an engine document of another
    /// version holds edits not saved yet.
    pub(crate) fn saved_at(&self) -> (u64, u64) {
        let saved = lock(&self.saved);
        (saved.revision, saved.version)
    }

    /// Notes that the document at version `now` holds what it held at
    /// version `was` (a failed script was undone), so that a save when
    /// `was` was the version last written writes nothing.
    pub(crate) fn note_unchanged(&self, was: u64, now: u64) {
        let _writer = self.traversal.writer();
        let mut saved = lock(&self.saved);
        if saved.version == was && self.traversal.engine().document().version() == now {
            saved.version = now;
        }
    }

    /// What opening the search index did when the document was loaded (or
    /// what catching it up did, when indexing again changed the document).
    pub fn index_opened(&self) -> &SyncReport {
        &self.opened
    }
}

/// The state of a loaded document the store holds.
pub(crate) struct Saved {
    /// The document's version then.
    pub(crate) version: u64,
    /// Its snapshots then.
    pub(crate) snapshots: Vec<Snapshot>,
    /// The store's revision of it: a write is refused when the store's has
    /// moved on (another writer came in between).
    pub(crate) revision: u64,
    /// The store's revision of each open named session's record (0: not
    /// stored yet): a save is refused when another holder saved it since.
    pub(crate) sessions: HashMap<String, u64>,
}

/// The store and the documents loaded from it.
pub struct Library {
    pub(crate) config: LibraryConfig,
    /// The store directory as written in errors (absolute, resolved).
    store_paths: Vec<String>,
    /// Handles on the store: a call takes one, so a long read (a big
    /// document loading) holds up no other caller.
    pub(crate) store: StorePool,
    pub(crate) loaded: Mutex<HashMap<String, Arc<Workspace>>>,
    /// Copies another writer moved the store past, dropped from `loaded`:
    /// the next [`Library::workspace`] brings one up to date from the
    /// store's log of changed blocks instead of reading it whole.
    pub(crate) behind: Mutex<HashMap<String, Arc<Workspace>>>,
    /// Documents this library was asked once to rank from the store alone
    /// ([`Library::ranked_stored`]): asked again, it loads them.
    pub(crate) ranked_from_store: Mutex<HashSet<String>>,
    /// Built on first use; a thread starts building its tables when the
    /// library opens, while the document loads.
    tokenizer: OnceLock<BpeTokenizer>,
    /// Held while a change to agents' memories or plans is checked and
    /// written, so two callers in this process (two MCP clients) cannot
    /// both pass a check the other's write would fail (a cycle, a
    /// duplicate); other processes are caught by the store's revision.
    pub(crate) agent_state: Mutex<()>,
}

impl Library {
    /// A handle on the store, given back when dropped.
    pub(crate) fn store(&self) -> Result<PooledStore, WorkspaceError> {
        Ok(self.store.get()?)
    }
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Library {
    /// Opens the store, creating it when it does not exist. Allowed roots
    /// are resolved now, so a link added later cannot widen them.
    pub fn open(config: LibraryConfig) -> Result<Library, WorkspaceError> {
        let store = match &config.store_url {
            Some(url) => Store::open_url(url, &config.store_dir)?,
            None => Store::open(&config.store_dir)?,
        };
        Library::with_store(config, store)
    }

    /// Opens a store that must exist already (commands that only read). A
    /// database server's store is opened (its tables made) whatever it
    /// holds: reaching the server is what must succeed.
    pub fn open_existing(config: LibraryConfig) -> Result<Library, WorkspaceError> {
        let store = match &config.store_url {
            Some(url) => Store::open_url(url, &config.store_dir)?,
            None => Store::open_existing(&config.store_dir)?,
        };
        Library::with_store(config, store)
    }

    fn with_store(mut config: LibraryConfig, store: Store) -> Result<Library, WorkspaceError> {
        if let Some(roots) = &config.allowed_roots {
            let resolved = roots
                .iter()
                .map(|root| {
                    root.canonicalize()
                        .map_err(|e| WorkspaceError::Path(format!("cannot read {}: {e}", root.display())))
                })
                .collect::<Result<_, _>>()?;
            config.allowed_roots = Some(resolved);
        }
        let mut store_paths: Vec<String> =
            [config.store_dir.canonicalize().ok(), std::path::absolute(&config.store_dir).ok()]
                .into_iter()
                .flatten()
                .map(|p| p.display().to_string())
                .collect();
        // The longest first, so a path is never half replaced.
        store_paths.sort_by_key(|p| std::cmp::Reverse(p.len()));
        store_paths.dedup();
        // The tables take a while to build; the first caller waits for
        // this thread's work instead of repeating it. Where no thread can
        // be started (the process limit is reached), the first caller
        // builds them.
        if config.warm_tokenizer {
            let _ = std::thread::Builder::new().name("tokenizer-warm-up".into()).spawn(|| {
                let _ = BpeTokenizer::default();
            });
        }
        Ok(Library {
            store_paths,
            store: StorePool::new(store, config.store_handles, STORE_WAIT),
            config,
            loaded: Mutex::new(HashMap::new()),
            behind: Mutex::new(HashMap::new()),
            ranked_from_store: Mutex::new(HashSet::new()),
            tokenizer: OnceLock::new(),
            agent_state: Mutex::new(()),
        })
    }

    /// Ends the library of a process about to exit: the store is closed as
    /// usual, but the loaded documents are left to the operating system,
    /// which takes their memory back at once (freeing 750,000 blocks one
    /// by one costs a quarter of a second, for nothing).
    pub fn close_for_exit(self) {
        let Library { store, loaded, behind, .. } = self;
        // Loaded documents' indexes hold the pool too: its connections
        // are closed here, not when the last of them goes.
        store.close_idle();
        drop(store);
        std::mem::forget(loaded);
        std::mem::forget(behind);
    }

    /// The configuration.
    pub fn config(&self) -> &LibraryConfig {
        &self.config
    }

    /// The store's directory (for a store on a database server, this
    /// node's folder for its caches).
    pub fn store_dir(&self) -> &Path {
        &self.config.store_dir
    }

    /// Copies everything this library's store holds into `target`'s,
    /// refusing names it holds already unless `replace`
    /// ([`Store::copy_into`]): a store moved from SQLite to PostgreSQL or
    /// back. `target` must be another library.
    pub fn copy_into(&self, target: &Library, replace: bool) -> Result<ucpkit_store::Copied, WorkspaceError> {
        if std::ptr::eq(self, target) {
            return Err(WorkspaceError::Path("a store cannot be copied into itself".into()));
        }
        let source = self.store()?;
        let mut into = target.store()?;
        Ok(source.copy_into(&mut into, replace)?)
    }

    /// Where the store is, for messages: its directory, or its database's
    /// URL without the password.
    pub fn location(&self) -> String {
        match &self.config.store_url {
            Some(url) => ucpkit_store::redact(url),
            None => self.config.store_dir.display().to_string(),
        }
    }

    /// The exact tokenizer results are counted with (o200k).
    pub fn tokenizer(&self) -> &dyn Tokenizer {
        self.tokenizer.get_or_init(BpeTokenizer::default)
    }

    /// Whether this library holds a loaded copy of document `name` (a
    /// one-shot context from parts of the store loads none).
    pub fn holds(&self, name: &str) -> bool {
        lock(&self.loaded).contains_key(name)
    }

    /// The stored documents.
    pub fn documents(&self) -> Result<Vec<DocumentSummary>, WorkspaceError> {
        Ok(self.store()?.documents()?)
    }

    /// The document callers start in: the configured one, else the store's
    /// only one.
    pub fn default_document(&self) -> Result<String, WorkspaceError> {
        Ok(self.store()?.resolve_name(self.config.document.as_deref())?)
    }

    /// The document `name`, loaded on first use with its search index
    /// (built or caught up when it is missing or behind).
    pub fn workspace(&self, name: &str) -> Result<Arc<Workspace>, WorkspaceError> {
        if let Some(workspace) = lock(&self.loaded).get(name) {
            return Ok(Arc::clone(workspace));
        }
        // Caught up without holding `loaded`: a write to the stale copy
        // holds its `saved` and then takes `loaded`, so the other order
        // here could deadlock (and would stall every other document).
        let behind = lock(&self.behind).remove(name);
        if let Some(caught_up) = behind.and_then(|stale| self.caught_up(&stale)) {
            // Another caller may have loaded it meanwhile: theirs stays.
            let mut loaded = lock(&self.loaded);
            return Ok(Arc::clone(loaded.entry(name.to_owned()).or_insert_with(|| Arc::new(caught_up))));
        }
        let mut loaded = lock(&self.loaded);
        if let Some(workspace) = loaded.get(name) {
            return Ok(Arc::clone(workspace));
        }
        let (doc, snapshots, revision) = {
            let store = self.store()?;
            if !store.documents()?.iter().any(|d| d.name == name) {
                return Err(WorkspaceError::NoDocument(name.to_owned()));
            }
            let (doc, revision) = store.load_with_revision(name)?;
            (doc, store.load_snapshots(name)?, revision)
        };
        let workspace = Arc::new(self.load(doc, snapshots, revision)?);
        loaded.insert(name.to_owned(), Arc::clone(&workspace));
        Ok(workspace)
    }

    pub(crate) fn load(
        &self,
        doc: Document,
        snapshots: Vec<Snapshot>,
        revision: u64,
    ) -> Result<Workspace, WorkspaceError> {
        let (index, opened) = self.open_index(&doc, revision)?;
        Ok(self.assemble(doc, snapshots, revision, Arc::new(index), opened))
    }

    /// A workspace over `doc`, stored at `revision`, with its open index.
    pub(crate) fn assemble(
        &self,
        doc: Document,
        snapshots: Vec<Snapshot>,
        revision: u64,
        index: Arc<SearchIndex>,
        opened: SyncReport,
    ) -> Workspace {
        let name = doc.name().to_owned();
        let version = doc.version();
        let mut traversal =
            SessionHost::with_limits(Engine::with_snapshots(doc, snapshots.clone()), self.config.limits.clone());
        traversal.set_search(index.clone());
        if let Some(summarizer) = &self.config.summarizer {
            traversal.set_summarizer(Arc::clone(summarizer));
        }
        let saved = Mutex::new(Saved { version, snapshots, revision, sessions: HashMap::new() });
        Workspace { name, traversal, index, opened, saved, part: None }
    }

    /// A workspace over the partial document `doc` grown from `part` (the
    /// library does not keep it): its writes are [`Store::save_part`]s,
    /// its index syncs only the changed blocks.
    pub(crate) fn assemble_part(&self, doc: Document, part: Part, index: Arc<SearchIndex>) -> Workspace {
        let revision = part.revision();
        let mut workspace = self.assemble(doc, Vec::new(), revision, index, SyncReport::default());
        workspace.part = Some(part);
        workspace
    }

    /// Opens the search index of `doc`, as the store holds it at
    /// `revision`, building or catching it up: from the store's log of
    /// changed blocks when it reaches back to the index's revision (and
    /// no model is set), else by looking at every block. With a model,
    /// the store's vectors of texts no block holds any more are dropped.
    pub(crate) fn open_index(
        &self,
        doc: &Document,
        revision: u64,
    ) -> Result<(SearchIndex, SyncReport), WorkspaceError> {
        let embedder = self.block_embedder(doc.name())?;
        let dir = ucpkit_search::index_dir(&self.config.store_dir, doc.name());
        let progress: &dyn SyncProgress = match &self.config.sync_progress {
            Some(progress) => progress.as_ref(),
            None => &(),
        };
        let recorded = SearchIndex::recorded_revision(&dir).filter(|&at| at < revision);
        // A log that cannot be read now only costs the look at every block.
        let logged = recorded.and_then(|at| self.store().ok()?.changed_since(doc.name(), at).ok().flatten());
        let changed = match (recorded, &logged) {
            (Some(at), Some((now, blocks))) if *now == revision => Some(ChangedSince { revision: at, blocks }),
            _ => None,
        };
        let (index, report) =
            SearchIndex::open_at(&dir, doc, Some(revision), changed, embedder, SearchConfig::default(), progress)?;
        self.prune_vectors_after(&index, &report, doc, revision);
        Ok((index, report))
    }

    /// The configured model, if any, as it embeds the blocks of document
    /// `document`: the store's vector of a text when it holds one, and
    /// vectors it makes kept there (unless the library is read-only).
    pub(crate) fn block_embedder(&self, document: &str) -> Result<Option<Box<dyn Embedder>>, WorkspaceError> {
        Ok(self.load_model()?.map(|model| self.stored_vectors(model, document)))
    }

    /// The configured model, loaded, if there is one.
    pub(crate) fn load_model(&self) -> Result<Option<Arc<dyn Embedder>>, WorkspaceError> {
        Ok(self.config.model.as_deref().map(load_embedder).transpose()?.map(Arc::from))
    }

    /// `model` embedding the blocks of document `document` as
    /// [`Library::block_embedder`] says.
    pub(crate) fn stored_vectors(&self, model: Arc<dyn Embedder>, document: &str) -> Box<dyn Embedder> {
        Box::new(StoredVectors {
            model: Box::new(model),
            store: self.store.clone(),
            document: document.to_owned(),
            keep: !self.config.read_only,
        })
    }

    /// Makes `workspace` the library's copy of document `name`, written or
    /// read just now: a stale copy set aside for catching up goes.
    pub(crate) fn install(&self, name: &str, workspace: &Arc<Workspace>) {
        lock(&self.loaded).insert(name.to_owned(), Arc::clone(workspace));
        lock(&self.behind).remove(name);
    }

    /// Whether `workspace` is still the library's copy of its document and
    /// the store still holds the revision it was loaded at. A stale copy
    /// (another process wrote the document) is set aside, so the next
    /// [`Library::workspace`] gives the document as the store has it,
    /// brought up to date from the store's log of changed blocks (or read
    /// whole when the log cannot tell): a long-lived holder (an MCP
    /// connection) asks before each call. One small read of the store.
    pub fn is_current(&self, workspace: &Workspace) -> bool {
        // Locks one at a time (a write holds `saved` and then takes `loaded`).
        let held = lock(&workspace.saved).revision;
        let stored = self.store().and_then(|store| Ok(store.revision(workspace.name())?));
        // A store that cannot be read now keeps the copy; the next write says why.
        let fresh = stored.is_err() || stored.ok() == Some(held);
        let mut loaded = lock(&self.loaded);
        let cached = loaded.get(workspace.name()).is_some_and(|w| std::ptr::eq(w.as_ref(), workspace));
        if cached && !fresh {
            let stale = loaded.remove(workspace.name());
            drop(loaded);
            lock(&self.behind).extend(stale.map(|stale| (workspace.name().to_owned(), stale)));
        }
        cached && fresh
    }

    /// Deletes stored document `name` with its snapshots, sessions and
    /// search index; false when there is none of that name.
    pub fn remove(&self, name: &str) -> Result<bool, WorkspaceError> {
        if self.config.read_only {
            return Err(WorkspaceError::ReadOnly(format!("{name:?} cannot be deleted")));
        }
        let removed = self.store()?.delete_document(name)?;
        lock(&self.loaded).remove(name);
        lock(&self.behind).remove(name);
        remove_dir(&ucpkit_search::index_dir(&self.config.store_dir, name))?;
        Ok(removed)
    }

    /// Renames stored document `old` to `new`; its snapshots, sessions and
    /// search index follow. Refused when `new` is taken.
    pub fn rename(&self, old: &str, new: &str) -> Result<(), WorkspaceError> {
        if self.config.read_only {
            return Err(WorkspaceError::ReadOnly(format!("{old:?} cannot be renamed")));
        }
        refuse_agent_state(new)?;
        self.store()?.rename_document(old, new)?;
        lock(&self.loaded).remove(old);
        let mut behind = lock(&self.behind);
        behind.remove(old);
        behind.remove(new);
        drop(behind);
        let (from, to) = (
            ucpkit_search::index_dir(&self.config.store_dir, old),
            ucpkit_search::index_dir(&self.config.store_dir, new),
        );
        // A leftover index under the new name is not this document's; the
        // moved one catches up with the new revision when next opened.
        remove_dir(&to)?;
        if from.exists() {
            std::fs::rename(&from, &to)
                .map_err(|e| WorkspaceError::Path(format!("cannot move the search index to {}: {e}", to.display())))?;
        }
        Ok(())
    }

    /// Writes `document` and its snapshots to the store as they are (in
    /// place of a stored document of that name) and loads it, its search
    /// index brought up to date.
    pub fn store_document(
        &self,
        mut document: Document,
        snapshots: Vec<Snapshot>,
    ) -> Result<Arc<Workspace>, WorkspaceError> {
        if self.config.read_only {
            return Err(WorkspaceError::ReadOnly(format!("{:?} cannot be written", document.name())));
        }
        ucpkit_store::check_document_name(document.name())?;
        refuse_agent_state(document.name())?;
        let revision = { self.store()?.save_with_snapshots(&document, &snapshots)? };
        document.mark_saved();
        let name = document.name().to_owned();
        let workspace = Arc::new(self.load(document, snapshots, revision)?);
        self.install(&name, &workspace);
        Ok(workspace)
    }

    /// The stored document `name` (the default one when `None`), read as it
    /// is: no sessions, no search index, for a call that only looks.
    pub fn read_document(&self, name: Option<&str>) -> Result<Document, WorkspaceError> {
        let store = self.store()?;
        let name = store.resolve_name(name.or(self.config.document.as_deref()))?;
        Ok(store.load_document(&name)?)
    }

    /// `text` with the store's place on the host hidden (for clients of a
    /// server, who have no business knowing it).
    pub fn hide_store_path(&self, text: &str) -> String {
        self.store_paths.iter().fold(text.to_owned(), |text, path| text.replace(path.as_str(), "<store>"))
    }

    /// Saves the document and its snapshots when an edit changed them since
    /// the last save (with a named session's record, in one transaction),
    /// and brings the search index up to date; with a model, the store's
    /// vectors of texts edited away go. Returns whether the document was
    /// written.
    pub(crate) fn write(&self, workspace: &Workspace, session: Option<(&str, &str)>) -> Result<bool, WorkspaceError> {
        // No script is half-way through what is written.
        let writer = workspace.traversal.writer();
        let mut saved = lock(&workspace.saved);
        let engine = workspace.traversal.engine();
        let version = engine.document().version();
        let changes = engine.document().unsaved_changes();
        // Cheap when nothing changed (snapshot texts are shared `Arc`s).
        let changed = version != saved.version || !engine.snapshots().eq(saved.snapshots.iter());
        if !changed && session.is_none() {
            return Ok(false);
        }
        let snapshots: Vec<Snapshot> = if changed { engine.snapshots().cloned().collect() } else { Vec::new() };
        let document = changed.then(|| (engine.document(), snapshots.as_slice()));
        let session = session.map(|(name, record)| SessionWrite {
            name,
            record,
            opened_at: saved.sessions.get(name).copied().unwrap_or(0),
        });
        // Refused, writing nothing, when another writer changed the stored
        // document since this copy was loaded, or the session since it was
        // opened: never a silent overwrite.
        let written = match &workspace.part {
            // A part holds no snapshots: they stay as stored.
            Some(part) => self.store()?.save_part(part, engine.document(), session),
            None => self.store()?.save_checked(&workspace.name, saved.revision, document, session),
        };
        let revision = match written {
            Ok(written) => {
                if let (Some(session), Some(revision)) = (session, written.session) {
                    saved.sessions.insert(session.name.to_owned(), revision);
                }
                written.document
            }
            Err(error) => {
                if matches!(error, ucpkit_store::StoreError::Conflict { .. }) {
                    // The next caller loads the document as it is now.
                    let mut loaded = lock(&self.loaded);
                    if loaded.get(&workspace.name).is_some_and(|w| std::ptr::eq(w.as_ref(), workspace)) {
                        loaded.remove(&workspace.name);
                    }
                }
                return Err(error.into());
            }
        };
        let write = ucpkit_search::Write { from: saved.revision, to: revision };
        saved.revision = revision;
        let mut orphaning = None;
        if changed {
            let report = match (&changes, &workspace.part) {
                (Some(changes), Some(part)) => {
                    workspace.index.sync_part(&part.document(), engine.document(), &changes.blocks, write)?
                }
                (Some(changes), None) => {
                    let report = workspace.index.sync_changed(engine.document(), &changes.blocks, write)?;
                    ucpkit_orchestrator::rank::carry_layout(&workspace.traversal, changes, engine.document());
                    report
                }
                (None, _) => workspace.index.sync_written(engine.document(), write.to)?,
            };
            // A part does not hold every text its document still has.
            if workspace.part.is_none() {
                orphaning = crate::vectors::orphaning_model(&workspace.index, &report);
            }
            saved.version = version;
            saved.snapshots = snapshots;
            drop(engine);
            // The writer lock is held: no edit came in since the save.
            workspace.traversal.mark_saved();
        }
        drop((saved, writer));
        if let Some(model) = orphaning {
            // Read again, with no lock but a reader's held; a copy edited
            // since is saved again, and pruned then.
            let engine = workspace.traversal.engine();
            if engine.document().version() == version {
                let held = crate::vectors::held_keys(engine.document());
                drop(engine);
                self.prune_vectors(&workspace.name, &model, &held, revision);
            }
        }
        Ok(changed)
    }

    /// Saves the document when an edit changed it since the last save, and
    /// brings the search index up to date. Returns whether it wrote.
    pub fn persist(&self, workspace: &Workspace) -> Result<bool, WorkspaceError> {
        self.write(workspace, None)
    }
}

/// Refuses a corpus named like agents' memories or plans
/// ([`ucpkit_store::AGENT_STATE_DOCUMENTS`]): their tools would read its
/// blocks as memories or nodes, and `memory forget` delete them.
pub(crate) fn refuse_agent_state(name: &str) -> Result<(), WorkspaceError> {
    if ucpkit_store::is_agent_state(name) {
        return Err(WorkspaceError::Invalid(format!(
            "{name:?} is where UCP keeps agents' memories or plans: give the corpus another name (--name)"
        )));
    }
    Ok(())
}

/// Removes a directory and what it holds; one that is not there is fine.
fn remove_dir(dir: &Path) -> Result<(), WorkspaceError> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(WorkspaceError::Path(format!("cannot remove {}: {e}", dir.display())))
        }
        _ => Ok(()),
    }
}
