//! A [`Layout`] as bytes, so a process can rank a stored document's
//! blocks without reading the document: little-endian arrays, checked
//! whole on the way back (a damaged file gives `None`, never a layout that
//! points outside itself).

use ucpkit_core::BlockId;

use super::build::span_index;
use super::{Layout, Section, SlotTable, Span};

/// The first bytes of an encoded layout (bumped when the form, or the
/// rule that groups blocks into sections, changes).
const MAGIC: &[u8; 8] = b"UCPLAY08";

/// Bytes each block takes after its id.
const PER_BLOCK: usize = 32;

/// Bytes each span takes: its block, range, parent and whether it opens
/// a section.
const PER_SPAN: usize = 12 + 8 + 12 + 1;

impl Layout {
    /// The layout as bytes ([`Layout::decode`] reads them back).
    pub fn encode(&self) -> Vec<u8> {
        let n = self.blocks.len();
        let mut out = Vec::with_capacity(
            MAGIC.len() + 16 + 32 + n * (12 + PER_BLOCK) + self.sections.len() * 36 + self.spans.len() * PER_SPAN,
        );
        out.extend_from_slice(MAGIC);
        put_u64(&mut out, n as u64);
        put_u64(&mut out, self.sections.len() as u64);
        for mean in [self.mean_block, self.mean_path, self.mean_window, self.mean_section] {
            out.extend_from_slice(&mean.to_le_bytes());
        }
        for id in &self.blocks {
            out.extend_from_slice(id.as_bytes());
        }
        for i in 0..n {
            put_u32(&mut out, self.tokens[i]);
            put_u32(&mut out, self.path_tokens[i]);
            out.extend_from_slice(&self.prior[i].to_le_bytes());
            put_u32(&mut out, self.section[i].0);
            put_u32(&mut out, self.section[i].1);
            put_u64(&mut out, self.window_tokens[i]);
        }
        for section in &self.sections {
            out.extend_from_slice(section.root.as_bytes());
            put_u64(&mut out, section.session);
            put_u64(&mut out, section.tokens);
            put_u64(&mut out, section.blocks.len() as u64);
            for &block in &section.blocks {
                put_u32(&mut out, block);
            }
        }
        let slots = self.slot.slots();
        put_u64(&mut out, slots.len() as u64);
        for &slot in slots {
            put_u32(&mut out, slot);
        }
        put_u64(&mut out, self.spans.len() as u64);
        for span in &self.spans {
            out.extend_from_slice(span.id.as_bytes());
            put_u32(&mut out, span.start);
            put_u32(&mut out, span.end);
            out.extend_from_slice(span.parent.as_bytes());
            out.push(u8::from(span.opens_section));
        }
        out
    }

    /// The layout `bytes` encode, or `None` when they are not one whole
    /// and consistent layout.
    pub fn decode(bytes: &[u8]) -> Option<Layout> {
        let mut reader = Reader { bytes: bytes.strip_prefix(MAGIC)? };
        let n = usize::try_from(reader.u64()?).ok()?;
        let sections_len = usize::try_from(reader.u64()?).ok()?;
        // Every block takes its id and PER_BLOCK bytes, every section 36 at least.
        if n.checked_mul(12 + PER_BLOCK)?.checked_add(sections_len.checked_mul(36)?)? > reader.bytes.len() {
            return None;
        }
        let means = [reader.f64()?, reader.f64()?, reader.f64()?, reader.f64()?];
        let blocks: Vec<BlockId> = (0..n).map(|_| reader.id()).collect::<Option<_>>()?;
        let mut layout = Layout {
            slot: SlotTable::build(&[]),
            blocks,
            tokens: Vec::with_capacity(n),
            path_tokens: Vec::with_capacity(n),
            prior: Vec::with_capacity(n),
            section: Vec::with_capacity(n),
            window_tokens: Vec::with_capacity(n),
            sections: Vec::with_capacity(sections_len),
            spans: Vec::new(),
            span_at: Default::default(),
            mean_block: means[0],
            mean_path: means[1],
            mean_window: means[2],
            mean_section: means[3],
        };
        for _ in 0..n {
            layout.tokens.push(reader.u32()?);
            layout.path_tokens.push(reader.u32()?);
            layout.prior.push(f32::from_le_bytes(reader.take()?));
            layout.section.push((reader.u32()?, reader.u32()?));
            layout.window_tokens.push(reader.u64()?);
        }
        for _ in 0..sections_len {
            let root = reader.id()?;
            let session = reader.u64()?;
            let tokens = reader.u64()?;
            let len = usize::try_from(reader.u64()?).ok()?;
            if len.checked_mul(4)? > reader.bytes.len() {
                return None;
            }
            let blocks: Vec<u32> = (0..len).map(|_| reader.u32()).collect::<Option<_>>()?;
            layout.sections.push(Section { root, session, blocks, tokens });
        }
        let capacity = usize::try_from(reader.u64()?).ok()?;
        if capacity.checked_mul(4)? > reader.bytes.len() {
            return None;
        }
        let slots: Vec<u32> = (0..capacity).map(|_| reader.u32()).collect::<Option<_>>()?;
        layout.slot = SlotTable::from_slots(slots, n)?;
        let spans_len = usize::try_from(reader.u64()?).ok()?;
        if spans_len.checked_mul(PER_SPAN)? != reader.bytes.len() {
            return None;
        }
        for _ in 0..spans_len {
            let (id, start, end, parent) = (reader.id()?, reader.u32()?, reader.u32()?, reader.id()?);
            let opens_section = match reader.take::<1>()? {
                [0] => false,
                [1] => true,
                _ => return None,
            };
            if start >= end || end as usize > n {
                return None;
            }
            layout.spans.push(Span { id, start, end, parent, opens_section });
        }
        layout.span_at = span_index(&layout.spans);
        let consistent = reader.bytes.is_empty()
            && layout.span_at.len() == spans_len
            && spans_nest(&layout.spans)
            && layout.slot.len() == n
            && layout.section.iter().enumerate().all(|(i, &(section, at))| {
                layout.sections.get(section as usize).and_then(|s| s.blocks.get(at as usize)) == Some(&(i as u32))
            })
            && layout.sections.iter().map(|s| s.blocks.len()).sum::<usize>() == n;
        consistent.then_some(layout)
    }
}

/// Whether `spans` are in document order and each lies inside every span
/// it overlaps that comes before it (the ranges of subtrees do).
fn spans_nest(spans: &[Span]) -> bool {
    // The ends of the spans around the one looked at, innermost last.
    let mut around: Vec<u32> = Vec::new();
    let mut start = 0;
    for span in spans {
        if span.start < start {
            return false;
        }
        start = span.start;
        while around.last().is_some_and(|&end| end <= span.start) {
            around.pop();
        }
        if around.last().is_some_and(|&end| span.end > end) {
            return false;
        }
        around.push(span.end);
    }
    true
}

fn put_u32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, value: u64) {
    out.extend_from_slice(&value.to_le_bytes());
}

/// Reads fixed-size values off the front of a byte slice.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.bytes.split_first_chunk::<N>()?;
        self.bytes = rest;
        Some(*head)
    }

    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }

    fn f64(&mut self) -> Option<f64> {
        self.take().map(f64::from_le_bytes)
    }

    fn id(&mut self) -> Option<BlockId> {
        self.take().map(BlockId::from_bytes)
    }
}

#[cfg(test)]
mod tests {
    use ucpkit_core::{Block, BlockId, Content, Document, Metadata, Role};

    use super::*;

    fn sample() -> (Document, Layout) {
        let mut doc = Document::new("d");
        let mut n = 0;
        let mut add = |doc: &mut Document, parent: BlockId, text: &str, role: Role| {
            n += 1;
            let content = Content::markdown(text);
            let id = Block::derive_id(&content, Some(&role), "", n);
            doc.append_child(parent, Block::new(id, content, Metadata::with_role(role))).unwrap()
        };
        let intro = add(&mut doc, BlockId::ROOT, "A preamble under no heading.", Role::Paragraph);
        let h = add(&mut doc, BlockId::ROOT, "# Budgets", Role::Heading1);
        for text in
            ["Tokens are counted exactly.", "The window never grows past its budget.", "Prune drops old blocks."]
        {
            add(&mut doc, h, text, Role::Paragraph);
        }
        let h2 = add(&mut doc, h, "## Stubs", Role::Heading2);
        add(&mut doc, h2, "A stub names what opening it costs.", Role::Paragraph);
        let layout = Layout::build(&doc, None);
        assert_eq!(layout.section_root(intro), Some(BlockId::ROOT));
        (doc, layout)
    }

    #[test]
    fn a_layout_comes_back_from_its_bytes_and_ranks_the_same() {
        let (doc, layout) = sample();
        let back = Layout::decode(&layout.encode()).expect("decodes");
        assert_eq!(back.encode(), layout.encode());
        for id in doc.document_order() {
            assert_eq!(back.section_root(id), layout.section_root(id));
            assert_eq!(back.neighbours(id).collect::<Vec<_>>(), layout.neighbours(id).collect::<Vec<_>>());
        }
    }

    #[test]
    fn damaged_bytes_are_not_a_layout() {
        let (_, layout) = sample();
        let bytes = layout.encode();
        for cut in 0..bytes.len() {
            assert!(Layout::decode(&bytes[..cut]).is_none(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Layout::decode(&longer).is_none());
        // A section place that points elsewhere.
        let mut moved = bytes.clone();
        let first_place = MAGIC.len() + 16 + 32 + layout.blocks.len() * 12 + 12;
        moved[first_place] ^= 1;
        assert!(Layout::decode(&moved).is_none());
    }

    #[test]
    fn spans_that_do_not_nest_are_not_a_layout() {
        let (_, mut layout) = sample();
        let spans: Vec<(u32, u32)> = layout.spans.iter().map(|s| (s.start, s.end)).collect();
        assert_eq!(spans, [(1, 5), (4, 5)], "the heading's subtree, and its subsection's");
        (layout.spans[0].end, layout.spans[1].start) = (4, 3);
        assert!(Layout::decode(&layout.encode()).is_none(), "the subsection sticks out of its heading");
        (layout.spans[0].end, layout.spans[1].start) = (5, 0);
        assert!(Layout::decode(&layout.encode()).is_none(), "out of document order");
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_decode_or_not_without_panicking(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let mut framed = MAGIC.to_vec();
            framed.extend(bytes);
            let _ = Layout::decode(&framed);
        }
    }
}
