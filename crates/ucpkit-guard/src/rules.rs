//! Rules as data (`[[guard.rules]]` in the configuration files), each
//! compiled into a b-thread:
//!
//! - `decision = "deny" | "ask" | "allow"`: at every event its pattern
//!   matches, the thread blocks, asks or allows (deny > ask > allow).
//! - `kind = "require"`: after an `after` event, `block` events are
//!   blocked until an `until` event (`finish` until the checks pass
//!   after the last write), over and over.
//! - `kind = "block_until"`: `block` events are blocked until the first
//!   `until` event; then the thread ends.
//! - `kind = "mutex"`: a path one agent has written (`on`) is held by it
//!   until its `release` event (`finish` by default); another agent's
//!   write to it is blocked meanwhile.
//! - `kind = "rate_limit"`: at most `max` `on` events per `per_seconds`.
//!
//! Every rule may carry `match` / `not_match` examples, checked when the
//! rules load: a rule whose examples fail is refused with the reason.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

use crate::engine::{BThread, Decision, Millis, Verdict};
use crate::event::{Pattern, PatternSpec};
use crate::{Act, Event, GuardError};

/// One rule as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Its name in traces (`rule N` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A plain rule's decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// A stateful rule's kind: `require`, `block_until`, `mutex`, `rate_limit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// A plain rule's pattern, written inline.
    #[serde(flatten)]
    pub pattern: PatternSpec,
    /// What a `require` or `block_until` rule blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<PatternSpec>,
    /// What starts a `require` rule's block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<PatternSpec>,
    /// What lifts a `require` or `block_until` rule's block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<PatternSpec>,
    /// What a `mutex` or `rate_limit` rule counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<PatternSpec>,
    /// What frees a `mutex` rule's paths (the holder's `finish` by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<PatternSpec>,
    /// A `rate_limit` rule's most events per window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u32>,
    /// A `rate_limit` rule's window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_seconds: Option<u64>,
    /// Why: shown to the model when the rule blocks or asks.
    pub reason: String,
    /// Inputs its pattern (the blocked one) must match.
    #[serde(default, rename = "match", skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<String>,
    /// Inputs it must not match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_match: Vec<String>,
}

/// A rule compiled and checked, ready to become a thread.
#[derive(Debug, Clone)]
pub struct Rule {
    name: String,
    reason: String,
    shape: Shape,
}

#[derive(Debug, Clone)]
enum Shape {
    Plain { decision: Decision, pattern: Pattern },
    Require { block: Pattern, after: Pattern, until: Pattern },
    BlockUntil { block: Pattern, until: Pattern },
    Mutex { on: Pattern, release: Pattern },
    RateLimit { on: Pattern, max: u32, window: Millis },
}

impl Rule {
    /// Compiles `spec` (named `rule {index}` when it has no name) and
    /// checks its examples; `home` expands `~/` in path globs.
    pub fn new(spec: &RuleSpec, index: usize, home: Option<&str>) -> Result<Rule, GuardError> {
        let name = spec.name.clone().unwrap_or_else(|| format!("rule {index}"));
        let named = |e: GuardError| GuardError::Rule(format!("{name}: {e}"));
        let pattern = |p: &Option<PatternSpec>, field: &str| -> Result<(Pattern, PatternSpec), GuardError> {
            let p = p.clone().ok_or_else(|| named(GuardError::Rule(format!("needs `{field}`"))))?;
            Ok((Pattern::new(&p, home).map_err(named)?, p))
        };
        if spec.reason.trim().is_empty() {
            return Err(named(GuardError::Rule("needs a `reason`".into())));
        }
        let inline = spec.pattern != PatternSpec::default();
        let stateful_fields = spec.block.is_some()
            || spec.after.is_some()
            || spec.until.is_some()
            || spec.on.is_some()
            || spec.release.is_some()
            || spec.max.is_some()
            || spec.per_seconds.is_some();
        let (shape, checked) = match (spec.decision, spec.kind.as_deref()) {
            (Some(decision), None) if !stateful_fields => {
                let pattern = Pattern::new(&spec.pattern, home).map_err(named)?;
                if decision != Decision::Deny && matches!(pattern.kind(), "finish" | "accept_change" | "checks") {
                    return Err(named(GuardError::Rule(format!(
                        "{} events are blocked or let through, never asked for or allowed",
                        pattern.kind()
                    ))));
                }
                (Shape::Plain { decision, pattern: pattern.clone() }, (pattern, spec.pattern.clone()))
            }
            (Some(_), None) => {
                return Err(named(GuardError::Rule(
                    "a plain rule takes its pattern inline, not block/after/until/on".into(),
                )))
            }
            (None, Some(_)) if inline => {
                return Err(named(GuardError::Rule(
                    "a stateful rule writes its patterns in block/after/until/on".into(),
                )))
            }
            (None, Some("require")) => {
                let block = pattern(&spec.block, "block")?;
                let shape = Shape::Require {
                    block: block.0.clone(),
                    after: pattern(&spec.after, "after")?.0,
                    until: pattern(&spec.until, "until")?.0,
                };
                (shape, block)
            }
            (None, Some("block_until")) => {
                let block = pattern(&spec.block, "block")?;
                (Shape::BlockUntil { block: block.0.clone(), until: pattern(&spec.until, "until")?.0 }, block)
            }
            (None, Some("mutex")) => {
                let on_spec =
                    spec.on.clone().unwrap_or(PatternSpec { event: Some("write".into()), ..PatternSpec::default() });
                let on = (Pattern::new(&on_spec, home).map_err(named)?, on_spec);
                let release_spec = spec
                    .release
                    .clone()
                    .unwrap_or(PatternSpec { event: Some("finish".into()), ..PatternSpec::default() });
                let release = Pattern::new(&release_spec, home).map_err(named)?;
                (Shape::Mutex { on: on.0.clone(), release }, on)
            }
            (None, Some("rate_limit")) => {
                let on = pattern(&spec.on, "on")?;
                let max = spec
                    .max
                    .filter(|m| *m > 0)
                    .ok_or_else(|| named(GuardError::Rule("needs `max` (1 or more)".into())))?;
                let seconds = spec
                    .per_seconds
                    .filter(|s| *s > 0)
                    .ok_or_else(|| named(GuardError::Rule("needs `per_seconds` (1 or more)".into())))?;
                (Shape::RateLimit { on: on.0.clone(), max, window: seconds.saturating_mul(1000) }, on)
            }
            (None, Some(other)) => {
                return Err(named(GuardError::Rule(format!(
                    "unknown kind {other:?} (known: require, block_until, mutex, rate_limit)"
                ))))
            }
            (None, None) => {
                return Err(named(GuardError::Rule("needs a `decision` (deny, ask, allow) or a `kind`".into())))
            }
            (Some(_), Some(_)) => {
                return Err(named(GuardError::Rule("takes a `decision` or a `kind`, not both".into())))
            }
        };
        let (pattern, pattern_spec) = checked;
        for example in &spec.matches {
            if !pattern.matches(&pattern.example_event(&pattern_spec, example)) {
                return Err(named(GuardError::Rule(format!("its example {example:?} does not match it"))));
            }
        }
        for example in &spec.not_match {
            if pattern.matches(&pattern.example_event(&pattern_spec, example)) {
                return Err(named(GuardError::Rule(format!("its counter-example {example:?} matches it"))));
            }
        }
        Ok(Rule { name, reason: spec.reason.clone(), shape })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its thread, at its start.
    pub fn thread(&self) -> Box<dyn BThread> {
        let state = match &self.shape {
            Shape::Plain { .. } | Shape::BlockUntil { .. } => State::Idle,
            Shape::Require { .. } => State::Open,
            Shape::Mutex { .. } => State::Held(BTreeMap::new()),
            Shape::RateLimit { .. } => State::Seen(VecDeque::new()),
        };
        Box::new(RuleThread { rule: self.clone(), state, ended: false })
    }
}

/// A rule's thread.
struct RuleThread {
    rule: Rule,
    state: State,
    ended: bool,
}

enum State {
    Idle,
    /// A `require` rule: nothing to hold up yet.
    Open,
    /// A `require` rule: blocking until `until`.
    Closed,
    /// A `mutex` rule: each path, and the agent holding it.
    Held(BTreeMap<String, String>),
    /// A `rate_limit` rule: when each counted event was selected.
    Seen(VecDeque<Millis>),
}

fn path_of(event: &Event) -> Vec<&str> {
    match &event.act {
        Act::Write { path } => vec![path.as_str()],
        Act::Tool { paths, .. } => paths.iter().map(String::as_str).collect(),
        _ => Vec::new(),
    }
}

impl BThread for RuleThread {
    fn name(&self) -> &str {
        &self.rule.name
    }

    fn verdict(&self, event: &Event, now: Millis) -> Option<Verdict> {
        let deny = |reason: String| Some(Verdict { decision: Decision::Deny, reason });
        match (&self.rule.shape, &self.state) {
            (Shape::Plain { decision, pattern }, _) if pattern.matches(event) => {
                Some(Verdict { decision: *decision, reason: self.rule.reason.clone() })
            }
            (Shape::Require { block, .. }, State::Closed) | (Shape::BlockUntil { block, .. }, State::Idle)
                if block.matches(event) =>
            {
                deny(self.rule.reason.clone())
            }
            (Shape::Mutex { on, .. }, State::Held(held)) if on.matches(event) => {
                let taken =
                    path_of(event).into_iter().find_map(|p| held.get(p).filter(|h| **h != event.agent).map(|h| (p, h)));
                taken.and_then(|(path, holder)| deny(format!("{} ({path} is held by {holder})", self.rule.reason)))
            }
            (Shape::RateLimit { on, max, window }, State::Seen(seen)) if on.matches(event) => {
                let recent = seen.iter().filter(|at| now.saturating_sub(**at) < *window).count();
                (recent >= *max as usize).then(|| Verdict {
                    decision: Decision::Deny,
                    reason: format!("{} ({recent} in the last {} s)", self.rule.reason, window / 1000),
                })
            }
            _ => None,
        }
    }

    fn waits_for(&self, event: &Event) -> bool {
        match &self.rule.shape {
            Shape::Plain { .. } => false,
            Shape::Require { after, until, .. } => after.matches(event) || until.matches(event),
            Shape::BlockUntil { until, .. } => until.matches(event),
            Shape::Mutex { on, release } => on.matches(event) || release.matches(event),
            Shape::RateLimit { on, .. } => on.matches(event),
        }
    }

    fn advance(&mut self, event: &Event, now: Millis) {
        match (&self.rule.shape, &mut self.state) {
            (Shape::Require { after, until, .. }, state) => {
                // An event matching both (a write that is also a check)
                // leaves the block on: the last word is the change.
                if after.matches(event) {
                    *state = State::Closed;
                } else if until.matches(event) {
                    *state = State::Open;
                }
            }
            (Shape::BlockUntil { .. }, _) => self.ended = true,
            (Shape::Mutex { on, release }, State::Held(held)) => {
                if release.matches(event) {
                    held.retain(|_, holder| *holder != event.agent);
                } else if on.matches(event) {
                    for path in path_of(event) {
                        held.entry(path.to_owned()).or_insert_with(|| event.agent.clone());
                    }
                }
            }
            (Shape::RateLimit { window, .. }, State::Seen(seen)) => {
                seen.push_back(now);
                while seen.front().is_some_and(|at| now.saturating_sub(*at) >= *window) {
                    seen.pop_front();
                }
            }
            _ => {}
        }
    }

    fn ended(&self) -> bool {
        self.ended
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> Result<Rule, GuardError> {
        let spec: RuleSpec = toml::from_str(text).map_err(|e| GuardError::Rule(e.to_string()))?;
        Rule::new(&spec, 1, Some("/home/u"))
    }

    #[test]
    fn examples_are_checked_when_a_rule_loads() {
        let good = "decision = \"deny\"\ntool = \"bash\"\ncommand = [\"rm\", \"-rf\"]\nreason = \"no\"\n\
                    match = [\"rm -rf build\"]\nnot_match = [\"rmdir build\"]";
        assert!(rule(good).is_ok());
        let wrong = good.replace("rmdir build", "cd x && rm -rf build");
        let error = rule(&wrong).unwrap_err().to_string();
        assert!(error.contains("counter-example \"cd x && rm -rf build\" matches it"), "{error}");
        let missed = good.replace("[\"rm -rf build\"]", "[\"rm -r build\"]");
        assert!(rule(&missed).unwrap_err().to_string().contains("does not match"));
        let paths = "decision = \"deny\"\npath = \"~/.ssh/**\"\nreason = \"keys\"\nmatch = [\"/home/u/.ssh/id_rsa\"]";
        assert!(rule(paths).is_ok());
    }

    #[test]
    fn malformed_rules_are_refused_with_the_reason() {
        for (text, says) in [
            ("decision = \"deny\"\nreason = \"\"", "needs a `reason`"),
            ("reason = \"x\"", "needs a `decision`"),
            ("kind = \"require\"\nreason = \"x\"", "needs `block`"),
            ("kind = \"nope\"\nreason = \"x\"", "unknown kind"),
            ("kind = \"rate_limit\"\non = {tool = \"bash\"}\nmax = 0\nper_seconds = 1\nreason = \"x\"", "needs `max`"),
            ("decision = \"deny\"\nkind = \"mutex\"\nreason = \"x\"", "not both"),
            ("decision = \"deny\"\nblock = {event = \"finish\"}\nreason = \"x\"", "inline"),
            ("kind = \"mutex\"\ntool = \"x\"\nreason = \"x\"", "block/after/until/on"),
            ("decision = \"deny\"\ntool = \"[\"\nreason = \"x\"", "bad glob"),
            ("decision = \"ask\"\nevent = \"finish\"\nreason = \"x\"", "never asked for"),
        ] {
            let error = rule(text).unwrap_err().to_string();
            assert!(error.contains(says), "{text}: {error}");
        }
        assert!(rule("decision = \"maybe\"\nreason = \"x\"").is_err());
    }
}
