//! Search benchmarks: `cargo bench -p ucpkit-search --bench search`.
//!
//! - `index_build`: building the BM25 index from scratch (text bytes/s);
//! - `bm25_search`: one query against 100k and 1M blocks;
//! - `vector_search`: one query against 100k and 1M vectors, exact scan and
//!   HNSW, 64 dimensions (potion) and 384 (MiniLM), with stand-in vectors;
//! - `embed_static` / `embed_onnx`: texts/s of the real models, when
//!   `UCP_MODEL` / `UCP_ONNX_MODEL` name their directories.
//!
//! The corpus is synthetic and deterministic (`corpus/mod.rs`). Percentiles
//! (p50/p99) come from `cargo run --release -p ucpkit-search --example latency`.

#[path = "corpus/mod.rs"]
mod corpus;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use divan::counter::{BytesCount, ItemsCount};
use divan::Bencher;
use ucpkit_core::Document;
use ucpkit_search::{load_embedder, Embedder, Mode, SearchConfig, SearchIndex, SearchOptions};

fn main() {
    divan::main();
}

/// `full` under `cargo bench`; `small` under `cargo test`, where divan runs
/// every bench once to prove it works (cargo passes `--bench` only to the
/// former).
fn scaled(full: usize, small: usize) -> usize {
    static BENCH: OnceLock<bool> = OnceLock::new();
    if *BENCH.get_or_init(|| std::env::args().any(|a| a == "--bench")) {
        full
    } else {
        full.min(small)
    }
}

struct Fixture {
    index: SearchIndex,
    _dir: tempfile::TempDir,
}

/// What a fixture is built from: blocks, vector dimension, HNSW or exact.
type FixtureKey = (usize, Option<usize>, bool);

/// A built index per key, kept for the whole run.
fn fixture(blocks: usize, dim: Option<usize>, hnsw: bool) -> &'static Fixture {
    static FIXTURES: OnceLock<Mutex<HashMap<FixtureKey, &'static Fixture>>> = OnceLock::new();
    let mut fixtures = FIXTURES.get_or_init(Default::default).lock().unwrap();
    fixtures.entry((blocks, dim, hnsw)).or_insert_with(|| {
        let doc = corpus::document(scaled(blocks, 3_000));
        let dir = tempfile::tempdir().unwrap();
        let embedder = dim.map(|d| Box::new(corpus::HashEmbedder(d)) as Box<dyn Embedder>);
        let config =
            SearchConfig { hnsw_min_vectors: Some(if hnsw { 1 } else { usize::MAX }), ..SearchConfig::default() };
        let (index, _) = SearchIndex::open(dir.path(), &doc, embedder, config, &()).unwrap();
        Box::leak(Box::new(Fixture { index, _dir: dir }))
    })
}

fn queries() -> &'static [String] {
    static QUERIES: OnceLock<Vec<String>> = OnceLock::new();
    QUERIES.get_or_init(|| corpus::queries(1000, 2, 6))
}

fn text_bytes(doc: &Document) -> usize {
    doc.blocks().map(|b| b.plain_text().len()).sum()
}

#[divan::bench(args = [100_000], sample_count = 3, sample_size = 1)]
fn index_build(bencher: Bencher, blocks: usize) {
    let doc = corpus::document(scaled(blocks, 3_000));
    bencher
        .counter(BytesCount::new(text_bytes(&doc)))
        .with_inputs(|| tempfile::tempdir().unwrap())
        .bench_local_values(|dir| SearchIndex::open(dir.path(), &doc, None, SearchConfig::default(), &()).unwrap());
}

#[divan::bench(args = [100_000, 1_000_000], sample_count = 1000, sample_size = 1)]
fn bm25_search(bencher: Bencher, blocks: usize) {
    let fixture = fixture(blocks, None, false);
    let mut next = 0;
    bencher
        .with_inputs(|| {
            next += 1;
            &queries()[next % queries().len()]
        })
        .bench_local_refs(|query| fixture.index.search_mode(query, &SearchOptions::default(), Mode::Bm25).unwrap());
}

fn vector_search(bencher: Bencher, blocks: usize, dim: usize, hnsw: bool) {
    let fixture = fixture(blocks, Some(dim), hnsw);
    assert_eq!(fixture.index.approximate(), hnsw);
    let mut next = 0;
    bencher
        .with_inputs(|| {
            next += 1;
            &queries()[next % queries().len()]
        })
        .bench_local_refs(|query| fixture.index.search_mode(query, &SearchOptions::default(), Mode::Vector).unwrap());
}

#[divan::bench(args = [10_000, 50_000, 100_000, 1_000_000], sample_count = 200, sample_size = 1)]
fn vector_exact_64(bencher: Bencher, blocks: usize) {
    vector_search(bencher, blocks, 64, false);
}

#[divan::bench(args = [10_000, 50_000, 100_000, 1_000_000], sample_count = 200, sample_size = 1)]
fn vector_hnsw_64(bencher: Bencher, blocks: usize) {
    vector_search(bencher, blocks, 64, true);
}

#[divan::bench(args = [10_000, 50_000, 100_000], sample_count = 200, sample_size = 1)]
fn vector_exact_384(bencher: Bencher, blocks: usize) {
    vector_search(bencher, blocks, 384, false);
}

#[divan::bench(args = [10_000, 50_000, 100_000], sample_count = 200, sample_size = 1)]
fn vector_hnsw_384(bencher: Bencher, blocks: usize) {
    vector_search(bencher, blocks, 384, true);
}

/// Paragraph texts like the blocks a corpus holds.
fn texts(count: usize) -> Vec<String> {
    let doc = corpus::document(scaled(count, 3_000));
    doc.blocks().map(|b| b.plain_text().into_owned()).filter(|t| !t.is_empty()).take(count).collect()
}

fn embed(bencher: Bencher, var: &str, count: usize) {
    let Some(dir) = std::env::var_os(var).map(PathBuf::from) else {
        eprintln!("{var} is not set: skipped");
        return;
    };
    let embedder = load_embedder(&dir).unwrap();
    let texts = texts(count);
    bencher.counter(ItemsCount::new(texts.len())).bench_local(|| embedder.embed(&texts).unwrap());
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn embed_static(bencher: Bencher) {
    embed(bencher, "UCP_MODEL", scaled(10_000, 100));
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn embed_onnx(bencher: Bencher) {
    embed(bencher, "UCP_ONNX_MODEL", scaled(256, 8));
}
