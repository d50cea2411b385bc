//! The embedded store: a `.ucp/` directory holding one SQLite database
//! (`ucp.db`) with documents, blocks, structure and edges.
//!
//! Every write is one SQLite transaction, so a process killed mid-write
//! leaves the store as it was before. Loading a document reads rows back
//! into the model without touching the original sources.
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! let mut store = ucp_store::Store::open(dir.path().join(".ucp")).unwrap();
//! store.save_document(&ucm_core::Document::new("empty")).unwrap();
//! assert_eq!(store.load_document("empty").unwrap().len(), 1);
//! ```

#![warn(missing_docs)]

mod codec;
mod name;
mod schema;

pub use name::{check_document_name, MAX_DOCUMENT_NAME_CHARS};

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};
use ucm_core::Document;
use ucm_engine::Snapshot;

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
    /// A document name that breaks a rule of [`check_document_name`].
    #[error("invalid document name {name:?}: {rule}")]
    InvalidName {
        /// The name (cut when long).
        name: String,
        /// The rule it breaks.
        rule: String,
    },
    /// The database was written by a newer UCP.
    #[error("store schema version {found} is newer than this ucp supports ({supported}); upgrade ucp")]
    TooNew {
        /// Version in the database.
        found: i64,
        /// Highest version this build knows.
        supported: i64,
    },
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
        conn.busy_timeout(Duration::from_secs(10)).map_err(db("setting the busy timeout"))?;
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(db("configuring the database"))?;
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
            None => match names.as_slice() {
                [only] => Ok(only.clone()),
                [] => Err(StoreError::DocumentNotChosen(format!(
                    "the store at {} holds no documents: run `ucp index <PATH>` first",
                    self.dir.display()
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
        let row = self
            .conn
            .query_row("SELECT doc FROM documents WHERE name = ?1", params![name], |r| r.get::<_, i64>(0))
            .optional()
            .map_err(db("finding the document"))?;
        match row {
            Some(doc) => codec::read_document(&self.conn, doc, name),
            None => {
                let names: Vec<String> = self.documents()?.into_iter().map(|d| d.name).collect();
                Err(StoreError::NoSuchDocument { name: name.to_owned(), available: list(&names) })
            }
        }
    }

    /// A document's revision: how many times it was written (0: never).
    /// Every write bumps it.
    pub fn revision(&self, name: &str) -> Result<u64, StoreError> {
        revision_in(&self.conn, name)
    }

    /// Loads a document with the revision it has, read together (one read
    /// transaction), so a later [`Store::save_checked`] can tell whether
    /// another writer came in between.
    pub fn load_with_revision(&mut self, name: &str) -> Result<(Document, u64), StoreError> {
        let tx = self.conn.transaction().map_err(db("starting a read"))?;
        let revision = revision_in(&tx, name)?;
        let row = tx
            .query_row("SELECT doc FROM documents WHERE name = ?1", params![name], |r| r.get::<_, i64>(0))
            .optional()
            .map_err(db("finding the document"))?;
        let Some(doc) = row else {
            drop(tx);
            let names: Vec<String> = self.documents()?.into_iter().map(|d| d.name).collect();
            return Err(StoreError::NoSuchDocument { name: name.to_owned(), available: list(&names) });
        };
        let document = codec::read_document(&tx, doc, name)?;
        tx.commit().map_err(db("ending a read"))?;
        Ok((document, revision))
    }

    /// Writes what changed since a copy of document `name` was loaded at
    /// revision `expected` — the document and its snapshots when given, a
    /// named session's record when given — in one transaction, only if the
    /// stored document is still at that revision; otherwise nothing is
    /// written and [`StoreError::Conflict`] says so. Returns the revision
    /// the document has after the write.
    pub fn save_checked(
        &mut self,
        name: &str,
        expected: u64,
        document: Option<(&Document, &[Snapshot])>,
        session: Option<(&str, &str)>,
    ) -> Result<u64, StoreError> {
        // IMMEDIATE: the write lock is taken before the check, so no other
        // writer can come in between them.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(db("starting a transaction"))?;
        let found = revision_in(&tx, name)?;
        if found != expected {
            return Err(StoreError::Conflict { document: name.to_owned(), expected, found });
        }
        if let Some((doc, snapshots)) = document {
            write_with_snapshots(&tx, doc, snapshots)?;
        }
        if let Some((session, record)) = session {
            write_session(&tx, name, session, record)?;
        }
        let revision = revision_in(&tx, name)?;
        tx.commit().map_err(db("committing the document"))?;
        Ok(revision)
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

    /// Saves a session's JSON record under `(document, name)`, and, when
    /// given, the document and its snapshots, all in one transaction.
    pub fn save_session(
        &mut self,
        document: &str,
        name: &str,
        record: &str,
        changed: Option<(&Document, &[Snapshot])>,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction().map_err(db("starting a transaction"))?;
        if let Some((doc, snapshots)) = changed {
            write_with_snapshots(&tx, doc, snapshots)?;
        }
        write_session(&tx, document, name, record)?;
        tx.commit().map_err(db("committing the session"))
    }

    /// The JSON record of a named session of a document, if stored.
    pub fn load_session(&self, document: &str, name: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row("SELECT body FROM sessions WHERE document = ?1 AND name = ?2", params![document, name], |r| {
                r.get(0)
            })
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

/// Writes a named session's record inside `tx`.
fn write_session(tx: &rusqlite::Transaction, document: &str, name: &str, record: &str) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO sessions (document, name, body, updated_ms) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (document, name) DO UPDATE SET body = excluded.body, updated_ms = excluded.updated_ms",
        params![document, name, record, ucm_core::now_ms()],
    )
    .map_err(db("writing a session"))?;
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

/// Writes a document and sets its snapshots to exactly `snapshots` inside
/// `tx`; snapshots already stored unchanged are not rewritten.
fn write_with_snapshots(
    tx: &rusqlite::Transaction,
    document: &Document,
    snapshots: &[Snapshot],
) -> Result<(), StoreError> {
    check_document_name(document.name())?;
    codec::write_document(tx, document)?;
    let stored: Vec<(String, i64)> = {
        let mut query = tx
            .prepare("SELECT name, created_ms FROM snapshots WHERE document = ?1")
            .map_err(db("listing snapshots"))?;
        let rows = query
            .query_map(params![document.name()], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(db("listing snapshots"))?;
        rows.collect::<Result<_, _>>().map_err(db("listing snapshots"))?
    };
    for (name, created_ms) in &stored {
        if !snapshots.iter().any(|s| s.name == *name && s.created_ms == *created_ms) {
            tx.execute("DELETE FROM snapshots WHERE document = ?1 AND name = ?2", params![document.name(), name])
                .map_err(db("deleting a snapshot"))?;
        }
    }
    for snapshot in snapshots {
        if !stored.iter().any(|(name, created)| *name == snapshot.name && *created == snapshot.created_ms) {
            tx.execute(
                "INSERT INTO snapshots (document, name, description, created_ms, block_count, body)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    document.name(),
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

    /// Deletes a document and its snapshots; false when there was none of
    /// that name.
    pub fn delete_document(&mut self, name: &str) -> Result<bool, StoreError> {
        let tx = self.conn.transaction().map_err(db("starting a transaction"))?;
        let n = tx.execute("DELETE FROM documents WHERE name = ?1", params![name]).map_err(db("deleting"))?;
        tx.execute("DELETE FROM snapshots WHERE document = ?1", params![name]).map_err(db("deleting snapshots"))?;
        tx.execute("DELETE FROM sessions WHERE document = ?1", params![name]).map_err(db("deleting sessions"))?;
        // A deletion is a write too: a copy loaded before it is stale.
        tx.execute(
            "INSERT INTO revisions (document, revision) VALUES (?1, 1)
             ON CONFLICT (document) DO UPDATE SET revision = revision + 1",
            params![name],
        )
        .map_err(db("counting the document's revision"))?;
        tx.commit().map_err(db("committing the deletion"))?;
        Ok(n > 0)
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

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}
