//! The model-as-judge tier of the checks ([`crate::ChangeJudge`]): the
//! task and the change's diff go to a model, which accepts or rejects
//! the change with a reason.

use ucpkit_llm::{Cancel, Message, Provider, Request, ToolChoice};

/// The most characters of a diff a judge is shown.
const MAX_DIFF_CHARS: usize = 60_000;

const SYSTEM: &str = "You review a code change made for a task. Reply with ACCEPT on the first line when the change \
                      does what the task asks and breaks nothing visible; otherwise REJECT on the first line, then \
                      one short paragraph saying what is wrong.";

/// A model that judges changes.
pub struct ModelJudge(pub Box<dyn Provider>);

impl crate::ChangeJudge for ModelJudge {
    fn judge(&self, task: &str, diff: &str) -> Result<(), String> {
        if diff.trim().is_empty() {
            return Ok(());
        }
        let shown: String = diff.chars().take(MAX_DIFF_CHARS).collect();
        let request = Request {
            system: SYSTEM.into(),
            messages: vec![Message::user(format!("Task:\n{task}\n\nChange:\n```diff\n{shown}\n```"))],
            tools: Vec::new(),
            tool_choice: ToolChoice::None,
            max_tokens: 400,
            temperature: Some(0.0),
        };
        let reply =
            self.0.complete(&request, None, &Cancel::new()).map_err(|e| format!("the judge could not answer: {e}"))?;
        verdict(&reply.text)
    }
}

/// Reads a judge's reply: `ACCEPT` first accepts; anything else rejects,
/// the reply being the reason.
fn verdict(reply: &str) -> Result<(), String> {
    let text = reply.trim();
    let first = text.lines().next().unwrap_or("").trim().trim_matches(|c: char| !c.is_ascii_alphabetic());
    if first.eq_ignore_ascii_case("accept") {
        Ok(())
    } else {
        let reason = text.strip_prefix("REJECT").unwrap_or(text).trim();
        Err(if reason.is_empty() { "the judge gave no reason".into() } else { reason.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_accepts_only_an_explicit_accept() {
        assert_eq!(verdict("ACCEPT\nlooks right"), Ok(()));
        assert_eq!(verdict("**Accept**"), Ok(()));
        assert_eq!(verdict("REJECT\nthe loop is off by one"), Err("the loop is off by one".into()));
        assert_eq!(verdict("I think it is fine"), Err("I think it is fine".into()));
        assert!(verdict("").is_err());
    }
}
