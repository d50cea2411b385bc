//! The cursor: where a session is, the bounded breadcrumbs BACK walks, and
//! a lazily computed neighbourhood cached until the cursor moves or the
//! document changes.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use ucm_core::{BlockId, Document};

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
    breadcrumbs: VecDeque<BlockId>,
    #[serde(skip)]
    cached: Option<(u64, Neighborhood)>,
}

impl Default for Cursor {
    fn default() -> Self {
        Cursor { position: BlockId::ROOT, breadcrumbs: VecDeque::new(), cached: None }
    }
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
    pub fn go(&mut self, to: BlockId, history: usize) {
        if to == self.position {
            return;
        }
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
    pub fn back(&mut self, steps: usize) -> Option<BlockId> {
        if steps == 0 || steps > self.breadcrumbs.len() {
            return None;
        }
        let keep = self.breadcrumbs.len() - steps;
        self.position = self.breadcrumbs[keep];
        self.breadcrumbs.truncate(keep);
        self.cached = None;
        Some(self.position)
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
    use super::*;

    fn id(n: u8) -> BlockId {
        BlockId::from_bytes([n; 12])
    }

    #[test]
    fn breadcrumbs_are_bounded_and_back_walks_them() {
        let mut cursor = Cursor::default();
        for n in 1..=5 {
            cursor.go(id(n), 3);
        }
        assert_eq!(cursor.history_len(), 3);
        assert_eq!(cursor.back(2), Some(id(3)));
        assert_eq!(cursor.position(), id(3));
        assert_eq!(cursor.back(2), None, "only one breadcrumb left");
        assert_eq!(cursor.position(), id(3));
        assert_eq!(cursor.back(1), Some(id(2)));
    }
}
