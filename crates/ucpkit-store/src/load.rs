//! Rows back to documents. A big document's rows are read by several
//! threads at once, each over its own range of ids and its own connection,
//! all at one revision (a read that saw a write come in between is done
//! again), so a load costs less than reading row after row.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use rusqlite::{Connection, OpenFlags};
use serde_json::Value;
use ucpkit_core::{
    Block, BlockId, Content, Document, DocumentLoader, DocumentMetadata, Edge, EdgeMetadata, Metadata, Role,
    SourceLocation, TextFormat, Timestamps,
};

use crate::sql::{args, Cells, Tx};
use crate::{db, revision_in, StoreError};

/// Documents of fewer blocks are read by one thread.
const PARALLEL_FROM: usize = 20_000;

/// At most this many threads read one document.
const MAX_READERS: usize = 4;

/// Loads tried in parts, each undone by a writer coming in, before one
/// thread reads everything instead.
pub(crate) const TRIES: usize = 4;

/// A block as read, with its ordered children.
pub(crate) type Row = (Block, Vec<BlockId>);

/// What the `documents` row says of a stored document.
pub(crate) struct Header {
    pub(crate) version: u64,
    pub(crate) metadata: DocumentMetadata,
    pub(crate) blocks: usize,
}

/// Reads document number `doc` (named `name`) back into the model, in
/// `tx` alone.
pub(crate) fn read_document(tx: &Tx<'_>, doc: i64, name: &str) -> Result<Document, StoreError> {
    let header = read_header(tx, doc, name)?;
    let rows = read_blocks(tx, doc, name, &IdRange::ALL)?;
    let edges = read_edges(tx, doc, name)?;
    Ok(assemble(name, header, vec![rows], edges))
}

/// Where the helper threads of [`read_in_parts`] read from.
pub(crate) enum Helpers<'a> {
    /// The SQLite database at this path, each on a connection of its own.
    Sqlite(&'a Path),
    /// The PostgreSQL server these settings reach, each on a connection of
    /// its own at the reading transaction's snapshot.
    #[cfg(feature = "postgres")]
    Postgres(&'a crate::postgres_tls::Settings),
}

/// Reads document number `doc` (named `name`) as the store holds it at
/// `revision`, which read transaction `tx` sees, splitting a big
/// document's rows between threads reading through `helpers`.
/// `Ok(None)`: a part was read at another revision (a writer came in);
/// read again.
pub(crate) fn read_in_parts(
    tx: &Tx<'_>,
    helpers: Helpers<'_>,
    doc: i64,
    name: &str,
    revision: u64,
) -> Result<Option<Document>, StoreError> {
    let header = read_header(tx, doc, name)?;
    let readers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_READERS);
    if header.blocks < PARALLEL_FROM || readers < 2 {
        return read_document(tx, doc, name).map(Some);
    }
    #[cfg(feature = "postgres")]
    let snapshot = match helpers {
        Helpers::Postgres(_) => {
            const EXPORTING: &str = "sharing the read's snapshot";
            tx.first(EXPORTING, "SELECT pg_export_snapshot()", &[], |row| row.string(0).map_err(db(EXPORTING)))?
        }
        Helpers::Sqlite(_) => None,
    };
    let read_part = |range: &IdRange| match helpers {
        Helpers::Sqlite(path) => read_part(path, doc, name, range),
        #[cfg(feature = "postgres")]
        Helpers::Postgres(settings) => {
            let snapshot = snapshot.as_deref().expect("exported above");
            crate::postgres::Client::read_in_snapshot(settings, snapshot, |tx| {
                // The snapshot is the reading transaction's: its revision.
                Ok((revision, read_blocks(tx, doc, name, range)?))
            })
        }
    };
    let ranges = IdRange::split(readers);
    let (mine, others) = ranges.split_first().expect("at least two ranges");
    let (rows, edges, parts) = std::thread::scope(|scope| {
        let read_part = &read_part;
        let readers: Vec<_> = others.iter().map(|range| scope.spawn(move || read_part(range))).collect();
        let rows = read_blocks(tx, doc, name, mine);
        let edges = read_edges(tx, doc, name);
        let parts: Vec<_> = readers.into_iter().map(|r| r.join().expect("a reader thread does not panic")).collect();
        (rows, edges, parts)
    });
    let mut all = vec![rows?];
    for part in parts {
        let (seen, rows) = part?;
        if seen != revision {
            return Ok(None);
        }
        all.push(rows);
    }
    Ok(Some(assemble(name, header, all, edges?)))
}

/// Reads the blocks of `range` on a connection of its own, with the
/// revision its read saw.
fn read_part(path: &Path, doc: i64, name: &str, range: &IdRange) -> Result<(u64, Vec<Row>), StoreError> {
    let mut conn =
        Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .map_err(db("opening the database"))?;
    conn.busy_timeout(crate::BUSY_WAIT).map_err(db("setting the busy timeout"))?;
    let tx = conn.transaction().map_err(db("starting a read"))?;
    let revision = revision_in(&Tx::Sqlite(&tx), name)?;
    let rows = read_blocks(&Tx::Sqlite(&tx), doc, name, range)?;
    tx.commit().map_err(db("ending a read"))?;
    Ok((revision, rows))
}

/// Ids whose first byte lies in `[from, to)` (`to` = 256: to the end).
struct IdRange {
    from: u8,
    to: u16,
}

impl IdRange {
    const ALL: IdRange = IdRange { from: 0, to: 256 };

    /// `n` ranges covering every id (ids are hashes, spread evenly).
    fn split(n: usize) -> Vec<IdRange> {
        let bound = |k: usize| (k * 256 / n) as u16;
        (0..n).map(|k| IdRange { from: bound(k) as u8, to: bound(k + 1) }).collect()
    }

    /// The SQL bounds: a one-byte blob sorts before every 12-byte id that
    /// starts with that byte.
    fn bounds(&self) -> (Vec<u8>, Vec<u8>) {
        let to = if self.to > 255 { vec![0xff; 13] } else { vec![self.to as u8] };
        (vec![self.from], to)
    }
}

pub(crate) fn read_header(tx: &Tx<'_>, doc: i64, name: &str) -> Result<Header, StoreError> {
    const CONTEXT: &str = "reading the document";
    let (version, metadata, blocks) = tx
        .first(CONTEXT, "SELECT version, metadata, block_count FROM documents WHERE doc = ?1", args![doc], |r| {
            let int = |i| r.int_of(i).map_err(db(CONTEXT));
            Ok((int(0)?, r.string(1).map_err(db(CONTEXT))?, int(2)?))
        })?
        .ok_or_else(|| corrupt(name, "the document's row is missing".into()))?;
    let metadata = serde_json::from_str(&metadata).map_err(|e| corrupt(name, format!("document metadata: {e}")))?;
    Ok(Header { version: version as u64, metadata, blocks: blocks.max(0) as usize })
}

pub(crate) fn corrupt(name: &str, detail: String) -> StoreError {
    StoreError::Corrupt { document: name.to_owned(), detail }
}

/// Builds the document from its rows and edges.
fn assemble(name: &str, header: Header, parts: Vec<Vec<Row>>, edges: Vec<Edge>) -> Document {
    let mut loader = DocumentLoader::new(name, header.metadata, header.version, header.blocks);
    for (block, children) in parts.into_iter().flatten() {
        loader.push(block, children);
    }
    for edge in edges {
        loader.push_edge(edge);
    }
    loader.finish()
}

/// The blocks of document `doc` whose ids lie in `range`.
fn read_blocks(tx: &Tx<'_>, doc: i64, name: &str, range: &IdRange) -> Result<Vec<Row>, StoreError> {
    let (from, to) = range.bounds();
    let mut files: HashMap<String, Arc<str>> = HashMap::new();
    tx.all("reading blocks", READ_RANGE, args![doc, &from, &to], |row| decode_block(row, name, &mut files))
}

/// The columns [`decode_block`] reads, in its order.
macro_rules! block_columns {
    () => {
        "id, children, kind, body, fmt, content, role, label, tokens, src_file, src_start, src_end, created_ms, \
         modified_ms, extra"
    };
}
pub(crate) use block_columns;

/// The blocks of a document with ids in a range.
const READ_RANGE: &str =
    concat!("SELECT ", block_columns!(), " FROM blocks WHERE doc = ?1 AND id >= ?2 AND id < ?3 ORDER BY id");

/// One block of a document, with its parent after the columns of `block_columns!`.
pub(crate) const READ_ONE: &str =
    concat!("SELECT ", block_columns!(), ", parent FROM blocks WHERE doc = ?1 AND id = ?2");

/// A block row (its first columns those of `block_columns!`) back into a block
/// with its ordered children; file names are shared through `files`.
pub(crate) fn decode_block(
    row: &Cells<'_>,
    name: &str,
    files: &mut HashMap<String, Arc<str>>,
) -> Result<Row, StoreError> {
    let corrupt = |detail: String| corrupt(name, detail);
    let id = block_id(row.bytes(0).ok().flatten()).ok_or_else(|| corrupt("bad block id".into()))?;
    let children = match row.bytes(1).ok().flatten() {
        Some(bytes) if bytes.len() % 12 == 0 => {
            bytes.chunks_exact(12).map(|c| block_id(Some(c)).expect("12 bytes")).collect()
        }
        Some(_) => return Err(corrupt(format!("bad children of {id}"))),
        None => Vec::new(),
    };
    const READING: &str = "reading blocks";
    let text = |i| row.opt_string(i).map_err(db(READING));
    let kind = row.string(2).map_err(db(READING))?;
    let content =
        join_content(&kind, text(3)?, text(4)?, text(5)?).map_err(|e| corrupt(format!("content of {id}: {e}")))?;
    let small = |i: usize| -> Result<Option<u32>, StoreError> {
        let value = row.int(i).map_err(db(READING))?;
        value.map(|v| u32::try_from(v).map_err(|_| corrupt(format!("column {i} of {id} out of range")))).transpose()
    };
    let mut meta = Metadata {
        role: row.text(6).map_err(db(READING))?.map(|r| r.parse::<Role>().unwrap_or_else(|n| match n {})),
        label: text(7)?,
        tokens: small(8)?,
        timestamps: Timestamps {
            created_ms: row.int_of(12).map_err(db(READING))?,
            modified_ms: row.int_of(13).map_err(db(READING))?,
        },
        ..Metadata::default()
    };
    if let Some(file) = row.text(9).map_err(db(READING))? {
        let file = match files.get(file) {
            Some(shared) => shared.clone(),
            None => files.entry(file.to_owned()).or_insert_with_key(|f| Arc::from(f.as_str())).clone(),
        };
        meta.source =
            Some(SourceLocation { file, start_line: small(10)?.unwrap_or(0), end_line: small(11)?.unwrap_or(0) });
    }
    if let Some(extra) = row.text(14).map_err(db(READING))? {
        apply_extra(&mut meta, extra).map_err(|e| corrupt(format!("metadata of {id}: {e}")))?;
    }
    Ok((Block::new(id, content, meta), children))
}

/// The edges of document `doc`, each source's in order.
fn read_edges(tx: &Tx<'_>, doc: i64, name: &str) -> Result<Vec<Edge>, StoreError> {
    tx.all(
        "reading edges",
        "SELECT source, type, target, metadata FROM edges WHERE doc = ?1 ORDER BY source, seq",
        args![doc],
        |row| decode_edge(row, name),
    )
}

/// An edge row (`source, type, target, metadata` first) back into an edge.
pub(crate) fn decode_edge(row: &Cells<'_>, name: &str) -> Result<Edge, StoreError> {
    let corrupt = |detail: String| corrupt(name, detail);
    let source = block_id(row.bytes(0).ok().flatten()).ok_or_else(|| corrupt("bad edge source".into()))?;
    let target = block_id(row.bytes(2).ok().flatten()).ok_or_else(|| corrupt("bad edge target".into()))?;
    let edge_type = row.string(1).map_err(db("reading edges"))?;
    let edge_type = edge_type.parse().map_err(|e| corrupt(format!("{e}")))?;
    let metadata: EdgeMetadata = match row.text(3).map_err(db("reading edges"))? {
        Some(json) => serde_json::from_str(json).map_err(|e| corrupt(format!("edge metadata: {e}")))?,
        None => EdgeMetadata::default(),
    };
    Ok(Edge { source, edge_type, target, metadata })
}

pub(crate) fn block_id(bytes: Option<&[u8]>) -> Option<BlockId> {
    let bytes: [u8; 12] = bytes?.try_into().ok()?;
    Some(BlockId::from_bytes(bytes))
}

fn join_content(
    kind: &str,
    body: Option<String>,
    fmt: Option<String>,
    json: Option<String>,
) -> Result<Content, String> {
    Ok(match kind {
        "text" => {
            let format = match fmt.as_deref() {
                None => TextFormat::Markdown,
                Some("plain") => TextFormat::Plain,
                Some("html") => TextFormat::Html,
                Some(other) => return Err(format!("unknown text format {other:?}")),
            };
            Content::Text { text: body.unwrap_or_default(), format }
        }
        "code" => Content::Code { language: fmt, source: body.unwrap_or_default() },
        "composite" => Content::Composite,
        _ => {
            let json = json.ok_or_else(|| format!("{kind} content without data"))?;
            serde_json::from_str(&json).map_err(|e| e.to_string())?
        }
    })
}

fn apply_extra(meta: &mut Metadata, extra: &str) -> Result<(), serde_json::Error> {
    #[derive(serde::Deserialize)]
    struct Extra {
        #[serde(default)]
        tags: Vec<String>,
        #[serde(default)]
        summary: Option<String>,
        #[serde(default)]
        custom: std::collections::BTreeMap<String, Value>,
    }
    let extra: Extra = serde_json::from_str(extra)?;
    meta.tags = extra.tags;
    meta.summary = extra.summary;
    meta.custom = extra.custom;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_core::EdgeType;

    #[test]
    fn ranges_cover_every_first_byte_once() {
        for n in 1..=MAX_READERS {
            let ranges = IdRange::split(n);
            for byte in 0..=255u8 {
                let id = [byte; 12];
                let holders = ranges
                    .iter()
                    .filter(|r| {
                        let (from, to) = r.bounds();
                        from.as_slice() <= &id[..] && &id[..] < to.as_slice()
                    })
                    .count();
                assert_eq!(holders, 1, "byte {byte} with {n} ranges");
            }
        }
    }

    #[test]
    fn a_big_document_read_in_parts_is_the_document_written() {
        let mut doc = Document::new("big");
        let mut parent = BlockId::ROOT;
        for n in 0..(PARALLEL_FROM as u32 + 500) {
            let content = Content::markdown(format!("block {n}"));
            let id = Block::derive_id(&content, Some(&Role::Paragraph), "", n);
            doc.append_child(parent, Block::new(id, content, Metadata::with_role(Role::Paragraph))).unwrap();
            if n % 50 == 0 {
                parent = id;
            }
            if n % 7 == 0 && parent != id {
                doc.add_edge(Edge::new(id, EdgeType::References, parent)).unwrap();
            }
        }
        for place in crate::testing::places() {
            let mut store = place.open();
            let revision = store.save_document(&doc).unwrap();
            let (back, seen) = store.load_with_revision("big").unwrap();
            assert_eq!(seen, revision, "{}", place.backend);
            assert_eq!(back.to_json(false), doc.to_json(false), "{}", place.backend);
        }
    }
}
