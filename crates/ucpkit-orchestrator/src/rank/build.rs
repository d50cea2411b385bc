//! Building a document's [`Layout`]: its content blocks walked depth first
//! in document order, grouped by section. Each subtree under the root is
//! walked on its own (in parallel: a big corpus is one subtree per file),
//! then the walks are joined in order; only the root's own section (blocks
//! directly under the root) can span two walks, and it is joined into one.
//! A later revision whose changed blocks kept their shape is laid out from
//! an earlier one's layout without the walk ([`Layout::patched`]).

use rayon::prelude::*;
use ucpkit_core::{outline, Block, BlockId, Document, IdMap};
use ucpkit_search::BlockLengths;

use super::{is_content, is_section_root, mean, shape_of, Layout, Section, SlotTable};

/// Each block's lengths as the search index measured them: text, heading path.
type Measured = IdMap<(u32, u32)>;

fn measured(lengths: Option<&[BlockLengths]>) -> Measured {
    lengths.unwrap_or_default().iter().map(|l| (l.id, (l.text, l.headings))).collect()
}

/// Block `id`'s lengths (text, heading path), at least 1 each: as
/// `measured`, else its token count (or a quarter of its text's bytes)
/// and 1.
fn lengths_of(block: &Block, id: BlockId, measured: &Measured) -> (u32, u32) {
    let (tokens, path_tokens) = measured
        .get(&id)
        .copied()
        .unwrap_or_else(|| (block.metadata.tokens.unwrap_or_else(|| (block.plain_text().len() / 4) as u32), 1));
    (tokens.max(1), path_tokens.max(1))
}

impl Layout {
    /// The layout of `doc`, with the blocks' `lengths` as the search index
    /// measured them (else their token counts).
    pub fn build(doc: &Document, lengths: Option<&[BlockLengths]>) -> Self {
        let measured = measured(lengths);
        let walks: Vec<Layout> = doc.children(BlockId::ROOT).par_iter().map(|&top| walk(doc, top, &measured)).collect();
        let mut layout = Layout::empty();
        let mut root_section = None;
        for walked in walks {
            layout.join(walked, &mut root_section);
        }
        layout.slot = SlotTable::build(&layout.blocks);
        layout.measure_windows();
        layout
    }

    /// This layout (of an earlier revision) brought to `doc`, a document
    /// or part of one holding at least `changed` with their parents, when
    /// `changed` are the only blocks written since and each is still a
    /// content block of the same shape (the same parent and children, and
    /// none of them: a code symbol's name is in the heading path of the
    /// blocks below it): then the tree, its sections and heading paths are
    /// as they were, and only those blocks' lengths and priors are taken
    /// again, with `lengths` as for [`Layout::build`]. `None` when a
    /// changed block is new, gone, no longer content, moved or has
    /// children: the caller builds afresh.
    pub fn patched(mut self, doc: &Document, changed: &[BlockId], lengths: Option<&[BlockLengths]>) -> Option<Layout> {
        let measured = measured(lengths);
        for &id in changed {
            let at = self.slot_of(&id)? as usize;
            let block = doc.get(id).filter(|block| is_content(block))?;
            if !doc.children(id).is_empty() || shape_of(doc, id, doc.parent(id)?) != self.shape[at] {
                return None;
            }
            let (tokens, path_tokens) = lengths_of(block, id, &measured);
            let section = &mut self.sections[self.section[at].0 as usize];
            section.tokens = section.tokens - u64::from(self.tokens[at]) + u64::from(tokens);
            self.tokens[at] = tokens;
            self.path_tokens[at] = path_tokens;
            self.prior[at] = outline::rank_prior(block);
        }
        self.measure_windows();
        Some(self)
    }

    /// Each block's window length and the mean lengths, from the blocks'.
    fn measure_windows(&mut self) {
        self.window_tokens =
            (0..self.blocks.len()).map(|i| self.window(i).map(|j| u64::from(self.tokens[j as usize])).sum()).collect();
        let n = self.blocks.len();
        self.mean_block = mean(self.tokens.iter().map(|&t| f64::from(t)).sum(), n);
        self.mean_path = mean(self.path_tokens.iter().map(|&t| f64::from(t)).sum(), n);
        self.mean_window = mean(self.window_tokens.iter().map(|&t| t as f64).sum(), n);
        self.mean_section = mean(self.sections.iter().map(|s| s.tokens as f64).sum(), self.sections.len());
    }

    fn empty() -> Layout {
        Layout {
            blocks: Vec::new(),
            slot: SlotTable::build(&[]),
            tokens: Vec::new(),
            path_tokens: Vec::new(),
            prior: Vec::new(),
            section: Vec::new(),
            window_tokens: Vec::new(),
            shape: Vec::new(),
            sections: Vec::new(),
            mean_block: 1.0,
            mean_path: 1.0,
            mean_window: 1.0,
            mean_section: 1.0,
        }
    }

    /// Appends the blocks and sections of `walked` (the walk of the next
    /// subtree under the root); `root_section` is the index of the root's
    /// own section once there is one, which later walks add to.
    fn join(&mut self, walked: Layout, root_section: &mut Option<u32>) {
        let offset = self.blocks.len() as u32;
        // Per section of the walk: its index here, and where its blocks start in it.
        let mut placed: Vec<(u32, u32)> = Vec::with_capacity(walked.sections.len());
        for section in walked.sections {
            let blocks = section.blocks.iter().map(|b| b + offset);
            match root_section.filter(|_| section.root == BlockId::ROOT) {
                Some(at) => {
                    let joined = &mut self.sections[at as usize];
                    placed.push((at, joined.blocks.len() as u32));
                    joined.blocks.extend(blocks);
                    joined.tokens += section.tokens;
                }
                None => {
                    let at = self.sections.len() as u32;
                    if section.root == BlockId::ROOT {
                        *root_section = Some(at);
                    }
                    placed.push((at, 0));
                    self.sections.push(Section {
                        root: section.root,
                        blocks: blocks.collect(),
                        tokens: section.tokens,
                    });
                }
            }
        }
        self.section.extend(walked.section.iter().map(|&(s, pos)| {
            let (at, start) = placed[s as usize];
            (at, start + pos)
        }));
        self.blocks.extend(walked.blocks);
        self.tokens.extend(walked.tokens);
        self.path_tokens.extend(walked.path_tokens);
        self.prior.extend(walked.prior);
        self.shape.extend(walked.shape);
    }
}

/// The content blocks of the subtree under `top` (a child of the root), in
/// document order with their sections, as a layout of its own (no slots,
/// windows or means yet).
fn walk(doc: &Document, top: BlockId, measured: &Measured) -> Layout {
    let mut layout = Layout::empty();
    let mut section_slot: IdMap<u32> = IdMap::default();
    // Depth first in document order, each block with its parent and the
    // nearest heading or file above it (what `section_of` would find).
    let mut stack: Vec<(BlockId, BlockId, Option<BlockId>)> = vec![(top, BlockId::ROOT, None)];
    while let Some((id, parent, above)) = stack.pop() {
        let Some(block) = doc.get(id) else { continue };
        let below = if is_section_root(block) { Some(id) } else { above };
        stack.extend(doc.children(id).iter().rev().map(|&child| (child, id, below)));
        if !is_content(block) {
            continue;
        }
        // Blocks under no heading or file (a single file's preamble, a
        // file without headings) share their parent as a section.
        let root = above.unwrap_or(parent);
        let at = *section_slot.entry(root).or_insert_with(|| {
            layout.sections.push(Section { root, blocks: Vec::new(), tokens: 0 });
            (layout.sections.len() - 1) as u32
        });
        let (tokens, path_tokens) = lengths_of(block, id, measured);
        let index = layout.blocks.len() as u32;
        let section = &mut layout.sections[at as usize];
        layout.section.push((at, section.blocks.len() as u32));
        section.blocks.push(index);
        section.tokens += u64::from(tokens);
        layout.blocks.push(id);
        layout.tokens.push(tokens);
        layout.path_tokens.push(path_tokens);
        layout.prior.push(outline::rank_prior(block));
        layout.shape.push(shape_of(doc, id, parent));
    }
    layout
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use ucpkit_core::{Block, Content, Metadata, Role};

    use super::*;

    /// A document from `(kind, parent pick)` pairs: kind 0 a file, 1 a
    /// heading, 2 a paragraph, 3 an empty paragraph; each block goes under
    /// the root or an earlier block.
    fn document(shape: &[(u8, usize)]) -> Document {
        let mut doc = Document::new("d");
        let mut ids = vec![BlockId::ROOT];
        for (n, &(kind, pick)) in shape.iter().enumerate() {
            let (role, text) = match kind {
                0 => (Role::File, format!("f{n}.md")),
                1 => (Role::Heading2, format!("## Heading {n}")),
                2 => (Role::Paragraph, format!("words of paragraph {n}")),
                _ => (Role::Paragraph, " ".to_owned()),
            };
            let content = Content::markdown(text);
            let id = Block::derive_id(&content, Some(&role), "", n as u32);
            let parent = ids[pick % ids.len()];
            doc.append_child(parent, Block::new(id, content, Metadata::with_role(role))).unwrap();
            ids.push(id);
        }
        doc
    }

    proptest! {
        /// Joined from walks of each subtree, the layout is what one walk of
        /// the document says: its content blocks in document order, each in
        /// the section of the nearest heading or file above it (else its
        /// parent), sections in the order their first block comes.
        #[test]
        fn the_joined_walks_are_the_documents_layout(shape in prop::collection::vec((0u8..4, 0usize..64), 0..60)) {
            let doc = document(&shape);
            let layout = Layout::build(&doc, None);
            let content: Vec<BlockId> =
                doc.document_order().filter(|&id| doc.get(id).is_some_and(is_content)).collect();
            prop_assert_eq!(&layout.blocks, &content);
            let root_of = |id: BlockId| {
                doc.ancestors(id)
                    .find(|&a| !a.is_root() && doc.get(a).is_some_and(is_section_root))
                    .unwrap_or_else(|| doc.parent(id).unwrap())
            };
            let mut roots: Vec<BlockId> = Vec::new();
            for &id in &content {
                if !roots.contains(&root_of(id)) {
                    roots.push(root_of(id));
                }
            }
            prop_assert_eq!(layout.sections.iter().map(|s| s.root).collect::<Vec<_>>(), roots);
            for (i, &id) in content.iter().enumerate() {
                let (section, at) = layout.section[i];
                let section = &layout.sections[section as usize];
                prop_assert_eq!(section.root, root_of(id));
                prop_assert_eq!(section.blocks[at as usize], i as u32);
                prop_assert_eq!(layout.slot_of(&id), Some(i as u32));
            }
            for section in &layout.sections {
                prop_assert!(section.blocks.windows(2).all(|w| w[0] < w[1]));
                let tokens: u64 = section.blocks.iter().map(|&b| u64::from(layout.tokens[b as usize])).sum();
                prop_assert_eq!(section.tokens, tokens);
            }
        }

        /// Blocks whose text (and with it, role) changed: the layout patched
        /// with them is the one built afresh, and it is refused only when a
        /// changed block was not content before or after.
        #[test]
        fn a_patched_layout_is_the_one_built_afresh(
            shape in prop::collection::vec((0u8..4, 0usize..64), 1..60),
            edits in prop::collection::vec((0usize..64, 0u8..4), 1..6),
        ) {
            let before = document(&shape);
            let layout = Layout::build(&before, None);
            let ids: Vec<BlockId> = before.document_order().filter(|id| !id.is_root()).collect();
            let mut after = before.clone();
            let mut changed = Vec::new();
            for (n, &(pick, kind)) in edits.iter().enumerate() {
                let id = ids[pick % ids.len()];
                let (role, text) = match kind {
                    0 => (Role::Heading2, format!("## Edited {n}")),
                    1 => (Role::Paragraph, " ".to_owned()),
                    _ => (Role::Paragraph, format!("rewritten words, {n} of them and more")),
                };
                let block = after.get_mut(id).unwrap();
                block.content = Content::markdown(text);
                block.metadata = Metadata::with_role(role);
                changed.push(id);
            }
            let content = |doc: &Document, id: BlockId| doc.get(id).is_some_and(is_content);
            let patchable = |id: BlockId| content(&before, id) && content(&after, id) && after.children(id).is_empty();
            let keeps_content = changed.iter().all(|&id| patchable(id));
            match layout.patched(&after, &changed, None) {
                Some(patched) => prop_assert_eq!(patched.encode(), Layout::build(&after, None).encode()),
                None => prop_assert!(!keeps_content, "refused though every changed block stayed childless content"),
            }
        }
    }

    #[test]
    fn a_code_symbol_holding_members_is_not_patched_in() {
        // Its name is in its members' heading paths: a new one changes theirs.
        let mut doc = document(&[(2, 0), (2, 1)]);
        let [class, member] = [0, 1].map(|n| doc.document_order().filter(|id| !id.is_root()).nth(n).unwrap());
        let symbol = |name: &str| {
            let mut metadata = Metadata::with_role(Role::Class);
            metadata.label = Some(name.to_owned());
            (Content::code(Some("python".into()), format!("class {name}: ...")), metadata)
        };
        let (content, metadata) = symbol("Cache");
        let block = doc.get_mut(class).unwrap();
        (block.content, block.metadata) = (content, metadata);
        let layout = Layout::build(&doc, None);
        assert_eq!(layout.blocks, [class, member], "both are content");
        let (content, metadata) = symbol("Store");
        let block = doc.get_mut(class).unwrap();
        (block.content, block.metadata) = (content, metadata);
        assert!(layout.patched(&doc, &[class], None).is_none());
    }

    #[test]
    fn a_moved_block_is_not_patched_in() {
        // Paragraphs p0 (holding c) and p1 under the root.
        let mut doc = document(&[(2, 0), (2, 1), (2, 0)]);
        let [p0, c, p1] = [0, 1, 2].map(|n| doc.document_order().filter(|id| !id.is_root()).nth(n).unwrap());
        assert_eq!(doc.parent(c), Some(p0));
        let layout = Layout::build(&doc, None);
        // c goes under p1: all three are content blocks the layout holds,
        // and their texts are as they were.
        doc.move_block(c, p1, None).unwrap();
        assert_eq!(Layout::build(&doc, None).blocks, [p0, p1, c], "the order changed");
        assert!(layout.patched(&doc, &[c, p0, p1], None).is_none());
    }
}
