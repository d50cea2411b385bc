//! Limits and the mechanisms that enforce them: operation budgets, an RAII
//! depth guard, a per-session circuit breaker and an engine-wide token
//! bucket.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::AgentError;

/// Per-session limits (defaults in docs/sessions.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionLimits {
    /// Token budget of the context window.
    pub max_context_tokens: usize,
    /// Block budget of the context window.
    pub max_context_blocks: usize,
    /// Deepest EXPAND / VIEW NEIGHBORHOOD / walk.
    pub max_expand_depth: usize,
    /// Most results one operation returns.
    pub max_results_per_operation: usize,
    /// Inactivity after which the session expires, in milliseconds.
    pub session_timeout_ms: i64,
    /// Breadcrumbs kept for BACK.
    pub max_history: usize,
    /// Operation budgets over the session's life.
    pub budget: OperationBudget,
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            max_context_tokens: 8000,
            max_context_blocks: 200,
            max_expand_depth: 10,
            max_results_per_operation: 100,
            session_timeout_ms: 30 * 60 * 1000,
            max_history: 100,
            budget: OperationBudget::default(),
        }
    }
}

/// How much a session may do over its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OperationBudget {
    /// Traversal and context commands.
    pub traversal_ops: u64,
    /// SEARCH commands.
    pub search_ops: u64,
    /// Blocks read (visited by walks, shown by views).
    pub blocks_read: u64,
}

impl Default for OperationBudget {
    fn default() -> Self {
        OperationBudget { traversal_ops: 1_000_000, search_ops: 100_000, blocks_read: 100_000_000 }
    }
}

/// What a session has spent of its budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetUsage {
    /// Traversal and context commands run.
    pub traversal_ops: u64,
    /// SEARCH commands run.
    pub search_ops: u64,
    /// Blocks read.
    pub blocks_read: u64,
}

/// Share of a budget after which results carry a warning.
const WARN_AT: f64 = 0.8;

impl BudgetUsage {
    /// Fails when spending `ops`/`searches` more would exceed the budget.
    pub fn check(&self, budget: &OperationBudget, ops: u64, searches: u64) -> Result<(), AgentError> {
        let over = |name, used: u64, more: u64, limit: u64| {
            if used + more > limit {
                Err(AgentError::BudgetExhausted { budget: name, used, limit })
            } else {
                Ok(())
            }
        };
        over("traversal_ops", self.traversal_ops, ops, budget.traversal_ops)?;
        over("search_ops", self.search_ops, searches, budget.search_ops)?;
        over("blocks_read", self.blocks_read, 0, budget.blocks_read)
    }

    /// Names of budgets past the warning mark.
    pub fn warnings(&self, budget: &OperationBudget) -> Vec<&'static str> {
        let near = |used: u64, limit: u64| used as f64 >= limit as f64 * WARN_AT;
        [
            ("traversal_ops", near(self.traversal_ops, budget.traversal_ops)),
            ("search_ops", near(self.search_ops, budget.search_ops)),
            ("blocks_read", near(self.blocks_read, budget.blocks_read)),
        ]
        .into_iter()
        .filter_map(|(name, near)| near.then_some(name))
        .collect()
    }
}

/// Engine-wide limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GlobalLimits {
    /// Most open sessions.
    pub max_sessions: usize,
    /// Most context blocks over all sessions.
    pub max_total_context_blocks: usize,
    /// Token-bucket rate over all sessions.
    pub max_ops_per_second: u32,
    /// Longest one operation may run, in milliseconds.
    pub operation_timeout_ms: u64,
    /// Consecutive failures that open a session's circuit breaker.
    pub circuit_failure_threshold: u32,
    /// Time an open breaker waits before a trial, in milliseconds.
    pub circuit_recovery_ms: i64,
    /// Successes in half-open state that close the breaker.
    pub circuit_success_threshold: u32,
}

impl Default for GlobalLimits {
    fn default() -> Self {
        GlobalLimits {
            max_sessions: 50,
            max_total_context_blocks: 50_000,
            max_ops_per_second: 2000,
            operation_timeout_ms: 60_000,
            circuit_failure_threshold: 5,
            circuit_recovery_ms: 30_000,
            circuit_success_threshold: 3,
        }
    }
}

/// Bounds the depth of a recursive walk; each level holds a [`DepthLevel`]
/// whose drop leaves the level.
#[derive(Debug)]
pub struct DepthGuard {
    current: AtomicUsize,
    max: usize,
}

/// One entered level of a [`DepthGuard`].
#[derive(Debug)]
pub struct DepthLevel<'a>(&'a DepthGuard);

impl DepthGuard {
    /// A guard allowing `max` nested levels.
    pub fn new(max: usize) -> Self {
        DepthGuard { current: AtomicUsize::new(0), max }
    }

    /// Enters one level deeper, or fails past the maximum.
    pub fn enter(&self) -> Result<DepthLevel<'_>, AgentError> {
        let depth = self.current.fetch_add(1, Ordering::Relaxed) + 1;
        if depth > self.max {
            self.current.fetch_sub(1, Ordering::Relaxed);
            return Err(AgentError::DepthLimitExceeded { requested: depth, max: self.max });
        }
        Ok(DepthLevel(self))
    }

    /// Levels entered now.
    pub fn depth(&self) -> usize {
        self.current.load(Ordering::Relaxed)
    }
}

impl Drop for DepthLevel<'_> {
    fn drop(&mut self) {
        self.0.current.fetch_sub(1, Ordering::Relaxed);
    }
}

/// State of a circuit breaker.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CircuitState {
    /// Commands run.
    #[default]
    Closed,
    /// Commands are refused until the recovery time has passed.
    Open,
    /// Trial commands run; enough successes close it, a failure reopens it.
    HalfOpen,
}

/// Opens after consecutive failures, so a looping agent stops burning
/// budget; recovers through half-open trials.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CircuitBreaker {
    state: CircuitState,
    failures: u32,
    successes: u32,
    opened_ms: i64,
}

impl CircuitBreaker {
    /// The current state (as of the last call).
    pub fn state(&self) -> CircuitState {
        self.state
    }

    /// Whether a command may run now; moves open → half-open when the
    /// recovery time has passed.
    pub fn allow(&mut self, limits: &GlobalLimits, now_ms: i64) -> Result<(), AgentError> {
        if self.state == CircuitState::Open {
            let ready_at = self.opened_ms + limits.circuit_recovery_ms;
            if now_ms < ready_at {
                return Err(AgentError::CircuitOpen { failures: self.failures, retry_in_ms: ready_at - now_ms });
            }
            self.state = CircuitState::HalfOpen;
            self.successes = 0;
        }
        Ok(())
    }

    /// Records the outcome of a command that was allowed.
    pub fn record(&mut self, success: bool, limits: &GlobalLimits, now_ms: i64) {
        match (self.state, success) {
            (CircuitState::HalfOpen, true) => {
                self.successes += 1;
                if self.successes >= limits.circuit_success_threshold {
                    *self = CircuitBreaker::default();
                }
            }
            (CircuitState::HalfOpen, false) => {
                self.state = CircuitState::Open;
                self.opened_ms = now_ms;
            }
            (_, true) => self.failures = 0,
            (_, false) => {
                self.failures += 1;
                if self.failures >= limits.circuit_failure_threshold {
                    self.state = CircuitState::Open;
                    self.opened_ms = now_ms;
                }
            }
        }
    }
}

/// An engine-wide token bucket: `rate` operations per second with bursts
/// of up to one second's worth.
#[derive(Debug)]
pub struct TokenBucket {
    rate: u32,
    state: Mutex<(f64, i64)>,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(rate: u32, now_ms: i64) -> Self {
        TokenBucket { rate, state: Mutex::new((f64::from(rate), now_ms)) }
    }

    /// Takes one token, or fails when the bucket is empty.
    pub fn take(&self, now_ms: i64) -> Result<(), AgentError> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (tokens, last) = *state;
        let rate = f64::from(self.rate);
        let refilled = (tokens + (now_ms - last).max(0) as f64 * rate / 1000.0).min(rate);
        if refilled < 1.0 {
            *state = (refilled, now_ms.max(last));
            return Err(AgentError::RateLimitExceeded(self.rate));
        }
        *state = (refilled - 1.0, now_ms.max(last));
        Ok(())
    }
}

/// A point in time after which a long operation gives up.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    start: web_time::Instant,
    limit: Duration,
}

impl Deadline {
    /// A deadline `limit` from now.
    pub fn after(limit: Duration) -> Self {
        Deadline { start: web_time::Instant::now(), limit }
    }

    /// Fails once the deadline has passed. Walks call this every few
    /// thousand steps.
    pub fn check(&self) -> Result<(), AgentError> {
        if self.start.elapsed() > self.limit {
            Err(AgentError::OperationTimeout(self.limit))
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_guard_releases_levels_on_drop() {
        let guard = DepthGuard::new(2);
        {
            let _a = guard.enter().unwrap();
            let _b = guard.enter().unwrap();
            assert!(matches!(guard.enter(), Err(AgentError::DepthLimitExceeded { requested: 3, max: 2 })));
            assert_eq!(guard.depth(), 2);
        }
        assert_eq!(guard.depth(), 0);
    }

    #[test]
    fn breaker_opens_half_opens_and_closes() {
        let limits =
            GlobalLimits { circuit_failure_threshold: 3, circuit_recovery_ms: 1000, ..GlobalLimits::default() };
        let mut breaker = CircuitBreaker::default();
        for _ in 0..3 {
            breaker.allow(&limits, 0).unwrap();
            breaker.record(false, &limits, 0);
        }
        assert_eq!(breaker.state(), CircuitState::Open);
        assert!(matches!(breaker.allow(&limits, 500), Err(AgentError::CircuitOpen { retry_in_ms: 500, .. })));
        breaker.allow(&limits, 1000).unwrap();
        assert_eq!(breaker.state(), CircuitState::HalfOpen);
        breaker.record(false, &limits, 1000);
        assert_eq!(breaker.state(), CircuitState::Open, "a failed trial reopens");
        breaker.allow(&limits, 2000).unwrap();
        for _ in 0..3 {
            breaker.record(true, &limits, 2000);
        }
        assert_eq!(breaker.state(), CircuitState::Closed);
    }

    #[test]
    fn token_bucket_refills_at_its_rate() {
        let bucket = TokenBucket::new(10, 0);
        for _ in 0..10 {
            bucket.take(0).unwrap();
        }
        assert!(matches!(bucket.take(0), Err(AgentError::RateLimitExceeded(10))));
        bucket.take(100).unwrap();
        assert!(bucket.take(100).is_err());
    }

    #[test]
    fn budgets_refuse_and_warn() {
        let budget = OperationBudget { traversal_ops: 10, search_ops: 1, blocks_read: 100 };
        let usage = BudgetUsage { traversal_ops: 9, search_ops: 1, blocks_read: 0 };
        assert!(usage.check(&budget, 1, 0).is_ok());
        assert!(matches!(usage.check(&budget, 1, 1), Err(AgentError::BudgetExhausted { budget: "search_ops", .. })));
        assert_eq!(usage.warnings(&budget), ["traversal_ops", "search_ops"]);
    }
}
