//! Ingest, tokenization and store round-trip benchmarks (divan).
//!
//! `cargo bench -p ucpkit-ingest --bench pipeline`. Inputs are the synthetic
//! corpus of `synth` (deterministic) and, when `UCP_NODE_CORPUS` names the
//! Node.js API docs, that real corpus.

mod synth;

use std::sync::{Arc, OnceLock};

use divan::counter::BytesCount;
use divan::Bencher;
use ucpkit_core::{BpeTokenizer, Document, Encoding, Tokenizer};
use ucpkit_ingest::{markdown_document, IngestOptions};

fn main() {
    divan::main();
}

/// 8 MB of synthetic markdown.
fn synthetic() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| synth::markdown_file(&mut synth::Rng::new(0x5eed), 0, 1, 8_000_000))
}

/// The Node.js docs concatenated, or the synthetic corpus without them.
fn real_or_synthetic() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| match std::env::var("UCP_NODE_CORPUS") {
        Ok(dir) => {
            let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
            paths.sort();
            paths
                .iter()
                .filter(|p| p.extension().is_some_and(|e| e == "md"))
                .map(|p| std::fs::read_to_string(p).unwrap())
                .collect()
        }
        Err(_) => synthetic().to_owned(),
    })
}

#[divan::bench(args = [Encoding::O200k])]
fn tokenize_paragraphs(bencher: Bencher, encoding: Encoding) {
    let text = real_or_synthetic();
    let paragraphs: Vec<&str> = text.split("\n\n").collect();
    let tokenizer = BpeTokenizer::new(encoding);
    bencher.counter(BytesCount::new(text.len())).bench(|| paragraphs.iter().map(|p| tokenizer.count(p)).sum::<usize>());
}

#[divan::bench(sample_count = 10)]
fn ingest_markdown_with_token_counts(bencher: Bencher) {
    let text = synthetic();
    let options = IngestOptions::default();
    bencher.counter(BytesCount::new(text.len())).bench(|| markdown_document("bench", text, &options));
}

fn document() -> &'static Document {
    static DOC: OnceLock<Document> = OnceLock::new();
    DOC.get_or_init(|| {
        let options = IngestOptions { tokenizer: Arc::new(BpeTokenizer::default()), ..Default::default() };
        markdown_document("bench", synthetic(), &options)
    })
}

#[divan::bench(sample_count = 10)]
fn store_save(bencher: Bencher) {
    let doc = document();
    let dir = tempfile::tempdir().unwrap();
    let mut store = ucpkit_store::Store::open(dir.path()).unwrap();
    bencher.counter(divan::counter::ItemsCount::new(doc.len())).bench_local(|| store.save_document(doc).unwrap());
}

#[divan::bench(sample_count = 10)]
fn store_load(bencher: Bencher) {
    let doc = document();
    let dir = tempfile::tempdir().unwrap();
    let mut store = ucpkit_store::Store::open(dir.path()).unwrap();
    store.save_document(doc).unwrap();
    bencher.counter(divan::counter::ItemsCount::new(doc.len())).bench_local(|| store.load_document("bench").unwrap());
}

/// A document of `blocks` blocks in sections of 10, built directly.
fn tree_of(blocks: usize) -> Document {
    use ucpkit_core::{Block, BlockId, Content, Metadata, Role};
    let mut doc = Document::with_capacity("tree", blocks);
    let mut section = BlockId::ROOT;
    for i in 0..blocks {
        let content = Content::markdown(format!("block {i}"));
        let role = if i % 10 == 0 { Role::Heading2 } else { Role::Paragraph };
        let id = Block::derive_id(&content, Some(&role), "", 0);
        let parent = if i % 10 == 0 { BlockId::ROOT } else { section };
        doc.append_child(parent, Block::new(id, content, Metadata::with_role(role))).unwrap();
        if i % 10 == 0 {
            section = id;
        }
    }
    doc
}

/// Parent lookup plus children listing per block: flat across sizes (O(1)).
#[divan::bench(args = [10_000, 1_000_000], sample_count = 20)]
fn parent_and_children_lookup(bencher: Bencher, blocks: usize) {
    let doc = tree_of(blocks);
    let ids: Vec<_> = doc.document_order().step_by((blocks / 10_000).max(1)).take(10_000).collect();
    bencher
        .counter(divan::counter::ItemsCount::new(ids.len()))
        .bench(|| ids.iter().map(|id| doc.parent(*id).map_or(0, |_| 1) + doc.children(*id).len()).sum::<usize>());
}
