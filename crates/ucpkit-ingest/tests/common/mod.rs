//! Helpers shared by the ingest integration tests (each test binary uses a part).
#![allow(dead_code)]

use std::fmt::Write as _;

use ucpkit_core::{Block, BlockId, Document};

/// An indented outline of a document: id, role, tokens and a preview of
/// every block, plus its edges, for snapshots.
pub fn outline(doc: &Document) -> String {
    let mut out = String::new();
    for id in doc.document_order() {
        let block = doc.get(id).unwrap();
        let indent = "  ".repeat(doc.depth(id));
        let role = block.role().map_or("root".to_owned(), ToString::to_string);
        let tokens = block.metadata.tokens.map_or(String::new(), |t| format!(" [{t} tok]"));
        let lines =
            block.metadata.source.as_ref().map_or(String::new(), |s| format!(" L{}-{}", s.start_line, s.end_line));
        let _ = writeln!(out, "{indent}{id} {role}{tokens}{lines} {}", preview(block));
    }
    for id in doc.document_order() {
        for edge in doc.edges().outgoing(id) {
            let _ = writeln!(out, "edge {} -{}-> {}", edge.source, edge.edge_type, edge.target);
        }
    }
    out
}

fn preview(block: &Block) -> String {
    let text = match block.metadata.label.as_deref() {
        Some(label) if block.to_markdown().is_empty() => label.to_owned(),
        _ => block.to_markdown(),
    };
    let flat = text.replace('\n', "⏎");
    let cut: String = flat.chars().take(70).collect();
    format!("{cut:?}")
}

/// `(id, parent, children)` of every block in document order.
pub fn shape(doc: &Document) -> Vec<(BlockId, Option<BlockId>, Vec<BlockId>)> {
    doc.document_order().map(|id| (id, doc.parent(id), doc.children(id).to_vec())).collect()
}
