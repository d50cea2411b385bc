//! The block: the unit of content (id, content, metadata).

use serde::{Deserialize, Serialize};

use crate::content::Content;
use crate::id::{BlockId, IdHasher};
use crate::metadata::{Metadata, Role};

/// One unit of content in a document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// The block's id, stable for its lifetime.
    pub id: BlockId,
    /// What the block holds.
    pub content: Content,
    /// Role, label, tags, source and other facts about the block.
    #[serde(default)]
    pub metadata: Metadata,
}

impl Block {
    /// A block with the given id, content and metadata.
    pub fn new(id: BlockId, content: Content, metadata: Metadata) -> Self {
        Block { id, content, metadata }
    }

    /// The document root block (a container: it renders to nothing, so its
    /// token count is 0 under every tokenizer).
    pub fn root() -> Self {
        Block::new(BlockId::ROOT, Content::Composite, Metadata { tokens: Some(0), ..Metadata::default() })
    }

    /// Derives the deterministic id of a block.
    ///
    /// `scope` names where the block was imported from (a file path relative
    /// to the corpus, empty for a single-file document) and `occurrence`
    /// counts earlier blocks with identical content and role in that scope, so
    /// identical paragraphs get distinct ids while re-imports reproduce them.
    pub fn derive_id(content: &Content, role: Option<&Role>, scope: &str, occurrence: u32) -> BlockId {
        let mut hasher = IdHasher::new(content.kind());
        hasher.field(role.map_or("", Role::as_str).as_bytes());
        content.hash_into(&mut hasher);
        hasher.field(scope.as_bytes());
        hasher.field(&occurrence.to_le_bytes());
        hasher.finish()
    }

    /// The block's semantic role, if any.
    pub fn role(&self) -> Option<&Role> {
        self.metadata.role.as_ref()
    }

    /// The heading level when the block is a heading.
    pub fn heading_level(&self) -> Option<u8> {
        self.role().and_then(Role::heading_level)
    }

    /// The block's words without markdown framing: what FIND matches, search
    /// indexes and previews show (a composite block gives its label).
    pub fn plain_text(&self) -> std::borrow::Cow<'_, str> {
        match &self.content {
            Content::Text { text, .. } => text.into(),
            Content::Code { source, .. } => source.into(),
            Content::Math { expression, .. } => expression.into(),
            Content::Composite => self.metadata.label.as_deref().unwrap_or("").into(),
            _ => self.to_markdown().into(),
        }
    }

    /// The first `max_chars` characters of [`Block::plain_text`] on one
    /// line (runs of whitespace read as one space), with `…` when cut: the
    /// one preview every listing shows.
    pub fn preview(&self, max_chars: usize) -> String {
        let text = self.plain_text();
        let mut out = String::with_capacity(max_chars.min(text.len()) + 4);
        let mut space = false;
        let mut count = 0;
        for c in text.trim().chars() {
            if c.is_whitespace() {
                space = true;
                continue;
            }
            let needed = 1 + usize::from(space);
            if count + needed > max_chars {
                out.push('…');
                break;
            }
            if space {
                out.push(' ');
            }
            space = false;
            out.push(c);
            count += needed;
        }
        out
    }

    /// The block as markdown: what export writes and what token counts measure.
    pub fn to_markdown(&self) -> String {
        crate::render::block_markdown(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_content_gets_distinct_ids_by_occurrence_and_scope() {
        let todo = Content::markdown("TODO");
        let role = Some(&Role::Paragraph);
        let first = Block::derive_id(&todo, role, "", 0);
        assert_eq!(first, Block::derive_id(&todo, role, "", 0));
        assert_ne!(first, Block::derive_id(&todo, role, "", 1));
        assert_ne!(first, Block::derive_id(&todo, role, "a.md", 0));
        assert_ne!(first, Block::derive_id(&todo, Some(&Role::Quote), "", 0));
        assert_ne!(first, Block::derive_id(&Content::plain("TODO"), role, "", 0));
    }

    #[test]
    fn ids_ignore_line_endings() {
        let a = Block::derive_id(&Content::markdown("a\r\nb  "), None, "", 0);
        let b = Block::derive_id(&Content::markdown("a\nb"), None, "", 0);
        assert_eq!(a, b);
    }

    #[test]
    fn a_preview_is_one_line_cut_with_an_ellipsis() {
        let block = Block::new(BlockId::ROOT, Content::plain("  one\n\n two\tthree  "), Metadata::default());
        assert_eq!(block.preview(100), "one two three");
        assert_eq!(block.preview(5), "one t…");
        assert_eq!(block.preview(4), "one…");
        let section = Block::new(
            BlockId::ROOT,
            Content::Composite,
            Metadata { label: Some("Intro".into()), ..Metadata::default() },
        );
        assert_eq!(section.preview(100), "Intro");
    }
}
