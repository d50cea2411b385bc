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
mod catch_up;
mod changes;
mod codec;
mod excerpt;
mod indexed;
mod load;
mod location;
mod migrate;
mod name;
mod part;
mod pool;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "postgres")]
mod postgres_tls;
mod schema;
mod sql;
#[cfg(test)]
mod testing;
mod transcripts;
mod vectors;

pub use catch_up::CaughtUp;
pub use changes::Changes;
pub use indexed::IndexedFrom;
pub use location::{is_store_url, node_cache_dir, redact, store_hosts};
pub use migrate::Copied;
pub use name::{
    check_document_name, is_agent_state, namespaced_document, AGENT_STATE_DOCUMENTS, MAX_DOCUMENT_NAME_CHARS,
};
pub use part::Part;
pub use pool::{Opener, PooledStore, StorePool};
pub use sql::DatabaseError;
pub use transcripts::StoredTranscript;
pub use vectors::TextKey;

use std::path::{Path, PathBuf};
use std::time::Duration;

use ucpkit_core::Document;
use ucpkit_core::Snapshot;

use sql::{args, Database, Tx};

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
    /// Every handle of a pool was in use for as long as a caller waits.
    #[error("all {handles} store connections stayed busy for {}s: the store is overloaded, or a call hangs", .waited.as_secs())]
    Busy {
        /// The pool's size.
        handles: usize,
        /// How long the caller waited.
        waited: Duration,
    },
    /// The database refused an operation (or cannot be reached).
    #[error("store database error while {context}: {source}")]
    Database {
        /// What the store was doing.
        context: &'static str,
        /// The cause.
        source: DatabaseError,
    },
    /// A store URL that does not parse, or names an engine this build lacks.
    #[error("invalid store URL {0}")]
    Url(String),
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
            StoreError::Busy { .. } => "store_busy",
            StoreError::Url(_) => "store_url",
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

pub(crate) fn db<E: Into<DatabaseError>>(context: &'static str) -> impl FnOnce(E) -> StoreError {
    move |source| StoreError::Database { context, source: source.into() }
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
    db: Database,
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
        let conn = rusqlite::Connection::open(dir.join(DATABASE_FILE)).map_err(db("opening the database"))?;
        conn.busy_timeout(BUSY_WAIT).map_err(db("setting the busy timeout"))?;
        conn.set_prepared_statement_cache_capacity(64);
        configure(&conn)?;
        schema::migrate(&conn)?;
        Ok(Store { dir, db: Database::Sqlite(conn) })
    }

    /// Opens the store in the PostgreSQL database at `url`
    /// (`postgres://user@host:port/database`), creating its tables when
    /// missing; `cache_dir` is this node's folder for what it derives from
    /// the store (search indexes), [`Store::dir`]. Needs the `postgres`
    /// feature.
    pub fn open_url(url: &str, cache_dir: impl AsRef<Path>) -> Result<Store, StoreError> {
        if !is_store_url(url) {
            return Err(StoreError::Url(format!(
                "{}: a store URL starts with postgres:// or postgresql://",
                location::redact(url)
            )));
        }
        let dir = cache_dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|source| StoreError::Io { path: dir.clone(), source })?;
        #[cfg(feature = "postgres")]
        {
            let client = postgres::Client::connect(url)?;
            Ok(Store { dir, db: Database::Postgres(Box::new(client)) })
        }
        #[cfg(not(feature = "postgres"))]
        Err(StoreError::Url(format!(
            "{}: this ucp was built without PostgreSQL (the `postgres` feature)",
            location::redact(url)
        )))
    }

    /// What opens more handles on this store, each with a connection of
    /// its own.
    pub fn opener(&self) -> Opener {
        Opener {
            dir: self.dir.clone(),
            #[cfg(feature = "postgres")]
            settings: match &self.db {
                Database::Sqlite(_) => None,
                Database::Postgres(client) => Some(client.settings().clone()),
            },
        }
    }

    /// The store directory: the SQLite store's own, or for a store in
    /// PostgreSQL this node's cache folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every document, by name.
    pub fn documents(&self) -> Result<Vec<DocumentSummary>, StoreError> {
        self.db.read(documents_in)
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
        self.db.write(|tx| {
            codec::write_document(tx, document)?;
            revision_in(tx, document.name())
        })
    }

    /// Loads a document by name.
    pub fn load_document(&self, name: &str) -> Result<Document, StoreError> {
        Ok(self.load_with_revision(name)?.0)
    }

    /// A document's revision: how many times it was written (0: never).
    /// Every write bumps it.
    pub fn revision(&self, name: &str) -> Result<u64, StoreError> {
        self.db.read(|tx| revision_in(tx, name))
    }

    /// Loads a document with the revision it has, read together (one read
    /// transaction), so a later [`Store::save_checked`] can tell whether
    /// another writer came in between.
    pub fn load_with_revision(&self, name: &str) -> Result<(Document, u64), StoreError> {
        // A big document is read by several connections at once, at one
        // revision (SQLite: each checks it; PostgreSQL: they share the
        // reading transaction's snapshot).
        let path = self.dir.join(DATABASE_FILE);
        let helpers = || match &self.db {
            Database::Sqlite(_) => load::Helpers::Sqlite(&path),
            #[cfg(feature = "postgres")]
            Database::Postgres(client) => load::Helpers::Postgres(client.settings()),
        };
        let mut attempt = 0;
        loop {
            let read = self.db.read(|tx| {
                let revision = revision_in(tx, name)?;
                let doc = document_number(tx, name)?;
                let document = match attempt < load::TRIES {
                    true => load::read_in_parts(tx, helpers(), doc, name, revision)?,
                    false => Some(load::read_document(tx, doc, name)?),
                };
                Ok(document.map(|document| (document, revision)))
            })?;
            if let Some(read) = read {
                return Ok(read);
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
        if let Some((doc, _)) = document {
            if doc.name() != name {
                return Err(StoreError::NameMismatch { expected: name.to_owned(), found: doc.name().to_owned() });
            }
            check_document_name(name)?;
        }
        // The write lock is taken before the check, so no other writer can
        // come in between them.
        self.db.write(|tx| {
            check_revision(tx, name, expected)?;
            if let Some((doc, snapshots)) = document {
                // The revision matched, so the stored document is the one this
                // copy was read or last saved as: what changed since is enough.
                codec::write_since_saved(tx, doc)?;
                write_snapshots(tx, doc.name(), snapshots)?;
            }
            let session = session.map(|session| write_session(tx, name, session)).transpose()?;
            Ok(Written { document: revision_in(tx, name)?, session })
        })
    }

    /// Saves `document` and sets its snapshots to exactly `snapshots`, in
    /// one transaction: both are written or neither is. Snapshots already
    /// stored unchanged are not rewritten.
    ///
    /// Returns the revision the document now has.
    pub fn save_with_snapshots(&mut self, document: &Document, snapshots: &[Snapshot]) -> Result<u64, StoreError> {
        check_document_name(document.name())?;
        self.db.write(|tx| {
            codec::write_document(tx, document)?;
            write_snapshots(tx, document.name(), snapshots)?;
            revision_in(tx, document.name())
        })
    }

    /// The record of a named session of a document, if stored.
    pub fn load_session(&self, document: &str, name: &str) -> Result<Option<StoredSession>, StoreError> {
        const CONTEXT: &str = "reading a session";
        self.db.read(|tx| {
            tx.first(
                CONTEXT,
                "SELECT body, revision FROM sessions WHERE document = ?1 AND name = ?2",
                args![document, name],
                |r| Ok(StoredSession { record: r.string(0).map_err(db(CONTEXT))?, revision: revision_of(r, 1)? }),
            )
        })
    }

    /// Names of a document's stored sessions with their last save time.
    pub fn sessions(&self, document: &str) -> Result<Vec<(String, i64)>, StoreError> {
        const CONTEXT: &str = "listing sessions";
        self.db.read(|tx| {
            tx.all(
                CONTEXT,
                "SELECT name, updated_ms FROM sessions WHERE document = ?1 ORDER BY name",
                args![document],
                |r| Ok((r.string(0).map_err(db(CONTEXT))?, r.int_of(1).map_err(db(CONTEXT))?)),
            )
        })
    }

    /// Deletes a stored session; false when there was none.
    pub fn delete_session(&mut self, document: &str, name: &str) -> Result<bool, StoreError> {
        self.db.write(|tx| {
            let n = tx.run(
                "deleting a session",
                "DELETE FROM sessions WHERE document = ?1 AND name = ?2",
                args![document, name],
            )?;
            Ok(n > 0)
        })
    }
}

/// Every document as `tx` sees it, by name.
fn documents_in(tx: &Tx<'_>) -> Result<Vec<DocumentSummary>, StoreError> {
    const CONTEXT: &str = "listing documents";
    tx.all(
        CONTEXT,
        "SELECT name, metadata, block_count, token_count, edge_count, version, saved_ms FROM documents ORDER BY name",
        args![],
        |row| {
            let count = |i| row.int_of(i).map(|n| n.max(0) as u64).map_err(db(CONTEXT));
            Ok(DocumentSummary {
                name: row.string(0).map_err(db(CONTEXT))?,
                title: title_of(row.text(1).map_err(db(CONTEXT))?.unwrap_or_default()),
                blocks: count(2)?,
                tokens: count(3)?,
                edges: count(4)?,
                version: count(5)?,
                saved_ms: row.int_of(6).map_err(db(CONTEXT))?,
            })
        },
    )
}

/// The title a document's stored metadata (JSON) gives, if any: read
/// here, not by the database, whose JSON functions differ (PostgreSQL's
/// refuses some escapes JSON allows).
fn title_of(metadata: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Titled {
        title: Option<String>,
    }
    serde_json::from_str::<Titled>(metadata).ok().and_then(|m| m.title)
}

/// The row number of document `name` (an error naming the stored ones
/// when there is none).
pub(crate) fn document_number(tx: &Tx<'_>, name: &str) -> Result<i64, StoreError> {
    const CONTEXT: &str = "finding the document";
    let doc = tx.first(CONTEXT, "SELECT doc FROM documents WHERE name = ?1", args![name], |r| {
        r.int_of(0).map_err(db(CONTEXT))
    })?;
    match doc {
        Some(doc) => Ok(doc),
        None => {
            let names: Vec<String> = documents_in(tx)?.into_iter().map(|d| d.name).collect();
            Err(StoreError::NoSuchDocument { name: name.to_owned(), available: list(&names) })
        }
    }
}

/// Column `i` of `row` as a revision (a count of writes).
pub(crate) fn revision_of(row: &sql::Cells<'_>, i: usize) -> Result<u64, StoreError> {
    Ok(row.int_of(i).map_err(db("reading a revision"))?.max(0) as u64)
}

/// Writes a named session's record inside `tx` if the stored one is still
/// at the revision it was opened at; returns its new revision.
fn write_session(tx: &Tx<'_>, document: &str, session: SessionWrite<'_>) -> Result<u64, StoreError> {
    let found = tx
        .first(
            "reading a session's revision",
            "SELECT revision FROM sessions WHERE document = ?1 AND name = ?2",
            args![document, session.name],
            |r| revision_of(r, 0),
        )?
        .unwrap_or(0);
    if found != session.opened_at {
        return Err(StoreError::SessionConflict {
            document: document.to_owned(),
            session: session.name.to_owned(),
            expected: session.opened_at,
            found,
        });
    }
    tx.run(
        "writing a session",
        "INSERT INTO sessions (document, name, body, updated_ms, revision) VALUES (?1, ?2, ?3, ?4, 1)
         ON CONFLICT (document, name) DO UPDATE SET body = excluded.body, updated_ms = excluded.updated_ms,
                                                    revision = sessions.revision + 1",
        args![document, session.name, session.record, ucpkit_core::now_ms()],
    )?;
    Ok(found + 1)
}

/// How long a call waits for another process's lock on the database.
pub(crate) const BUSY_WAIT: Duration = Duration::from_secs(10);

/// Sets a new connection's pragmas. Switching a store to WAL needs the
/// database to itself, and while another process is creating the same
/// store SQLite refuses at once rather than calling the busy handler; so a
/// busy refusal is tried again, within the busy wait.
fn configure(conn: &rusqlite::Connection) -> Result<(), StoreError> {
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
fn check_revision(tx: &Tx<'_>, name: &str, expected: u64) -> Result<(), StoreError> {
    let found = revision_in(tx, name)?;
    if found != expected {
        return Err(StoreError::Conflict { document: name.to_owned(), expected, found });
    }
    Ok(())
}

/// A document's revision as `tx` sees it (0: never written).
fn revision_in(tx: &Tx<'_>, name: &str) -> Result<u64, StoreError> {
    let revision = tx.first(
        "reading the document's revision",
        "SELECT revision FROM revisions WHERE document = ?1",
        args![name],
        |r| revision_of(r, 0),
    )?;
    Ok(revision.unwrap_or(0))
}

/// Sets the snapshots of document `name` to exactly `snapshots` inside
/// `tx`; snapshots already stored unchanged are not rewritten.
pub(crate) fn write_snapshots(tx: &Tx<'_>, document: &str, snapshots: &[Snapshot]) -> Result<(), StoreError> {
    const LISTING: &str = "listing snapshots";
    let stored =
        tx.all(LISTING, "SELECT name, created_ms FROM snapshots WHERE document = ?1", args![document], |r| {
            Ok((r.string(0).map_err(db(LISTING))?, r.int_of(1).map_err(db(LISTING))?))
        })?;
    for (name, created_ms) in &stored {
        if !snapshots.iter().any(|s| s.name == *name && s.created_ms == *created_ms) {
            tx.run(
                "deleting a snapshot",
                "DELETE FROM snapshots WHERE document = ?1 AND name = ?2",
                args![document, name],
            )?;
        }
    }
    for snapshot in snapshots {
        if !stored.iter().any(|(name, created)| *name == snapshot.name && *created == snapshot.created_ms) {
            tx.run(
                "writing a snapshot",
                "INSERT INTO snapshots (document, name, description, created_ms, block_count, body)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                args![
                    document,
                    &snapshot.name,
                    snapshot.description.as_deref(),
                    snapshot.created_ms,
                    snapshot.blocks as i64,
                    &*snapshot.json
                ],
            )?;
        }
    }
    Ok(())
}

impl Store {
    /// The snapshots of a document, by name.
    pub fn load_snapshots(&self, document: &str) -> Result<Vec<Snapshot>, StoreError> {
        const CONTEXT: &str = "reading snapshots";
        self.db.read(|tx| {
            tx.all(
                CONTEXT,
                "SELECT name, description, created_ms, block_count, body FROM snapshots
                 WHERE document = ?1 ORDER BY name",
                args![document],
                |r| {
                    Ok(Snapshot {
                        name: r.string(0).map_err(db(CONTEXT))?,
                        description: r.opt_string(1).map_err(db(CONTEXT))?,
                        created_ms: r.int_of(2).map_err(db(CONTEXT))?,
                        blocks: r.int_of(3).map_err(db(CONTEXT))?.max(0) as usize,
                        json: r.string(4).map_err(db(CONTEXT))?.into(),
                    })
                },
            )
        })
    }

    /// Runs SQLite's own consistency check; `Ok(())` when the file is
    /// sound. A store in PostgreSQL is checked by the server itself: there
    /// this only checks that the tables answer.
    pub fn integrity_check(&self) -> Result<(), StoreError> {
        let verdict = match &self.db {
            Database::Sqlite(conn) => {
                conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).map_err(db("checking integrity"))?
            }
            #[cfg(feature = "postgres")]
            Database::Postgres(_) => self.db.read(|tx| documents_in(tx).map(|_| "ok".to_owned()))?,
        };
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
