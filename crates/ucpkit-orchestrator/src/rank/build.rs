//! Building a document's [`Layout`]: its content blocks walked depth first
//! in document order, grouped by section. Each subtree under the root is
//! walked on its own (in parallel: a big corpus is one subtree per file),
//! then the walks are joined in order; only the root's own section (blocks
//! directly under the root) can span two walks, and it is joined into one.

use rayon::prelude::*;
use ucpkit_core::{outline, BlockId, Document, IdMap};
use ucpkit_search::BlockLengths;

use super::{is_content, is_section_root, mean, Layout, Section, SlotTable};

impl Layout {
    /// The layout of `doc`, with the blocks' `lengths` as the search index
    /// measured them (else their token counts).
    pub fn build(doc: &Document, lengths: Option<&[BlockLengths]>) -> Self {
        let measured: IdMap<(u32, u32)> =
            lengths.unwrap_or_default().iter().map(|l| (l.id, (l.text, l.headings))).collect();
        let walks: Vec<Layout> = doc.children(BlockId::ROOT).par_iter().map(|&top| walk(doc, top, &measured)).collect();
        let mut layout = Layout::empty();
        let mut root_section = None;
        for walked in walks {
            layout.join(walked, &mut root_section);
        }
        layout.slot = SlotTable::build(&layout.blocks);
        layout.window_tokens = (0..layout.blocks.len())
            .map(|i| layout.window(i).map(|j| u64::from(layout.tokens[j as usize])).sum())
            .collect();
        let n = layout.blocks.len();
        layout.mean_block = mean(layout.tokens.iter().map(|&t| f64::from(t)).sum(), n);
        layout.mean_path = mean(layout.path_tokens.iter().map(|&t| f64::from(t)).sum(), n);
        layout.mean_window = mean(layout.window_tokens.iter().map(|&t| t as f64).sum(), n);
        layout.mean_section = mean(layout.sections.iter().map(|s| s.tokens as f64).sum(), layout.sections.len());
        layout
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
    }
}

/// The content blocks of the subtree under `top` (a child of the root), in
/// document order with their sections, as a layout of its own (no slots,
/// windows or means yet).
fn walk(doc: &Document, top: BlockId, measured: &IdMap<(u32, u32)>) -> Layout {
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
        let (tokens, path_tokens) = measured
            .get(&id)
            .copied()
            .unwrap_or_else(|| (block.metadata.tokens.unwrap_or_else(|| (block.plain_text().len() / 4) as u32), 1));
        let tokens = tokens.max(1);
        let index = layout.blocks.len() as u32;
        let section = &mut layout.sections[at as usize];
        layout.section.push((at, section.blocks.len() as u32));
        section.blocks.push(index);
        section.tokens += u64::from(tokens);
        layout.blocks.push(id);
        layout.tokens.push(tokens);
        layout.path_tokens.push(path_tokens.max(1));
        layout.prior.push(outline::rank_prior(block));
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
    }
}
