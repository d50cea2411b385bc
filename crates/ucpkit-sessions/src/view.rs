//! Views of blocks in the five modes: `ids` (id and role), `metadata` (+
//! label, tags, tokens, children, edges), `preview` (+ the first characters),
//! `full` (+ the whole text) and `adaptive` (chosen per block from its
//! similarity to the session task).

use std::fmt::{self, Write as _};
use ucpkit_core::outline;

use serde::Serialize;
use ucpkit_context::Task;
use ucpkit_core::{Block, BlockId, Document};
use ucpkit_ucl::ViewMode;

/// Characters a preview shows.
pub const PREVIEW_CHARS: usize = 100;

/// Task similarity from which adaptive views show a block in full.
pub const ADAPTIVE_FULL: f64 = 0.5;
/// Task similarity from which adaptive views show a preview.
pub const ADAPTIVE_PREVIEW: f64 = 0.2;

/// One block as a view shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockView {
    /// The block.
    pub id: BlockId,
    /// The mode it is shown in (adaptive resolves to one of the others).
    pub mode: ViewMode,
    /// Its role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Its label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Its tags.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Its token count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u32>,
    /// Number of children.
    pub children: usize,
    /// Number of edges, both directions.
    pub edges: usize,
    /// The text shown (preview or full).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Levels below (positive) or above (negative) the block it was reached from.
    #[serde(skip_serializing_if = "is_zero")]
    pub depth: i32,
}

impl BlockView {
    /// A view of block `id` with its id alone: what is shown of a block a
    /// partial document lists but does not hold, and what a view fills in.
    pub fn absent(id: BlockId, mode: ViewMode) -> Self {
        BlockView {
            id,
            mode,
            role: None,
            label: None,
            tags: Vec::new(),
            tokens: None,
            children: 0,
            edges: 0,
            text: None,
            depth: 0,
        }
    }
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// A view of `block` in `mode`; `adaptive` uses the task.
pub fn view(doc: &Document, block: &Block, mode: ViewMode, task: Option<&Task>) -> BlockView {
    let mode = match mode {
        ViewMode::Adaptive => adaptive_mode(block, task),
        other => other,
    };
    let edges = doc.edges();
    let mut view = BlockView { role: block.role().map(|r| r.as_str().to_owned()), ..BlockView::absent(block.id, mode) };
    if mode == ViewMode::Ids {
        return view;
    }
    view.label.clone_from(&block.metadata.label);
    view.tags.clone_from(&block.metadata.tags);
    view.tokens = block.metadata.tokens;
    view.children = doc.children(block.id).len();
    view.edges = edges.outgoing(block.id).len() + edges.incoming(block.id).len();
    view.text = match mode {
        ViewMode::Preview => Some(block.preview(PREVIEW_CHARS)),
        ViewMode::Full => Some(outline::full_body(block)),
        _ => None,
    };
    view
}

/// The mode adaptive views choose for a block.
fn adaptive_mode(block: &Block, task: Option<&Task>) -> ViewMode {
    let Some(task) = task else { return ViewMode::Preview };
    let similarity = task.similarity(&block.plain_text());
    if similarity >= ADAPTIVE_FULL {
        ViewMode::Full
    } else if similarity >= ADAPTIVE_PREVIEW {
        ViewMode::Preview
    } else {
        ViewMode::Ids
    }
}

impl fmt::Display for BlockView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = String::with_capacity(64);
        for _ in 0..self.depth.unsigned_abs() {
            line.push_str("  ");
        }
        let role = match &self.role {
            Some(role) => role.as_str(),
            None if self.id.is_root() => "root",
            None => "block",
        };
        let _ = write!(line, "{} {role}", self.id);
        if self.mode != ViewMode::Ids {
            if let Some(label) = &self.label {
                let _ = write!(line, " @{label}");
            }
            for tag in &self.tags {
                let _ = write!(line, " #{tag}");
            }
            if let Some(tokens) = self.tokens {
                let _ = write!(line, " · {tokens} tok");
            }
            if self.children > 0 {
                let _ = write!(line, " · {} children", self.children);
            }
            if self.edges > 0 {
                let _ = write!(line, " · {} edges", self.edges);
            }
        }
        f.write_str(&line)?;
        match (self.mode, &self.text) {
            (ViewMode::Preview, Some(text)) if !text.is_empty() => write!(f, " · {text}"),
            (ViewMode::Full, Some(text)) => write!(f, "\n{text}"),
            _ => Ok(()),
        }
    }
}
