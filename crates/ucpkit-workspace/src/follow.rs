//! A long-running server's loaded documents kept current: when its store
//! announces writes (a store on a database server, written by other
//! nodes), the copies they touch are brought up to date at once, so the
//! next call finds them current instead of catching up then. A copy is
//! brought up to date by reading the blocks the writes since changed (the
//! store's log says which), not the whole document.

use std::sync::Arc;
use std::time::Duration;

use ucpkit_search::Write;

use crate::library::{lock, Workspace};
use crate::{Library, WorkspaceError};

/// How long the listener waits before looking again whether its library
/// is still in use (and, while it cannot reach the store, between tries).
const TICK: Duration = Duration::from_secs(1);

impl Library {
    /// Starts a thread that reads again every loaded document another
    /// node writes, as the write commits. False, starting nothing, for a
    /// store that announces no writes (SQLite: its readers look before
    /// each call, as every library also does). The thread ends soon after
    /// the library is dropped; it never holds the store while it waits or
    /// reconnects.
    pub fn follow_changes(self: &Arc<Self>) -> Result<bool, WorkspaceError> {
        let Some(mut changes) = self.store()?.changes()? else { return Ok(false) };
        let library = Arc::downgrade(self);
        std::thread::Builder::new()
            .name("ucp-follow".into())
            .spawn(move || loop {
                // An error: the store cannot be reached now (the listener
                // waited before saying so); calls meanwhile look for
                // themselves.
                let heard = changes.next(TICK);
                let Some(library) = library.upgrade() else { return };
                match heard {
                    Ok(Some(names)) => names.iter().for_each(|name| library.refresh(name)),
                    // Reconnected: what was announced meanwhile is unknown.
                    Ok(None) => {
                        let names: Vec<String> = lock(&library.loaded).keys().cloned().collect();
                        names.iter().for_each(|name| library.refresh(name));
                    }
                    Err(_) => {}
                }
            })
            .map_err(|e| WorkspaceError::Path(format!("cannot start the change listener: {e}")))?;
        Ok(true)
    }

    /// `stale`, a whole copy the store moved past, brought to the store's
    /// revision from its log of changed blocks, with its search index
    /// synced for those blocks alone. `None` when that cannot be done
    /// exactly: the log does not reach back, the copy holds changes it did
    /// not write, or the store cannot be read now (the caller then reads
    /// the document whole, and a store that cannot be read says why).
    pub(crate) fn caught_up(&self, stale: &Workspace) -> Option<Workspace> {
        if stale.part.is_some() {
            return None;
        }
        let (since, version) = stale.saved_at();
        let up = {
            let engine = stale.traversal().engine();
            let copy = engine.document();
            if copy.version() != version {
                return None;
            }
            self.store().ok()?.catch_up(copy, since).ok()??
        };
        let snapshots = self.store().ok()?.load_snapshots(stale.name()).ok()?;
        let index = Arc::clone(&stale.index);
        let synced = index.sync_changed(&up.document, &up.changed, Write { from: since, to: up.revision }).ok()?;
        self.prune_vectors_after(&index, &synced, &up.document, up.revision);
        Some(self.assemble(up.document, snapshots, up.revision, index, synced))
    }

    /// Brings document `name` up to date when a copy of it is loaded and
    /// the store holds a newer one. A copy that cannot be read now stays
    /// until a call asks for it (and is told why).
    fn refresh(&self, name: &str) {
        let loaded = lock(&self.loaded).get(name).cloned();
        if let Some(workspace) = loaded {
            if !self.is_current(&workspace) {
                let _ = self.workspace(name);
            }
        }
    }
}
