//! The per-file block tree every parser fills in the same way.
//!
//! Parsers hand blocks over in source order; a [`SectionBuilder`] derives
//! their ids (counting identical content so duplicates stay distinct), and
//! nests them under headings: a heading is the parent of everything up to the
//! next heading of the same or a higher level.

use std::collections::HashMap;
use std::sync::Arc;

use ucpkit_core::{normalize_text, Block, BlockId, Content, Metadata, Role, SourceLocation};

/// A link found in a block, still unresolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawLink {
    /// Index of the block holding the link, in [`ParsedFile::blocks`].
    pub(crate) block: usize,
    /// The destination as written.
    pub(crate) dest: String,
}

/// A block of one file, parented by index within the same file.
#[derive(Debug)]
pub(crate) struct LocalBlock {
    pub(crate) block: Block,
    /// `None`: a top-level block of the file.
    pub(crate) parent: Option<usize>,
}

/// One parsed file: its blocks in source order, links and heading anchors.
#[derive(Debug, Default)]
pub(crate) struct ParsedFile {
    pub(crate) blocks: Vec<LocalBlock>,
    pub(crate) links: Vec<RawLink>,
    /// `(anchor, block index)` for every heading (and HTML ids).
    pub(crate) anchors: Vec<(String, usize)>,
    /// Parsed front matter and its source text.
    pub(crate) front_matter: Option<(serde_json::Value, String)>,
    /// Title from the front matter or the first level-1 heading.
    pub(crate) title: Option<String>,
    /// Problems worth a warning that did not stop parsing.
    pub(crate) notes: Vec<(crate::report::WarningKind, String)>,
    /// A source file's symbols, imports and the names it uses, by local
    /// block index.
    pub(crate) code: Option<ucpkit_code::resolve::FileCode<usize>>,
}

/// Builds a [`ParsedFile`] from blocks given in source order.
pub(crate) struct SectionBuilder {
    scope: Arc<str>,
    file: Option<Arc<str>>,
    created_ms: i64,
    occurrences: HashMap<BlockId, u32>,
    open_headings: Vec<(u8, usize)>,
    slugs: HashMap<String, u32>,
    pub(crate) parsed: ParsedFile,
}

impl SectionBuilder {
    /// A builder for the file at `scope` (its path in the corpus; empty for a
    /// single-file document, in which case `file` still names the source).
    pub(crate) fn new(scope: Arc<str>, file: Option<Arc<str>>, created_ms: i64) -> Self {
        SectionBuilder {
            scope,
            file,
            created_ms,
            occurrences: HashMap::new(),
            open_headings: Vec::new(),
            slugs: HashMap::new(),
            parsed: ParsedFile::default(),
        }
    }

    /// Adds a block; returns its index. `lines` is the 1-based inclusive
    /// source line range (0, 0 when unknown).
    pub(crate) fn push(&mut self, content: Content, role: Role, lines: (u32, u32)) -> usize {
        let level = role.heading_level();
        if let Some(level) = level {
            while self.open_headings.last().is_some_and(|(open, _)| *open >= level) {
                self.open_headings.pop();
            }
        }
        let parent = self.open_headings.last().map(|(_, index)| *index);
        let index = self.push_under(content, role, lines, parent);
        if let Some(level) = level {
            self.open_headings.push((level, index));
        }
        index
    }

    /// Adds a block under the block at index `parent` (`None`: at the top
    /// of the file), whatever the headings; returns its index.
    pub(crate) fn push_under(
        &mut self,
        content: Content,
        role: Role,
        lines: (u32, u32),
        parent: Option<usize>,
    ) -> usize {
        let content = normalized(content);
        let base = Block::derive_id(&content, Some(&role), &self.scope, 0);
        let seen = self.occurrences.entry(base).or_insert(0);
        let id = if *seen == 0 { base } else { Block::derive_id(&content, Some(&role), &self.scope, *seen) };
        *seen += 1;
        let mut metadata = Metadata::with_role(role);
        metadata.timestamps = ucpkit_core::Timestamps::at(self.created_ms);
        if let Some(file) = &self.file {
            metadata.source = Some(SourceLocation { file: file.clone(), start_line: lines.0, end_line: lines.1 });
        }
        let index = self.parsed.blocks.len();
        self.parsed.blocks.push(LocalBlock { block: Block::new(id, content, metadata), parent });
        index
    }

    /// Adds a heading with `content` (its source text) and registers its
    /// anchor (GitHub-style slug of `plain_text`, deduplicated with `-1`,
    /// `-2` ...).
    pub(crate) fn push_heading(&mut self, level: u8, content: Content, plain_text: &str, lines: (u32, u32)) -> usize {
        if self.parsed.title.is_none() && level == 1 {
            self.parsed.title = Some(plain_text.trim().to_owned());
        }
        let index = self.push(content, Role::heading(level), lines);
        let slug = slugify(plain_text);
        let seen = self.slugs.entry(slug.clone()).or_insert(0);
        let anchor = if *seen == 0 { slug } else { format!("{slug}-{seen}") };
        *seen += 1;
        self.parsed.anchors.push((anchor, index));
        index
    }

    /// Registers an extra anchor (an HTML `id`) for a block.
    pub(crate) fn add_anchor(&mut self, anchor: &str, block: usize) {
        self.parsed.anchors.push((anchor.to_owned(), block));
    }

    /// Records a link found in block `block`.
    pub(crate) fn add_link(&mut self, block: usize, dest: &str) {
        self.parsed.links.push(RawLink { block, dest: dest.to_owned() });
    }

    /// Index the next pushed block will get.
    pub(crate) fn next_index(&self) -> usize {
        self.parsed.blocks.len()
    }

    /// The finished file.
    pub(crate) fn finish(self) -> ParsedFile {
        self.parsed
    }
}

/// Text content is stored the way ids see it, so export and re-import
/// reproduce both text and ids.
fn normalized(content: Content) -> Content {
    match content {
        Content::Text { text, format } => Content::Text { text: normalize_text(&text), format },
        other => other,
    }
}

/// GitHub's heading anchor: lowercase, punctuation dropped (except `-` and
/// `_`), spaces turned into `-`.
pub(crate) fn slugify(text: &str) -> String {
    text.trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_follow_github() {
        assert_eq!(slugify("fs.readFile(path[, options], callback)"), "fsreadfilepath-options-callback");
        assert_eq!(slugify("Class: `fs.Dir`"), "class-fsdir");
        assert_eq!(slugify("Hello World_x"), "hello-world_x");
    }

    #[test]
    fn headings_nest_and_duplicates_get_distinct_ids() {
        let mut b = SectionBuilder::new("".into(), None, 0);
        let h1 = b.push_heading(1, Content::markdown("Top"), "Top", (1, 1));
        let a = b.push_heading(2, Content::markdown("A"), "A", (2, 2));
        let p1 = b.push(Content::markdown("TODO"), Role::Paragraph, (3, 3));
        let h3 = b.push_heading(3, Content::markdown("Deep"), "Deep", (4, 4));
        let bsec = b.push_heading(2, Content::markdown("B"), "B", (5, 5));
        let p2 = b.push(Content::markdown("TODO"), Role::Paragraph, (6, 6));
        let dup = b.push_heading(2, Content::markdown("B"), "B", (7, 7));
        let parsed = b.finish();
        let parent = |i: usize| parsed.blocks[i].parent;
        assert_eq!(parent(h1), None);
        assert_eq!(parent(a), Some(h1));
        assert_eq!(parent(p1), Some(a));
        assert_eq!(parent(h3), Some(a));
        assert_eq!(parent(bsec), Some(h1));
        assert_eq!(parent(p2), Some(bsec));
        assert_ne!(parsed.blocks[p1].block.id, parsed.blocks[p2].block.id);
        assert_eq!(parsed.anchors.last().unwrap(), &("b-1".to_owned(), dup));
        assert_eq!(parsed.title.as_deref(), Some("Top"));
    }
}
