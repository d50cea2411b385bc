//! The database schema and its migrations.

use rusqlite::Connection;

use crate::{db, StoreError};

/// Schema version this build writes.
pub(crate) const SCHEMA_VERSION: i64 = 4;

const V1: &str = "
CREATE TABLE documents (
    doc          INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    version      INTEGER NOT NULL,
    metadata     TEXT NOT NULL,          -- DocumentMetadata as JSON
    block_count  INTEGER NOT NULL,
    token_count  INTEGER NOT NULL,
    edge_count   INTEGER NOT NULL,
    saved_ms     INTEGER NOT NULL
);
-- One row per block, in document order (seq). The tree is stored as parent
-- pointers: children are rebuilt in seq order when loading.
CREATE TABLE blocks (
    doc          INTEGER NOT NULL REFERENCES documents(doc) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    id           BLOB NOT NULL,          -- 12 bytes
    parent       BLOB,                   -- NULL for the root and orphans
    kind         TEXT NOT NULL,          -- content variant
    body         TEXT,                   -- text or code source
    fmt          TEXT,                   -- text format or code language
    content      TEXT,                   -- other variants as JSON
    role         TEXT,
    label        TEXT,
    tokens       INTEGER,
    src_file     TEXT,
    src_start    INTEGER,
    src_end      INTEGER,
    created_ms   INTEGER NOT NULL,
    modified_ms  INTEGER NOT NULL,
    extra        TEXT,                   -- tags, summary, custom as JSON
    PRIMARY KEY (doc, seq)
);
CREATE UNIQUE INDEX blocks_by_id ON blocks(doc, id);
CREATE TABLE edges (
    doc          INTEGER NOT NULL REFERENCES documents(doc) ON DELETE CASCADE,
    seq          INTEGER NOT NULL,
    source       BLOB NOT NULL,
    type         TEXT NOT NULL,
    target       BLOB NOT NULL,
    metadata     TEXT,
    PRIMARY KEY (doc, seq)
);
CREATE INDEX edges_by_target ON edges(doc, target);
";

/// Snapshots (SNAPSHOT CREATE) keyed by document name, so they survive
/// re-saving and re-indexing the document.
const V2: &str = "
CREATE TABLE snapshots (
    document     TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT,
    created_ms   INTEGER NOT NULL,
    block_count  INTEGER NOT NULL,
    body         TEXT NOT NULL,          -- the document's JSON form
    PRIMARY KEY (document, name)
);
";

/// Named agent sessions (cursor, history, context window, id map) keyed by
/// document name, stored as the session's JSON record.
const V3: &str = "
CREATE TABLE sessions (
    document     TEXT NOT NULL,
    name         TEXT NOT NULL,
    body         TEXT NOT NULL,
    updated_ms   INTEGER NOT NULL,
    PRIMARY KEY (document, name)
);
";

/// Each document's revision: bumped by every write of it, so a writer can
/// check that the document is still the one it loaded (kept apart from
/// `documents`, whose row a write replaces).
const V4: &str = "
CREATE TABLE revisions (
    document     TEXT PRIMARY KEY,
    revision     INTEGER NOT NULL
);
INSERT INTO revisions (document, revision) SELECT name, 1 FROM documents;
";

/// Brings the database to [`SCHEMA_VERSION`].
pub(crate) fn migrate(conn: &Connection) -> Result<(), StoreError> {
    let version = || -> Result<i64, StoreError> {
        conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(db("reading the schema version"))
    };
    let found = version()?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew { found, supported: SCHEMA_VERSION });
    }
    if found < SCHEMA_VERSION {
        // Take the write lock first, then look again: two processes opening
        // a new store at once must not both create the tables.
        conn.execute_batch("BEGIN IMMEDIATE").map_err(db("locking the database for migration"))?;
        let migrated = match version() {
            Ok(0) => conn
                .execute_batch(&format!("{V1} {V2} {V3} {V4} PRAGMA user_version = 4;"))
                .map_err(db("creating the schema")),
            Ok(1) => {
                conn.execute_batch(&format!("{V2} {V3} {V4} PRAGMA user_version = 4;")).map_err(db("adding snapshots"))
            }
            Ok(2) => conn.execute_batch(&format!("{V3} {V4} PRAGMA user_version = 4;")).map_err(db("adding sessions")),
            Ok(3) => conn.execute_batch(&format!("{V4} PRAGMA user_version = 4;")).map_err(db("adding revisions")),
            Ok(_) => Ok(()),
            Err(err) => Err(err),
        };
        let end = if migrated.is_ok() { "COMMIT" } else { "ROLLBACK" };
        conn.execute_batch(end).map_err(db("finishing the migration"))?;
        migrated?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_one_databases_gain_the_snapshot_table() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!("{V1} PRAGMA user_version = 1;")).unwrap();
        migrate(&conn).unwrap();
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        conn.execute("INSERT INTO snapshots VALUES ('d', 's', NULL, 1, 1, '{}')", []).unwrap();
        conn.execute("INSERT INTO sessions VALUES ('d', 's', '{}', 1)", []).unwrap();
        conn.execute("INSERT INTO revisions VALUES ('d', 1)", []).unwrap();
    }

    #[test]
    fn version_three_databases_count_their_documents_as_written_once() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!("{V1} {V2} {V3} PRAGMA user_version = 3;")).unwrap();
        conn.execute("INSERT INTO documents VALUES (1, 'd', 1, '{}', 1, 0, 0, 0)", []).unwrap();
        migrate(&conn).unwrap();
        let revision: i64 =
            conn.query_row("SELECT revision FROM revisions WHERE document = 'd'", [], |r| r.get(0)).unwrap();
        assert_eq!(revision, 1);
    }
}
