//! Search latency percentiles on the synthetic benchmark corpus:
//!
//! `cargo run --release -p ucpkit-search --example latency -- [BLOCKS] [QUERIES]`
//!
//! Builds a BM25 index of BLOCKS blocks (default 1,000,000), reports the
//! build throughput, then runs QUERIES queries (default 2,000) of 2-6 words
//! and as many of 8-16 words, and reports p50, p90, p99 and the maximum.

#[path = "../benches/corpus/mod.rs"]
mod corpus;

use std::time::Instant;

use ucpkit_search::{Mode, SearchConfig, SearchIndex, SearchOptions};

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().expect("a number"));
    let blocks = args.next().unwrap_or(1_000_000);
    let count = args.next().unwrap_or(2_000);
    let started = Instant::now();
    let doc = corpus::document(blocks);
    let bytes: usize = doc.blocks().map(|b| b.plain_text().len()).sum();
    println!(
        "corpus: {} blocks, {:.1} MB of text in {:.1}s",
        doc.len(),
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    let dir = tempfile::tempdir().expect("temporary directory");
    let started = Instant::now();
    let (index, report) = SearchIndex::open(dir.path(), &doc, None, SearchConfig::default(), &()).expect("index");
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "index build: {} blocks, {:.1} MB in {seconds:.1}s = {:.1} MB/s (text and heading paths: {:.1} MB/s)",
        report.added,
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / seconds,
        report.bytes as f64 / 1e6 / seconds
    );
    for (min, max) in [(2, 6), (8, 16)] {
        let queries = corpus::queries(count, min, max);
        let options = SearchOptions::default();
        for query in queries.iter().take(50) {
            index.search_mode(query, &options, Mode::Bm25).expect("search");
        }
        let mut micros: Vec<f64> = queries
            .iter()
            .map(|query| {
                let started = Instant::now();
                let hits = index.search_mode(query, &options, Mode::Bm25).expect("search");
                std::hint::black_box(hits);
                started.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        micros.sort_by(f64::total_cmp);
        let at = |p: f64| micros[((micros.len() - 1) as f64 * p).round() as usize] / 1000.0;
        println!(
            "bm25 search, {count} queries of {min}-{max} words: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            at(0.5),
            at(0.9),
            at(0.99),
            at(1.0)
        );
    }
}
