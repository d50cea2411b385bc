//! What a document holds: counts by role and edge type, and blocks found by
//! id or `@label`.

use std::collections::BTreeMap;

use serde::Serialize;
use ucm_core::{BlockId, Document};

use crate::WorkspaceError;

/// Counts over one document.
#[derive(Debug, Clone, Serialize)]
pub struct DocumentStats {
    /// Its name.
    pub name: String,
    /// Its title.
    pub title: Option<String>,
    /// The encoding its tokens were counted with.
    pub tokenizer: Option<String>,
    /// Its version (a counter bumped by every change).
    pub version: u64,
    /// Blocks, the root included.
    pub blocks: usize,
    /// Tokens over all blocks.
    pub tokens: u64,
    /// Edges.
    pub edges: usize,
    /// Levels below the root of the deepest block.
    pub max_depth: usize,
    /// Blocks per role (`none` for blocks without one).
    pub blocks_by_role: BTreeMap<String, u64>,
    /// Tokens per role.
    pub tokens_by_role: BTreeMap<String, u64>,
    /// Edges per type.
    pub edges_by_type: BTreeMap<String, u64>,
    /// Problems validation finds (cycles, orphans, dangling edges ...).
    pub validation_issues: usize,
}

/// Counts blocks, tokens and edges of `doc`.
pub fn stats(doc: &Document) -> DocumentStats {
    let mut blocks_by_role: BTreeMap<String, u64> = BTreeMap::new();
    let mut tokens_by_role: BTreeMap<String, u64> = BTreeMap::new();
    for block in doc.blocks() {
        let role = block.role().map_or("none".to_owned(), ToString::to_string);
        *blocks_by_role.entry(role.clone()).or_default() += 1;
        *tokens_by_role.entry(role).or_default() += u64::from(block.metadata.tokens.unwrap_or(0));
    }
    let mut edges_by_type: BTreeMap<String, u64> = BTreeMap::new();
    for edge in doc.edges().iter() {
        *edges_by_type.entry(edge.edge_type.to_string()).or_default() += 1;
    }
    DocumentStats {
        name: doc.name().to_owned(),
        title: doc.metadata.title.clone(),
        tokenizer: doc.metadata.tokenizer.clone(),
        version: doc.version(),
        blocks: doc.len(),
        tokens: tokens_by_role.values().sum(),
        edges: doc.edges().len(),
        max_depth: max_depth(doc),
        blocks_by_role,
        tokens_by_role,
        edges_by_type,
        validation_issues: doc.validate().issues.len(),
    }
}

fn max_depth(doc: &Document) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(doc.root(), 0usize)];
    while let Some((id, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        stack.extend(doc.children(id).iter().map(|c| (*c, depth + 1)));
    }
    deepest
}

/// The block `reference` names: a full id (`blk_...`) or `@label`.
pub fn find_block(doc: &Document, reference: &str) -> Result<BlockId, WorkspaceError> {
    if let Some(label) = reference.strip_prefix('@') {
        let mut matches = doc.blocks().filter(|b| b.metadata.label.as_deref() == Some(label)).map(|b| b.id);
        return match (matches.next(), matches.count()) {
            (Some(one), 0) => Ok(one),
            (None, _) => Err(WorkspaceError::Invalid(format!("no block is labelled {label:?}"))),
            (Some(_), more) => {
                Err(WorkspaceError::Invalid(format!("{} blocks are labelled {label:?}; use an id", more + 1)))
            }
        };
    }
    let id: BlockId = reference.parse().map_err(|e| WorkspaceError::Invalid(format!("{e}")))?;
    if !doc.contains(id) {
        return Err(WorkspaceError::Invalid(format!("block {id} not found in document {}", doc.name())));
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucm_core::{Block, Content, Metadata};

    fn doc() -> (Document, BlockId) {
        let mut doc = Document::new("notes");
        let metadata = Metadata { label: Some("intro".into()), ..Metadata::default() };
        let id = Block::derive_id(&Content::plain("hi"), None, "", 0);
        doc.append_child(doc.root(), Block::new(id, Content::plain("hi"), metadata)).unwrap();
        (doc, id)
    }

    #[test]
    fn blocks_are_found_by_label_or_id_and_misses_say_why() {
        let (doc, id) = doc();
        assert_eq!(find_block(&doc, "@intro").unwrap(), id);
        assert_eq!(find_block(&doc, &id.to_string()).unwrap(), id);
        assert!(find_block(&doc, "@nope").unwrap_err().to_string().contains("no block is labelled \"nope\""));
        let missing = "blk_ffffffffffffffffffffffff";
        assert!(find_block(&doc, missing).unwrap_err().to_string().contains("not found in document notes"));
    }

    #[test]
    fn stats_count_blocks_by_role_and_depth() {
        let (doc, _) = doc();
        let stats = stats(&doc);
        assert_eq!((stats.blocks, stats.max_depth, stats.edges, stats.validation_issues), (2, 1, 0, 0));
        assert_eq!(stats.blocks_by_role["none"], 2);
    }
}
