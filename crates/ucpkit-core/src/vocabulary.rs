//! The context window's vocabulary: why a block is in it, how it
//! expands, compresses and renders. UCL's CTX commands name these and the
//! window (`ucpkit-context`) acts on them; both take them from here, so the
//! language stands below the window.

use serde::{Deserialize, Serialize};

/// Why a block is in the context window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The agent named it.
    DirectReference,
    /// A search found it.
    SemanticRelevance,
    /// It frames other blocks (parent, heading).
    StructuralContext,
    /// It lies on a path the agent walked.
    NavigationPath,
    /// A person asked for it.
    UserPreference,
    /// The agent's own choice.
    AgentDecision,
    /// The system needs it.
    SystemRequired,
}

/// Direction of CTX EXPAND.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CtxDirection {
    /// Ancestors of window blocks.
    Up,
    /// Children of window blocks.
    Down,
    /// Ancestors, then children.
    Both,
    /// Semantically related blocks.
    Semantic,
    /// Chosen by the window.
    Auto,
}

/// How CTX COMPRESS shrinks blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompressMethod {
    /// Cut long blocks.
    Truncate,
    /// Replace with a summary.
    Summarize,
    /// Keep only structure.
    StructureOnly,
}

/// How CTX RENDER writes the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RenderFormat {
    /// Ids and content.
    Default,
    /// Short integer ids instead of full ones.
    ShortIds,
    /// Markdown.
    Markdown,
}

impl RenderFormat {
    /// The format named `markdown`, `default` or `short_ids`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "markdown" => Some(RenderFormat::Markdown),
            "default" => Some(RenderFormat::Default),
            "short_ids" => Some(RenderFormat::ShortIds),
            _ => None,
        }
    }
}

impl Reason {
    /// The reason's name as UCL and stats write it (`direct_reference` ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::DirectReference => "direct_reference",
            Reason::SemanticRelevance => "semantic_relevance",
            Reason::StructuralContext => "structural_context",
            Reason::NavigationPath => "navigation_path",
            Reason::UserPreference => "user_preference",
            Reason::AgentDecision => "agent_decision",
            Reason::SystemRequired => "system_required",
        }
    }
}
