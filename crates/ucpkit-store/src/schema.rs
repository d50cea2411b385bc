//! The database schema and its migrations.

use std::collections::HashMap;

use rusqlite::{params, Connection};

use crate::{db, StoreError};

/// Schema version this build writes.
pub(crate) const SCHEMA_VERSION: i64 = 10;

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
";

/// Blocks and edges up to schema 4: one row per block in document order
/// (seq), the tree as parent pointers (what migrations start from).
#[cfg(test)]
const BLOCKS_V1: &str = "
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
/// Blocks and edges from schema 5: a block's row holds its ordered
/// children, so an edit rewrites the rows it touches and no others
/// (positions are not numbers that shift). Rows are kept in key order, so
/// a document's rows are read in one sweep.
const BLOCKS_V5: &str = "
CREATE TABLE blocks (
    doc          INTEGER NOT NULL REFERENCES documents(doc) ON DELETE CASCADE,
    id           BLOB NOT NULL,          -- 12 bytes
    parent       BLOB,                   -- NULL for the root and orphans
    children     BLOB,                   -- the children's ids in order, 12 bytes each
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
    PRIMARY KEY (doc, id)
) WITHOUT ROWID;
-- A block's outgoing edges, in order (seq).
CREATE TABLE edges (
    doc          INTEGER NOT NULL REFERENCES documents(doc) ON DELETE CASCADE,
    source       BLOB NOT NULL,
    seq          INTEGER NOT NULL,
    type         TEXT NOT NULL,
    target       BLOB NOT NULL,
    metadata     TEXT,
    PRIMARY KEY (doc, source, seq)
) WITHOUT ROWID;
";

/// Named sessions get a revision from schema 5: a save checks it, so two
/// holders of one session never overwrite each other.
const SESSIONS_V5: &str = "ALTER TABLE sessions ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;";

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

/// From schema 6: what each document was indexed from (ingest's record of
/// its source files), valid while the document's revision is `revision`,
/// so indexing the same folder again reads only the files that changed.
const V6: &str = "
CREATE TABLE sources (
    document     TEXT PRIMARY KEY,
    revision     INTEGER NOT NULL,
    body         BLOB NOT NULL,          -- what every index of it reads
    links        BLOB NOT NULL           -- read only when files changed
);
";

/// From schema 7: edges found by their target, so a call that reads part
/// of a document also finds the edges that reach it (and counting a
/// block's incoming edges does not scan the document's edges).
const V7: &str = "CREATE INDEX edges_by_target ON edges(doc, target);";

/// From schema 8: agent transcripts by session name, with a revision a
/// save checks.
const V8: &str = "
CREATE TABLE transcripts (
    name         TEXT PRIMARY KEY,
    body         TEXT NOT NULL,
    updated_ms   INTEGER NOT NULL,
    revision     INTEGER NOT NULL
);
";

/// From schema 9: which blocks each write of a document changed, for its
/// latest writes, so a copy read some revisions ago is brought up to date
/// by reading those blocks alone ([`crate::Store::catch_up`]). `blocks`
/// holds their ids, 12 bytes each; NULL when the write replaced the
/// document whole.
const V9: &str = "
CREATE TABLE block_changes (
    document     TEXT NOT NULL,
    revision     INTEGER NOT NULL,
    blocks       BLOB,
    PRIMARY KEY (document, revision)
) WITHOUT ROWID;
";

/// From schema 10: embedding vectors of a document's block texts, by
/// model and text (`key`: 16 bytes of the text's BLAKE3 hash; `vector`:
/// little-endian `f32`s), so a node (or a rebuilt index) reuses what
/// another embedded.
const V10: &str = "
CREATE TABLE vectors (
    document     TEXT NOT NULL,
    model        TEXT NOT NULL,
    key          BLOB NOT NULL,
    vector       BLOB NOT NULL,
    PRIMARY KEY (document, model, key)
) WITHOUT ROWID;
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
                .execute_batch(&format!(
                    "{V1} {BLOCKS_V5} {V2} {V3} {V4} {SESSIONS_V5} {V6} {V7} {V8} {V9} {V10} PRAGMA user_version = 10;"
                ))
                .map_err(db("creating the schema")),
            Ok(found @ 1..=4) => {
                let missing = [V2, V3, V4][(found as usize - 1).min(3)..].concat();
                conn.execute_batch(&missing)
                    .map_err(db("adding tables"))
                    .and_then(|()| to_schema_5(conn))
                    .and_then(|()| to_schema_6(conn))
                    .and_then(|()| to_schema_7(conn))
                    .and_then(|()| to_schema_8(conn))
                    .and_then(|()| to_schema_9(conn))
                    .and_then(|()| to_schema_10(conn))
            }
            Ok(found @ 5..=9) => {
                let steps = [to_schema_6, to_schema_7, to_schema_8, to_schema_9, to_schema_10];
                steps[found as usize - 5..].iter().try_for_each(|step| step(conn))
            }
            Ok(_) => Ok(()),
            Err(err) => Err(err),
        };
        let end = if migrated.is_ok() { "COMMIT" } else { "ROLLBACK" };
        conn.execute_batch(end).map_err(db("finishing the migration"))?;
        migrated?;
    }
    Ok(())
}

/// Schema 4 to 5: blocks and edges move to tables keyed by id, each
/// block's row holding its ordered children (taken from the old document
/// order); sessions get a revision.
fn to_schema_5(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(&format!(
        "DROP INDEX blocks_by_id; DROP INDEX edges_by_target;
         ALTER TABLE blocks RENAME TO blocks_v4; ALTER TABLE edges RENAME TO edges_v4;
         {BLOCKS_V5}
         {SESSIONS_V5}
         INSERT INTO blocks (doc, id, parent, kind, body, fmt, content, role, label, tokens, src_file, src_start,
                             src_end, created_ms, modified_ms, extra)
             SELECT doc, id, parent, kind, body, fmt, content, role, label, tokens, src_file, src_start, src_end,
                    created_ms, modified_ms, extra
             FROM blocks_v4;
         INSERT INTO edges (doc, source, seq, type, target, metadata)
             SELECT doc, source, row_number() OVER (PARTITION BY doc, source ORDER BY seq) - 1, type, target, metadata
             FROM edges_v4;"
    ))
    .map_err(db("moving blocks to schema 5"))?;
    let mut children: HashMap<(i64, Vec<u8>), Vec<u8>> = HashMap::new();
    {
        let mut query = conn
            .prepare("SELECT doc, id, parent FROM blocks_v4 WHERE parent IS NOT NULL ORDER BY doc, seq")
            .map_err(db("reading the tree"))?;
        let mut rows = query.query([]).map_err(db("reading the tree"))?;
        while let Some(row) = rows.next().map_err(db("reading the tree"))? {
            let (doc, id, parent): (i64, Vec<u8>, Vec<u8>) =
                (row.get(0).map_err(db("reading the tree"))?, row.get(1).map_err(db("reading the tree"))?, {
                    row.get(2).map_err(db("reading the tree"))?
                });
            children.entry((doc, parent)).or_default().extend(id);
        }
    }
    let mut update =
        conn.prepare("UPDATE blocks SET children = ?3 WHERE doc = ?1 AND id = ?2").map_err(db("writing the tree"))?;
    for ((doc, parent), ids) in children {
        update.execute(params![doc, parent, ids]).map_err(db("writing the tree"))?;
    }
    conn.execute_batch("DROP TABLE blocks_v4; DROP TABLE edges_v4; PRAGMA user_version = 5;")
        .map_err(db("finishing schema 5"))
}

/// Schema 5 to 6: the table of what documents were indexed from (empty:
/// the next index of each document reads every file once).
fn to_schema_6(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(&format!("{V6} PRAGMA user_version = 6;")).map_err(db("adding the sources table"))
}

fn to_schema_7(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(&format!("{V7} PRAGMA user_version = 7;")).map_err(db("indexing edges by target"))
}

fn to_schema_8(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(&format!("{V8} PRAGMA user_version = 8;")).map_err(db("adding the transcripts table"))
}

/// Schema 8 to 9: the log of changed blocks, empty (a copy read before
/// is read whole once more).
fn to_schema_9(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(&format!("{V9} PRAGMA user_version = 9;")).map_err(db("adding the log of changed blocks"))
}

/// Schema 9 to 10: the table of stored vectors, empty.
fn to_schema_10(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(&format!("{V10} PRAGMA user_version = 10;")).map_err(db("adding the vectors table"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_one_databases_gain_the_snapshot_table() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!("{V1} {BLOCKS_V1} PRAGMA user_version = 1;")).unwrap();
        migrate(&conn).unwrap();
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        conn.execute("INSERT INTO snapshots VALUES ('d', 's', NULL, 1, 1, '{}')", []).unwrap();
        conn.execute("INSERT INTO sessions VALUES ('d', 's', '{}', 1, 1)", []).unwrap();
        conn.execute("INSERT INTO revisions VALUES ('d', 1)", []).unwrap();
        conn.execute("INSERT INTO sources VALUES ('d', 1, x'00', x'00')", []).unwrap();
        conn.execute("INSERT INTO transcripts VALUES ('s', '{}', 1, 1)", []).unwrap();
        conn.execute("INSERT INTO block_changes VALUES ('d', 1, NULL)", []).unwrap();
        conn.execute("INSERT INTO vectors VALUES ('d', 'm', x'00', x'00')", []).unwrap();
    }

    #[test]
    fn every_later_version_reaches_the_current_one() {
        let tables = [V1, BLOCKS_V5, V2, V3, V4, SESSIONS_V5, V6, V7, V8, V9, V10];
        // Schema `found` holds the first `through` of them.
        for (found, through) in [(5, 6), (6, 7), (7, 8), (8, 9), (9, 10)] {
            let conn = Connection::open_in_memory().unwrap();
            conn.execute_batch(&format!("{} PRAGMA user_version = {found};", tables[..through].concat())).unwrap();
            migrate(&conn).unwrap();
            let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
            assert_eq!(version, SCHEMA_VERSION, "from schema {found}");
            conn.execute("INSERT INTO block_changes VALUES ('d', 1, NULL)", []).unwrap();
            conn.execute("INSERT INTO transcripts VALUES ('s', '{}', 1, 1)", []).unwrap();
            conn.execute("INSERT INTO vectors VALUES ('d', 'm', x'00', x'00')", []).unwrap();
        }
    }

    #[test]
    fn version_three_databases_count_their_documents_as_written_once() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!("{V1} {BLOCKS_V1} {V2} {V3} PRAGMA user_version = 3;")).unwrap();
        conn.execute("INSERT INTO documents VALUES (1, 'd', 1, '{}', 1, 0, 0, 0)", []).unwrap();
        migrate(&conn).unwrap();
        let revision: i64 =
            conn.query_row("SELECT revision FROM revisions WHERE document = 'd'", [], |r| r.get(0)).unwrap();
        assert_eq!(revision, 1);
    }

    #[test]
    fn version_four_trees_become_children_lists_in_document_order() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!("{V1} {BLOCKS_V1} {V2} {V3} {V4} PRAGMA user_version = 4;")).unwrap();
        conn.execute("INSERT INTO documents VALUES (1, 'd', 7, '{}', 4, 0, 1, 0)", []).unwrap();
        let id = |n: u8| vec![n; 12];
        let rows = [(0, id(0), None), (1, id(9), Some(id(0))), (2, id(5), Some(id(9))), (3, id(3), Some(id(0)))];
        for (seq, block, parent) in rows {
            conn.execute(
                "INSERT INTO blocks (doc, seq, id, parent, kind, created_ms, modified_ms)
                 VALUES (1, ?1, ?2, ?3, 'composite', 0, 0)",
                params![seq, block, parent],
            )
            .unwrap();
        }
        conn.execute("INSERT INTO edges VALUES (1, 0, ?1, 'references', ?2, NULL)", params![id(5), id(3)]).unwrap();
        migrate(&conn).unwrap();
        let children = |block: Vec<u8>| -> Option<Vec<u8>> {
            conn.query_row("SELECT children FROM blocks WHERE id = ?1", params![block], |r| r.get(0)).unwrap()
        };
        assert_eq!(children(id(0)), Some([id(9), id(3)].concat()), "the root's children in their old order");
        assert_eq!(children(id(9)), Some(id(5)));
        assert_eq!(children(id(5)), None);
        let edges: i64 =
            conn.query_row("SELECT count(*) FROM edges WHERE source = ?1", params![id(5)], |r| r.get(0)).unwrap();
        assert_eq!(edges, 1);
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
    }
}
