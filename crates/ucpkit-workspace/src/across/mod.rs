//! One context over several sources: documents, code and memories, under
//! one budget and one ranking.
//!
//! Each source's context is built as for one document (the one-shot path
//! reads only what the question reaches), at the whole budget. Scores
//! inside a source are relative to its best block, so they are calibrated
//! before they meet: a source's scale is how much of the question its best
//! block holds, the question's terms weighed by their idf over *all* the
//! sources together (as if they were one index). A source of a few hundred
//! blocks is then judged by the same weights as one of 500,000: a term
//! that is rare in the small one but common overall weighs what it weighs
//! overall. That scale is weighed by how likely the source is to hold
//! what the question asks, next to the likeliest ([`beliefs`]): a name
//! only one source holds points the question there. A block of code
//! counts half, unless the question quotes code and the block is a
//! document's sample ([`prior::prior`]). Blocks then go in best first
//! while they fit, each under its group's `§` line named by its document,
//! and the exact count is checked as for one document.

mod prior;

use std::collections::{BTreeMap, HashMap, HashSet};

use ucpkit_core::BlockId;
use ucpkit_orchestrator::rank::{bm25, HEADING_WEIGHT};
use ucpkit_orchestrator::{BuiltContext, ContextBlock, Timings};
use ucpkit_search::{RagProvider as _, SearchConfig, SearchIndex, TermPostings};
use ucpkit_ucl::RenderFormat;

use crate::library::{lock, Library};
use crate::{ContextOptions, WorkspaceError};

/// Where a context's blocks may come from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources {
    /// Documents by name, in the order given.
    pub documents: Vec<String>,
    /// Every document of the store, agent-state documents (memories,
    /// plans) excepted.
    pub all: bool,
    /// Memories too: `Some(None)` the project's, `Some(Some(ns))` those of
    /// namespace `ns`.
    pub memory: Option<Option<String>>,
}

impl Sources {
    /// Only document `name`.
    pub fn document(name: impl Into<String>) -> Self {
        Sources { documents: vec![name.into()], ..Sources::default() }
    }

    /// Whether nothing was named (the default document is meant).
    pub fn is_empty(&self) -> bool {
        self.documents.is_empty() && !self.all && self.memory.is_none()
    }
}

/// What one source's index says about a question: its size, the postings
/// of the question's terms, and the lengths (text, heading path) of the
/// blocks in them with the source's mean lengths.
#[derive(Debug, Default)]
struct Evidence {
    blocks: usize,
    postings: Vec<TermPostings>,
    /// Per term of `postings`: how many blocks hold it ([`holding`]).
    held: Vec<f64>,
    lengths: HashMap<BlockId, (u32, u32)>,
    mean: (f64, f64),
    /// Terms of all its blocks' text together (`None` where the index
    /// could not tell).
    words: Option<f64>,
}

impl Evidence {
    fn of(index: &SearchIndex, question: &str) -> Evidence {
        let mut postings = index.term_postings(question).unwrap_or_default();
        ucpkit_orchestrator::rank::drop_question_words(&mut postings);
        let wanted: HashSet<BlockId> =
            postings.iter().flat_map(|t| t.text.iter().chain(&t.headings)).map(|(id, _)| *id).collect();
        let all = index.block_lengths().unwrap_or_default();
        let mean = |f: fn(&ucpkit_search::BlockLengths) -> u32| {
            (all.iter().map(|l| f64::from(f(l))).sum::<f64>() / all.len().max(1) as f64).max(1.0)
        };
        let lengths = all.iter().filter(|l| wanted.contains(&l.id)).map(|l| (l.id, (l.text, l.headings))).collect();
        let words = (!all.is_empty()).then(|| all.iter().map(|l| f64::from(l.text)).sum());
        let held = postings.iter().map(holding).collect();
        let mean = (mean(|l| l.text), mean(|l| l.headings));
        Evidence { blocks: index.len(), postings, held, mean, lengths, words }
    }
}

/// How well each source's best block matches the question, on one scale
/// for all: BM25 with every term weighed by its idf over all the sources
/// together, over the sum of those weights (about 1 where one block of
/// mean length holds every term once), times the source's [`beliefs`]
/// over the likeliest one's; 0 where no term occurs.
fn calibrate(sources: &[Evidence]) -> Vec<f64> {
    let blocks: f64 = sources.iter().map(|s| s.blocks as f64).sum();
    let mut df: BTreeMap<&str, (f64, u32)> = BTreeMap::new();
    for source in sources {
        for (term, held) in source.postings.iter().zip(&source.held) {
            let slot = df.entry(term.term.as_str()).or_insert((0.0, term.repeats));
            slot.0 += held;
        }
    }
    let weight: BTreeMap<&str, f64> = df
        .iter()
        .map(|(term, (df, repeats))| {
            let idf = (1.0 + (blocks - df + 0.5) / (df + 0.5)).ln();
            (*term, idf * f64::from((*repeats).max(1)).sqrt())
        })
        .collect();
    let total: f64 = weight.values().sum();
    let belief = beliefs(sources);
    let most = belief.iter().copied().fold(0.0, f64::max);
    sources
        .iter()
        .zip(belief)
        .map(|(source, belief)| {
            let mut score: HashMap<BlockId, f64> = HashMap::new();
            for term in &source.postings {
                let w = weight.get(term.term.as_str()).copied().unwrap_or(0.0);
                for &(id, tf) in &term.text {
                    let length = source.lengths.get(&id).map_or(1, |l| l.0);
                    *score.entry(id).or_default() += w * bm25(tf, f64::from(length.max(1)), source.mean.0);
                }
                for &(id, tf) in &term.headings {
                    let length = source.lengths.get(&id).map_or(1, |l| l.1);
                    *score.entry(id).or_default() +=
                        HEADING_WEIGHT * w * bm25(tf, f64::from(length.max(1)), source.mean.1);
                }
            }
            let best = score.values().copied().fold(0.0, f64::max);
            if total > 0.0 && most > 0.0 {
                best / total * belief / most
            } else {
                0.0
            }
        })
        .collect()
}

/// How likely each source is to hold what the question asks, by CORI's
/// resource selection (Callan, Lu and Croft 1995, with its published
/// constants): a term counts for a source by how many of its blocks hold
/// it (for its size), and by how few of the sources hold it at all; the
/// mean over the question's terms that some source holds (1 for each
/// source where none does). A block holds a term in its text or its
/// heading path, as the ranking reads it; a source's size is its text's
/// terms (a source whose size is unknown is taken to be of the mean).
fn beliefs(sources: &[Evidence]) -> Vec<f64> {
    const DEFAULT_BELIEF: f64 = 0.4;
    const DF_BASE: f64 = 50.0;
    const DF_SIZE: f64 = 150.0;
    let count = sources.len() as f64;
    let known: Vec<f64> = sources.iter().filter_map(|s| s.words).collect();
    let mean_words = (known.iter().sum::<f64>() / known.len().max(1) as f64).max(1.0);
    let held: Vec<BTreeMap<&str, f64>> = sources
        .iter()
        .map(|source| source.postings.iter().map(|term| term.term.as_str()).zip(source.held.iter().copied()).collect())
        .collect();
    let mut holders: BTreeMap<&str, f64> = BTreeMap::new();
    for (term, n) in held.iter().flatten() {
        if *n > 0.0 {
            *holders.entry(term).or_default() += 1.0;
        }
    }
    sources
        .iter()
        .zip(&held)
        .map(|(source, held)| {
            if holders.is_empty() {
                return 1.0;
            }
            let sum: f64 = holders
                .iter()
                .map(|(term, holders)| {
                    let n = held.get(term).copied().unwrap_or(0.0);
                    let size = source.words.unwrap_or(mean_words) / mean_words;
                    let t = n / (n + DF_BASE + DF_SIZE * size);
                    let i = ((count + 0.5) / holders).ln() / (count + 1.0).ln();
                    DEFAULT_BELIEF + (1.0 - DEFAULT_BELIEF) * t * i
                })
                .sum();
            sum / holders.len() as f64
        })
        .collect()
}

/// How many blocks hold `term`, in their text or heading path.
fn holding(term: &TermPostings) -> f64 {
    term.text.iter().chain(&term.headings).map(|(id, _)| *id).collect::<HashSet<BlockId>>().len() as f64
}

/// One source's context and the scale of its scores.
struct Sourced {
    name: String,
    built: BuiltContext,
    scale: f64,
}

/// An entry of a source's context that may go in the merged one.
struct Candidate {
    source: usize,
    /// Its part in the source's context.
    part: usize,
    block: usize,
    score: f64,
    tokens: usize,
}

impl Library {
    /// The documents `sources` names, each once, in order: the named ones,
    /// then (with `all`) every other non-agent-state document, then the
    /// memory document when it exists. Nothing named: the default one.
    pub fn source_names(&self, sources: &Sources) -> Result<Vec<String>, WorkspaceError> {
        if sources.is_empty() {
            return Ok(vec![self.default_document()?]);
        }
        let mut names: Vec<String> = Vec::new();
        for name in &sources.documents {
            let name = self.store()?.resolve_name(Some(name))?;
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let stored = if sources.all || sources.memory.is_some() { self.documents()? } else { Vec::new() };
        if sources.all {
            for summary in &stored {
                if !ucpkit_store::is_agent_state(&summary.name) && !names.contains(&summary.name) {
                    names.push(summary.name.clone());
                }
            }
        }
        if let Some(namespace) = &sources.memory {
            let memory =
                ucpkit_store::namespaced_document(ucpkit_store::AGENT_STATE_DOCUMENTS[0], namespace.as_deref())?;
            if stored.iter().any(|s| s.name == memory) && !names.contains(&memory) {
                names.push(memory);
            }
        }
        if names.is_empty() {
            return Err(WorkspaceError::Invalid(
                "nothing to build the context from: no document named, and no memories there yet".into(),
            ));
        }
        Ok(names)
    }

    /// The context for `options.question` over every source `sources`
    /// names: one ranking, one budget, one window; each block says which
    /// document it came from.
    pub fn context_across(&self, sources: &Sources, options: &ContextOptions) -> Result<BuiltContext, WorkspaceError> {
        options.request()?;
        let names = self.source_names(sources)?;
        if let [name] = names.as_slice() {
            let mut built = self.context_in(Some(name), options)?;
            for block in &mut built.blocks {
                block.document = Some(name.clone());
            }
            return Ok(built);
        }
        if options.format == RenderFormat::ShortIds {
            return Err(WorkspaceError::Invalid(
                "short ids are numbered per document: over several, use the markdown or default format".into(),
            ));
        }
        let started = std::time::Instant::now();
        let evidence: Vec<Evidence> =
            names.iter().map(|name| self.evidence(name, &options.question)).collect::<Result<_, _>>()?;
        let scales = calibrate(&evidence);
        let mut sourced = Vec::new();
        let mut nothing_fits = None;
        for (name, scale) in names.iter().zip(scales) {
            if scale <= 0.0 {
                continue; // not one of the question's terms is there
            }
            match self.context_in(Some(name), options) {
                Ok(built) => sourced.push(Sourced { name: name.clone(), built, scale }),
                Err(e @ WorkspaceError::NothingFits { .. }) => nothing_fits = Some(e),
                Err(e) => return Err(e),
            }
        }
        let quotes_code = prior::quotes_code(&options.question);
        let mut merged = merge(self.tokenizer(), &sourced, options.budget, quotes_code);
        if merged.blocks.is_empty() {
            if let Some(e) = nothing_fits {
                return Err(e);
            }
        }
        merged.timings.total_ms = started.elapsed().as_secs_f64() * 1000.0;
        Ok(merged)
    }

    /// What document `name`'s search index says about `question`.
    fn evidence(&self, name: &str, question: &str) -> Result<Evidence, WorkspaceError> {
        let loaded = lock(&self.loaded).get(name).cloned();
        if let Some(workspace) = loaded {
            return Ok(Evidence::of(workspace.index(), question));
        }
        let dir = ucpkit_search::index_dir(&self.config.store_dir, name);
        let revision = self.store()?.revision(name)?;
        if let Some(index) = SearchIndex::open_current(&dir, name, revision, SearchConfig::default())? {
            return Ok(Evidence::of(&index, question));
        }
        // The index is behind the store: loading the document catches it up.
        let workspace = self.workspace(name)?;
        Ok(Evidence::of(workspace.index(), question))
    }
}

/// The `§` line of `source`'s group whose own line is `header` (`§ /`
/// for blocks under no heading).
fn named_header(source: &str, header: &str) -> String {
    match header.trim_start_matches('§').trim() {
        "/" | "" => format!("§ {source}\n\n"),
        path => format!("§ {source} > {path}\n\n"),
    }
}

/// One window from the sources' contexts: entries best first (by their
/// calibrated score times their [`prior::prior`]) while they fit,
/// then laid out source by source (the one with the best entry first),
/// each entry in its source's order under its group's `§` line.
fn merge(
    tokenizer: &dyn ucpkit_core::Tokenizer,
    sourced: &[Sourced],
    budget: usize,
    quotes_code: bool,
) -> BuiltContext {
    // Per source and part: the group line an entry goes under.
    let headers: Vec<Vec<String>> = sourced
        .iter()
        .map(|source| source.built.parts.iter().map(|part| named_header(&source.name, &part.group)).collect())
        .collect();
    let mut header_tokens: HashMap<&str, usize> = HashMap::new();
    let mut candidates = Vec::new();
    for (at, source) in sourced.iter().enumerate() {
        let block_of: HashMap<BlockId, usize> =
            source.built.blocks.iter().enumerate().map(|(i, block)| (block.id, i)).collect();
        for (part_at, part) in source.built.parts.iter().enumerate() {
            let Some(block) = part.entry.and_then(|id| block_of.get(&id).copied()) else { continue };
            candidates.push(Candidate {
                source: at,
                part: part_at,
                block,
                score: source.built.blocks[block].relevance
                    * source.scale
                    * prior::prior(&source.built.blocks[block], quotes_code),
                tokens: tokenizer.count(&part.text),
            });
        }
    }
    // Relevance as one document reports it: the best block at 1.
    let top = candidates.iter().map(|c| c.score).fold(0.0, f64::max);
    if top > 0.0 {
        candidates.iter_mut().for_each(|c| c.score /= top);
    }
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.source.cmp(&b.source)).then(a.part.cmp(&b.part)));
    let mut chosen: Vec<&Candidate> = Vec::new();
    let mut groups: HashSet<(usize, &str)> = HashSet::new();
    let mut used = 0;
    for candidate in &candidates {
        let header = headers[candidate.source][candidate.part].as_str();
        let header_cost = if groups.contains(&(candidate.source, header)) {
            0
        } else {
            *header_tokens.entry(header).or_insert_with(|| tokenizer.count(header))
        };
        if used + candidate.tokens + header_cost <= budget {
            used += candidate.tokens + header_cost;
            groups.insert((candidate.source, header));
            chosen.push(candidate);
        }
    }
    // Headers shared by entries that are not adjacent cost twice: the exact
    // count decides, the weakest entry leaving until it fits.
    loop {
        let (text, blocks) = lay_out(sourced, &headers, &chosen);
        let tokens = tokenizer.count(&text);
        if tokens <= budget || chosen.is_empty() {
            return BuiltContext {
                text,
                parts: Vec::new(),
                tokens,
                budget,
                blocks,
                hits: sourced.iter().map(|s| s.built.hits).sum(),
                tasks: sourced.iter().map(|s| s.built.tasks).sum(),
                agents: sourced.iter().map(|s| s.built.agents).max().unwrap_or(0),
                discoveries: sourced.iter().map(|s| s.built.discoveries).sum(),
                timings: Timings {
                    search_ms: sourced.iter().map(|s| s.built.timings.search_ms).sum(),
                    explore_ms: sourced.iter().map(|s| s.built.timings.explore_ms).sum(),
                    assemble_ms: sourced.iter().map(|s| s.built.timings.assemble_ms).sum(),
                    total_ms: 0.0,
                },
            };
        }
        chosen.pop();
    }
}

/// The merged text and its blocks: sources in the order of their best
/// chosen entry, entries in their source's order.
fn lay_out(sourced: &[Sourced], headers: &[Vec<String>], chosen: &[&Candidate]) -> (String, Vec<ContextBlock>) {
    let mut order: Vec<usize> = Vec::new();
    for candidate in chosen {
        if !order.contains(&candidate.source) {
            order.push(candidate.source);
        }
    }
    let mut text = String::new();
    let mut blocks = Vec::new();
    for source in order {
        let mut entries: Vec<&&Candidate> = chosen.iter().filter(|c| c.source == source).collect();
        entries.sort_by_key(|c| c.part);
        let mut under: Option<&str> = None;
        for candidate in entries {
            let header = headers[source][candidate.part].as_str();
            if under != Some(header) {
                text.push_str(header);
                under = Some(header);
            }
            text.push_str(&sourced[source].built.parts[candidate.part].text);
            let mut block = sourced[source].built.blocks[candidate.block].clone();
            block.document = Some(sourced[source].name.clone());
            block.relevance = candidate.score;
            blocks.push(block);
        }
    }
    (text, blocks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(term: &str, blocks: &[u8]) -> TermPostings {
        let text = blocks.iter().map(|b| (BlockId::from_bytes([*b; 12]), 1)).collect();
        TermPostings { term: term.into(), idf: 1.0, text, headings: Vec::new(), repeats: 1 }
    }

    fn source(blocks: usize, postings: Vec<TermPostings>) -> Evidence {
        let held = postings.iter().map(holding).collect();
        Evidence {
            blocks,
            postings,
            held,
            lengths: HashMap::new(),
            mean: (1.0, 1.0),
            words: Some(blocks as f64 * 20.0),
        }
    }

    #[test]
    fn a_source_that_alone_holds_a_term_is_believed_more() {
        // Half the chat's turns name "ana", whom the docs never name; both
        // hold "status" in one block.
        let turns: Vec<u8> = (1..=150).collect();
        let chat = || source(300, vec![term("ana", &turns), term("status", &[1])]);
        let docs = || source(30_000, vec![term("ana", &[]), term("status", &[200])]);
        let belief = beliefs(&[chat(), docs()]);
        assert!(belief[1] < belief[0] * 0.8, "{belief:?}");
        // By their best blocks alone the docs would be at 0.64 of the
        // chat's scale ("status" is rarer than "ana"); the belief brings
        // them under half.
        let scales = calibrate(&[chat(), docs()]);
        assert!(scales[1] < scales[0] * 0.5, "{scales:?}");
    }

    #[test]
    fn terms_every_source_holds_say_little_about_which_one() {
        let shared = beliefs(&[
            source(300, vec![term("lease", &[1, 2]), term("renew", &[3])]),
            source(50_000, vec![term("lease", &[4, 5, 6, 7, 8]), term("renew", &[9])]),
        ]);
        let one_holds = beliefs(&[
            source(300, vec![term("lease", &[1, 2]), term("renew", &[3])]),
            source(50_000, vec![term("lease", &[]), term("renew", &[9])]),
        ]);
        let spread = |b: &[f64]| (b[0] - b[1]).abs() / b[0].max(b[1]);
        assert!(spread(&shared) < spread(&one_holds) / 2.0, "{shared:?} {one_holds:?}");
        let nothing = beliefs(&[source(10, vec![term("lease", &[])]), source(10, vec![term("lease", &[])])]);
        assert_eq!(nothing, vec![1.0, 1.0], "no term anywhere: no source is preferred");
    }

    #[test]
    fn a_source_of_unknown_size_is_taken_to_be_of_the_mean() {
        let mut unknown = source(300, vec![term("lease", &[1])]);
        unknown.words = None;
        let belief = beliefs(&[unknown, source(300, vec![term("lease", &[2])])]);
        assert_eq!(belief[0], belief[1]);
    }

    #[test]
    fn a_source_holding_every_term_in_one_block_has_the_full_scale() {
        let scales = calibrate(&[
            source(100, vec![term("fuzz", &[1]), term("parser", &[1, 2])]),
            source(100_000, vec![term("fuzz", &[]), term("parser", &[3, 4, 5])]),
        ]);
        assert!((scales[0] - 1.0).abs() < 1e-9, "{scales:?}");
        assert!(scales[1] > 0.0 && scales[1] < 0.5, "the rare term weighs more than the common one: {scales:?}");
    }

    #[test]
    fn a_source_without_the_terms_has_no_scale_and_size_alone_does_not_matter() {
        let small = source(300, vec![term("lease", &[1]), term("renew", &[1])]);
        let large = source(500_000, vec![term("lease", &[9]), term("renew", &[9])]);
        let none = source(50, vec![term("lease", &[]), term("renew", &[])]);
        let scales = calibrate(&[small, large, none]);
        // One block holding both terms is about as good in either source:
        // the small one is believed a little more, its one block being a
        // larger share of it.
        assert!(scales[0] >= scales[1] && scales[1] > scales[0] * 0.98, "{scales:?}");
        assert_eq!(scales[2], 0.0);
    }

    #[test]
    fn a_long_block_earns_less_for_the_same_terms() {
        let mut long = source(100, vec![term("lease", &[1]), term("renew", &[1])]);
        long.lengths.insert(BlockId::from_bytes([1; 12]), (400, 1));
        long.mean = (40.0, 1.0);
        let short = source(100, vec![term("lease", &[2]), term("renew", &[2])]);
        let scales = calibrate(&[long, short]);
        assert!(scales[0] < scales[1] / 2.0, "{scales:?}");
    }

    #[test]
    fn the_group_line_names_the_document() {
        assert_eq!(named_header("notes", "§ a > b\n\n"), "§ notes > a > b\n\n");
        assert_eq!(named_header("memory", "§ /\n\n"), "§ memory\n\n");
    }
}
