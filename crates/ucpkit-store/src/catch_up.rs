//! Bringing a copy of a stored document up to date from the log of the
//! blocks each write changed, reading those blocks alone: what a node that
//! holds a document (a server, another node's search index) pays when
//! another writer moved it on, instead of reading it whole again.

use std::collections::HashMap;
use std::sync::LazyLock;

use ucpkit_core::{BlockId, Document, DocumentLoader, Edge, IdSet};

use crate::excerpt::{batched, each_batch, read_many};
use crate::load::{block_id, decode_edge, read_header};
use crate::sql::{args, Tx};
use crate::{db, document_number, revision_in, Store, StoreError};

/// A copy of a stored document brought up to the store's revision.
#[derive(Debug)]
pub struct CaughtUp {
    /// The document as the store holds it at `revision`.
    pub document: Document,
    /// The store's revision of it.
    pub revision: u64,
    /// The blocks written since the copy's revision: changed, added or
    /// deleted, each once.
    pub changed: Vec<BlockId>,
}

impl Store {
    /// The blocks of document `name` written since its revision `since`,
    /// each once, with the revision the store holds now (no blocks when
    /// that is `since`). `None` when the log of writes does not reach back
    /// to `since` (it keeps the latest writes of each document) or a write
    /// since replaced or deleted the document whole: the caller then reads
    /// it whole.
    pub fn changed_since(&self, name: &str, since: u64) -> Result<Option<(u64, Vec<BlockId>)>, StoreError> {
        self.db.read(|tx| {
            let revision = revision_in(tx, name)?;
            Ok(logged_since(tx, name, since, revision)?.map(|changed| (revision, changed)))
        })
    }

    /// `copy`, document `name` as the store held it at revision `since`,
    /// brought to the revision the store holds now by reading only the
    /// blocks written since, with their outgoing edges, in one read; the
    /// copy's other blocks are shared, not copied. `None` as for
    /// [`Store::changed_since`], and when the store holds `since` still
    /// (nothing to do).
    pub fn catch_up(&self, copy: &Document, since: u64) -> Result<Option<CaughtUp>, StoreError> {
        let name = copy.name();
        self.db.read(|tx| {
            let revision = revision_in(tx, name)?;
            if revision == since {
                return Ok(None);
            }
            let Some(changed) = logged_since(tx, name, since, revision)? else { return Ok(None) };
            let doc = document_number(tx, name)?;
            let header = read_header(tx, doc, name)?;
            let rows = read_many(tx, doc, name, &changed, &mut HashMap::new())?;
            let leave_out: IdSet = changed.iter().copied().collect();
            let mut loader = DocumentLoader::new(name, header.metadata, header.version, header.blocks);
            loader.push_unchanged(copy, &leave_out);
            let mut edges: Vec<Edge> =
                copy.edges().iter().filter(|e| !leave_out.contains(&e.source)).cloned().collect();
            edges.extend(outgoing_edges(tx, doc, name, &changed)?);
            for ((block, children), _parent) in rows.into_values() {
                loader.push(block, children);
            }
            // Each source's edges in their order, sources in key order: as a
            // whole load gives them.
            edges.sort_by_key(|edge| edge.source);
            for edge in edges {
                loader.push_edge(edge);
            }
            Ok(Some(CaughtUp { document: loader.finish(), revision, changed }))
        })
    }
}

/// The blocks the writes of document `name` after `since` up to
/// `revision` changed, each once, in the order logged; `None` when one of
/// those writes is not logged or replaced the document whole.
fn logged_since(tx: &Tx<'_>, name: &str, since: u64, revision: u64) -> Result<Option<Vec<BlockId>>, StoreError> {
    const READING: &str = "reading the log of changed blocks";
    if revision < since {
        return Ok(None); // deleted and written anew since
    }
    let writes = tx.all(
        READING,
        "SELECT blocks FROM block_changes WHERE document = ?1 AND revision > ?2 AND revision <= ?3 ORDER BY revision",
        args![name, since as i64, revision as i64],
        |row| Ok(row.bytes(0).map_err(db(READING))?.map(<[u8]>::to_vec)),
    )?;
    if writes.len() as u64 != revision - since {
        return Ok(None);
    }
    let mut seen = IdSet::default();
    let mut changed = Vec::new();
    for blocks in writes {
        let Some(blocks) = blocks else { return Ok(None) };
        if blocks.len() % 12 != 0 {
            return Err(crate::load::corrupt(name, "a damaged entry in the log of changed blocks".into()));
        }
        for bytes in blocks.chunks_exact(12) {
            let id = block_id(Some(bytes)).expect("12 bytes");
            if seen.insert(id) {
                changed.push(id);
            }
        }
    }
    Ok(Some(changed))
}

/// The outgoing edges of blocks `ids` of document number `doc`, each
/// block's in their order.
fn outgoing_edges(tx: &Tx<'_>, doc: i64, name: &str, ids: &[BlockId]) -> Result<Vec<Edge>, StoreError> {
    const READING: &str = "reading edges";
    static OUT: LazyLock<String> =
        LazyLock::new(|| batched("SELECT source, type, target, metadata, seq FROM edges WHERE doc = ?1 AND source IN"));
    let mut edges: Vec<(i64, Edge)> = Vec::new();
    each_batch(tx, READING, &OUT, doc, ids, |row| {
        edges.push((row.int_of(4).map_err(db(READING))?, decode_edge(row, name)?));
        Ok(())
    })?;
    // Each source's edges in their order (batches come in any order).
    edges.sort_by_key(|(seq, edge)| (edge.source, *seq));
    Ok(edges.into_iter().map(|(_, edge)| edge).collect())
}

#[cfg(test)]
mod tests {
    use ucpkit_core::{Block, BlockId, Content, Document, Edge, EdgeType, Metadata, Role};

    use crate::testing::places;

    fn block(text: &str, n: u32) -> Block {
        let content = Content::markdown(text);
        Block::new(Block::derive_id(&content, Some(&Role::Paragraph), "", n), content, Metadata::default())
    }

    /// A copy caught up from the log is the document a whole load gives,
    /// through edits, moves, deletions and edges; what the log cannot
    /// tell (a whole rewrite, a rename, writes older than it keeps) is
    /// `None`.
    #[test]
    fn a_copy_caught_up_from_the_log_is_what_a_whole_load_gives() {
        for place in places() {
            let mut store = place.open();
            let mut doc = Document::new("d");
            let a = doc.append_child(BlockId::ROOT, block("# a", 0)).unwrap();
            let b = doc.append_child(BlockId::ROOT, block("# b", 1)).unwrap();
            let c = doc.append_child(a, block("c", 2)).unwrap();
            let d = doc.append_child(b, block("d", 3)).unwrap();
            doc.add_edge(Edge::new(c, EdgeType::References, d)).unwrap();
            doc.add_edge(Edge::new(d, EdgeType::LinksTo, a)).unwrap();
            let first = store.save_document(&doc).unwrap();
            let (copy, at) = store.load_with_revision("d").unwrap();
            assert_eq!(at, first);
            assert!(store.catch_up(&copy, first).unwrap().is_none(), "nothing to catch up");

            // Another writer: an edit, a move, a new block with an edge, then a deletion.
            let (mut other, mut revision) = store.load_with_revision("d").unwrap();
            other.get_mut(c).unwrap().content = Content::markdown("c, edited");
            other.move_block(d, a, None).unwrap();
            let e = other.append_child(b, block("e", 4)).unwrap();
            other.add_edge(Edge::new(e, EdgeType::References, c)).unwrap();
            revision = store.save_checked("d", revision, Some((&other, &[])), None).unwrap().document;
            other.mark_saved();
            other.remove_block(b, ucpkit_core::RemoveMode::Cascade).unwrap();
            revision = store.save_checked("d", revision, Some((&other, &[])), None).unwrap().document;

            let up = store.catch_up(&copy, first).unwrap().expect("the log reaches back");
            assert_eq!(up.revision, revision, "{}", place.backend);
            let whole = store.load_document("d").unwrap();
            assert_eq!(up.document.to_json(true), whole.to_json(true), "{}", place.backend);
            assert!(up.document.validate().is_valid());
            for id in [c, d, e, b] {
                assert!(up.changed.contains(&id), "{id} was written");
            }
            let (now, changed) = store.changed_since("d", first).unwrap().unwrap();
            assert_eq!((now, changed), (revision, up.changed.clone()));
            assert_eq!(store.changed_since("d", revision).unwrap(), Some((revision, Vec::new())));

            // A whole rewrite, and a rename, are not in the log's terms.
            store.save_document(&whole).unwrap();
            assert!(store.catch_up(&copy, first).unwrap().is_none());
            assert!(store.changed_since("d", revision).unwrap().is_none());
            store.rename_document("d", "d2").unwrap();
            let renamed = store.revision("d2").unwrap();
            assert!(store.changed_since("d2", renamed - 1).unwrap().is_none());
        }
    }

    #[test]
    fn the_log_keeps_the_latest_writes_only() {
        let place = &places()[0];
        let mut store = place.open();
        let mut doc = Document::new("d");
        let p = doc.append_child(BlockId::ROOT, block("p", 0)).unwrap();
        let mut revision = store.save_document(&doc).unwrap();
        doc.mark_saved();
        let start = revision;
        for n in 0..crate::codec::LOGGED_WRITES + 1 {
            doc.get_mut(p).unwrap().content = Content::markdown(format!("p{n}"));
            revision = store.save_checked("d", revision, Some((&doc, &[])), None).unwrap().document;
            doc.mark_saved();
        }
        assert!(store.changed_since("d", start).unwrap().is_none(), "older than the log");
        let (now, changed) = store.changed_since("d", start + 1).unwrap().unwrap();
        assert_eq!((now, changed), (revision, vec![p]));
    }
}
