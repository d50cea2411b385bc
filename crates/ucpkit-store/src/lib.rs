//! The embedded store: a `.ucp/` directory holding one SQLite database
//! (`ucp.db`) with documents, blocks, structure and edges.
//!
//! Every write is one SQLite transaction, so a process killed mid-write
//! leaves the store as it was before. Loading a document reads rows back
//! into the model without touching the original sources.
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! let mut store = ucpkit_store::Store::open(dir.path().join(".ucp")).unwrap();
//! store.save_document(&ucpkit_core::Document::new("empty")).unwrap();
//! assert_eq!(store.load_document("empty").unwrap().len(), 1);
//! ```

mod admin;
mod codec;
mod excerpt;
mod indexed;
mod load;
mod name;
mod part;
mod schema;
mod transcripts;

pub use indexed::IndexedFrom;
pub use name::{
    check_document_name, is_agent_state, namespaced_document, AGENT_STATE_DOCUMENTS, MAX_DOCUMENT_NAME_CHARS,
};
pub use part::Part;
pub use transcripts::StoredTranscript;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, Transaction};
use ucpkit_core::Document;
use ucpkit_core::Snapshot;

/// File name of the database inside the store directory.
pub const DATABASE_FILE: &str = "ucp.db";

/// Default store directory, relative to the current directory.
pub const DEFAULT_STORE_DIR: &str = ".ucp";

/// What went wrong with the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No store at the given place.
    #[error("no store at {}: run `ucp index <PATH>` first, or pass --store DIR", .0.display())]
    Missing(PathBuf),
    /// The directory cannot be created or used.
    #[error("cannot use store directory {}: {source}", path.display())]
    Io {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// SQLite refused an operation.
    #[error("store database error while {context}: {source}")]
    Database {
        /// What the store was doing.
        context: &'static str,
        /// The cause.
        source: rusqlite::Error,
    },
    /// No document of that name.
    #[error("no document named {name:?} (documents: {available})")]
    NoSuchDocument {
        /// The requested name.
        name: String,
        /// The names that exist, comma separated.
        available: String,
    },
    /// A write of one document was handed a document of another name.
    #[error("refused to write document {found:?} as {expected:?}: nothing was written")]
    NameMismatch {
        /// The name written.
        expected: String,
        /// The name the document carries.
        found: String,
    },
    /// A document of that name exists already.
    #[error("a document named {0:?} exists already (delete it first, or choose another name)")]
    NameTaken(String),
    /// `--doc` was left out but the store holds several documents (or none).
    #[error("{0}")]
    DocumentNotChosen(String),
    /// Stored data that does not decode.
    #[error("corrupt store data in document {document:?}: {detail}")]
    Corrupt {
        /// The document.
        document: String,
        /// What is wrong.
        detail: String,
    },
    /// The document changed in the store after this copy of it was loaded:
    /// nothing was written.
    #[error(
        "{document:?} was changed in the store by another writer (revision {found}) since this copy was loaded \
         (revision {expected}); nothing was written: open it again and redo the change"
    )]
    Conflict {
        /// The document.
        document: String,
        /// The revision the copy was loaded at.
        expected: u64,
        /// The revision in the store.
        found: u64,
    },
    /// A named session was saved by another writer after this copy of it
    /// was opened: nothing was written.
    #[error(
        "session {session:?} of {document:?} was saved by another writer (revision {found}) since it was opened \
         (revision {expected}); nothing was written: open the session again and redo its commands"
    )]
    SessionConflict {
        /// The document.
        document: String,
        /// The session's name.
        session: String,
        /// The revision the session was opened at (0: it was not stored).
        expected: u64,
        /// The revision in the store.
        found: u64,
    },
    /// An agent transcript was saved by another run after this one read
    /// it: nothing was written.
    #[error(
        "the agent transcript {name:?} was saved by another run (revision {found}) since this one read it \
         (revision {expected}); nothing was written"
    )]
    TranscriptConflict {
        /// The transcript's (session's) name.
        name: String,
        /// The revision read (0: none was stored).
        expected: u64,
        /// The revision in the store.
        found: u64,
    },
    /// A document name that breaks a rule of [`check_document_name`].
    #[error("invalid document name {name:?}: {rule}")]
    InvalidName {
        /// The name (cut when long).
        name: String,
        /// The rule it breaks.
        rule: String,
    },
    /// A write of a partial document (some blocks of a stored one, read for
    /// one call): written in the stored one's place, it would lose the rest.
    #[error("refused to write {0:?}: this copy holds only part of the stored document; nothing was written")]
    Partial(String),
    /// The database was written by a newer UCP.
    #[error("store schema version {found} is newer than this ucp supports ({supported}); upgrade ucp")]
    TooNew {
        /// Version in the database.
        found: i64,
        /// Highest version this build knows.
        supported: i64,
    },
}

impl StoreError {
    /// A stable code for programs.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::Missing(_) => "no_store",
            StoreError::Io { .. } => "store_io",
            StoreError::Database { .. } => "store_database",
            StoreError::NoSuchDocument { .. } => "no_document",
            StoreError::NameMismatch { .. } => "name_mismatch",
            StoreError::NameTaken(_) => "name_taken",
            StoreError::DocumentNotChosen(_) => "document_not_chosen",
            StoreError::Corrupt { .. } => "store_corrupt",
            StoreError::Conflict { .. } => "conflict",
            StoreError::SessionConflict { .. } => "session_conflict",
            StoreError::TranscriptConflict { .. } => "transcript_conflict",
            StoreError::InvalidName { .. } => "invalid_name",
            StoreError::TooNew { .. } => "store_too_new",
            StoreError::Partial(_) => "partial_document",
        }
    }
}

pub(crate) fn db(context: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    move |source| StoreError::Database { context, source }
}

/// One row of `ucp docs`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DocumentSummary {
    /// The document's name.
    pub name: String,
    /// Its title, if any.
    pub title: Option<String>,
    /// Blocks, root included.
    pub blocks: u64,
    /// Sum of the blocks' token counts.
    pub tokens: u64,
    /// Edges.
    pub edges: u64,
    /// Version counter at the last save.
    pub version: u64,
    /// When it was last saved (ms since the Unix epoch).
    pub saved_ms: i64,
}

/// A named session's record to write, checked against the revision it
/// was opened at.
#[derive(Debug, Clone, Copy)]
pub struct SessionWrite<'a> {
    /// The session's name.
    pub name: &'a str,
    /// Its JSON record.
    pub record: &'a str,
    /// The revision of the stored record it was opened at (0: none stored).
    pub opened_at: u64,
}

/// A named session's stored record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSession {
    /// Its JSON record.
    pub record: String,
    /// How many times it was written.
    pub revision: u64,
}

/// What a checked write left in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// The document's revision.
    pub document: u64,
    /// The session's revision, when one was written.
    pub session: Option<u64>,
}

/// An open store.
pub struct Store {
    dir: PathBuf,
    conn: Connection,
}

impl Store {
    /// Opens the store in `dir`, creating the directory and database when
    /// missing.
    pub fn open(dir: impl AsRef<Path>) -> Result<Store, StoreError> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|source| StoreError::Io { path: dir.clone(), source })?;
        Store::connect(dir)
    }

    /// Opens an existing store; [`StoreError::Missing`] when there is none.
    pub fn open_existing(dir: impl AsRef<Path>) -> Result<Store, StoreError> {
        let dir = dir.as_ref().to_path_buf();
        if !dir.join(DATABASE_FILE).is_file() {
            return Err(StoreError::Missing(dir));
        }
        Store::connect(dir)
    }

    fn connect(dir: PathBuf) -> Result<Store, StoreError> {
        let conn = Connection::open(dir.join(DATABASE_FILE)).map_err(db("opening the database"))?;
        conn.busy_timeout(BUSY_WAIT).map_err(db("setting the busy timeout"))?;
        configure(&conn)?;
        schema::migrate(&conn)?;
        Ok(Store { dir, conn })
    }

    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every document, by name.
    pub fn documents(&self) -> Result<Vec<DocumentSummary>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT name, json_extract(metadata, '$.title'), block_count, token_count, edge_count, version, saved_ms
                 FROM documents ORDER BY name",
            )
            .map_err(db("listing documents"))?;
        let rows = stmt
            .query_map([], |row| {
                Ok(DocumentSummary {
                    name: row.get(0)?,
                    title: row.get(1)?,
                    blocks: row.get::<_, i64>(2)? as u64,
                    tokens: row.get::<_, i64>(3)? as u64,
                    edges: row.get::<_, i64>(4)? as u64,
                    version: row.get::<_, i64>(5)? as u64,
                    saved_ms: row.get(6)?,
                })
            })
            .map_err(db("listing documents"))?;
        rows.collect::<Result<_, _>>().map_err(db("listing documents"))
    }

    /// The document to use when the user named `requested` (or nothing:
    /// then the store must hold exactly one).
    pub fn resolve_name(&self, requested: Option<&str>) -> Result<String, StoreError> {
        let names: Vec<String> = self.documents()?.into_iter().map(|d| d.name).collect();
        match requested {
            Some(name) if names.iter().any(|n| n == name) => Ok(name.to_owned()),
            Some(name) => Err(StoreError::NoSuchDocument { name: name.to_owned(), available: list(&names) }),
            // Agents' memories and plans are never the default document.
            None => match names.iter().filter(|n| !is_agent_state(n)).collect::<Vec<_>>().as_slice() {
                [only] => Ok((*only).clone()),
                [] if names.is_empty() => Err(StoreError::DocumentNotChosen(format!(
                    "the store at {} holds no documents: run `ucp index <PATH>` first",
                    self.dir.display()
                ))),
                [] => Err(StoreError::DocumentNotChosen(format!(
                    "the store at {} holds only agents' memories and plans ({}): run `ucp index <PATH>`, or \
                     choose one with --doc NAME",
                    self.dir.display(),
                    list(&names)
                ))),
                _ => Err(StoreError::DocumentNotChosen(format!(
                    "the store holds several documents ({}): choose one with --doc NAME",
                    list(&names)
                ))),
            },
        }
    }

    /// Saves `document` under its name, replacing any document of that name,
    /// in one transaction; returns the revision it now has.
    pub fn save_document(&mut self, document: &Document) -> Result<u64, StoreError> {
        check_document_name(document.name())?;
        let tx = self.conn.transaction().map_err(db("starting a transaction"))?;
        codec::write_document(&tx, document)?;
        let revision = revision_in(&tx, document.name())?;
        tx.commit().map_err(db("committing the document"))?;
        Ok(revision)
    }

    /// Loads a document by name.
    pub fn load_document(&self, name: &str) -> Result<Document, StoreError> {
        Ok(self.load_with_revision(name)?.0)
    }

    /// A document's revision: how many times it was written (0: never).
    /// Every write bumps it.
    pub fn revision(&self, name: &str) -> Result<u64, StoreError> {
        revision_in(&self.conn, name)
    }

    /// Loads a document with the revision it has, read together (one read
    /// transaction), so a later [`Store::save_checked`] can tell whether
    /// another writer came in between.
    pub fn load_with_revision(&self, name: &str) -> Result<(Document, u64), StoreError> {
        let path = self.dir.join(DATABASE_FILE);
        let mut attempt = 0;
        loop {
            // Nothing else runs on this connection meanwhile (`&self` is
            // not shared between threads), so the read stands alone.
            let tx = self.conn.unchecked_transaction().map_err(db("starting a read"))?;
            let revision = revision_in(&tx, name)?;
            let doc = self.document_number(&tx, name)?;
            let document = if attempt < load::TRIES {
                load::read_in_parts(&tx, &path, doc, name, revision)?
            } else {
                Some(load::read_document(&tx, doc, name)?)
            };
            tx.commit().map_err(db("ending a read"))?;
            if let Some(document) = document {
                return Ok((document, revision));
            }
            attempt += 1;
        }
    }

    /// Writes what changed since a copy of document `name` was loaded at
    /// revision `expected` — the document and its snapshots when given, a
    /// named session's record when given — in one transaction, only if the
    /// stored document is still at that revision and the session's record
    /// at the one it was opened at; otherwise nothing is written and
    /// [`StoreError::Conflict`] or [`StoreError::SessionConflict`] says so.
    pub fn save_checked(
        &mut self,
        name: &str,
        expected: u64,
        document: Option<(&Document, &[Snapshot])>,
        session: Option<SessionWrite<'_>>,
    ) -> Result<Written, StoreError> {
        // IMMEDIATE: the write lock is taken before the check, so no other
        // writer can come in between them.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(db("starting a transaction"))?;
        check_revision(&tx, name, expected)?;
        if let Some((doc, snapshots)) = document {
            if doc.name() != name {
                return Err(StoreError::NameMismatch { expected: name.to_owned(), found: doc.name().to_owned() });
            }
            check_document_name(name)?;
            // The revision matched, so the stored document is the one this
            // copy was read or last saved as: what changed since is enough.
            codec::write_since_saved(&tx, doc)?;
            write_snapshots(&tx, doc.name(), snapshots)?;
        }
        let session = session.map(|session| write_session(&tx, name, session)).transpose()?;
        let revision = revision_in(&tx, name)?;
        tx.commit().map_err(db("committing the document"))?;
        Ok(Written { document: revision, session })
    }

    /// Saves `document` and sets its snapshots to exactly `snapshots`, in
    /// one transaction: both are written or neither is. Snapshots already
    /// stored unchanged are not rewritten.
    ///
    /// Returns the revision the document now has.
    pub fn save_with_snapshots(&mut self, document: &Document, snapshots: &[Snapshot]) -> Result<u64, StoreError> {
        let tx = self.conn.transaction().map_err(db("starting a transaction"))?;
        write_with_snapshots(&tx, document, snapshots)?;
        let revision = revision_in(&tx, document.name())?;
        tx.commit().map_err(db("committing the document"))?;
        Ok(revision)
    }

    /// The record of a named session of a document, if stored.
    pub fn load_session(&self, document: &str, name: &str) -> Result<Option<StoredSession>, StoreError> {
        self.conn
            .query_row(
                "SELECT body, revision FROM sessions WHERE document = ?1 AND name = ?2",
                params![document, name],
                |r| Ok(StoredSession { record: r.get(0)?, revision: r.get::<_, i64>(1)? as u64 }),
            )
            .optional()
            .map_err(db("reading a session"))
    }

    /// Names of a document's stored sessions with their last save time.
    pub fn sessions(&self, document: &str) -> Result<Vec<(String, i64)>, StoreError> {
        let mut query = self
            .conn
            .prepare("SELECT name, updated_ms FROM sessions WHERE document = ?1 ORDER BY name")
            .map_err(db("listing sessions"))?;
        let rows =
            query.query_map(params![document], |r| Ok((r.get(0)?, r.get(1)?))).map_err(db("listing sessions"))?;
        rows.collect::<Result<_, _>>().map_err(db("listing sessions"))
    }

    /// Deletes a stored session; false when there was none.
    pub fn delete_session(&mut self, document: &str, name: &str) -> Result<bool, StoreError> {
        let n = self
            .conn
            .execute("DELETE FROM sessions WHERE document = ?1 AND name = ?2", params![document, name])
            .map_err(db("deleting a session"))?;
        Ok(n > 0)
    }
}

/// Writes a named session's record inside `tx` if the stored one is still
/// at the revision it was opened at; returns its new revision.
fn write_session(tx: &rusqlite::Transaction, document: &str, session: SessionWrite<'_>) -> Result<u64, StoreError> {
    let found: Option<i64> = tx
        .query_row(
            "SELECT revision FROM sessions WHERE document = ?1 AND name = ?2",
            params![document, session.name],
            |r| r.get(0),
        )
        .optional()
        .map_err(db("reading a session's revision"))?;
    let found = found.unwrap_or(0) as u64;
    if found != session.opened_at {
        return Err(StoreError::SessionConflict {
            document: document.to_owned(),
            session: session.name.to_owned(),
            expected: session.opened_at,
            found,
        });
    }
    tx.execute(
        "INSERT INTO sessions (document, name, body, updated_ms, revision) VALUES (?1, ?2, ?3, ?4, 1)
         ON CONFLICT (document, name) DO UPDATE SET body = excluded.body, updated_ms = excluded.updated_ms,
                                                    revision = revision + 1",
        params![document, session.name, session.record, ucpkit_core::now_ms()],
    )
    .map_err(db("writing a session"))?;
    Ok(found + 1)
}

/// How long a call waits for another process's lock on the database.
pub(crate) const BUSY_WAIT: Duration = Duration::from_secs(10);

/// Sets a new connection's pragmas. Switching a store to WAL needs the
/// database to itself, and while another process is creating the same
/// store SQLite refuses at once rather than calling the busy handler; so a
/// busy refusal is tried again, within the busy wait.
fn configure(conn: &Connection) -> Result<(), StoreError> {
    let started = std::time::Instant::now();
    loop {
        let configured =
            conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;");
        match configured {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && started.elapsed() < BUSY_WAIT =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            other => return other.map_err(db("configuring the database")),
        }
    }
}

/// Refuses a write based on revision `expected` of document `name` when
/// the store holds another: another writer came in between.
fn check_revision(tx: &Transaction<'_>, name: &str, expected: u64) -> Result<(), StoreError> {
    let found = revision_in(tx, name)?;
    if found != expected {
        return Err(StoreError::Conflict { document: name.to_owned(), expected, found });
    }
    Ok(())
}

/// A document's revision as `conn` sees it (0: never written).
fn revision_in(conn: &Connection, name: &str) -> Result<u64, StoreError> {
    let revision: Option<i64> = conn
        .query_row("SELECT revision FROM revisions WHERE document = ?1", params![name], |r| r.get(0))
        .optional()
        .map_err(db("reading the document's revision"))?;
    Ok(revision.unwrap_or(0) as u64)
}

/// Writes a document whole and sets its snapshots to exactly `snapshots`
/// inside `tx`.
fn write_with_snapshots(
    tx: &rusqlite::Transaction,
    document: &Document,
    snapshots: &[Snapshot],
) -> Result<(), StoreError> {
    check_document_name(document.name())?;
    codec::write_document(tx, document)?;
    write_snapshots(tx, document.name(), snapshots)
}

/// Sets the snapshots of document `name` to exactly `snapshots` inside
/// `tx`; snapshots already stored unchanged are not rewritten.
fn write_snapshots(tx: &rusqlite::Transaction, document: &str, snapshots: &[Snapshot]) -> Result<(), StoreError> {
    let stored: Vec<(String, i64)> = {
        let mut query = tx
            .prepare("SELECT name, created_ms FROM snapshots WHERE document = ?1")
            .map_err(db("listing snapshots"))?;
        let rows =
            query.query_map(params![document], |r| Ok((r.get(0)?, r.get(1)?))).map_err(db("listing snapshots"))?;
        rows.collect::<Result<_, _>>().map_err(db("listing snapshots"))?
    };
    for (name, created_ms) in &stored {
        if !snapshots.iter().any(|s| s.name == *name && s.created_ms == *created_ms) {
            tx.execute("DELETE FROM snapshots WHERE document = ?1 AND name = ?2", params![document, name])
                .map_err(db("deleting a snapshot"))?;
        }
    }
    for snapshot in snapshots {
        if !stored.iter().any(|(name, created)| *name == snapshot.name && *created == snapshot.created_ms) {
            tx.execute(
                "INSERT INTO snapshots (document, name, description, created_ms, block_count, body)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    document,
                    snapshot.name,
                    snapshot.description,
                    snapshot.created_ms,
                    snapshot.blocks as i64,
                    &*snapshot.json
                ],
            )
            .map_err(db("writing a snapshot"))?;
        }
    }
    Ok(())
}

impl Store {
    /// The snapshots of a document, by name.
    pub fn load_snapshots(&self, document: &str) -> Result<Vec<Snapshot>, StoreError> {
        let mut query = self
            .conn
            .prepare(
                "SELECT name, description, created_ms, block_count, body FROM snapshots
                 WHERE document = ?1 ORDER BY name",
            )
            .map_err(db("reading snapshots"))?;
        let rows = query
            .query_map(params![document], |r| {
                Ok(Snapshot {
                    name: r.get(0)?,
                    description: r.get(1)?,
                    created_ms: r.get(2)?,
                    blocks: r.get::<_, i64>(3)? as usize,
                    json: r.get::<_, String>(4)?.into(),
                })
            })
            .map_err(db("reading snapshots"))?;
        rows.collect::<Result<_, _>>().map_err(db("reading snapshots"))
    }

    /// Runs SQLite's own consistency check; `Ok(())` when the file is sound.
    pub fn integrity_check(&self) -> Result<(), StoreError> {
        let verdict: String =
            self.conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).map_err(db("checking integrity"))?;
        if verdict == "ok" {
            Ok(())
        } else {
            Err(StoreError::Corrupt { document: String::new(), detail: verdict })
        }
    }
}

pub(crate) fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}
