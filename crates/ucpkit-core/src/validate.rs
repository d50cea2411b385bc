//! Structural validation: cycles, orphans, dangling edges and parent/child
//! links that disagree.

use std::fmt;

use crate::document::Document;
use crate::document::Node;
use crate::edge::Edge;
use crate::id::{BlockId, IdMap, IdSet};
use crate::nodes::Nodes;

/// One problem found in a document.
#[derive(Debug, Clone, PartialEq)]
pub enum Issue {
    /// The block's parent chain loops back onto itself.
    Cycle(BlockId),
    /// The block is not reachable from the root.
    Orphan(BlockId),
    /// The edge points from or to a block that does not exist.
    DanglingEdge(Edge),
    /// A parent lists a child that does not exist.
    MissingChild {
        /// The listing parent.
        parent: BlockId,
        /// The missing child.
        child: BlockId,
    },
    /// A child is listed by a parent other than its own (or twice).
    ParentMismatch {
        /// The listing parent.
        listed_by: BlockId,
        /// The child.
        child: BlockId,
    },
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Issue::Cycle(id) => write!(f, "{id} is part of a parent cycle"),
            Issue::Orphan(id) => write!(f, "{id} is not reachable from the root"),
            Issue::DanglingEdge(e) => write!(f, "edge {} -{}-> {} has a missing end", e.source, e.edge_type, e.target),
            Issue::MissingChild { parent, child } => write!(f, "{parent} lists missing child {child}"),
            Issue::ParentMismatch { listed_by, child } => {
                write!(f, "{listed_by} lists {child}, whose parent is elsewhere")
            }
        }
    }
}

/// Everything [`Document::validate`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValidationReport {
    /// The problems, in a deterministic order.
    pub issues: Vec<Issue>,
}

impl ValidationReport {
    /// Whether no problem was found.
    pub fn is_valid(&self) -> bool {
        self.issues.is_empty()
    }

    /// The first problem that keeps the blocks from forming a tree
    /// (anything but an orphan, which is only left out of the walk).
    pub fn tree_issue(&self) -> Option<&Issue> {
        self.issues.iter().find(|issue| !matches!(issue, Issue::Orphan(_)))
    }
}

impl Document {
    /// Checks the tree and the edges; O(blocks + edges).
    pub fn validate(&self) -> ValidationReport {
        let mut issues = Vec::new();
        let mut listed: IdSet = IdSet::default();
        for (parent, node) in sorted(&self.nodes) {
            for child in &node.children {
                match self.nodes.get(child) {
                    None => issues.push(Issue::MissingChild { parent, child: *child }),
                    Some(c) if c.parent != Some(parent) || !listed.insert(*child) => {
                        issues.push(Issue::ParentMismatch { listed_by: parent, child: *child })
                    }
                    Some(_) => {}
                }
            }
        }
        issues.extend(self.cycles().into_iter().map(Issue::Cycle));
        let reachable: IdSet = self.document_order().collect();
        for (id, _) in sorted(&self.nodes) {
            if !reachable.contains(&id) {
                issues.push(Issue::Orphan(id));
            }
        }
        let mut dangling: Vec<Edge> =
            self.edges.iter().filter(|e| !self.contains(e.source) || !self.contains(e.target)).cloned().collect();
        dangling.sort_by(|a, b| (a.source, &a.edge_type, a.target).cmp(&(b.source, &b.edge_type, b.target)));
        issues.extend(dangling.into_iter().map(Issue::DanglingEdge));
        ValidationReport { issues }
    }

    /// Blocks on parent cycles, found by colouring parent chains (O(n)).
    fn cycles(&self) -> Vec<BlockId> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            InProgress,
            Done,
        }
        let mut marks: IdMap<Mark> = IdMap::default();
        let mut on_cycle = Vec::new();
        for (start, _) in sorted(&self.nodes) {
            let mut chain = Vec::new();
            let mut current = Some(start);
            while let Some(id) = current {
                match marks.get(&id) {
                    Some(Mark::Done) => break,
                    Some(Mark::InProgress) => {
                        let from = chain.iter().position(|c| *c == id).unwrap_or(0);
                        on_cycle.extend_from_slice(&chain[from..]);
                        break;
                    }
                    None => {
                        marks.insert(id, Mark::InProgress);
                        chain.push(id);
                        current = self.parent(id);
                    }
                }
            }
            for id in chain {
                marks.insert(id, Mark::Done);
            }
        }
        on_cycle.sort();
        on_cycle
    }
}

fn sorted(nodes: &Nodes) -> Vec<(BlockId, &Node)> {
    let mut entries: Vec<(BlockId, &Node)> = nodes.values().map(|n| (n.block.id, n)).collect();
    entries.sort_by_key(|(k, _)| *k);
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::Block;
    use crate::content::Content;
    use crate::document::DocumentMetadata;
    use crate::edge::EdgeType;
    use crate::metadata::Metadata;

    fn block(text: &str) -> Block {
        let content = Content::markdown(text);
        Block::new(Block::derive_id(&content, None, "", 0), content, Metadata::default())
    }

    #[test]
    fn reports_cycles_orphans_dangling_edges_and_mismatches() {
        let (a, b, c, d, e, f) = (block("a"), block("b"), block("c"), block("d"), block("e"), block("f"));
        let (ia, ib, ic, id, ie) = (a.id, b.id, c.id, d.id, e.id);
        let ghost = block("ghost").id;
        // root -> a -> e; b <-> c form a cycle; d is an orphan; f also lists e.
        let doc = Document::from_parts(
            "bad",
            DocumentMetadata::default(),
            0,
            vec![
                (Block::root(), vec![ia]),
                (a, vec![ie, ghost]),
                (e, vec![]),
                (b, vec![ic]),
                (c, vec![ib]),
                (d, vec![]),
                (f, vec![ie]),
            ],
            vec![Edge::new(ia, EdgeType::LinksTo, ghost)],
        );
        let report = doc.validate();
        assert!(!report.is_valid());
        let has = |pred: &dyn Fn(&Issue) -> bool| report.issues.iter().any(pred);
        assert!(has(&|i| matches!(i, Issue::MissingChild { child, .. } if *child == ghost)));
        assert!(has(&|i| matches!(i, Issue::Orphan(x) if *x == id)));
        assert!(has(&|i| matches!(i, Issue::Cycle(x) if *x == ib)));
        assert!(has(&|i| matches!(i, Issue::DanglingEdge(e) if e.target == ghost)));
        assert!(has(&|i| matches!(i, Issue::ParentMismatch { .. })));
    }
}
