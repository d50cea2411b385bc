//! Building a document's [`Layout`]: its content blocks walked depth first
//! in document order, then grouped by section. Each subtree under the root
//! is walked on its own (in parallel: a big corpus is one subtree per
//! file), and the walks are joined in order. The walk also notes, for each
//! block with children, the range of content blocks its subtree holds: what
//! lets a later revision keep the ranges of subtrees it did not change
//! ([`Layout::patched`]).

use rayon::prelude::*;
use ucpkit_core::{outline, Block, BlockId, Document, IdMap};
use ucpkit_search::BlockLengths;

use super::{alone, is_content, is_section_root, mean, session_key, Layout, Section, SectionKey, SlotTable, Span};

/// Each block's lengths as the search index measured them: text, heading path.
pub(super) type Measured = IdMap<(u32, u32)>;

pub(super) fn measured(lengths: Option<&[BlockLengths]>) -> Measured {
    lengths.unwrap_or_default().iter().map(|l| (l.id, (l.text, l.headings))).collect()
}

/// Block `id`'s lengths (text, heading path), at least 1 each: as
/// `measured`, else its token count (or a quarter of its text's bytes)
/// and 1.
pub(super) fn lengths_of(block: &Block, id: BlockId, measured: &Measured) -> (u32, u32) {
    let (tokens, path_tokens) = measured
        .get(&id)
        .copied()
        .unwrap_or_else(|| (block.metadata.tokens.unwrap_or_else(|| (block.plain_text().len() / 4) as u32), 1));
    (tokens.max(1), path_tokens.max(1))
}

/// Content blocks in document order with what a layout keeps of each, and
/// the spans over them: a layout before its blocks are grouped by section.
#[derive(Debug, Default)]
pub(super) struct Entries {
    pub(super) blocks: Vec<BlockId>,
    /// Per block: its section's root and session (see [`Section`]; the
    /// runs of a session are told apart when grouped).
    pub(super) keys: Vec<SectionKey>,
    pub(super) tokens: Vec<u32>,
    pub(super) path_tokens: Vec<u32>,
    pub(super) prior: Vec<f32>,
    /// In document order; an empty one is dropped when grouped.
    pub(super) spans: Vec<Span>,
}

impl Entries {
    /// How many content blocks it holds: where the next one goes.
    pub(super) fn len(&self) -> u32 {
        self.blocks.len() as u32
    }

    /// Adds content block `id` of section `key`.
    pub(super) fn push(&mut self, id: BlockId, key: SectionKey, (tokens, path_tokens): (u32, u32), prior: f32) {
        self.blocks.push(id);
        self.keys.push(key);
        self.tokens.push(tokens);
        self.path_tokens.push(path_tokens);
        self.prior.push(prior);
    }

    /// Adds `next`'s blocks and spans after these.
    fn append(&mut self, next: Entries) {
        let offset = self.len();
        self.spans.extend(next.spans.into_iter().map(|span| Span {
            start: span.start + offset,
            end: span.end + offset,
            ..span
        }));
        self.blocks.extend(next.blocks);
        self.keys.extend(next.keys);
        self.tokens.extend(next.tokens);
        self.path_tokens.extend(next.path_tokens);
        self.prior.extend(next.prior);
    }

    /// Adds the content blocks of the subtree under `top` in `doc` (whose
    /// parent is `parent`, and the nearest heading or file above it
    /// `above`), walked depth first in document order, with the spans of
    /// the blocks with children. False when a block of the subtree is
    /// missing (part of a document that does not hold it all).
    pub(super) fn walk(
        &mut self,
        doc: &Document,
        top: BlockId,
        parent: BlockId,
        above: Option<BlockId>,
        measured: &Measured,
    ) -> bool {
        let mut whole = true;
        // Spans not yet closed, each with the depth of its block.
        let mut open: Vec<(usize, usize)> = Vec::new();
        // Each block with its parent, the nearest heading or file above it
        // and its depth below `top`.
        let mut stack: Vec<(BlockId, BlockId, Option<BlockId>, usize)> = vec![(top, parent, above, 0)];
        while let Some((id, parent, above, depth)) = stack.pop() {
            self.close_spans(&mut open, depth);
            let Some(block) = doc.get(id) else {
                whole = false;
                continue;
            };
            let children = doc.children(id);
            if !children.is_empty() {
                open.push((self.spans.len(), depth));
                let opens_section = is_section_root(block);
                let start = self.len();
                self.spans.push(Span { id, start, end: start, parent, opens_section });
            }
            let below = if is_section_root(block) { Some(id) } else { above };
            stack.extend(children.iter().rev().map(|&child| (child, id, below, depth + 1)));
            if is_content(block) {
                // Blocks under no heading or file (a single file's preamble, a
                // file without headings, memories) share their parent as a
                // section, a section per sitting (run of one session) where
                // they record sessions; a memory kept on its own is one.
                let key = (above.unwrap_or(parent), session_key(block));
                let prior = outline::rank_prior(block);
                self.push(id, key, lengths_of(block, id, measured), prior);
            }
        }
        self.close_spans(&mut open, 0);
        whole
    }

    /// Ends the open spans of blocks at `depth` or deeper at the blocks so far.
    fn close_spans(&mut self, open: &mut Vec<(usize, usize)>, depth: usize) {
        while let Some(&(at, _)) = open.last().filter(|&&(_, d)| d >= depth) {
            self.spans[at].end = self.len();
            open.pop();
        }
    }

    /// The layout of these blocks: grouped by section (sections in the
    /// order their first block comes), with their windows and means. The
    /// blocks of a root that record a session are grouped by runs of one
    /// session: two conversations imported side by side whose sessions
    /// read alike ("Session 1") stay apart.
    pub(super) fn into_layout(self) -> Layout {
        let mut sections: Vec<Section> = Vec::new();
        let mut section_of: IdMap<u32> = IdMap::default();
        // Per root: the session of its last block that records one, and
        // the section of that run.
        let mut run_of: IdMap<(u64, u32)> = IdMap::default();
        let mut section = Vec::with_capacity(self.blocks.len());
        for (i, &(root, session)) in self.keys.iter().enumerate() {
            let mut open = || {
                sections.push(Section { root, session, blocks: Vec::new(), tokens: 0 });
                (sections.len() - 1) as u32
            };
            let at = if session == 0 {
                *section_of.entry(root).or_insert_with(open)
            } else if alone(session) {
                open()
            } else {
                match run_of.get(&root) {
                    Some(&(last, at)) if last == session => at,
                    _ => {
                        let at = open();
                        run_of.insert(root, (session, at));
                        at
                    }
                }
            };
            let joined = &mut sections[at as usize];
            section.push((at, joined.blocks.len() as u32));
            joined.blocks.push(i as u32);
            joined.tokens += u64::from(self.tokens[i]);
        }
        let spans: Vec<Span> = self.spans.into_iter().filter(|span| span.start < span.end).collect();
        let mut layout = Layout {
            slot: SlotTable::build(&self.blocks),
            blocks: self.blocks,
            tokens: self.tokens,
            path_tokens: self.path_tokens,
            prior: self.prior,
            section,
            window_tokens: Vec::new(),
            sections,
            span_at: span_index(&spans),
            spans,
            mean_block: 1.0,
            mean_path: 1.0,
            mean_window: 1.0,
            mean_section: 1.0,
        };
        layout.measure_windows();
        layout
    }
}

/// Each span's block to its index in `spans`.
pub(super) fn span_index(spans: &[Span]) -> IdMap<u32> {
    spans.iter().enumerate().map(|(i, span)| (span.id, i as u32)).collect()
}

impl Layout {
    /// The layout of `doc`, with the blocks' `lengths` as the search index
    /// measured them (else their token counts).
    pub fn build(doc: &Document, lengths: Option<&[BlockLengths]>) -> Self {
        let measured = measured(lengths);
        let walks: Vec<Entries> = doc
            .children(BlockId::ROOT)
            .par_iter()
            .map(|&top| {
                let mut walked = Entries::default();
                walked.walk(doc, top, BlockId::ROOT, None, &measured);
                walked
            })
            .collect();
        let mut entries = Entries::default();
        for walked in walks {
            entries.append(walked);
        }
        entries.into_layout()
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
}

#[cfg(test)]
pub(super) mod tests {
    use proptest::prelude::*;
    use ucpkit_core::{Block, Content, Metadata, Role};

    use super::*;

    /// A document from `(kind, parent pick)` pairs: kind 0 a file, 1 a
    /// heading, 2 a paragraph (every third recording one of two
    /// sessions, and of the others every fifth a memory kept on its own),
    /// 3 an empty paragraph; each block goes under the root or an earlier
    /// block.
    pub(in crate::rank) fn document(shape: &[(u8, usize)]) -> Document {
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
            let mut metadata = Metadata::with_role(role);
            if kind == 2 && n % 3 == 0 {
                metadata.custom.insert("session".into(), format!("Session {}", n % 2).into());
            } else if kind == 2 && n % 5 == 1 {
                metadata.custom.insert("kind".into(), "note".into());
            }
            let parent = ids[pick % ids.len()];
            doc.append_child(parent, Block::new(id, content, metadata)).unwrap();
            ids.push(id);
        }
        doc
    }

    proptest! {
        /// Joined from walks of each subtree, the layout is what one walk of
        /// the document says: its content blocks in document order, each in
        /// the section of the nearest heading or file above it (else its
        /// parent) and of its sitting (run of one session), or alone for a
        /// memory kept on its own, sections in the order their first block
        /// comes.
        #[test]
        fn the_joined_walks_are_the_documents_layout(shape in prop::collection::vec((0u8..4, 0usize..64), 0..60)) {
            let doc = document(&shape);
            let layout = Layout::build(&doc, None);
            let content: Vec<BlockId> =
                doc.document_order().filter(|&id| doc.get(id).is_some_and(is_content)).collect();
            prop_assert_eq!(&layout.blocks, &content);
            let key_of = |id: BlockId| {
                let root = doc
                    .ancestors(id)
                    .find(|&a| !a.is_root() && doc.get(a).is_some_and(is_section_root))
                    .unwrap_or_else(|| doc.parent(id).unwrap());
                (root, outline::session(doc.get(id).unwrap()))
            };
            // Each block's section: its root and, for a block recording a
            // session, the run of that session among its root's blocks
            // that record one (a run ends where another session starts,
            // not where a lone memory comes); a lone memory's is its own.
            let mut runs: Vec<(BlockId, String, usize)> = Vec::new();
            let mut expected = Vec::new();
            for (i, &id) in content.iter().enumerate() {
                let (root, session) = key_of(id);
                if outline::stands_alone(doc.get(id).unwrap()) {
                    expected.push((root, Some((true, i))));
                    continue;
                }
                let run = session.map(|session| {
                    let last = runs.iter().rposition(|(r, _, _)| *r == root);
                    match last {
                        Some(k) if runs[k].1 == session => runs[k].2,
                        Some(k) => {
                            let run = runs[k].2 + 1;
                            runs.push((root, session, run));
                            run
                        }
                        None => {
                            runs.push((root, session, 0));
                            0
                        }
                    }
                });
                expected.push((root, run.map(|run| (false, run))));
            }
            let mut keys = Vec::new();
            for key in &expected {
                if !keys.contains(key) {
                    keys.push(*key);
                }
            }
            prop_assert_eq!(layout.sections.len(), keys.len());
            for (i, &id) in content.iter().enumerate() {
                let (section, at) = layout.section[i];
                prop_assert_eq!(keys[section as usize], expected[i]);
                let section = &layout.sections[section as usize];
                prop_assert_eq!(section.root, key_of(id).0);
                prop_assert_eq!(section.blocks[at as usize], i as u32);
                prop_assert_eq!(layout.slot_of(&id), Some(i as u32));
            }
            for section in &layout.sections {
                prop_assert!(section.blocks.windows(2).all(|w| w[0] < w[1]));
                let tokens: u64 = section.blocks.iter().map(|&b| u64::from(layout.tokens[b as usize])).sum();
                prop_assert_eq!(section.tokens, tokens);
            }
            // Each block with children and content below: its span is the
            // range of the content blocks of its subtree.
            let mut spans = Vec::new();
            for id in doc.document_order().filter(|id| !id.is_root() && !doc.children(*id).is_empty()) {
                let held: Vec<u32> = doc
                    .document_order()
                    .filter(|&b| b == id || doc.ancestors(b).any(|a| a == id))
                    .filter_map(|b| layout.slot_of(&b))
                    .collect();
                if let (Some(&start), Some(&last)) = (held.first(), held.last()) {
                    prop_assert_eq!(held.len() as u32, last - start + 1, "a subtree's content is one range");
                    let opens_section = is_section_root(doc.get(id).unwrap());
                    spans.push(Span { id, start, end: last + 1, parent: doc.parent(id).unwrap(), opens_section });
                }
            }
            prop_assert_eq!(&layout.spans, &spans);
        }
    }
}
