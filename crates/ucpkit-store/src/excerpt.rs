//! Reading a few blocks of a stored document without loading it: what a
//! one-shot call that looks at some blocks (a search's hits, one block's
//! view) needs, at a cost that follows those blocks, not the document.

use std::collections::HashMap;

use rusqlite::{params, OptionalExtension, Transaction};
use ucpkit_core::{BlockId, Document, DocumentLoader, IdSet};

use crate::load::{block_id, decode_block, read_header, Row, BLOCK_COLUMNS};
use crate::{db, list, revision_in, Store, StoreError};

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
        let tx = self.conn.unchecked_transaction().map_err(db("starting a read"))?;
        let revision = revision_in(&tx, name)?;
        let doc = self.document_number(&tx, name)?;
        let header = read_header(&tx, doc, name)?;
        let mut stmt = tx
            .prepare_cached(&format!("SELECT {BLOCK_COLUMNS}, parent FROM blocks WHERE doc = ?1 AND id = ?2"))
            .map_err(db("reading blocks"))?;
        let mut files = HashMap::new();
        let mut seen = IdSet::default();
        let mut rows: Vec<Row> = Vec::new();
        let mut next: Vec<BlockId> = ids.to_vec();
        while let Some(id) = next.pop() {
            if !seen.insert(id) {
                continue;
            }
            let read = stmt
                .query_row(params![doc, &id.as_bytes()[..]], |row| {
                    let parent = row.get_ref(15)?.as_blob_or_null().ok().flatten().and_then(|b| block_id(Some(b)));
                    Ok((decode_block(row, name, &mut files), parent))
                })
                .optional()
                .map_err(db("reading blocks"))?;
            if let Some((block, parent)) = read {
                rows.push(block?);
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
                let read = stmt
                    .query_row(params![doc, &id.as_bytes()[..]], |row| Ok(decode_block(row, name, &mut files)))
                    .optional()
                    .map_err(db("reading blocks"))?;
                if let Some(block) = read {
                    let (block, children) = block?;
                    queue.extend(children.iter().copied());
                    rows.push((block, children));
                    taken += 1;
                }
            }
        }
        drop(stmt);
        tx.commit().map_err(db("ending a read"))?;
        let mut loader = DocumentLoader::new(name, header.metadata, header.version, rows.len());
        for (block, children) in rows {
            loader.push(block, children);
        }
        Ok((loader.finish(), revision))
    }

    /// The blocks of document `name` labelled `label`.
    pub fn labelled(&self, name: &str, label: &str) -> Result<Vec<BlockId>, StoreError> {
        let tx = self.conn.unchecked_transaction().map_err(db("starting a read"))?;
        let doc = self.document_number(&tx, name)?;
        let mut stmt =
            tx.prepare("SELECT id FROM blocks WHERE doc = ?1 AND label = ?2").map_err(db("finding a label"))?;
        let ids = stmt
            .query_map(params![doc, label], |row| Ok(block_id(row.get_ref(0)?.as_blob().ok())))
            .map_err(db("finding a label"))?
            .filter_map(|id| id.transpose())
            .collect::<Result<Vec<BlockId>, _>>()
            .map_err(db("finding a label"))?;
        drop(stmt);
        tx.commit().map_err(db("ending a read"))?;
        Ok(ids)
    }

    /// How many edges leave and how many reach block `id` of document `name`.
    pub fn edge_counts(&self, name: &str, id: BlockId) -> Result<(usize, usize), StoreError> {
        let tx = self.conn.unchecked_transaction().map_err(db("starting a read"))?;
        let doc = self.document_number(&tx, name)?;
        let count = |sql: &str| -> Result<usize, StoreError> {
            let n: i64 =
                tx.query_row(sql, params![doc, &id.as_bytes()[..]], |r| r.get(0)).map_err(db("counting edges"))?;
            Ok(n.max(0) as usize)
        };
        let out = count("SELECT count(*) FROM edges WHERE doc = ?1 AND source = ?2")?;
        let into = count("SELECT count(*) FROM edges INDEXED BY edges_by_target WHERE doc = ?1 AND target = ?2")?;
        tx.commit().map_err(db("ending a read"))?;
        Ok((out, into))
    }

    /// The row number of document `name` (an error naming the stored ones
    /// when there is none).
    pub(crate) fn document_number(&self, tx: &Transaction<'_>, name: &str) -> Result<i64, StoreError> {
        let doc = tx
            .query_row("SELECT doc FROM documents WHERE name = ?1", params![name], |r| r.get::<_, i64>(0))
            .optional()
            .map_err(db("finding the document"))?;
        match doc {
            Some(doc) => Ok(doc),
            None => {
                let names: Vec<String> = self.documents()?.into_iter().map(|d| d.name).collect();
                Err(StoreError::NoSuchDocument { name: name.to_owned(), available: list(&names) })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use ucpkit_core::{Block, BlockId, Content, Document, Edge, EdgeType, Metadata, Role};

    use crate::Store;

    fn block(text: &str, role: Role, n: u32) -> Block {
        let content = Content::markdown(text);
        let id = Block::derive_id(&content, Some(&role), "", n);
        let metadata = Metadata { label: Some(format!("l{n}")), ..Metadata::with_role(role) };
        Block::new(id, content, metadata)
    }

    #[test]
    fn an_excerpt_holds_the_blocks_asked_for_and_their_ancestors_as_stored() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path()).unwrap();
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
