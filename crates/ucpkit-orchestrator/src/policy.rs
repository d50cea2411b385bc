//! Traversal policies: what a sub-agent does with an exploration task. A
//! [`Policy`] sees the task and the replies to the commands it issued so
//! far, and decides the next UCL commands, what to share with the other
//! agents and which further tasks to queue. The orchestrator runs whichever
//! policy it is given: the built-in [`HeuristicPolicy`] needs no model; an
//! LLM-driven one plugs in through the same trait.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use ucpkit_core::{BlockId, IdMap};
use ucpkit_search::TermPostings;
use ucpkit_ucl::Command;

use crate::coordination::NewDiscovery;
use ucpkit_sessions::AgentError;
use ucpkit_sessions::Step;

pub use crate::heuristic::HeuristicPolicy;

/// A part of the document for one sub-agent to explore: a section (a
/// heading or file block and what it holds), with the search hits that led
/// there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExplorationTask {
    /// The section's block.
    pub root: BlockId,
    /// Titles of the section and the headings above it, outermost first.
    pub heading_path: Vec<String>,
    /// The best ranked blocks (or search hits) inside the section, with
    /// their scores relative to the best (0..1): where a policy may start.
    pub hits: Vec<(BlockId, f64)>,
    /// How promising the section is (0..1); the queue serves the most
    /// promising first.
    pub priority: f64,
    /// How the task came about.
    pub origin: TaskOrigin,
}

/// Why a section is explored.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaskOrigin {
    /// Search hits fell in it.
    Search,
    /// A block of an explored section links to it.
    Link {
        /// The linking block.
        from: BlockId,
    },
    /// It lies inside an explored section and matches the question.
    Subsection {
        /// The section it lies in.
        of: BlockId,
    },
}

/// A question's terms with weights: how an agent judges text without a
/// model. Which terms a text holds is a bit set over the terms (at most
/// [`QueryTerms::MAX_TERMS`], the weightiest).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryTerms {
    terms: Vec<(String, f64)>,
    total: f64,
    /// Per block, the terms its text holds, from the search index's
    /// postings: judging a block is then a lookup, not an analysis of its
    /// text. `None`: blocks are judged by their text.
    blocks: Option<IdMap<u64>>,
    /// The blocks the question's ranking scored (relative to its best, 0..1).
    ranked: IdMap<f64>,
}

impl QueryTerms {
    /// The most terms a question is judged by.
    pub const MAX_TERMS: usize = 64;

    /// The terms of `question` weighted by `weights` (term, idf), as a
    /// search provider reports them; without weights every term of the
    /// search analyzer counts the same.
    pub fn new(question: &str, weights: Vec<(String, f64)>) -> Self {
        let mut terms = if weights.is_empty() {
            ucpkit_analyzer::distinct_terms(question).into_iter().map(|t| (t, 1.0)).collect()
        } else {
            weights
        };
        if terms.len() > Self::MAX_TERMS {
            terms.sort_by(|a, b| b.1.total_cmp(&a.1));
            terms.truncate(Self::MAX_TERMS);
        }
        let total = terms.iter().map(|(_, w)| w).sum();
        QueryTerms { terms, total, blocks: None, ranked: IdMap::default() }
    }

    /// The terms of `question` as the search index's `postings` of them
    /// weigh them (their idf); blocks are judged by the postings (the
    /// blocks whose text holds each term), not by analyzing their text.
    pub fn from_postings(question: &str, postings: &[TermPostings]) -> Self {
        let mut terms = QueryTerms::new(question, postings.iter().map(|t| (t.term.clone(), t.idf)).collect());
        let mut blocks: IdMap<u64> = IdMap::default();
        for term in postings {
            if let Some(bit) = terms.terms.iter().position(|(t, _)| *t == term.term) {
                for (block, _) in &term.text {
                    *blocks.entry(*block).or_default() |= 1 << bit;
                }
            }
        }
        terms.blocks = Some(blocks);
        terms
    }

    /// Remembers the ranking of the document's blocks for the question
    /// (see [`crate::rank`]), each score relative to the best.
    pub fn with_ranking(mut self, ranked: &[(BlockId, f64)]) -> Self {
        self.ranked = ranked.iter().copied().collect();
        self
    }

    /// The ranking's score of block `id` (0..1), if it ranked it.
    pub fn ranked(&self, id: BlockId) -> Option<f64> {
        self.ranked.get(&id).copied()
    }

    /// The weighted share of the question's terms that occur in `text`
    /// (0..1), analyzed the way search analyzes.
    pub fn coverage(&self, text: &str) -> f64 {
        self.coverage_mask(self.mask_of(&Self::analyze(text)))
    }

    /// The terms of `text` as [`QueryTerms::mask_of`] reads them: the
    /// search analyzer's, sorted and deduplicated.
    pub fn analyze(text: &str) -> Vec<String> {
        ucpkit_analyzer::distinct_terms(text)
    }

    /// The question's terms found in an analyzed text (see
    /// [`QueryTerms::analyze`]), as a bit set.
    pub fn mask_of(&self, analyzed: &[String]) -> u64 {
        self.terms
            .iter()
            .enumerate()
            .filter(|(_, (t, _))| analyzed.binary_search(t).is_ok())
            .fold(0, |mask, (bit, _)| mask | 1 << bit)
    }

    /// The question's terms that block `id`'s text (`text`) holds: looked
    /// up when the index's postings were given, else analyzed.
    pub fn block_mask(&self, id: BlockId, text: &str) -> u64 {
        match &self.blocks {
            Some(blocks) => blocks.get(&id).copied().unwrap_or(0),
            None => self.mask_of(&Self::analyze(text)),
        }
    }

    /// The weighted share (0..1) of the question's terms in `mask`.
    pub fn coverage_mask(&self, mask: u64) -> f64 {
        if self.total <= 0.0 {
            return 0.0;
        }
        let matched: f64 =
            self.terms.iter().enumerate().filter(|(bit, _)| mask & 1 << bit != 0).map(|(_, (_, w))| w).sum();
        matched / self.total
    }

    /// Whether the question has any term at all.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

/// One command a sub-agent ran and what came of it.
#[derive(Debug)]
pub struct Observed {
    /// The command.
    pub command: Command,
    /// Its reply or error.
    pub result: Result<Step, AgentError>,
}

/// What a policy sees.
pub struct Exploration<'a> {
    /// The question the context is for.
    pub question: &'a str,
    /// Its weighted terms.
    pub terms: &'a QueryTerms,
    /// The section to explore.
    pub task: &'a ExplorationTask,
    /// Commands run so far for this task, in order, round by round.
    pub rounds: &'a [Vec<Observed>],
    /// The sub-agent's window budget.
    pub budget: usize,
}

/// What a policy decides.
#[derive(Debug, Default)]
pub struct Decision {
    /// Commands to run next, in order.
    pub commands: Vec<Command>,
    /// Findings to share in the discovery pool.
    pub share: Vec<NewDiscovery>,
    /// Further sections to queue for any agent.
    pub spawn: Vec<ExplorationTask>,
    /// Whether the task is finished (after sharing and spawning).
    pub done: bool,
}

/// Decides a sub-agent's commands.
pub trait Policy: Send + Sync {
    /// The policy's name, for reports.
    fn name(&self) -> &str;

    /// The next step of an exploration.
    fn decide(&self, exploration: &Exploration<'_>) -> Decision;
}

/// A discovery about one block with facts the assembler reads back.
pub(crate) fn block_discovery(id: BlockId, score: f64, section: BlockId, reason: &str, ttl: Duration) -> NewDiscovery {
    use crate::coordination::DiscoveryRelevance;
    let relevance = match score {
        s if s >= 0.5 => DiscoveryRelevance::High,
        s if s >= 0.25 => DiscoveryRelevance::Medium,
        _ => DiscoveryRelevance::Low,
    };
    NewDiscovery {
        block_ids: vec![id],
        relevance,
        score,
        reason: reason.to_owned(),
        metadata: BTreeMap::from([("section".to_owned(), section.to_string())]),
        ttl,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_weighs_rare_terms_and_reads_identifiers() {
        let terms = QueryTerms::new("", vec![("highwatermark".into(), 4.0), ("stream".into(), 1.0)]);
        assert!((terms.coverage("Set `highWaterMark` here") - 0.8).abs() < 1e-9);
        assert!((terms.coverage("Readable streams") - 0.2).abs() < 1e-9);
        assert_eq!(terms.coverage("nothing related"), 0.0);
        let plain = QueryTerms::new("Streams buffer?", Vec::new());
        assert!((plain.coverage("a buffer") - 0.5).abs() < 1e-9);
        assert_eq!(QueryTerms::new("the of", Vec::new()).coverage("the of"), 0.0);
    }

    #[test]
    fn postings_judge_blocks_like_their_text() {
        let (a, b) = (BlockId::from_bytes([1; 12]), BlockId::from_bytes([2; 12]));
        let weights = vec![("highwatermark".into(), 4.0), ("stream".into(), 1.0)];
        let by_text = QueryTerms::new("", weights.clone());
        let posting = |term: &str, blocks: &[BlockId]| TermPostings {
            term: term.into(),
            idf: weights.iter().find(|(t, _)| t == term).unwrap().1,
            text: blocks.iter().map(|b| (*b, 1)).collect(),
            headings: Vec::new(),
            repeats: 1,
        };
        let by_postings = QueryTerms::from_postings("", &[posting("stream", &[a, b]), posting("highwatermark", &[a])]);
        let text_a = "Set `highWaterMark` on a stream";
        assert_eq!(by_postings.block_mask(a, ""), by_text.block_mask(a, text_a));
        assert!((by_postings.coverage_mask(by_postings.block_mask(a, "")) - 1.0).abs() < 1e-9);
        assert!((by_postings.coverage_mask(by_postings.block_mask(b, "")) - 0.2).abs() < 1e-9);
        assert_eq!(by_postings.block_mask(BlockId::from_bytes([3; 12]), "stream"), 0, "not in the postings");
    }

    #[test]
    fn long_questions_keep_their_weightiest_terms() {
        let weights: Vec<(String, f64)> = (0..100).map(|n| (format!("t{n:03}"), f64::from(n))).collect();
        let terms = QueryTerms::new("", weights);
        assert_eq!(terms.terms.len(), QueryTerms::MAX_TERMS);
        assert!(terms.terms.iter().all(|(_, w)| *w >= 36.0));
    }
}
