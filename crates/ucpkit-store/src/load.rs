//! Rows back to documents. A big document's rows are read by several
//! threads at once, each over its own range of ids and its own connection,
//! all at one revision (a read that saw a write come in between is done
//! again), so a load costs less than reading row after row.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use rusqlite::{params, Connection, OpenFlags};
use serde_json::Value;
use ucpkit_core::{
    Block, BlockId, Content, Document, DocumentLoader, DocumentMetadata, Edge, EdgeMetadata, Metadata, Role,
    SourceLocation, TextFormat, Timestamps,
};

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
    blocks: usize,
}

/// Reads document number `doc` (named `name`) back into the model, on
/// `conn` alone.
pub(crate) fn read_document(conn: &Connection, doc: i64, name: &str) -> Result<Document, StoreError> {
    let header = read_header(conn, doc, name)?;
    let rows = read_blocks(conn, doc, name, &IdRange::ALL)?;
    let edges = read_edges(conn, doc, name)?;
    Ok(assemble(name, header, vec![rows], edges))
}

/// Reads document number `doc` (named `name`) as the store holds it at
/// `revision`, which `conn`'s open read transaction sees, splitting a big
/// document's rows between threads reading the database at `path`.
/// `Ok(None)`: a part was read at another revision (a writer came in);
/// read again.
pub(crate) fn read_in_parts(
    conn: &Connection,
    path: &Path,
    doc: i64,
    name: &str,
    revision: u64,
) -> Result<Option<Document>, StoreError> {
    let header = read_header(conn, doc, name)?;
    let readers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_READERS);
    if header.blocks < PARALLEL_FROM || readers < 2 {
        return read_document(conn, doc, name).map(Some);
    }
    let ranges = IdRange::split(readers);
    let (mine, others) = ranges.split_first().expect("at least two ranges");
    let (rows, edges, parts) = std::thread::scope(|scope| {
        let readers: Vec<_> =
            others.iter().map(|range| scope.spawn(move || read_part(path, doc, name, range))).collect();
        let rows = read_blocks(conn, doc, name, mine);
        let edges = read_edges(conn, doc, name);
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
    let revision = revision_in(&tx, name)?;
    let rows = read_blocks(&tx, doc, name, range)?;
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

pub(crate) fn read_header(conn: &Connection, doc: i64, name: &str) -> Result<Header, StoreError> {
    let (version, metadata, blocks): (i64, String, i64) = conn
        .query_row("SELECT version, metadata, block_count FROM documents WHERE doc = ?1", params![doc], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(db("reading the document"))?;
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
fn read_blocks(conn: &Connection, doc: i64, name: &str, range: &IdRange) -> Result<Vec<Row>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!("SELECT {BLOCK_COLUMNS} FROM blocks WHERE doc = ?1 AND id >= ?2 AND id < ?3"))
        .map_err(db("reading blocks"))?;
    let (from, to) = range.bounds();
    let mut rows = stmt.query(params![doc, from, to]).map_err(db("reading blocks"))?;
    let mut files: HashMap<String, Arc<str>> = HashMap::new();
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(db("reading blocks"))? {
        out.push(decode_block(row, name, &mut files)?);
    }
    Ok(out)
}

/// The columns [`decode_block`] reads, in its order.
pub(crate) const BLOCK_COLUMNS: &str = "id, children, kind, body, fmt, content, role, label, tokens, src_file, \
     src_start, src_end, created_ms, modified_ms, extra";

/// A block row (its first columns [`BLOCK_COLUMNS`]) back into a block
/// with its ordered children; file names are shared through `files`.
pub(crate) fn decode_block(
    row: &rusqlite::Row<'_>,
    name: &str,
    files: &mut HashMap<String, Arc<str>>,
) -> Result<Row, StoreError> {
    let corrupt = |detail: String| corrupt(name, detail);
    let id = block_id(row.get_ref(0).map_err(db("reading blocks"))?.as_blob().ok())
        .ok_or_else(|| corrupt("bad block id".into()))?;
    let children = match row.get_ref(1).map_err(db("reading blocks"))?.as_blob_or_null().ok().flatten() {
        Some(bytes) if bytes.len() % 12 == 0 => {
            bytes.chunks_exact(12).map(|c| block_id(Some(c)).expect("12 bytes")).collect()
        }
        Some(_) => return Err(corrupt(format!("bad children of {id}"))),
        None => Vec::new(),
    };
    let kind: String = row.get(2).map_err(db("reading blocks"))?;
    let body: Option<String> = row.get(3).map_err(db("reading blocks"))?;
    let fmt: Option<String> = row.get(4).map_err(db("reading blocks"))?;
    let content_json: Option<String> = row.get(5).map_err(db("reading blocks"))?;
    let content = join_content(&kind, body, fmt, content_json).map_err(|e| corrupt(format!("content of {id}: {e}")))?;

    let mut meta = Metadata {
        role: row
            .get::<_, Option<String>>(6)
            .map_err(db("reading blocks"))?
            .map(|r| r.parse::<Role>().unwrap_or_else(|n| match n {})),
        label: row.get(7).map_err(db("reading blocks"))?,
        tokens: row.get(8).map_err(db("reading blocks"))?,
        timestamps: Timestamps {
            created_ms: row.get(12).map_err(db("reading blocks"))?,
            modified_ms: row.get(13).map_err(db("reading blocks"))?,
        },
        ..Metadata::default()
    };
    if let Some(file) = row.get::<_, Option<String>>(9).map_err(db("reading blocks"))? {
        let file = files.entry(file).or_insert_with_key(|f| Arc::from(f.as_str())).clone();
        meta.source = Some(SourceLocation {
            file,
            start_line: row.get::<_, Option<u32>>(10).map_err(db("reading blocks"))?.unwrap_or(0),
            end_line: row.get::<_, Option<u32>>(11).map_err(db("reading blocks"))?.unwrap_or(0),
        });
    }
    if let Some(extra) = row.get::<_, Option<String>>(14).map_err(db("reading blocks"))? {
        apply_extra(&mut meta, &extra).map_err(|e| corrupt(format!("metadata of {id}: {e}")))?;
    }
    Ok((Block::new(id, content, meta), children))
}

/// The edges of document `doc`, each source's in order.
fn read_edges(conn: &Connection, doc: i64, name: &str) -> Result<Vec<Edge>, StoreError> {
    let mut stmt = conn
        .prepare_cached("SELECT source, type, target, metadata FROM edges WHERE doc = ?1 ORDER BY source, seq")
        .map_err(db("reading edges"))?;
    let mut rows = stmt.query(params![doc]).map_err(db("reading edges"))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(db("reading edges"))? {
        out.push(decode_edge(row, name)?);
    }
    Ok(out)
}

/// An edge row (`source, type, target, metadata` first) back into an edge.
pub(crate) fn decode_edge(row: &rusqlite::Row<'_>, name: &str) -> Result<Edge, StoreError> {
    let corrupt = |detail: String| corrupt(name, detail);
    let source = block_id(row.get_ref(0).map_err(db("reading edges"))?.as_blob().ok())
        .ok_or_else(|| corrupt("bad edge source".into()))?;
    let target = block_id(row.get_ref(2).map_err(db("reading edges"))?.as_blob().ok())
        .ok_or_else(|| corrupt("bad edge target".into()))?;
    let edge_type: String = row.get(1).map_err(db("reading edges"))?;
    let edge_type = edge_type.parse().map_err(|e| corrupt(format!("{e}")))?;
    let metadata: Option<String> = row.get(3).map_err(db("reading edges"))?;
    let metadata: EdgeMetadata = match metadata {
        Some(json) => serde_json::from_str(&json).map_err(|e| corrupt(format!("edge metadata: {e}")))?,
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
    use crate::Store;
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
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path()).unwrap();
        let revision = store.save_document(&doc).unwrap();
        let (back, seen) = store.load_with_revision("big").unwrap();
        assert_eq!(seen, revision);
        assert_eq!(back.to_json(false), doc.to_json(false));
    }
}
