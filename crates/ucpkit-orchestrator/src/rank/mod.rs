//! Ranking a document's blocks for a question at three granularities.
//!
//! The paragraph that answers a question often shares few words with it:
//! they are in its neighbours, or in the heading of its section. So every
//! block is scored four ways, each made relative to the best score of its
//! kind for the question, and the four are added:
//!
//! 1. **block**: BM25 of its text, plus its heading path as a weaker field;
//! 2. **window**: BM25 of the block with up to [`WINDOW`] neighbours on each
//!    side inside its section, read as one passage;
//! 3. **section**: BM25 of its section's own text and heading path;
//! 4. **coverage**: the idf-weighted share of the question's terms that its
//!    text and heading path hold.
//!
//! The sum is weighed by the block's rank prior (test code counts half).
//!
//! Term frequencies come from the search index's postings
//! ([`ucpkit_search::TermPostings`]) and lengths from its field norms, so
//! nothing is analyzed again: the scoring work follows the postings of the
//! question's terms, not the size of the sections or pages they fall in
//! (the per-block score arrays are zeroed once per question).
//! The [`Layout`] (content blocks in document order, grouped by section) is
//! built once per document version.

use ucpkit_core::{outline, Block, BlockId, Content, Document, IdMap, Role};
use ucpkit_search::TermPostings;

mod build;
mod codec;
mod patch;
mod slots;

pub use patch::{carry_layout, PendingLayout};
use slots::SlotTable;

/// Neighbours on each side of a block that its window holds.
pub const WINDOW: usize = 3;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalization.
const B: f64 = 0.75;
/// Weight of a block's heading path next to its text.
pub const HEADING_WEIGHT: f64 = 0.6;
/// Blocks taken from the best of the block and of the window rankings each.
const CANDIDATES: usize = 300;
/// Sections whose blocks are all candidates.
const CANDIDATE_SECTIONS: usize = 30;
/// Most question terms scored (the weightiest; coverage is a 64-bit set).
const MAX_TERMS: usize = 64;

/// A section: the own content blocks of a heading or file block, of one
/// run of a session where they record sessions (a sitting), or a memory
/// kept on its own.
#[derive(Debug)]
struct Section {
    /// The heading or file block whose own content it is (the blocks'
    /// parent for blocks under none).
    root: BlockId,
    /// The session its blocks record, or its lone memory's key
    /// ([`session_key`]).
    session: u64,
    /// Content blocks (indexes into [`Layout::blocks`]) in document order.
    blocks: Vec<u32>,
    tokens: u64,
}

/// The content blocks of a document grouped by section, in document order,
/// with their lengths: what the ranking needs besides the postings.
#[derive(Debug)]
pub struct Layout {
    blocks: Vec<BlockId>,
    /// Per content block: its index in [`Layout::blocks`].
    slot: SlotTable,
    /// Per content block: its length (analyzed terms, or tokens when the
    /// index cannot tell).
    tokens: Vec<u32>,
    /// Per content block: the length of its heading path.
    path_tokens: Vec<u32>,
    /// Per content block: its rank prior ([`outline::rank_prior`]).
    prior: Vec<f32>,
    /// Per content block: its section and its place among the section's.
    section: Vec<(u32, u32)>,
    /// Per content block: tokens of its window.
    window_tokens: Vec<u64>,
    sections: Vec<Section>,
    /// The blocks with children whose subtree holds content, in document
    /// order, each with the range of [`Layout::blocks`] its subtree holds:
    /// what a later revision keeps of this layout ([`Layout::patched`]).
    spans: Vec<Span>,
    /// Per block of [`Layout::spans`]: its index there.
    span_at: IdMap<u32>,
    mean_block: f64,
    mean_path: f64,
    mean_window: f64,
    mean_section: f64,
}

/// A block with children and the content blocks of its subtree (itself
/// included): `start..end` of [`Layout::blocks`], never empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    id: BlockId,
    start: u32,
    end: u32,
    /// Its parent: a later revision keeps the range where the block has
    /// the same parent.
    parent: BlockId,
    /// Whether it opens a section ([`is_section_root`]): the blocks below
    /// it are in its sections, not the ones above it.
    opens_section: bool,
}

/// What puts a content block in a section: the heading or file above it
/// (its parent under none), and the session it records (blocks recording
/// one are grouped by runs of it, [`Layout::build`]).
type SectionKey = (BlockId, u64);

/// The session a block records, as a key: 0 for none. A conversation's
/// turns kept as memories lie side by side under one parent, and each of
/// its sittings is a section of its own, as a heading per session makes
/// it in a transcript: a turn's window and section are its sitting's.
/// Session keys are odd. A memory kept on its own
/// ([`outline::stands_alone`]) gets an even key of its own ([`alone`]):
/// it is a section by itself, and a sitting it was stored in the middle
/// of goes on after it.
fn session_key(block: &Block) -> u64 {
    let hash = |bytes: &[u8]| u64::from_le_bytes(blake3::hash(bytes).as_bytes()[..8].try_into().expect("8 bytes"));
    match outline::session(block) {
        Some(session) => hash(session.as_bytes()) | 1,
        None if outline::stands_alone(block) => (hash(block.id.as_bytes()) & !1) | 2,
        None => 0,
    }
}

/// Whether a session key ([`session_key`]) is a memory kept on its own's.
fn alone(key: u64) -> bool {
    key != 0 && key & 1 == 0
}

/// Whether a block opens a section (a heading or a file).
pub(crate) fn is_section_root(block: &Block) -> bool {
    block.heading_level().is_some() || block.role() == Some(&Role::File)
}

/// Whether a block is content a context would quote: text, code, a table
/// or math, not a section's title.
fn is_content(block: &Block) -> bool {
    !matches!(block.content, Content::Composite)
        && !is_section_root(block)
        && block.role() != Some(&Role::Title)
        && !block.plain_text().trim().is_empty()
}

fn mean(total: f64, count: usize) -> f64 {
    if count == 0 {
        1.0
    } else {
        (total / count as f64).max(1.0)
    }
}

/// A question's postings and its ranking of every candidate block (the
/// model's nearest blocks fused in when there is one), kept by a host so
/// that a job run again on the same document version does not rank
/// again: the one-shot context ranks before it reads the blocks the job
/// needs, then runs the job on them.
pub struct QuestionRanking {
    /// The question ranked.
    pub question: String,
    /// Its terms' postings in the search index.
    pub postings: Vec<TermPostings>,
    /// Every candidate block, best first (see [`Layout::rank`]).
    pub ranked: Vec<(BlockId, f64)>,
    /// Whether the model's nearest blocks are fused in: what a job with
    /// a model ranks by ([`crate::semantic_hits`]).
    pub semantic: bool,
}

impl QuestionRanking {
    /// Ranks `question`, whose terms are `postings`, over `layout`, with
    /// `semantic`, the model's nearest blocks when there is one (see
    /// [`rank_question`]).
    pub fn new(
        layout: &Layout,
        question: &str,
        mut postings: Vec<TermPostings>,
        semantic: Option<&[(BlockId, f64)]>,
    ) -> Self {
        drop_question_words(&mut postings);
        let ranked = rank_question(layout, question, &postings, semantic.unwrap_or_default());
        QuestionRanking { question: question.to_owned(), postings, ranked, semantic: semantic.is_some() }
    }
}

/// The interrogatives, as the analyzer stems them.
static QUESTION_WORDS: std::sync::LazyLock<Vec<String>> =
    std::sync::LazyLock::new(|| ucpkit_analyzer::terms("what where when who whom whose which why how"));

/// Drops the interrogatives (`what`, `where`, `how` ...) from a question's
/// terms, unless nothing else is left. They say what kind of answer is
/// wanted, not what it is about, yet they are frequent enough in prose
/// and dialogue to weigh as much as the words that are: "where did we
/// camp?" would otherwise rank every line holding "where" next to the
/// ones about camping.
pub fn drop_question_words(postings: &mut Vec<TermPostings>) {
    if postings.iter().any(|p| !QUESTION_WORDS.contains(&p.term)) {
        postings.retain(|p| !QUESTION_WORDS.contains(&p.term));
    }
}

/// Every candidate block for `question` (whose terms are `postings`, with
/// the model's nearest blocks, `hits`), best first at 1: [`Layout::rank`], and for
/// a long report of several lines its headline ranked alone too (by its
/// own terms' postings, each counted once) and fused in
/// ([`ucpkit_search::headline`]), the fused scores scaled back so the best is
/// 1.
pub fn rank_question(
    layout: &Layout,
    question: &str,
    postings: &[TermPostings],
    hits: &[(BlockId, f64)],
) -> Vec<(BlockId, f64)> {
    let ranked = layout.rank(postings, hits, usize::MAX);
    let Some(headline) = ucpkit_search::headline::headline(question) else { return ranked };
    let terms = ucpkit_analyzer::distinct_terms(headline);
    let headline_postings: Vec<TermPostings> =
        postings.iter().filter(|p| terms.contains(&p.term)).map(|p| TermPostings { repeats: 1, ..p.clone() }).collect();
    let mut fused = ucpkit_search::headline::fuse_scores(&ranked, &layout.rank(&headline_postings, &[], usize::MAX));
    let best = fused.first().map_or(1.0, |(_, score)| *score).max(f64::MIN_POSITIVE);
    for (_, score) in &mut fused {
        *score /= best;
    }
    fused
}

/// The layout of `doc`, `host`'s current document, built once per
/// document version (and search provider) and kept by the host: patched
/// from the one of an earlier version when writes since left it pending
/// ([`carry_layout`]), else laid out whole.
pub fn layout(host: &ucpkit_sessions::SessionHost, doc: &Document) -> std::sync::Arc<Layout> {
    host.derived(doc, || patch::lay_out(host, doc))
}

impl Layout {
    /// The blocks of content block `i`'s window (itself included).
    fn window(&self, i: usize) -> impl Iterator<Item = u32> + '_ {
        let (section, at) = self.section[i];
        let blocks = &self.sections[section as usize].blocks;
        let at = at as usize;
        blocks[at.saturating_sub(WINDOW)..(at + WINDOW + 1).min(blocks.len())].iter().copied()
    }

    /// The section block (heading or file) whose own content block `id`
    /// is: a context that quotes `id` reads that section.
    pub fn section_root(&self, id: BlockId) -> Option<BlockId> {
        let at = self.slot_of(&id)?;
        Some(self.sections[self.section[at as usize].0 as usize].root)
    }

    /// The index of content block `id` in [`Layout::blocks`].
    fn slot_of(&self, id: &BlockId) -> Option<u32> {
        self.slot.get(&self.blocks, id)
    }

    /// How many content blocks it ranks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether it ranks no block.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The content blocks right before and after `id` in its section.
    pub fn neighbours(&self, id: BlockId) -> impl Iterator<Item = BlockId> + '_ {
        [-1, 1].into_iter().filter_map(move |step| self.sibling(id, step))
    }

    /// The content block right after `id` in its section.
    pub(crate) fn next_in_section(&self, id: BlockId) -> Option<BlockId> {
        self.sibling(id, 1)
    }

    /// The content block `step` places after `id` (before, when negative)
    /// in its section.
    fn sibling(&self, id: BlockId, step: isize) -> Option<BlockId> {
        let (section, at) = self.section[self.slot_of(&id)? as usize];
        let j = (at as usize).checked_add_signed(step)?;
        self.sections[section as usize].blocks.get(j).map(|&j| self.blocks[j as usize])
    }

    /// The blocks best matching the question whose terms are `postings`,
    /// best first, at most `limit`, each with its score relative to the
    /// best (1.0 for the first). `hits`, another ranking of blocks with
    /// scores from 0 to 1 (the model's nearest blocks, with one), adds
    /// a fifth component, and its blocks are candidates too.
    pub fn rank(&self, postings: &[TermPostings], hits: &[(BlockId, f64)], limit: usize) -> Vec<(BlockId, f64)> {
        let mut terms: Vec<&TermPostings> = postings.iter().filter(|t| t.idf > 0.0).collect();
        terms.sort_by(|a, b| b.weight().total_cmp(&a.weight()));
        terms.truncate(MAX_TERMS);
        let scores = self.score(&terms);
        let total_idf: f64 = terms.iter().map(|t| t.weight()).sum();
        let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max).max(f64::MIN_POSITIVE);
        let (block_max, window_max, section_max) = (max(&scores.block), max(&scores.window), max(&scores.section));
        let hit_scores: IdMap<f64> = hits.iter().copied().collect();
        let fused = |i: usize| {
            let covered: f64 = terms
                .iter()
                .enumerate()
                .filter(|(bit, _)| scores.mask[i] & 1 << bit != 0)
                .map(|(_, t)| t.weight())
                .sum();
            let matched = scores.block[i] / block_max
                + scores.window[i] / window_max
                + scores.section[self.section[i].0 as usize] / section_max
                + covered / total_idf.max(f64::MIN_POSITIVE)
                + hit_scores.get(&self.blocks[i]).copied().unwrap_or(0.0);
            matched * f64::from(self.prior[i])
        };
        let mut candidates = self.candidates(&scores);
        candidates.extend(hits.iter().filter_map(|(id, _)| self.slot_of(id)).map(|i| i as usize));
        candidates.sort_unstable();
        candidates.dedup();
        let mut ranked: Vec<(BlockId, f64)> = candidates.into_iter().map(|i| (self.blocks[i], fused(i))).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(limit);
        let best = ranked.first().map_or(1.0, |r| r.1).max(f64::MIN_POSITIVE);
        for entry in &mut ranked {
            entry.1 /= best;
        }
        ranked
    }

    /// Every content block's block and window scores, every section's
    /// score, and every block's matched terms.
    fn score(&self, terms: &[&TermPostings]) -> Scores {
        let n = self.blocks.len();
        let mut scores = Scores {
            block: vec![0.0; n],
            window: vec![0.0; n],
            section: vec![0.0; self.sections.len()],
            mask: vec![0; n],
        };
        // Scratch term frequencies per window and per section, with the
        // entries touched so they can be read and reset.
        let mut window_tf = vec![0u32; n];
        let mut section_tf = vec![0u32; self.sections.len()];
        let mut path_tf = vec![0u32; self.sections.len()];
        let mut touched_windows: Vec<u32> = Vec::new();
        let mut touched_sections: Vec<u32> = Vec::new();
        let mut touched_paths: Vec<u32> = Vec::new();
        for (bit, term) in terms.iter().enumerate() {
            for &(id, tf) in &term.text {
                let Some(i) = self.slot_of(&id) else { continue };
                let i = i as usize;
                scores.block[i] += term.weight() * bm25(tf, f64::from(self.tokens[i]), self.mean_block);
                scores.mask[i] |= 1 << bit;
                for j in self.window(i) {
                    if window_tf[j as usize] == 0 {
                        touched_windows.push(j);
                    }
                    window_tf[j as usize] = window_tf[j as usize].saturating_add(tf);
                }
                let section = self.section[i].0 as usize;
                if section_tf[section] == 0 {
                    touched_sections.push(section as u32);
                }
                section_tf[section] = section_tf[section].saturating_add(tf);
            }
            // A section's heading path is the path of each of its blocks:
            // counted once for the section.
            for &(id, tf) in &term.headings {
                let Some(i) = self.slot_of(&id) else { continue };
                let i = i as usize;
                scores.block[i] +=
                    HEADING_WEIGHT * term.weight() * bm25(tf, f64::from(self.path_tokens[i]), self.mean_path);
                scores.mask[i] |= 1 << bit;
                let section = self.section[i].0 as usize;
                if path_tf[section] == 0 {
                    touched_paths.push(section as u32);
                }
                path_tf[section] = path_tf[section].max(tf);
            }
            for j in touched_windows.drain(..) {
                let j = j as usize;
                scores.window[j] += term.weight() * bm25(window_tf[j], self.window_tokens[j] as f64, self.mean_window);
                window_tf[j] = 0;
            }
            for s in touched_paths.drain(..) {
                let s = s as usize;
                if section_tf[s] == 0 {
                    touched_sections.push(s as u32);
                }
                section_tf[s] = section_tf[s].saturating_add(path_tf[s]);
                path_tf[s] = 0;
            }
            for s in touched_sections.drain(..) {
                let s = s as usize;
                scores.section[s] +=
                    term.weight() * bm25(section_tf[s], self.sections[s].tokens as f64, self.mean_section);
                section_tf[s] = 0;
            }
        }
        scores
    }

    /// The blocks worth fusing: the best by block and by window score, and
    /// every block of the best sections.
    fn candidates(&self, scores: &Scores) -> Vec<usize> {
        let mut chosen = vec![false; self.blocks.len()];
        for values in [&scores.block, &scores.window] {
            for i in top(values, CANDIDATES) {
                chosen[i] = true;
            }
        }
        for s in top(&scores.section, CANDIDATE_SECTIONS) {
            for &i in &self.sections[s].blocks {
                chosen[i as usize] = true;
            }
        }
        chosen.iter().enumerate().filter(|(_, c)| **c).map(|(i, _)| i).collect()
    }
}

/// The scores of one question.
struct Scores {
    block: Vec<f64>,
    window: Vec<f64>,
    section: Vec<f64>,
    mask: Vec<u64>,
}

/// One term's BM25 weight for a frequency `tf` in a text of `length`
/// (without its idf).
pub fn bm25(tf: u32, length: f64, mean_length: f64) -> f64 {
    let tf = f64::from(tf);
    tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / mean_length))
}

/// The indexes of the `k` largest positive values.
fn top(values: &[f64], k: usize) -> Vec<usize> {
    let mut indexes: Vec<usize> = (0..values.len()).filter(|&i| values[i] > 0.0).collect();
    if indexes.len() > k {
        indexes.select_nth_unstable_by(k, |&a, &b| values[b].total_cmp(&values[a]));
        indexes.truncate(k);
    }
    indexes
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUIDE: &str = "# Streams\n\n## Buffering\n\nReadable streams keep data in an internal buffer.\n\n\
        Past the threshold, reading pauses.\n\nThe default is 64 KiB.\n\n## Errors\n\n\
        Errors are emitted as events on the stream.\n\nA threshold of retries can be set.\n";

    fn guide() -> Document {
        ucpkit_ingest::markdown_document("guide", GUIDE, &ucpkit_ingest::IngestOptions::default())
    }

    /// Postings as an index would hold them: each term's occurrences in
    /// every content block's text and heading path.
    fn postings(doc: &Document, question: &str) -> Vec<TermPostings> {
        let layout = Layout::build(doc, None);
        let count =
            |text: &str, term: &str| ucpkit_analyzer::terms(text).iter().filter(|t| t.as_str() == term).count() as u32;
        ucpkit_analyzer::distinct_terms(question)
            .into_iter()
            .map(|term| {
                let mut postings = TermPostings { term: term.clone(), idf: 1.0, ..TermPostings::default() };
                for &id in &layout.blocks {
                    let block = doc.get(id).unwrap();
                    let path = outline::path_titles(doc, id).join(" ");
                    let (text, path) = (count(&block.plain_text(), &term), count(&path, &term));
                    if text > 0 {
                        postings.text.push((id, text));
                    }
                    if path > 0 {
                        postings.headings.push((id, path));
                    }
                }
                postings
            })
            .collect()
    }

    #[test]
    fn a_reports_headline_lifts_its_blocks_and_a_question_of_one_line_ranks_as_before() {
        let doc = guide();
        let layout = Layout::build(&doc, None);
        let filler: Vec<String> = (0..40).map(|n| format!("filler{n}")).collect();
        let body = format!("readable streams keep data in an internal buffer {}", filler.join(" "));
        let report = format!("errors emitted as events\n\n{body}");
        let terms = postings(&doc, &report);
        let plain = layout.rank(&terms, &[], usize::MAX);
        let ranked = rank_question(&layout, &report, &terms, &[]);
        let errors = find(&doc, "Errors are emitted");
        let at = |list: &[(BlockId, f64)]| list.iter().position(|(id, _)| *id == errors).unwrap();
        assert!(at(&ranked) < at(&plain), "{} < {}", at(&ranked), at(&plain));
        assert_eq!(ranked[0].1, 1.0);
        assert!(ranked.windows(2).all(|w| w[0].1 >= w[1].1));
        let one_line = report.replace('\n', " ");
        let terms = postings(&doc, &one_line);
        assert_eq!(rank_question(&layout, &one_line, &terms, &[]), layout.rank(&terms, &[], usize::MAX));
    }

    fn find(doc: &Document, text: &str) -> BlockId {
        doc.document_order().find(|id| doc.get(*id).is_some_and(|b| b.plain_text().starts_with(text))).unwrap()
    }

    #[test]
    fn a_block_is_found_through_its_neighbours_and_its_heading() {
        let doc = guide();
        let layout = Layout::build(&doc, None);
        let ranked = layout.rank(&postings(&doc, "readable buffering default"), &[], 10);
        let position = |text: &str| ranked.iter().position(|(id, _)| *id == find(&doc, text));
        // "The default is 64 KiB." shares one word with the question; its
        // neighbours and its heading share the others. The other section
        // shares none.
        assert_eq!(position("The default is"), Some(1), "{ranked:?}");
        assert_eq!(position("Errors are emitted"), None, "{ranked:?}");
        assert_eq!(ranked[0].1, 1.0);
        assert!(ranked.windows(2).all(|w| w[0].1 >= w[1].1));
    }

    #[test]
    fn windows_and_sections_stay_inside_their_section() {
        let doc = guide();
        let layout = Layout::build(&doc, None);
        assert_eq!(layout.blocks.len(), 5);
        let errors = layout.slot_of(&find(&doc, "Errors are emitted")).unwrap() as usize;
        let window: Vec<BlockId> = layout.window(errors).map(|j| layout.blocks[j as usize]).collect();
        assert_eq!(window, vec![find(&doc, "Errors are emitted"), find(&doc, "A threshold of retries")]);
        let section = |text: &str| layout.section[layout.slot_of(&find(&doc, text)).unwrap() as usize].0;
        assert_eq!(section("The default is"), section("Readable streams"));
        assert_ne!(section("The default is"), section("Errors are emitted"));
        let neighbours: Vec<BlockId> = layout.neighbours(find(&doc, "Past the threshold")).collect();
        assert_eq!(neighbours, vec![find(&doc, "Readable streams"), find(&doc, "The default is")]);
        assert_eq!(layout.neighbours(find(&doc, "Errors are emitted")).count(), 1);
    }

    #[test]
    fn blocks_under_no_heading_share_a_window() {
        let doc = ucpkit_ingest::markdown_document(
            "notes",
            "First note.\n\nSecond note.\n\n# Later\n\nThird.\n",
            &ucpkit_ingest::IngestOptions::default(),
        );
        let layout = Layout::build(&doc, None);
        let neighbours: Vec<BlockId> = layout.neighbours(find(&doc, "First note")).collect();
        assert_eq!(neighbours, vec![find(&doc, "Second note")]);
        assert_eq!(layout.neighbours(find(&doc, "Third")).count(), 0);
    }

    #[test]
    fn turns_side_by_side_are_a_section_per_session() {
        // Memories: turns under the root, each recording its session.
        let mut doc = Document::new("memory");
        let turns = [
            ("May", "Ana: We hiked up to the lake."),
            ("May", "Bo: How was the weather?"),
            ("June", "Ana: It rained all week."),
            ("June", "Bo: Did you stay in?"),
            ("June", "Ana: We read by the fire."),
            // Another conversation's sitting that reads alike.
            ("May", "Cy: Back to the lake next year?"),
        ];
        for (n, (session, text)) in turns.into_iter().enumerate() {
            let content = Content::plain(text);
            let id = Block::derive_id(&content, Some(&Role::Note), "", n as u32);
            let mut metadata = ucpkit_core::Metadata::with_role(Role::Note);
            metadata.custom.insert("session".into(), session.into());
            doc.append_child(BlockId::ROOT, Block::new(id, content, metadata)).unwrap();
        }
        let layout = Layout::build(&doc, None);
        let section = |text: &str| layout.section[layout.slot_of(&find(&doc, text)).unwrap() as usize].0;
        assert_eq!(layout.sections.len(), 3);
        assert_eq!(section("Ana: We hiked"), section("Bo: How was"));
        assert_ne!(section("Bo: How was"), section("Ana: It rained"));
        assert_ne!(section("Cy: Back"), section("Ana: We hiked"), "a later run of a session is a section of its own");
        let neighbours: Vec<BlockId> = layout.neighbours(find(&doc, "Bo: How was")).collect();
        assert_eq!(neighbours, vec![find(&doc, "Ana: We hiked")], "the next session's first turn is not a neighbour");
        assert_eq!(layout.section_root(find(&doc, "Ana: It rained")), Some(BlockId::ROOT));
        // The June turns rank by what their session says about the question:
        // "Did you stay in?" holds no word of it, but its session does.
        let ranked = layout.rank(&postings(&doc, "rained fire"), &[], usize::MAX);
        let score = |text: &str| ranked.iter().find(|(id, _)| *id == find(&doc, text)).map_or(0.0, |(_, s)| *s);
        assert!(score("Bo: Did you stay") > score("Bo: How was"), "{ranked:?}");
        let back = Layout::decode(&layout.encode()).expect("decodes");
        assert_eq!(back.encode(), layout.encode());
        let key = |text: &str| session_key(doc.get(find(&doc, text)).unwrap());
        let sessions: Vec<u64> = back.sections.iter().map(|s| s.session).collect();
        assert_eq!(sessions, [key("Ana: We"), key("Bo: Did"), key("Cy:")]);
    }

    #[test]
    fn a_memory_kept_on_its_own_is_a_section_and_leaves_its_sitting_whole() {
        let mut doc = Document::new("memory");
        let memories = [
            (Some("May"), None, "Ana: We hiked the ridge."),
            (None, Some("finding"), "The deploy script reads the staging token."),
            (Some("May"), None, "Bo: How was the view?"),
            (None, Some("note"), "Lunch is at noon on Fridays."),
            (None, Some("note"), "Ed: A note someone said, so part of a talk."),
            (None, Some(outline::TURN_KIND), "Cy: A turn of a chat without sessions."),
            (None, Some(outline::TURN_KIND), "Di: Another turn of it."),
        ];
        for (n, (session, kind, text)) in memories.into_iter().enumerate() {
            let content = Content::plain(text);
            let id = Block::derive_id(&content, Some(&Role::Note), "", n as u32);
            let mut metadata = ucpkit_core::Metadata::with_role(Role::Note);
            if let Some((speaker, _)) = text.split_once(": ").filter(|_| kind == Some("note")) {
                metadata.custom.insert("speaker".into(), speaker.into());
            }
            if let Some(session) = session {
                metadata.custom.insert("session".into(), session.into());
            }
            if let Some(kind) = kind {
                metadata.custom.insert("kind".into(), kind.into());
            }
            doc.append_child(BlockId::ROOT, Block::new(id, content, metadata)).unwrap();
        }
        let layout = Layout::build(&doc, None);
        let section = |text: &str| layout.section[layout.slot_of(&find(&doc, text)).unwrap() as usize].0;
        assert_eq!(section("Ana: We hiked"), section("Bo: How was"), "a note stored mid-sitting does not cut it");
        assert_eq!(layout.sections.len(), 4, "the sitting, two notes, the chat without sessions");
        assert_ne!(section("The deploy script"), section("Lunch is"));
        assert_eq!(section("Cy: A turn"), section("Di: Another"), "turns without a session share their parent");
        assert_eq!(section("Ed: A note"), section("Cy: A turn"), "a memory with a speaker was said, not kept alone");
        let neighbours: Vec<BlockId> = layout.neighbours(find(&doc, "The deploy script")).collect();
        assert!(neighbours.is_empty(), "{neighbours:?}");
        // Only the note that holds the words is a candidate.
        let ranked = layout.rank(&postings(&doc, "staging token"), &[], usize::MAX);
        assert_eq!(ranked.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [find(&doc, "The deploy script")]);
        let back = Layout::decode(&layout.encode()).expect("decodes");
        assert_eq!(back.encode(), layout.encode());
    }

    #[test]
    fn hits_of_another_ranking_are_fused_in() {
        let doc = guide();
        let layout = Layout::build(&doc, None);
        let retries = find(&doc, "A threshold of retries");
        let past = find(&doc, "Past the threshold");
        let plain = layout.rank(&postings(&doc, "threshold"), &[(past, 1.0)], 10);
        let fused = layout.rank(&postings(&doc, "threshold"), &[(retries, 1.0)], 10);
        assert_eq!(plain[0].0, past, "{plain:?}");
        assert_eq!(fused[0].0, retries, "{fused:?}");
    }

    #[test]
    fn question_words_do_not_rank_blocks_unless_nothing_else_is_asked() {
        let doc = ucpkit_ingest::markdown_document(
            "chat",
            "# Chat\n\nWhere did you find it? Where was it?\n\nWe went camping by the lake.\n\nHow nice.\n",
            &ucpkit_ingest::IngestOptions::default(),
        );
        let layout = Layout::build(&doc, None);
        let camping = find(&doc, "We went camping");
        let ranking =
            QuestionRanking::new(&layout, "Where have we camped?", postings(&doc, "Where have we camped?"), None);
        assert_eq!(ranking.ranked[0].0, camping, "{:?}", ranking.ranked);
        assert!(ranking.postings.iter().all(|p| p.term != "where"), "{:?}", ranking.postings);
        // The line holding "where" twice ranks as the one holding no word
        // of the question, by its neighbours alone; kept, "where" lifts it.
        let score = |list: &[(BlockId, f64)], text: &str| {
            list.iter().find(|(id, _)| *id == find(&doc, text)).map_or(0.0, |(_, s)| *s)
        };
        let (asking, plain) = (score(&ranking.ranked, "Where did you"), score(&ranking.ranked, "How nice"));
        assert_eq!(asking, plain, "{:?}", ranking.ranked);
        let kept = layout.rank(&postings(&doc, "Where have we camped?"), &[], usize::MAX);
        assert!(score(&kept, "Where did you") > asking + 0.2, "{kept:?}");
        let only = QuestionRanking::new(&layout, "where how?", postings(&doc, "where how?"), None);
        assert_eq!(only.postings.len(), 2, "{:?}", only.postings);
        assert_ne!(only.ranked[0].0, camping, "{:?}", only.ranked);
    }

    #[test]
    fn nothing_to_match_ranks_nothing() {
        let doc = guide();
        let layout = Layout::build(&doc, None);
        assert!(layout.rank(&[], &[], 10).is_empty());
        assert!(layout.rank(&postings(&doc, "zebra"), &[], 10).is_empty());
        assert_eq!(layout.rank(&postings(&doc, "stream threshold"), &[], 2).len(), 2);
        assert!(Layout::build(&Document::new("empty"), None).blocks.is_empty());
    }
}
