//! `SessionHost`: one document shared by many isolated sessions, with
//! engine-wide limits, a rate limit, and data derived from the document
//! cached per version.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard};
use web_time::Instant;

use ucpkit_context::{ExtractiveSummarizer, Summarizer};
use ucpkit_core::{BpeTokenizer, Document, Tokenizer};
use ucpkit_engine::Engine;
use ucpkit_ucl::{parse_script, Command};

use crate::error::AgentError;
use crate::metrics::Metrics;
use crate::navigate::Indexes;
use crate::safety::{GlobalLimits, TokenBucket};
use crate::session::{Session, SessionConfig, SessionId, SessionInfo, SessionState};
use crate::Step;
use ucpkit_search::RagProvider;

/// The sessions of an engine, by id and by name.
#[derive(Default)]
struct Registry {
    by_id: HashMap<SessionId, Arc<Mutex<Session>>>,
    by_name: HashMap<String, SessionId>,
    /// Open sessions that are not internal: what `max_sessions` bounds.
    clients: usize,
}

impl Registry {
    /// Forgets a session that was removed from `by_id`.
    fn forget(&mut self, session: &Session) {
        if let Some(name) = &session.name {
            self.by_name.remove(name);
        }
        if !session.internal {
            self.clients -= 1;
        }
    }
}

/// Refuses a closed or expired session, expiring one idle past its timeout.
fn check_live(session: &mut Session, id: SessionId, now: i64) -> Result<(), AgentError> {
    match session.state {
        SessionState::Closed => Err(AgentError::SessionClosed(id.to_string())),
        SessionState::Expired => Err(AgentError::SessionExpired(id.to_string())),
        _ if now - session.last_active_ms > session.limits.session_timeout_ms => {
            session.state = SessionState::Expired;
            Err(AgentError::SessionExpired(id.to_string()))
        }
        _ => Ok(()),
    }
}

/// A value derived from the document, with the version it was derived from.
type Derived = (u64, Arc<dyn Any + Send + Sync>);

/// Runs sessions over one document.
///
/// ```
/// use ucpkit_core::Document;
/// use ucpkit_engine::Engine;
/// use ucpkit_sessions::{SessionHost, SessionConfig};
///
/// let traversal = SessionHost::new(Engine::new(Document::new("empty")));
/// let session = traversal.create_session(SessionConfig::default()).unwrap();
/// let report = traversal.run_script(session, "GOTO blk_000000000000000000000000\nCTX STATS").unwrap();
/// assert!(report.ok());
/// println!("{report}");
/// ```
pub struct SessionHost {
    pub(crate) engine: RwLock<Engine>,
    /// Held by a script that edits, and by a lone edit command, for their
    /// whole run: a failed script's edits are undone by restoring the state
    /// before it, which must hold no other writer's edit.
    writer: Mutex<()>,
    indexes: Mutex<Option<(u64, Arc<Indexes>)>>,
    /// Data callers derive from the document, by type, with the version it
    /// was derived from.
    derived: Mutex<HashMap<TypeId, Derived>>,
    pub(crate) search: Option<Arc<dyn RagProvider>>,
    /// Made on first use: a session that only edits never waits for its
    /// tables.
    tokenizer: std::sync::OnceLock<Arc<dyn Tokenizer>>,
    pub(crate) summarizer: Arc<dyn Summarizer>,
    pub(crate) limits: GlobalLimits,
    sessions: RwLock<Registry>,
    rate: TokenBucket,
    pub(crate) clock: fn() -> i64,
    pub(crate) context_blocks: AtomicUsize,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl SessionHost {
    /// An engine over `engine`'s document with default limits, no search.
    pub fn new(engine: Engine) -> Self {
        SessionHost::with_limits(engine, GlobalLimits::default())
    }

    /// An engine with the given global limits.
    pub fn with_limits(engine: Engine, limits: GlobalLimits) -> Self {
        let now = ucpkit_core::now_ms();
        SessionHost {
            engine: RwLock::new(engine),
            writer: Mutex::new(()),
            indexes: Mutex::new(None),
            derived: Mutex::new(HashMap::new()),
            search: None,
            tokenizer: std::sync::OnceLock::new(),
            summarizer: Arc::new(ExtractiveSummarizer),
            rate: TokenBucket::new(limits.max_ops_per_second, now),
            limits,
            sessions: RwLock::new(Registry::default()),
            clock: ucpkit_core::now_ms,
            context_blocks: AtomicUsize::new(0),
        }
    }

    /// Uses `provider` for SEARCH.
    pub fn set_search(&mut self, provider: Arc<dyn RagProvider>) {
        self.search = Some(provider);
        // Derived data may hold what the provider measured.
        lock(&self.derived).clear();
    }

    /// Uses `summarizer` for CTX COMPRESS METHOD=SUMMARIZE.
    pub fn set_summarizer(&mut self, summarizer: Arc<dyn Summarizer>) {
        self.summarizer = summarizer;
    }

    /// Uses `clock` (ms since the Unix epoch) for expiry, recency, breakers
    /// and the rate limit.
    pub fn set_clock(&mut self, clock: fn() -> i64) {
        self.clock = clock;
        self.rate = TokenBucket::new(self.limits.max_ops_per_second, clock());
    }

    /// The search provider, if one is configured.
    pub fn search_provider(&self) -> Option<&Arc<dyn RagProvider>> {
        self.search.as_ref()
    }

    /// The global limits.
    pub fn limits(&self) -> &GlobalLimits {
        &self.limits
    }

    /// Read access to the engine (document and snapshots).
    pub fn engine(&self) -> RwLockReadGuard<'_, Engine> {
        self.engine.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Records that the document as it stands is what the store holds
    /// (see [`Engine::mark_saved`]).
    pub fn mark_saved(&self) {
        self.engine.write().unwrap_or_else(|e| e.into_inner()).mark_saved();
    }

    /// The engine, consuming the traversal (to save its document).
    pub fn into_engine(self) -> Engine {
        self.engine.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    /// `T` derived from `doc` (the current document) by `build`, built
    /// once per document version and kept until the version or the search
    /// provider changes: what a caller such as the orchestrator computes
    /// once for many questions (a ranking layout).
    pub fn derived<T: Any + Send + Sync>(&self, doc: &Document, build: impl FnOnce() -> T) -> Arc<T> {
        let key = TypeId::of::<T>();
        if let Some((version, value)) = lock(&self.derived).get(&key) {
            if *version == doc.version() {
                if let Ok(value) = Arc::clone(value).downcast::<T>() {
                    return value;
                }
            }
        }
        // Built without the lock: another caller may build it too, once.
        let value = Arc::new(build());
        lock(&self.derived).insert(key, (doc.version(), Arc::clone(&value) as Arc<dyn Any + Send + Sync>));
        value
    }

    /// The value of type `T` kept for `doc`'s version, if one was built or
    /// given; builds none.
    pub fn derived_kept<T: Any + Send + Sync>(&self, doc: &Document) -> Option<Arc<T>> {
        self.derived_at(doc.version())
    }

    /// The value of type `T` kept for document version `version` (an
    /// earlier one, say, that a write left behind), if it is the one kept;
    /// builds none.
    pub fn derived_at<T: Any + Send + Sync>(&self, version: u64) -> Option<Arc<T>> {
        let derived = lock(&self.derived);
        let (kept, value) = derived.get(&TypeId::of::<T>())?;
        (*kept == version).then(|| Arc::clone(value).downcast::<T>().ok()).flatten()
    }

    /// The value of type `T` kept for `doc`'s version, removed; builds none
    /// (and leaves a value of another version where it is).
    pub fn take_derived<T: Any + Send + Sync>(&self, doc: &Document) -> Option<Arc<T>> {
        let mut derived = lock(&self.derived);
        let key = TypeId::of::<T>();
        if derived.get(&key).is_none_or(|(kept, _)| *kept != doc.version()) {
            return None;
        }
        derived.remove(&key).and_then(|(_, value)| value.downcast::<T>().ok())
    }

    /// Gives `value` as what [`SessionHost::derived`] builds for `doc`'s
    /// version (one computed before, and kept elsewhere).
    pub fn provide_derived<T: Any + Send + Sync>(&self, doc: &Document, value: Arc<T>) {
        lock(&self.derived).insert(TypeId::of::<T>(), (doc.version(), value as Arc<dyn Any + Send + Sync>));
    }

    /// The tokenizer windows count with.
    pub fn tokenizer(&self) -> &Arc<dyn Tokenizer> {
        self.tokenizer.get_or_init(|| Arc::new(BpeTokenizer::default()))
    }

    /// The summarizer of CTX COMPRESS METHOD=SUMMARIZE.
    pub fn summarizer(&self) -> &Arc<dyn Summarizer> {
        &self.summarizer
    }

    /// The clock (ms since the Unix epoch) sessions and limits read.
    pub fn clock(&self) -> fn() -> i64 {
        self.clock
    }

    /// Indexes of the current document version, built on first use.
    pub(crate) fn indexes(&self, doc: &Document) -> Arc<Indexes> {
        let mut cached = lock(&self.indexes);
        match &*cached {
            Some((version, indexes)) if *version == doc.version() => Arc::clone(indexes),
            _ => {
                let indexes = Arc::new(Indexes::build(doc));
                *cached = Some((doc.version(), Arc::clone(&indexes)));
                indexes
            }
        }
    }

    fn registry(&self) -> std::sync::RwLockReadGuard<'_, Registry> {
        self.sessions.read().unwrap_or_else(|e| e.into_inner())
    }

    fn registry_mut(&self) -> std::sync::RwLockWriteGuard<'_, Registry> {
        self.sessions.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens a session. Expired sessions are reaped first.
    pub fn create_session(&self, config: SessionConfig) -> Result<SessionId, AgentError> {
        let session = Session::new(config, (self.clock)());
        self.insert(session)
    }

    /// Opens a stored session again, exactly as it was saved.
    pub fn restore_session(&self, mut session: Session) -> Result<SessionId, AgentError> {
        // Only clients' sessions are saved.
        session.internal = false;
        if matches!(session.state, SessionState::Expired | SessionState::Closed) {
            session.state = SessionState::Active;
        }
        session.last_active_ms = (self.clock)();
        self.insert(session)
    }

    fn insert(&self, session: Session) -> Result<SessionId, AgentError> {
        self.reap_expired();
        let mut registry = self.registry_mut();
        if !session.internal && registry.clients >= self.limits.max_sessions {
            return Err(AgentError::MaxSessionsReached(self.limits.max_sessions));
        }
        if let Some(name) = &session.name {
            if registry.by_name.contains_key(name) {
                return Err(AgentError::SessionExists(name.clone()));
            }
            registry.by_name.insert(name.clone(), session.id);
        }
        let id = session.id;
        if !session.internal {
            registry.clients += 1;
        }
        self.context_blocks.fetch_add(session.window.len(), Ordering::Relaxed);
        registry.by_id.insert(id, Arc::new(Mutex::new(session)));
        Ok(id)
    }

    /// The id of the session with this name.
    pub fn find_session(&self, name: &str) -> Option<SessionId> {
        self.registry().by_name.get(name).copied()
    }

    /// Calls `f` with a session.
    pub fn with_session<T>(&self, id: SessionId, f: impl FnOnce(&Session) -> T) -> Result<T, AgentError> {
        let session = self.session(id)?;
        let session = lock(&session);
        Ok(f(&session))
    }

    fn session(&self, id: SessionId) -> Result<Arc<Mutex<Session>>, AgentError> {
        self.registry().by_id.get(&id).cloned().ok_or_else(|| AgentError::SessionNotFound(id.to_string()))
    }

    /// Closes and forgets a session, returning it as it ended.
    pub fn close_session(&self, id: SessionId) -> Result<Session, AgentError> {
        let mut registry = self.registry_mut();
        let session = registry.by_id.remove(&id).ok_or_else(|| AgentError::SessionNotFound(id.to_string()))?;
        let mut session = lock(&session);
        registry.forget(&session);
        session.state = SessionState::Closed;
        self.context_blocks.fetch_sub(session.window.len(), Ordering::Relaxed);
        Ok(session.clone())
    }

    /// Sessions, oldest first.
    pub fn list_sessions(&self) -> Vec<SessionInfo> {
        let mut list: Vec<SessionInfo> = self.registry().by_id.values().map(|s| lock(s).info()).collect();
        list.sort_by_key(|s| (s.created_ms, s.id));
        list
    }

    /// Drops sessions idle past their timeout; returns how many.
    pub fn reap_expired(&self) -> usize {
        let now = (self.clock)();
        let mut registry = self.registry_mut();
        let expired: Vec<SessionId> = registry
            .by_id
            .iter()
            .filter(|(_, s)| {
                let s = lock(s);
                now - s.last_active_ms > s.limits.session_timeout_ms
            })
            .map(|(id, _)| *id)
            .collect();
        for id in &expired {
            if let Some(session) = registry.by_id.remove(id) {
                let mut session = lock(&session);
                session.state = SessionState::Expired;
                self.context_blocks.fetch_sub(session.window.len(), Ordering::Relaxed);
                registry.forget(&session);
            }
        }
        expired.len()
    }

    /// Changes a session's context token budget, shrinking its window at
    /// once if it no longer fits.
    pub fn set_budget(&self, id: SessionId, max_tokens: usize) -> Result<(), AgentError> {
        let session = self.session(id)?;
        let mut session = lock(&session);
        let engine = self.engine();
        let env = ucpkit_context::Env {
            doc: engine.document(),
            tokenizer: &**self.tokenizer(),
            summarizer: &*self.summarizer,
            now_ms: (self.clock)(),
        };
        session.limits.max_context_tokens = max_tokens;
        let blocks = session.limits.max_context_blocks;
        let before = session.window.len();
        session.window.set_limits(&env, max_tokens, blocks);
        self.context_blocks.fetch_sub(before - session.window.len(), Ordering::Relaxed);
        Ok(())
    }

    /// Sets (or clears) the task a session's relevance is measured against.
    pub fn set_task(&self, id: SessionId, task: Option<&str>) -> Result<(), AgentError> {
        let session = self.session(id)?;
        lock(&session).window.set_task_text(task);
        Ok(())
    }

    /// Charges a session for a search made outside UCL (rate limit, its
    /// search budget, activity) and makes `hits` its last results (for
    /// `CTX ADD RESULTS`), as a SEARCH for `query` would; the query becomes
    /// its task when it has none.
    pub fn record_search(&self, id: SessionId, query: &str, hits: &[ucpkit_core::BlockId]) -> Result<(), AgentError> {
        let now = (self.clock)();
        let session = self.open_session(id, now)?;
        let mut session = lock(&session);
        check_live(&mut session, id, now)?;
        session.usage.check(&session.limits.budget, 0, 1)?;
        session.usage.search_ops += 1;
        session.last_active_ms = now;
        Metrics::bump(&session.metrics.searches, 1);
        session.last_results = hits.to_vec();
        if session.window.task().is_none() {
            session.window.set_task_text(Some(query));
        }
        Ok(())
    }

    /// Charges the engine-wide rate limit for one request a client makes
    /// outside its sessions (a context build, whose sub-agents' sessions
    /// are the engine's own and are not charged command by command).
    pub fn admit(&self) -> Result<(), AgentError> {
        self.rate.take((self.clock)())
    }

    /// A session for one operation at `now`, after the rate limit, which
    /// only clients' sessions are charged: the engine's own work is paid
    /// for by the request that started it ([`SessionHost::admit`]).
    fn open_session(&self, id: SessionId, now: i64) -> Result<Arc<Mutex<Session>>, AgentError> {
        let session = self.session(id)?;
        if !lock(&session).internal {
            self.rate.take(now)?;
        }
        Ok(session)
    }

    /// Runs one command in a session. A failed command changes nothing.
    pub fn execute(&self, id: SessionId, command: &Command) -> Result<Step, AgentError> {
        let _writer = command.is_edit().then(|| lock(&self.writer));
        self.execute_held(id, command)
    }

    /// [`SessionHost::execute`] for a caller that holds the writer lock
    /// when `command` edits.
    fn execute_held(&self, id: SessionId, command: &Command) -> Result<Step, AgentError> {
        let now = (self.clock)();
        let session = self.open_session(id, now)?;
        let mut session = lock(&session);
        check_live(&mut session, id, now)?;
        session.breaker.allow(&self.limits, now)?;
        let started = Instant::now();
        let blocks_before = session.window.len();
        let result = self.dispatch(&mut session, command, now);
        let elapsed = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        session.breaker.record(result.is_ok(), &self.limits, now);
        session.last_active_ms = now;
        Metrics::bump(&session.metrics.commands, 1);
        Metrics::bump(&session.metrics.execution_us, elapsed);
        if result.is_err() {
            Metrics::bump(&session.metrics.errors, 1);
        }
        let after = session.window.len();
        if after >= blocks_before {
            self.context_blocks.fetch_add(after - blocks_before, Ordering::Relaxed);
        } else {
            self.context_blocks.fetch_sub(blocks_before - after, Ordering::Relaxed);
        }
        result
    }

    /// Parses and runs a script in a session, stopping at the first failed
    /// command. The script's edits follow the engine's one rule
    /// ([`Engine::begin_script`]): when a command fails, or the script
    /// leaves a transaction open, they are undone back to its last COMMIT
    /// or to before it; the session's own changes (cursor, window, results)
    /// stand. A script that edits runs alone among writers.
    pub fn run_script(&self, id: SessionId, source: &str) -> Result<crate::ScriptReport, AgentError> {
        let script = parse_script(source).map_err(|errors| {
            let (line, column) = errors.0.first().map_or((1, 1), |first| (first.line, first.column));
            AgentError::Parse { rendered: errors.render(source), line, column }
        })?;
        let edits = script.document.commands.iter().any(Command::is_edit);
        let _writer = edits.then(|| lock(&self.writer));
        // Closes the script as failed if anything below panics, so a half-run
        // script's edits never stay in the document for a later save.
        let mut scope = edits.then(|| ScriptScope::open(&self.engine));
        let mut report = crate::ScriptReport::default();
        let lines = ucpkit_ucl::LineIndex::new(source);
        for (command, span) in script.document.commands.iter().zip(&script.spans) {
            let (line, column) = lines.line_column(source, span.start);
            let text = source[span.clone()].trim().to_owned();
            let result = self.execute_held(id, command);
            let failed = result.is_err();
            report.steps.push(crate::ScriptStep { line, column, text, result });
            if failed {
                break;
            }
        }
        if let Some(scope) = scope.take() {
            report.end = Some(scope.finish(report.ok()));
        }
        Ok(report)
    }

    /// Holds off every script and edit command of this document until the
    /// guard drops: what a caller takes to read a state no script is
    /// half-way through (to save it, say).
    pub fn writer(&self) -> MutexGuard<'_, ()> {
        lock(&self.writer)
    }
}

/// An open script of the engine: finished as failed when dropped unfinished.
struct ScriptScope<'a> {
    engine: &'a RwLock<Engine>,
    open: bool,
}

impl<'a> ScriptScope<'a> {
    fn open(engine: &'a RwLock<Engine>) -> Self {
        engine.write().unwrap_or_else(|e| e.into_inner()).begin_script();
        ScriptScope { engine, open: true }
    }

    fn finish(mut self, succeeded: bool) -> ucpkit_engine::ScriptEnd {
        self.open = false;
        self.engine.write().unwrap_or_else(|e| e.into_inner()).finish_script(succeeded)
    }
}

impl Drop for ScriptScope<'_> {
    fn drop(&mut self) {
        if self.open {
            self.engine.write().unwrap_or_else(|e| e.into_inner()).finish_script(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_core::{Block, BlockId, Content, Metadata};

    #[test]
    fn derived_values_are_kept_per_document_version_and_can_be_given() {
        let host = SessionHost::new(Engine::new(Document::new("d")));
        let engine = host.engine();
        let doc = engine.document();
        assert!(host.derived_kept::<String>(doc).is_none(), "nothing built yet");
        assert_eq!(*host.derived(doc, || "built".to_owned()), "built");
        assert_eq!(*host.derived(doc, || "again".to_owned()), "built", "built once per version");
        assert_eq!(host.derived_kept::<String>(doc).as_deref().map(String::as_str), Some("built"));
        host.provide_derived(doc, Arc::new("given".to_owned()));
        assert_eq!(host.derived_kept::<String>(doc).as_deref().map(String::as_str), Some("given"));
        assert!(host.derived_kept::<u32>(doc).is_none(), "kept by type");
        let version = doc.version();

        // Another version of the document: what was kept is not its.
        let mut edited = doc.clone();
        drop(engine);
        let content = Content::markdown("new");
        let block = Block::new(Block::derive_id(&content, None, "", 0), content, Metadata::default());
        edited.append_child(BlockId::ROOT, block).unwrap();
        assert!(host.derived_kept::<String>(&edited).is_none());
        assert_eq!(host.derived_at::<String>(version).as_deref().map(String::as_str), Some("given"));
        assert!(host.derived_at::<String>(edited.version()).is_none());
        assert!(host.take_derived::<String>(&edited).is_none(), "another version's is left");
        let engine = host.engine();
        assert_eq!(host.take_derived::<String>(engine.document()).as_deref().map(String::as_str), Some("given"));
        assert!(host.derived_kept::<String>(engine.document()).is_none(), "taken");
    }
}
