//! Counts the tokens of the given files, paragraph by paragraph (as ingest
//! does), with bpe-openai and tiktoken-rs, checks that the counts agree, and
//! prints each one's median throughput over 5 runs.

use std::time::Instant;

fn median_mb_per_s(bytes: usize, mut run: impl FnMut() -> usize) -> (usize, f64) {
    let mut speeds = Vec::new();
    let mut tokens = 0;
    for _ in 0..5 {
        let started = Instant::now();
        tokens = run();
        speeds.push(bytes as f64 / 1e6 / started.elapsed().as_secs_f64());
    }
    speeds.sort_by(f64::total_cmp);
    (tokens, speeds[2])
}

fn main() {
    let text: String = std::env::args().skip(1).map(|p| std::fs::read_to_string(p).expect("readable file")).collect();
    let paragraphs: Vec<&str> = text.split("\n\n").collect();
    let bpe = bpe_openai::o200k_base();
    let tiktoken = tiktoken_rs::o200k_base().expect("o200k tables");
    let (a, bpe_speed) = median_mb_per_s(text.len(), || paragraphs.iter().map(|p| bpe.count(p)).sum());
    let (b, tik_speed) =
        median_mb_per_s(text.len(), || paragraphs.iter().map(|p| tiktoken.encode_ordinary(p).len()).sum());
    println!("{} bytes, {} paragraphs", text.len(), paragraphs.len());
    println!("bpe-openai  o200k_base: {a} tokens, median {bpe_speed:.1} MB/s");
    println!("tiktoken-rs o200k_base: {b} tokens, median {tik_speed:.1} MB/s");
    assert_eq!(a, b, "the two tokenizers disagree");
}
