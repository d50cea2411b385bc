//! Documents kept by commands rather than by ingest: the agents' state
//! (memory, plans) lives in documents a crate above writes through these
//! (`ucpkit-memory`), under the store's durability and conflict rules.

use std::sync::MutexGuard;

use ucpkit_core::{BlockId, Document};
use ucpkit_ucl::Command;

use crate::library::lock;
use crate::{Library, NewSession, WorkspaceError};

impl Library {
    /// Serializes changes to agent-state documents within this process
    /// (across processes, the store's revision check does): a change reads
    /// the document and writes it while holding this.
    pub fn state_writes(&self) -> MutexGuard<'_, ()> {
        lock(&self.agent_state)
    }

    /// Runs `commands` on document `name` in a session of their own (run
    /// again on the new version, up to `attempts` times in all, when
    /// another writer came in); a failed command is an error. Returns the
    /// workspace they ran in and the first block they created.
    pub fn run_commands(
        &self,
        name: &str,
        commands: &[Command],
        attempts: usize,
    ) -> Result<(std::sync::Arc<crate::Workspace>, Option<BlockId>), WorkspaceError> {
        let script = ucpkit_ucl::print_commands(commands);
        let (workspace, session, run) =
            self.run_script_replayed(name, None, &NewSession::default(), &script, attempts)?;
        let _ = workspace.traversal().close_session(session);
        if let Some(failure) = run.failure() {
            return Err(WorkspaceError::Invalid(failure));
        }
        let created = run.report.steps.iter().find_map(|step| match step.result.as_ref().ok().map(|s| &s.reply) {
            Some(ucpkit_sessions::Reply::Edit { outcome }) => outcome.created.first().copied(),
            _ => None,
        });
        Ok((workspace, created))
    }

    /// Whether the store holds document `name`.
    pub fn holds_stored(&self, name: &str) -> Result<bool, WorkspaceError> {
        Ok(self.holds(name) || self.store()?.documents()?.iter().any(|d| d.name == name))
    }

    /// Creates document `name`, empty, unless the store holds it (another
    /// process creating it at the same time is fine: one of them does).
    pub fn create_if_absent(&self, name: &str) -> Result<(), WorkspaceError> {
        if self.config.read_only {
            return Err(WorkspaceError::ReadOnly(format!("{name:?} cannot be written")));
        }
        crate::replayed(crate::STATE_TRIES, || {
            if self.holds_stored(name)? {
                return Ok(());
            }
            let mut store = self.store()?;
            let expected = store.revision(name)?;
            store.save_checked(name, expected, Some((&Document::new(name), &[])), None)?;
            Ok(())
        })
        .map_err(|e| match e.is_conflict() {
            true => WorkspaceError::Invalid(format!("{name:?} could not be created: other writers kept coming in")),
            false => e,
        })
    }
}
