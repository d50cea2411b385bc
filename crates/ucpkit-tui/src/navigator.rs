//! The navigator's state: the store's documents, then one document's
//! block tree (folded and unfolded by hand), the block under the cursor,
//! the way back, and the edges to follow from it.

use std::collections::HashSet;
use std::sync::Arc;

use ucpkit_registry::vocabulary::{BlockId, Document, DocumentSummary};

/// One line of the tree as shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    /// The block.
    pub(crate) id: BlockId,
    /// Levels below the root.
    pub(crate) depth: usize,
    /// It has children.
    pub(crate) has_children: bool,
    /// Its children are shown.
    pub(crate) expanded: bool,
}

/// An edge of the current block, to follow.
#[derive(Debug, Clone)]
pub(crate) struct EdgeChoice {
    /// `→` for an edge leaving the block, `←` for one reaching it.
    pub(crate) arrow: char,
    /// The edge's type.
    pub(crate) edge_type: String,
    /// The block at its other end.
    pub(crate) other: BlockId,
}

/// A document open in the navigator.
pub(crate) struct OpenDocument {
    /// The document, as read.
    pub(crate) doc: Arc<Document>,
    expanded: HashSet<BlockId>,
    /// The tree's lines as shown.
    pub(crate) rows: Vec<Row>,
    /// The line under the cursor.
    pub(crate) cursor: usize,
    /// Blocks the cursor left by jumping (search, follow, parent), last
    /// first out.
    back: Vec<BlockId>,
    /// The edge list, when open, and the edge under its cursor.
    pub(crate) edges: Option<(Vec<EdgeChoice>, usize)>,
}

impl OpenDocument {
    /// `doc` with its root unfolded.
    pub(crate) fn new(doc: Arc<Document>) -> OpenDocument {
        let root = doc.root();
        let mut open = OpenDocument {
            doc,
            expanded: HashSet::from([root]),
            rows: Vec::new(),
            cursor: 0,
            back: Vec::new(),
            edges: None,
        };
        open.layout();
        open
    }

    /// Takes `doc`, the same document read again: what was unfolded, the
    /// cursor and the way back stay where their blocks still are.
    pub(crate) fn replace(&mut self, doc: Arc<Document>) {
        let at = self.current();
        self.doc = doc;
        self.expanded.retain(|id| self.doc.contains(*id));
        self.expanded.insert(self.doc.root());
        self.back.retain(|id| self.doc.contains(*id));
        self.edges = None;
        self.layout();
        if self.doc.contains(at) {
            self.reveal(at);
        }
    }

    /// The block under the cursor.
    pub(crate) fn current(&self) -> BlockId {
        self.rows.get(self.cursor).map_or(self.doc.root(), |row| row.id)
    }

    /// Lays the tree out again from the unfolded blocks.
    fn layout(&mut self) {
        let at = self.rows.get(self.cursor).map(|r| r.id);
        self.rows.clear();
        let mut stack = vec![(self.doc.root(), 0usize)];
        while let Some((id, depth)) = stack.pop() {
            let children = self.doc.children(id);
            let expanded = self.expanded.contains(&id) && !children.is_empty();
            self.rows.push(Row { id, depth, has_children: !children.is_empty(), expanded });
            if expanded {
                stack.extend(children.iter().rev().map(|c| (*c, depth + 1)));
            }
        }
        if let Some(at) = at {
            self.cursor = self.rows.iter().position(|r| r.id == at).unwrap_or(0);
        }
    }

    /// Moves the cursor by `delta` lines, within the tree.
    pub(crate) fn move_by(&mut self, delta: isize) {
        let last = self.rows.len().saturating_sub(1);
        self.cursor = self.cursor.saturating_add_signed(delta).min(last);
    }

    /// Puts the cursor on the first or the last line.
    pub(crate) fn move_to_end(&mut self, last: bool) {
        self.cursor = if last { self.rows.len().saturating_sub(1) } else { 0 };
    }

    /// Unfolds the current block; when it is unfolded already, steps to
    /// its first child.
    pub(crate) fn expand(&mut self) {
        let Some(row) = self.rows.get(self.cursor).cloned() else { return };
        if !row.has_children {
            return;
        }
        if row.expanded {
            self.move_by(1);
        } else {
            self.expanded.insert(row.id);
            self.layout();
        }
    }

    /// Folds the current block; when it is folded (or a leaf), steps to
    /// its parent.
    pub(crate) fn collapse(&mut self) {
        let Some(row) = self.rows.get(self.cursor).cloned() else { return };
        if row.expanded {
            self.expanded.remove(&row.id);
            self.layout();
        } else if let Some(parent) = self.doc.parent(row.id) {
            self.cursor = self.rows.iter().position(|r| r.id == parent).unwrap_or(self.cursor);
        }
    }

    /// Jumps to the current block's parent (the way back remembers).
    pub(crate) fn parent(&mut self) {
        if let Some(parent) = self.doc.parent(self.current()) {
            self.jump(parent);
        }
    }

    /// Shows `id` (unfolding what is above it) and puts the cursor on it;
    /// the way back remembers where the cursor was. False when the
    /// document has no such block.
    pub(crate) fn jump(&mut self, id: BlockId) -> bool {
        if !self.doc.contains(id) {
            return false;
        }
        let from = self.current();
        if from != id {
            self.back.push(from);
        }
        self.reveal(id);
        true
    }

    fn reveal(&mut self, id: BlockId) {
        let above: Vec<BlockId> = self.doc.ancestors(id).collect();
        self.expanded.extend(above);
        self.layout();
        self.cursor = self.rows.iter().position(|r| r.id == id).unwrap_or(0);
        self.edges = None;
    }

    /// Goes back to where the last jump left; false when there is none.
    pub(crate) fn go_back(&mut self) -> bool {
        while let Some(id) = self.back.pop() {
            if self.doc.contains(id) {
                self.reveal(id);
                return true;
            }
        }
        false
    }

    /// Opens the list of the current block's edges (out, then in); false
    /// when it has none.
    pub(crate) fn open_edges(&mut self) -> bool {
        let id = self.current();
        let index = self.doc.edges();
        let mut choices: Vec<EdgeChoice> = index
            .outgoing(id)
            .iter()
            .map(|e| EdgeChoice { arrow: '→', edge_type: e.edge_type.to_string(), other: e.target })
            .collect();
        choices.extend(index.incoming(id).iter().map(|(from, t)| EdgeChoice {
            arrow: '←',
            edge_type: t.to_string(),
            other: *from,
        }));
        if choices.is_empty() {
            return false;
        }
        self.edges = Some((choices, 0));
        true
    }

    /// Moves the edge list's cursor.
    pub(crate) fn move_edge(&mut self, delta: isize) {
        if let Some((choices, at)) = &mut self.edges {
            *at = at.saturating_add_signed(delta).min(choices.len().saturating_sub(1));
        }
    }

    /// Follows the edge under the edge list's cursor.
    pub(crate) fn follow(&mut self) -> bool {
        let Some((choices, at)) = self.edges.take() else { return false };
        choices.get(at).is_some_and(|choice| self.jump(choice.other))
    }
}

/// The navigator: the documents, and the one open.
#[derive(Default)]
pub(crate) struct Navigator {
    /// The store's documents.
    pub(crate) documents: Vec<DocumentSummary>,
    /// The document under the list's cursor.
    pub(crate) doc_cursor: usize,
    /// The document open, when one is.
    pub(crate) open: Option<OpenDocument>,
    /// The document being read, when one is.
    pub(crate) loading: Option<String>,
    /// Lines the block's text is scrolled down.
    pub(crate) text_scroll: u16,
}

impl Navigator {
    /// The document's name under the list's cursor.
    pub(crate) fn chosen(&self) -> Option<&str> {
        self.documents.get(self.doc_cursor).map(|d| d.name.as_str())
    }

    /// Moves the list's cursor.
    pub(crate) fn move_doc(&mut self, delta: isize) {
        self.doc_cursor = self.doc_cursor.saturating_add_signed(delta).min(self.documents.len().saturating_sub(1));
    }

    /// The open document's name.
    pub(crate) fn document_name(&self) -> Option<&str> {
        self.open.as_ref().map(|o| o.doc.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfolding_folding_and_jumping_keep_the_cursor_on_a_shown_block() {
        let (_dir, library) = crate::testing::library();
        let doc = Arc::new(library.read_document(Some("node")).unwrap());
        let root = doc.root();
        let first = doc.children(root)[0];
        let inner = doc.children(first)[0];
        let last = *doc.children(root).last().unwrap();
        let mut open = OpenDocument::new(doc.clone());
        assert_eq!(open.rows.len(), 1 + doc.children(root).len(), "the root and its children");
        open.move_by(1);
        assert_eq!(open.current(), first);
        open.expand();
        assert_eq!(open.rows.len(), 1 + doc.children(root).len() + doc.children(first).len());
        open.expand();
        assert_eq!(open.current(), inner, "a second unfold steps in");
        open.collapse();
        if doc.children(inner).is_empty() {
            assert_eq!(open.current(), first, "a leaf folds to its parent");
        }
        open.move_to_end(false);
        open.move_by(1);
        open.collapse();
        assert_eq!(open.rows.len(), 1 + doc.children(root).len());
        open.move_by(10_000);
        assert_eq!(open.current(), last, "the cursor stays in the tree");
        assert!(open.jump(inner), "a jump unfolds what is above");
        assert_eq!(open.current(), inner);
        open.parent();
        assert_eq!(open.current(), first);
        assert!(open.go_back());
        assert_eq!(open.current(), inner);
        assert!(open.go_back());
        assert_eq!(open.current(), last);
        assert!(!open.go_back(), "nothing further back");
    }
}
