//! The typed errors of agent operations, each with a stable code.

use std::time::Duration;

use ucpkit_context::WindowError;
use ucpkit_core::BlockId;
use ucpkit_engine::EngineError;

/// Why an agent operation was refused. A refused operation changes nothing.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgentError {
    /// No session has this id or name.
    #[error("session {0} not found")]
    SessionNotFound(String),
    /// The session timed out.
    #[error("session {0} expired after inactivity; open a new one")]
    SessionExpired(String),
    /// The session was closed.
    #[error("session {0} is closed")]
    SessionClosed(String),
    /// The engine holds as many sessions as it may.
    #[error("the engine already holds the maximum of {0} sessions")]
    MaxSessionsReached(usize),
    /// A session of this name exists.
    #[error("a session named {0:?} already exists")]
    SessionExists(String),
    /// The block does not exist.
    #[error("block {0} not found")]
    BlockNotFound(BlockId),
    /// A reference that names no block (unknown label, short id ...).
    #[error("{0}")]
    BadReference(String),
    /// PATH found no path.
    #[error("no path from {from} to {to}{}", max.map(|m| format!(" within {m} steps")).unwrap_or_default())]
    NoPath {
        /// Start.
        from: BlockId,
        /// End.
        to: BlockId,
        /// The MAX given.
        max: Option<usize>,
    },
    /// BACK with fewer breadcrumbs than steps.
    #[error("cannot go back {requested} steps: the history holds {available}")]
    EmptyHistory {
        /// Steps asked for.
        requested: usize,
        /// Breadcrumbs held.
        available: usize,
    },
    /// A walk deeper than allowed.
    #[error("depth {requested} exceeds the limit of {max}")]
    DepthLimitExceeded {
        /// Depth asked for or reached.
        requested: usize,
        /// The limit.
        max: usize,
    },
    /// An operation budget is spent.
    #[error("{budget} budget exhausted: {used} of {limit} used")]
    BudgetExhausted {
        /// Which budget (`traversal_ops`, `search_ops`, `blocks_read`).
        budget: &'static str,
        /// Used so far.
        used: u64,
        /// The limit.
        limit: u64,
    },
    /// Too many operations per second across the engine.
    #[error("rate limit: more than {0} operations per second; retry shortly")]
    RateLimitExceeded(u32),
    /// The operation ran out of time.
    #[error("operation timed out after {0:?}")]
    OperationTimeout(Duration),
    /// The session's circuit breaker is open after repeated failures.
    #[error("circuit open after {failures} consecutive failures; retry in {retry_in_ms} ms")]
    CircuitOpen {
        /// Consecutive failures that opened it.
        failures: u32,
        /// Milliseconds until it lets a trial command through.
        retry_in_ms: i64,
    },
    /// SEARCH without a search provider.
    #[error("no search provider: this engine has no search index (SEARCH needs one; FIND works without)")]
    SearchNotConfigured,
    /// The search provider failed.
    #[error("search failed: {0}")]
    SearchFailed(String),
    /// The session's capabilities do not allow the operation.
    #[error("operation not permitted: {0}")]
    NotPermitted(String),
    /// CTX ADD RESULTS with no stored results.
    #[error("no results available: run SEARCH, FIND, EXPAND, FOLLOW or PATH first")]
    NoResults,
    /// UCL that does not parse.
    #[error("{rendered}")]
    Parse {
        /// Every error with its caret snippet.
        rendered: String,
        /// The first error's 1-based line.
        line: usize,
        /// The first error's 1-based column (characters).
        column: usize,
    },
    /// A request argument out of its range (a zero budget ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A FIND pattern that is not a regular expression.
    #[error("invalid pattern {pattern:?}: {reason}")]
    InvalidPattern {
        /// The pattern.
        pattern: String,
        /// What is wrong.
        reason: String,
    },
    /// The window refused a change.
    #[error("{0}")]
    Window(WindowError),
    /// The engine refused an edit.
    #[error("{0}")]
    Edit(EngineError),
}

impl AgentError {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            AgentError::SessionNotFound(_) => "session_not_found",
            AgentError::SessionExpired(_) => "session_expired",
            AgentError::SessionClosed(_) => "session_closed",
            AgentError::MaxSessionsReached(_) => "max_sessions",
            AgentError::SessionExists(_) => "session_exists",
            AgentError::BlockNotFound(_) => "block_not_found",
            AgentError::BadReference(_) => "bad_reference",
            AgentError::NoPath { .. } => "no_path",
            AgentError::EmptyHistory { .. } => "empty_history",
            AgentError::DepthLimitExceeded { .. } => "depth_limit",
            AgentError::BudgetExhausted { .. } => "budget_exhausted",
            AgentError::RateLimitExceeded(_) => "rate_limit",
            AgentError::OperationTimeout(_) => "timeout",
            AgentError::CircuitOpen { .. } => "circuit_open",
            AgentError::SearchNotConfigured => "search_not_configured",
            AgentError::SearchFailed(_) => "search_failed",
            AgentError::NotPermitted(_) => "not_permitted",
            AgentError::NoResults => "no_results",
            AgentError::Parse { .. } => "parse",
            AgentError::InvalidPattern { .. } => "invalid_pattern",
            AgentError::InvalidArgument(_) => "invalid_argument",
            AgentError::Window(WindowError::NotInWindow(_)) => "not_in_window",
            AgentError::Window(WindowError::BlockNotFound(_)) => "block_not_found",
            AgentError::Window(WindowError::ContextLimitExceeded { .. }) => "context_limit",
            AgentError::Edit(e) => e.code(),
        }
    }
}

impl From<WindowError> for AgentError {
    fn from(error: WindowError) -> Self {
        AgentError::Window(error)
    }
}

impl From<EngineError> for AgentError {
    fn from(error: EngineError) -> Self {
        match error {
            EngineError::BlockNotFound(id) => AgentError::BlockNotFound(id),
            other => AgentError::Edit(other),
        }
    }
}
