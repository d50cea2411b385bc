//! What a document holds: counts by role and edge type, blocks found by id
//! or `@label`, and one block's view read from the store alone.

use std::collections::BTreeMap;

use serde::Serialize;
use ucpkit_core::{Block, BlockId, Document};

use crate::library::Library;
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

/// One block with its place in the document, as a view shows it.
#[derive(Debug, Clone)]
pub struct BlockView {
    /// The block.
    pub block: Block,
    /// Its parent (`None` for the root and orphans).
    pub parent: Option<BlockId>,
    /// How many children it has.
    pub children: usize,
    /// How many edges leave it.
    pub edges_out: usize,
    /// How many edges reach it.
    pub edges_in: usize,
}

impl Library {
    /// Block `reference` (a full id or `@label`) of stored document `name`
    /// (the default one when `None`), read from the store alone: a
    /// one-shot view costs little whatever the document's size.
    pub fn view(&self, name: Option<&str>, reference: &str) -> Result<BlockView, WorkspaceError> {
        let store = self.store()?;
        let name = store.resolve_name(name.or(self.config.document.as_deref()))?;
        let id = match reference.strip_prefix('@') {
            Some(label) => one_labelled(label, store.labelled(&name, label)?.into_iter())?,
            None => reference.parse().map_err(|e| WorkspaceError::Invalid(format!("{e}")))?,
        };
        let (excerpt, _) = store.read_excerpt(&name, &[id])?;
        let block = excerpt.get(id).cloned().ok_or_else(|| not_found(id, &name))?;
        let (edges_out, edges_in) = store.edge_counts(&name, id)?;
        Ok(BlockView { block, parent: excerpt.parent(id), children: excerpt.children(id).len(), edges_out, edges_in })
    }
}

/// A block with the blocks below it, as `ucp view --mode section` shows it.
#[derive(Debug, Clone)]
pub struct SectionView {
    /// The block itself.
    pub view: BlockView,
    /// The block's text and the text of the blocks below it, in document
    /// order, each as written, separated by blank lines.
    pub text: String,
    /// Blocks in `text`.
    pub blocks: usize,
    /// Whether every block below it fit (else `text` stops at a block
    /// boundary).
    pub complete: bool,
}

/// Most blocks read below a section's block.
const SECTION_BLOCKS: usize = 5000;

impl Library {
    /// Block `reference` of stored document `name` with its section: the
    /// text of the blocks below it in document order, within `max_tokens`
    /// (whole blocks only), read from the store alone.
    pub fn view_section(
        &self,
        name: Option<&str>,
        reference: &str,
        max_tokens: usize,
    ) -> Result<SectionView, WorkspaceError> {
        let view = self.view(name, reference)?;
        let id = view.block.id;
        let (excerpt, _) = {
            let store = self.store()?;
            let name = store.resolve_name(name.or(self.config.document.as_deref()))?;
            store.read_section(&name, id, SECTION_BLOCKS)?
        };
        let tokenizer = self.tokenizer();
        let mut text = String::new();
        let (mut tokens, mut blocks, mut complete) = (0, 0, true);
        let mut stack = vec![id];
        while let Some(at) = stack.pop() {
            let Some(block) = excerpt.get(at) else {
                complete = false;
                continue;
            };
            let body = ucpkit_core::outline::full_body(block);
            let cost = ucpkit_core::outline::block_tokens(block, tokenizer).max(1);
            if tokens + cost > max_tokens {
                complete = false;
                break;
            }
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(&body);
            tokens += cost;
            blocks += 1;
            stack.extend(excerpt.children(at).iter().rev());
        }
        Ok(SectionView { view, text, blocks, complete })
    }
}

/// The one block of `matches`, or why there is not one.
fn one_labelled(label: &str, mut matches: impl Iterator<Item = BlockId>) -> Result<BlockId, WorkspaceError> {
    match (matches.next(), matches.count()) {
        (Some(one), 0) => Ok(one),
        (None, _) => Err(WorkspaceError::Invalid(format!("no block is labelled {label:?}"))),
        (Some(_), more) => {
            Err(WorkspaceError::Invalid(format!("{} blocks are labelled {label:?}; use an id", more + 1)))
        }
    }
}

fn not_found(id: BlockId, document: &str) -> WorkspaceError {
    WorkspaceError::Invalid(format!("block {id} not found in document {document}"))
}

/// The block `reference` names: a full id (`blk_...`) or `@label`.
pub fn find_block(doc: &Document, reference: &str) -> Result<BlockId, WorkspaceError> {
    if let Some(label) = reference.strip_prefix('@') {
        let matches = doc.blocks().filter(|b| b.metadata.label.as_deref() == Some(label)).map(|b| b.id);
        return one_labelled(label, matches);
    }
    let id: BlockId = reference.parse().map_err(|e| WorkspaceError::Invalid(format!("{e}")))?;
    if !doc.contains(id) {
        return Err(not_found(id, doc.name()));
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_core::{Block, Content, Metadata};

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
