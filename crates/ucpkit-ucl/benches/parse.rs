//! Parse throughput on typical command text (a mix of edits, traversal and
//! context commands, as agents write them).
//!
//! `cargo bench -p ucpkit-ucl --bench parse`; divan reports MB/s.

use divan::counter::BytesCount;
use divan::Bencher;

fn main() {
    divan::main();
}

/// About `target` bytes of typical UCL.
fn typical_script(target: usize) -> String {
    let mut out = String::with_capacity(target + 256);
    let mut i = 0u64;
    while out.len() < target {
        let a = format!("blk_{:024x}", i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 8);
        let b = format!("blk_{:024x}", i.wrapping_mul(0xc2b2_ae3d_27d4_eb4f) >> 8);
        let line = match i % 10 {
            0 => format!("EDIT {a} SET content.text = \"Updated paragraph number {i} with some words\"\n"),
            1 => format!("APPEND {a} text WITH label=\"note-{i}\" tags=[\"draft\", \"review\"] :: \"New block {i}\"\n"),
            2 => format!("EXPAND {a} DOWN DEPTH=2 MODE=PREVIEW ROLES=heading2,paragraph\n"),
            3 => format!("CTX ADD {a} REASON=semantic_relevance RELEVANCE=0.8\n"),
            4 => format!("LINK {a} references {b} WITH confidence=0.9\n"),
            5 => format!("EDIT {a} SET metadata.tags += [\"reviewed\"] WHERE metadata.status = \"draft\"\n"),
            6 => "SEARCH \"how do I read a file asynchronously\" LIMIT=10\n".to_owned(),
            7 => format!("MOVE {a} AFTER {b}\n"),
            8 => format!("GOTO {a}\n"),
            _ => "CTX RENDER FORMAT=SHORT_IDS\n".to_owned(),
        };
        out.push_str(&line);
        i += 1;
    }
    out
}

#[divan::bench(args = [64 * 1024, 4 * 1024 * 1024])]
fn parse_commands(bencher: Bencher, size: usize) {
    let script = typical_script(size);
    bencher
        .counter(BytesCount::of_str(&script))
        .bench(|| ucpkit_ucl::parse_commands(divan::black_box(&script)).unwrap());
}

#[divan::bench(args = [4 * 1024 * 1024])]
fn lex_only(bencher: Bencher, size: usize) {
    let script = typical_script(size);
    bencher.counter(BytesCount::of_str(&script)).bench(|| ucpkit_ucl::lex(divan::black_box(&script)));
}
