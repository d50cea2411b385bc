//! Agent transcripts: each `ucp agent` run's conversation, saved after every
//! step under the run's session name so it can be taken up again. A save
//! names the revision it read, so two runs of one session never overwrite
//! each other.

use crate::sql::args;
use crate::{db, revision_of, Store, StoreError};

/// A stored transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTranscript {
    /// Its body (the agent's JSON record).
    pub body: String,
    /// Its revision, which the next save names.
    pub revision: u64,
}

impl Store {
    /// The transcript saved as `name`, if any.
    pub fn load_transcript(&self, name: &str) -> Result<Option<StoredTranscript>, StoreError> {
        const CONTEXT: &str = "reading a transcript";
        self.db.read(|tx| {
            tx.first(CONTEXT, "SELECT body, revision FROM transcripts WHERE name = ?1", args![name], |r| {
                Ok(StoredTranscript { body: r.string(0).map_err(db(CONTEXT))?, revision: revision_of(r, 1)? })
            })
        })
    }

    /// Every transcript's name and when it was last saved (ms since the
    /// epoch), the latest first.
    pub fn transcripts(&self) -> Result<Vec<(String, u64)>, StoreError> {
        const CONTEXT: &str = "listing transcripts";
        self.db.read(|tx| {
            tx.all(CONTEXT, "SELECT name, updated_ms FROM transcripts ORDER BY updated_ms DESC, name", args![], |r| {
                Ok((r.string(0).map_err(db(CONTEXT))?, r.int_of(1).map_err(db(CONTEXT))?.max(0) as u64))
            })
        })
    }

    /// Saves `body` as transcript `name` if the stored one is still at
    /// `read_at` (0: there was none); returns the new revision. Otherwise
    /// [`StoreError::TranscriptConflict`] and nothing is written.
    pub fn save_transcript(&mut self, name: &str, body: &str, read_at: u64) -> Result<u64, StoreError> {
        if name.trim().is_empty() {
            return Err(StoreError::InvalidName {
                name: name.to_owned(),
                rule: "a session name cannot be empty".into(),
            });
        }
        self.db.write(|tx| {
            let found = tx
                .first(
                    "reading a transcript's revision",
                    "SELECT revision FROM transcripts WHERE name = ?1",
                    args![name],
                    |r| revision_of(r, 0),
                )?
                .unwrap_or(0);
            if found != read_at {
                return Err(StoreError::TranscriptConflict { name: name.to_owned(), expected: read_at, found });
            }
            tx.run(
                "writing a transcript",
                "INSERT INTO transcripts (name, body, updated_ms, revision) VALUES (?1, ?2, ?3, 1)
                 ON CONFLICT (name) DO UPDATE SET body = excluded.body, updated_ms = excluded.updated_ms,
                                                  revision = transcripts.revision + 1",
                args![name, body, ucpkit_core::now_ms()],
            )?;
            Ok(found + 1)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_name_the_revision_they_read() {
        for place in crate::testing::places() {
            let mut store = place.open();
            assert_eq!(store.load_transcript("s").unwrap(), None);
            assert_eq!(store.save_transcript("s", "one", 0).unwrap(), 1);
            assert_eq!(store.save_transcript("s", "two", 1).unwrap(), 2);
            let stale = store.save_transcript("s", "lost", 1).unwrap_err();
            assert!(matches!(stale, StoreError::TranscriptConflict { expected: 1, found: 2, .. }), "{stale}");
            assert!(store.save_transcript("t", "new", 3).is_err(), "a transcript that is not there was not read");
            assert_eq!(store.load_transcript("s").unwrap(), Some(StoredTranscript { body: "two".into(), revision: 2 }));
            assert!(store.save_transcript(" ", "x", 0).is_err());
            let names: Vec<String> = store.transcripts().unwrap().into_iter().map(|(name, _)| name).collect();
            assert_eq!(names.len(), 1, "{names:?}");
            assert_eq!(names[0], "s");
        }
    }
}
