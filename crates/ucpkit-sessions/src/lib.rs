//! Agent sessions over a UCM document.
//!
//! A [`SessionHost`] owns one document (through a `ucpkit_engine::Engine`
//! behind a lock) and many isolated [`Session`]s. Each session has a cursor
//! with breadcrumbs, a context window (`ucpkit_context::ContextWindow`) with
//! hard budgets, last results for `CTX ADD RESULTS`, a short-id map,
//! capabilities, limits, budgets, a circuit breaker and lock-free metrics.
//! Commands arrive as parsed UCL (`ucpkit_ucl::Command`) or as script text;
//! every command returns a typed [`Step`] with a compact text form, or a
//! typed [`AgentError`] with a stable code.
//!
//! The pipeline of one command: [`SessionHost::execute`] (rate limit,
//! session state, circuit breaker) → `executor` (short ids, permission,
//! budget, dispatch) → `navigate` (walks) or the window → [`Reply`].

mod cursor;
mod error;
mod executor;
mod host;
mod metrics;
mod navigate;
mod reply;
mod safety;
mod session;
mod view;

use std::fmt;

use serde::Serialize;

pub use cursor::{Cursor, Neighborhood, Repair};
pub use error::AgentError;
pub use host::SessionHost;
pub use metrics::{Metrics, MetricsSnapshot};
pub use navigate::{Filter, Indexes};
pub use reply::{Item, Reply, Stub};
pub use safety::{
    BudgetUsage, CircuitBreaker, CircuitState, Deadline, DepthGuard, DepthLevel, GlobalLimits, OperationBudget,
    SessionLimits, TokenBucket,
};
pub use session::{Capabilities, Session, SessionConfig, SessionId, SessionInfo, SessionState};
pub use ucpkit_search::{RagCapabilities, RagProvider, SearchError, SearchHit, SearchOptions};
pub use view::{BlockView, PREVIEW_CHARS};

/// The result of one command.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// The command keyword (`GOTO`, `CTX ADD` ...).
    pub command: &'static str,
    /// What it produced.
    pub reply: Reply,
    /// Warnings: budgets nearly spent, and blocks that edits deleted from
    /// under the session (cursor, breadcrumbs, last results).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.reply)?;
        for warning in &self.warnings {
            write!(f, "\nwarning: {warning}")?;
        }
        Ok(())
    }
}

/// One command of a script and what became of it.
#[derive(Debug)]
pub struct ScriptStep {
    /// 1-based line of the command.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The command as written.
    pub text: String,
    /// Its result.
    pub result: Result<Step, AgentError>,
}

/// The commands a script ran, up to and including the first failure, and
/// what its edits became.
#[derive(Debug, Default)]
pub struct ScriptReport {
    /// Commands run.
    pub steps: Vec<ScriptStep>,
    /// How its edits ended; `None` for a script with no edit command.
    pub end: Option<ucpkit_engine::ScriptEnd>,
}

impl ScriptReport {
    /// Whether every command succeeded and no transaction was left open.
    pub fn ok(&self) -> bool {
        self.steps.iter().all(|s| s.result.is_ok()) && !self.end.is_some_and(|end| end.open_transaction)
    }

    /// The first failed command and its error.
    pub fn failure(&self) -> Option<(&ScriptStep, &AgentError)> {
        self.steps.iter().find_map(|s| s.result.as_ref().err().map(|e| (s, e)))
    }
}

impl fmt::Display for ScriptReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.steps.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            match &step.result {
                Ok(done) => write!(f, "{}: {done}", step.line)?,
                Err(error) => write!(f, "{}: {} failed [{}]: {error}", step.line, step.text, error.code())?,
            }
        }
        match self.end {
            Some(end) if end.kept != ucpkit_engine::Kept::Everything => write!(f, "\n({})", end.kept.describe()),
            _ => Ok(()),
        }
    }
}
