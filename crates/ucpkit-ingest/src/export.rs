//! Documents back into markdown.
//!
//! Blocks are written in document order, separated by blank lines, each in
//! its own markdown form; front matter is written back on top. Exporting a
//! markdown import and importing the result again yields the same ids and
//! structure. In folder documents each file starts with a
//! `<!-- ucp:file PATH -->` marker.

use ucpkit_core::{Content, Document, Role};

/// The document as one markdown text.
pub fn to_markdown(document: &Document) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(source) = document.metadata.custom.get("front_matter_source").and_then(|v| v.as_str()) {
        parts.push(source.to_owned());
    }
    for id in document.descendants(document.root()) {
        let Some(block) = document.get(id) else { continue };
        match (&block.content, block.role()) {
            (Content::Composite, Some(Role::File)) => {
                let path = block.metadata.label.as_deref().unwrap_or("");
                parts.push(format!("<!-- ucp:file {path} -->"));
                if let Some(source) = block.metadata.custom.get("front_matter_source").and_then(|v| v.as_str()) {
                    parts.push(source.to_owned());
                }
            }
            (Content::Composite, _) => {}
            _ => parts.push(block.to_markdown()),
        }
    }
    let mut out = parts.join("\n\n");
    out.push('\n');
    out
}
