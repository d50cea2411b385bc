//! A long-running server's loaded documents kept current: when its store
//! announces writes (a store on a database server, written by other
//! nodes), the copies they touch are read again at once, so the next call
//! finds them current instead of reading them then.

use std::sync::Arc;
use std::time::Duration;

use crate::library::lock;
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
        let Some(mut changes) = lock(&self.store).changes()? else { return Ok(false) };
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

    /// Reads document `name` again when a copy of it is loaded and the
    /// store holds a newer one. A copy that cannot be read now stays until
    /// a call asks for it (and is told why).
    fn refresh(&self, name: &str) {
        let loaded = lock(&self.loaded).get(name).cloned();
        if let Some(workspace) = loaded {
            if !self.is_current(&workspace) {
                let _ = self.workspace(name);
            }
        }
    }
}
