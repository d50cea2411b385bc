//! Token counting behind a small trait, with exact BPE encodings.
//!
//! Budgets are enforced with these numbers, so the default implementation is
//! an exact OpenAI BPE (`o200k_base`) on the `bpe` crate's algorithm (as in
//! `bpe-openai`, which gave identical counts to `tiktoken-rs` at about twice
//! its speed on the Node.js API docs; see `ucpkit-ingest/benches/pipeline.rs`).
//! Its tables are built from the shipped vocabulary and cached (`table`).

mod table;

pub use table::cache_dir;

/// Counts tokens of text.
pub trait Tokenizer: Send + Sync {
    /// The encoding's name (stored with cached counts).
    fn name(&self) -> &str;
    /// The exact number of tokens in `text`.
    fn count(&self, text: &str) -> usize;
}

/// The BPE encodings that ship with the crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `o200k_base` (GPT-4o and later).
    O200k,
    /// `cl100k_base` (GPT-4, GPT-3.5), with the `cl100k` feature.
    #[cfg(feature = "cl100k")]
    Cl100k,
}

impl Encoding {
    /// The encoding's name.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200k => "o200k_base",
            #[cfg(feature = "cl100k")]
            Encoding::Cl100k => "cl100k_base",
        }
    }

    /// The encoding with this name, if this build ships it.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "o200k_base" | "o200k" => Some(Encoding::O200k),
            #[cfg(feature = "cl100k")]
            "cl100k_base" | "cl100k" => Some(Encoding::Cl100k),
            _ => None,
        }
    }
}

/// An exact BPE tokenizer.
#[derive(Clone, Copy)]
pub struct BpeTokenizer {
    encoding: Encoding,
    bpe: &'static bpe_openai::Tokenizer,
}

impl BpeTokenizer {
    /// The tokenizer for `encoding` (its tables are read or built once per
    /// process).
    pub fn new(encoding: Encoding) -> Self {
        let bpe = match encoding {
            Encoding::O200k => table::o200k(),
            #[cfg(feature = "cl100k")]
            Encoding::Cl100k => bpe_openai::cl100k_base(),
        };
        BpeTokenizer { encoding, bpe }
    }
}

impl Default for BpeTokenizer {
    fn default() -> Self {
        BpeTokenizer::new(Encoding::O200k)
    }
}

impl std::fmt::Debug for BpeTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BpeTokenizer").field("encoding", &self.encoding).finish()
    }
}

impl Tokenizer for BpeTokenizer {
    fn name(&self) -> &str {
        self.encoding.name()
    }

    fn count(&self, text: &str) -> usize {
        self.bpe.count(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_known_encodings() {
        // Reference counts from OpenAI's tiktoken for the same strings.
        let o200k = BpeTokenizer::new(Encoding::O200k);
        assert_eq!(o200k.count(""), 0);
        assert_eq!(o200k.count("hello world"), 2);
        #[cfg(feature = "cl100k")]
        {
            let cl100k = BpeTokenizer::new(Encoding::Cl100k);
            assert_eq!(cl100k.count("hello world"), 2);
            assert_eq!(cl100k.count("tiktoken is great!"), 6);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// The tables built here count as `bpe-openai`'s prebuilt ones.
        #[test]
        fn counts_equal_the_prebuilt_tables(text in "(\\PC|\\s|[a-z]{1,12}|[0-9]{1,5}|\\p{Han}|'s){0,64}") {
            let ours = BpeTokenizer::new(Encoding::O200k);
            proptest::prop_assert_eq!(ours.count(&text), bpe_openai::o200k_base().count(text.as_str()));
        }
    }

    #[test]
    fn names_round_trip() {
        assert_eq!(Encoding::from_name(Encoding::O200k.name()), Some(Encoding::O200k));
        #[cfg(feature = "cl100k")]
        assert_eq!(Encoding::from_name(Encoding::Cl100k.name()), Some(Encoding::Cl100k));
    }
}
