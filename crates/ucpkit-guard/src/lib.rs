//! Guardrails an agent cannot talk its way past. Every act of an agent
//! (a tool call with what it touches, a file write, a command line, its
//! `finish` ...) is an [`Event`] offered to a behavioural-programming
//! [`Engine`]: b-threads request, wait for and block events, and an
//! arbiter selects what may happen ([`engine`]). Rules are data
//! (`[[guard.rules]]` in `.ucp/config.toml` or `~/.config/ucp/config.toml`),
//! checked against their own examples when they load and compiled into
//! threads ([`rules`]); the project's checks (`[guard.checks]`) stand
//! between a changed workspace and `finish` ([`ChecksConfig`]).
//!
//! [`Guard`] is the shared, thread-safe face the tool registry's one
//! gate passes every call through.

pub mod engine;
mod event;
pub mod rules;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use serde::{Deserialize, Serialize};

pub use engine::{BThread, Deadlock, Decision, Engine, Judgement, Millis, Outcome, Say, Trace, TraceEntry, Verdict};
pub use event::{commands, starts, Act, Event, Pattern, PatternSpec, MAIN_AGENT};
pub use rules::{Rule, RuleSpec};

/// Why rules could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// A rule is malformed, or its examples fail.
    #[error("{0}")]
    Rule(String),
    /// A configuration file could not be read or parsed.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// The project's checks on changed files, run before `finish` is let
/// through (each tier's commands in the workspace; the first failure
/// stops them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChecksConfig {
    /// Static checks: formatters, linters, type checkers.
    #[serde(default, rename = "static")]
    pub static_checks: Vec<String>,
    /// Ask the agent's model to judge the change against the task.
    #[serde(default)]
    pub judge: bool,
    /// The tests to run.
    #[serde(default)]
    pub tests: Vec<String>,
    /// Seconds one command may take (600 when absent).
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

impl ChecksConfig {
    /// Whether any tier is configured.
    pub fn any(&self) -> bool {
        !self.static_checks.is_empty() || self.judge || !self.tests.is_empty()
    }
}

/// The `[guard]` section of the configuration files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardConfig {
    /// The rules, the user's file's first.
    #[serde(default)]
    pub rules: Vec<RuleSpec>,
    /// The checks on changes (the store's file's, else the user's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<ChecksConfig>,
}

#[derive(Deserialize)]
struct GuardFile {
    #[serde(default)]
    guard: Option<GuardConfig>,
}

impl GuardConfig {
    /// Reads the `[guard]` section of each file in turn (missing files
    /// are skipped): rules accumulate, a later file's checks win.
    pub fn load(files: &[PathBuf]) -> Result<GuardConfig, GuardError> {
        let mut config = GuardConfig::default();
        for path in files {
            match std::fs::read_to_string(path) {
                Ok(text) => config.merge(
                    GuardConfig::parse(&text).map_err(|message| GuardError::File { path: path.clone(), message })?,
                ),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(GuardError::File { path: path.clone(), message: e.to_string() }),
            }
        }
        Ok(config)
    }

    /// The `[guard]` section of one file's text (other sections ignored).
    pub fn parse(text: &str) -> Result<GuardConfig, String> {
        let file: GuardFile = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text.as_bytes()[..s.start.min(text.len())].iter().filter(|b| **b == b'\n').count() + 1);
            let message = e.message().trim().replace('\n', " ");
            match line {
                Some(line) => format!("line {line}: {message}"),
                None => message,
            }
        })?;
        Ok(file.guard.unwrap_or_default())
    }

    /// Adds `other`'s rules after these; its checks win.
    pub fn merge(&mut self, other: GuardConfig) {
        self.rules.extend(other.rules);
        if other.checks.is_some() {
            self.checks = other.checks;
        }
    }

    /// Compiles the rules, checking each one's examples, and adds the
    /// rule the checks imply: `finish` waits for them to pass after the
    /// last write.
    pub fn compile(&self, home: Option<&Path>) -> Result<Vec<Rule>, GuardError> {
        let home = home.and_then(Path::to_str);
        let mut rules: Vec<Rule> =
            self.rules.iter().enumerate().map(|(i, spec)| Rule::new(spec, i + 1, home)).collect::<Result<_, _>>()?;
        if self.checks.as_ref().is_some_and(ChecksConfig::any) {
            rules.push(Rule::new(&checks_rule(), rules.len() + 1, home)?);
        }
        Ok(rules)
    }
}

/// The rule configured checks imply.
fn checks_rule() -> RuleSpec {
    let event = |name: &str| PatternSpec { event: Some(name.into()), ..PatternSpec::default() };
    RuleSpec {
        name: Some("checks after changes".into()),
        kind: Some("require".into()),
        block: Some(event("finish")),
        after: Some(event("write")),
        until: Some(PatternSpec { passed: Some(true), ..event("checks") }),
        reason: "the project's checks must pass after the last change".into(),
        ..RuleSpec::default()
    }
}

/// The rules' engine, shared by an agent and its sub-agents: the one
/// gate's state. Its clock starts when it is made.
pub struct Guard {
    engine: Mutex<Engine>,
    started: Instant,
}

/// Why a proposal was not let through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The says that refused it.
    pub by: Vec<Say>,
    /// Whether a person declined it (else a rule blocked it).
    pub declined: bool,
}

impl Refusal {
    /// The reasons, in one line.
    pub fn reason(&self) -> String {
        let reasons: Vec<&str> = self.by.iter().map(|s| s.reason.as_str()).collect();
        reasons.join("; ")
    }
}

impl Guard {
    /// A guard running `rules`' threads, in their order of priority.
    pub fn new(rules: &[Rule]) -> Guard {
        let mut engine = Engine::default();
        for rule in rules {
            engine.add(rule.thread());
        }
        Guard { engine: Mutex::new(engine), started: Instant::now() }
    }

    /// Adds rules below the others (a session may add rules, never
    /// remove them: there is no way to).
    pub fn add_rules(&self, rules: &[Rule]) {
        let mut engine = self.engine();
        for rule in rules {
            engine.add(rule.thread());
        }
    }

    fn engine(&self) -> MutexGuard<'_, Engine> {
        self.engine.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Milliseconds since the guard was made.
    pub fn now(&self) -> Millis {
        self.started.elapsed().as_millis() as Millis
    }

    /// What the rules say of `events`, changing nothing.
    pub fn judge(&self, events: &[Event]) -> Judgement {
        self.engine().judge(events, self.now())
    }

    /// Lets `events` (one call's) through or refuses them: a deny refuses;
    /// an ask — or `default` when no rule spoke — is put to `approve` (the
    /// engine is not held meanwhile, and the rules are asked again after
    /// it answers); otherwise, or once approved, they are selected.
    /// Returns the judgement it went by.
    pub fn pass(
        &self,
        events: &[Event],
        default: Option<Decision>,
        approve: impl FnOnce(&Judgement) -> Result<(), String>,
    ) -> Result<Judgement, Refusal> {
        let mut engine = self.engine();
        let now = self.now();
        let mut judgement = engine.judge(events, now);
        judgement.decision = judgement.decision.or(default);
        if judgement.decision == Some(Decision::Ask) {
            drop(engine);
            if let Err(reason) = approve(&judgement) {
                let by = vec![Say { thread: "the person asked".into(), decision: Decision::Deny, reason }];
                self.engine().refuse(events, self.now(), by.clone());
                return Err(Refusal { by, declined: true });
            }
            engine = self.engine();
            judgement = engine.judge(events, self.now());
            if judgement.decision == Some(Decision::Ask) {
                judgement.decision = Some(Decision::Allow);
            }
        }
        if judgement.decision == Some(Decision::Deny) {
            let by: Vec<Say> = judgement.says.iter().filter(|s| s.decision == Decision::Deny).cloned().collect();
            engine.refuse(events, now, by.clone());
            return Err(Refusal { by, declined: false });
        }
        // A deadlock among the threads' own requests is recorded in the
        // trace; the call itself went through.
        let _ = engine.select(events, self.now());
        Ok(judgement)
    }

    /// Asks that `event` happen (`finish`, `accept_change`): selected, or
    /// the report of who blocks it.
    pub fn request(&self, event: &Event) -> Result<(), Deadlock> {
        self.engine().request(event, self.now())
    }

    /// Selects events the environment reports (`checks` results).
    pub fn happened(&self, events: &[Event]) {
        let _ = self.engine().select(events, self.now());
    }

    /// The audit trail so far.
    pub fn trace(&self) -> Trace {
        self.engine().trace().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuration_files_add_rules_and_the_later_checks_win() {
        let dir = std::env::temp_dir().join(format!("ucp-guard-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let user = dir.join("user.toml");
        let project = dir.join("project.toml");
        std::fs::write(&user, "[agent]\nmodel = \"m\"\n[[guard.rules]]\ndecision = \"ask\"\ntool = \"bash\"\nreason = \"a\"\n[guard.checks]\ntests = [\"x\"]\n").unwrap();
        std::fs::write(&project, "[[guard.rules]]\ndecision = \"deny\"\ntool = \"write\"\nreason = \"b\"\n[guard.checks]\ntests = [\"make test\"]\n").unwrap();
        let config = GuardConfig::load(&[user.clone(), dir.join("missing.toml"), project.clone()]).unwrap();
        assert_eq!(config.rules.len(), 2);
        assert_eq!(config.checks.as_ref().unwrap().tests, ["make test"]);
        let rules = config.compile(None).unwrap();
        assert_eq!(rules.iter().map(Rule::name).collect::<Vec<_>>(), ["rule 1", "rule 2", "checks after changes"]);
        std::fs::write(&project, "[[guard.rules]]\ndecision = \"deny\"\nreason = 3\n").unwrap();
        let error = GuardConfig::load(&[project]).unwrap_err().to_string();
        assert!(error.contains("project.toml: line 3"), "{error}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_ask_is_put_to_the_approver_and_a_decline_refuses() {
        let spec: RuleSpec = toml::from_str("decision = \"ask\"\ntool = \"bash\"\nreason = \"runs code\"").unwrap();
        let guard = Guard::new(&[Rule::new(&spec, 1, None).unwrap()]);
        let call = [Event::new(
            MAIN_AGENT,
            Act::Tool { tool: "bash".into(), args: Default::default(), command: Some("ls".into()), paths: vec![] },
        )];
        let refused = guard.pass(&call, None, |j| Err(format!("no ({})", j.reason()))).unwrap_err();
        assert!(refused.declined);
        assert_eq!(refused.reason(), "no (runs code)");
        assert_eq!(guard.pass(&call, None, |_| Ok(())).unwrap().decision, Some(Decision::Allow));
        let trace = guard.trace();
        assert!(matches!(trace[0].outcome, Outcome::Refused { .. }) && trace[1].outcome == Outcome::Selected);
    }
}
