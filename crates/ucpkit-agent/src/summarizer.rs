//! A summarizer that asks a model (`CTX COMPRESS METHOD=SUMMARIZE` and the
//! agent's own compression); the extractive one answers when the model
//! cannot, and a summary over its budget is cut at a sentence.

use ucpkit_context::{ExtractiveSummarizer, Summarizer};
use ucpkit_core::Tokenizer;
use ucpkit_llm::{Cancel, Message, Provider, Request, ToolChoice};

/// Summaries written by a model.
pub struct LlmSummarizer {
    provider: Box<dyn Provider>,
}

impl LlmSummarizer {
    /// A summarizer over `provider`.
    pub fn new(provider: Box<dyn Provider>) -> Self {
        LlmSummarizer { provider }
    }
}

impl Summarizer for LlmSummarizer {
    fn name(&self) -> &str {
        "llm"
    }

    fn summarize(&self, text: &str, max_tokens: usize, tokenizer: &dyn Tokenizer) -> String {
        if max_tokens == 0 || text.trim().is_empty() {
            return String::new();
        }
        let words = (max_tokens * 3 / 4).max(5);
        let request = Request {
            system: format!(
                "Summarize the text in at most {words} words. Keep names, numbers and code identifiers exactly. \
                 Reply with the summary only."
            ),
            messages: vec![Message::user(text)],
            tools: Vec::new(),
            tool_choice: ToolChoice::None,
            max_tokens: u32::try_from(max_tokens).unwrap_or(u32::MAX),
            temperature: Some(0.0),
        };
        let summary = match self.provider.complete(&request, None, &Cancel::new()) {
            Ok(reply) if !reply.text.trim().is_empty() => reply.text.trim().to_owned(),
            Ok(_) => return ExtractiveSummarizer.summarize(text, max_tokens, tokenizer),
            Err(error) => {
                tracing::warn!(%error, "the model could not summarize; summarizing by extraction");
                return ExtractiveSummarizer.summarize(text, max_tokens, tokenizer);
            }
        };
        if tokenizer.count(&summary) <= max_tokens {
            return summary;
        }
        // Over budget: the extractive summary of the summary.
        ExtractiveSummarizer.summarize(&summary, max_tokens, tokenizer)
    }
}
