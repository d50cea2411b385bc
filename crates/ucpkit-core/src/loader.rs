//! Building a document from a store's rows: streamed whole, or a copy
//! brought up to date with the rows written since it was read.

use std::sync::Arc;

use crate::block::Block;
use crate::document::{Document, DocumentMetadata, Node};
use crate::edge::Edge;
use crate::id::{BlockId, IdSet};
use crate::journal::Journal;
use crate::nodes::Nodes;

/// Builds a document from stored blocks, each with its ordered children,
/// streamed in any order, so a store never holds the blocks twice while
/// loading. The document comes out with nothing to save.
pub struct DocumentLoader {
    document: Document,
}

impl DocumentLoader {
    /// A loader for a document of about `capacity` blocks.
    pub fn new(name: impl Into<String>, metadata: DocumentMetadata, version: u64, capacity: usize) -> Self {
        let mut document = Document::with_capacity(name, capacity);
        document.metadata = metadata;
        document.version = version;
        DocumentLoader { document }
    }

    /// Adds a block with its ordered children (parents are derived from the
    /// children lists in [`DocumentLoader::finish`]).
    pub fn push(&mut self, block: Block, children: Vec<BlockId>) {
        self.push_shared(Arc::new(block), children);
    }

    /// Adds every block of `copy` but those in `leave_out`, with its
    /// children list as `copy` holds it, sharing the blocks with `copy`:
    /// a store bringing a copy up to date pushes these, then the rows it
    /// read of the blocks written since (a block left out and not pushed
    /// again is gone). Edges are not copied.
    pub fn push_unchanged(&mut self, copy: &Document, leave_out: &IdSet) {
        for node in copy.nodes.values().filter(|node| !leave_out.contains(&node.block.id)) {
            self.push_shared(Arc::clone(&node.block), node.children.clone());
        }
    }

    fn push_shared(&mut self, block: Arc<Block>, children: Vec<BlockId>) {
        match self.document.nodes.get_mut(&block.id) {
            Some(existing) => {
                existing.block = block;
                existing.children = children;
            }
            None => self.document.nodes.insert(Node { block, parent: None, children }),
        }
    }

    /// Adds a stored edge without checking its ends or whether it is
    /// there already (a store holds each edge once).
    pub fn push_edge(&mut self, edge: Edge) {
        self.document.edges.insert_unchecked(edge);
    }

    /// The loaded document; blocks no block lists as a child are orphans.
    pub fn finish(mut self) -> Document {
        link_parents(&mut self.document.nodes);
        self.document.journal = Journal::clean(self.document.version);
        self.document
    }
}

/// Sets every node's parent from the children lists (the first list
/// naming a block wins).
pub(crate) fn link_parents(nodes: &mut Nodes) {
    let links: Vec<(BlockId, BlockId)> =
        nodes.values().flat_map(|n| n.children.iter().map(move |c| (*c, n.block.id))).collect();
    for (child, parent) in links {
        if let Some(node) = nodes.get_mut(&child) {
            node.parent.get_or_insert(parent);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Content, Metadata, Role};

    fn block(text: &str, n: u32) -> Block {
        let content = Content::markdown(text);
        Block::new(Block::derive_id(&content, Some(&Role::Paragraph), "", n), content, Metadata::default())
    }

    #[test]
    fn a_copy_less_its_changed_blocks_plus_their_new_rows_is_the_new_document() {
        let mut old = Document::new("d");
        let a = old.append_child(BlockId::ROOT, block("a", 0)).unwrap();
        let b = old.append_child(BlockId::ROOT, block("b", 1)).unwrap();
        let c = old.append_child(a, block("c", 2)).unwrap();
        // Since: c moved under b, a was deleted, d was added under the root.
        let mut new = old.clone();
        new.move_block(c, b, None).unwrap();
        new.remove_block(a, crate::RemoveMode::Cascade).unwrap();
        let d = new.append_child(BlockId::ROOT, block("d", 3)).unwrap();
        let changed: IdSet = [BlockId::ROOT, a, b, d].into_iter().collect();
        let mut loader = DocumentLoader::new("d", new.metadata.clone(), new.version(), new.len());
        loader.push_unchanged(&old, &changed);
        for id in changed.iter().filter(|id| new.contains(**id)) {
            loader.push(new.get(*id).unwrap().clone(), new.children(*id).to_vec());
        }
        let caught_up = loader.finish();
        assert_eq!(caught_up.to_json(true), new.to_json(true));
        assert_eq!(caught_up.parent(c), Some(b), "parents follow the new children lists");
        assert!(!caught_up.contains(a));
        assert!(Arc::ptr_eq(&caught_up.nodes[&c].block, &old.nodes[&c].block), "unchanged blocks are shared");
    }
}
