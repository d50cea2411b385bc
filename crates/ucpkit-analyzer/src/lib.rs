//! How text becomes terms, the one way for search (BM25, the ranking of
//! `ucp context`) and for a context window's relevance alike. Code-aware: identifiers such as `fs.createReadStream`,
//! `max_old_space_size` or `std::io::Read` are indexed whole *and* split into
//! their parts, so a query for either form finds them. Words are lowercased,
//! English stop words dropped and the rest stemmed (Snowball English), the
//! way Lucene's English analyzer does.
//!
//! Analysis is the larger part of building an index, so the tokenizer does
//! all of it in one pass without allocating per token: token strings are
//! reused between texts, ASCII (most of any corpus) takes a fast path, and
//! stems of the words seen are cached (word frequencies follow a Zipf law,
//! so most lookups hit).

use rustc_hash::FxHashMap;
use tantivy_tokenizer_api::{Token, TokenStream, Tokenizer};

/// Whether `word` is one of Lucene's English stop words (the set BM25
/// baselines are usually run with).
fn is_stop_word(word: &str) -> bool {
    matches!(
        word,
        "a" | "an"
            | "and"
            | "are"
            | "as"
            | "at"
            | "be"
            | "but"
            | "by"
            | "for"
            | "if"
            | "in"
            | "into"
            | "is"
            | "it"
            | "no"
            | "not"
            | "of"
            | "on"
            | "or"
            | "such"
            | "that"
            | "the"
            | "their"
            | "then"
            | "there"
            | "these"
            | "they"
            | "this"
            | "to"
            | "was"
            | "will"
            | "with"
    )
}

/// Most stems kept in a tokenizer's cache before it starts over.
const STEM_CACHE: usize = 1 << 16;

/// The terms `text` is indexed (or queried) as, in order, repeats kept.
pub fn terms(text: &str) -> Vec<String> {
    collect(&mut CodeTokenizer::analyzing(), text)
}

/// The distinct terms of `text`, sorted (for lookups by binary search).
pub fn distinct_terms(text: &str) -> Vec<String> {
    let mut terms = terms(text);
    terms.sort_unstable();
    terms.dedup();
    terms
}

/// Every token `tokenizer` makes of `text`, in order.
fn collect(tokenizer: &mut CodeTokenizer, text: &str) -> Vec<String> {
    let mut stream = tokenizer.token_stream(text);
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

/// Splits text into lowercased words; a compound identifier yields itself,
/// its dotted/colon/slash/dash segments and their snake/camel-case parts.
/// [`CodeTokenizer::analyzing`] also drops stop words and stems.
#[derive(Clone, Default)]
pub struct CodeTokenizer {
    /// Token slots, reused from text to text (`len` of them are live).
    tokens: Vec<Token>,
    len: usize,
    stemmer: Option<Stems>,
    /// Scratch space for one compound's segments and one word's characters.
    segments: Vec<(usize, usize)>,
    chars: Vec<(usize, char)>,
    word: String,
}

/// Snowball English with a cache of the stems computed.
#[derive(Clone)]
struct Stems {
    stemmer: frostem::Stemmer,
    cache: FxHashMap<Box<str>, Box<str>>,
}

impl Stems {
    fn stem_into(&mut self, word: &str, out: &mut String) {
        out.clear();
        if let Some(stem) = self.cache.get(word) {
            out.push_str(stem);
            return;
        }
        let stem = self.stemmer.stem(word);
        out.push_str(&stem);
        if self.cache.len() >= STEM_CACHE {
            self.cache.clear();
        }
        self.cache.insert(word.into(), out.as_str().into());
    }
}

impl CodeTokenizer {
    /// The tokenizer the index uses: stop words dropped, words stemmed.
    pub fn analyzing() -> CodeTokenizer {
        let stemmer = frostem::Stemmer::new(frostem::Algorithm::English);
        CodeTokenizer { stemmer: Some(Stems { stemmer, cache: FxHashMap::default() }), ..CodeTokenizer::default() }
    }

    /// Appends the token `text[from..to]`, lowercased (and, when analyzing,
    /// stemmed, or left out when it is a stop word).
    fn emit(&mut self, text: &str, from: usize, to: usize) {
        if self.len == self.tokens.len() {
            self.tokens.push(Token::default());
        }
        let token = &mut self.tokens[self.len];
        token.text.clear();
        let word = &text[from..to];
        if word.is_ascii() {
            token.text.push_str(word);
            token.text.make_ascii_lowercase();
        } else {
            token.text.extend(word.chars().flat_map(char::to_lowercase));
        }
        if self.stemmer.is_some() && is_stop_word(&token.text) {
            return;
        }
        // Identifiers (with digits, `_` or connectors) are kept as written;
        // only words are stemmed.
        if let Some(stems) = self.stemmer.as_mut().filter(|_| token.text.chars().all(char::is_alphabetic)) {
            self.word.clear();
            self.word.push_str(&token.text);
            stems.stem_into(&self.word, &mut token.text);
            if token.text.is_empty() {
                token.text.push_str(&self.word);
            }
        }
        token.offset_from = from;
        token.offset_to = to;
        token.position = self.len;
        token.position_length = 1;
        self.len += 1;
    }

    /// Tokenizes `text` into the token slots.
    fn split(&mut self, text: &str) {
        self.len = 0;
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < text.len() {
            let c = char_at(text, i);
            if !is_word(c) {
                i += c.len_utf8();
                continue;
            }
            // A compound: words joined by runs of at most two connectors.
            let start = i;
            self.segments.clear();
            loop {
                let word_start = i;
                while i < text.len() {
                    let c = char_at(text, i);
                    if !is_word(c) {
                        break;
                    }
                    i += c.len_utf8();
                }
                self.segments.push((word_start, i));
                let mut j = i;
                while j < text.len() && j - i < 2 && is_connector(bytes[j]) {
                    j += 1;
                }
                if j > i && j < text.len() && is_word(char_at(text, j)) {
                    i = j;
                } else {
                    break;
                }
            }
            if self.segments.len() > 1 {
                self.emit(text, start, i);
            }
            for s in 0..self.segments.len() {
                let (from, to) = self.segments[s];
                self.emit(text, from, to);
                self.emit_parts(text, from, to);
            }
        }
    }

    /// Emits the snake_case and camelCase parts of the word `text[from..to]`
    /// when it has more than one.
    fn emit_parts(&mut self, text: &str, from: usize, to: usize) {
        let word = &text[from..to];
        if !word.bytes().any(|b| b == b'_' || b.is_ascii_uppercase()) && word.is_ascii() {
            return;
        }
        self.chars.clear();
        self.chars.extend(word.char_indices());
        let chars = std::mem::take(&mut self.chars);
        let end_of = |k: usize| chars.get(k).map_or(word.len(), |&(at, _)| at);
        let mut parts: Vec<(usize, usize)> = Vec::new();
        let mut start = None;
        for k in 0..chars.len() {
            let c = chars[k].1;
            if c == '_' {
                if let Some(s) = start.take() {
                    parts.push((s, k));
                }
                continue;
            }
            let boundary = start.is_some() && k > 0 && {
                let prev = chars[k - 1].1;
                let next_lower = chars.get(k + 1).is_some_and(|&(_, n)| n.is_lowercase());
                (prev.is_lowercase() || prev.is_numeric()) && c.is_uppercase()
                    || prev.is_uppercase() && c.is_uppercase() && next_lower
            };
            if boundary {
                parts.push((start.expect("a boundary lies inside a part"), k));
                start = Some(k);
            } else if start.is_none() {
                start = Some(k);
            }
        }
        if let Some(s) = start {
            parts.push((s, chars.len()));
        }
        if parts.len() > 1 {
            for (a, b) in parts {
                self.emit(text, from + chars[a].0, from + end_of(b));
            }
        }
        self.chars = chars;
    }
}

/// The tokens of one text, produced up front.
pub struct CodeTokenStream<'a> {
    tokens: &'a mut [Token],
    next: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream<'a> {
        self.split(text);
        CodeTokenStream { tokens: &mut self.tokens[..self.len], next: 0 }
    }
}

impl TokenStream for CodeTokenStream<'_> {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

/// The character starting at byte `at` (a char boundary).
fn char_at(text: &str, at: usize) -> char {
    let byte = text.as_bytes()[at];
    if byte.is_ascii() {
        char::from(byte)
    } else {
        text[at..].chars().next().expect("a character starts here")
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_connector(byte: u8) -> bool {
    matches!(byte, b'.' | b':' | b'/' | b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Vec<String> {
        collect(&mut CodeTokenizer::default(), text)
    }

    #[test]
    fn compound_identifiers_keep_the_whole_and_the_parts() {
        assert_eq!(
            raw("fs.createReadStream(path)"),
            ["fs.createreadstream", "fs", "createreadstream", "create", "read", "stream", "path"]
        );
        assert_eq!(raw("std::io::Read"), ["std::io::read", "std", "io", "read"]);
        assert_eq!(raw("max_old_space_size"), ["max_old_space_size", "max", "old", "space", "size"]);
        assert_eq!(raw("HTTPServer"), ["httpserver", "http", "server"]);
        assert_eq!(raw("--experimental-vm-modules"), ["experimental-vm-modules", "experimental", "vm", "modules"]);
        assert_eq!(raw("ÉtéFort_deux"), ["étéfort_deux", "été", "fort", "deux"]);
    }

    #[test]
    fn prose_is_plain_words() {
        assert_eq!(raw("The end. Next: a file"), ["the", "end", "next", "a", "file"]);
        assert_eq!(raw("naïve café"), ["naïve", "café"]);
        assert!(raw("  ... -- ::").is_empty());
    }

    #[test]
    fn offsets_point_at_the_source_text() {
        let text = "use fs.readFile now";
        let mut tokenizer = CodeTokenizer::default();
        let mut stream = tokenizer.token_stream(text);
        let mut spans = Vec::new();
        while stream.advance() {
            let t = stream.token();
            spans.push(&text[t.offset_from..t.offset_to]);
        }
        assert_eq!(spans, ["use", "fs.readFile", "fs", "readFile", "read", "File", "now"]);
    }

    #[test]
    fn analyzer_stems_and_drops_stop_words() {
        assert_eq!(terms("The streams are reading"), ["stream", "read"]);
        // Cached stems give the same answer the second time.
        let mut tokenizer = CodeTokenizer::analyzing();
        for _ in 0..2 {
            let mut stream = tokenizer.token_stream("Connections connected");
            let mut out = Vec::new();
            while stream.advance() {
                out.push(stream.token().text.clone());
            }
            assert_eq!(out, ["connect", "connect"]);
        }
    }

    #[test]
    fn slots_are_reused_without_leaking_old_tokens() {
        let mut tokenizer = CodeTokenizer::default();
        let _ = tokenizer.token_stream("one two three four");
        let mut stream = tokenizer.token_stream("five");
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        assert_eq!(out, ["five"]);
    }
}
