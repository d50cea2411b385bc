//! Summaries for `CTX COMPRESS METHOD=SUMMARIZE`, behind a trait so an LLM
//! summarizer can replace the built-in extractive one.

use std::collections::HashMap;

use ucpkit_core::Tokenizer;

use ucpkit_analyzer::terms;

/// Writes a summary of a block's text within a token budget.
pub trait Summarizer: Send + Sync {
    /// The summarizer's name (shown in stats).
    fn name(&self) -> &str;
    /// A summary of `text` with at most `max_tokens` tokens; empty when no
    /// useful summary fits.
    fn summarize(&self, text: &str, max_tokens: usize, tokenizer: &dyn Tokenizer) -> String;
}

/// Picks the sentences whose words are most frequent in the block (the
/// first sentence gets a bonus, as it usually states the topic) and keeps
/// them in their original order until the budget is spent.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtractiveSummarizer;

impl Summarizer for ExtractiveSummarizer {
    fn name(&self) -> &str {
        "extractive"
    }

    fn summarize(&self, text: &str, max_tokens: usize, tokenizer: &dyn Tokenizer) -> String {
        let sentences = sentences(text);
        let mut frequency: HashMap<String, f64> = HashMap::new();
        for term in terms(text) {
            *frequency.entry(term).or_default() += 1.0;
        }
        let mut ranked: Vec<(usize, f64)> = sentences
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let words = terms(s);
                let score = words.iter().map(|w| frequency[w]).sum::<f64>() / (words.len() as f64 + 1.0).sqrt();
                (i, if i == 0 { score * 1.5 + 1.0 } else { score })
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut chosen: Vec<usize> = Vec::new();
        let mut used = 0;
        for (i, _) in ranked {
            let cost = tokenizer.count(sentences[i]) + 1;
            if used + cost <= max_tokens {
                used += cost;
                chosen.push(i);
            }
        }
        chosen.sort_unstable();
        let summary: Vec<&str> = chosen.iter().map(|i| sentences[*i]).collect();
        summary.join(" ")
    }
}

/// Sentences of a text: split after `.`, `!`, `?` followed by whitespace,
/// and at line breaks (list items and code lines count as sentences).
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let bytes = line.as_bytes();
        for i in 0..bytes.len() {
            let ends = matches!(bytes[i], b'.' | b'!' | b'?') && bytes.get(i + 1).is_some_and(u8::is_ascii_whitespace);
            if ends {
                out.push(line[start..=i].trim());
                start = i + 1;
            }
        }
        out.push(line[start..].trim());
    }
    out.retain(|s| !s.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_core::BpeTokenizer;

    #[test]
    fn keeps_the_topic_sentence_and_fits_the_budget() {
        let text = "The fs module reads files. It has callbacks. Streams read large files in chunks. \
                    The fs module also writes files. Unrelated trivia here.";
        let tokenizer = BpeTokenizer::default();
        let summary = ExtractiveSummarizer.summarize(text, 16, &tokenizer);
        assert!(summary.starts_with("The fs module reads files."), "{summary}");
        assert!(tokenizer.count(&summary) <= 16, "{summary}");
        assert!(!summary.contains("trivia"));
    }

    #[test]
    fn splits_sentences_and_lines() {
        assert_eq!(sentences("a. b! c\nd? e"), ["a.", "b!", "c", "d?", "e"]);
        assert_eq!(sentences("v1.2 stays"), ["v1.2 stays"]);
    }
}
