//! Which blocks changed since a document was last saved, so a store can
//! write, and an index re-read, only what changed.
//!
//! A block is *touched* when any of what a store keeps of it changes: its
//! content or metadata, its parent, the order of its children, its outgoing
//! edges, or when it is added or removed. A document that did not come from
//! a store (built, parsed, restored from a snapshot) has no base to compare
//! with: its changes are unknown until it is saved whole.

use crate::{BlockId, Document, IdSet};

/// The touched blocks since the last save.
#[derive(Debug, Clone, Default)]
pub(crate) struct Journal {
    /// The version the document had when last saved or read; `None` when
    /// the journal does not cover every change since.
    base: Option<u64>,
    touched: IdSet,
}

/// What changed in a document since it was last saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsavedChanges {
    /// The version the document had when it was last saved or read.
    pub since_version: u64,
    /// The touched blocks, in id order: each to write again, or to delete
    /// when the document no longer holds it.
    pub blocks: Vec<BlockId>,
}

impl Journal {
    /// A journal of a document at `version` that the store holds as it is.
    pub(crate) fn clean(version: u64) -> Journal {
        Journal { base: Some(version), touched: IdSet::default() }
    }

    /// Notes that `id` changed.
    pub(crate) fn touch(&mut self, id: BlockId) {
        if self.base.is_some() {
            self.touched.insert(id);
        }
    }
}

impl Document {
    /// The blocks touched since the document was last saved (or read from a
    /// store): those to write again, or to delete when no longer present.
    /// `None` when that is unknown and the whole document must be written.
    pub fn unsaved_changes(&self) -> Option<UnsavedChanges> {
        let since_version = self.journal.base?;
        let mut blocks: Vec<BlockId> = self.journal.touched.iter().copied().collect();
        blocks.sort_unstable();
        Some(UnsavedChanges { since_version, blocks })
    }

    /// Records that the document, as it is now, is what the store holds.
    pub fn mark_saved(&mut self) {
        self.journal = Journal::clean(self.version());
    }

    /// Forgets what changed: the next save writes the whole document.
    pub fn forget_changes(&mut self) {
        self.journal = Journal::default();
    }
}

#[cfg(test)]
mod tests {
    use crate::{Block, BlockId, Content, Document, Edge, EdgeType, Metadata, RemoveMode, Role};

    fn para(text: &str, n: u32) -> Block {
        let content = Content::markdown(text);
        Block::new(Block::derive_id(&content, Some(&Role::Paragraph), "", n), content, Metadata::default())
    }

    fn touched(doc: &Document) -> Vec<BlockId> {
        doc.unsaved_changes().expect("known").blocks
    }

    #[test]
    fn a_new_document_is_unknown_until_saved() {
        let mut doc = Document::new("d");
        doc.append_child(BlockId::ROOT, para("a", 0)).unwrap();
        assert_eq!(doc.unsaved_changes(), None);
        doc.mark_saved();
        assert_eq!(doc.unsaved_changes(), Some(super::UnsavedChanges { since_version: 1, blocks: vec![] }));
        doc.forget_changes();
        assert_eq!(doc.unsaved_changes(), None);
    }

    #[test]
    fn every_change_touches_the_blocks_whose_rows_change() {
        let mut doc = Document::new("d");
        let a = doc.append_child(BlockId::ROOT, para("a", 0)).unwrap();
        let b = doc.append_child(BlockId::ROOT, para("b", 1)).unwrap();
        let c = doc.append_child(a, para("c", 2)).unwrap();
        doc.mark_saved();

        doc.get_mut(c).unwrap().metadata.label = Some("x".into());
        assert_eq!(touched(&doc), vec![c]);

        doc.mark_saved();
        doc.move_block(c, b, None).unwrap();
        let mut expected = vec![a, b, c];
        expected.sort_unstable();
        assert_eq!(touched(&doc), expected);

        doc.mark_saved();
        doc.add_edge(Edge::new(a, EdgeType::References, b)).unwrap();
        assert_eq!(touched(&doc), vec![a]);

        doc.mark_saved();
        doc.remove_block(b, RemoveMode::Cascade).unwrap();
        let mut expected = vec![BlockId::ROOT, a, b, c];
        expected.sort_unstable();
        assert_eq!(touched(&doc), expected, "the removed blocks, their parent and the edge's source");
    }
}
