//! The stable JSON form of a document.
//!
//! Blocks are written in document order (orphans last, by id) with their
//! children lists; edges follow the block order. Serializing, parsing and
//! serializing again yields the same bytes.

use serde::{Deserialize, Serialize};

use crate::block::Block;
use crate::content::Content;
use crate::document::{Document, DocumentMetadata};
use crate::edge::Edge;
use crate::id::{BlockId, IdSet};
use crate::metadata::Metadata;

/// Format tag written into every JSON document.
pub const JSON_FORMAT: &str = "ucm-document/1";

#[derive(Serialize, Deserialize)]
struct DocumentJson {
    format: String,
    name: String,
    version: u64,
    #[serde(default)]
    metadata: DocumentMetadata,
    blocks: Vec<BlockJson>,
    #[serde(default)]
    edges: Vec<Edge>,
}

#[derive(Serialize, Deserialize)]
struct BlockJson {
    id: BlockId,
    content: Content,
    #[serde(default)]
    metadata: Metadata,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    children: Vec<BlockId>,
}

/// Why a JSON text is not a document.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    /// Not JSON, or not shaped like a document.
    #[error("invalid document JSON: {0}")]
    Syntax(#[from] serde_json::Error),
    /// Another format tag.
    #[error("unsupported document format {0:?} (expected {JSON_FORMAT:?})")]
    Format(String),
    /// Two blocks share an id.
    #[error("block {0} appears twice")]
    DuplicateBlock(BlockId),
}

impl Document {
    /// Every block id in document order, then orphans by id.
    pub fn ordered_ids(&self) -> Vec<BlockId> {
        let mut ids: Vec<BlockId> = self.document_order().collect();
        let seen: IdSet = ids.iter().copied().collect();
        let mut orphans: Vec<BlockId> = self.nodes.keys().filter(|id| !seen.contains(id)).collect();
        orphans.sort();
        ids.extend(orphans);
        ids
    }

    /// Edges in block order, each block's outgoing edges in insertion order.
    pub fn ordered_edges(&self) -> Vec<&Edge> {
        let mut edges: Vec<&Edge> = self.ordered_ids().into_iter().flat_map(|id| self.edges.outgoing(id)).collect();
        let mut dangling: Vec<&Edge> = self.edges.iter().filter(|e| !self.contains(e.source)).collect();
        dangling.sort_by_key(|e| (e.source, e.target));
        edges.extend(dangling);
        edges
    }

    /// The stable JSON form (pretty when `pretty`).
    pub fn to_json(&self, pretty: bool) -> String {
        let blocks = self
            .ordered_ids()
            .into_iter()
            .map(|id| {
                let node = &self.nodes[&id];
                BlockJson {
                    id,
                    content: node.block.content.clone(),
                    metadata: node.block.metadata.clone(),
                    children: node.children.clone(),
                }
            })
            .collect();
        let doc = DocumentJson {
            format: JSON_FORMAT.to_owned(),
            name: self.name().to_owned(),
            version: self.version(),
            metadata: self.metadata.clone(),
            blocks,
            edges: self.ordered_edges().into_iter().cloned().collect(),
        };
        let result = if pretty { serde_json::to_string_pretty(&doc) } else { serde_json::to_string(&doc) };
        result.expect("documents always serialize")
    }

    /// Parses the JSON form. Structure problems (cycles, orphans) are kept
    /// as found; call [`Document::validate`] to list them.
    pub fn from_json(text: &str) -> Result<Document, JsonError> {
        let doc: DocumentJson = serde_json::from_str(text)?;
        if doc.format != JSON_FORMAT {
            return Err(JsonError::Format(doc.format));
        }
        let mut seen = IdSet::default();
        for block in &doc.blocks {
            if !seen.insert(block.id) {
                return Err(JsonError::DuplicateBlock(block.id));
            }
        }
        let blocks = doc.blocks.into_iter().map(|b| (Block::new(b.id, b.content, b.metadata), b.children));
        Ok(Document::from_parts(doc.name, doc.metadata, doc.version, blocks, doc.edges))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edge::EdgeType;
    use crate::metadata::Role;
    use proptest::prelude::*;

    /// Builds a document from a list of (parent choice, text) pairs.
    fn build(spec: &[(usize, String)]) -> Document {
        let mut doc = Document::new("prop");
        let mut ids = vec![BlockId::ROOT];
        for (i, (parent, text)) in spec.iter().enumerate() {
            let content = Content::markdown(text.clone());
            let id = Block::derive_id(&content, Some(&Role::Paragraph), "", i as u32);
            let mut meta = Metadata::with_role(Role::Paragraph);
            meta.tags = vec![format!("t{}", i % 3)];
            doc.append_child(ids[parent % ids.len()], Block::new(id, content, meta)).unwrap();
            if i % 4 == 1 {
                doc.add_edge(Edge::new(id, EdgeType::References, ids[i % ids.len()])).unwrap();
            }
            ids.push(id);
        }
        doc
    }

    proptest! {
        #[test]
        fn json_round_trip_is_stable(spec in prop::collection::vec((0usize..50, "\\PC{0,20}"), 0..40)) {
            let doc = build(&spec);
            let json = doc.to_json(false);
            let back = Document::from_json(&json).unwrap();
            prop_assert!(back.validate().is_valid());
            prop_assert_eq!(back.to_json(false), json);
            prop_assert_eq!(back.len(), doc.len());
            for id in doc.ordered_ids() {
                prop_assert_eq!(back.parent(id), doc.parent(id));
                prop_assert_eq!(back.children(id), doc.children(id));
            }
        }
    }

    #[test]
    fn corrupt_input_loads_and_is_reported_not_panicked_on() {
        let doc = build(&[(0, "a".into()), (1, "b".into())]);
        let a = doc.children(BlockId::ROOT)[0];
        let ghost = "blk_ffffffffffffffffffffffff";
        let json = doc.to_json(false).replacen(
            &format!("\"children\":[\"{a}\"]"),
            &format!("\"children\":[\"{a}\",\"{ghost}\"]"),
            1,
        );
        let back = Document::from_json(&json).unwrap();
        assert_eq!(back.document_order().count(), 3);
        assert!(back.to_json(false).contains(ghost), "the listing is kept as found");
        let issues = back.validate().issues;
        assert!(
            matches!(issues.as_slice(), [crate::Issue::MissingChild { child, .. }] if child.to_string() == ghost),
            "{issues:?}"
        );
    }

    #[test]
    fn rejects_foreign_or_duplicate_input() {
        assert!(matches!(Document::from_json("{}"), Err(JsonError::Syntax(_))));
        let doc = build(&[(0, "a".into())]);
        let json = doc.to_json(false).replace(JSON_FORMAT, "other/9");
        assert!(matches!(Document::from_json(&json), Err(JsonError::Format(_))));
    }
}
