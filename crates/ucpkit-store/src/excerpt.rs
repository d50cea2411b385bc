//! Reading a few blocks of a stored document without loading it: what a
//! one-shot call that looks at some blocks (a search's hits, one block's
//! view) needs, at a cost that follows those blocks, not the document.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use ucpkit_core::{BlockId, Document, DocumentLoader, IdMap, IdSet};

use crate::load::{block_columns, block_id, decode_block, read_header, Row, READ_ONE};
use crate::sql::{args, Arg, Cells, Tx};
use crate::{db, document_number, revision_in, Store, StoreError};

impl Store {
    /// Blocks `ids` of document `name` and every ancestor of theirs, read
    /// at one revision, as a document holding only those blocks (each
    /// with its children list as stored, so a list may name blocks it does
    /// not hold; no edges), with that revision. Ids the document does not
    /// hold are left out.
    pub fn read_excerpt(&self, name: &str, ids: &[BlockId]) -> Result<(Document, u64), StoreError> {
        self.read_blocks(name, ids, None)
    }

    /// Block `id` of document `name`, its ancestors, and the blocks below
    /// it (breadth first, at most `below` of them), read at one revision
    /// like [`Store::read_excerpt`]: what showing one section costs.
    pub fn read_section(&self, name: &str, id: BlockId, below: usize) -> Result<(Document, u64), StoreError> {
        self.read_blocks(name, &[id], Some((id, below)))
    }

    /// The blocks `ids` and their ancestors, and with `section` the
    /// descendants of its block, up to its count.
    fn read_blocks(
        &self,
        name: &str,
        ids: &[BlockId],
        section: Option<(BlockId, usize)>,
    ) -> Result<(Document, u64), StoreError> {
        self.db.read(|tx| {
            let revision = revision_in(tx, name)?;
            let doc = document_number(tx, name)?;
            let header = read_header(tx, doc, name)?;
            let rows = read_rows(tx, doc, name, ids, section)?;
            let mut loader = DocumentLoader::new(name, header.metadata, header.version, rows.len());
            for (block, children) in rows {
                loader.push(block, children);
            }
            Ok((loader.finish(), revision))
        })
    }

    /// The blocks of document `name` labelled `label`.
    pub fn labelled(&self, name: &str, label: &str) -> Result<Vec<BlockId>, StoreError> {
        self.db.read(|tx| {
            let doc = document_number(tx, name)?;
            let ids = tx.all(
                "finding a label",
                "SELECT id FROM blocks WHERE doc = ?1 AND label = ?2",
                args![doc, label],
                |row| Ok(block_id(row.bytes(0).ok().flatten())),
            )?;
            Ok(ids.into_iter().flatten().collect())
        })
    }

    /// How many edges leave and how many reach block `id` of document `name`.
    pub fn edge_counts(&self, name: &str, id: BlockId) -> Result<(usize, usize), StoreError> {
        const CONTEXT: &str = "counting edges";
        self.db.read(|tx| {
            let doc = document_number(tx, name)?;
            let count = |sql: &str| -> Result<usize, StoreError> {
                let n = tx.first(CONTEXT, sql, args![doc, &id.as_bytes()[..]], |r| r.int_of(0).map_err(db(CONTEXT)))?;
                Ok(n.unwrap_or(0).max(0) as usize)
            };
            let out = count("SELECT count(*) FROM edges WHERE doc = ?1 AND source = ?2")?;
            let into = count("SELECT count(*) FROM edges INDEXED BY edges_by_target WHERE doc = ?1 AND target = ?2")?;
            Ok((out, into))
        })
    }
}

/// Block `id` of document number `doc` with its parent, read in `tx`;
/// `None` when the document does not hold it.
pub(crate) fn read_one(
    tx: &Tx<'_>,
    doc: i64,
    name: &str,
    id: BlockId,
    files: &mut HashMap<String, Arc<str>>,
) -> Result<Option<(Row, Option<BlockId>)>, StoreError> {
    tx.first("reading blocks", READ_ONE, args![doc, &id.as_bytes()[..]], |row: &Cells<'_>| {
        let parent = block_id(row.bytes(15).ok().flatten());
        Ok((decode_block(row, name, files)?, parent))
    })
}

/// How many ids one batched read names (the last batch repeats its last
/// id, so every batch is one statement, prepared once).
pub(crate) const BATCH: usize = 64;

/// `sql_head` followed by one batch's parameters, `(?2, …, ?65)`.
pub(crate) fn batched(sql_head: &str) -> String {
    batched_after(sql_head, 1)
}

/// `sql_head` followed by one batch's parameters, numbered after `lead`
/// leading ones.
pub(crate) fn batched_after(sql_head: &str, lead: usize) -> String {
    let places: Vec<String> = (lead + 1..=lead + BATCH).map(|i| format!("?{i}")).collect();
    format!("{sql_head} ({})", places.join(", "))
}

/// Runs `sql` (made by [`batched`]) for `ids` of document number `doc`,
/// a batch at a time, handing each row to `row`: one round trip per
/// batch to a database server, not one per id.
pub(crate) fn each_batch(
    tx: &Tx<'_>,
    context: &'static str,
    sql: &str,
    doc: i64,
    ids: &[BlockId],
    row: impl FnMut(&Cells<'_>) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let keys: Vec<&[u8]> = ids.iter().map(|id| &id.as_bytes()[..]).collect();
    each_batch_after(tx, context, sql, &[Arg::Int(doc)], &keys, row)
}

/// [`each_batch`] for keys of any kind after the parameters `lead`
/// (`sql` made by [`batched_after`] with as many).
pub(crate) fn each_batch_after<'a>(
    tx: &Tx<'_>,
    context: &'static str,
    sql: &str,
    lead: &[Arg<'a>],
    keys: &[&'a [u8]],
    mut row: impl FnMut(&Cells<'_>) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    for batch in keys.chunks(BATCH) {
        let mut args = Vec::with_capacity(lead.len() + BATCH);
        args.extend_from_slice(lead);
        // The last key again fills the batch: one statement, prepared once.
        let last = batch[batch.len() - 1];
        args.extend(batch.iter().copied().chain(std::iter::repeat_n(last, BATCH - batch.len())).map(Arg::Bytes));
        tx.each(context, sql, &args, &mut row)?;
    }
    Ok(())
}

/// Blocks `ids` of document number `doc`, each with its parent, read in
/// batches; the ids the document does not hold are missing from the map.
pub(crate) fn read_many(
    tx: &Tx<'_>,
    doc: i64,
    name: &str,
    ids: &[BlockId],
    files: &mut HashMap<String, Arc<str>>,
) -> Result<IdMap<(Row, Option<BlockId>)>, StoreError> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        batched(concat!("SELECT ", block_columns!(), ", parent FROM blocks WHERE doc = ?1 AND id IN"))
    });
    let mut rows = IdMap::default();
    each_batch(tx, "reading blocks", &SQL, doc, ids, |row| {
        let parent = block_id(row.bytes(15).ok().flatten());
        let read = decode_block(row, name, files)?;
        rows.insert(read.0.id, (read, parent));
        Ok(())
    })?;
    Ok(rows)
}

/// The rows of [`Store::read_excerpt`] and [`Store::read_section`].
fn read_rows(
    tx: &Tx<'_>,
    doc: i64,
    name: &str,
    ids: &[BlockId],
    section: Option<(BlockId, usize)>,
) -> Result<Vec<Row>, StoreError> {
    let mut files = HashMap::new();
    let mut seen = IdSet::default();
    let mut rows: Vec<Row> = Vec::new();
    let mut next: Vec<BlockId> = ids.to_vec();
    while let Some(id) = next.pop() {
        if !seen.insert(id) {
            continue;
        }
        if let Some((block, parent)) = read_one(tx, doc, name, id, &mut files)? {
            rows.push(block);
            next.extend(parent);
        }
    }
    if let Some((top, most)) = section {
        // Breadth first below the section's block, children as stored.
        let mut queue: std::collections::VecDeque<BlockId> = rows
            .iter()
            .find(|(block, _)| block.id == top)
            .map(|(_, children)| children.iter().copied().collect())
            .unwrap_or_default();
        let mut taken = 0;
        while let Some(id) = queue.pop_front() {
            if taken == most {
                break;
            }
            if !seen.insert(id) {
                continue;
            }
            if let Some(((block, children), _)) = read_one(tx, doc, name, id, &mut files)? {
                queue.extend(children.iter().copied());
                rows.push((block, children));
                taken += 1;
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use ucpkit_core::{Block, BlockId, Content, Document, Edge, EdgeType, Metadata, Role};

    fn block(text: &str, role: Role, n: u32) -> Block {
        let content = Content::markdown(text);
        let id = Block::derive_id(&content, Some(&role), "", n);
        let metadata = Metadata { label: Some(format!("l{n}")), ..Metadata::with_role(role) };
        Block::new(id, content, metadata)
    }

    #[test]
    fn an_excerpt_holds_the_blocks_asked_for_and_their_ancestors_as_stored() {
        for place in crate::testing::places() {
            let mut store = place.open();
            let mut doc = Document::new("d");
            let h = doc.append_child(BlockId::ROOT, block("# H", Role::Heading1, 0)).unwrap();
            let p = doc.append_child(h, block("para", Role::Paragraph, 1)).unwrap();
            let q = doc.append_child(h, block("other", Role::Paragraph, 2)).unwrap();
            let other = doc.append_child(BlockId::ROOT, block("# Other", Role::Heading1, 3)).unwrap();
            doc.add_edge(Edge::new(p, EdgeType::References, other)).unwrap();
            let revision = store.save_document(&doc).unwrap();

            let missing = BlockId::from_bytes([0xff; 12]);
            let (excerpt, at) = store.read_excerpt("d", &[p, missing]).unwrap();
            assert_eq!(at, revision);
            assert_eq!(excerpt.len(), 3, "p, its heading and the root");
            assert_eq!(excerpt.get(p), doc.get(p));
            assert_eq!(excerpt.ancestors(p).collect::<Vec<_>>(), [h, BlockId::ROOT]);
            assert_eq!(excerpt.children(h), [p, q], "children as stored");
            assert!(!excerpt.contains(q) && !excerpt.contains(other));

            assert_eq!(store.labelled("d", "l2").unwrap(), [q]);
            assert!(store.labelled("d", "none").unwrap().is_empty());
            assert_eq!(store.edge_counts("d", p).unwrap(), (1, 0));
            assert_eq!(store.edge_counts("d", other).unwrap(), (0, 1));
            assert!(store.read_excerpt("nope", &[p]).is_err());
        }
    }
}
