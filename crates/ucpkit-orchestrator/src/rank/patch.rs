//! Bringing a [`Layout`] to a later revision of its document from the
//! blocks written since, without walking the whole document: a one-shot
//! call's stored layout from the store's log, and a host's kept layout
//! after its own writes ([`carry_layout`]).
//!
//! A block that was not written, and has nothing written below it, holds
//! the same subtree as before; where it also has the same parent, its
//! content blocks are what the earlier layout holds in its range (its
//! span, or its own slot), with the same sections: they are copied. The
//! path from the root down to each written block is walked again, taking
//! each block on it from the document; a written block whose range cannot
//! be kept (new, moved, turned into a heading or out of one) is walked
//! whole. Lengths come from the search index as for [`Layout::build`], so
//! a renamed heading's blocks take their new heading path's.

use std::sync::Arc;

use ucpkit_core::{outline, BlockId, Document, IdSet, UnsavedChanges};
use ucpkit_search::BlockLengths;
use ucpkit_sessions::SessionHost;

use super::build::{lengths_of, measured, Entries, Measured};
use super::{is_content, is_section_root, session_key, Layout, Span};

impl Layout {
    /// This layout (of an earlier revision) brought to `doc`, when
    /// `changed` are the blocks written since (changed, added or deleted,
    /// as a store logs them), with `lengths` as for [`Layout::build`].
    /// `doc` may be part of the document: the root, each changed block it
    /// still holds with its ancestors and children, and the subtrees of
    /// blocks added or moved. The result is what [`Layout::build`] makes
    /// of the whole document. `None` when `doc` lacks a block the patch
    /// walks (asked for, so a partial document notes it: read it and patch
    /// again), or a block `changed` names is in a range the patch kept
    /// (the log left out a change near it).
    pub fn patched(&self, doc: &Document, changed: &[BlockId], lengths: Option<&[BlockLengths]>) -> Option<Layout> {
        let written: IdSet = changed.iter().copied().collect();
        // The written blocks the document holds (asked without counting
        // a deleted one as missing from a part), and every block above one.
        let mut dirty = IdSet::default();
        for &id in changed {
            if doc.holding(id).is_some() && dirty.insert(id) {
                for above in doc.ancestors(id) {
                    if !dirty.insert(above) {
                        break;
                    }
                }
            }
        }
        let mut patch = Patch {
            earlier: self,
            doc,
            measured: measured(lengths),
            written,
            dirty,
            out: Entries::default(),
            kept: Vec::new(),
            kept_spans: Vec::new(),
            whole: true,
        };
        for &top in doc.children(BlockId::ROOT) {
            patch.child(top, BlockId::ROOT, None);
        }
        if !patch.whole {
            return None;
        }
        // A block written since that lies inside a subtree kept as it was
        // (its slot among the blocks copied, or its span among the spans
        // copied): the log does not say all that changed.
        let inside = |ranges: &mut Vec<(u32, u32)>, at: u32| {
            ranges.sort_unstable();
            let k = ranges.partition_point(|&(start, _)| start <= at).checked_sub(1);
            k.is_some_and(|k| at < ranges[k].1)
        };
        for id in changed {
            let slot = self.slot_of(id).is_some_and(|at| inside(&mut patch.kept, at));
            if slot || self.span_at.get(id).is_some_and(|&at| inside(&mut patch.kept_spans, at)) {
                return None;
            }
        }
        Some(patch.out.into_layout())
    }
}

/// A layout of an earlier version of a host's document with the blocks
/// written since, not patched in yet: what [`carry_layout`] keeps for the
/// version a write made, so the next ranking patches the layout instead
/// of laying the whole document out again, and a run of writes with no
/// ranking between them costs nothing more.
pub struct PendingLayout {
    earlier: Arc<Layout>,
    changed: Vec<BlockId>,
}

impl PendingLayout {
    /// The layout of `doc`, the document as the pending writes left it,
    /// with `lengths` as for [`Layout::build`]; `None` when the patch
    /// cannot be made ([`Layout::patched`]).
    pub fn patched(&self, doc: &Document, lengths: Option<&[BlockLengths]>) -> Option<Layout> {
        self.earlier.patched(doc, &self.changed, lengths)
    }
}

/// Keeps, for `doc` (the document a write just saved, whose `changes`
/// are the blocks written since version `changes.since_version`), the
/// layout `host` kept of that version with those blocks pending, or the
/// pending layout kept of it with them added. Nothing when neither is
/// kept, or when so many blocks are pending that laying the document out
/// costs no more than patching.
pub fn carry_layout(host: &SessionHost, changes: &UnsavedChanges, doc: &Document) {
    let before = changes.since_version;
    let pending = if let Some(earlier) = host.derived_at::<Layout>(before) {
        PendingLayout { earlier, changed: changes.blocks.clone() }
    } else if let Some(pending) = host.derived_at::<PendingLayout>(before) {
        let mut all = pending.changed.clone();
        all.extend_from_slice(&changes.blocks);
        all.sort_unstable();
        all.dedup();
        PendingLayout { earlier: Arc::clone(&pending.earlier), changed: all }
    } else {
        return;
    };
    if pending.changed.len() <= pending.earlier.len() / 2 + 1_000 {
        host.provide_derived(doc, Arc::new(pending));
    }
}

/// The layout of `host`'s document `doc`: the pending one kept for its
/// version (taken, so the earlier layout goes with it) patched, when there
/// is one and it patches, else built whole. Without the index's lengths
/// it is built whole: a patch would keep the lengths the earlier one had.
pub(super) fn lay_out(host: &SessionHost, doc: &Document) -> Layout {
    let pending = host.take_derived::<PendingLayout>(doc);
    let lengths = host.search_provider().and_then(|search| search.block_lengths());
    lengths
        .as_deref()
        .and_then(|lengths| pending?.patched(doc, Some(lengths)))
        .unwrap_or_else(|| Layout::build(doc, lengths.as_deref()))
}

/// The walk down the written paths of a document.
struct Patch<'a> {
    earlier: &'a Layout,
    doc: &'a Document,
    measured: Measured,
    written: IdSet,
    /// The written blocks and the blocks above them.
    dirty: IdSet,
    out: Entries,
    /// The ranges of the earlier layout's blocks copied.
    kept: Vec<(u32, u32)>,
    /// The ranges of the earlier layout's spans copied.
    kept_spans: Vec<(u32, u32)>,
    /// False once a walk met a block the document lacks.
    whole: bool,
}

impl Patch<'_> {
    /// Adds the content of child `id` of `parent` (below the nearest
    /// heading or file `above`): copied when neither it nor a block below
    /// it was written and it has the same parent as before.
    fn child(&mut self, id: BlockId, parent: BlockId, above: Option<BlockId>) {
        if self.dirty.contains(&id) {
            return self.path(id, parent, above);
        }
        let earlier = self.earlier;
        if let Some(&at) = earlier.span_at.get(&id) {
            let span = earlier.spans[at as usize];
            if span.parent == parent {
                return self.copy(span.start, span.end, at as usize);
            }
        } else if let Some(at) = earlier.slot_of(&id) {
            // A content block without children: unwritten, it has none still.
            return self.copy(at, at + 1, earlier.spans.len());
        } else {
            // Unwritten and without content before: without it still.
            return;
        }
        // Under another parent, yet not written: walked to be sure.
        self.walk(id, parent, above)
    }

    /// Adds the content of `id`, a written block or one above one, taking
    /// it from the document and its children one by one; walked whole
    /// when it was written and its range cannot be kept.
    fn path(&mut self, id: BlockId, parent: BlockId, above: Option<BlockId>) {
        let earlier = self.earlier;
        let doc = self.doc;
        let Some(block) = doc.get(id) else {
            self.whole = false;
            return;
        };
        let opens_section = is_section_root(block);
        let span = earlier.span_at.get(&id).map(|&at| earlier.spans[at as usize]);
        let in_place = match span {
            Some(span) => span.parent == parent && span.opens_section == opens_section,
            // No content below it before: nothing of the earlier layout to keep.
            None => !self.written.contains(&id),
        };
        if !in_place {
            return self.walk(id, parent, above);
        }
        let opened = self.out.spans.len();
        let start = self.out.len();
        if !doc.children(id).is_empty() {
            self.out.spans.push(Span { id, start, end: start, parent, opens_section });
        }
        if is_content(block) {
            let lengths = lengths_of(block, id, &self.measured);
            self.out.push(id, (above.unwrap_or(parent), session_key(block)), lengths, outline::rank_prior(block));
        }
        let below = if opens_section { Some(id) } else { above };
        for &child in doc.children(id) {
            self.child(child, id, below);
        }
        let end = self.out.len();
        if let Some(span) = self.out.spans.get_mut(opened).filter(|span| span.id == id) {
            span.end = end;
        }
    }

    /// Adds the subtree of `id` walked afresh (every block it lacks asked
    /// for, so a partial document notes them all in one patch).
    fn walk(&mut self, id: BlockId, parent: BlockId, above: Option<BlockId>) {
        self.whole &= self.out.walk(self.doc, id, parent, above, &self.measured);
    }

    /// Copies blocks `start..end` of the earlier layout, with the spans
    /// from index `first` on that lie inside them, taking their lengths
    /// from the index where it measured them.
    fn copy(&mut self, start: u32, end: u32, first: usize) {
        let earlier = self.earlier;
        let offset = i64::from(self.out.len()) - i64::from(start);
        let shift = |at: u32| (i64::from(at) + offset) as u32;
        let first = first.min(earlier.spans.len());
        let inside = earlier.spans[first..].iter().take_while(|span| span.start < end);
        let before = self.out.spans.len();
        self.out.spans.extend(inside.map(|span| Span { start: shift(span.start), end: shift(span.end), ..*span }));
        let copied = (self.out.spans.len() - before) as u32;
        self.kept_spans.push((first as u32, first as u32 + copied));
        for at in start as usize..end as usize {
            let id = earlier.blocks[at];
            let (tokens, path_tokens) =
                self.measured.get(&id).copied().unwrap_or((earlier.tokens[at], earlier.path_tokens[at]));
            let section = &earlier.sections[earlier.section[at].0 as usize];
            let key = (section.root, section.session);
            self.out.push(id, key, (tokens.max(1), path_tokens.max(1)), earlier.prior[at]);
        }
        self.kept.push((start, end));
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use ucpkit_core::{Block, Content, Metadata, Role};

    use super::super::build::tests::document;
    use super::*;

    /// A new block of `kind` (0 a heading, 1 an empty paragraph, else a
    /// paragraph), the `n`th made.
    fn block(kind: u8, n: usize) -> Block {
        let (role, text) = match kind {
            0 => (Role::Heading2, format!("## Added {n}")),
            1 => (Role::Paragraph, " ".to_owned()),
            _ => (Role::Paragraph, format!("new words, {n} of them and more")),
        };
        let content = Content::markdown(text);
        Block::new(Block::derive_id(&content, Some(&role), "new", n as u32), content, Metadata::with_role(role))
    }

    fn edited(doc: &Document, edits: &[(u8, usize, usize, u8)]) -> (Document, Vec<BlockId>) {
        ucpkit_core::edits::edited(doc, edits, &block)
    }

    proptest! {
        /// After any edits, the earlier layout patched with the blocks
        /// written is the layout built afresh.
        #[test]
        fn a_patched_layout_is_the_one_built_afresh(
            shape in prop::collection::vec((0u8..4, 0usize..64), 1..60),
            edits in prop::collection::vec((0u8..7, 0usize..80, 0usize..80, 0u8..3), 1..6),
        ) {
            let before = document(&shape);
            let (after, changed) = edited(&before, &edits);
            let patched = Layout::build(&before, None).patched(&after, &changed, None);
            prop_assert_eq!(patched.map(|l| l.encode()), Some(Layout::build(&after, None).encode()));
        }
    }

    #[test]
    fn a_renamed_headings_blocks_take_the_lengths_the_index_measures() {
        let before = document(&[(1, 0), (2, 1), (2, 1), (1, 0), (2, 4)]);
        let heading = before.children(BlockId::ROOT)[0];
        let (after, changed) = edited(&before, &[(0, 1, 0, 0)]);
        assert_eq!(changed, [heading]);
        let lengths: Vec<BlockLengths> = after
            .document_order()
            .map(|id| BlockLengths { id, text: 5, headings: if after.parent(id) == Some(heading) { 9 } else { 2 } })
            .collect();
        let patched = Layout::build(&before, None).patched(&after, &changed, Some(&lengths)).unwrap();
        assert_eq!(patched.encode(), Layout::build(&after, Some(&lengths)).encode());
        assert_eq!(patched.path_tokens, [9, 9, 2]);
    }

    #[test]
    fn a_log_that_leaves_out_a_moved_blocks_old_parent_is_refused() {
        // Headings h0 (over a, b) and h1 (over c).
        let before = document(&[(1, 0), (2, 1), (2, 1), (1, 0), (2, 4)]);
        let [h0, a, _, h1] = [0, 1, 2, 3].map(|n| before.document_order().nth(n + 1).unwrap());
        let mut after = before.clone();
        after.move_block(a, h1, None).unwrap();
        let layout = Layout::build(&before, None);
        assert!(layout.patched(&after, &[a, h1], None).is_none(), "a is still in h0's range, which looks kept");
        let layout = Layout::build(&before, None);
        assert_eq!(
            layout.patched(&after, &[a, h0, h1], None).map(|l| l.encode()),
            Some(Layout::build(&after, None).encode())
        );
    }
}
