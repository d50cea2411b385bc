//! Hearing of other nodes' writes as they commit: a store on a database
//! server announces every document write (PostgreSQL's LISTEN/NOTIFY), so
//! a long-running server refreshes its copy before the next call asks.

use std::time::Duration;

use crate::sql::Database;
use crate::{Store, StoreError};

/// The documents written to a store, as the writes commit, by any node.
pub struct Changes {
    #[cfg(feature = "postgres")]
    listener: crate::postgres::Listener,
}

impl Changes {
    /// The documents written since the last call, each named once,
    /// waiting up to `wait` for the first; empty when none came. `None`:
    /// the listener lost its connection and made it again, so writes
    /// announced meanwhile are unknown (any document may have changed).
    /// When it cannot connect, an error, after `wait`: calling again tries
    /// again.
    pub fn next(&mut self, wait: Duration) -> Result<Option<Vec<String>>, StoreError> {
        #[cfg(feature = "postgres")]
        return self.listener.next(wait);
        #[cfg(not(feature = "postgres"))]
        {
            std::thread::sleep(wait);
            Ok(Some(Vec::new()))
        }
    }
}

impl Store {
    /// A new listener for the documents written to this store, on a
    /// connection of its own; `None` for a SQLite store, whose writers
    /// share this machine (readers look before each call instead).
    pub fn changes(&self) -> Result<Option<Changes>, StoreError> {
        match &self.db {
            Database::Sqlite(_) => Ok(None),
            #[cfg(feature = "postgres")]
            Database::Postgres(client) => Ok(Some(Changes { listener: client.listen()? })),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ucpkit_core::Document;

    use crate::testing::places;

    #[test]
    fn every_write_is_heard_by_every_listener_once_it_commits() {
        for place in places() {
            let mut writer = place.open();
            let Some(mut changes) = writer.changes().unwrap() else {
                assert_eq!(place.backend, "sqlite", "only SQLite has no listener");
                continue;
            };
            let wait = Duration::from_secs(5);
            writer.save_document(&Document::new("a")).unwrap();
            writer.save_document(&Document::new("b")).unwrap();
            let mut heard = changes.next(wait).unwrap().unwrap();
            if heard.len() < 2 {
                heard.extend(changes.next(wait).unwrap().unwrap());
            }
            assert_eq!(heard, ["a", "b"]);
            // A write refused before it commits is never announced.
            let stale = writer.save_checked("a", 0, Some((&Document::new("a"), &[])), None);
            assert!(stale.is_err());
            writer.rename_document("b", "c").unwrap();
            assert_eq!(changes.next(wait).unwrap().unwrap(), ["b", "c"]);
            assert!(changes.next(Duration::from_millis(200)).unwrap().unwrap().is_empty());
        }
    }
}
