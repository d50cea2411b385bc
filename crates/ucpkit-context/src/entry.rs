//! One block in the window: why it is there, how relevant it is, how it is
//! represented and what that costs.

use crate::Reason;
use serde::{Deserialize, Serialize};
use ucpkit_core::BlockId;

/// How a block is shown in the window. Every representation keeps the id, so
/// any of them can be opened back to `Full` exactly (the window never holds
/// altered text, only a choice of how much of the block to show).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Representation {
    /// The block exactly as the source wrote it.
    Full,
    /// The head of the block.
    Truncated,
    /// A summary from the window's [`crate::Summarizer`].
    Summary,
    /// A stub: title, descendants and the price of opening it.
    StructureOnly,
}

impl Representation {
    /// The name used in stats and results.
    pub fn as_str(self) -> &'static str {
        match self {
            Representation::Full => "full",
            Representation::Truncated => "truncated",
            Representation::Summary => "summary",
            Representation::StructureOnly => "structure_only",
        }
    }

    /// All representations, fullest first.
    pub const ALL: [Representation; 4] =
        [Representation::Full, Representation::Truncated, Representation::Summary, Representation::StructureOnly];
}

/// The base relevance of an inclusion reason.
pub fn base_score(reason: Reason) -> f64 {
    match reason {
        Reason::DirectReference | Reason::SystemRequired => 1.0,
        Reason::UserPreference => 0.9,
        Reason::SemanticRelevance => 0.8,
        Reason::NavigationPath => 0.7,
        Reason::StructuralContext => 0.6,
        Reason::AgentDecision => 0.5,
    }
}

/// A block in the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The block.
    pub id: BlockId,
    /// Why it was added.
    pub reason: Reason,
    /// The agent's own words for why, when it gave free text
    /// (`CTX ADD <id> REASON="..."`, classified as agent_decision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Stated relevance (0..1): the RELEVANCE given, or the reason's base score.
    pub relevance: f64,
    /// How it is shown.
    pub representation: Representation,
    /// Tokens of its rendered segment (id line and body) in the default format.
    pub tokens: usize,
    /// Tokens of the block shown in full (what opening it costs).
    pub full_tokens: usize,
    /// When it was added (ms since the Unix epoch).
    pub added_ms: i64,
    /// When it was last added, opened or expanded from.
    pub accessed_ms: i64,
    /// How many times it was touched.
    pub access_count: u32,
    /// Document order key: child indices from the root.
    #[serde(skip)]
    pub(crate) order: Vec<u32>,
    /// Titled ancestors (headings, files, folders), outermost first.
    #[serde(skip)]
    pub(crate) path: Vec<BlockId>,
    /// Its session and time, for a block that records them
    /// ([`ucpkit_core::outline::occasion`]).
    #[serde(skip)]
    pub(crate) occasion: Option<String>,
    /// Lexical similarity to the session task, when there is one.
    #[serde(skip)]
    pub(crate) task_score: Option<f64>,
}
