//! Cutting a long result into pages: one word of 300,000 and 4,000,000
//! characters (a long line has no word boundary to cut at), and as many
//! characters of ordinary prose, at the default result cap (8,000 tokens).
//!
//! `cargo bench -p ucpkit-registry --bench pager`.

use divan::counter::BytesCount;
use divan::Bencher;
use ucpkit_core::BpeTokenizer;

fn main() {
    divan::main();
}

/// `chars` characters of one word with no repeats to merge.
fn one_word(chars: usize) -> String {
    (0..chars).map(|i| char::from(b'a' + (i * 7 % 26) as u8)).collect()
}

/// `chars` characters of prose in paragraphs.
fn prose(chars: usize) -> String {
    let paragraph = "The stream pauses when its buffer is full and resumes on drain. ".repeat(8) + "\n\n";
    paragraph.repeat(chars / paragraph.len() + 1)[..chars].to_owned()
}

#[divan::bench(args = [300_000, 1_000_000, 4_000_000], sample_count = 3)]
fn one_long_word(bencher: Bencher, chars: usize) {
    let tokenizer = BpeTokenizer::default();
    let text = one_word(chars);
    bencher
        .counter(BytesCount::of_str(&text))
        .bench(|| ucpkit_registry::bound::paginate(&text, ucpkit_registry::DEFAULT_RESULT_TOKENS, &tokenizer));
}

#[divan::bench(args = [300_000, 4_000_000], sample_count = 3)]
fn paragraphs(bencher: Bencher, chars: usize) {
    let tokenizer = BpeTokenizer::default();
    let text = prose(chars);
    bencher
        .counter(BytesCount::of_str(&text))
        .bench(|| ucpkit_registry::bound::paginate(&text, ucpkit_registry::DEFAULT_RESULT_TOKENS, &tokenizer));
}
