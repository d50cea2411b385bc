//! What every BM25 index here scores with: the constants, the idf, how a
//! query's repeated terms count, and block lengths as the index keeps
//! them (so the tantivy index and the in-memory one give equal numbers).

use std::collections::HashMap;

/// BM25's `k1`; a term can add at most `idf * (1 + k1)` to a score.
pub(crate) const K1: f32 = 1.2;
/// BM25's length normalization.
pub(crate) const B: f32 = 0.75;

/// The searched fields and how much each counts.
pub(crate) const FIELD_BOOSTS: [(&str, f32); 3] = [("text", 1.0), ("headings", 0.6), ("label", 0.6)];

/// How many distinct terms make a query long enough for its repeats to
/// count: a report of a paragraph or more, not a one- or two-sentence
/// question. A question names what it asks about once or twice, and what
/// it repeats is mostly an example's name (`price`, `SomeClass`); a long
/// report keeps coming back to what it is about.
pub(crate) const LONG_QUERY_TERMS: usize = 32;

/// How often each analyzed term occurs in `text`, as far as it counts in
/// a ranking: every term once in a query of fewer than
/// [`LONG_QUERY_TERMS`] distinct terms.
pub(crate) fn repeats(text: &str) -> HashMap<String, u32> {
    let mut counts = HashMap::new();
    for term in ucpkit_analyzer::terms(text) {
        *counts.entry(term).or_default() += 1;
    }
    if counts.len() < LONG_QUERY_TERMS {
        counts.values_mut().for_each(|count| *count = 1);
    }
    counts
}

/// BM25's inverse document frequency of a term `df` of `docs` blocks hold.
pub(crate) fn idf(docs: f64, df: f64) -> f64 {
    (1.0 + (docs - df + 0.5) / (df + 0.5)).ln()
}

/// [`idf`] in single precision, as tantivy's scorer computes it, so the
/// scores built with it equal tantivy's to the bit.
pub(crate) fn idf_f32(docs: f32, df: f32) -> f32 {
    (1.0 + (docs - df + 0.5) / (df + 0.5)).ln()
}

/// Lengths below this are kept exactly.
const EXACT_LENGTHS: u32 = 24;

/// The length a one-byte code stands for: exact below [`EXACT_LENGTHS`],
/// then a 3-bit mantissa with an implicit leading bit, doubling every 8
/// codes (the small-float code Lucene and tantivy store lengths in).
fn decoded_length(code: u8) -> u32 {
    if u32::from(code) < EXACT_LENGTHS {
        return u32::from(code);
    }
    let code = code - EXACT_LENGTHS as u8;
    let (mantissa, shift) = (u32::from(code & 0b111), code >> 3);
    EXACT_LENGTHS + if shift == 0 { mantissa } else { (mantissa | 0b1000) << (shift - 1) }
}

/// `length` as a one-byte-coded index keeps it: the largest coded length
/// not above it (exact up to 40 terms, within about 12% above).
pub(crate) fn stored_length(length: u32) -> u32 {
    // Codes decode to increasing lengths: the last one not above `length`.
    let (mut low, mut high) = (0u8, u8::MAX);
    while low < high {
        let middle = low + (high - low).div_ceil(2);
        if decoded_length(middle) <= length {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    decoded_length(low)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_count_only_in_long_queries() {
        let question = "why does price show quotes in f'{price=}' but not f'{price=:.2f}'";
        assert!(repeats(question).values().all(|&count| count == 1));

        let words: Vec<String> = (0..LONG_QUERY_TERMS).map(|i| format!("word{i}")).collect();
        let report = format!("{} serializer serializer serializer", words.join(" "));
        let counts = repeats(&report);
        let term = |word: &str| ucpkit_analyzer::terms(word).remove(0);
        assert_eq!(counts[&term("serializer")], 3);
        assert_eq!(counts[&term("word0")], 1);
    }

    #[test]
    fn stored_lengths_are_exact_when_short_and_never_above() {
        for length in 0..=40 {
            assert_eq!(stored_length(length), length);
        }
        let mut last = 0;
        for length in (0..2_000_000).step_by(7).chain([u32::MAX - 1, u32::MAX]) {
            let stored = stored_length(length);
            assert!(stored <= length && stored >= last, "{length} -> {stored}");
            // The largest code stands for about 2^31: no nearer past it.
            let near = f64::from(stored) >= f64::from(length) * 0.85 || length > 2_000_000_000;
            assert!(near, "{length} -> {stored}");
            last = stored;
        }
    }

    #[cfg(feature = "index")]
    #[test]
    fn stored_lengths_are_tantivys() {
        use tantivy::fieldnorm::FieldNormReader;
        for length in (0..3_000_000u32).chain([u32::MAX]) {
            let tantivy = FieldNormReader::id_to_fieldnorm(FieldNormReader::fieldnorm_to_id(length));
            assert_eq!(stored_length(length), tantivy, "{length}");
        }
    }
}
