//! Dense node storage: nodes live in one `Vec`, found through a small
//! id → slot map. A `HashMap<BlockId, Node>` rounds its buckets up to a power
//! of two, which at a million ~300-byte nodes nearly doubled the memory of a
//! document; slots cost 4 bytes per bucket instead.

use std::ops::Index;

use crate::document::Node;
use crate::id::{BlockId, IdMap};

/// The nodes of a document, keyed by block id.
#[derive(Debug, Clone, Default)]
pub(crate) struct Nodes {
    slots: Vec<Node>,
    index: IdMap<u32>,
}

impl Nodes {
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.slots.reserve(additional);
        self.index.reserve(additional);
    }

    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn contains_key(&self, id: &BlockId) -> bool {
        self.index.contains_key(id)
    }

    pub(crate) fn get(&self, id: &BlockId) -> Option<&Node> {
        self.index.get(id).map(|slot| &self.slots[*slot as usize])
    }

    pub(crate) fn get_mut(&mut self, id: &BlockId) -> Option<&mut Node> {
        let slot = *self.index.get(id)?;
        Some(&mut self.slots[slot as usize])
    }

    /// Inserts a node under its block's id, replacing any node with that id.
    pub(crate) fn insert(&mut self, node: Node) {
        let id = node.block.id;
        match self.index.get(&id) {
            Some(slot) => self.slots[*slot as usize] = node,
            None => {
                let slot = u32::try_from(self.slots.len()).expect("fewer than 2^32 blocks");
                self.index.insert(id, slot);
                self.slots.push(node);
            }
        }
    }

    /// Removes a node; the last slot moves into its place.
    pub(crate) fn remove(&mut self, id: &BlockId) -> Option<Node> {
        let slot = self.index.remove(id)? as usize;
        let node = self.slots.swap_remove(slot);
        if let Some(moved) = self.slots.get(slot) {
            self.index.insert(moved.block.id, slot as u32);
        }
        Some(node)
    }

    pub(crate) fn keys(&self) -> impl Iterator<Item = BlockId> + '_ {
        self.slots.iter().map(|n| n.block.id)
    }

    pub(crate) fn values(&self) -> std::slice::Iter<'_, Node> {
        self.slots.iter()
    }
}

impl Index<&BlockId> for Nodes {
    type Output = Node;

    fn index(&self, id: &BlockId) -> &Node {
        self.get(id).expect("block exists")
    }
}
