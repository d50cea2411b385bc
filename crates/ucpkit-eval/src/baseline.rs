//! The baselines: flat chunks of about 300 tokens cut from every file,
//! ranked and taken in rank order while they fit, skipping any that would
//! overflow. Three rankings:
//!
//! - [`Ranking::Reference`]: Okapi BM25 exactly as the reference script of
//!   the evaluation set (`k1 = 0.9`, `b = 0.4`, lowercase `[A-Za-z0-9_]+`
//!   terms, no stemming), so the harness lands on its published figures
//!   (up to the tokenizer);
//! - [`Ranking::Engine`] with BM25: the engine's own index and analyzer
//!   over the same chunks, a stronger flat baseline;
//! - [`Ranking::Engine`] with vectors, when a model is configured.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use ucpkit_core::{Block, BlockId, Content, Document, IdMap, Metadata, Role, SourceLocation, Tokenizer};
use ucpkit_search::{Embedder, Mode, SearchConfig, SearchIndex, SearchOptions, SyncProgress};

use crate::harness::{ContextSystem, Retrieved};
use crate::EvalError;

/// Tokens a baseline chunk holds at most.
pub const CHUNK_TOKENS: usize = 300;

/// Separator between chunks in a baseline context.
const SEPARATOR: &str = "\n\n";

/// A fixed-size piece of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The file it was cut from (relative to the corpus).
    pub file: String,
    /// Its words, joined by single spaces.
    pub text: String,
    /// Its tokens.
    pub tokens: usize,
}

/// The files of a document: `(path, markdown of every block in it)`. A
/// document without file blocks is one file named after the document.
fn files(doc: &Document) -> Vec<(String, String)> {
    let text_below = |root: BlockId| -> String {
        doc.descendants(root)
            .filter_map(|id| doc.get(id))
            .filter(|b| !matches!(b.content, Content::Composite) && b.role() != Some(&Role::File))
            .map(Block::to_markdown)
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    let file_blocks: Vec<&Block> =
        doc.document_order().filter_map(|id| doc.get(id)).filter(|b| b.role() == Some(&Role::File)).collect();
    if file_blocks.is_empty() {
        return vec![(doc.name().to_owned(), text_below(BlockId::ROOT))];
    }
    file_blocks
        .into_iter()
        .map(|b| {
            let path = b.metadata.source.as_ref().map(|s| s.file.to_string());
            let path = path.or_else(|| b.metadata.label.clone()).unwrap_or_else(|| b.id.to_string());
            (path, text_below(b.id))
        })
        .collect()
}

/// Cuts every file of `doc` into chunks of at most about `chunk_tokens`
/// tokens on word boundaries, ignoring headings, without overlap.
pub fn chunk_document(doc: &Document, tokenizer: &dyn Tokenizer, chunk_tokens: usize) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    for (file, text) in files(doc) {
        let words: Vec<&str> = text.split_whitespace().collect();
        let mut start = 0;
        let mut used = 0;
        let mut spaced = String::new();
        for (at, word) in words.iter().enumerate() {
            spaced.clear();
            spaced.push(' ');
            spaced.push_str(word);
            let tokens = tokenizer.count(&spaced);
            if used + tokens > chunk_tokens && at > start {
                chunks.push(chunk(&file, &words[start..at], tokenizer));
                start = at;
                used = 0;
            }
            used += tokens;
        }
        if start < words.len() {
            chunks.push(chunk(&file, &words[start..], tokenizer));
        }
    }
    chunks
}

fn chunk(file: &str, words: &[&str], tokenizer: &dyn Tokenizer) -> Chunk {
    let text = words.join(" ");
    Chunk { file: file.to_owned(), tokens: tokenizer.count(&text), text }
}

/// How a baseline ranks the chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranking {
    /// The reference script's Okapi BM25.
    Reference,
    /// The engine's search index in this mode.
    Engine(Mode),
}

/// The reference script's terms: lowercase runs of `[A-Za-z0-9_]`.
fn reference_terms(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Okapi BM25 over the chunks, as the reference script computes it.
struct Okapi {
    postings: HashMap<String, Vec<(usize, u32)>>,
    lengths: Vec<usize>,
    average: f64,
}

impl Okapi {
    const K1: f64 = 0.9;
    const B: f64 = 0.4;

    fn new(chunks: &[Chunk]) -> Self {
        let mut postings: HashMap<String, Vec<(usize, u32)>> = HashMap::new();
        let mut lengths = Vec::with_capacity(chunks.len());
        for (n, chunk) in chunks.iter().enumerate() {
            let terms = reference_terms(&chunk.text);
            lengths.push(terms.len());
            let mut counts: HashMap<String, u32> = HashMap::new();
            for term in terms {
                *counts.entry(term).or_default() += 1;
            }
            for (term, tf) in counts {
                postings.entry(term).or_default().push((n, tf));
            }
        }
        let average = lengths.iter().sum::<usize>() as f64 / lengths.len().max(1) as f64;
        Okapi { postings, lengths, average }
    }

    /// Chunk numbers, best first (ties: earlier chunk first).
    fn rank(&self, query: &str, top: usize) -> Vec<usize> {
        let n = self.lengths.len() as f64;
        let mut scores: HashMap<usize, f64> = HashMap::new();
        for term in reference_terms(query) {
            let Some(postings) = self.postings.get(&term) else { continue };
            let df = postings.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(chunk, tf) in postings {
                let tf = f64::from(tf);
                let norm = Self::K1 * (1.0 - Self::B + Self::B * self.lengths[chunk] as f64 / self.average);
                *scores.entry(chunk).or_default() += idf * tf * (Self::K1 + 1.0) / (tf + norm);
            }
        }
        let mut ranked: Vec<(usize, f64)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.into_iter().take(top).map(|(chunk, _)| chunk).collect()
    }
}

/// Flat chunks of a document, ranked by the reference BM25 and by a search
/// index of their own.
pub struct FlatChunks {
    chunks: Vec<Chunk>,
    by_id: IdMap<usize>,
    okapi: Okapi,
    index: SearchIndex,
    tokenizer: Box<dyn Tokenizer>,
}

impl FlatChunks {
    /// Chunks `doc` and indexes the chunks in `dir` (kept there: a later run
    /// on the same document only checks it), with vectors when `embedder`
    /// is given.
    pub fn open(
        doc: &Document,
        dir: &Path,
        embedder: Option<Box<dyn Embedder>>,
        tokenizer: Box<dyn Tokenizer>,
        progress: &dyn SyncProgress,
    ) -> Result<Self, EvalError> {
        let chunks = chunk_document(doc, tokenizer.as_ref(), CHUNK_TOKENS);
        let mut chunk_doc = Document::new(format!("{}#chunks", doc.name()));
        let mut by_id = IdMap::default();
        for (n, piece) in chunks.iter().enumerate() {
            let content = Content::plain(piece.text.clone());
            let occurrence = u32::try_from(n).unwrap_or(u32::MAX);
            let id = Block::derive_id(&content, Some(&Role::Paragraph), &piece.file, occurrence);
            let mut metadata = Metadata::with_role(Role::Paragraph);
            metadata.source = Some(SourceLocation { file: piece.file.as_str().into(), start_line: 0, end_line: 0 });
            chunk_doc
                .append_child(BlockId::ROOT, Block::new(id, content, metadata))
                .map_err(|e| EvalError::Chunking(e.to_string()))?;
            by_id.insert(id, n);
        }
        let (index, _) = SearchIndex::open(dir, &chunk_doc, embedder, SearchConfig::default(), progress)?;
        let okapi = Okapi::new(&chunks);
        Ok(FlatChunks { chunks, by_id, okapi, index, tokenizer })
    }

    /// The chunks, in file order.
    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// Whether vectors were indexed (the vector baseline can run).
    pub fn has_vectors(&self) -> bool {
        self.index.embedder().is_some()
    }

    /// The baseline ranking chunks by `ranking`.
    pub fn system(&self, ranking: Ranking) -> ChunkBaseline<'_> {
        ChunkBaseline { chunks: self, ranking }
    }

    fn build(&self, question: &str, budget: usize, ranking: Ranking) -> Result<Retrieved, EvalError> {
        let started = Instant::now();
        // Enough candidates to fill the budget even when many are skipped.
        let limit = (budget / CHUNK_TOKENS.max(1)).max(1) * 4 + 16;
        let ranked: Vec<usize> = match ranking {
            Ranking::Reference => self.okapi.rank(question, limit),
            Ranking::Engine(mode) => {
                let options = SearchOptions { limit, ..SearchOptions::default() };
                let hits = self.index.search_mode(question, &options, mode)?;
                hits.iter().filter_map(|hit| self.by_id.get(&hit.id).copied()).collect()
            }
        };
        let separator = self.tokenizer.count(SEPARATOR);
        let mut taken: Vec<usize> = Vec::new();
        let mut used = 0;
        for n in ranked {
            let cost = self.chunks[n].tokens + if taken.is_empty() { 0 } else { separator };
            if used + cost <= budget {
                taken.push(n);
                used += cost;
            }
        }
        // The pieces were counted apart; the promise is on the whole text.
        let (text, tokens) = loop {
            let text = taken.iter().map(|&n| self.chunks[n].text.as_str()).collect::<Vec<_>>().join(SEPARATOR);
            let tokens = self.tokenizer.count(&text);
            if tokens <= budget || taken.pop().is_none() {
                break (text, tokens);
            }
        };
        let mut files: Vec<String> = taken.iter().map(|&n| self.chunks[n].file.clone()).collect();
        files.sort_unstable();
        files.dedup();
        Ok(Retrieved { text, tokens, files, ms: started.elapsed().as_secs_f64() * 1000.0 })
    }
}

/// One ranking of the flat chunks, as a system the harness runs.
pub struct ChunkBaseline<'a> {
    chunks: &'a FlatChunks,
    ranking: Ranking,
}

impl ContextSystem for ChunkBaseline<'_> {
    fn name(&self) -> String {
        match self.ranking {
            Ranking::Reference => "flat bm25 chunks".to_owned(),
            Ranking::Engine(Mode::Bm25) => "flat chunks, engine bm25".to_owned(),
            Ranking::Engine(mode) => format!("flat chunks, engine {}", mode.as_str()),
        }
    }

    fn build(&self, question: &str, budget: usize) -> Result<Retrieved, EvalError> {
        self.chunks.build(question, budget, self.ranking)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Document {
        let text = "# Guide\n\nalpha beta gamma delta\n\n## Part\n\nepsilon zeta eta theta iota kappa";
        let mut doc = ucpkit_core::Document::new("guide");
        let content = Content::markdown(text);
        let id = Block::derive_id(&content, Some(&Role::Paragraph), "guide", 0);
        doc.append_child(BlockId::ROOT, Block::new(id, content, Metadata::with_role(Role::Paragraph))).unwrap();
        doc
    }

    #[test]
    fn reference_bm25_prefers_rare_terms_and_short_chunks() {
        let chunk = |text: &str| Chunk { file: "f".into(), text: text.into(), tokens: 1 };
        let chunks = [
            chunk("the stream the stream the"),
            chunk("the highWaterMark of a stream"),
            chunk("the the the the the the the the highWaterMark stream"),
            chunk("nothing here"),
        ];
        let okapi = Okapi::new(&chunks);
        assert_eq!(reference_terms("Set highWaterMark_2, a.b"), ["set", "highwatermark_2", "a", "b"]);
        assert_eq!(okapi.rank("highwatermark stream", 10), [1, 2, 0]);
        assert_eq!(okapi.rank("highwatermark stream", 1), [1]);
        assert!(okapi.rank("absent", 10).is_empty());
    }

    #[test]
    fn chunks_cover_every_word_once_within_the_size() {
        let tokenizer = ucpkit_core::BpeTokenizer::default();
        let chunks = chunk_document(&doc(), &tokenizer, 4);
        assert!(chunks.len() >= 3);
        assert!(chunks.iter().all(|c| c.tokens <= 5 && c.file == "guide"), "{chunks:?}");
        let joined = chunks.iter().map(|c| c.text.as_str()).collect::<Vec<_>>().join(" ");
        assert_eq!(joined, "# Guide alpha beta gamma delta ## Part epsilon zeta eta theta iota kappa");
    }
}
