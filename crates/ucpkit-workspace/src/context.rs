//! The main job: the best context for a question within a token budget.

use std::sync::Arc;

use ucpkit_orchestrator::policy::{HeuristicPolicy, Policy};
use ucpkit_orchestrator::{BuiltContext, ContextRequest, Orchestrator, OrchestratorConfig, Scope};
use ucpkit_ucl::RenderFormat;

use crate::library::{Library, Workspace};
use crate::{SearchRequest, WorkspaceError};

/// The budget of a context when none is asked for, in tokens.
pub const DEFAULT_BUDGET: usize = ContextRequest::DEFAULT_BUDGET;

/// The smallest budget a context may have ([`ContextRequest::MIN_BUDGET`]).
pub const MIN_BUDGET: usize = ContextRequest::MIN_BUDGET;

/// A question and how its context is built.
#[derive(Debug, Clone)]
pub struct ContextOptions {
    /// The question.
    pub question: String,
    /// Most tokens of the context (counted exactly, o200k).
    pub budget: usize,
    /// How the context is rendered.
    pub format: RenderFormat,
    /// Sub-agents exploring at once (default: the number of cores).
    pub agents: Option<usize>,
    /// What the context may hold (everything, or source code only).
    pub scope: Scope,
    /// The traversal policy its sub-agents follow (the built-in heuristic
    /// when `None`; an LLM policy plugs in here).
    pub policy: Option<SharedPolicy>,
}

/// A traversal policy shared between contexts.
#[derive(Clone)]
pub struct SharedPolicy(pub Arc<dyn Policy>);

impl std::fmt::Debug for SharedPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedPolicy({})", self.0.name())
    }
}

impl ContextOptions {
    /// `question` within [`DEFAULT_BUDGET`] tokens, as markdown.
    pub fn new(question: impl Into<String>) -> Self {
        ContextOptions {
            question: question.into(),
            budget: DEFAULT_BUDGET,
            format: RenderFormat::Markdown,
            agents: None,
            scope: Scope::All,
            policy: None,
        }
    }

    /// The orchestrator's request, or why these options cannot make one
    /// (an empty question, a budget out of range).
    pub fn request(&self) -> Result<ContextRequest, WorkspaceError> {
        let request = ContextRequest::asked(&self.question, self.budget).map_err(WorkspaceError::Invalid)?;
        Ok(ContextRequest { format: self.format, scope: self.scope, ..request })
    }

    /// The orchestrator these options ask for.
    pub fn orchestrator(&self) -> Orchestrator {
        let mut config = OrchestratorConfig::default();
        if let Some(agents) = self.agents {
            config.agents = agents.max(1);
        }
        let policy = match &self.policy {
            Some(SharedPolicy(policy)) => Arc::clone(policy),
            None => Arc::new(HeuristicPolicy::default()),
        };
        Orchestrator::new(policy, config)
    }
}

impl Library {
    /// Builds the context for `options.question` in `workspace`: search,
    /// sub-agents exploring the sections around the hits, one window.
    pub fn context(&self, workspace: &Workspace, options: &ContextOptions) -> Result<BuiltContext, WorkspaceError> {
        let request = options.request()?;
        let built = options.orchestrator().context(workspace.traversal(), &request)?;
        if built.blocks.is_empty() && built.hits > 0 {
            // Blocks match, none fits: say so, and how much would.
            let hits =
                workspace.search(&SearchRequest { limit: 20, ..SearchRequest::new(options.question.clone()) })?;
            if let Some(smallest) = hits.results.iter().map(|hit| hit.tokens).min() {
                return Err(WorkspaceError::NothingFits { budget: options.budget, smallest });
            }
        }
        Ok(built)
    }
}
