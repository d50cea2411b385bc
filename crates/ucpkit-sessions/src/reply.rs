//! Typed results of session commands, with a compact text form for agents
//! (few tokens, one line per block) and serde for programs.

use std::fmt;

use serde::Serialize;
use ucpkit_context::{Admitted, Representation, Stats};
use ucpkit_core::BlockId;
use ucpkit_engine::Outcome;
use ucpkit_ucl::RenderFormat;

use crate::view::BlockView;

/// A listed block with what the listing knows about it (edge type, score).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    /// The block.
    #[serde(flatten)]
    pub view: BlockView,
    /// Edge type, search score ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A block a budgeted listing could not show: what is there and its price.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stub {
    /// The block.
    pub id: BlockId,
    /// Its role.
    pub role: Option<String>,
    /// Descendants below it.
    pub below: usize,
    /// Tokens of the block and its descendants.
    pub tokens: usize,
}

/// What a session command produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    /// GOTO, BACK: the cursor moved.
    Moved {
        /// The block now under the cursor.
        at: BlockView,
        /// Breadcrumbs held.
        history: usize,
    },
    /// EXPAND, FOLLOW, FIND, SEARCH, PATH: a list of blocks (the session's
    /// new last results).
    Listing {
        /// The command.
        command: &'static str,
        /// Blocks shown.
        items: Vec<Item>,
        /// Blocks summarized as stubs (EXPAND with TOKENS).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        stubs: Vec<Stub>,
        /// Matches in all (more than shown when capped).
        total: usize,
    },
    /// VIEW of one block.
    View {
        /// The block.
        view: BlockView,
    },
    /// VIEW NEIGHBORHOOD.
    Neighborhood {
        /// The cursor's block.
        at: BlockView,
        /// Ancestors, nearest first.
        ancestors: Vec<BlockView>,
        /// Descendants down to the depth asked, in order.
        children: Vec<BlockView>,
        /// Siblings.
        siblings: Vec<BlockView>,
        /// Edge neighbours with edge type and direction (`->` outgoing).
        connections: Vec<Item>,
    },
    /// VIEW MAP: the repository map around what the session looks at.
    Map {
        /// The map: files, each with its key symbols' signatures.
        text: String,
        /// Its tokens.
        tokens: usize,
        /// The files shown, best first.
        files: Vec<String>,
    },
    /// CTX ADD/REMOVE/CLEAR/EXPAND/COMPRESS/PRUNE/FOCUS: how the window changed.
    Context {
        /// The command.
        command: &'static str,
        /// Blocks added or reopened, with their representation.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        added: Vec<Admitted>,
        /// Blocks that left (removed, pruned, evicted).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        removed: Vec<BlockId>,
        /// Blocks whose representation changed (COMPRESS).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        changed: Vec<BlockId>,
        /// Candidates that did not fit even as stubs (CTX EXPAND).
        #[serde(skip_serializing_if = "is_zero")]
        omitted: usize,
        /// Window tokens after.
        tokens: usize,
        /// Window blocks after.
        blocks: usize,
        /// The token budget.
        max_tokens: usize,
        /// The focus after.
        #[serde(skip_serializing_if = "Option::is_none")]
        focus: Option<BlockId>,
    },
    /// CTX RENDER.
    Rendered {
        /// The format.
        format: RenderFormat,
        /// Tokens of the text.
        tokens: usize,
        /// The window as text.
        text: String,
    },
    /// CTX STATS.
    Stats {
        /// The figures.
        stats: Box<Stats>,
    },
    /// An edit run through the engine.
    Edit {
        /// What it did.
        outcome: Outcome,
    },
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Reply {
    /// Block ids a later `CTX ADD RESULTS` should add, if this reply has results.
    pub fn results(&self) -> Option<Vec<BlockId>> {
        match self {
            Reply::Listing { items, .. } => Some(items.iter().map(|i| i.view.id).collect()),
            _ => None,
        }
    }
}

impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Moved { at, history } => write!(f, "at {at}{}", if *history > 0 { "" } else { " (no history)" }),
            Reply::Listing { command, items, stubs, total } => {
                write!(f, "{command}: {total} block{}", if *total == 1 { "" } else { "s" })?;
                if items.len() + stubs.len() < *total {
                    write!(f, ", {} shown", items.len() + stubs.len())?;
                }
                for item in items {
                    write!(f, "\n  {}", item.view)?;
                    if let Some(note) = &item.note {
                        write!(f, " · {note}")?;
                    }
                }
                for stub in stubs {
                    write!(
                        f,
                        "\n  {} {} stub · {} below · {} tok",
                        stub.id,
                        stub.role.as_deref().unwrap_or("block"),
                        stub.below,
                        stub.tokens
                    )?;
                }
                Ok(())
            }
            Reply::View { view } => write!(f, "{view}"),
            Reply::Map { text, tokens, files } => {
                if files.is_empty() {
                    return write!(f, "MAP: no source files in the document");
                }
                write!(f, "MAP: {} files, {tokens} tok\n{}", files.len(), text.trim_end())
            }
            Reply::Neighborhood { at, ancestors, children, siblings, connections } => {
                write!(f, "at {at}")?;
                let mut group = |name: &str, views: &[BlockView]| -> fmt::Result {
                    if !views.is_empty() {
                        write!(f, "\n{name}:")?;
                        for view in views {
                            write!(f, "\n  {view}")?;
                        }
                    }
                    Ok(())
                };
                group("ancestors", ancestors)?;
                group("children", children)?;
                group("siblings", siblings)?;
                if !connections.is_empty() {
                    write!(f, "\nedges:")?;
                    for item in connections {
                        write!(f, "\n  {} {}", item.note.as_deref().unwrap_or(""), item.view)?;
                    }
                }
                Ok(())
            }
            Reply::Context { command, added, removed, changed, omitted, tokens, blocks, max_tokens, focus } => {
                write!(f, "{command}:")?;
                if !added.is_empty() {
                    let shrunk = added.iter().filter(|a| a.representation != Representation::Full).count();
                    write!(f, " +{}", added.len())?;
                    if shrunk > 0 {
                        write!(f, " ({shrunk} as stub/truncated)")?;
                    }
                }
                if !removed.is_empty() {
                    write!(f, " -{}", removed.len())?;
                }
                if !changed.is_empty() {
                    write!(f, " ~{}", changed.len())?;
                }
                if *omitted > 0 {
                    write!(f, " ({omitted} did not fit)")?;
                }
                write!(f, " → {blocks} blocks, {tokens}/{max_tokens} tokens")?;
                if let Some(focus) = focus {
                    write!(f, ", focus {focus}")?;
                }
                Ok(())
            }
            Reply::Rendered { text, .. } => f.write_str(text.trim_end()),
            Reply::Stats { stats } => write!(f, "{stats}"),
            Reply::Edit { outcome } => write!(f, "{outcome}"),
        }
    }
}
