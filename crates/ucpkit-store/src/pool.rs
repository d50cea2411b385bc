//! Handles on one store shared by a server's callers: each call takes a
//! handle (its own connection) and gives it back, so a call that reads a
//! big document does not hold up the small reads of every other caller.
//!
//! Hand-written rather than r2d2's: r2d2 retries a failed connection in
//! the background until its wait runs out, so a database that is down
//! would be reported only after that wait, as a timeout; here the caller
//! that needs a new connection makes it, and its error is the store's own
//! (`store database error while connecting to PostgreSQL: …`), at once.

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::{Store, StoreError};

/// Opens handles on one store ([`Store::opener`]).
#[derive(Clone)]
pub struct Opener {
    pub(crate) dir: std::path::PathBuf,
    /// The database server's connection settings; `None` for SQLite.
    #[cfg(feature = "postgres")]
    pub(crate) settings: Option<crate::postgres_tls::Settings>,
}

impl Opener {
    /// A new handle on the store, with a connection of its own.
    pub fn open(&self) -> Result<Store, StoreError> {
        #[cfg(feature = "postgres")]
        if let Some(settings) = &self.settings {
            let client = crate::postgres::Client::with_settings(settings.clone())?;
            return Ok(Store { dir: self.dir.clone(), db: crate::sql::Database::Postgres(Box::new(client)) });
        }
        Store::open_existing(&self.dir)
    }
}

/// Up to a number of handles on one store, opened as callers need them
/// and kept for the next.
#[derive(Clone)]
pub struct StorePool {
    shared: Arc<Shared>,
}

struct Shared {
    opener: Opener,
    state: Mutex<State>,
    returned: Condvar,
    size: usize,
    wait: Duration,
}

struct State {
    /// Handles no caller holds.
    idle: Vec<Store>,
    /// Handles open, held or idle.
    open: usize,
}

/// A handle taken from a [`StorePool`], given back when dropped.
pub struct PooledStore {
    store: Option<Store>,
    shared: Arc<Shared>,
}

impl StorePool {
    /// A pool of at most `size` handles (at least one) on the store
    /// `first` is a handle on, `first` the first of them; a caller finding
    /// them all taken waits up to `wait` for one.
    pub fn new(first: Store, size: usize, wait: Duration) -> StorePool {
        let opener = first.opener();
        let state = State { idle: vec![first], open: 1 };
        let shared = Shared { opener, state: Mutex::new(state), returned: Condvar::new(), size: size.max(1), wait };
        StorePool { shared: Arc::new(shared) }
    }

    /// A handle: an idle one, else a new one while fewer than the pool's
    /// size are open (an error opening it is returned as it is), else the
    /// first given back within the wait.
    pub fn get(&self) -> Result<PooledStore, StoreError> {
        let started = Instant::now();
        let mut state = lock(&self.shared.state);
        loop {
            if let Some(store) = state.idle.pop() {
                return Ok(self.pooled(store));
            }
            if state.open < self.shared.size {
                state.open += 1;
                // Opened without the lock: other callers go on meanwhile.
                drop(state);
                let mut slot = Slot { shared: &self.shared, taken: true };
                let store = self.shared.opener.open()?;
                slot.taken = false;
                return Ok(self.pooled(store));
            }
            let left = self.shared.wait.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Err(StoreError::Busy { handles: self.shared.size, waited: self.shared.wait });
            }
            state = self.shared.returned.wait_timeout(state, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Closes the handles no caller holds now (a process about to exit
    /// closes its connections); a later [`StorePool::get`] opens anew.
    pub fn close_idle(&self) {
        let idle = {
            let mut state = lock(&self.shared.state);
            let idle = std::mem::take(&mut state.idle);
            state.open -= idle.len();
            idle
        };
        drop(idle);
    }

    fn pooled(&self, store: Store) -> PooledStore {
        PooledStore { store: Some(store), shared: Arc::clone(&self.shared) }
    }
}

/// An open slot taken for a handle being opened: given back when dropped
/// still taken (the opening failed, or panicked).
struct Slot<'a> {
    shared: &'a Shared,
    taken: bool,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if self.taken {
            lock(&self.shared.state).open -= 1;
            self.shared.returned.notify_one();
        }
    }
}

impl Deref for PooledStore {
    type Target = Store;

    fn deref(&self) -> &Store {
        self.store.as_ref().expect("held until dropped")
    }
}

impl DerefMut for PooledStore {
    fn deref_mut(&mut self) -> &mut Store {
        self.store.as_mut().expect("held until dropped")
    }
}

impl Drop for PooledStore {
    fn drop(&mut self) {
        if let Some(store) = self.store.take() {
            lock(&self.shared.state).idle.push(store);
            self.shared.returned.notify_one();
        }
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ucpkit_core::Document;

    use super::StorePool;
    use crate::testing::places;
    use crate::StoreError;

    #[test]
    fn handles_are_opened_as_needed_reused_and_waited_for() {
        for place in places() {
            let mut first = place.open();
            first.save_document(&Document::new("d")).unwrap();
            let pool = StorePool::new(first, 2, Duration::from_millis(300));
            let a = pool.get().unwrap();
            let b = pool.get().unwrap();
            assert_eq!(b.revision("d").unwrap(), 1, "{}: a second handle on the same store", place.backend);
            // Both taken: a third caller waits, then is told why.
            let busy = pool.get().err().expect("no handle free");
            assert!(matches!(busy, StoreError::Busy { handles: 2, .. }), "{busy}");
            assert!(busy.to_string().contains("2 store connections"), "{busy}");
            // One given back while it waits: it gets that one.
            std::thread::scope(|scope| {
                let waiter = scope.spawn(|| pool.get().map(|store| store.revision("d").unwrap()));
                std::thread::sleep(Duration::from_millis(50));
                drop(a);
                assert_eq!(waiter.join().unwrap().unwrap(), 1);
            });
            drop(b);
            // Kept, not opened again: writes through one are seen by another.
            pool.get().unwrap().save_document(&Document::new("e")).unwrap();
            assert_eq!(pool.get().unwrap().documents().unwrap().len(), 2);
        }
    }

    #[test]
    fn a_store_that_cannot_be_opened_again_says_why_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let first = crate::Store::open(dir.path().join(".ucp")).unwrap();
        let pool = StorePool::new(first, 2, Duration::from_secs(30));
        let _held = pool.get().unwrap();
        std::fs::remove_dir_all(dir.path().join(".ucp")).unwrap();
        let started = std::time::Instant::now();
        let error = pool.get().err().expect("the store is gone");
        assert!(matches!(error, StoreError::Missing(_)), "{error}");
        assert!(started.elapsed() < Duration::from_secs(5), "not after the wait");
    }
}
