//! The cursor: where a session is, the bounded breadcrumbs BACK walks, and
//! a lazily computed neighbourhood cached until the cursor moves or the
//! document changes.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use ucpkit_core::{BlockId, Document};

/// What surrounds the cursor.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Neighborhood {
    /// Parent, grandparent ... up to the root.
    pub ancestors: Vec<BlockId>,
    /// Children in order.
    pub children: Vec<BlockId>,
    /// Other children of the parent.
    pub siblings: Vec<BlockId>,
    /// Edges: (other block, edge type, whether it is outgoing).
    pub connections: Vec<(BlockId, String, bool)>,
}

impl Neighborhood {
    /// Computes the neighbourhood of `at`, keeping at most `cap` siblings,
    /// children and connections each.
    pub fn of(doc: &Document, at: BlockId, cap: usize) -> Self {
        let edges = doc.edges();
        let outgoing = edges.outgoing(at).iter().map(|e| (e.target, e.edge_type.to_string(), true));
        let incoming = edges.incoming(at).iter().map(|(s, t)| (*s, t.to_string(), false));
        Neighborhood {
            ancestors: doc.ancestors(at).collect(),
            children: doc.children(at).iter().take(cap).copied().collect(),
            siblings: doc.siblings(at).take(cap).collect(),
            connections: outgoing.chain(incoming).take(cap).collect(),
        }
    }
}

/// A session's position.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cursor {
    position: BlockId,
    /// The position's ancestors when the cursor moved there, nearest
    /// first: where it falls back to when an edit deletes its block.
    #[serde(default)]
    lineage: Vec<BlockId>,
    breadcrumbs: VecDeque<BlockId>,
    #[serde(skip)]
    cached: Option<(u64, Neighborhood)>,
}

impl Default for Cursor {
    fn default() -> Self {
        Cursor { position: BlockId::ROOT, lineage: Vec::new(), breadcrumbs: VecDeque::new(), cached: None }
    }
}

/// What [`Cursor::repair`] changed after blocks were deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Repair {
    /// The deleted block the cursor was on and where it went instead.
    pub moved: Option<(BlockId, BlockId)>,
    /// Breadcrumbs dropped because their blocks are gone.
    pub dropped_breadcrumbs: usize,
}

impl Cursor {
    /// Where the cursor is.
    pub fn position(&self) -> BlockId {
        self.position
    }

    /// Earlier positions, oldest first.
    pub fn breadcrumbs(&self) -> impl Iterator<Item = &BlockId> {
        self.breadcrumbs.iter()
    }

    /// Moves to `to`, remembering the old position (at most `history` kept).
    pub fn go(&mut self, doc: &Document, to: BlockId, history: usize) {
        if to == self.position {
            return;
        }
        self.lineage = doc.ancestors(to).collect();
        if history > 0 {
            if self.breadcrumbs.len() >= history {
                self.breadcrumbs.pop_front();
            }
            self.breadcrumbs.push_back(self.position);
        }
        self.position = to;
        self.cached = None;
    }

    /// Steps back `steps` breadcrumbs; `None` (and no move) when there are fewer.
    pub fn back(&mut self, doc: &Document, steps: usize) -> Option<BlockId> {
        if steps == 0 || steps > self.breadcrumbs.len() {
            return None;
        }
        let keep = self.breadcrumbs.len() - steps;
        self.position = self.breadcrumbs[keep];
        self.lineage = doc.ancestors(self.position).collect();
        self.breadcrumbs.truncate(keep);
        self.cached = None;
        Some(self.position)
    }

    /// Forgets blocks the document no longer has: dead breadcrumbs are
    /// dropped, and a cursor on a deleted block moves to its nearest
    /// surviving ancestor (the root when none is left).
    pub fn repair(&mut self, doc: &Document) -> Repair {
        let before = self.breadcrumbs.len();
        self.breadcrumbs.retain(|id| doc.contains(*id));
        let mut repair = Repair { moved: None, dropped_breadcrumbs: before - self.breadcrumbs.len() };
        if !doc.contains(self.position) {
            let to = self.lineage.iter().copied().find(|id| doc.contains(*id)).unwrap_or(BlockId::ROOT);
            repair.moved = Some((self.position, to));
            self.position = to;
            self.lineage = doc.ancestors(to).collect();
            self.cached = None;
        }
        repair
    }

    /// Number of breadcrumbs.
    pub fn history_len(&self) -> usize {
        self.breadcrumbs.len()
    }

    /// The neighbourhood, computed on first use after a move or edit.
    pub fn neighborhood(&mut self, doc: &Document, cap: usize) -> &Neighborhood {
        let fresh = matches!(&self.cached, Some((version, _)) if *version == doc.version());
        if !fresh {
            self.cached = Some((doc.version(), Neighborhood::of(doc, self.position, cap)));
        }
        &self.cached.as_ref().expect("just filled").1
    }
}

#[cfg(test)]
mod tests {
    use ucpkit_core::{Block, Content, Metadata, RemoveMode};

    use super::*;

    fn id(n: u8) -> BlockId {
        BlockId::from_bytes([n; 12])
    }

    /// A chain root → 1 → 2 → ... → `n`.
    fn chain(n: u8) -> Document {
        let mut doc = Document::new("chain");
        let mut parent = BlockId::ROOT;
        for k in 1..=n {
            let block = Block::new(id(k), Content::plain(format!("block {k}")), Metadata::default());
            parent = doc.append_child(parent, block).unwrap();
        }
        doc
    }

    #[test]
    fn breadcrumbs_are_bounded_and_back_walks_them() {
        let doc = chain(5);
        let mut cursor = Cursor::default();
        for n in 1..=5 {
            cursor.go(&doc, id(n), 3);
        }
        assert_eq!(cursor.history_len(), 3);
        assert_eq!(cursor.back(&doc, 2), Some(id(3)));
        assert_eq!(cursor.position(), id(3));
        assert_eq!(cursor.back(&doc, 2), None, "only one breadcrumb left");
        assert_eq!(cursor.position(), id(3));
        assert_eq!(cursor.back(&doc, 1), Some(id(2)));
    }

    #[test]
    fn repair_moves_off_deleted_blocks_to_the_nearest_survivor() {
        let mut doc = chain(4);
        let mut cursor = Cursor::default();
        cursor.go(&doc, id(2), 10);
        cursor.go(&doc, id(4), 10);
        assert_eq!(cursor.repair(&doc), Repair::default(), "nothing deleted, nothing changes");
        doc.remove_block(id(3), RemoveMode::Cascade).unwrap();
        let repair = cursor.repair(&doc);
        assert_eq!(repair.moved, Some((id(4), id(2))), "the nearest live ancestor");
        assert_eq!(repair.dropped_breadcrumbs, 0);
        doc.remove_block(id(1), RemoveMode::Cascade).unwrap();
        let repair = cursor.repair(&doc);
        assert_eq!(repair.moved, Some((id(2), BlockId::ROOT)));
        assert_eq!(repair.dropped_breadcrumbs, 1, "the breadcrumb on block 2 went with it");
        assert_eq!(cursor.back(&doc, 1), Some(BlockId::ROOT));
    }
}
