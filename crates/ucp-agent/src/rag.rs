//! The search seam: SEARCH asks a [`RagProvider`] (BM25, vectors, hybrid, or
//! an external service) for blocks relevant to a query.

use serde::Serialize;
use ucm_core::BlockId;

/// What SEARCH asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchOptions {
    /// Most hits.
    pub limit: usize,
    /// Lowest normalized score (0..1) kept.
    pub min_similarity: f64,
    /// Only blocks with one of these roles (empty: any).
    pub roles: Vec<String>,
    /// Only blocks with one of these tags (empty: any).
    pub tags: Vec<String>,
}

/// One hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    /// The block.
    pub id: BlockId,
    /// Normalized score (0..1, higher is better).
    pub score: f64,
}

/// What a provider can do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RagCapabilities {
    /// Full-text (lexical) search.
    pub lexical: bool,
    /// Embedding (semantic) search.
    pub semantic: bool,
}

/// A search backend over the engine's document.
pub trait RagProvider: Send + Sync {
    /// The provider's name (`bm25`, `hybrid` ...).
    fn name(&self) -> &str;
    /// What it can do.
    fn capabilities(&self) -> RagCapabilities;
    /// Blocks matching `query`, best first. Errors are messages a user can act on.
    fn search(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>, String>;
}
