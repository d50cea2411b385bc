//! One agent's isolated state: cursor, context window, last results, short
//! id map, capabilities, limits, budget use, circuit breaker and metrics.

use serde::{Deserialize, Serialize};
use ucpkit_context::{ContextWindow, PruningPolicy, WindowConfig};
use ucpkit_core::{BlockId, Document};
use ucpkit_ucl::{IdMapper, Reason};
use uuid::Uuid;

use crate::cursor::Cursor;
use crate::metrics::{Metrics, MetricsSnapshot};
use crate::safety::{BudgetUsage, CircuitBreaker, SessionLimits};

/// A session's id.
pub type SessionId = Uuid;

/// What a session may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Capabilities {
    /// GOTO, BACK, EXPAND, FOLLOW, PATH, FIND, VIEW.
    pub can_traverse: bool,
    /// SEARCH.
    pub can_search: bool,
    /// CTX commands that change the window.
    pub can_modify_context: bool,
    /// Edit commands (EDIT, APPEND, MOVE, DELETE, LINK ...).
    pub can_edit: bool,
    /// Sharing discoveries with other sessions.
    pub can_coordinate: bool,
}

impl Default for Capabilities {
    fn default() -> Self {
        Capabilities {
            can_traverse: true,
            can_search: true,
            can_modify_context: true,
            can_edit: true,
            can_coordinate: true,
        }
    }
}

impl Capabilities {
    /// Everything but edits.
    pub fn read_only() -> Self {
        Capabilities { can_edit: false, ..Capabilities::default() }
    }
}

/// Life cycle of a session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// Running commands.
    #[default]
    Active,
    /// Closed by its owner.
    Closed,
    /// Timed out.
    Expired,
}

/// How to open a session.
#[derive(Debug, Clone, Default)]
pub struct SessionConfig {
    /// A name to find it by (unique in the engine).
    pub name: Option<String>,
    /// The task relevance is measured against.
    pub task: Option<String>,
    /// Limits.
    pub limits: SessionLimits,
    /// Capabilities (all by default).
    pub capabilities: Capabilities,
    /// How the window evicts.
    pub policy: PruningPolicy,
    /// Opened by the engine for its own work (the orchestrator's
    /// sub-agents), not by a client: it does not count against
    /// `GlobalLimits::max_sessions`, which bounds client sessions.
    pub internal: bool,
}

/// A session, and its persistent form: serialized, it is everything that
/// makes it (cursor, history, window, id map, results, budgets, counters),
/// so it opens again exactly.
#[derive(Debug, Serialize, Deserialize)]
pub struct Session {
    pub(crate) id: SessionId,
    pub(crate) name: Option<String>,
    pub(crate) state: SessionState,
    pub(crate) cursor: Cursor,
    pub(crate) window: ContextWindow,
    pub(crate) last_results: Vec<BlockId>,
    pub(crate) last_reason: Reason,
    pub(crate) ids: IdMapper,
    pub(crate) capabilities: Capabilities,
    pub(crate) limits: SessionLimits,
    pub(crate) usage: BudgetUsage,
    pub(crate) breaker: CircuitBreaker,
    #[serde(with = "crate::metrics::as_snapshot")]
    pub(crate) metrics: Metrics,
    pub(crate) created_ms: i64,
    /// Not a client's: not counted against `max_sessions` (never saved:
    /// only clients' sessions are).
    #[serde(skip)]
    pub(crate) internal: bool,
    pub(crate) last_active_ms: i64,
}

impl Session {
    pub(crate) fn new(config: SessionConfig, now_ms: i64) -> Self {
        let window_config = WindowConfig {
            max_tokens: config.limits.max_context_tokens,
            max_blocks: config.limits.max_context_blocks,
            policy: config.policy,
            ..WindowConfig::default()
        };
        let mut window = ContextWindow::new(window_config);
        window.set_task_text(config.task.as_deref());
        Session {
            id: Uuid::new_v4(),
            name: config.name,
            state: SessionState::Active,
            cursor: Cursor::default(),
            window,
            last_results: Vec::new(),
            last_reason: Reason::AgentDecision,
            ids: IdMapper::new(),
            capabilities: config.capabilities,
            limits: config.limits,
            usage: BudgetUsage::default(),
            breaker: CircuitBreaker::default(),
            metrics: Metrics::default(),
            created_ms: now_ms,
            internal: config.internal,
            last_active_ms: now_ms,
        }
    }

    /// Forgets the blocks the document no longer has (edits by this or
    /// another session): the cursor leaves a deleted block for its nearest
    /// surviving ancestor, and dead breadcrumbs and last results are
    /// dropped. Returns one note per change, for the reply's warnings.
    pub(crate) fn forget_deleted(&mut self, doc: &Document) -> Vec<String> {
        let mut notes = Vec::new();
        let repair = self.cursor.repair(doc);
        if let Some((from, to)) = repair.moved {
            notes.push(format!("the cursor's block {from} was deleted; the cursor moved to {to}"));
        }
        if repair.dropped_breadcrumbs > 0 {
            notes.push(format!("{} breadcrumb(s) to deleted blocks dropped", repair.dropped_breadcrumbs));
        }
        let before = self.last_results.len();
        self.last_results.retain(|id| doc.contains(*id));
        if self.last_results.len() < before {
            notes.push(format!("{} deleted block(s) dropped from the last results", before - self.last_results.len()));
        }
        notes
    }

    /// The session's id.
    pub fn id(&self) -> SessionId {
        self.id
    }

    /// Its name.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Its state.
    pub fn state(&self) -> SessionState {
        self.state
    }

    /// The cursor.
    pub fn cursor(&self) -> &Cursor {
        &self.cursor
    }

    /// The context window.
    pub fn window(&self) -> &ContextWindow {
        &self.window
    }

    /// Blocks the last listing returned.
    pub fn last_results(&self) -> &[BlockId] {
        &self.last_results
    }

    /// The short-id map.
    pub fn ids(&self) -> &IdMapper {
        &self.ids
    }

    /// What it may do.
    pub fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    /// Its limits.
    pub fn limits(&self) -> &SessionLimits {
        &self.limits
    }

    /// Budget spent.
    pub fn usage(&self) -> BudgetUsage {
        self.usage
    }

    /// Its circuit breaker.
    pub fn breaker(&self) -> &CircuitBreaker {
        &self.breaker
    }

    /// Its counters.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.metrics.snapshot()
    }

    /// A short description.
    pub fn info(&self) -> SessionInfo {
        SessionInfo {
            id: self.id,
            name: self.name.clone(),
            state: self.state,
            cursor: self.cursor.position(),
            context_blocks: self.window.len(),
            context_tokens: self.window.tokens(),
            commands: self.metrics.snapshot().commands,
            created_ms: self.created_ms,
            last_active_ms: self.last_active_ms,
        }
    }

    /// Gives the session other capabilities (a stored session opened by a
    /// read-only server gets the server's).
    pub fn set_capabilities(&mut self, capabilities: Capabilities) {
        self.capabilities = capabilities;
    }
}

/// A session as listed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionInfo {
    /// Its id.
    pub id: SessionId,
    /// Its name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its state.
    pub state: SessionState,
    /// Where its cursor is.
    pub cursor: BlockId,
    /// Blocks in its window.
    pub context_blocks: usize,
    /// Tokens in its window.
    pub context_tokens: usize,
    /// Commands run.
    pub commands: u64,
    /// When it was opened.
    pub created_ms: i64,
    /// When it last ran a command.
    pub last_active_ms: i64,
}

impl Clone for Session {
    fn clone(&self) -> Self {
        Session {
            id: self.id,
            name: self.name.clone(),
            state: self.state,
            cursor: self.cursor.clone(),
            window: self.window.clone(),
            last_results: self.last_results.clone(),
            last_reason: self.last_reason,
            ids: self.ids.clone(),
            capabilities: self.capabilities,
            limits: self.limits.clone(),
            usage: self.usage,
            breaker: self.breaker.clone(),
            metrics: Metrics::from_snapshot(&self.metrics.snapshot()),
            created_ms: self.created_ms,
            internal: self.internal,
            last_active_ms: self.last_active_ms,
        }
    }
}
