//! UCL scripts in a session, under the one durability rule, and their
//! report in the forms front ends print.

use std::fmt::Write as _;

use serde::Serialize;
use ucpkit_engine::Kept;
use ucpkit_sessions::{MetricsSnapshot, ScriptReport, SessionId, Step};

use crate::library::{lock, Library, Workspace};
use crate::WorkspaceError;

/// A script that ran, and whether the document was written afterwards.
#[derive(Debug)]
pub struct ScriptRun {
    /// Every command that ran, up to and including the first failure, and
    /// what the script's edits became.
    pub report: ScriptReport,
    /// Whether the document was written to the store.
    pub written: bool,
    /// The session's counters after the script (commands, errors, blocks
    /// read, time ...).
    pub metrics: MetricsSnapshot,
}

impl Library {
    /// Runs UCL `source` in `session`, stopping at the first failed
    /// command; then saves the session when it is named, and the document
    /// when its edits stand (one transaction). The rule every front end
    /// follows: a script's edits stand together; when a command fails, or
    /// a transaction is left open, they are undone back to the script's
    /// last COMMIT, or to before it; the session's cursor, window and
    /// results keep what the commands before the failure did. A script that
    /// does not parse runs nothing.
    pub fn run_script(
        &self,
        workspace: &Workspace,
        session: SessionId,
        source: &str,
    ) -> Result<ScriptRun, WorkspaceError> {
        let report = workspace.traversal().run_script(session, source)?;
        if let Some((was, now)) = report.end.and_then(|end| end.restored) {
            workspace.note_unchanged(was, now);
        }
        let written = self.save_session(workspace, session)?;
        let metrics = workspace.traversal().with_session(session, |s| s.metrics())?;
        Ok(ScriptRun { report, written, metrics })
    }
}

impl Library {
    /// Runs `source` in a session of document `name` (the named session
    /// `named` as stored, else a new one, with `options`) like
    /// [`Library::run_script`]; when another writer changed the document in
    /// between, loads it again and runs the script again on it (UCL
    /// scripts replay), up to `attempts` times in all. Returns the
    /// workspace and session it ran in last, and that run. When this
    /// library does not hold the document and the script edits only blocks
    /// it names by id, only those and what is next to them are read
    /// (`script_part`): the returned workspace then holds that part.
    pub fn run_script_replayed(
        &self,
        name: &str,
        named: Option<&str>,
        options: &crate::NewSession,
        source: &str,
        attempts: usize,
    ) -> Result<(std::sync::Arc<Workspace>, SessionId, ScriptRun), WorkspaceError> {
        if !lock(&self.loaded).contains_key(name) {
            if let Some(run) = self.run_script_on_part(name, named, options, source, attempts)? {
                return Ok(run);
            }
        }
        crate::replayed(attempts, || {
            let workspace = self.workspace(name)?;
            let session = match named {
                Some(named) => self.open_named(&workspace, named, options)?,
                None => self.create_session(&workspace, options)?,
            };
            match self.run_script(&workspace, session, source) {
                Err(conflict) if conflict.is_conflict() => {
                    // The stale copy was dropped; its session goes with it, unsaved.
                    let _ = workspace.traversal().close_session(session);
                    Err(conflict)
                }
                run => run.map(|run| (workspace, session, run)),
            }
        })
    }
}

/// One command of a script as the JSON report lists it.
#[derive(Serialize)]
struct JsonStep<'a> {
    line: usize,
    column: usize,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Step>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'static str>,
}

impl ScriptRun {
    /// Whether every command succeeded (and no transaction was left open).
    pub fn ok(&self) -> bool {
        self.report.ok()
    }

    /// What the script's edits became: kept, kept to the last COMMIT, or
    /// none (a script without edits keeps everything it did).
    pub fn kept(&self) -> Kept {
        self.report.end.map_or(Kept::Everything, |end| end.kept)
    }

    /// The replies of the commands that succeeded, `line: reply` each; an
    /// edit the script's failure undid says so.
    pub fn transcript(&self) -> String {
        let steps = &self.report.steps;
        let undone_from = match self.kept() {
            Kept::Everything => steps.len(),
            Kept::Nothing => 0,
            Kept::LastCommit => last_outermost_commit(steps).map_or(0, |at| at + 1),
        };
        let mut out = String::new();
        for (at, step) in steps.iter().enumerate() {
            if let Ok(done) = &step.result {
                let edited = matches!(&done.reply, ucpkit_sessions::Reply::Edit { outcome } if outcome.changed());
                let undone = if at >= undone_from && edited { " (undone: the script failed)" } else { "" };
                let _ = writeln!(out, "{}: {done}{undone}", step.line);
            }
        }
        out
    }

    /// Why the script failed, and what became of its edits, in one line;
    /// `None` when it succeeded.
    pub fn failure(&self) -> Option<String> {
        let kept = match self.kept() {
            Kept::Everything => "no edit was undone",
            kept => kept.describe(),
        };
        if let Some((step, error)) = self.report.failure() {
            return Some(format!(
                "line {}, column {}: {} failed [{}]: {error}; the rest did not run; {kept}",
                step.line,
                step.column,
                step.text,
                error.code()
            ));
        }
        self.report
            .end
            .filter(|end| end.open_transaction)
            .map(|_| format!("the script ended with a transaction still open; it was rolled back; {kept}"))
    }

    /// The report as JSON: `ok`, `kept`, `written`, the session's `metrics`,
    /// and every command with its line, column, text, and result or error
    /// and code.
    pub fn to_json(&self) -> serde_json::Value {
        let steps: Vec<JsonStep> = self
            .report
            .steps
            .iter()
            .map(|s| JsonStep {
                line: s.line,
                column: s.column,
                text: &s.text,
                result: s.result.as_ref().ok(),
                error: s.result.as_ref().err().map(ToString::to_string),
                code: s.result.as_ref().err().map(ucpkit_sessions::AgentError::code),
            })
            .collect();
        serde_json::json!({
            "ok": self.ok(),
            "kept": self.kept(),
            "written": self.written,
            "metrics": self.metrics,
            "steps": steps,
        })
    }
}

/// The step of the last COMMIT that closed one of the script's outermost
/// transactions (what a failed script returns to).
fn last_outermost_commit(steps: &[ucpkit_sessions::ScriptStep]) -> Option<usize> {
    let mut depth = 0usize;
    let mut last = None;
    for (at, step) in steps.iter().enumerate() {
        match step.result.as_ref().map(|done| done.command) {
            Ok("BEGIN TRANSACTION") => depth += 1,
            Ok("ROLLBACK") => depth = depth.saturating_sub(1),
            Ok("COMMIT") => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    last = Some(at);
                }
            }
            _ => {}
        }
    }
    last
}
