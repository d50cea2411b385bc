//! Rendering the window in document order, grouped under heading paths, and
//! the token accounting that mirrors it exactly.
//!
//! The layout is computed the same way for counting and for writing: walk
//! the entries in document order, write a `§ path` header whenever an
//! entry's heading path differs from the one the reader is under (a heading
//! entry puts the reader under itself), then the entry's segment.

use crate::{IdMapper, RenderFormat};
use serde::Serialize;
use ucpkit_core::outline;
use ucpkit_core::{BlockId, Document};

use crate::entry::Entry;
use crate::segment;
use crate::window::{ContextWindow, Env};

/// One step of the layout.
enum Item<'a> {
    Header(&'a [BlockId], Option<&'a str>),
    Entry(&'a Entry),
}

/// The layout of entries in document order.
fn layout<'a>(doc: &Document, entries: &'a [Entry]) -> Vec<Item<'a>> {
    let mut items = Vec::with_capacity(entries.len() * 2);
    let mut under: Vec<BlockId> = Vec::new();
    let mut occasion: Option<&str> = None;
    for entry in entries {
        let titled = doc.get(entry.id).and_then(outline::title).is_some();
        // A titled block (heading, file) opens its own section, so stepping
        // back up to one of its ancestors' paths needs no header.
        let returns_to_ancestor = titled && under.starts_with(&entry.path);
        let moved = entry.path != under && !returns_to_ancestor;
        if moved || entry.occasion.as_deref() != occasion {
            items.push(Item::Header(&entry.path, entry.occasion.as_deref()));
        }
        occasion = entry.occasion.as_deref();
        under.clone_from(&entry.path);
        items.push(Item::Entry(entry));
        if titled {
            under.push(entry.id);
        }
    }
    items
}

impl ContextWindow {
    /// Recomputes the token total from cached entry and header counts.
    pub(crate) fn recount(&mut self, env: &Env) {
        let mut total = 0;
        let mut missing = Vec::new();
        for item in layout(env.doc, &self.entries) {
            match item {
                Item::Entry(entry) => total += entry.tokens,
                Item::Header(path, occasion) => {
                    let key = (path.to_vec(), occasion.map(str::to_owned));
                    match self.header_tokens.get(&key) {
                        Some(n) => total += n,
                        None => missing.push(key),
                    }
                }
            }
        }
        for key in missing {
            let n = *self.header_tokens.entry(key).or_insert_with_key(|(path, occasion)| {
                env.tokenizer.count(&segment::header(env.doc, path, occasion.as_deref()))
            });
            total += n;
        }
        self.total_tokens = total;
    }

    /// The window as text: identical windows give identical bytes. Short
    /// ids are assigned in `ids`, which the session keeps so later commands
    /// can use them.
    pub fn render(&self, env: &Env, format: RenderFormat, ids: &mut IdMapper) -> String {
        self.render_parts(env, format, ids).into_iter().map(|part| part.text).collect()
    }

    /// The rendering as its parts in order (group headers and entries):
    /// their texts joined are [`ContextWindow::render`]'s text. A context
    /// merged from several windows picks and joins parts.
    pub fn render_parts(&self, env: &Env, format: RenderFormat, ids: &mut IdMapper) -> Vec<RenderedPart> {
        let builder = self.builder(env);
        let mut parts = Vec::new();
        for item in layout(env.doc, &self.entries) {
            match item {
                Item::Header(path, occasion) => {
                    let text = segment::header(env.doc, path, occasion);
                    parts.push(RenderedPart { entry: None, group: text.clone(), text })
                }
                Item::Entry(entry) => {
                    let Some(shown) = builder.show(entry.id, entry.representation) else { continue };
                    let text = match format {
                        RenderFormat::Default => segment::entry_segment(&entry.id.to_string(), &shown),
                        RenderFormat::ShortIds => segment::entry_segment(&ids.short(entry.id).to_string(), &shown),
                        RenderFormat::Markdown => segment::markdown_segment(&shown),
                    };
                    let group = segment::header(env.doc, &entry.path, entry.occasion.as_deref());
                    parts.push(RenderedPart { entry: Some(entry.id), group, text });
                }
            }
        }
        parts
    }

    /// Counts of the window for CTX STATS.
    pub fn stats(&self, env: &Env) -> Stats {
        let mut stats = Stats {
            blocks: self.entries.len(),
            tokens: self.total_tokens,
            max_tokens: self.config.max_tokens,
            max_blocks: self.config.max_blocks,
            focus: self.focus,
            task: self.task().map(str::to_owned),
            policy: format!("{:?}", self.config.policy),
            removed: self.removed.clone(),
            recent: self.log.iter().rev().take(10).cloned().collect(),
            ..Stats::default()
        };
        for representation in crate::Representation::ALL {
            stats.by_representation.insert(representation.as_str().to_owned(), 0);
        }
        let mut relevance = 0.0;
        for entry in &self.entries {
            relevance += self.score(env, entry);
            *stats.by_reason.entry(entry.reason.as_str().to_owned()).or_default() += 1;
            let role = env.doc.get(entry.id).and_then(|b| b.role()).map_or("none", |r| r.as_str()).to_owned();
            *stats.by_role.entry(role).or_default() += 1;
            *stats.by_representation.entry(entry.representation.as_str().to_owned()).or_default() += 1;
            *stats.by_depth.entry(entry.order.len()).or_default() += 1;
        }
        if !self.entries.is_empty() {
            stats.average_relevance = relevance / self.entries.len() as f64;
        }
        stats
    }
}

/// One part of a rendered window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedPart {
    /// The entry it shows; `None` for a group header (`§ a > b`).
    pub entry: Option<BlockId>,
    /// The header line of the group it belongs to (the entry's own heading
    /// path, even where the rendering writes no header before it).
    pub group: String,
    /// Its text.
    pub text: String,
}

/// What CTX STATS reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Entries.
    pub blocks: usize,
    /// Tokens of the default rendering.
    pub tokens: usize,
    /// Token budget.
    pub max_tokens: usize,
    /// Block budget.
    pub max_blocks: usize,
    /// Mean current relevance.
    pub average_relevance: f64,
    /// The focus block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus: Option<BlockId>,
    /// The task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The pruning policy.
    pub policy: String,
    /// Entries by inclusion reason.
    pub by_reason: std::collections::BTreeMap<String, usize>,
    /// Entries by block role.
    pub by_role: std::collections::BTreeMap<String, usize>,
    /// Entries by representation (all four always present).
    pub by_representation: std::collections::BTreeMap<String, usize>,
    /// Entries by depth in the document.
    pub by_depth: std::collections::BTreeMap<usize, usize>,
    /// Entries that left or shrank, by action, since the window was made.
    pub removed: std::collections::BTreeMap<String, usize>,
    /// The last changes, newest first (each id can be added back).
    pub recent: Vec<crate::window::Change>,
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let join = |map: &std::collections::BTreeMap<String, usize>| {
            map.iter().filter(|(_, n)| **n > 0).map(|(k, n)| format!("{k}={n}")).collect::<Vec<_>>().join(" ")
        };
        write!(
            f,
            "{} blocks, {}/{} tokens (max {} blocks), relevance {:.2}; {}; reasons: {}; roles: {}",
            self.blocks,
            self.tokens,
            self.max_tokens,
            self.max_blocks,
            self.average_relevance,
            join(&self.by_representation),
            join(&self.by_reason),
            join(&self.by_role)
        )?;
        if !self.removed.is_empty() {
            write!(f, "; changes: {}", join(&self.removed))?;
        }
        Ok(())
    }
}
