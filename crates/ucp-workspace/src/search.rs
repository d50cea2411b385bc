//! Search hits as every front end answers them: each with its source file
//! and lines, heading path, preview and token count.

use std::fmt::Write as _;

use serde::Serialize;
use ucm_core::{outline, printable};
use ucp_search::{Mode, SearchOptions};

use crate::library::Workspace;
use crate::WorkspaceError;

/// Characters of a hit's preview.
pub const HIT_PREVIEW_CHARS: usize = 160;
/// Characters of a file name or heading path shown on one line.
const SHOWN_CHARS: usize = 200;

/// A search query and its filters.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// What to look for.
    pub query: String,
    /// Most hits.
    pub limit: usize,
    /// Lowest normalized score (0..1) kept.
    pub min_similarity: f64,
    /// Only blocks with one of these roles (all when empty).
    pub roles: Vec<String>,
    /// Only blocks with one of these tags (all when empty).
    pub tags: Vec<String>,
    /// How to rank (hybrid when a model is configured, BM25 otherwise).
    pub mode: Option<Mode>,
}

impl SearchRequest {
    /// `query`, the 10 best, no filter, the index's default ranking.
    pub fn new(query: impl Into<String>) -> Self {
        SearchRequest {
            query: query.into(),
            limit: 10,
            min_similarity: 0.0,
            roles: Vec::new(),
            tags: Vec::new(),
            mode: None,
        }
    }
}

/// One hit.
#[derive(Debug, Clone, Serialize)]
pub struct SearchHit {
    /// The block.
    pub id: String,
    /// Its normalized score.
    pub score: f64,
    /// Its role.
    pub role: Option<String>,
    /// The file it came from.
    pub file: Option<String>,
    /// Its first and last line in that file.
    pub lines: Option<[u32; 2]>,
    /// The titles of the sections above it.
    pub heading_path: Vec<String>,
    /// Its first characters on one line.
    pub preview: String,
    /// Its tokens (o200k).
    pub tokens: usize,
}

/// The hits of one query.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResults {
    /// The document searched.
    pub document: String,
    /// The query.
    pub query: String,
    /// How they were ranked (`bm25`, `vector`, `hybrid`).
    pub mode: &'static str,
    /// Best first.
    pub results: Vec<SearchHit>,
}

impl Workspace {
    /// Searches the document.
    pub fn search(&self, request: &SearchRequest) -> Result<SearchResults, WorkspaceError> {
        if request.query.trim().is_empty() {
            return Err(WorkspaceError::Invalid("the query is empty".into()));
        }
        let mode = request.mode.unwrap_or(self.index.default_mode());
        let options = SearchOptions {
            limit: request.limit,
            min_similarity: request.min_similarity,
            roles: request.roles.clone(),
            tags: request.tags.clone(),
        };
        let hits = self.index.search_mode(&request.query, &options, mode)?;
        let engine = self.traversal().engine();
        let document = engine.document();
        let tokenizer = ucm_core::BpeTokenizer::default();
        let results = hits
            .iter()
            .filter_map(|hit| {
                let block = document.get(hit.id)?;
                let source = block.metadata.source.as_ref();
                Some(SearchHit {
                    id: hit.id.to_string(),
                    score: hit.score,
                    role: block.role().map(|r| r.as_str().to_owned()),
                    file: source.map(|s| s.file.to_string()),
                    lines: source.map(|s| [s.start_line, s.end_line]),
                    heading_path: outline::path_titles(document, hit.id),
                    preview: block.preview(HIT_PREVIEW_CHARS),
                    tokens: outline::block_tokens(block, &tokenizer),
                })
            })
            .collect();
        Ok(SearchResults {
            document: self.name().to_owned(),
            query: request.query.clone(),
            mode: mode.as_str(),
            results,
        })
    }
}

impl SearchResults {
    /// The hits as text: rank, id, score and place; the heading path; the
    /// preview (file names and paths escaped for a terminal).
    pub fn text(&self) -> String {
        if self.results.is_empty() {
            return format!("no results for {:?} ({} search of {})\n", self.query, self.mode, self.document);
        }
        let mut out = String::new();
        for (rank, hit) in self.results.iter().enumerate() {
            let place = match (&hit.file, hit.lines) {
                (Some(file), Some([a, b])) => format!("{file}:{a}-{b}"),
                (Some(file), None) => file.clone(),
                _ => String::new(),
            };
            let _ = writeln!(out, "{:>2}. {} {:.3} {}", rank + 1, hit.id, hit.score, printable(&place, SHOWN_CHARS));
            if !hit.heading_path.is_empty() {
                let _ = writeln!(out, "    § {}", printable(&hit.heading_path.join(" > "), SHOWN_CHARS));
            }
            let _ = writeln!(out, "    {}", printable(&hit.preview, SHOWN_CHARS));
        }
        out
    }
}
