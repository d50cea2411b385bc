//! A snapshot: a named full copy of a document, as the engine takes it and
//! the store keeps it beside the document.

use std::sync::Arc;

/// A named full copy of a document.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// When it was taken (ms since the Unix epoch).
    pub created_ms: i64,
    /// Number of blocks in it.
    pub blocks: usize,
    /// The document's JSON form.
    pub json: Arc<str>,
}
