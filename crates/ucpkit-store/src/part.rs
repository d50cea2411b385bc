//! Part of a stored document, grown by what a call asks for: the blocks of
//! some subtrees with their ancestors and the edges that leave or reach
//! them, all read at one revision. A one-shot call that touches a few
//! sections (a context for a question) reads those, not the document.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, LazyLock};

use ucpkit_core::{BlockId, Document, DocumentLoader, DocumentMetadata, Edge, IdMap, IdSet};

use crate::excerpt::{batched, each_batch, read_many, read_one};
use crate::load::{decode_edge, read_header, Row};
use crate::sql::Tx;
use crate::{
    check_revision, codec, db, document_number, revision_in, write_session, SessionWrite, Store, StoreError, Written,
};

/// Blocks of a stored document read so far, with their edges.
#[derive(Debug, Clone)]
pub struct Part {
    name: String,
    metadata: DocumentMetadata,
    version: u64,
    revision: u64,
    rows: Vec<Row>,
    /// Each block held, with its place in `rows`.
    held: IdMap<usize>,
    /// The edges read, each with its source and place among the source's
    /// edges (the order a whole load gives them).
    edges: Vec<KeyedEdge>,
    /// Stored edges read so far, by source and place among its edges.
    edges_read: HashSet<(BlockId, i64)>,
    /// Ids asked for that the stored document does not hold.
    not_stored: IdSet,
}

impl Part {
    /// The revision of the stored document it is part of.
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// How many blocks it holds.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether it holds no block (not even the root).
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Whether it holds block `id`.
    pub fn holds(&self, id: BlockId) -> bool {
        self.held.contains_key(&id)
    }

    /// Whether the stored document's state of block `id` is known: the
    /// part holds it, or it was asked for and the document does not hold
    /// it.
    pub fn settled(&self, id: BlockId) -> bool {
        self.held.contains_key(&id) || self.not_stored.contains(&id)
    }

    /// The blocks `document` (grown from this part) changed since it was
    /// read that the part did not hold and `document` does not hold now:
    /// rows a write of `document` would delete without knowing them (a
    /// block whose incoming edges changed, say). Empty when it can be
    /// written ([`Store::save_part`]); unknown changes count as none here.
    pub fn outside(&self, document: &Document) -> Vec<BlockId> {
        let Some(changes) = document.unsaved_changes() else { return Vec::new() };
        changes
            .blocks
            .into_iter()
            .filter(|&id| !self.held.contains_key(&id) && document.holding(id).is_none())
            .collect()
    }

    /// Targets of the edges read so far that it does not hold (a link out
    /// of a block it holds to one it has not read), in the order read.
    pub fn unread_targets(&self) -> Vec<BlockId> {
        let mut seen = IdSet::default();
        self.edges.iter().map(|(_, e)| e.target).filter(|t| !self.held.contains_key(t) && seen.insert(*t)).collect()
    }

    /// The blocks and edges read so far as a partial document
    /// ([`Document::partial`]): it records the ids asked of it that it does
    /// not hold, and no store writes it.
    pub fn document(&self) -> Document {
        let mut loader = DocumentLoader::new(&self.name, self.metadata.clone(), self.version, self.rows.len());
        for (block, children) in &self.rows {
            loader.push(block.clone(), children.clone());
        }
        let mut edges: Vec<&((BlockId, i64), Edge)> = self.edges.iter().collect();
        edges.sort_by_key(|(key, _)| *key);
        for (_, edge) in edges {
            loader.push_edge(edge.clone());
        }
        let mut doc = loader.finish();
        doc.partial();
        doc
    }
}

impl Store {
    /// Part of document `name` holding its root alone, at the revision
    /// the store holds now; `None` when other writers kept coming in
    /// between its reads (the caller reads the document whole).
    pub fn part(&self, name: &str) -> Result<Option<Part>, StoreError> {
        for _ in 0..crate::load::TRIES {
            if let Some(part) = self.try_part(name)? {
                return Ok(Some(part));
            }
        }
        Ok(None)
    }

    fn try_part(&self, name: &str) -> Result<Option<Part>, StoreError> {
        let (revision, header) = self.db.read(|tx| {
            let revision = revision_in(tx, name)?;
            let doc = document_number(tx, name)?;
            Ok((revision, read_header(tx, doc, name)?))
        })?;
        let mut part = Part {
            name: name.to_owned(),
            metadata: header.metadata,
            version: header.version,
            revision,
            rows: Vec::new(),
            held: IdMap::default(),
            edges: Vec::new(),
            edges_read: HashSet::new(),
            not_stored: IdSet::default(),
        };
        // False when another writer came in between the two reads.
        Ok(self.extend_part(&mut part, &[BlockId::ROOT], 0, usize::MAX)?.then_some(part))
    }

    /// Adds to `part` the blocks `ids` with every ancestor, the blocks
    /// below `ids` down to `depth` levels (`usize::MAX`: whole subtrees),
    /// and the edges that leave or reach any block added. Returns false,
    /// adding nothing, when the stored document is no longer at the part's
    /// revision, or when the part would hold more than `most` blocks. Ids
    /// the document does not hold are left out.
    pub fn extend_part(&self, part: &mut Part, ids: &[BlockId], depth: usize, most: usize) -> Result<bool, StoreError> {
        let Some(grown) = self.db.read(|tx| grow(tx, part, ids, depth, most))? else { return Ok(false) };
        for (key, edge) in grown.edges {
            if part.edges_read.insert(key) {
                part.edges.push((key, edge));
            }
        }
        for row in grown.added {
            part.held.insert(row.0.id, part.rows.len());
            part.rows.push(row);
        }
        part.not_stored.extend(grown.not_stored);
        Ok(true)
    }

    /// Writes what `document` changed since it was grown from `part`
    /// ([`Part::document`]): the touched rows only, with the document's
    /// totals moved by them, and a named session's record, in one
    /// transaction; snapshots are left as they are. Refused, writing
    /// nothing, when the stored document moved on from the part's
    /// revision ([`StoreError::Conflict`]), or when a change reaches a
    /// block the part did not hold ([`Part::outside`]) or is not known
    /// ([`StoreError::Partial`]).
    pub fn save_part(
        &mut self,
        part: &Part,
        document: &Document,
        session: Option<SessionWrite<'_>>,
    ) -> Result<Written, StoreError> {
        if document.name() != part.name {
            return Err(StoreError::NameMismatch { expected: part.name.clone(), found: document.name().to_owned() });
        }
        let changes = document.unsaved_changes().ok_or_else(|| StoreError::Partial(part.name.clone()))?;
        if !part.outside(document).is_empty() {
            return Err(StoreError::Partial(part.name.clone()));
        }
        self.db.write(|tx| {
            check_revision(tx, &part.name, part.revision)?;
            if !changes.blocks.is_empty() {
                // The revision matched, so the stored version is the part's.
                if !codec::write_changes(tx, document, changes.since_version, &changes.blocks)? {
                    let found = revision_in(tx, &part.name)?;
                    return Err(StoreError::Conflict { document: part.name.clone(), expected: part.revision, found });
                }
            }
            let session = session.map(|session| write_session(tx, &part.name, session)).transpose()?;
            Ok(Written { document: revision_in(tx, &part.name)?, session })
        })
    }
}

/// What [`Store::extend_part`] read, to add to the part.
struct Grown {
    added: Vec<Row>,
    edges: Vec<KeyedEdge>,
    not_stored: Vec<BlockId>,
}

/// An edge with its source and place among the source's edges.
type KeyedEdge = ((BlockId, i64), Edge);

/// Reads in `tx` what [`Store::extend_part`] adds to `part`; `None` when
/// the document moved on from the part's revision or the part would hold
/// more than `most` blocks.
fn grow(tx: &Tx<'_>, part: &Part, ids: &[BlockId], depth: usize, most: usize) -> Result<Option<Grown>, StoreError> {
    if revision_in(tx, &part.name)? != part.revision {
        return Ok(None);
    }
    let doc = document_number(tx, &part.name)?;
    let mut files: HashMap<String, Arc<str>> = HashMap::new();
    let mut added: Vec<Row> = Vec::new();
    let mut not_stored: Vec<BlockId> = Vec::new();
    let mut seen: IdSet = IdSet::default();
    // The blocks asked for, then everything below them, level by level.
    let mut level: Vec<BlockId> = ids.to_vec();
    let mut parents: Vec<BlockId> = Vec::new();
    for _ in 0..=depth {
        // The level's blocks to read, read together.
        let mut wanted = IdSet::default();
        let to_read: Vec<BlockId> = level
            .iter()
            .copied()
            .filter(|id| !seen.contains(id) && (ids.contains(id) || !part.held.contains_key(id)) && wanted.insert(*id))
            .collect();
        let mut read = read_many(tx, doc, &part.name, &to_read, &mut files)?;
        let mut next = Vec::new();
        for id in level {
            if !seen.insert(id) {
                continue;
            }
            if let Some(&at) = part.held.get(&id).filter(|_| !ids.contains(&id)) {
                // Held already: what is below it may not be.
                next.extend(part.rows[at].1.iter().copied());
                continue;
            }
            let Some((row, parent)) = read.remove(&id) else {
                not_stored.push(id);
                continue;
            };
            next.extend(row.1.iter().copied());
            parents.extend(parent);
            if !part.held.contains_key(&id) {
                added.push(row);
            }
            if part.rows.len() + added.len() > most {
                return Ok(None);
            }
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    // Every ancestor not held yet.
    while let Some(id) = parents.pop() {
        if part.held.contains_key(&id) || !seen.insert(id) {
            continue;
        }
        if let Some((row, parent)) = read_one(tx, doc, &part.name, id, &mut files)? {
            parents.extend(parent);
            added.push(row);
        }
    }
    let edges = edges_of(tx, doc, &part.name, &added)?;
    Ok(Some(Grown { added, edges, not_stored }))
}

/// The edges that leave and reach the blocks of `rows`, read in batches:
/// each block's outgoing ones in their order, then its incoming ones by
/// source and place (the order one read per block gave).
fn edges_of(tx: &Tx<'_>, doc: i64, name: &str, rows: &[Row]) -> Result<Vec<KeyedEdge>, StoreError> {
    const READING: &str = "reading edges";
    static OUT: LazyLock<String> =
        LazyLock::new(|| batched("SELECT source, type, target, metadata, seq FROM edges WHERE doc = ?1 AND source IN"));
    // The planner would walk the document's edges by its primary key
    // without the hint.
    static INTO: LazyLock<String> = LazyLock::new(|| {
        batched("SELECT source, type, target, metadata, seq FROM edges INDEXED BY edges_by_target WHERE doc = ?1 AND target IN")
    });
    let ids: Vec<BlockId> = rows.iter().map(|(block, _)| block.id).collect();
    let mut out: IdMap<Vec<KeyedEdge>> = IdMap::default();
    let mut into: IdMap<Vec<KeyedEdge>> = IdMap::default();
    for (sql, by_target) in [(&*OUT, false), (&*INTO, true)] {
        let found = if by_target { &mut into } else { &mut out };
        each_batch(tx, READING, sql, doc, &ids, |row| {
            let seq = row.int_of(4).map_err(db(READING))?;
            let edge = decode_edge(row, name)?;
            let end = if by_target { edge.target } else { edge.source };
            found.entry(end).or_default().push(((edge.source, seq), edge));
            Ok(())
        })?;
    }
    let mut edges = Vec::new();
    for id in ids {
        for found in [&mut out, &mut into] {
            let mut these = found.remove(&id).unwrap_or_default();
            these.sort_by_key(|(key, _)| *key);
            edges.extend(these);
        }
    }
    Ok(edges)
}

#[cfg(test)]
mod tests {
    use ucpkit_core::{Block, BlockId, Content, Document, Edge, EdgeType, Metadata, Role};

    use crate::{Store, StoreError};

    fn block(text: &str, role: Role, n: u32) -> Block {
        let content = Content::markdown(text);
        Block::new(Block::derive_id(&content, Some(&role), "", n), content, Metadata::with_role(role))
    }

    #[test]
    fn a_part_grows_by_subtrees_with_their_ancestors_and_edges_and_is_never_written() {
        for place in crate::testing::places() {
            let mut store = place.open();
            let mut doc = Document::new("d");
            let a = doc.append_child(BlockId::ROOT, block("# A", Role::Heading1, 0)).unwrap();
            let a1 = doc.append_child(a, block("## A1", Role::Heading2, 1)).unwrap();
            let p = doc.append_child(a1, block("deep", Role::Paragraph, 2)).unwrap();
            let b = doc.append_child(BlockId::ROOT, block("# B", Role::Heading1, 3)).unwrap();
            let q = doc.append_child(b, block("other", Role::Paragraph, 4)).unwrap();
            doc.add_edge(Edge::new(q, EdgeType::LinksTo, p)).unwrap();
            doc.add_edge(Edge::new(p, EdgeType::References, b)).unwrap();
            store.save_document(&doc).unwrap();

            let mut part = store.part("d").unwrap().unwrap();
            assert_eq!(part.len(), 1, "the root alone");
            assert!(store.extend_part(&mut part, &[a1], usize::MAX, usize::MAX).unwrap());
            let held = part.document();
            assert_eq!(held.len(), 4, "A1, what is below it, and its ancestors");
            assert_eq!(held.get(p), doc.get(p));
            assert_eq!(held.ancestors(p).collect::<Vec<_>>(), [a1, a, BlockId::ROOT]);
            assert_eq!(held.children(BlockId::ROOT), [a, b], "children as stored");
            // The edges that leave and reach what it holds, though their other end is not held.
            assert_eq!(held.edges().outgoing(p).len(), 1);
            assert_eq!(held.edges().incoming(p).len(), 1);

            // What it was asked for and does not hold is recorded.
            let absent = held.clone().partial();
            assert!(held.get(q).is_none() && !held.contains(b));
            assert_eq!(absent.take().len(), 2);

            // The one edge out to a block not read points at B; read alone, B
            // comes without what is below it.
            assert_eq!(part.unread_targets(), [b]);
            let mut linked = store.part("d").unwrap().unwrap();
            assert!(store.extend_part(&mut linked, &[a1], usize::MAX, usize::MAX).unwrap());
            let targets = linked.unread_targets();
            assert!(store.extend_part(&mut linked, &targets, 0, usize::MAX).unwrap());
            assert!(linked.holds(b) && !linked.holds(q));
            assert!(linked.unread_targets().is_empty());

            // No edge is held twice when both its ends come in.
            assert!(store.extend_part(&mut part, &[b], usize::MAX, usize::MAX).unwrap());
            let whole = part.document();
            assert_eq!(whole.len(), doc.len());
            assert_eq!(whole.edges().outgoing(q).len(), 1);
            assert_eq!(whole.edges().incoming(p).len(), 1);

            // A part is never written in the stored document's place.
            assert!(matches!(store.save_document(&whole), Err(StoreError::Partial(_))));
            assert_eq!(store.load_document("d").unwrap().len(), doc.len());

            // Too many blocks, or a document that moved on: nothing is added.
            let mut small = store.part("d").unwrap().unwrap();
            assert!(!store.extend_part(&mut small, &[a], usize::MAX, 2).unwrap());
            assert_eq!(small.len(), 1);
            let mut edited = doc.clone();
            edited.append_child(b, block("new", Role::Paragraph, 5)).unwrap();
            store.save_document(&edited).unwrap();
            assert!(!store.extend_part(&mut small, &[b], usize::MAX, usize::MAX).unwrap());
        }
    }

    #[test]
    fn a_part_writes_what_it_changed_and_refuses_what_it_did_not_hold() {
        for place in crate::testing::places() {
            let mut store = place.open();
            let mut doc = Document::new("d");
            let a = doc.append_child(BlockId::ROOT, block("# A", Role::Heading1, 0)).unwrap();
            let p = doc.append_child(a, block("deep", Role::Paragraph, 1)).unwrap();
            let b = doc.append_child(BlockId::ROOT, block("# B", Role::Heading1, 2)).unwrap();
            let q = doc.append_child(b, block("other", Role::Paragraph, 3)).unwrap();
            doc.add_edge(Edge::new(q, EdgeType::LinksTo, p)).unwrap();
            store.save_document(&doc).unwrap();
            let totals = |store: &Store| {
                let d = store.documents().unwrap().into_iter().next().unwrap();
                (d.blocks, d.tokens, d.edges)
            };
            let recount = |store: &Store| {
                let d = store.load_document("d").unwrap();
                let tokens = d.blocks().map(|b| u64::from(b.metadata.tokens.unwrap_or(0))).sum();
                (d.len() as u64, tokens, d.edges().len() as u64)
            };

            // Edit p, add a block under it and link it: only those rows move.
            let mut part = store.part("d").unwrap().unwrap();
            assert!(store.extend_part(&mut part, &[p], 0, usize::MAX).unwrap());
            let mut held = part.document();
            held.get_mut(p).unwrap().content = Content::markdown("edited");
            let mut added = block("added", Role::Paragraph, 9);
            added.metadata.tokens = Some(7);
            let added = held.append_child(p, added).unwrap();
            held.add_edge(Edge::new(added, EdgeType::References, p)).unwrap();
            assert!(part.outside(&held).is_empty());
            store.save_part(&part, &held, None).unwrap();
            let stored = store.load_document("d").unwrap();
            assert_eq!(stored.get(p).unwrap().plain_text(), "edited");
            assert_eq!(stored.children(p), [added]);
            assert_eq!(stored.get(q), doc.get(q), "a block the part did not hold is as it was");
            assert_eq!(stored.edges().incoming(p).len(), 2);
            assert_eq!(totals(&store), recount(&store));

            // Written at a revision the store has moved on from: refused.
            assert!(matches!(store.save_part(&part, &held, None), Err(StoreError::Conflict { .. })));

            // Deleting p drops q's link to it: q is not held, so nothing is written.
            let mut part = store.part("d").unwrap().unwrap();
            assert!(store.extend_part(&mut part, &[p], usize::MAX, usize::MAX).unwrap());
            let mut held = part.document();
            held.remove_block(p, ucpkit_core::RemoveMode::Cascade).unwrap();
            assert_eq!(part.outside(&held), [q]);
            let before = store.load_document("d").unwrap().to_json(false);
            assert!(matches!(store.save_part(&part, &held, None), Err(StoreError::Partial(_))));
            assert_eq!(store.load_document("d").unwrap().to_json(false), before);

            // Holding q too, the same delete is written, q's link gone with it.
            assert!(store.extend_part(&mut part, &[q], 0, usize::MAX).unwrap());
            let mut held = part.document();
            held.remove_block(p, ucpkit_core::RemoveMode::Cascade).unwrap();
            assert!(part.outside(&held).is_empty());
            store.save_part(&part, &held, None).unwrap();
            let stored = store.load_document("d").unwrap();
            assert!(!stored.contains(p) && !stored.contains(added));
            assert!(stored.edges().outgoing(q).is_empty());
            assert_eq!(totals(&store), recount(&store));
        }
    }
}
