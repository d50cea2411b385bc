//! The reference baseline of code localization, as the SWE-bench set's
//! `baseline_bm25_files.py` defines it: Okapi BM25 (k1 = 0.9, b = 0.4,
//! idf = ln(1 + (N − df + 0.5)/(df + 0.5))) over whole files and over
//! units, with lowercase `[A-Za-z0-9_]+` terms plus the snake_case and
//! camelCase parts of each, the whole issue text as the query; its context
//! takes units in rank order while they fit, counting words × 1.3.

use std::collections::HashMap;

/// A BM25 index over term lists.
pub struct Bm25 {
    n: usize,
    norm: Vec<f64>,
    postings: HashMap<String, Vec<(u32, u32)>>,
}

const K1: f64 = 0.9;
const B: f64 = 0.4;

impl Bm25 {
    /// Indexes `docs`, each a list of terms.
    pub fn new(docs: &[Vec<String>]) -> Bm25 {
        let n = docs.len();
        let average = docs.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1) as f64;
        let norm = docs.iter().map(|d| K1 * (1.0 - B + B * d.len() as f64 / average.max(1e-9))).collect();
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        for (i, doc) in docs.iter().enumerate() {
            for (term, tf) in counts(doc) {
                postings.entry(term.to_owned()).or_default().push((i as u32, tf));
            }
        }
        Bm25 { n, norm, postings }
    }

    /// Document indexes best first (ties by index); documents sharing no
    /// term with the query are left out.
    pub fn rank(&self, query: &[String]) -> Vec<usize> {
        let mut scores: HashMap<u32, f64> = HashMap::new();
        for (term, qtf) in counts(query) {
            let Some(postings) = self.postings.get(term) else { continue };
            let df = postings.len() as f64;
            let idf = (1.0 + (self.n as f64 - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in postings {
                let tf = f64::from(tf);
                *scores.entry(doc).or_default() +=
                    f64::from(qtf) * idf * tf * (K1 + 1.0) / (tf + self.norm[doc as usize]);
            }
        }
        let mut ranked: Vec<(u32, f64)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.into_iter().map(|(doc, _)| doc as usize).collect()
    }
}

fn counts(terms: &[String]) -> Vec<(&str, u32)> {
    let mut counts: HashMap<&str, u32> = HashMap::new();
    for term in terms {
        *counts.entry(term.as_str()).or_default() += 1;
    }
    let mut counts: Vec<(&str, u32)> = counts.into_iter().collect();
    counts.sort_unstable();
    counts
}

/// The terms of a text: each `[A-Za-z0-9_]+` token lowercased, then its
/// parts (`FooBar_baz` → `foobar_baz foo bar baz`) when it has several.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for token in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|t| !t.is_empty()) {
        let low = token.to_ascii_lowercase();
        let parts = parts(token);
        let single = parts.len() == 1 && parts[0] == low;
        out.push(low);
        if !single {
            out.extend(parts);
        }
    }
    out
}

/// `[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+`, lowercased.
fn parts(token: &str) -> Vec<String> {
    let bytes = token.as_bytes();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_uppercase() {
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_uppercase() {
                j += 1;
            }
            if j < bytes.len() && bytes[j].is_ascii_lowercase() {
                // An upper-case run followed by lower case: the run less its
                // last letter is one part, the last letter starts the next.
                if j - i > 1 {
                    parts.push(token[i..j - 1].to_ascii_lowercase());
                }
                let word_start = j - 1;
                let mut k = j;
                while k < bytes.len() && bytes[k].is_ascii_lowercase() {
                    k += 1;
                }
                parts.push(token[word_start..k].to_ascii_lowercase());
                i = k;
            } else {
                parts.push(token[i..j].to_ascii_lowercase());
                i = j;
            }
        } else if c.is_ascii_lowercase() {
            while i < bytes.len() && bytes[i].is_ascii_lowercase() {
                i += 1;
            }
            parts.push(token[start..i].to_owned());
        } else if c.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            parts.push(token[start..i].to_owned());
        } else {
            i += 1;
        }
    }
    parts
}

/// Tokens of a returned piece as the set's README counts them: words × 1.3,
/// rounded up.
pub fn word_tokens(text: &str) -> usize {
    (text.split_whitespace().count() as f64 * 1.3).ceil() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_split_identifiers_like_the_reference_script() {
        assert_eq!(terms("FooBar_baz"), vec!["foobar_baz", "foo", "bar", "baz"]);
        assert_eq!(terms("HTTPServer x2"), vec!["httpserver", "http", "server", "x2", "x", "2"]);
        assert_eq!(terms("save"), vec!["save"]);
        assert_eq!(terms("__init__"), vec!["__init__", "init"]);
    }

    #[test]
    fn bm25_ranks_the_rarer_match_first() {
        let docs: Vec<Vec<String>> = ["a b c", "a a a", "d e"].iter().map(|d| terms(d)).collect();
        let index = Bm25::new(&docs);
        assert_eq!(index.rank(&terms("b a")), vec![0, 1]);
    }
}
