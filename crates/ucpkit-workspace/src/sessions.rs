//! Agent sessions in a loaded document: new ones, named ones that are
//! saved to the store and taken up again, room made for new ones when a
//! document is full, and [`SessionHandle`], a session that follows the
//! store across calls.

use std::sync::Arc;

use ucpkit_sessions::{AgentError, Capabilities, Session, SessionConfig, SessionId};

use crate::library::{lock, Library, Workspace};
use crate::WorkspaceError;

/// What a session is opened with, beyond the library's defaults.
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    /// Its context window budget in tokens (a stored session's is changed).
    pub budget: Option<usize>,
    /// The task its relevance is measured against (a stored session's is
    /// replaced).
    pub task: Option<String>,
    /// It may not run edit commands, even in a library that allows them
    /// (a read-only agent's session).
    pub read_only: bool,
}

/// A session held across calls that follows the store: when another
/// process wrote its document, or it was closed to make room for another
/// client's, [`SessionHandle::current`] takes it up again on the document
/// as the store has it now — a named session as last saved, an unnamed
/// one afresh. Every front end that keeps a session between calls holds
/// one (the shell, a Python `Session`, a tool connection).
pub struct SessionHandle {
    workspace: Arc<Workspace>,
    id: SessionId,
    name: Option<String>,
    options: NewSession,
}

/// Why [`SessionHandle::current`] took its session up again, if it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Followed {
    /// The session goes on as it was.
    Same,
    /// Another writer changed the document: the session is on its new version.
    Changed,
    /// The session had been closed to make room: it is open again.
    Reopened,
}

impl SessionHandle {
    /// The named session of `workspace` as stored (or a new named one), or
    /// a new unnamed one, as a handle.
    pub fn open(
        library: &Library,
        workspace: Arc<Workspace>,
        name: Option<&str>,
        options: &NewSession,
    ) -> Result<SessionHandle, WorkspaceError> {
        let id = Self::start(library, &workspace, name, options)?;
        Ok(SessionHandle { workspace, id, name: name.map(str::to_owned), options: options.clone() })
    }

    fn start(
        library: &Library,
        workspace: &Workspace,
        name: Option<&str>,
        options: &NewSession,
    ) -> Result<SessionId, WorkspaceError> {
        match name {
            Some(name) => library.open_named(workspace, name, options),
            None => library.create_session(workspace, options),
        }
    }

    /// The session on its document as the store has it now (see the type).
    pub fn current(&mut self, library: &Library) -> Result<Followed, WorkspaceError> {
        let followed = if !library.is_current(&self.workspace) {
            // The stale copy's session goes unsaved: the store has newer.
            let _ = self.workspace.traversal().close_session(self.id);
            self.workspace = library.workspace(self.workspace.name())?;
            Followed::Changed
        } else if self.workspace.traversal().with_session(self.id, |_| ()).is_err() {
            Followed::Reopened
        } else {
            return Ok(Followed::Same);
        };
        self.id = Self::start(library, &self.workspace, self.name.as_deref(), &self.options)?;
        Ok(followed)
    }

    /// Its document (the copy it runs in).
    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.workspace
    }

    /// The session's id in its document.
    pub fn id(&self) -> SessionId {
        self.id
    }

    /// Its name, when it is a named session.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Saves a named session (and the document, when an edit changed it)
    /// and closes it; closes an unnamed one.
    pub fn close(self, library: &Library) -> Result<(), WorkspaceError> {
        library.close_session(&self.workspace, self.id)
    }
}

impl Library {
    /// A new unnamed session in `workspace` (making room, when the document
    /// is full, by closing the session idle longest).
    pub fn create_session(&self, workspace: &Workspace, options: &NewSession) -> Result<SessionId, WorkspaceError> {
        self.new_session(workspace, None, options)
    }

    fn new_session(
        &self,
        workspace: &Workspace,
        name: Option<&str>,
        options: &NewSession,
    ) -> Result<SessionId, WorkspaceError> {
        let mut limits = self.config.session_limits.clone();
        if let Some(budget) = options.budget {
            limits.max_context_tokens = budget;
        }
        self.making_room(workspace, || {
            workspace.traversal().create_session(SessionConfig {
                name: name.map(str::to_owned),
                task: options.task.clone(),
                limits: limits.clone(),
                capabilities: self.capabilities(options.read_only),
                ..SessionConfig::default()
            })
        })
    }

    /// The named session of `workspace` as last saved, opened again (with
    /// `options` applied); a new one when it was never saved. Refused while
    /// another caller holds it.
    pub fn open_named(
        &self,
        workspace: &Workspace,
        name: &str,
        options: &NewSession,
    ) -> Result<SessionId, WorkspaceError> {
        if name.trim().is_empty() {
            return Err(WorkspaceError::Invalid("session names cannot be empty".into()));
        }
        if workspace.traversal().find_session(name).is_some() {
            return Err(WorkspaceError::SessionInUse(name.to_owned()));
        }
        let stored = self.store()?.load_session(workspace.name(), name)?;
        lock(&workspace.saved).sessions.insert(name.to_owned(), stored.as_ref().map_or(0, |s| s.revision));
        let Some(stored) = stored else { return self.new_session(workspace, Some(name), options) };
        let mut record: Session = serde_json::from_str(&stored.record)
            .map_err(|e| WorkspaceError::Damaged(format!("session {name:?} of {}: {e}", workspace.name())))?;
        record.set_capabilities(self.capabilities(options.read_only));
        let id = self.making_room(workspace, || workspace.traversal().restore_session(record.clone()))?;
        let traversal = workspace.traversal();
        if let Some(budget) = options.budget {
            traversal.set_budget(id, budget)?;
        }
        if let Some(task) = &options.task {
            traversal.set_task(id, Some(task))?;
        }
        Ok(id)
    }

    /// Writes a named session to the store, with the document in the same
    /// transaction when an edit changed it, so another caller can take it
    /// up. An unnamed session only saves the document. Returns whether the
    /// document was written.
    pub fn save_session(&self, workspace: &Workspace, session: SessionId) -> Result<bool, WorkspaceError> {
        let record = workspace.traversal().with_session(session, Session::clone)?;
        let Some(name) = record.name().map(str::to_owned) else { return self.persist(workspace) };
        let json = serde_json::to_string(&record).map_err(|e| WorkspaceError::Damaged(e.to_string()))?;
        self.write(workspace, Some((&name, &json)))
    }

    /// The named sessions stored for every document: (document, session,
    /// last saved in ms since the epoch), by document then name.
    pub fn named_sessions(&self) -> Result<Vec<(String, String, i64)>, WorkspaceError> {
        let store = self.store()?;
        let mut all = Vec::new();
        for document in store.documents()? {
            let sessions = store.sessions(&document.name)?;
            all.extend(sessions.into_iter().map(|(name, ms)| (document.name.clone(), name, ms)));
        }
        Ok(all)
    }

    /// Saves a named session and closes it; closes an unnamed one.
    pub fn close_session(&self, workspace: &Workspace, session: SessionId) -> Result<(), WorkspaceError> {
        let saved = self.save_session(workspace, session);
        let name = workspace.traversal().with_session(session, |s| s.name().map(str::to_owned))?;
        workspace.traversal().close_session(session)?;
        if let Some(name) = name {
            lock(&workspace.saved).sessions.remove(&name);
        }
        saved.map(|_| ())
    }

    /// Runs `open`; when the document has `max_sessions` open, closes the
    /// session idle longest (at least `evict_idle_after`) and runs it again.
    fn making_room(
        &self,
        workspace: &Workspace,
        open: impl Fn() -> Result<SessionId, AgentError>,
    ) -> Result<SessionId, WorkspaceError> {
        match open() {
            Err(AgentError::MaxSessionsReached(_)) if self.evict_idlest(workspace) => Ok(open()?),
            opened => Ok(opened?),
        }
    }

    /// Closes the session of `workspace` idle longest, if one has been idle
    /// at least `evict_idle_after`; a named one is saved first, so its
    /// caller (or another) takes it up as it was. Returns whether one went.
    fn evict_idlest(&self, workspace: &Workspace) -> bool {
        let now = ucpkit_core::now_ms();
        let idle_ms = self.config.evict_idle_after.as_millis() as i64;
        let idlest = workspace
            .traversal()
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
        workspace.traversal().close_session(idlest.id).is_ok()
    }

    fn capabilities(&self, read_only: bool) -> Capabilities {
        if self.config.read_only || read_only {
            Capabilities::read_only()
        } else {
            Capabilities::default()
        }
    }
}
