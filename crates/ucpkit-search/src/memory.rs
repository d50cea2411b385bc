//! A BM25 index of one document held in memory: the same analysis,
//! postings, stored lengths and scoring as the tantivy index, for hosts
//! with no file system or threads (the WebAssembly build). It is built
//! whole from the document and built again when the document changes
//! (a few milliseconds for a thousand blocks).

use std::collections::HashMap;
use std::sync::RwLock;

use ucpkit_analyzer::distinct_terms;
use ucpkit_core::{BlockId, Document};

use crate::indexable::indexables;
use crate::scoring::{idf, idf_f32, repeats, stored_length, B, FIELD_BOOSTS, K1};
use crate::{
    headline, BlockLengths, RagCapabilities, RagProvider, SearchError, SearchHit, SearchOptions, TermPostings,
};

/// Fields in the order of [`FIELD_BOOSTS`].
const TEXT: usize = 0;
const HEADINGS: usize = 1;
const FIELDS: usize = FIELD_BOOSTS.len();

/// One indexed block.
#[derive(Debug)]
struct Entry {
    id: BlockId,
    /// Analyzed terms per field, as the one-byte code tantivy stores keeps
    /// them ([`stored_length`]).
    lengths: [u32; FIELDS],
    prior: f32,
    role: String,
    tags: Vec<String>,
}

/// The index of one version of a document.
#[derive(Debug, Default)]
struct Built {
    /// The document version it reads.
    version: Option<u64>,
    blocks: Vec<Entry>,
    /// Per field: each term's blocks (indexes into `blocks`, in document
    /// order) with how often the term occurs there.
    postings: [HashMap<String, Vec<(u32, u32)>>; FIELDS],
    /// Per field: terms of every block together.
    total_terms: [u64; FIELDS],
}

impl Built {
    fn of(document: &Document) -> Built {
        let mut built = Built { version: Some(document.version()), ..Built::default() };
        for item in indexables(document) {
            let slot = built.blocks.len() as u32;
            let mut lengths = [0u32; FIELDS];
            for (field, text) in [item.text.as_ref(), item.headings.as_str(), item.label].into_iter().enumerate() {
                let mut terms = ucpkit_analyzer::terms(text);
                lengths[field] = stored_length(u32::try_from(terms.len()).unwrap_or(u32::MAX));
                built.total_terms[field] += terms.len() as u64;
                terms.sort_unstable();
                for run in terms.chunk_by(|a, b| a == b) {
                    let tf = u32::try_from(run.len()).unwrap_or(u32::MAX);
                    built.postings[field].entry(run[0].clone()).or_default().push((slot, tf));
                }
            }
            built.blocks.push(Entry {
                id: item.id,
                lengths,
                prior: item.prior,
                role: item.role.to_owned(),
                tags: item.tags.to_vec(),
            });
        }
        built
    }

    fn postings(&self, field: usize, term: &str) -> &[(u32, u32)] {
        self.postings[field].get(term).map_or(&[], Vec::as_slice)
    }

    /// `postings` as block ids.
    fn blocks_of(&self, field: usize, term: &str) -> Vec<(BlockId, u32)> {
        self.postings(field, term).iter().map(|&(slot, tf)| (self.blocks[slot as usize].id, tf)).collect()
    }

    fn accepts(&self, entry: &Entry, options: &SearchOptions) -> bool {
        (options.roles.is_empty() || options.roles.contains(&entry.role))
            && (options.tags.is_empty() || entry.tags.iter().any(|tag| options.tags.contains(tag)))
    }

    /// BM25 of `query` as one query, as the tantivy index scores it: per
    /// term and field `boost × idf × (1 + k1) × tf / (tf + k1 × (1 − b + b ×
    /// length / mean length))` with stored lengths, summed, times the
    /// block's prior, normalized by the most the query could score.
    fn search_query(&self, query: &str, options: &SearchOptions) -> Vec<SearchHit> {
        let terms = distinct_terms(query);
        if terms.is_empty() || options.limit == 0 || self.blocks.is_empty() {
            return Vec::new();
        }
        let repeats = repeats(query);
        let docs = self.blocks.len() as f32;
        let mut scores: HashMap<u32, f32> = HashMap::new();
        let mut bound = 0f32;
        for term in &terms {
            let weight = (repeats.get(term).copied().unwrap_or(1) as f32).sqrt();
            let mut best = 0f32;
            for (field, (_, boost)) in FIELD_BOOSTS.iter().enumerate() {
                let postings = self.postings(field, term);
                if postings.is_empty() {
                    continue;
                }
                let df = postings.len() as f32;
                let term_weight = boost * weight * idf_f32(docs, df) * (1.0 + K1);
                best = best.max(term_weight);
                let mean = self.total_terms[field] as f32 / docs;
                for &(slot, tf) in postings {
                    let length = self.blocks[slot as usize].lengths[field] as f32;
                    let tf = tf as f32;
                    let norm = K1 * (1.0 - B + B * length / mean);
                    *scores.entry(slot).or_default() += term_weight * (tf / (tf + norm));
                }
            }
            bound += best;
        }
        let mut hits: Vec<(u32, f32)> = scores
            .into_iter()
            .filter(|(slot, _)| self.accepts(&self.blocks[*slot as usize], options))
            .map(|(slot, score)| (slot, score * self.blocks[slot as usize].prior))
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.into_iter()
            .take(options.limit)
            .map(|(slot, score)| SearchHit {
                id: self.blocks[slot as usize].id,
                score: f64::from((score / bound.max(f32::MIN_POSITIVE)).clamp(0.0, 1.0)),
            })
            .filter(|hit| hit.score >= options.min_similarity)
            .collect()
    }
}

/// A BM25 index of a document in memory (see the module documentation).
#[derive(Debug, Default)]
pub struct MemoryIndex {
    built: RwLock<Built>,
}

impl MemoryIndex {
    /// The index of `document` as it is now.
    pub fn new(document: &Document) -> MemoryIndex {
        MemoryIndex { built: RwLock::new(Built::of(document)) }
    }

    /// How many blocks it holds.
    pub fn len(&self) -> usize {
        self.read().blocks.len()
    }

    /// Whether it holds no block.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Built> {
        self.built.read().unwrap_or_else(|e| e.into_inner())
    }
}

impl RagProvider for MemoryIndex {
    fn name(&self) -> &str {
        "bm25"
    }

    fn capabilities(&self) -> RagCapabilities {
        RagCapabilities { lexical: true, semantic: false }
    }

    fn search(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>, SearchError> {
        let built = self.read();
        headline::search_with(query, options, |query, options| Ok(built.search_query(query, options)))
    }

    fn term_weights(&self, text: &str) -> Vec<(String, f64)> {
        let built = self.read();
        let docs = built.blocks.len() as f64;
        distinct_terms(text)
            .into_iter()
            .filter_map(|term| {
                let df = built.postings(TEXT, &term).len() as f64;
                (df > 0.0).then(|| (term, idf(docs, df)))
            })
            .collect()
    }

    fn term_postings(&self, text: &str) -> Option<Vec<TermPostings>> {
        let built = self.read();
        let docs = built.blocks.len() as f64;
        let repeats = repeats(text);
        let mut out = Vec::new();
        for term in distinct_terms(text) {
            let (text, headings) = (built.blocks_of(TEXT, &term), built.blocks_of(HEADINGS, &term));
            if text.is_empty() && headings.is_empty() {
                continue;
            }
            // As the tantivy index: a term only heading paths hold is
            // weighed by how many blocks they are the path of.
            let df = if text.is_empty() { headings.len() } else { text.len() } as f64;
            let repeats = repeats.get(term.as_str()).copied().unwrap_or(1);
            out.push(TermPostings { term, idf: idf(docs, df).max(0.0), text, headings, repeats });
        }
        Some(out)
    }

    fn block_lengths(&self) -> Option<Vec<BlockLengths>> {
        let built = self.read();
        Some(
            built
                .blocks
                .iter()
                .map(|entry| BlockLengths {
                    id: entry.id,
                    text: entry.lengths[TEXT],
                    headings: entry.lengths[HEADINGS],
                })
                .collect(),
        )
    }

    fn sync(&self, document: &Document) -> Result<(), SearchError> {
        if self.read().version != Some(document.version()) {
            *self.built.write().unwrap_or_else(|e| e.into_inner()) = Built::of(document);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_core::{Block, Content, Metadata, Role};

    fn doc() -> Document {
        let mut doc = Document::new("d");
        let mut add = |parent: BlockId, role: Role, text: &str, n: u32| {
            let content = Content::markdown(text);
            let id = Block::derive_id(&content, Some(&role), "d", n);
            doc.append_child(parent, Block::new(id, content, Metadata::with_role(role))).unwrap()
        };
        let streams = add(BlockId::ROOT, Role::heading(1), "Streams", 0);
        add(streams, Role::Paragraph, "Readable streams emit data events.", 1);
        let writable = add(streams, Role::heading(2), "Writable streams", 2);
        add(writable, Role::Paragraph, "A writable stream takes data; a full stream returns false from write().", 3);
        add(writable, Role::Paragraph, "Buffers hold bytes.", 4);
        doc
    }

    #[test]
    fn postings_hold_text_and_heading_paths_with_counts() {
        let doc = doc();
        let index = MemoryIndex::new(&doc);
        assert_eq!(index.len(), 5);
        let postings = index.term_postings("writable stream data").unwrap();
        let writable = postings.iter().find(|p| p.term == ucpkit_analyzer::terms("writable")[0]).unwrap();
        assert_eq!(writable.text.len(), 2, "the heading and the paragraph say it");
        assert_eq!(writable.headings.len(), 2, "two blocks sit under the 'Writable streams' heading");
        let stream = postings.iter().find(|p| p.term == ucpkit_analyzer::terms("stream")[0]).unwrap();
        assert!(stream.text.iter().any(|&(_, tf)| tf == 2), "'a writable stream ... a full stream' counts twice");
        assert!(postings.iter().all(|p| p.idf >= 0.0));
        assert!(index.term_postings("nothing-here-zz").unwrap().is_empty());
    }

    #[test]
    fn search_ranks_matches_and_filters_by_role() {
        let doc = doc();
        let index = MemoryIndex::new(&doc);
        let hits = index.search("writable stream", &SearchOptions::default()).unwrap();
        assert!(!hits.is_empty() && hits.windows(2).all(|w| w[0].score >= w[1].score));
        assert!(hits.iter().all(|h| (0.0..=1.0).contains(&h.score)));
        let headings = SearchOptions { roles: vec!["heading2".into()], ..SearchOptions::default() };
        let only = index.search("writable", &headings).unwrap();
        assert_eq!(only.len(), 1);
        assert_eq!(doc.get(only[0].id).unwrap().plain_text(), "Writable streams");
        assert!(index.search("", &SearchOptions::default()).unwrap().is_empty());
    }

    #[test]
    fn an_edit_is_seen_after_a_sync() {
        let mut doc = doc();
        let index = MemoryIndex::new(&doc);
        assert!(index.term_postings("zebra").unwrap().is_empty());
        let content = Content::markdown("A zebra crossing.");
        let id = Block::derive_id(&content, Some(&Role::Paragraph), "d", 9);
        doc.append_child(BlockId::ROOT, Block::new(id, content, Metadata::with_role(Role::Paragraph))).unwrap();
        index.sync(&doc).unwrap();
        assert_eq!(index.term_postings("zebra").unwrap()[0].text, vec![(id, 1)]);
    }

    /// The Node.js excerpt, and the questions asked of it.
    #[cfg(feature = "index")]
    fn excerpt() -> Document {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/node-excerpt");
        let options = ucpkit_ingest::IngestOptions::default();
        ucpkit_ingest::ingest(&[path], "node", &options, &()).unwrap().document
    }

    #[cfg(feature = "index")]
    #[test]
    fn postings_lengths_and_hits_are_the_tantivy_indexs() {
        let doc = excerpt();
        let dir = tempfile::tempdir().unwrap();
        let tantivy = crate::bm25::Bm25::create(dir.path()).unwrap();
        let items = indexables(&doc);
        tantivy.apply(&items.iter().collect::<Vec<_>>(), &[]).unwrap();
        let memory = MemoryIndex::new(&doc);

        let sorted = |mut lengths: Vec<BlockLengths>| {
            lengths.sort_by_key(|l| l.id);
            lengths
        };
        assert_eq!(sorted(memory.block_lengths().unwrap()), sorted(tantivy.block_lengths().unwrap()));
        let questions = [
            "How does punycode encode an internationalized domain name?",
            "How do I parse a query string into an object, and escape it back?",
            "debugger breakpoint inspect --inspect-brk",
            "corepack enable pnpm yarn",
            "the the of",
        ];
        for question in questions {
            let mut ours = memory.term_postings(question).unwrap();
            let mut theirs = tantivy.term_postings(question).unwrap();
            for postings in ours.iter_mut().chain(theirs.iter_mut()) {
                postings.text.sort();
                postings.headings.sort();
            }
            assert_eq!(ours, theirs, "{question}");
            assert_eq!(memory.term_weights(question), tantivy.term_weights(question).unwrap(), "{question}");
            let options = SearchOptions { limit: 20, ..SearchOptions::default() };
            let (ours, theirs) =
                (memory.search(question, &options).unwrap(), tantivy.search(question, &options).unwrap());
            assert_eq!(ours.len(), theirs.len(), "{question}");
            for (a, b) in ours.iter().zip(&theirs) {
                assert!((a.score - b.score).abs() < 1e-5, "{question}: {a:?} vs {b:?}");
            }
            let ids = |hits: &[SearchHit]| hits.iter().map(|h| h.id).collect::<std::collections::BTreeSet<_>>();
            let distinct = |hits: &[SearchHit]| hits.windows(2).all(|w| (w[0].score - w[1].score).abs() > 1e-5);
            if distinct(&theirs) {
                assert_eq!(ids(&ours), ids(&theirs), "{question}");
            }
        }
    }
}
