//! Documents to rows and back.
//!
//! Text and code, the bulk of every corpus, are stored as plain columns
//! (`body`, `fmt`); only rarer content variants and metadata (tags, summary,
//! custom values) go through JSON. That keeps a million-block reload fast.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::{params, Connection, Transaction};
use serde_json::Value;
use ucm_core::{
    Block, BlockId, Content, Document, DocumentLoader, DocumentMetadata, Edge, EdgeMetadata, Metadata, Role,
    SourceLocation, TextFormat, Timestamps,
};

use crate::{db, StoreError};

/// Replaces the stored document of the same name with `document`.
pub(crate) fn write_document(tx: &Transaction<'_>, document: &Document) -> Result<(), StoreError> {
    tx.execute("DELETE FROM documents WHERE name = ?1", params![document.name()])
        .map_err(db("replacing the document"))?;
    tx.execute(
        "INSERT INTO revisions (document, revision) VALUES (?1, 1)
         ON CONFLICT (document) DO UPDATE SET revision = revision + 1",
        params![document.name()],
    )
    .map_err(db("counting the document's revision"))?;
    let tokens: u64 = document.blocks().map(|b| u64::from(b.metadata.tokens.unwrap_or(0))).sum();
    let metadata = serde_json::to_string(&document.metadata).expect("metadata serializes");
    tx.execute(
        "INSERT INTO documents (name, version, metadata, block_count, token_count, edge_count, saved_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            document.name(),
            document.version() as i64,
            metadata,
            document.len() as i64,
            tokens as i64,
            document.edges().len() as i64,
            ucm_core::now_ms()
        ],
    )
    .map_err(db("writing the document"))?;
    let doc = tx.last_insert_rowid();

    let mut insert = tx
        .prepare(
            "INSERT INTO blocks (doc, seq, id, parent, kind, body, fmt, content, role, label, tokens,
                                 src_file, src_start, src_end, created_ms, modified_ms, extra)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        )
        .map_err(db("preparing block writes"))?;
    for (seq, id) in document.ordered_ids().into_iter().enumerate() {
        let block = document.get(id).expect("ordered ids exist");
        let parent = document.parent(id);
        let (body, fmt, content) = split_content(&block.content);
        let meta = &block.metadata;
        let source = meta.source.as_ref();
        insert
            .execute(params![
                doc,
                seq as i64,
                &id.as_bytes()[..],
                parent.as_ref().map(|p| &p.as_bytes()[..]),
                block.content.kind(),
                body,
                fmt,
                content,
                meta.role.as_ref().map(Role::as_str),
                meta.label,
                meta.tokens,
                source.map(|s| s.file.as_ref()),
                source.map(|s| s.start_line),
                source.map(|s| s.end_line),
                meta.timestamps.created_ms,
                meta.timestamps.modified_ms,
                extra_json(meta),
            ])
            .map_err(db("writing blocks"))?;
    }

    let mut insert = tx
        .prepare("INSERT INTO edges (doc, seq, source, type, target, metadata) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        .map_err(db("preparing edge writes"))?;
    for (seq, edge) in document.ordered_edges().into_iter().enumerate() {
        let metadata = (!edge.metadata.is_empty()).then(|| serde_json::to_string(&edge.metadata).expect("serializes"));
        insert
            .execute(params![
                doc,
                seq as i64,
                &edge.source.as_bytes()[..],
                edge.edge_type.name(),
                &edge.target.as_bytes()[..],
                metadata
            ])
            .map_err(db("writing edges"))?;
    }
    Ok(())
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

/// Reads document number `doc` (named `name`) back into the model.
pub(crate) fn read_document(conn: &Connection, doc: i64, name: &str) -> Result<Document, StoreError> {
    let corrupt = |detail: String| StoreError::Corrupt { document: name.to_owned(), detail };
    let (version, metadata, count): (i64, String, i64) = conn
        .query_row("SELECT version, metadata, block_count FROM documents WHERE doc = ?1", params![doc], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(db("reading the document"))?;
    let metadata: DocumentMetadata =
        serde_json::from_str(&metadata).map_err(|e| corrupt(format!("document metadata: {e}")))?;

    let mut stmt = conn
        .prepare(
            "SELECT id, parent, kind, body, fmt, content, role, label, tokens, src_file, src_start, src_end,
                    created_ms, modified_ms, extra
             FROM blocks WHERE doc = ?1 ORDER BY seq",
        )
        .map_err(db("reading blocks"))?;
    let mut rows = stmt.query(params![doc]).map_err(db("reading blocks"))?;
    let mut files: HashMap<String, Arc<str>> = HashMap::new();
    let mut loader = DocumentLoader::new(name, metadata, version as u64, count.max(0) as usize);
    while let Some(row) = rows.next().map_err(db("reading blocks"))? {
        let id = block_id(row.get_ref(0).map_err(db("reading blocks"))?.as_blob().ok())
            .ok_or_else(|| corrupt("bad block id".into()))?;
        let parent = match row.get_ref(1).map_err(db("reading blocks"))?.as_blob_or_null().ok().flatten() {
            Some(bytes) => Some(block_id(Some(bytes)).ok_or_else(|| corrupt(format!("bad parent of {id}")))?),
            None => None,
        };
        let kind: String = row.get(2).map_err(db("reading blocks"))?;
        let body: Option<String> = row.get(3).map_err(db("reading blocks"))?;
        let fmt: Option<String> = row.get(4).map_err(db("reading blocks"))?;
        let content_json: Option<String> = row.get(5).map_err(db("reading blocks"))?;
        let content =
            join_content(&kind, body, fmt, content_json).map_err(|e| corrupt(format!("content of {id}: {e}")))?;

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
        loader.push(Block::new(id, content, meta), parent);
    }

    let mut stmt = conn
        .prepare("SELECT source, type, target, metadata FROM edges WHERE doc = ?1 ORDER BY seq")
        .map_err(db("reading edges"))?;
    let mut rows = stmt.query(params![doc]).map_err(db("reading edges"))?;
    while let Some(row) = rows.next().map_err(db("reading edges"))? {
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
        loader.push_edge(Edge { source, edge_type, target, metadata });
    }
    Ok(loader.finish())
}

fn block_id(bytes: Option<&[u8]>) -> Option<BlockId> {
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
    use ucm_core::{Align, EdgeType, MediaKind};

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
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path()).unwrap();
        let doc = sample();
        store.save_document(&doc).unwrap();
        let back = store.load_document("sample").unwrap();
        assert_eq!(back.to_json(true), doc.to_json(true));
        let summary = &store.documents().unwrap()[0];
        assert_eq!((summary.blocks, summary.tokens, summary.edges), (11, 55, 2));
        assert_eq!(summary.title.as_deref(), Some("Sample"));
    }

    #[test]
    fn saving_again_replaces_and_names_are_resolved() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path()).unwrap();
        store.save_document(&sample()).unwrap();
        assert_eq!(store.resolve_name(None).unwrap(), "sample");
        store.save_document(&sample()).unwrap();
        store.save_document(&Document::new("other")).unwrap();
        assert_eq!(store.documents().unwrap().len(), 2);
        assert!(matches!(store.resolve_name(None), Err(StoreError::DocumentNotChosen(_))));
        assert!(matches!(store.load_document("nope"), Err(StoreError::NoSuchDocument { .. })));
        assert!(store.delete_document("other").unwrap());
        assert_eq!(store.resolve_name(None).unwrap(), "sample");
        store.integrity_check().unwrap();
    }

    #[test]
    fn missing_store_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(Store::open_existing(dir.path().join("none")), Err(StoreError::Missing(_))));
    }
}
