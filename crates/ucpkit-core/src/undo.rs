//! Returning a document to an earlier state without copying it: while a
//! [`Mark`] is open, the first change of each block records what it was
//! (its node and its outgoing edges), and [`Document::rewind`] puts the
//! recorded originals back. The cost is that of what changed, however
//! large the document — what makes a script, a transaction or an ATOMIC
//! group on a million-block document as cheap as on a small one.
//!
//! Marks nest: each opens a level, and a level is rewound or kept together
//! with every level opened after it.

use std::sync::Arc;

use crate::document::{Document, DocumentMetadata, Node};
use crate::edge::Edge;
use crate::{BlockId, IdSet};

/// A state a document can return to, from [`Document::mark`].
#[derive(Debug)]
#[must_use = "a mark is rewound or kept"]
pub struct Mark {
    depth: usize,
}

/// The originals recorded since the outermost open mark.
#[derive(Debug, Clone, Default)]
pub(crate) struct UndoLog {
    entries: Vec<Entry>,
    levels: Vec<Level>,
}

/// One open mark.
#[derive(Debug, Clone)]
struct Level {
    /// Where its entries start.
    start: usize,
    /// Blocks whose original this level already holds.
    recorded: IdSet,
    version: u64,
    name: String,
    metadata: DocumentMetadata,
}

/// What to put back.
#[derive(Debug, Clone)]
enum Entry {
    /// A block as it was (`None`: it did not exist) with its outgoing edges.
    Block { id: BlockId, node: Option<Node>, outgoing: Vec<Edge> },
    /// The whole document, before [`Document::replace`] swapped it out.
    Whole(Box<Document>),
}

impl UndoLog {
    /// Whether a change must record originals.
    pub(crate) fn is_recording(&self) -> bool {
        !self.levels.is_empty()
    }
}

impl Document {
    /// Opens a level the document can return to with [`Document::rewind`]:
    /// from here, the first change of each block records its original.
    pub fn mark(&mut self) -> Mark {
        let level = Level {
            start: self.undo.entries.len(),
            recorded: IdSet::default(),
            version: self.version(),
            name: self.name().to_owned(),
            metadata: self.metadata.clone(),
        };
        self.undo.levels.push(level);
        Mark { depth: self.undo.levels.len() - 1 }
    }

    /// Puts the document back as it was when `mark` was taken, version,
    /// name and metadata included, closing the marks taken after it too.
    /// The blocks it puts back count as changed since the last save.
    pub fn rewind(&mut self, mark: Mark) {
        let Some(level) = self.undo.levels.get(mark.depth) else { return };
        let (start, version, name, metadata) = (level.start, level.version, level.name.clone(), level.metadata.clone());
        self.undo.levels.truncate(mark.depth);
        let entries = self.undo.entries.split_off(start);
        let mut whole = false;
        for entry in entries.into_iter().rev() {
            match entry {
                Entry::Block { id, node, outgoing } => {
                    match node {
                        Some(node) => self.nodes.insert(node),
                        None => {
                            self.nodes.remove(&id);
                        }
                    }
                    // Edges put back only when they changed: a re-insert
                    // would reorder the targets' incoming lists.
                    if self.edges.outgoing(id) != outgoing.as_slice() {
                        self.edges.replace_outgoing(id, outgoing);
                    }
                    self.journal.touch(id);
                }
                Entry::Whole(earlier) => {
                    let undo = std::mem::take(&mut self.undo);
                    *self = *earlier;
                    self.undo = undo;
                    whole = true;
                }
            }
        }
        if whole {
            self.forget_changes();
        }
        self.set_version(version);
        self.set_name(name);
        self.metadata = metadata;
        self.release_log_if_closed();
    }

    /// The version the document had when `mark` was taken (`None` once the
    /// mark is closed).
    pub fn version_at(&self, mark: &Mark) -> Option<u64> {
        self.undo.levels.get(mark.depth).map(|level| level.version)
    }

    /// Keeps the changes made since `mark` and closes it (and the marks
    /// taken after it); an enclosing mark can still rewind them.
    pub fn keep(&mut self, mark: Mark) {
        if mark.depth >= self.undo.levels.len() {
            return;
        }
        let inner = self.undo.levels.split_off(mark.depth);
        if let Some(outer) = self.undo.levels.last_mut() {
            for level in inner {
                outer.recorded.extend(level.recorded);
            }
        }
        self.release_log_if_closed();
    }

    /// Swaps in `other` as the whole document; an open mark can still
    /// rewind to what was there before (kept whole, no copy made).
    pub fn replace(&mut self, other: Document) {
        let undo = std::mem::take(&mut self.undo);
        let earlier = std::mem::replace(self, other);
        self.undo = undo;
        if self.undo.is_recording() {
            self.undo.entries.push(Entry::Whole(Box::new(earlier)));
        }
    }

    /// Records `id` as it is now, before a change, for the innermost open
    /// mark (once per mark), and notes it in the journal.
    pub(crate) fn before_change(&mut self, id: BlockId) {
        self.journal.touch(id);
        let Some(level) = self.undo.levels.last_mut() else { return };
        if !level.recorded.insert(id) {
            return;
        }
        let node = self.nodes.get(&id).map(|n| Node {
            block: Arc::clone(&n.block),
            parent: n.parent,
            children: n.children.clone(),
        });
        let outgoing = self.edges.outgoing(id).to_vec();
        self.undo.entries.push(Entry::Block { id, node, outgoing });
    }

    fn release_log_if_closed(&mut self) {
        if self.undo.levels.is_empty() {
            self.undo.entries = Vec::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Block, BlockId, Content, Document, Edge, EdgeType, Metadata, RemoveMode, Role};

    fn para(text: &str, n: u32) -> Block {
        let content = Content::markdown(text);
        Block::new(Block::derive_id(&content, Some(&Role::Paragraph), "", n), content, Metadata::default())
    }

    fn sample() -> (Document, [BlockId; 3]) {
        let mut doc = Document::new("d");
        let a = doc.append_child(BlockId::ROOT, para("a", 0)).unwrap();
        let b = doc.append_child(BlockId::ROOT, para("b", 1)).unwrap();
        let c = doc.append_child(a, para("c", 2)).unwrap();
        doc.add_edge(Edge::new(c, EdgeType::References, b)).unwrap();
        (doc, [a, b, c])
    }

    /// The document's whole state as comparable text (edges in a stable order).
    fn state(doc: &Document) -> (String, u64, String) {
        let mut edges: Vec<String> = doc.edges().iter().map(|e| format!("{e:?}")).collect();
        edges.sort();
        // Incoming lists in their order: navigation lists neighbours so.
        let incoming: Vec<String> =
            doc.document_order().map(|id| format!("{id}: {:?}", doc.edges().incoming(id))).collect();
        (format!("{}\n{edges:?}\n{incoming:?}", doc.to_json(false)), doc.version(), doc.name().to_owned())
    }

    fn every_change(doc: &mut Document, [a, b, c]: [BlockId; 3]) {
        doc.get_mut(c).unwrap().metadata.label = Some("x".into());
        let d = doc.append_child(b, para("d", 3)).unwrap();
        doc.add_edge(Edge::new(d, EdgeType::References, a)).unwrap();
        doc.move_block(c, b, Some(0)).unwrap();
        doc.remove_block(a, RemoveMode::Cascade).unwrap();
        doc.remove_edge(c, &EdgeType::References, b);
        doc.set_edges(b, &EdgeType::LinksTo, &[d, c, d]).unwrap();
        doc.metadata.title = Some("changed".into());
        doc.set_name("renamed");
    }

    #[test]
    fn rewind_puts_back_every_change_and_the_version() {
        let (mut doc, ids) = sample();
        let before = state(&doc);
        let mark = doc.mark();
        every_change(&mut doc, ids);
        assert_ne!(state(&doc), before);
        doc.rewind(mark);
        assert_eq!(state(&doc), before);
        assert!(doc.validate().is_valid());
    }

    #[test]
    fn marks_nest_and_keeping_an_inner_one_leaves_it_to_the_outer() {
        let (mut doc, [a, b, c]) = sample();
        let before = state(&doc);
        let outer = doc.mark();
        doc.get_mut(a).unwrap().metadata.label = Some("outer".into());
        let after_outer = state(&doc);

        let inner = doc.mark();
        doc.get_mut(a).unwrap().metadata.label = Some("inner".into());
        doc.remove_block(c, RemoveMode::Cascade).unwrap();
        doc.rewind(inner);
        assert_eq!(state(&doc), after_outer);

        let inner = doc.mark();
        doc.move_block(b, a, None).unwrap();
        doc.get_mut(a).unwrap().metadata.label = Some("again".into());
        doc.keep(inner);
        doc.get_mut(b).unwrap().metadata.label = Some("later".into());
        doc.rewind(outer);
        assert_eq!(state(&doc), before);
    }

    #[test]
    fn a_rewound_label_change_keeps_the_order_of_incoming_edges() {
        let (mut doc, [a, b, c]) = sample();
        doc.add_edge(Edge::new(a, EdgeType::References, b)).unwrap();
        let before = doc.edges().incoming(b).to_vec();
        assert_eq!(before.len(), 2);
        let mark = doc.mark();
        doc.get_mut(c).unwrap().metadata.label = Some("x".into());
        doc.rewind(mark);
        assert_eq!(doc.edges().incoming(b), before.as_slice());
    }

    #[test]
    fn a_replaced_document_comes_back_whole() {
        let (mut doc, ids) = sample();
        let before = state(&doc);
        let mark = doc.mark();
        every_change(&mut doc, ids);
        doc.replace(Document::new("other"));
        doc.append_child(BlockId::ROOT, para("e", 9)).unwrap();
        doc.rewind(mark);
        assert_eq!(state(&doc), before);
        assert_eq!(doc.unsaved_changes(), None, "what a replacement changed is not known");
    }

    #[test]
    fn rewound_blocks_count_as_changed_and_kept_marks_record_nothing_more() {
        let (mut doc, [a, _, c]) = sample();
        doc.mark_saved();
        let mark = doc.mark();
        doc.get_mut(c).unwrap().metadata.label = Some("x".into());
        doc.mark_saved();
        doc.rewind(mark);
        assert_eq!(doc.unsaved_changes().unwrap().blocks, vec![c], "the store holds the edit: write c again");

        let mark = doc.mark();
        doc.get_mut(a).unwrap().metadata.label = Some("y".into());
        doc.keep(mark);
        assert!(!doc.undo.is_recording());
        doc.get_mut(a).unwrap().metadata.label = Some("z".into());
        assert!(doc.undo.entries.is_empty(), "no mark open: nothing recorded");
    }
}
