//! The LLM traversal policy: the heuristic explores a section (expands it,
//! follows its links, queues its subsections) and a model judges what it
//! found. The model sees the section's best blocks as stubs (a short id and
//! the start of the text) and answers in UCL, `CTX ADD <n>` for each block
//! that helps answer the question, best first; what it adds is shared as
//! highly relevant, what it was shown and left out is shared at half its
//! score. Invalid UCL is fed back with the parser's diagnostic for one
//! retry; a second failure keeps the heuristic's judgement. The commands
//! the exploration runs still go through the session, its budget and the
//! breaker.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::coordination::{DiscoveryRelevance, NewDiscovery};
use crate::policy::{Decision, Exploration, HeuristicPolicy, Policy};
use ucpkit_context::IdMapper;
use ucpkit_core::BlockId;
use ucpkit_llm::{Cancel, Message, Provider, Request, ToolChoice};
use ucpkit_sessions::Reply as StepReply;
use ucpkit_ucl::{BlockRef, Command, Ctx};

/// Sections a model judges per question: the queue serves the most
/// promising first, the heuristic judges the rest.
pub const JUDGED_SECTIONS: usize = 8;
/// Blocks a model is shown per section.
const SHOWN: usize = 10;
/// Words of a block's text in its stub.
const STUB_WORDS: usize = 40;

const SYSTEM: &str = "You choose the text blocks that help answer a question. Reply with UCL only: one line \
     `CTX ADD <n>` for each helpful block, most helpful first. No other text.";

/// How the model's judgements went.
#[derive(Debug, Default)]
pub struct PolicyStats {
    /// Model calls.
    pub calls: AtomicUsize,
    /// Replies that were not valid UCL (each retried once).
    pub invalid: AtomicUsize,
    /// Sections left to the heuristic's judgement (two invalid replies or a
    /// failed call).
    pub fallbacks: AtomicUsize,
    /// Blocks the model added.
    pub added: AtomicUsize,
}

/// The heuristic's exploration with a model's judgement of each section.
pub struct LlmPolicy {
    provider: Box<dyn Provider>,
    heuristic: HeuristicPolicy,
    stats: PolicyStats,
    /// Sections judged so far, by question.
    judged: Mutex<HashMap<String, usize>>,
}

impl LlmPolicy {
    /// A policy that asks `provider`.
    pub fn new(provider: Box<dyn Provider>) -> Self {
        LlmPolicy {
            provider,
            heuristic: HeuristicPolicy::default(),
            stats: PolicyStats::default(),
            judged: Mutex::default(),
        }
    }

    /// Whether the model may judge one more section for `question`.
    fn may_judge(&self, question: &str) -> bool {
        let mut judged = self.judged.lock().unwrap_or_else(|e| e.into_inner());
        let count = judged.entry(question.to_owned()).or_default();
        *count += 1;
        *count <= JUDGED_SECTIONS
    }

    /// How its judgements went so far.
    pub fn stats(&self) -> &PolicyStats {
        &self.stats
    }

    /// The section's blocks the heuristic scored best, with their text.
    fn stubs(exploration: &Exploration<'_>, decision: &Decision) -> Vec<(BlockId, String)> {
        let Some(expanded) = exploration.rounds.first() else { return Vec::new() };
        let texts: Vec<(BlockId, &str)> = expanded
            .iter()
            .filter_map(|o| o.result.as_ref().ok())
            .filter_map(|step| match &step.reply {
                StepReply::Listing { items, .. } => Some(items),
                _ => None,
            })
            .flatten()
            .filter_map(|item| item.view.text.as_deref().map(|t| (item.view.id, t)))
            .collect();
        let mut scored: Vec<(BlockId, f64)> =
            decision.share.iter().filter_map(|d| d.block_ids.first().map(|b| (*b, d.score))).collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored
            .into_iter()
            .filter_map(|(id, _)| texts.iter().find(|(b, _)| *b == id).map(|(_, t)| (id, stub(t))))
            .filter(|(_, t)| !t.is_empty())
            .take(SHOWN)
            .collect()
    }

    /// The model's picks among `stubs`, best first; `None` when it gave no
    /// valid UCL twice or could not be called.
    fn judge(&self, exploration: &Exploration<'_>, stubs: &[(BlockId, String)]) -> Option<Vec<BlockId>> {
        let mut ids = IdMapper::new();
        let mut listing = format!(
            "Question: {}\nSection: {}\n",
            exploration.question.trim(),
            exploration.task.heading_path.join(" > ")
        );
        for (id, text) in stubs {
            listing.push_str(&format!("[{}] {text}\n", ids.short(*id)));
        }
        listing.push_str("Which blocks help answer the question? Reply with `CTX ADD <n>` lines only.");
        let mut messages = vec![Message::user(listing)];
        for _ in 0..2 {
            self.stats.calls.fetch_add(1, Ordering::Relaxed);
            let request = Request {
                system: SYSTEM.into(),
                messages: messages.clone(),
                tools: Vec::new(),
                tool_choice: ToolChoice::None,
                max_tokens: 60,
                temperature: Some(0.0),
            };
            let reply = match self.provider.complete(&request, None, &Cancel::new()) {
                Ok(reply) => reply,
                Err(error) => {
                    tracing::warn!(%error, "the traversal model could not be called");
                    return None;
                }
            };
            match read_picks(&reply.text, &ids) {
                Ok(picks) => return Some(picks),
                Err(diagnostic) => {
                    self.stats.invalid.fetch_add(1, Ordering::Relaxed);
                    messages.push(Message::assistant(reply.text));
                    messages.push(Message::user(format!(
                        "That is not valid: {diagnostic}. Reply again with lines `CTX ADD <n>` only."
                    )));
                }
            }
        }
        None
    }
}

/// The start of a block's text on one line.
fn stub(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().take(STUB_WORDS + 1).collect();
    let mut out = words[..words.len().min(STUB_WORDS)].join(" ");
    if words.len() > STUB_WORDS {
        out.push_str(" …");
    }
    out
}

/// The blocks a reply adds, in order, or the parser's diagnostic.
fn read_picks(reply: &str, ids: &IdMapper) -> Result<Vec<BlockId>, String> {
    let lines: Vec<&str> = reply.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("```")).collect();
    let mut commands = ucpkit_ucl::parse_commands(&lines.join("\n")).map_err(|e| e.to_string())?;
    let mut picks = Vec::new();
    for command in &mut commands {
        command.expand_short_ids(ids).map_err(|n| format!("there is no block {n}"))?;
        match command {
            Command::Ctx(Ctx::Add { target: BlockRef::Id(id), .. }) => {
                if !picks.contains(id) {
                    picks.push(*id);
                }
            }
            other => return Err(format!("{} is not a block choice; use CTX ADD <n>", other.name())),
        }
    }
    Ok(picks)
}

fn relevance(score: f64) -> DiscoveryRelevance {
    match score {
        s if s >= 0.5 => DiscoveryRelevance::High,
        s if s >= 0.25 => DiscoveryRelevance::Medium,
        _ => DiscoveryRelevance::Low,
    }
}

fn rescore(discovery: &mut NewDiscovery, score: f64) {
    discovery.score = score;
    discovery.relevance = relevance(score);
}

impl Policy for LlmPolicy {
    fn name(&self) -> &str {
        "llm"
    }

    fn decide(&self, exploration: &Exploration<'_>) -> Decision {
        let mut decision = self.heuristic.decide(exploration);
        if exploration.rounds.len() != 1 {
            return decision;
        }
        let stubs = Self::stubs(exploration, &decision);
        if stubs.is_empty() || !self.may_judge(exploration.question) {
            return decision;
        }
        let Some(picks) = self.judge(exploration, &stubs) else {
            self.stats.fallbacks.fetch_add(1, Ordering::Relaxed);
            return decision;
        };
        self.stats.added.fetch_add(picks.len(), Ordering::Relaxed);
        for discovery in &mut decision.share {
            let Some(id) = discovery.block_ids.first().copied() else { continue };
            if let Some(rank) = picks.iter().position(|p| *p == id) {
                rescore(discovery, (1.0 - 0.03 * rank as f64).max(discovery.score));
            } else if stubs.iter().any(|(b, _)| *b == id) {
                rescore(discovery, discovery.score * 0.5);
            }
        }
        decision
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_as_ucl_over_short_ids() {
        let mut ids = IdMapper::new();
        let (a, b) = (BlockId::from_bytes([1; 12]), BlockId::from_bytes([2; 12]));
        ids.short(a);
        ids.short(b);
        assert_eq!(read_picks("```\nCTX ADD 2\nCTX ADD 1\nCTX ADD 2\n```", &ids).unwrap(), [b, a]);
        assert_eq!(read_picks("", &ids).unwrap(), []);
        assert!(read_picks("CTX ADD 7", &ids).unwrap_err().contains("no block 7"));
        assert!(read_picks("GOTO 1", &ids).unwrap_err().contains("CTX ADD"));
        assert!(!read_picks("Block 1 helps.", &ids).unwrap_err().is_empty());
    }

    #[test]
    fn stubs_are_the_start_of_the_text_on_one_line() {
        assert_eq!(stub("a\nb  c"), "a b c");
        let long = "w ".repeat(100);
        assert!(stub(&long).ends_with(" …"));
        assert_eq!(stub(&long).split_whitespace().count(), STUB_WORDS + 1);
    }
}
