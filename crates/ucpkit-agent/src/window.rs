//! The conversation under a token budget, by the context window's rules:
//! what falls out is compressed, then stubbed — never silently dropped.
//! The current task is kept whole and the latest exchange as long as the
//! older ones make room; older tool results and texts are summarized to a
//! quarter of their size, and when that is not enough, replaced by a stub
//! that names what it was and its size.

use ucpkit_context::Summarizer;
use ucpkit_core::Tokenizer;
use ucpkit_llm::{Message, Part};

/// Messages at the end always kept whole (the latest call and its result).
const KEEP_LATEST: usize = 2;
/// Tokens per message beyond its text (role, separators), as APIs count.
const MESSAGE_OVERHEAD: usize = 4;
/// The smallest summary worth keeping.
const MIN_SUMMARY_TOKENS: usize = 32;

/// What fitting a conversation did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Fitted {
    /// Tool results summarized.
    pub compressed: usize,
    /// Tool results replaced by a stub.
    pub stubbed: usize,
}

/// The tokens `message` costs.
pub fn message_tokens(message: &Message, tokenizer: &dyn Tokenizer) -> usize {
    MESSAGE_OVERHEAD
        + message
            .parts
            .iter()
            .map(|part| match part {
                Part::Text { text } => tokenizer.count(text),
                Part::ToolCall(call) => tokenizer.count(&call.name) + tokenizer.count(&call.arguments.to_string()),
                Part::ToolResult { content, .. } => tokenizer.count(content),
            })
            .sum::<usize>()
}

/// The tokens of the whole conversation.
pub fn conversation_tokens(messages: &[Message], tokenizer: &dyn Tokenizer) -> usize {
    messages.iter().map(|m| message_tokens(m, tokenizer)).sum()
}

/// Brings `messages` within `budget` tokens: oldest first, tool results
/// and texts (earlier tasks and answers too) are summarized, then, if still
/// over, stubbed; the last `KEEP_LATEST` (two) messages only when the older ones
/// are not enough. The message at `task` (the current task) is never
/// touched, nor are tool calls' arguments, so only those can leave the
/// conversation over its budget.
pub fn fit(
    messages: &mut [Message],
    task: usize,
    budget: usize,
    tokenizer: &dyn Tokenizer,
    summarizer: &dyn Summarizer,
) -> Fitted {
    let mut fitted = Fitted::default();
    let mut total = conversation_tokens(messages, tokenizer);
    let older = 0..messages.len().saturating_sub(KEEP_LATEST);
    let all = 0..messages.len();
    for (pass, range) in [(Pass::Compress, &older), (Pass::Stub, &older), (Pass::Compress, &all), (Pass::Stub, &all)] {
        for (at, message) in messages.iter_mut().enumerate().take(range.end).skip(range.start) {
            if at == task {
                continue;
            }
            for part in &mut message.parts {
                if total <= budget {
                    return fitted;
                }
                let (what, content) = match part {
                    Part::ToolResult { name, content, .. } => (format!("{name} result"), content),
                    Part::Text { text } => ("text".to_owned(), text),
                    Part::ToolCall(_) => continue,
                };
                let before = tokenizer.count(content);
                let replaced = match pass {
                    Pass::Compress if !is_reduced(content) && before > MIN_SUMMARY_TOKENS * 2 => {
                        let summary = summarizer.summarize(content, (before / 4).max(MIN_SUMMARY_TOKENS), tokenizer);
                        let new = format!("[{what} summarized from {before} tokens]\n{summary}");
                        (!summary.is_empty() && tokenizer.count(&new) < before).then(|| {
                            fitted.compressed += 1;
                            new
                        })
                    }
                    Pass::Stub if !content.starts_with(STUB) => {
                        let again = if what == "text" { "" } else { "; call again to see it" };
                        let new = format!("{STUB} {what} of {before} tokens dropped to fit the budget{again}]");
                        (tokenizer.count(&new) < before).then(|| {
                            fitted.stubbed += 1;
                            new
                        })
                    }
                    _ => None,
                };
                if let Some(new) = replaced {
                    total = total - before + tokenizer.count(&new);
                    *content = new;
                }
            }
        }
    }
    fitted
}

#[derive(Clone, Copy)]
enum Pass {
    Compress,
    Stub,
}

const STUB: &str = "[stub:";

fn is_reduced(content: &str) -> bool {
    content.starts_with(STUB)
        || (content.starts_with('[') && content.lines().next().is_some_and(|l| l.contains(" summarized from ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_context::ExtractiveSummarizer;
    use ucpkit_core::BpeTokenizer;

    fn result(name: &str, content: String) -> Message {
        Message {
            role: ucpkit_llm::Role::User,
            parts: vec![Part::ToolResult { call_id: "c".into(), name: name.into(), content, is_error: false }],
        }
    }

    #[test]
    fn old_results_are_compressed_then_stubbed_then_the_latest_and_the_task_kept() {
        let tokenizer = BpeTokenizer::default();
        let long = |topic: &str| {
            (0..60).map(|i| format!("Sentence {i} about {topic} and streams.")).collect::<Vec<_>>().join(" ")
        };
        let mut messages = vec![
            Message::user("Task: explain streams."),
            result("search", long("search")),
            result("ucl", long("ucl")),
            Message::assistant("Thinking."),
            result("context", long("context")),
        ];
        let whole = conversation_tokens(&messages, &tokenizer);
        let latest = messages[4].clone();
        let fitted = fit(&mut messages, 0, whole - 200, &tokenizer, &ExtractiveSummarizer);
        assert_eq!(fitted, Fitted { compressed: 1, stubbed: 0 });
        assert!(conversation_tokens(&messages, &tokenizer) <= whole - 200);
        let Part::ToolResult { content, .. } = &messages[1].parts[0] else { unreachable!() };
        assert!(content.starts_with("[search result summarized from "), "{content}");
        let fitted = fit(&mut messages, 0, 600, &tokenizer, &ExtractiveSummarizer);
        assert!(fitted.stubbed >= 1, "{fitted:?}");
        assert!(conversation_tokens(&messages, &tokenizer) <= 600);
        assert_eq!(messages[0], Message::user("Task: explain streams."));
        assert_eq!(messages[4], latest, "the latest result is whole while the older ones make room");
        let Part::ToolResult { content, .. } = &messages[1].parts[0] else { unreachable!() };
        assert!(content.starts_with("[stub: search result of "), "{content}");
        let mut empty: Vec<Message> = Vec::new();
        assert_eq!(fit(&mut empty, 0, 10, &tokenizer, &ExtractiveSummarizer), Fitted::default());
        fit(&mut messages, 0, 120, &tokenizer, &ExtractiveSummarizer);
        assert!(conversation_tokens(&messages, &tokenizer) <= 120, "the budget is hard");
        assert_eq!(messages[0], Message::user("Task: explain streams."));
        let again = fit(&mut messages, 0, 120, &tokenizer, &ExtractiveSummarizer);
        assert_eq!(again, Fitted::default(), "nothing is reduced twice");
    }
}
