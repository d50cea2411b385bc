//! The document: blocks, their ordered tree, and the edge index.
//!
//! Every block lives in one map keyed by id together with its parent and its
//! ordered children, so parent lookup and children listing are O(1),
//! ancestors O(depth) and siblings O(children of the parent).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::block::Block;
use crate::edge::{Edge, EdgeIndex, EdgeType};
use crate::id::{BlockId, IdSet};
use crate::journal::Journal;
use crate::loader::link_parents;
use crate::nodes::Nodes;
use crate::undo::UndoLog;

/// Document-level facts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DocumentMetadata {
    /// Human title (front matter `title`, the first h1, or the file name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Where the document was imported from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Creation time (ms since the Unix epoch).
    #[serde(default)]
    pub created_ms: i64,
    /// Last modification time (ms since the Unix epoch).
    #[serde(default)]
    pub modified_ms: i64,
    /// Name of the encoding cached block token counts were made with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<String>,
    /// Anything else (front matter, import settings).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub custom: BTreeMap<String, serde_json::Value>,
}

/// A structural change the document refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StructureError {
    /// The id names no block of this document.
    #[error("block {0} not found")]
    BlockNotFound(BlockId),
    /// A block with this id already exists.
    #[error("block {0} already exists")]
    DuplicateId(BlockId),
    /// The change would put a block under itself.
    #[error("cannot move {block} under {target}: {target} is {block} or one of its descendants")]
    Cycle {
        /// The block being moved.
        block: BlockId,
        /// The requested new parent.
        target: BlockId,
    },
    /// The root cannot be moved or removed.
    #[error("the document root cannot be moved or removed")]
    Root,
    /// A child position past the end of the children list.
    #[error("position {index} is out of range: {parent} has {len} children")]
    PositionOutOfRange {
        /// The parent.
        parent: BlockId,
        /// The requested position.
        index: usize,
        /// How many children the parent has.
        len: usize,
    },
}

/// What to do with the children of a removed block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoveMode {
    /// Remove the whole subtree.
    Cascade,
    /// Hand the children to the removed block's parent, in its place.
    PreserveChildren,
    /// Leave the children where they are, unreachable from the root (PRUNE
    /// UNREACHABLE removes them later).
    OrphanChildren,
}

/// What a removal took out of the document.
#[derive(Debug, Default, PartialEq)]
pub struct Removed {
    /// Removed blocks, the requested block first.
    pub blocks: Vec<Block>,
    /// Edges that touched removed blocks.
    pub edges: Vec<Edge>,
}

#[derive(Debug, Clone)]
pub(crate) struct Node {
    /// Shared between copies of the document (a script's copy to return
    /// to costs a pointer per block); copied when one of them changes it.
    pub(crate) block: Arc<Block>,
    pub(crate) parent: Option<BlockId>,
    pub(crate) children: Vec<BlockId>,
}

/// A document: a tree of blocks under a root, plus typed edges.
#[derive(Debug, Clone)]
pub struct Document {
    name: String,
    /// Document-level facts.
    pub metadata: DocumentMetadata,
    pub(crate) version: u64,
    pub(crate) nodes: Nodes,
    pub(crate) edges: EdgeIndex,
    pub(crate) journal: Journal,
    pub(crate) undo: UndoLog,
    /// For a part of a stored document ([`Document::partial`]): the ids
    /// asked for that it does not hold.
    absent: Option<Absent>,
}

/// The ids a partial document was asked for and does not hold (shared by
/// its copies): what a caller reads next to answer on the whole document.
#[derive(Debug, Clone, Default)]
pub struct Absent(Arc<std::sync::Mutex<IdSet>>);

impl Absent {
    fn record(&self, id: BlockId) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(id);
    }

    /// The ids asked for and not held since the last call, emptied.
    pub fn take(&self) -> IdSet {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Document {
    /// An empty document holding only its root block.
    pub fn new(name: impl Into<String>) -> Self {
        let mut nodes = Nodes::default();
        nodes.insert(Node { block: Arc::new(Block::root()), parent: None, children: Vec::new() });
        Document {
            name: name.into(),
            metadata: DocumentMetadata::default(),
            version: 0,
            nodes,
            edges: EdgeIndex::default(),
            journal: Journal::default(),
            undo: UndoLog::default(),
            absent: None,
        }
    }

    /// Marks this document as a part of a stored one (some of its blocks
    /// and edges, read for one call): every id asked for that it does not
    /// hold is recorded in the returned [`Absent`], and a store refuses to
    /// write it ([`Document::is_partial`]).
    pub fn partial(&mut self) -> Absent {
        self.absent.get_or_insert_with(Absent::default).clone()
    }

    /// Whether this is a part of a stored document, never to be written
    /// back in its place.
    pub fn is_partial(&self) -> bool {
        self.absent.is_some()
    }

    /// Records `id` as asked for and not held, in a partial document.
    fn missed(&self, id: BlockId) {
        if let Some(absent) = &self.absent {
            absent.record(id);
        }
    }

    /// An empty document with room for `capacity` blocks.
    pub fn with_capacity(name: impl Into<String>, capacity: usize) -> Self {
        let mut doc = Document::new(name);
        doc.nodes.reserve(capacity);
        doc
    }

    /// The document's name (its key in a store).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Renames the document (its key in a store).
    pub fn set_name(&mut self, name: impl Into<String>) {
        self.name = name.into();
    }

    /// A counter bumped by every change.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Moves the version past `version`, as a change would: a document put
    /// back to an earlier state gets a version no later state had, so what
    /// is keyed by version (caches, "saved at") never mistakes one for the
    /// other.
    pub fn advance_version_past(&mut self, version: u64) {
        self.version = self.version.max(version) + 1;
    }

    /// Sets the version (a rewound document takes its mark's back).
    pub(crate) fn set_version(&mut self, version: u64) {
        self.version = version;
    }

    /// The root block's id.
    pub fn root(&self) -> BlockId {
        BlockId::ROOT
    }

    /// Number of blocks, the root included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the document holds nothing but its root.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 1
    }

    /// Whether a block exists.
    pub fn contains(&self, id: BlockId) -> bool {
        let held = self.nodes.contains_key(&id);
        if !held {
            self.missed(id);
        }
        held
    }

    /// A block by id.
    pub fn get(&self, id: BlockId) -> Option<&Block> {
        let block = self.nodes.get(&id).map(|n| n.block.as_ref());
        if block.is_none() {
            self.missed(id);
        }
        block
    }

    /// A block by id, for modification (bumps the version).
    pub fn get_mut(&mut self, id: BlockId) -> Option<&mut Block> {
        if !self.nodes.contains_key(&id) {
            return None;
        }
        self.before_change(id);
        self.version += 1;
        let node = self.nodes.get_mut(&id)?;
        Some(Arc::make_mut(&mut node.block))
    }

    /// A block by id, like [`Document::get`], but never recorded as asked
    /// for in a partial document: for a writer checking what it holds.
    pub fn holding(&self, id: BlockId) -> Option<&Block> {
        self.nodes.get(&id).map(|n| n.block.as_ref())
    }

    /// The parent of a block (`None` for the root, orphans and unknown ids).
    pub fn parent(&self, id: BlockId) -> Option<BlockId> {
        match self.nodes.get(&id) {
            Some(node) => node.parent,
            None => {
                self.missed(id);
                None
            }
        }
    }

    /// The ordered children of a block (empty for unknown ids).
    pub fn children(&self, id: BlockId) -> &[BlockId] {
        match self.nodes.get(&id) {
            Some(node) => node.children.as_slice(),
            None => {
                self.missed(id);
                &[]
            }
        }
    }

    /// The position of a block among its parent's children.
    pub fn index_in_parent(&self, id: BlockId) -> Option<usize> {
        let parent = self.parent(id)?;
        self.children(parent).iter().position(|c| *c == id)
    }

    /// The other children of a block's parent, in order.
    pub fn siblings(&self, id: BlockId) -> impl Iterator<Item = BlockId> + '_ {
        let parent = self.parent(id);
        parent.map_or(&[][..], |p| self.children(p)).iter().copied().filter(move |c| *c != id)
    }

    /// Parent, grandparent, ... up to the root (O(depth)).
    pub fn ancestors(&self, id: BlockId) -> Ancestors<'_> {
        Ancestors { doc: self, next: self.parent(id), steps: 0 }
    }

    /// Number of ancestors of a block (the root has depth 0).
    pub fn depth(&self, id: BlockId) -> usize {
        self.ancestors(id).count()
    }

    /// The descendants of a block in document (pre-)order, the block excluded.
    pub fn descendants(&self, id: BlockId) -> Descendants<'_> {
        let mut stack: Vec<BlockId> = self.children(id).to_vec();
        stack.reverse();
        Descendants { doc: self, stack, emitted: 0 }
    }

    /// Every block reachable from the root, root first, in document order.
    pub fn document_order(&self) -> impl Iterator<Item = BlockId> + '_ {
        std::iter::once(BlockId::ROOT).chain(self.descendants(BlockId::ROOT))
    }

    /// Whether `other` holds the same blocks in the same tree, ingest and
    /// edit times aside (a re-ingested, unchanged corpus is the same).
    pub fn same_content(&self, other: &Document) -> bool {
        let timeless = |block: Option<&Block>| {
            block.cloned().map(|mut block| {
                block.metadata.timestamps = crate::Timestamps::default();
                block
            })
        };
        self.len() == other.len()
            && self
                .document_order()
                .all(|id| timeless(self.get(id)) == timeless(other.get(id)) && self.children(id) == other.children(id))
    }

    /// Every block in no particular order, orphans included.
    pub fn blocks(&self) -> impl Iterator<Item = &Block> {
        self.nodes.values().map(|n| n.block.as_ref())
    }

    /// Appends `block` as the last child of `parent`.
    pub fn append_child(&mut self, parent: BlockId, block: Block) -> Result<BlockId, StructureError> {
        let len = self.children(parent).len();
        self.insert_child(parent, len, block)
    }

    /// Inserts `block` as child number `index` of `parent`.
    pub fn insert_child(&mut self, parent: BlockId, index: usize, block: Block) -> Result<BlockId, StructureError> {
        let id = block.id;
        if self.nodes.contains_key(&id) {
            return Err(StructureError::DuplicateId(id));
        }
        let len = self.nodes.get(&parent).ok_or(StructureError::BlockNotFound(parent))?.children.len();
        if index > len {
            return Err(StructureError::PositionOutOfRange { parent, index, len });
        }
        self.before_change(id);
        self.before_change(parent);
        self.nodes.get_mut(&parent).expect("checked above").children.insert(index, id);
        self.nodes.insert(Node { block: Arc::new(block), parent: Some(parent), children: Vec::new() });
        self.version += 1;
        Ok(id)
    }

    /// Moves `id` (with its subtree) to child number `index` of `new_parent`,
    /// or to its end when `index` is `None`. Moving a block under itself or
    /// one of its descendants is refused and changes nothing.
    pub fn move_block(&mut self, id: BlockId, new_parent: BlockId, index: Option<usize>) -> Result<(), StructureError> {
        if id.is_root() {
            return Err(StructureError::Root);
        }
        if !self.contains(id) {
            return Err(StructureError::BlockNotFound(id));
        }
        if !self.contains(new_parent) {
            return Err(StructureError::BlockNotFound(new_parent));
        }
        if new_parent == id || self.ancestors(new_parent).any(|a| a == id) {
            return Err(StructureError::Cycle { block: id, target: new_parent });
        }
        let old_parent = self.parent(id);
        let mut len = self.children(new_parent).len();
        if old_parent == Some(new_parent) {
            len -= 1;
        }
        let index = index.unwrap_or(len);
        if index > len {
            return Err(StructureError::PositionOutOfRange { parent: new_parent, index, len });
        }
        for changed in [Some(id), old_parent, Some(new_parent)].into_iter().flatten() {
            self.before_change(changed);
        }
        self.detach(id);
        self.nodes.get_mut(&new_parent).expect("checked above").children.insert(index, id);
        self.nodes.get_mut(&id).expect("checked above").parent = Some(new_parent);
        self.version += 1;
        Ok(())
    }

    /// Removes a block; its children go with it or move up, per `mode`.
    /// Edges touching removed blocks are removed too.
    pub fn remove_block(&mut self, id: BlockId, mode: RemoveMode) -> Result<Removed, StructureError> {
        if id.is_root() {
            return Err(StructureError::Root);
        }
        if !self.contains(id) {
            return Err(StructureError::BlockNotFound(id));
        }
        let parent = self.parent(id);
        let (doomed, children_moved): (Vec<BlockId>, Vec<BlockId>) = match mode {
            RemoveMode::Cascade => (std::iter::once(id).chain(self.descendants(id)).collect(), Vec::new()),
            RemoveMode::OrphanChildren | RemoveMode::PreserveChildren => (vec![id], self.children(id).to_vec()),
        };
        // The removed rows go, the parent's children change, moved-up or
        // orphaned children get another parent, and edges into removed
        // blocks leave their sources' rows.
        let sources: Vec<BlockId> =
            doomed.iter().flat_map(|&block| self.edges.incoming(block).iter().map(|(source, _)| *source)).collect();
        for changed in doomed.iter().chain(&parent).chain(&children_moved).chain(&sources) {
            self.before_change(*changed);
        }
        let position = self.detach(id);
        let mut removed = Removed::default();
        match mode {
            RemoveMode::Cascade => {
                for block in doomed {
                    removed.edges.extend(self.edges.remove_block(block));
                    removed.blocks.extend(self.nodes.remove(&block).map(|n| Arc::unwrap_or_clone(n.block)));
                }
            }
            RemoveMode::OrphanChildren => {
                let node = self.nodes.remove(&id).expect("checked above");
                removed.edges.extend(self.edges.remove_block(id));
                for child in &node.children {
                    if let Some(c) = self.nodes.get_mut(child) {
                        c.parent = None;
                    }
                }
                removed.blocks.push(Arc::unwrap_or_clone(node.block));
            }
            RemoveMode::PreserveChildren => {
                let node = self.nodes.remove(&id).expect("checked above");
                removed.edges.extend(self.edges.remove_block(id));
                if let Some((parent, index)) = parent.zip(position) {
                    for child in &node.children {
                        if let Some(c) = self.nodes.get_mut(child) {
                            c.parent = Some(parent);
                        }
                    }
                    let siblings = &mut self.nodes.get_mut(&parent).expect("parent exists").children;
                    siblings.splice(index..index, node.children.iter().copied());
                }
                removed.blocks.push(Arc::unwrap_or_clone(node.block));
            }
        }
        self.version += 1;
        Ok(removed)
    }

    /// Unhooks a block from its parent; returns its former position.
    fn detach(&mut self, id: BlockId) -> Option<usize> {
        let parent = self.nodes.get_mut(&id)?.parent.take()?;
        let siblings = &mut self.nodes.get_mut(&parent)?.children;
        let position = siblings.iter().position(|c| *c == id)?;
        siblings.remove(position);
        Some(position)
    }

    /// Adds an edge between two existing blocks; `Ok(false)` when the same
    /// edge already exists.
    pub fn add_edge(&mut self, edge: Edge) -> Result<bool, StructureError> {
        for end in [edge.source, edge.target] {
            if !self.contains(end) {
                return Err(StructureError::BlockNotFound(end));
            }
        }
        if self.edges.outgoing(edge.source).iter().any(|e| e.edge_type == edge.edge_type && e.target == edge.target) {
            return Ok(false);
        }
        self.before_change(edge.source);
        self.edges.insert(edge);
        self.version += 1;
        Ok(true)
    }

    /// Removes the edge `source -type-> target`, returning it if it existed.
    pub fn remove_edge(&mut self, source: BlockId, edge_type: &EdgeType, target: BlockId) -> Option<Edge> {
        if !self.edges.outgoing(source).iter().any(|e| &e.edge_type == edge_type && e.target == target) {
            return None;
        }
        self.before_change(source);
        self.version += 1;
        self.edges.remove(source, edge_type, target)
    }

    /// Makes `targets` (each once, in order) the edges of type `edge_type`
    /// leaving `source`, replacing those it had; its other edges stay.
    /// Nothing changes when they are those already. Costs the number of
    /// the source's edges, however many targets.
    pub fn set_edges(
        &mut self,
        source: BlockId,
        edge_type: &EdgeType,
        targets: &[BlockId],
    ) -> Result<(), StructureError> {
        for end in std::iter::once(&source).chain(targets) {
            if !self.contains(*end) {
                return Err(StructureError::BlockNotFound(*end));
            }
        }
        let mut seen = crate::IdSet::default();
        let wanted: Vec<BlockId> = targets.iter().copied().filter(|t| seen.insert(*t)).collect();
        let current: Vec<BlockId> =
            self.edges.outgoing(source).iter().filter(|e| &e.edge_type == edge_type).map(|e| e.target).collect();
        if current == wanted {
            return Ok(());
        }
        self.before_change(source);
        let kept: Vec<Edge> =
            self.edges.outgoing(source).iter().filter(|e| &e.edge_type != edge_type).cloned().collect();
        let new = wanted.into_iter().map(|target| Edge::new(source, edge_type.clone(), target));
        self.edges.replace_outgoing(source, kept.into_iter().chain(new).collect());
        self.version += 1;
        Ok(())
    }

    /// The edge index.
    pub fn edges(&self) -> &EdgeIndex {
        &self.edges
    }

    /// Assembles a document from stored parts without checking them; call
    /// [`Document::validate`] to find inconsistencies. Parents are derived
    /// from the children lists; blocks nobody lists are orphans.
    pub fn from_parts(
        name: impl Into<String>,
        metadata: DocumentMetadata,
        version: u64,
        blocks: impl IntoIterator<Item = (Block, Vec<BlockId>)>,
        edges: impl IntoIterator<Item = Edge>,
    ) -> Self {
        let blocks = blocks.into_iter();
        let mut nodes = Nodes::default();
        nodes.reserve(blocks.size_hint().0);
        for (block, children) in blocks {
            nodes.insert(Node { block: Arc::new(block), parent: None, children });
        }
        if !nodes.contains_key(&BlockId::ROOT) {
            nodes.insert(Node { block: Arc::new(Block::root()), parent: None, children: Vec::new() });
        }
        link_parents(&mut nodes);
        let mut index = EdgeIndex::default();
        for edge in edges {
            index.insert(edge);
        }
        Document {
            name: name.into(),
            metadata,
            version,
            nodes,
            edges: index,
            journal: Journal::default(),
            undo: UndoLog::default(),
            absent: None,
        }
    }
}

/// Iterator over a block's ancestors, nearest first.
pub struct Ancestors<'a> {
    doc: &'a Document,
    next: Option<BlockId>,
    steps: usize,
}

impl Iterator for Ancestors<'_> {
    type Item = BlockId;

    fn next(&mut self) -> Option<BlockId> {
        let current = self.next?;
        self.steps += 1;
        // A corrupt (cyclic) parent chain must not loop forever.
        self.next = if self.steps > self.doc.nodes.len() { None } else { self.doc.parent(current) };
        Some(current)
    }
}

/// Iterator over a subtree in document order.
pub struct Descendants<'a> {
    doc: &'a Document,
    stack: Vec<BlockId>,
    emitted: usize,
}

impl Iterator for Descendants<'_> {
    type Item = BlockId;

    fn next(&mut self) -> Option<BlockId> {
        loop {
            // Corrupt children lists (a loaded cycle) must not loop forever.
            if self.emitted > self.doc.nodes.len() {
                return None;
            }
            let id = self.stack.pop()?;
            // A listed child that does not exist (see `validate`) is skipped
            // (and recorded as asked for, in a partial document).
            let Some(node) = self.doc.nodes.get(&id) else {
                self.doc.missed(id);
                continue;
            };
            self.emitted += 1;
            self.stack.extend(node.children.iter().rev().copied());
            return Some(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::Content;
    use crate::metadata::{Metadata, Role};

    fn para(doc: &mut Document, parent: BlockId, text: &str) -> BlockId {
        let content = Content::markdown(text);
        let id = Block::derive_id(&content, Some(&Role::Paragraph), "", 0);
        doc.append_child(parent, Block::new(id, content, Metadata::with_role(Role::Paragraph))).unwrap()
    }

    fn sample() -> (Document, [BlockId; 4]) {
        let mut doc = Document::new("t");
        let a = para(&mut doc, BlockId::ROOT, "a");
        let b = para(&mut doc, a, "b");
        let c = para(&mut doc, a, "c");
        let d = para(&mut doc, b, "d");
        (doc, [a, b, c, d])
    }

    #[test]
    fn navigation_answers_parent_children_siblings_ancestors() {
        let (doc, [a, b, c, d]) = sample();
        assert_eq!(doc.parent(d), Some(b));
        assert_eq!(doc.children(a), &[b, c]);
        assert_eq!(doc.siblings(b).collect::<Vec<_>>(), vec![c]);
        assert_eq!(doc.ancestors(d).collect::<Vec<_>>(), vec![b, a, BlockId::ROOT]);
        assert_eq!(doc.depth(d), 3);
        assert_eq!(doc.document_order().collect::<Vec<_>>(), vec![BlockId::ROOT, a, b, d, c]);
        assert!(doc.validate().is_valid());
    }

    #[test]
    fn move_refuses_cycles_and_changes_nothing() {
        let (mut doc, [a, b, _, d]) = sample();
        let version = doc.version();
        assert_eq!(doc.move_block(a, d, None), Err(StructureError::Cycle { block: a, target: d }));
        assert_eq!(doc.move_block(b, b, None), Err(StructureError::Cycle { block: b, target: b }));
        assert_eq!(doc.version(), version);
        assert_eq!(doc.parent(a), Some(BlockId::ROOT));
        doc.move_block(d, BlockId::ROOT, Some(0)).unwrap();
        assert_eq!(doc.children(BlockId::ROOT), &[d, a]);
        assert!(doc.validate().is_valid());
    }

    #[test]
    fn edges_come_and_go_and_positions_are_known() {
        let (mut doc, [a, b, c, _]) = sample();
        assert_eq!(doc.index_in_parent(c), Some(1));
        assert_eq!(doc.index_in_parent(BlockId::ROOT), None);
        doc.add_edge(Edge::new(b, EdgeType::Supports, c)).unwrap();
        let version = doc.version();
        assert!(doc.remove_edge(b, &EdgeType::Supports, c).is_some());
        assert!(doc.version() > version);
        assert!(doc.remove_edge(b, &EdgeType::Supports, c).is_none());
        assert!(doc.edges().is_empty() && doc.edges().incoming(c).is_empty());
        assert!(doc.remove_edge(a, &EdgeType::LinksTo, b).is_none());
    }

    #[test]
    fn set_edges_replaces_one_type_of_a_sources_edges() {
        let (mut doc, [a, b, c, d]) = sample();
        doc.add_edge(Edge::new(a, EdgeType::References, b)).unwrap();
        doc.set_edges(a, &EdgeType::LinksTo, &[c, d, c]).unwrap();
        let out = |doc: &Document| {
            doc.edges().outgoing(a).iter().map(|e| (e.edge_type.clone(), e.target)).collect::<Vec<_>>()
        };
        assert_eq!(out(&doc), [(EdgeType::References, b), (EdgeType::LinksTo, c), (EdgeType::LinksTo, d)]);
        let version = doc.version();
        doc.set_edges(a, &EdgeType::LinksTo, &[c, d]).unwrap();
        assert_eq!(doc.version(), version, "the same edges: nothing changes");
        doc.set_edges(a, &EdgeType::LinksTo, &[d]).unwrap();
        assert_eq!(out(&doc), [(EdgeType::References, b), (EdgeType::LinksTo, d)]);
        assert_eq!(doc.edges().incoming(c), &[], "the index both ways follows");
        let missing = BlockId::from_bytes([0xff; 12]);
        assert_eq!(doc.set_edges(a, &EdgeType::LinksTo, &[missing]), Err(StructureError::BlockNotFound(missing)));
    }

    #[test]
    fn move_within_same_parent_reorders() {
        let (mut doc, [a, b, c, _]) = sample();
        doc.move_block(c, a, Some(0)).unwrap();
        assert_eq!(doc.children(a), &[c, b]);
        assert!(doc.move_block(c, a, Some(2)).is_err());
    }

    #[test]
    fn remove_cascade_and_preserve_children() {
        let (mut doc, [a, b, c, d]) = sample();
        doc.add_edge(Edge::new(c, EdgeType::LinksTo, d)).unwrap();
        let mut preserved = doc.clone();
        let mut orphaned = doc.clone();
        let removed = doc.remove_block(b, RemoveMode::Cascade).unwrap();
        assert_eq!(removed.blocks.len(), 2);
        assert_eq!(removed.edges.len(), 1);
        assert!(!doc.contains(d));
        assert!(doc.edges().outgoing(c).is_empty());
        assert!(doc.validate().is_valid());

        preserved.remove_block(b, RemoveMode::PreserveChildren).unwrap();
        assert_eq!(preserved.children(a), &[d, c]);
        assert_eq!(preserved.parent(d), Some(a));
        assert_eq!(preserved.edges().len(), 1);
        assert!(preserved.validate().is_valid());

        orphaned.remove_block(b, RemoveMode::OrphanChildren).unwrap();
        assert!(orphaned.contains(d) && orphaned.parent(d).is_none());
        assert_eq!(orphaned.children(a), &[c]);
        assert_eq!(orphaned.validate().issues, vec![crate::Issue::Orphan(d)]);
    }

    #[test]
    fn refuses_bad_structure_changes() {
        let (mut doc, [a, ..]) = sample();
        let dup = doc.get(a).unwrap().clone();
        assert_eq!(doc.append_child(BlockId::ROOT, dup), Err(StructureError::DuplicateId(a)));
        assert_eq!(doc.remove_block(BlockId::ROOT, RemoveMode::Cascade), Err(StructureError::Root));
        let ghost = Block::derive_id(&Content::markdown("ghost"), None, "", 0);
        assert_eq!(doc.add_edge(Edge::new(a, EdgeType::LinksTo, ghost)), Err(StructureError::BlockNotFound(ghost)));
    }
}
