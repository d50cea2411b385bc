//! BM25 full-text search over blocks with tantivy: one index document per
//! block, with its text, heading path and label as searched fields, its
//! role and tags as filters, and its rank prior (test code counts half) as
//! a factor of its score.

use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::postings::Postings;
use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STRING};
use tantivy::{DocSet, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term, TERMINATED};
use ucpkit_core::{BlockId, IdSet};

use crate::analyzer::{self, ANALYZER};
use crate::headline;
use crate::indexable::Indexable;
use crate::scoring::{idf, idf_f32, repeats, FIELD_BOOSTS, K1};
use crate::{BlockLengths, SearchError, SearchHit, SearchOptions, TermPostings};
use ucpkit_analyzer::distinct_terms;

/// Memory the writer may use before it flushes a segment.
const WRITER_MEMORY: usize = 512 << 20;
/// How long a sync waits for another process's writer to let go.
const WRITER_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

struct Fields {
    /// The id's first 8 bytes and last 4, as fast fields for reading hits;
    /// the first 8 are also indexed, for deletes (96-bit ids are random, so
    /// two blocks sharing their first 64 bits is a 1-in-10^7 event even at
    /// a million blocks).
    id_hi: Field,
    id_lo: Field,
    searched: [Field; 3],
    prior: Field,
    role: Field,
    tags: Field,
}

/// A tantivy index of a document's blocks.
pub(crate) struct Bm25 {
    index: Index,
    reader: IndexReader,
    fields: Fields,
}

fn schema() -> Schema {
    let mut builder = Schema::builder();
    builder.add_u64_field("id_hi", FAST | INDEXED);
    builder.add_u64_field("id_lo", FAST);
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default().set_tokenizer(ANALYZER).set_index_option(IndexRecordOption::WithFreqs),
    );
    for (name, _) in FIELD_BOOSTS {
        builder.add_text_field(name, text.clone());
    }
    builder.add_f64_field("prior", FAST);
    builder.add_text_field("role", STRING);
    builder.add_text_field("tags", STRING);
    builder.build()
}

fn split_id(id: BlockId) -> (u64, u64) {
    let b = id.as_bytes();
    let hi = u64::from_be_bytes(b[..8].try_into().expect("8 bytes"));
    let lo = u64::from(u32::from_be_bytes(b[8..].try_into().expect("4 bytes")));
    (hi, lo)
}

fn join_id(hi: u64, lo: u64) -> BlockId {
    let mut bytes = [0u8; 12];
    bytes[..8].copy_from_slice(&hi.to_be_bytes());
    bytes[8..].copy_from_slice(&(lo as u32).to_be_bytes());
    BlockId::from_bytes(bytes)
}

impl Bm25 {
    /// A new, empty index in `dir` (which must exist and be empty).
    pub fn create(dir: &Path) -> Result<Bm25, SearchError> {
        Bm25::with_index(Index::create_in_dir(dir, schema())?)
    }

    /// The index stored in `dir`.
    pub fn open(dir: &Path) -> Result<Bm25, SearchError> {
        let index = Index::open_in_dir(dir)?;
        if index.schema() != schema() {
            return Err(SearchError::Damaged { path: dir.to_owned(), reason: "written with another schema".into() });
        }
        Bm25::with_index(index)
    }

    fn with_index(index: Index) -> Result<Bm25, SearchError> {
        index.tokenizers().register(ANALYZER, analyzer::analyzer());
        let schema = index.schema();
        let field = |name: &str| schema.get_field(name).expect("field of our schema");
        let fields = Fields {
            id_hi: field("id_hi"),
            id_lo: field("id_lo"),
            searched: FIELD_BOOSTS.map(|(name, _)| field(name)),
            prior: field("prior"),
            role: field("role"),
            tags: field("tags"),
        };
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        Ok(Bm25 { index, reader, fields })
    }

    /// The index's writer. Another process syncing the same index holds its
    /// lock for a moment: wait for it (up to [`WRITER_WAIT`]) rather than
    /// fail.
    fn writer(&self) -> Result<IndexWriter, SearchError> {
        let started = std::time::Instant::now();
        loop {
            match self.index.writer(WRITER_MEMORY) {
                Err(tantivy::TantivyError::LockFailure(..)) if started.elapsed() < WRITER_WAIT => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => return Ok(other?),
            }
        }
    }

    /// Removes `removed` and (re)indexes `items`, then commits and makes the
    /// change visible to searches.
    pub fn apply(&self, items: &[&Indexable], removed: &[BlockId]) -> Result<(), SearchError> {
        if items.is_empty() && removed.is_empty() {
            return Ok(());
        }
        let mut writer = self.writer()?;
        for id in removed.iter().copied().chain(items.iter().map(|i| i.id)) {
            writer.delete_term(Term::from_field_u64(self.fields.id_hi, split_id(id).0));
        }
        for item in items {
            let f = &self.fields;
            let (hi, lo) = split_id(item.id);
            let mut doc = TantivyDocument::default();
            doc.add_u64(f.id_hi, hi);
            doc.add_u64(f.id_lo, lo);
            doc.add_text(f.searched[0], &item.text);
            doc.add_text(f.searched[1], &item.headings);
            doc.add_text(f.searched[2], item.label);
            doc.add_f64(f.prior, f64::from(item.prior));
            doc.add_text(f.role, item.role);
            for tag in item.tags {
                doc.add_text(f.tags, tag);
            }
            writer.add_document(doc)?;
        }
        writer.commit()?;
        writer.wait_merging_threads()?;
        self.reader.reload()?;
        Ok(())
    }

    /// How many blocks are indexed.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// The distinct analyzed terms of `text` with their idf in the text
    /// field (terms no block holds are left out).
    pub fn term_weights(&self, text: &str) -> Result<Vec<(String, f64)>, SearchError> {
        let terms = distinct_terms(text);
        let searcher = self.reader.searcher();
        let docs = searcher.num_docs() as f64;
        let mut weights = Vec::with_capacity(terms.len());
        for term in terms {
            let df = searcher.doc_freq(&Term::from_field_text(self.fields.searched[0], &term))? as f64;
            if df > 0.0 {
                weights.push((term, idf(docs, df)));
            }
        }
        Ok(weights)
    }

    /// For each distinct term of `text` (as the analyzer makes them), its
    /// idf and the blocks whose text and whose heading path hold it, with
    /// how often, read from the postings: the cost grows with how many
    /// blocks the terms occur in, not with the document.
    pub fn term_postings(&self, text: &str) -> Result<Vec<TermPostings>, SearchError> {
        let searcher = self.reader.searcher();
        let docs = searcher.num_docs() as f64;
        let [text_field, headings_field, _] = self.fields.searched;
        let mut out = Vec::new();
        let repeats = repeats(text);
        for term in distinct_terms(text) {
            let text_postings = self.postings(&searcher, text_field, &term)?;
            let headings_postings = self.postings(&searcher, headings_field, &term)?;
            if text_postings.is_empty() && headings_postings.is_empty() {
                continue;
            }
            // A term only heading paths hold (a file's name) is weighed by
            // how many blocks they are the path of.
            let df = if text_postings.is_empty() { headings_postings.len() } else { text_postings.len() } as f64;
            let idf = idf(docs, df).max(0.0);
            let repeats = repeats.get(term.as_str()).copied().unwrap_or(1);
            out.push(TermPostings { term, idf, text: text_postings, headings: headings_postings, repeats });
        }
        Ok(out)
    }

    /// Every live block's text and heading path length in analyzed terms
    /// (as BM25 reads them: tantivy's field norms, exact up to 40 terms and
    /// within a few percent above).
    pub fn block_lengths(&self) -> Result<Vec<BlockLengths>, SearchError> {
        let searcher = self.reader.searcher();
        let [text, headings, _] = self.fields.searched;
        let mut out = Vec::with_capacity(searcher.num_docs() as usize);
        for segment in searcher.segment_readers() {
            let fast = segment.fast_fields();
            let (hi, lo) = (fast.u64("id_hi")?, fast.u64("id_lo")?);
            let (text_norms, heading_norms) =
                (segment.get_fieldnorms_reader(text)?, segment.get_fieldnorms_reader(headings)?);
            for doc in segment.doc_ids_alive() {
                if let (Some(hi), Some(lo)) = (hi.first(doc), lo.first(doc)) {
                    out.push(BlockLengths {
                        id: join_id(hi, lo),
                        text: text_norms.fieldnorm(doc),
                        headings: heading_norms.fieldnorm(doc),
                    });
                }
            }
        }
        Ok(out)
    }

    /// The live blocks that pass the role and tag filters of `options`
    /// (one of the roles, one of the tags): how a vector search filters
    /// where the catalog was not read. Empty when `options` has no
    /// filter: the caller asks only when it has one.
    pub fn filtered(&self, options: &SearchOptions) -> Result<IdSet, SearchError> {
        let searcher = self.reader.searcher();
        let mut passed: Option<IdSet> = None;
        let filters = [(self.fields.role, &options.roles), (self.fields.tags, &options.tags)];
        for (field, values) in filters.into_iter().filter(|(_, values)| !values.is_empty()) {
            let mut any = IdSet::default();
            for value in values {
                any.extend(self.postings(&searcher, field, value)?.into_iter().map(|(id, _)| id));
            }
            passed = Some(match passed {
                Some(before) => before.intersection(&any).copied().collect(),
                None => any,
            });
        }
        Ok(passed.unwrap_or_default())
    }

    /// The live blocks holding `term` in `field`, with its frequency.
    fn postings(
        &self,
        searcher: &tantivy::Searcher,
        field: Field,
        term: &str,
    ) -> Result<Vec<(BlockId, u32)>, SearchError> {
        let term = &Term::from_field_text(field, term);
        let mut blocks = Vec::new();
        for segment in searcher.segment_readers() {
            let index = segment.inverted_index(field)?;
            let postings =
                index.read_postings(term, IndexRecordOption::WithFreqs).map_err(tantivy::TantivyError::from)?;
            let Some(mut postings) = postings else { continue };
            let fast = segment.fast_fields();
            let (hi, lo) = (fast.u64("id_hi")?, fast.u64("id_lo")?);
            let alive = segment.alive_bitset();
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    if let (Some(hi), Some(lo)) = (hi.first(doc), lo.first(doc)) {
                        blocks.push((join_id(hi, lo), postings.term_freq()));
                    }
                }
                doc = postings.advance();
            }
        }
        Ok(blocks)
    }

    /// The best `options.limit` blocks for `query`, scores normalized to
    /// 0..1 by the most the query's terms could score; a long report of
    /// several lines is searched with its headline too (see
    /// [`crate::headline`]).
    pub fn search(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>, SearchError> {
        headline::search_with(query, options, |query, options| self.search_query(query, options))
    }

    /// [`Self::search`] for `query` as one query.
    fn search_query(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>, SearchError> {
        let terms = distinct_terms(query);
        if terms.is_empty() || options.limit == 0 {
            return Ok(Vec::new());
        }
        let repeats = repeats(query);
        // A term the query repeats weighs the square root of its count
        // more (as [`TermPostings::weight`]).
        let weight = |term: &str| (repeats.get(term).copied().unwrap_or(1) as f32).sqrt();
        let searcher = self.reader.searcher();
        let docs = searcher.num_docs() as f32;
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let mut bound = 0f32;
        for term in &terms {
            let mut best = 0f32;
            let w = weight(term);
            for (&field, (_, boost)) in self.fields.searched.iter().zip(FIELD_BOOSTS) {
                let boost = boost * w;
                let term = Term::from_field_text(field, term);
                let df = searcher.doc_freq(&term)? as f32;
                if df == 0.0 {
                    continue;
                }
                best = best.max(boost * idf_f32(docs, df) * (1.0 + K1));
                let query = TermQuery::new(term, IndexRecordOption::WithFreqs);
                clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(query), boost))));
            }
            bound += best;
        }
        if clauses.is_empty() {
            return Ok(Vec::new());
        }
        let mut query: Box<dyn Query> = Box::new(BooleanQuery::new(clauses));
        let filters = [(self.fields.role, &options.roles), (self.fields.tags, &options.tags)];
        if filters.iter().any(|(_, values)| !values.is_empty()) {
            let mut all = vec![(Occur::Must, query)];
            for (field, values) in filters.into_iter().filter(|(_, v)| !v.is_empty()) {
                let any: Vec<(Occur, Box<dyn Query>)> = values
                    .iter()
                    .map(|v| {
                        let q = TermQuery::new(Term::from_field_text(field, v), IndexRecordOption::Basic);
                        (Occur::Should, Box::new(q) as Box<dyn Query>)
                    })
                    .collect();
                all.push((Occur::Must, Box::new(ConstScoreQuery::new(Box::new(BooleanQuery::new(any)), 0.0))));
            }
            query = Box::new(BooleanQuery::new(all));
        }
        // Each block's BM25 score times its prior (test code counts less).
        let weighed = TopDocs::with_limit(options.limit).tweak_score(|segment: &tantivy::SegmentReader| {
            let prior = segment.fast_fields().f64("prior").ok().map(|column| column.first_or_default_col(1.0));
            move |doc: tantivy::DocId, score: tantivy::Score| match &prior {
                Some(prior) => score * prior.get_val(doc) as f32,
                None => score,
            }
        });
        let top = searcher.search(&query, &weighed)?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let fast = searcher.segment_reader(address.segment_ord).fast_fields();
            let hi = fast.u64("id_hi")?.first(address.doc_id);
            let lo = fast.u64("id_lo")?.first(address.doc_id);
            let (Some(hi), Some(lo)) = (hi, lo) else { continue };
            let score = f64::from((score / bound.max(f32::MIN_POSITIVE)).clamp(0.0, 1.0));
            if score >= options.min_similarity {
                hits.push(SearchHit { id: join_id(hi, lo), score });
            }
        }
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_survive_the_split_into_fast_fields() {
        let id = BlockId::from_bytes([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 255]);
        let (hi, lo) = split_id(id);
        assert_eq!(join_id(hi, lo), id);
    }
}
