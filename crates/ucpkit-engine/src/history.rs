//! The engine's history: snapshots (named full copies), transactions,
//! ATOMIC groups, and the scope of a script, whose edits stand or fall
//! together. Returning to an earlier state rewinds the document's
//! [`Mark`]s: it costs what changed since, never a copy of the document.

use std::collections::BTreeMap;

use serde::Serialize;
use ucpkit_core::{BlockId, Document, Mark, Snapshot};
use ucpkit_ucl::{Command, Snapshot as SnapshotCommand, Transaction, Value};

use crate::{form, Engine, EngineError, Outcome, SnapshotInfo};

/// What a snapshot listing says of `snapshot`.
fn info(snapshot: &Snapshot) -> SnapshotInfo {
    SnapshotInfo {
        name: snapshot.name.clone(),
        description: snapshot.description.clone(),
        created_ms: snapshot.created_ms,
        blocks: snapshot.blocks,
    }
}

/// The document `snapshot` holds.
fn document_of(snapshot: &Snapshot) -> Result<Document, EngineError> {
    Document::from_json(&snapshot.json)
        .map_err(|e| EngineError::SnapshotDamaged { name: snapshot.name.clone(), reason: e.to_string() })
}

/// Snapshots by name.
pub(crate) type Snapshots = BTreeMap<String, Snapshot>;

/// A point the document and its snapshots can return to.
pub(crate) struct State {
    mark: Mark,
    snapshots: Snapshots,
}

impl State {
    fn of(document: &mut Document, snapshots: &Snapshots) -> State {
        State { mark: document.mark(), snapshots: snapshots.clone() }
    }
}

/// An open transaction: what ROLLBACK returns to.
pub(crate) struct Checkpoint {
    name: Option<String>,
    state: State,
}

/// An open script (see [`Engine::begin_script`]).
#[derive(Default)]
pub(crate) struct ScriptScope {
    /// The state before the script's first edit command (taken then, so a
    /// script that only reads copies nothing).
    before: Option<State>,
    /// The state at the script's last COMMIT of an outermost transaction.
    committed: Option<State>,
    /// Whether a command that may change the document or its snapshots
    /// succeeded.
    touched: bool,
    /// Transactions already open when the script began (not its own).
    outer_transactions: usize,
}

/// What a script's edits became when it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kept {
    /// Every command succeeded: all its edits stand.
    Everything,
    /// A command failed, or the script ended with a transaction open: the
    /// document and snapshots are as they were at the script's last COMMIT.
    LastCommit,
    /// A command failed, or the script ended with a transaction open, and
    /// it committed nothing: the document and snapshots are as they were
    /// before the script.
    Nothing,
}

impl Kept {
    /// A short phrase for reports ("nothing saved" ...).
    pub fn describe(self) -> &'static str {
        match self {
            Kept::Everything => "every edit kept",
            Kept::LastCommit => "kept the state of the last COMMIT",
            Kept::Nothing => "nothing saved: no edit of the script was kept",
        }
    }
}

/// How a script ended (see [`Engine::finish_script`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ScriptEnd {
    /// What its edits became.
    pub kept: Kept,
    /// Whether the document or its snapshots differ from before the script
    /// (what a caller saves).
    pub changed: bool,
    /// Whether it ended with a transaction open (rolled back, like a failure).
    pub open_transaction: bool,
    /// When it was put back to the state before it: the version that state
    /// had, and the version it has now (moved on). What was saved at the
    /// first is still what the document holds.
    pub restored: Option<(u64, u64)>,
}

/// An engine-only script run (see [`Engine::run_script`]).
#[derive(Debug)]
pub struct ScriptRun {
    /// The outcomes of the commands that succeeded, in order.
    pub outcomes: Vec<Outcome>,
    /// The command that failed (its index in the script) and why.
    pub failure: Option<(usize, EngineError)>,
    /// What the script's edits became.
    pub end: ScriptEnd,
}

impl Engine {
    /// Opens a script: until [`Engine::finish_script`], the commands that
    /// run are one unit. When the script fails, its edits are undone back to
    /// its last COMMIT, or to before it — the one durability rule every
    /// front end follows.
    pub fn begin_script(&mut self) {
        self.script = Some(ScriptScope { outer_transactions: self.transactions.len(), ..ScriptScope::default() });
    }

    /// Whether a script is open.
    pub fn in_script(&self) -> bool {
        self.script.is_some()
    }

    /// Takes the state to return to before a script's first edit command.
    pub(crate) fn enter_edit(&mut self) {
        if let Some(script) = &mut self.script {
            if script.before.is_none() {
                script.before = Some(State::of(&mut self.document, &self.snapshots));
            }
        }
    }

    /// Notes that a command that may change the document succeeded.
    pub(crate) fn note_success(&mut self, command: &Command) {
        let reads_only = matches!(command, Command::Snapshot(SnapshotCommand::List | SnapshotCommand::Diff(..)));
        if let Some(script) = &mut self.script {
            script.touched |= !reads_only;
        }
    }

    /// Closes the open script. When it did not `succeed`, or left a
    /// transaction open, open transactions are dropped and the document and
    /// snapshots return to the script's last COMMIT, or to before it.
    /// The document's version moves on when it is put back, never back.
    pub fn finish_script(&mut self, succeeded: bool) -> ScriptEnd {
        let Some(script) = self.script.take() else {
            return ScriptEnd { kept: Kept::Everything, changed: false, open_transaction: false, restored: None };
        };
        let open_transaction = self.transactions.len() > script.outer_transactions;
        if succeeded && !open_transaction {
            if let Some(before) = script.before {
                self.document.keep(before.mark);
            }
            return ScriptEnd { kept: Kept::Everything, changed: script.touched, open_transaction, restored: None };
        }
        self.transactions.truncate(script.outer_transactions);
        match (script.committed, script.before) {
            (Some(committed), Some(before)) => {
                self.restore(committed);
                self.document.keep(before.mark);
                ScriptEnd { kept: Kept::LastCommit, changed: true, open_transaction, restored: None }
            }
            (None, Some(before)) => {
                let was = self.document.version_at(&before.mark);
                self.restore(before);
                let now = self.document.version();
                ScriptEnd { kept: Kept::Nothing, changed: false, open_transaction, restored: was.map(|was| (was, now)) }
            }
            (_, None) => ScriptEnd { kept: Kept::Nothing, changed: false, open_transaction, restored: None },
        }
    }

    /// Records that the document as it stands is what the store holds, so
    /// the next save writes only what changes from here (returning to an
    /// earlier state counts the blocks it puts back as changes).
    pub fn mark_saved(&mut self) {
        self.document.mark_saved();
    }

    /// Runs `commands` as one script: it stops at the first failure, and
    /// [`Engine::finish_script`] decides what its edits become.
    pub fn run_script(&mut self, commands: &[Command]) -> ScriptRun {
        self.begin_script();
        let mut outcomes = Vec::with_capacity(commands.len());
        let mut failure = None;
        for (index, command) in commands.iter().enumerate() {
            match self.execute(command) {
                Ok(outcome) => outcomes.push(outcome),
                Err(error) => {
                    failure = Some((index, error));
                    break;
                }
            }
        }
        let end = self.finish_script(failure.is_none());
        ScriptRun { outcomes, failure, end }
    }

    /// Puts the document and snapshots back to `state`. The version moves
    /// on, never back, so nothing keyed by version mistakes the restored
    /// document for a later one.
    fn restore(&mut self, state: State) {
        let version = self.document.version();
        self.put_back(state);
        self.document.advance_version_past(version);
    }

    /// Puts the document and snapshots back to `state`, version included:
    /// for undoing one command, whose passing states nobody saw.
    fn put_back(&mut self, state: State) {
        self.document.rewind(state.mark);
        self.snapshots = state.snapshots;
    }

    pub(crate) fn snapshot(&mut self, snapshot: &SnapshotCommand) -> Result<Outcome, EngineError> {
        let get = |snapshots: &Snapshots, name: &str| {
            snapshots.get(name).cloned().ok_or_else(|| EngineError::SnapshotNotFound(name.to_owned()))
        };
        match snapshot {
            SnapshotCommand::Create { name, properties } => {
                if self.snapshots.contains_key(name) {
                    return Err(EngineError::SnapshotExists(name.clone()));
                }
                let mut description = None;
                for (key, value) in properties {
                    match (key.to_ascii_lowercase().as_str(), value) {
                        ("description", Value::String(text)) => description = Some(text.clone()),
                        _ => {
                            return Err(EngineError::InvalidValue(format!(
                                "SNAPSHOT CREATE takes description=\"...\", not {key}={value}"
                            )))
                        }
                    }
                }
                let snapshot = Snapshot {
                    name: name.clone(),
                    description,
                    created_ms: (self.clock)(),
                    blocks: self.document.len(),
                    json: self.document.to_json(false).into(),
                };
                let note = format!("took snapshot {name:?} of {} blocks", snapshot.blocks);
                self.snapshots.insert(name.clone(), snapshot);
                Ok(Outcome::noted("SNAPSHOT CREATE", note))
            }
            SnapshotCommand::Restore(name) => {
                let mut restored = document_of(&get(&self.snapshots, name)?)?;
                // The snapshot was taken under the name the document had
                // then; it comes back under the one it has now.
                restored.set_name(self.document.name());
                let removed: Vec<BlockId> =
                    self.document.ordered_ids().into_iter().filter(|id| !restored.contains(*id)).collect();
                let created: Vec<BlockId> =
                    restored.ordered_ids().into_iter().filter(|id| !self.document.contains(*id)).collect();
                let version = self.document.version();
                self.document.replace(restored);
                self.document.advance_version_past(version);
                Ok(Outcome { created, removed, ..Outcome::noted("SNAPSHOT RESTORE", format!("restored {name:?}")) })
            }
            SnapshotCommand::Delete(name) => {
                self.snapshots.remove(name).ok_or_else(|| EngineError::SnapshotNotFound(name.clone()))?;
                Ok(Outcome::noted("SNAPSHOT DELETE", format!("deleted snapshot {name:?}")))
            }
            SnapshotCommand::List => {
                let snapshots: Vec<SnapshotInfo> = self.snapshots.values().map(info).collect();
                let note = if snapshots.is_empty() { Some("no snapshots".to_owned()) } else { None };
                Ok(Outcome { snapshots, note, ..Outcome::new("SNAPSHOT LIST") })
            }
            SnapshotCommand::Diff(a, b) => {
                let from = document_of(&get(&self.snapshots, a)?)?;
                let to = document_of(&get(&self.snapshots, b)?)?;
                Ok(Outcome { diff: Some(form::diff(&from, &to)), ..Outcome::new("SNAPSHOT DIFF") })
            }
        }
    }

    pub(crate) fn transaction(&mut self, transaction: &Transaction) -> Result<Outcome, EngineError> {
        if self.atomic_depth > 0 {
            return Err(EngineError::InvalidValue("transactions cannot be opened or closed inside ATOMIC".into()));
        }
        let check = |open: &[Checkpoint], named: &Option<String>| -> Result<(), EngineError> {
            let top = open.last().ok_or(EngineError::NoTransaction)?;
            if self.script.as_ref().is_some_and(|script| open.len() <= script.outer_transactions) {
                return Err(EngineError::InvalidValue(format!(
                    "transaction {} was opened before this script: end it with a command of its own",
                    top.name.as_deref().unwrap_or("(unnamed)")
                )));
            }
            match named {
                Some(name) if top.name.as_ref() != Some(name) => {
                    Err(EngineError::TransactionMismatch { open: top.name.clone(), named: name.clone() })
                }
                _ => Ok(()),
            }
        };
        match transaction {
            Transaction::Begin { name } => {
                let state = State::of(&mut self.document, &self.snapshots);
                self.transactions.push(Checkpoint { name: name.clone(), state });
                Ok(Outcome::noted("BEGIN TRANSACTION", "transaction open"))
            }
            Transaction::Commit { name } => {
                check(&self.transactions, name)?;
                let checkpoint = self.transactions.pop().expect("checked above");
                self.document.keep(checkpoint.state.mark);
                if let Some(script) = &mut self.script {
                    if self.transactions.len() == script.outer_transactions {
                        if let Some(earlier) = script.committed.take() {
                            self.document.keep(earlier.mark);
                        }
                        script.committed = Some(State::of(&mut self.document, &self.snapshots));
                    }
                }
                Ok(Outcome::noted("COMMIT", "committed"))
            }
            Transaction::Rollback { name } => {
                check(&self.transactions, name)?;
                let checkpoint = self.transactions.pop().expect("checked above");
                self.restore(checkpoint.state);
                Ok(Outcome::noted("ROLLBACK", "rolled back: the document is as it was at BEGIN"))
            }
        }
    }

    pub(crate) fn atomic(&mut self, commands: &[Command]) -> Result<Outcome, EngineError> {
        let before = State::of(&mut self.document, &self.snapshots);
        self.atomic_depth += 1;
        let mut group = Vec::with_capacity(commands.len());
        let mut failure = None;
        for (index, command) in commands.iter().enumerate() {
            match self.execute(command) {
                Ok(outcome) => group.push(outcome),
                Err(error) => {
                    failure = Some(EngineError::Atomic { index: index + 1, source: Box::new(error) });
                    break;
                }
            }
        }
        self.atomic_depth -= 1;
        if let Some(error) = failure {
            self.put_back(before);
            return Err(error);
        }
        self.document.keep(before.mark);
        Ok(Outcome { group, ..Outcome::new("ATOMIC") })
    }
}
