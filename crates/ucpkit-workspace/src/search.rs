//! Search hits as every front end answers them: each with its source file
//! and lines, heading path, preview and token count.

use std::fmt::Write as _;

use serde::Serialize;
use ucpkit_core::{outline, printable, BlockId, Document, Tokenizer};
use ucpkit_search::structure::{file_evidence, rank_hits, search_ranked, wants_pool, RankedHit, EVIDENCE_POOL};
use ucpkit_search::{Mode, SearchConfig, SearchIndex, SearchOptions};

use crate::library::{Library, Workspace};
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
    /// Its score in the ranking (0..1): its own match for a block of
    /// prose; for a block of a source file, its own with a share of the
    /// other matches in its file and its class (a lone match keeps its
    /// own).
    pub score: f64,
    /// Its own match (text, heading path and label), as the index scored
    /// it (0..1; for a long report, its whole and headline matches fused):
    /// what the request's lowest score is compared with.
    pub match_score: f64,
    /// Its role.
    pub role: Option<String>,
    /// The file it came from.
    pub file: Option<String>,
    /// Its first and last line in that file.
    pub lines: Option<[u32; 2]>,
    /// The titles of the sections above it.
    pub heading_path: Vec<String>,
    /// When and where it happened, for a block that records it (a
    /// memory's session and time, [`outline::occasion`]): what a search
    /// by a date matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occasion: Option<String>,
    /// The code symbol it defines (`Class.method`), for code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
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
        let mode = check(request, self.index.default_mode())?;
        let engine = self.traversal().engine();
        let document = engine.document();
        let ranked = search_ranked(document, request.limit, |limit| {
            let hits = self.index.search_mode(&request.query, &options(request, limit), mode)?;
            Ok::<_, WorkspaceError>(hits.into_iter().filter(|hit| document.contains(hit.id)).collect())
        })?;
        let tokenizer = ucpkit_core::BpeTokenizer::default();
        Ok(results(self.name(), request, mode, ranked, document, &|| &tokenizer))
    }

    /// Every block that may answer `question`, best first with scores
    /// relative to the best, ranked as a context is ([`ucpkit_orchestrator::question_ranking`]:
    /// block, window, section and term coverage, the model's nearest blocks
    /// with one); `None` when the index gives no term postings.
    pub fn rank(&self, question: &str) -> Result<Option<Vec<(BlockId, f64)>>, WorkspaceError> {
        Ok(ucpkit_orchestrator::question_ranking(self.traversal(), question)?.map(|ranking| ranking.ranked))
    }
}

impl Library {
    /// Searches stored document `name` (the default one when `None`) from
    /// the store alone, without loading it: only the hits and their
    /// ancestors are read, so a one-shot search costs little whatever the
    /// document's size. `None` when that cannot be done — the document's
    /// search index is not at the store's revision, needs a model, or a
    /// writer came in between —: search its [`Workspace`] instead (which
    /// brings the index up to date).
    pub fn search_stored(
        &self,
        name: Option<&str>,
        request: &SearchRequest,
    ) -> Result<Option<SearchResults>, WorkspaceError> {
        let name = &self.store()?.resolve_name(name.or(self.config.document.as_deref()))?;
        if self.config.model.is_some() {
            return Ok(None);
        }
        let revision = self.store()?.revision(name)?;
        let dir = ucpkit_search::index_dir(&self.config.store_dir, name);
        let Some(index) = SearchIndex::open_current(&dir, name, revision, SearchConfig::default())? else {
            return Ok(None);
        };
        let mode = check(request, index.default_mode())?;
        let read = |limit: usize| -> Result<_, WorkspaceError> {
            let hits = index.search_mode(&request.query, &options(request, limit), mode)?;
            let ids: Vec<BlockId> = hits.iter().map(|hit| hit.id).collect();
            let (excerpt, read_at) = self.store()?.read_excerpt(name, &ids)?;
            Ok((hits, excerpt, read_at))
        };
        let (mut hits, mut excerpt, mut read_at) = read(request.limit)?;
        if wants_pool(&excerpt, hits.iter().map(|hit| hit.id), request.limit) {
            (hits, excerpt, read_at) = read(EVIDENCE_POOL)?;
        }
        if read_at != revision {
            return Ok(None);
        }
        let found: Vec<ucpkit_search::SearchHit> = hits.into_iter().filter(|hit| excerpt.contains(hit.id)).collect();
        let ranked = rank_hits(&excerpt, &found, request.limit);
        Ok(Some(results(name, request, mode, ranked, &excerpt, &|| self.tokenizer())))
    }
}

/// The mode a request asks for (the index's default when it names none),
/// once the request is known to be sound.
fn check(request: &SearchRequest, default: Mode) -> Result<Mode, WorkspaceError> {
    if request.query.trim().is_empty() {
        return Err(WorkspaceError::Invalid("the query is empty".into()));
    }
    Ok(request.mode.unwrap_or(default))
}

/// What to draw from the index: `limit` hits passing the request's
/// filters and lowest score (of their own match).
fn options(request: &SearchRequest, limit: usize) -> SearchOptions {
    SearchOptions {
        limit,
        min_similarity: request.min_similarity,
        roles: request.roles.clone(),
        tags: request.tags.clone(),
    }
}

/// The `ranked` hits with their place, from a document holding each hit
/// and its ancestors (the whole document, or an excerpt of it).
fn results<'t>(
    name: &str,
    request: &SearchRequest,
    mode: Mode,
    ranked: Vec<RankedHit>,
    document: &Document,
    tokenizer: &dyn Fn() -> &'t dyn Tokenizer,
) -> SearchResults {
    let results = ranked
        .into_iter()
        .filter_map(|RankedHit { id, score, match_score }| {
            let block = document.get(id)?;
            let source = block.metadata.source.as_ref();
            let tokens = match block.metadata.tokens {
                Some(tokens) => tokens as usize,
                None => outline::block_tokens(block, tokenizer()),
            };
            Some(SearchHit {
                id: id.to_string(),
                score,
                match_score,
                role: block.role().map(|r| r.as_str().to_owned()),
                file: source.map(|s| s.file.to_string()),
                lines: source.map(|s| [s.start_line, s.end_line]),
                heading_path: outline::path_titles(document, id),
                occasion: outline::occasion(block),
                symbol: outline::symbol(block).map(str::to_owned),
                preview: block.preview(HIT_PREVIEW_CHARS),
                tokens,
            })
        })
        .collect();
    SearchResults { document: name.to_owned(), query: request.query.clone(), mode: mode.as_str(), results }
}

/// One file of a search, ranked by the hits in it.
#[derive(Debug, Clone, Serialize)]
pub struct FileHit {
    /// The file.
    pub file: String,
    /// Its best hit's match score plus a tenth of the next
    /// [`FILE_EVIDENCE`]'s.
    pub score: f64,
    /// Hits in it.
    pub hits: usize,
    /// Its best hit.
    pub best: SearchHit,
}

/// Hits after a file's best that add to its score.
pub use ucpkit_search::structure::FILE_EVIDENCE;

impl SearchResults {
    /// The files the hits fall in, best first: a file ranks by its best
    /// hit, and a little by how many more good hits it holds (a file that
    /// answers in several places beats one that matches once).
    pub fn files(&self) -> Vec<FileHit> {
        let mut files: Vec<(FileHit, Vec<f64>)> = Vec::new();
        let mut slot: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for hit in &self.results {
            let Some(file) = &hit.file else { continue };
            match slot.get(file.as_str()) {
                Some(&at) => {
                    let (f, scores) = &mut files[at];
                    f.hits += 1;
                    if hit.match_score > f.best.match_score {
                        f.best = hit.clone();
                    }
                    scores.push(hit.match_score);
                }
                None => {
                    slot.insert(file, files.len());
                    let best = FileHit { file: file.clone(), score: 0.0, hits: 1, best: hit.clone() };
                    files.push((best, vec![hit.match_score]));
                }
            }
        }
        let mut out: Vec<FileHit> = files
            .into_iter()
            .map(|(mut file, scores)| {
                file.score = file_evidence(scores);
                file
            })
            .collect();
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.file.cmp(&b.file)));
        out
    }

    /// The files as text: rank, score, file, hits, the best hit's place.
    pub fn files_text(&self, limit: usize) -> String {
        let files = self.files();
        if files.is_empty() {
            return format!("no results for {:?} ({} search of {})\n", self.query, self.mode, self.document);
        }
        let mut out = String::new();
        for (rank, file) in files.iter().take(limit).enumerate() {
            let best = &file.best;
            let place = match (&best.symbol, best.lines) {
                (Some(symbol), Some([a, b])) => format!("{symbol} {a}-{b}"),
                (None, Some([a, b])) => format!("{a}-{b}"),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "{:>2}. {:.3} {} ({} hits; best {})",
                rank + 1,
                file.score,
                printable(&file.file, SHOWN_CHARS),
                file.hits,
                printable(&place, SHOWN_CHARS)
            );
        }
        out
    }

    /// The hits as text: rank, id, score and place (file and lines, or a
    /// memory's occasion); the heading path; the preview (file names and
    /// paths escaped for a terminal).
    pub fn text(&self) -> String {
        if self.results.is_empty() {
            return format!("no results for {:?} ({} search of {})\n", self.query, self.mode, self.document);
        }
        let mut out = String::new();
        for (rank, hit) in self.results.iter().enumerate() {
            let place = match (&hit.file, hit.lines) {
                (Some(file), Some([a, b])) => format!("{file}:{a}-{b}"),
                (Some(file), None) => file.clone(),
                _ => hit.occasion.clone().unwrap_or_default(),
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
