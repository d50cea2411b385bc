//! The search seam: SEARCH asks a [`RagProvider`] (BM25, vectors, hybrid, or
//! a host's own service) for blocks relevant to a query.

use serde::Serialize;
use ucpkit_core::{BlockId, Document};

use crate::SearchError;

/// The most hits one search returns, whatever a caller asks: result
/// buffers are sized by the limit, so an unchecked one is an allocation
/// bomb.
pub const MAX_HITS: usize = 10_000;

/// What a search asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchOptions {
    /// Most hits (capped at [`MAX_HITS`]).
    pub limit: usize,
    /// Lowest normalized score (0..1) kept.
    pub min_similarity: f64,
    /// Only blocks with one of these roles (empty: any).
    pub roles: Vec<String>,
    /// Only blocks with one of these tags (empty: any).
    pub tags: Vec<String>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions { limit: 10, min_similarity: 0.0, roles: Vec::new(), tags: Vec::new() }
    }
}

/// One hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    /// The block.
    pub id: BlockId,
    /// Normalized score (0..1, higher is better).
    pub score: f64,
}

/// Where one query term occurs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TermPostings {
    /// The term, as the analyzer makes it.
    pub term: String,
    /// How informative it is: BM25's idf over the indexed blocks' text.
    pub idf: f64,
    /// Blocks whose text holds it, with the number of occurrences.
    pub text: Vec<(BlockId, u32)>,
    /// Blocks whose heading path holds it, with the number of occurrences.
    pub headings: Vec<(BlockId, u32)>,
    /// How often the query holds it (0 read as 1).
    pub repeats: u32,
}

impl TermPostings {
    /// What the term weighs in a ranking: its idf, times the square root
    /// of how often a long query repeats it (a report's recurring words
    /// are what it is about; a short question's repeats are counted once).
    pub fn weight(&self) -> f64 {
        self.idf * f64::from(self.repeats.max(1)).sqrt()
    }
}

/// How long an indexed block is, in analyzed terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockLengths {
    /// The block.
    pub id: BlockId,
    /// Terms of its text.
    pub text: u32,
    /// Terms of its heading path.
    pub headings: u32,
}

/// What a provider can do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RagCapabilities {
    /// Full-text (lexical) search.
    pub lexical: bool,
    /// Embedding (semantic) search.
    pub semantic: bool,
}

/// A search backend over a document. Calls block: every caller runs on a
/// thread of its own (a session's command, a sub-agent), and a provider
/// that calls a service waits for it there.
pub trait RagProvider: Send + Sync {
    /// The provider's name (`bm25`, `vector`, `hybrid` ...).
    fn name(&self) -> &str;

    /// What it can do.
    fn capabilities(&self) -> RagCapabilities;

    /// Blocks matching `query`, best first.
    fn search(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>, SearchError>;

    /// The distinct terms of `text` as the provider analyzes them, each
    /// with how informative it is (BM25's idf over the indexed blocks), for
    /// scoring text against a query the way search would. Providers that
    /// cannot tell return nothing.
    fn term_weights(&self, _text: &str) -> Vec<(String, f64)> {
        Vec::new()
    }

    /// For each distinct term of `text` as the provider analyzes it, where
    /// it occurs (from an inverted index): the blocks whose text and whose
    /// heading path hold it, with how often. A caller scoring many blocks,
    /// windows or sections against a query then needs no analysis of their
    /// text. `None`: the provider cannot tell.
    fn term_postings(&self, _text: &str) -> Option<Vec<TermPostings>> {
        None
    }

    /// Every indexed block's length in analyzed terms, of its text and of
    /// its heading path (BM25's document lengths), for scoring passages
    /// made of several blocks the way search scores one. `None`: the
    /// provider cannot tell.
    fn block_lengths(&self) -> Option<Vec<BlockLengths>> {
        None
    }

    /// Blocks closest to `query` by meaning alone (its embedding's cosine
    /// similarity, 0..1), best first. `None`: the provider has no model.
    fn semantic_search(&self, _query: &str, _options: &SearchOptions) -> Option<Result<Vec<SearchHit>, SearchError>> {
        None
    }

    /// Brings the provider up to date with `document` before a search, after
    /// edits; cheap when nothing changed. Providers over other data ignore it.
    fn sync(&self, _document: &Document) -> Result<(), SearchError> {
        Ok(())
    }
}
