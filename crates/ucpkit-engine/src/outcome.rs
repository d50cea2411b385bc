//! Typed results of executed commands, with a compact text form for agents
//! and serde for programs.

use std::fmt;

use serde::Serialize;
use ucpkit_core::BlockId;

/// What one command did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Outcome {
    /// The command keyword (`EDIT`, `SNAPSHOT LIST` ...).
    pub command: &'static str,
    /// Blocks the command created.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<BlockId>,
    /// Blocks whose content, metadata or position changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub modified: Vec<BlockId>,
    /// Blocks the command removed (or, for a dry run, would remove).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<BlockId>,
    /// Edges added.
    #[serde(skip_serializing_if = "is_zero")]
    pub edges_added: usize,
    /// Edges removed.
    #[serde(skip_serializing_if = "is_zero")]
    pub edges_removed: usize,
    /// Whether the document is unchanged because this was a dry run.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// A note: why nothing changed, what a transaction did, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Snapshots listed by SNAPSHOT LIST.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub snapshots: Vec<SnapshotInfo>,
    /// The comparison made by SNAPSHOT DIFF.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<SnapshotDiff>,
    /// Outcomes of the commands of an ATOMIC group.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub group: Vec<Outcome>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Outcome {
    pub(crate) fn new(command: &'static str) -> Self {
        Outcome { command, ..Outcome::default() }
    }

    pub(crate) fn noted(command: &'static str, note: impl Into<String>) -> Self {
        Outcome { command, note: Some(note.into()), ..Outcome::default() }
    }

    /// Whether the command changed the document.
    pub fn changed(&self) -> bool {
        !self.dry_run
            && (!self.created.is_empty()
                || !self.modified.is_empty()
                || !self.removed.is_empty()
                || self.edges_added + self.edges_removed > 0
                || self.group.iter().any(Outcome::changed))
    }
}

/// A snapshot as listed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SnapshotInfo {
    /// Its name.
    pub name: String,
    /// Its description, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// When it was taken (ms since the Unix epoch).
    pub created_ms: i64,
    /// Blocks in it.
    pub blocks: usize,
}

/// Differences between two snapshots (`from` → `to`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SnapshotDiff {
    /// Blocks only in `to`.
    pub added: Vec<BlockId>,
    /// Blocks only in `from`.
    pub removed: Vec<BlockId>,
    /// Blocks in both whose content or metadata differ.
    pub modified: Vec<BlockId>,
    /// Blocks in both under another parent.
    pub moved: Vec<BlockId>,
    /// Edges only in `to`.
    pub edges_added: usize,
    /// Edges only in `from`.
    pub edges_removed: usize,
}

/// Lists at most this many ids in the text form.
const SHOWN_IDS: usize = 5;

fn write_ids(f: &mut fmt::Formatter<'_>, verb: &str, ids: &[BlockId]) -> fmt::Result {
    if ids.is_empty() {
        return Ok(());
    }
    write!(f, " {verb} {}", ids.len())?;
    f.write_str(if ids.len() == 1 { " block" } else { " blocks" })?;
    let shown: Vec<String> = ids.iter().take(SHOWN_IDS).map(ToString::to_string).collect();
    write!(f, " ({}", shown.join(", "))?;
    if ids.len() > SHOWN_IDS {
        write!(f, ", … {} more", ids.len() - SHOWN_IDS)?;
    }
    f.write_str(")")
}

impl fmt::Display for Outcome {
    /// One line per command (`EDIT ok: modified 1 block (blk_…)`), plus
    /// indented lines for listings, diffs and ATOMIC groups.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}:", self.command, if self.dry_run { "dry run" } else { "ok" })?;
        let before = self.changed() || self.dry_run;
        write_ids(f, "created", &self.created)?;
        write_ids(f, "modified", &self.modified)?;
        write_ids(f, if self.dry_run { "would remove" } else { "removed" }, &self.removed)?;
        if self.edges_added > 0 {
            write!(f, " +{} edge{}", self.edges_added, if self.edges_added == 1 { "" } else { "s" })?;
        }
        if self.edges_removed > 0 {
            write!(f, " -{} edge{}", self.edges_removed, if self.edges_removed == 1 { "" } else { "s" })?;
        }
        if let Some(note) = &self.note {
            write!(f, " {note}")?;
        } else if !before && self.snapshots.is_empty() && self.diff.is_none() && self.group.is_empty() {
            f.write_str(" no change")?;
        }
        for snapshot in &self.snapshots {
            let blocks = if snapshot.blocks == 1 { "block" } else { "blocks" };
            let taken = chrono::DateTime::from_timestamp_millis(snapshot.created_ms).map_or_else(
                || format!("{} ms", snapshot.created_ms),
                |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
            );
            write!(f, "\n  {:?} {} {blocks}, taken {taken}", snapshot.name, snapshot.blocks)?;
            if let Some(description) = &snapshot.description {
                write!(f, ": {description}")?;
            }
        }
        if let Some(diff) = &self.diff {
            write!(f, "\n ")?;
            write_ids(f, "added", &diff.added)?;
            write_ids(f, "removed", &diff.removed)?;
            write_ids(f, "modified", &diff.modified)?;
            write_ids(f, "moved", &diff.moved)?;
            write!(f, " edges +{} -{}", diff.edges_added, diff.edges_removed)?;
        }
        for inner in &self.group {
            let text = inner.to_string().replace('\n', "\n  ");
            write!(f, "\n  {text}")?;
        }
        Ok(())
    }
}
