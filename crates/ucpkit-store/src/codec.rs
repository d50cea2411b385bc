//! Documents to rows: whole, or only what changed.
//!
//! Text and code, the bulk of every corpus, are stored as plain columns
//! (`body`, `fmt`); only rarer content variants and metadata (tags, summary,
//! custom values) go through JSON. That keeps a million-block reload fast
//! (`load` reads the rows back).

use std::collections::HashMap;

use serde_json::Value;
use ucpkit_core::{BlockId, Content, Document, Edge, Metadata, Role, TextFormat};

use crate::sql::{args, Arg, Tx};
use crate::{db, StoreError};

/// Upserts one block row.
const UPSERT_BLOCK: &str = "
    INSERT INTO blocks (doc, id, parent, children, kind, body, fmt, content, role, label, tokens,
                        src_file, src_start, src_end, created_ms, modified_ms, extra)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
    ON CONFLICT (doc, id) DO UPDATE SET
        parent = excluded.parent, children = excluded.children, kind = excluded.kind, body = excluded.body,
        fmt = excluded.fmt, content = excluded.content, role = excluded.role, label = excluded.label,
        tokens = excluded.tokens, src_file = excluded.src_file, src_start = excluded.src_start,
        src_end = excluded.src_end, created_ms = excluded.created_ms, modified_ms = excluded.modified_ms,
        extra = excluded.extra";

const INSERT_EDGE: &str =
    "INSERT INTO edges (doc, source, seq, type, target, metadata) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

/// A block row's columns, in the order [`BlockRow::push_args`] gives them.
const BLOCK_COLUMNS: [&str; 17] = [
    "doc",
    "id",
    "parent",
    "children",
    "kind",
    "body",
    "fmt",
    "content",
    "role",
    "label",
    "tokens",
    "src_file",
    "src_start",
    "src_end",
    "created_ms",
    "modified_ms",
    "extra",
];

/// An edge row's columns, in the order [`EdgeRow::push_args`] gives them.
const EDGE_COLUMNS: [&str; 6] = ["doc", "source", "seq", "type", "target", "metadata"];

/// Rows one statement inserts when a document is written whole: one round
/// trip to a database server per this many rows, not per row.
const ROWS_PER_INSERT: usize = 64;

/// `INSERT INTO table (columns) VALUES (?1, …), (…)` for `rows` rows.
fn insert_rows(table: &str, columns: &[&str], rows: usize) -> String {
    let values: Vec<String> = (0..rows)
        .map(|row| {
            let places: Vec<String> = (1..=columns.len()).map(|c| format!("?{}", row * columns.len() + c)).collect();
            format!("({})", places.join(", "))
        })
        .collect();
    format!("INSERT INTO {table} ({}) VALUES {}", columns.join(", "), values.join(", "))
}

/// Inserts `rows` in statements of [`ROWS_PER_INSERT`] rows, each row's
/// values given by `push`, each statement followed by `tail` (a conflict
/// clause, or nothing).
pub(crate) fn insert_all<'r, R>(
    tx: &Tx<'_>,
    context: &'static str,
    table: &str,
    columns: &[&str],
    tail: &str,
    rows: &'r [R],
    push: impl Fn(&'r R, &mut Vec<Arg<'r>>),
) -> Result<(), StoreError> {
    let statement = |rows: usize| format!("{} {tail}", insert_rows(table, columns, rows));
    let full = (rows.len() >= ROWS_PER_INSERT).then(|| statement(ROWS_PER_INSERT));
    for batch in rows.chunks(ROWS_PER_INSERT) {
        let mut args = Vec::with_capacity(batch.len() * columns.len());
        for row in batch {
            push(row, &mut args);
        }
        match &full {
            Some(full) if batch.len() == ROWS_PER_INSERT => tx.run(context, full, &args)?,
            _ => tx.run(context, &statement(batch.len()), &args)?,
        };
    }
    Ok(())
}

/// Refuses a partial document: written in place of the stored one, it
/// would lose every block it does not hold.
fn refuse_partial(document: &Document) -> Result<(), StoreError> {
    if document.is_partial() {
        return Err(StoreError::Partial(document.name().to_owned()));
    }
    Ok(())
}

/// Replaces the stored document of the same name with `document`, whole.
pub(crate) fn write_document(tx: &Tx<'_>, document: &Document) -> Result<(), StoreError> {
    refuse_partial(document)?;
    tx.run("replacing the document", "DELETE FROM documents WHERE name = ?1", args![document.name()])?;
    bump_revision(tx, document.name(), None)?;
    const WRITING: &str = "writing the document";
    let doc = tx
        .first(
            WRITING,
            "INSERT INTO documents (name, version, metadata, block_count, token_count, edge_count, saved_ms)
             VALUES (?1, ?2, '{}', 0, 0, 0, 0) RETURNING doc",
            args![document.name(), document.version() as i64],
            |r| r.int_of(0).map_err(db(WRITING)),
        )?
        .expect("an insert returns its row");
    let totals = Totals {
        blocks: document.len() as i64,
        tokens: document.blocks().map(|b| i64::from(b.metadata.tokens.unwrap_or(0))).sum(),
        edges: document.edges().len() as i64,
    };
    write_summary(tx, doc, document, totals)?;
    // Rows go in in key order: appending to the tables' trees is much
    // cheaper than inserting all over them.
    let mut ids = document.ordered_ids();
    ids.sort_unstable();
    // A corrupt tree may list a block twice; its row is written once.
    ids.dedup();
    let rows: Vec<BlockRow> = ids.into_iter().map(|id| BlockRow::of(document, id)).collect();
    insert_all(tx, "writing blocks", "blocks", &BLOCK_COLUMNS, "", &rows, |row, args| {
        row.push_args(doc, document, args)
    })?;
    // Each source's edges in their order (dangling ones too).
    let mut seq: HashMap<BlockId, u32> = HashMap::new();
    let mut edges: Vec<(&Edge, u32)> = document
        .ordered_edges()
        .into_iter()
        .map(|edge| {
            let n = seq.entry(edge.source).or_default();
            *n += 1;
            (edge, *n - 1)
        })
        .collect();
    edges.sort_by_key(|(edge, n)| (edge.source, *n));
    let rows: Vec<EdgeRow> = edges.into_iter().map(|(edge, seq)| EdgeRow::of(edge, seq)).collect();
    insert_all(tx, "writing edges", "edges", &EDGE_COLUMNS, "", &rows, |row, args| row.push_args(doc, args))?;
    tx.analyze()
}

/// Writes only the blocks in `changed` (rewritten when present, deleted
/// when gone) and their outgoing edges, to the stored document of the
/// same name, which must be the one `document` was loaded from or last
/// saved as, at version `base_version`. Returns false, writing nothing,
/// when the stored document is not that one (the caller then writes it
/// whole). The document's totals move by what the changed rows held and
/// now hold, so `document` may be a part of the stored one when it holds
/// every block in `changed` that it did not delete (the caller checks).
pub(crate) fn write_changes(
    tx: &Tx<'_>,
    document: &Document,
    base_version: u64,
    changed: &[BlockId],
) -> Result<bool, StoreError> {
    const FINDING: &str = "finding the document";
    let stored =
        tx.first(FINDING, "SELECT doc, version FROM documents WHERE name = ?1", args![document.name()], |r| {
            Ok((r.int_of(0).map_err(db(FINDING))?, r.int_of(1).map_err(db(FINDING))?))
        })?;
    let Some((doc, version)) = stored else { return Ok(false) };
    if version as u64 != base_version {
        return Ok(false);
    }
    bump_revision(tx, document.name(), Some(changed))?;
    // The totals move by what the changed rows held and now hold.
    const READING: &str = "reading the document";
    let mut totals = tx
        .first(READING, "SELECT block_count, token_count, edge_count FROM documents WHERE doc = ?1", args![doc], |r| {
            let total = |i| r.int_of(i).map_err(db(READING));
            Ok(Totals { blocks: total(0)?, tokens: total(1)?, edges: total(2)? })
        })?
        .expect("the document's row was found above");
    for &id in changed {
        let key = &id.as_bytes()[..];
        let old: Option<Option<i64>> =
            tx.first("reading rows", "SELECT tokens FROM blocks WHERE doc = ?1 AND id = ?2", args![doc, key], |r| {
                r.int(0).map_err(db("reading rows"))
            })?;
        let edges = tx
            .first(
                "counting edges",
                "SELECT COUNT(*) FROM edges WHERE doc = ?1 AND source = ?2",
                args![doc, key],
                |r| r.int_of(0).map_err(db("counting edges")),
            )?
            .unwrap_or(0);
        totals.blocks -= i64::from(old.is_some());
        totals.tokens -= old.flatten().unwrap_or(0);
        totals.edges -= edges;
        if let Some(block) = document.holding(id) {
            totals.blocks += 1;
            totals.tokens += i64::from(block.metadata.tokens.unwrap_or(0));
            totals.edges += document.edges().outgoing(id).len() as i64;
        }
    }
    write_summary(tx, doc, document, totals)?;
    for &id in changed {
        let key = &id.as_bytes()[..];
        tx.run("deleting edges", "DELETE FROM edges WHERE doc = ?1 AND source = ?2", args![doc, key])?;
        if document.holding(id).is_none() {
            tx.run("deleting a block", "DELETE FROM blocks WHERE doc = ?1 AND id = ?2", args![doc, key])?;
            continue;
        }
        write_block(tx, doc, document, id)?;
        for (seq, edge) in document.edges().outgoing(id).iter().enumerate() {
            write_edge(tx, doc, edge, seq as u32)?;
        }
    }
    Ok(true)
}

/// Writes `document` over the stored version it was read or last saved as:
/// only the rows its journal says changed, or whole when that is unknown
/// (or the stored document is not that version).
pub(crate) fn write_since_saved(tx: &Tx<'_>, document: &Document) -> Result<(), StoreError> {
    refuse_partial(document)?;
    let written = match document.unsaved_changes() {
        Some(changes) => write_changes(tx, document, changes.since_version, &changes.blocks)?,
        None => false,
    };
    if !written {
        write_document(tx, document)?;
    }
    Ok(())
}

/// How many of a document's latest writes the log of changed blocks
/// keeps: a copy read further back is read whole again.
pub(crate) const LOGGED_WRITES: u64 = 1000;

/// Counts one more write of document `name` and logs the blocks it
/// `changed` (`None`: the document was replaced whole, or deleted).
pub(crate) fn bump_revision(tx: &Tx<'_>, name: &str, changed: Option<&[BlockId]>) -> Result<(), StoreError> {
    const COUNTING: &str = "counting the document's revision";
    let revision = tx
        .first(
            COUNTING,
            "INSERT INTO revisions (document, revision) VALUES (?1, 1)
             ON CONFLICT (document) DO UPDATE SET revision = revisions.revision + 1 RETURNING revision",
            args![name],
            |r| r.int_of(0).map_err(db(COUNTING)),
        )?
        .expect("an upsert returns its row");
    const LOGGING: &str = "logging the changed blocks";
    tx.run(
        LOGGING,
        "DELETE FROM block_changes WHERE document = ?1 AND revision <= ?2",
        args![name, revision - LOGGED_WRITES as i64],
    )?;
    let ids: Option<Vec<u8>> = changed.map(|ids| ids.iter().flat_map(|id| *id.as_bytes()).collect());
    tx.run(
        LOGGING,
        "INSERT INTO block_changes (document, revision, blocks) VALUES (?1, ?2, ?3)",
        args![name, revision, ids.as_ref()],
    )?;
    tx.notify(name)
}

/// A stored document's totals: blocks, tokens over all blocks, edges.
struct Totals {
    blocks: i64,
    tokens: i64,
    edges: i64,
}

/// Sets the document row's version, metadata and totals.
fn write_summary(tx: &Tx<'_>, doc: i64, document: &Document, totals: Totals) -> Result<(), StoreError> {
    let metadata = serde_json::to_string(&document.metadata).expect("metadata serializes");
    tx.run(
        "writing the document",
        "UPDATE documents SET version = ?2, metadata = ?3, block_count = ?4, token_count = ?5, edge_count = ?6,
                              saved_ms = ?7
         WHERE doc = ?1",
        args![
            doc,
            document.version() as i64,
            &metadata,
            totals.blocks.max(0),
            totals.tokens.max(0),
            totals.edges.max(0),
            ucpkit_core::now_ms()
        ],
    )?;
    Ok(())
}

/// Writes block `id` of `document`, with its parent and children, as
/// document number `doc`'s row.
fn write_block(tx: &Tx<'_>, doc: i64, document: &Document, id: BlockId) -> Result<(), StoreError> {
    let row = BlockRow::of(document, id);
    let mut args = Vec::with_capacity(BLOCK_COLUMNS.len());
    row.push_args(doc, document, &mut args);
    tx.run("writing blocks", UPSERT_BLOCK, &args)?;
    Ok(())
}

/// Writes `edge` as outgoing edge number `seq` of its source.
fn write_edge(tx: &Tx<'_>, doc: i64, edge: &Edge, seq: u32) -> Result<(), StoreError> {
    let row = EdgeRow::of(edge, seq);
    let mut args = Vec::with_capacity(EDGE_COLUMNS.len());
    row.push_args(doc, &mut args);
    tx.run("writing edges", INSERT_EDGE, &args)?;
    Ok(())
}

/// A block's row: what of it is not borrowed from its document.
struct BlockRow {
    id: BlockId,
    parent: Option<BlockId>,
    children: Option<Vec<u8>>,
    content: Option<String>,
    extra: Option<String>,
}

impl BlockRow {
    /// Block `id` of `document`, which holds it.
    fn of(document: &Document, id: BlockId) -> BlockRow {
        let block = document.get(id).expect("only present blocks are written");
        let children = document.children(id);
        BlockRow {
            id,
            parent: document.parent(id),
            children: (!children.is_empty())
                .then(|| children.iter().flat_map(|c| c.as_bytes().iter().copied()).collect()),
            content: split_content(&block.content).2,
            extra: extra_json(&block.metadata),
        }
    }

    /// The row's values, in [`BLOCK_COLUMNS`]' order, as document number `doc`'s.
    fn push_args<'a>(&'a self, doc: i64, document: &'a Document, args: &mut Vec<Arg<'a>>) {
        let block = document.get(self.id).expect("only present blocks are written");
        let (body, fmt, _) = split_content(&block.content);
        let meta = &block.metadata;
        let source = meta.source.as_ref();
        args.extend_from_slice(args![
            doc,
            &self.id.as_bytes()[..],
            self.parent.as_ref().map(|p| &p.as_bytes()[..]),
            self.children.as_ref(),
            block.content.kind(),
            body,
            fmt,
            self.content.as_deref(),
            meta.role.as_ref().map(Role::as_str),
            meta.label.as_deref(),
            meta.tokens,
            source.map(|s| s.file.as_ref()),
            source.map(|s| s.start_line),
            source.map(|s| s.end_line),
            meta.timestamps.created_ms,
            meta.timestamps.modified_ms,
            self.extra.as_deref(),
        ]);
    }
}

/// An edge's row: the edge, its place among its source's edges, and what
/// of it is not borrowed from it.
struct EdgeRow<'e> {
    edge: &'e Edge,
    seq: u32,
    edge_type: String,
    metadata: Option<String>,
}

impl<'e> EdgeRow<'e> {
    /// `edge` as outgoing edge number `seq` of its source.
    fn of(edge: &'e Edge, seq: u32) -> EdgeRow<'e> {
        let metadata = (!edge.metadata.is_empty()).then(|| serde_json::to_string(&edge.metadata).expect("serializes"));
        EdgeRow { edge, seq, edge_type: edge.edge_type.name().into_owned(), metadata }
    }

    /// The row's values, in [`EDGE_COLUMNS`]' order, as document number `doc`'s.
    fn push_args<'a>(&'a self, doc: i64, args: &mut Vec<Arg<'a>>) {
        let (source, target) = (&self.edge.source.as_bytes()[..], &self.edge.target.as_bytes()[..]);
        args.extend_from_slice(args![doc, source, self.seq, self.edge_type.as_str(), target, self.metadata.as_deref()]);
    }
}

/// The stored columns of a content: `(body, fmt, content JSON)`.
fn split_content(content: &Content) -> (Option<&str>, Option<&str>, Option<String>) {
    match content {
        Content::Text { text, format } => {
            let fmt = match format {
                TextFormat::Markdown => None,
                TextFormat::Plain => Some("plain"),
                TextFormat::Html => Some("html"),
            };
            (Some(text), fmt, None)
        }
        Content::Code { language, source } => (Some(source), language.as_deref(), None),
        Content::Composite => (None, None, None),
        other => (None, None, Some(serde_json::to_string(other).expect("content serializes"))),
    }
}

fn extra_json(meta: &Metadata) -> Option<String> {
    if meta.tags.is_empty() && meta.summary.is_none() && meta.custom.is_empty() {
        return None;
    }
    let mut extra = serde_json::Map::new();
    if !meta.tags.is_empty() {
        extra.insert("tags".into(), meta.tags.clone().into());
    }
    if let Some(summary) = &meta.summary {
        extra.insert("summary".into(), summary.clone().into());
    }
    if !meta.custom.is_empty() {
        extra.insert("custom".into(), Value::Object(meta.custom.clone().into_iter().collect()));
    }
    Some(Value::Object(extra).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use ucpkit_core::{Align, Block, EdgeType, MediaKind, SourceLocation, Timestamps};

    fn block(content: Content, role: Role, n: u32) -> Block {
        let mut meta = Metadata::with_role(role.clone());
        meta.tokens = Some(n);
        meta.timestamps = Timestamps::at(1000 + i64::from(n));
        Block::new(Block::derive_id(&content, Some(&role), "", n), content, meta)
    }

    fn sample() -> Document {
        let mut doc = Document::new("sample");
        doc.metadata.title = Some("Sample".into());
        let h = doc.append_child(BlockId::ROOT, block(Content::markdown("Intro"), Role::Heading1, 1)).unwrap();
        let mut para = block(Content::plain("plain words"), Role::Paragraph, 2);
        para.metadata.tags = vec!["a".into()];
        para.metadata.summary = Some("sum".into());
        para.metadata.label = Some("p1".into());
        para.metadata.custom.insert("k".into(), serde_json::json!({"x": 1}));
        para.metadata.source = Some(SourceLocation { file: "a.md".into(), start_line: 3, end_line: 4 });
        let p = doc.append_child(h, para).unwrap();
        let all = [
            block(Content::code(Some("rust".into()), "fn x() {}\n"), Role::Code, 3),
            block(Content::code(None, "plain code"), Role::Code, 4),
            block(
                Content::Table { columns: vec!["a".into()], rows: vec![vec!["1".into()]], align: vec![Align::Center] },
                Role::Table,
                5,
            ),
            block(
                Content::Media { kind: MediaKind::Image, uri: "i.png".into(), alt: None, title: None },
                Role::Image,
                6,
            ),
            block(Content::Json { value: serde_json::json!([1, "two"]) }, Role::Metadata, 7),
            block(Content::Binary { mime: "x/y".into(), data: vec![0, 1, 2] }, Role::Metadata, 8),
            block(Content::Composite, Role::Section, 9),
            block(Content::Text { text: "<b>x</b>".into(), format: TextFormat::Html }, Role::Paragraph, 10),
        ];
        for b in all {
            doc.append_child(h, b).unwrap();
        }
        let first_code = doc.children(h)[1];
        let mut edge = Edge::new(p, EdgeType::Custom("see".into()), first_code);
        edge.metadata.confidence = Some(0.5);
        doc.add_edge(edge).unwrap();
        doc.add_edge(Edge::new(first_code, EdgeType::LinksTo, h)).unwrap();
        doc
    }

    #[test]
    fn documents_round_trip_exactly() {
        for place in crate::testing::places() {
            let mut store = place.open();
            let doc = sample();
            store.save_document(&doc).unwrap();
            let back = store.load_document("sample").unwrap();
            assert_eq!(back.to_json(true), doc.to_json(true));
            let summary = &store.documents().unwrap()[0];
            assert_eq!((summary.blocks, summary.tokens, summary.edges), (11, 55, 2));
            assert_eq!(summary.title.as_deref(), Some("Sample"));
        }
    }

    #[test]
    fn saving_again_replaces_and_names_are_resolved() {
        for place in crate::testing::places() {
            let mut store = place.open();
            store.save_document(&sample()).unwrap();
            assert_eq!(store.resolve_name(None).unwrap(), "sample");
            store.save_document(&sample()).unwrap();
            store.save_document(&Document::new("other")).unwrap();
            assert_eq!(store.documents().unwrap().len(), 2);
            assert!(matches!(store.resolve_name(None), Err(StoreError::DocumentNotChosen(_))));
            assert!(matches!(store.load_document("nope"), Err(StoreError::NoSuchDocument { .. })));
            assert!(store.delete_document("other").unwrap());
            assert_eq!(store.resolve_name(None).unwrap(), "sample");
            // Agents' memories and plans beside one corpus leave it the default,
            // and alone are no default.
            store.save_document(&Document::new("memory")).unwrap();
            store.save_document(&Document::new("relations@agent-7")).unwrap();
            assert_eq!(store.resolve_name(None).unwrap(), "sample");
            assert!(store.delete_document("sample").unwrap());
            let alone = store.resolve_name(None).unwrap_err().to_string();
            assert!(alone.contains("only agents' memories and plans"), "{alone}");
            store.save_document(&sample()).unwrap();
            assert_eq!(store.resolve_name(Some("memory")).unwrap(), "memory");
            store.save_document(&Document::new("other")).unwrap();
            assert!(matches!(store.resolve_name(None), Err(StoreError::DocumentNotChosen(_))));
            store.integrity_check().unwrap();
        }
    }

    #[test]
    fn missing_store_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(Store::open_existing(dir.path().join("none")), Err(StoreError::Missing(_))));
    }
}
