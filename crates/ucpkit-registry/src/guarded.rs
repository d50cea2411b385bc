//! The guard at the one gate: every call's events (the call with the
//! command line and paths it touches, each file it writes, the command
//! it runs) pass the rules' engine ([`ucpkit_guard::Guard`]) before the
//! call runs — deny refuses with the rule's reason, ask goes to the
//! connection's [`crate::Supervisor`] (an editor's permission request),
//! allow skips asking. An agent's answer is its `finish`: after changes,
//! the project's checks run first (static, a model as judge, the tests),
//! and a failure goes back to the model instead of the answer. Files
//! the tools change are journaled, so a run whose changes were never
//! accepted can be rolled back.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use ucpkit_guard::{Act, ChecksConfig, Decision, Event, Guard, Rule};
use ucpkit_tools::bash::BashRequest;

use crate::{Action, ActionKind, Approval, CallError, Connection, JsonObject};

/// Judges a change against its task (the model-as-judge tier).
pub trait ChangeJudge: Send + Sync {
    /// `Ok(())` when `diff` does what `task` asks, else why not.
    fn judge(&self, task: &str, diff: &str) -> Result<(), String>;
}

/// The guard one agent and its sub-agents share: the rules' engine, the
/// checks, and the journal of files changed since the last accepted state.
pub struct GuardSetup {
    guard: Guard,
    checks: ChecksConfig,
    judge: Option<Arc<dyn ChangeJudge>>,
    /// Files the tools changed since the last accepted state, as they
    /// were before (kept only when asked: rollback, the judge).
    journal: Mutex<BTreeMap<String, Option<String>>>,
    journaled: bool,
    /// A file was written or a command ran since the checks last passed.
    changed: AtomicBool,
    /// Counts writes and commands: the checks' verdict stands only for
    /// the changes made before they started.
    generation: AtomicU64,
}

/// A [`GuardSetup`] shared by the connections of one agent.
#[derive(Clone)]
pub struct SharedGuard(pub Arc<GuardSetup>);

impl std::fmt::Debug for SharedGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedGuard")
    }
}

impl GuardSetup {
    /// A guard over `rules` (in priority order) and `checks`.
    pub fn new(rules: &[Rule], checks: ChecksConfig) -> Self {
        GuardSetup {
            guard: Guard::new(rules),
            checks,
            judge: None,
            journal: Mutex::new(BTreeMap::new()),
            journaled: false,
            changed: AtomicBool::new(false),
            generation: AtomicU64::new(0),
        }
    }

    /// The same, keeping the files' earlier text for [`rollback`] and the
    /// judge's diff (a server that never finishes keeps none).
    pub fn journaled(mut self, journaled: bool) -> Self {
        self.journaled = journaled;
        self
    }

    /// The same, judging changes with `judge` when the checks ask for it.
    pub fn with_judge(mut self, judge: Option<Arc<dyn ChangeJudge>>) -> Self {
        self.judge = judge;
        self
    }

    /// The rules' engine (its trace is the audit trail).
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// Shared, for an offer.
    pub fn shared(self) -> SharedGuard {
        SharedGuard(Arc::new(self))
    }

    fn journal(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Option<String>>> {
        self.journal.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs `tool`'s call through the guard: refused with the reason, or let
/// through, with the action its supervisor approved (to be told how it
/// went). Files it will write are journaled first.
pub(crate) fn gate(
    connection: &Connection,
    tool: &crate::Tool,
    arguments: &JsonObject,
) -> Result<Option<Action>, CallError> {
    pass_gate(connection, tool, arguments, true)
}

/// [`gate`]; a call that is not `a_change` (a check's command) leaves
/// the record of changes alone.
fn pass_gate(
    connection: &Connection,
    tool: &crate::Tool,
    arguments: &JsonObject,
    a_change: bool,
) -> Result<Option<Action>, CallError> {
    let action = crate::describe(connection.offer(), tool, arguments);
    let tools = connection.coding_tools().ok().flatten();
    let writes_files = tool.needs == crate::Needs::Root;
    let events = events_of(connection.agent(), &action, arguments, tools.map(ucpkit_tools::Tools::jail), writes_files);
    let supervisor = connection.supervisor();
    let asked_anyway = supervisor.is_some() && action.needs_approval;
    let mut approved = None;
    let setup = connection.guard();
    let passed = setup.guard.pass(&events, asked_anyway.then_some(Decision::Ask), |judgement| {
        let Some(supervisor) = supervisor else {
            return Err(format!("needs a person's approval ({}), and no one can be asked here", judgement.reason()));
        };
        let mut shown = crate::approval::preview(connection, action.clone(), arguments);
        shown.needs_approval = true;
        match supervisor.approve(&shown) {
            Approval::Allow => {
                approved = Some(shown);
                Ok(())
            }
            Approval::Deny(reason) => Err(reason),
        }
    });
    match passed {
        Ok(_) => {}
        Err(refusal) if refusal.declined => return Err(CallError::Declined(refusal.reason())),
        Err(refusal) => return Err(CallError::Blocked(refusal.reason())),
    }
    let writes: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.act {
            Act::Write { path } => Some(path.as_str()),
            _ => None,
        })
        .collect();
    if a_change && (!writes.is_empty() || events.iter().any(|e| matches!(e.act, Act::Command { .. }))) {
        setup.changed.store(true, Ordering::SeqCst);
        setup.generation.fetch_add(1, Ordering::SeqCst);
    }
    if let (Some(tools), true) = (tools, setup.journaled) {
        let mut journal = setup.journal();
        for path in writes {
            if !journal.contains_key(path) {
                if let Ok((_, before)) = tools.text_of(path) {
                    journal.insert(path.to_owned(), before);
                }
            }
        }
    }
    Ok(approved)
}

/// The events of a call described by `action`: the call itself (with its
/// command line and paths — as `jail` resolves them, relative to its
/// root when inside: the file the tool will open), a write per file it
/// changes (`writes_files`: a coding tool), and the command it runs.
fn events_of(
    agent: &str,
    action: &Action,
    arguments: &JsonObject,
    jail: Option<&ucpkit_tools::Jail>,
    writes_files: bool,
) -> Vec<Event> {
    let paths: Vec<String> = action
        .locations
        .iter()
        .map(|l| {
            let real = jail.and_then(|j| j.resolve(&l.path.to_string_lossy()).ok()).unwrap_or_else(|| l.path.clone());
            match jail.and_then(|j| real.strip_prefix(j.root()).ok()) {
                Some(inside) if !inside.as_os_str().is_empty() => inside.display().to_string(),
                _ => real.display().to_string(),
            }
        })
        .collect();
    let command = match action.kind {
        ActionKind::Execute => arguments.get("command").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    };
    let writes = writes_files
        && action.needs_approval
        && command.is_none()
        && matches!(action.kind, ActionKind::Edit | ActionKind::Delete);
    let mut events = vec![Event::new(
        agent,
        Act::Tool {
            tool: action.tool.clone(),
            args: arguments.clone(),
            command: command.clone(),
            paths: paths.clone(),
        },
    )];
    if writes {
        events.extend(paths.into_iter().map(|path| Event::new(agent, Act::Write { path })));
    }
    events.extend(command.map(|line| Event::new(agent, Act::Command { line })));
    events
}

/// The most characters of a failed check's output shown to the model.
const CHECK_OUTPUT_CHARS: usize = 4000;

/// The agent of `connection` answers `task`. For the main agent, after
/// changes (or while a rule holds `finish` back) the checks run — a
/// failure is the model's to fix — then `finish` must get past the rules,
/// and its changes are accepted (the journal starts over). A sub-agent's
/// `finish` only passes the rules (freeing what it holds): its changes
/// are checked with the main agent's answer. `Ok` when it may finish,
/// else what stands in the way, for the model.
pub fn finish(connection: &Connection, task: &str) -> Result<(), String> {
    let setup = connection.guard();
    let agent = connection.agent();
    let finish = Event::new(agent, Act::Finish);
    if agent != ucpkit_guard::MAIN_AGENT {
        return setup.guard.request(&finish).map_err(|report| report.to_string());
    }
    let changed = setup.changed.load(Ordering::SeqCst);
    // The checks run after changes, and when a rule holds `finish` back
    // (it may be waiting for them).
    let held = setup.guard.judge(std::slice::from_ref(&finish)).decision == Some(Decision::Deny);
    if (changed || held) && setup.checks.any() {
        let generation = setup.generation.load(Ordering::SeqCst);
        let passed = run_checks(connection, setup, task);
        // Changes made while they ran (a sub-agent's) were not checked.
        let overtaken = setup.generation.load(Ordering::SeqCst) != generation;
        setup.guard.happened(&[Event::new(agent, Act::Checks { passed: passed.is_ok() && !overtaken })]);
        passed?;
        if overtaken {
            return Err("files changed while the checks ran: answer again to have them checked".into());
        }
        setup.changed.store(false, Ordering::SeqCst);
    }
    setup.guard.request(&finish).map_err(|report| report.to_string())?;
    if changed || !setup.journal().is_empty() {
        setup.guard.request(&Event::new(agent, Act::AcceptChange)).map_err(|report| report.to_string())?;
        setup.journal().clear();
        setup.changed.store(false, Ordering::SeqCst);
    }
    Ok(())
}

/// Runs the tiers in order — static checks, the judge, the tests — each
/// command in the workspace through the connection's `bash` (sandboxed
/// when the connection's commands are); the first failure stops them.
fn run_checks(connection: &Connection, setup: &GuardSetup, task: &str) -> Result<(), String> {
    let tools = match connection.coding_tools() {
        Ok(Some(tools)) => tools,
        _ => return Err("the checks need the workspace's tools, which this connection lacks".into()),
    };
    let timeout = Duration::from_secs(setup.checks.timeout_seconds.unwrap_or(600));
    let bash = crate::tools::find(connection.offer(), "bash").ok_or("the checks need `bash`")?;
    let run = |tier: &str, command: &str| -> Result<(), String> {
        // A check is a command like any other: past the rules, and asked
        // for where the connection's commands are (an editor's user).
        let arguments: JsonObject = [("command".to_owned(), Value::from(command))].into_iter().collect();
        pass_gate(connection, bash, &arguments, false)
            .map_err(|e| format!("the {tier} check `{command}` may not run: {e}"))?;
        let request = BashRequest { command: command.to_owned(), cwd: None, timeout: Some(timeout), background: false };
        let result = tools.bash(&request).map_err(|e| format!("{tier} check `{command}` could not run: {e}"))?;
        match result.status {
            ucpkit_tools::bash::JobStatus::Exited { code: 0 } => Ok(()),
            status => {
                let output = tail(&result.output, CHECK_OUTPUT_CHARS);
                Err(format!("the {tier} check `{command}` failed ({status:?}):\n{output}"))
            }
        }
    };
    for command in &setup.checks.static_checks {
        run("static", command)?;
    }
    if setup.checks.judge {
        let judge = setup.judge.as_ref().ok_or("the checks ask for a judge, and no model is set to judge")?;
        // The journal is not held while the model judges.
        let diff = diff(tools, &setup.journal());
        judge.judge(task, &diff).map_err(|why| format!("the judge rejected the change: {why}"))?;
    }
    for command in &setup.checks.tests {
        run("test", command)?;
    }
    Ok(())
}

fn tail(text: &str, chars: usize) -> &str {
    let count = text.chars().count();
    match text.char_indices().nth(count.saturating_sub(chars)) {
        Some((at, _)) if count > chars => &text[at..],
        _ => text,
    }
}

/// The journaled files' changes since the last accepted state, as a
/// unified diff.
fn diff(tools: &ucpkit_tools::Tools, journal: &BTreeMap<String, Option<String>>) -> String {
    let mut out = String::new();
    for (path, before) in journal {
        let after = tools.text_of(path).ok().and_then(|(_, text)| text);
        let (old, new) = (before.as_deref().unwrap_or(""), after.as_deref().unwrap_or(""));
        if old != new {
            let unified = similar::TextDiff::from_lines(old, new);
            out.push_str(&unified.unified_diff().header(&format!("a/{path}"), &format!("b/{path}")).to_string());
        }
    }
    out
}

/// `transcript` as the store keeps it: its trail as loaded, then what
/// `connection`'s guard has recorded since.
pub fn with_trace(transcript: &ucpkit_agent::Transcript, connection: &Connection) -> serde_json::Result<String> {
    let mut value = serde_json::to_value(transcript)?;
    let mut trail = transcript.trace.clone();
    for entry in connection.guard().guard.trace() {
        trail.push(serde_json::to_value(entry)?);
    }
    if let (Value::Object(map), false) = (&mut value, trail.is_empty()) {
        map.insert("trace".into(), Value::Array(trail));
    }
    serde_json::to_string(&value)
}

/// Puts every file changed through the tools since the last accepted
/// state back as it was; returns the paths restored. Changes commands
/// made are not journaled and stay.
pub fn rollback(connection: &Connection) -> Result<Vec<String>, String> {
    let setup = connection.guard();
    let tools = match connection.coding_tools() {
        Ok(Some(tools)) => tools,
        _ => return Ok(Vec::new()),
    };
    let mut journal = setup.journal();
    let mut restored = Vec::new();
    for (path, before) in journal.iter() {
        tools.restore(path, before.as_deref()).map_err(|e| format!("cannot restore {path}: {e}"))?;
        restored.push(path.clone());
    }
    journal.clear();
    Ok(restored)
}
