//! The text of one window entry in each representation, and the structural
//! facts around it (title, heading path, document order, subtree size).
//!
//! A rendered window is a sequence of segments: group headers (`§ a > b`)
//! and entries (`[id] annotation` line, body, blank line). Every segment
//! ends with a blank line and starts with `§` or `[`, so BPE pre-tokenization
//! never merges across segments and the window's token count is exactly the
//! sum of its segments' counts (checked by a property test).

use serde::{Deserialize, Serialize};
use ucm_core::{Block, BlockId, Content, Document, Role, Tokenizer};

use crate::entry::Representation;
use crate::summarize::Summarizer;

/// Longest title kept in a heading path, in characters.
const TITLE_CHARS: usize = 80;

/// The title a block gives its descendants' heading path: heading text,
/// or the label of a file or folder.
pub fn title(block: &Block) -> Option<String> {
    let text = match (&block.content, block.role()) {
        (Content::Text { text, .. }, Some(role)) if role.heading_level().is_some() || *role == Role::Title => text,
        (Content::Composite, _) => block.metadata.label.as_ref()?,
        _ => return None,
    };
    let line = text.lines().next().unwrap_or("").trim();
    Some(match line.char_indices().nth(TITLE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    })
}

/// The titled ancestors of a block, outermost first. A folder whose path
/// the label of a file or folder below it (the block itself included)
/// already starts with is left out: `library > library/csv.html` reads
/// `library/csv.html`.
pub fn titled_path(doc: &Document, id: BlockId) -> Vec<BlockId> {
    let label = |b: BlockId, roles: &[Role]| {
        doc.get(b).filter(|b| b.role().is_some_and(|r| roles.contains(r))).and_then(|b| b.metadata.label.as_deref())
    };
    let mut path: Vec<BlockId> = Vec::new();
    let mut below = label(id, &[Role::Directory, Role::File]);
    for ancestor in doc.ancestors(id).filter(|a| !a.is_root() && doc.get(*a).and_then(title).is_some()) {
        let named = match (label(ancestor, &[Role::Directory]), below) {
            (Some(folder), Some(below)) => below.strip_prefix(folder).is_some_and(|rest| rest.starts_with('/')),
            _ => false,
        };
        if !named {
            path.push(ancestor);
            below = label(ancestor, &[Role::Directory, Role::File]);
        }
    }
    path.reverse();
    path
}

/// Titles of the titled ancestors of a block, outermost first.
pub fn path_titles(doc: &Document, id: BlockId) -> Vec<String> {
    titled_path(doc, id).into_iter().filter_map(|a| doc.get(a).and_then(title)).collect()
}

/// The `§ a > b > c` header line for a heading path (with its blank line).
pub fn header(doc: &Document, path: &[BlockId]) -> String {
    let titles: Vec<String> = path.iter().filter_map(|id| doc.get(*id).and_then(title)).collect();
    if titles.is_empty() {
        "§ /\n\n".to_owned()
    } else {
        format!("§ {}\n\n", titles.join(" > "))
    }
}

/// Document-order key: the child index at every level from the root.
pub fn order_key(doc: &Document, id: BlockId) -> Vec<u32> {
    let mut key: Vec<u32> = std::iter::once(id)
        .chain(doc.ancestors(id))
        .filter_map(|a| doc.index_in_parent(a))
        .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
        .collect();
    key.reverse();
    key
}

/// The block's text as the source wrote it (markdown stays markdown).
pub fn full_body(block: &Block) -> String {
    let text = block.to_markdown();
    let text = text.trim_end();
    if text.is_empty() {
        title(block).unwrap_or_else(|| block.role().map_or("block", Role::as_str).to_owned())
    } else {
        text.to_owned()
    }
}

/// Token count of a block in full, from its cached count when present.
pub fn block_tokens(block: &Block, tokenizer: &dyn Tokenizer) -> usize {
    match block.metadata.tokens {
        Some(n) => n as usize,
        None => tokenizer.count(&block.to_markdown()),
    }
}

/// Number of descendants and their total tokens.
pub fn subtree(doc: &Document, id: BlockId, tokenizer: &dyn Tokenizer) -> (usize, usize) {
    doc.descendants(id)
        .filter_map(|d| doc.get(d))
        .fold((0, 0), |(n, tokens), b| (n + 1, tokens + block_tokens(b, tokenizer)))
}

/// The longest head of `text` with at most `max_tokens` tokens, cut at a
/// word boundary (binary search over word ends).
pub fn head(text: &str, max_tokens: usize, tokenizer: &dyn Tokenizer) -> String {
    if tokenizer.count(text) <= max_tokens {
        return text.to_owned();
    }
    let ends: Vec<usize> =
        text.char_indices().filter(|(_, c)| c.is_whitespace()).map(|(i, _)| i).chain([text.len()]).collect();
    let (mut low, mut high) = (0usize, ends.len());
    while low < high {
        let mid = (low + high).div_ceil(2);
        if tokenizer.count(&text[..ends[mid - 1]]) <= max_tokens {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    if low == 0 {
        // A single word longer than the budget: cut by characters.
        let chars: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        let keep = chars.partition_point(|&i| tokenizer.count(&text[..i]) <= max_tokens);
        return text[..chars[keep.saturating_sub(1)]].to_owned();
    }
    text[..ends[low - 1]].trim_end().to_owned()
}

/// The body and annotation of an entry in a representation.
pub struct Shown {
    /// Text after the id on the entry's first line (empty for full blocks).
    pub annotation: String,
    /// The body lines.
    pub body: String,
}

/// What the window needs to build representations.
pub struct Builder<'a> {
    /// The document.
    pub doc: &'a Document,
    /// Exact token counts.
    pub tokenizer: &'a dyn Tokenizer,
    /// Summaries.
    pub summarizer: &'a dyn Summarizer,
    /// Tokens kept by truncation.
    pub truncate_tokens: usize,
    /// Tokens a summary may use.
    pub summary_tokens: usize,
    /// The format whose segments the budget counts.
    pub counted: BudgetFormat,
}

impl Builder<'_> {
    /// Tokens of `id` shown as `shown`, in the counted format.
    pub fn count(&self, id: BlockId, shown: &Shown) -> usize {
        let segment = match self.counted {
            BudgetFormat::Ids => entry_segment(&id.to_string(), shown),
            BudgetFormat::Markdown => markdown_segment(shown),
        };
        self.tokenizer.count(&segment)
    }

    /// The block shown as `representation`; `None` when that representation
    /// would not be smaller than the full block (or the block is gone).
    pub fn show(&self, id: BlockId, representation: Representation) -> Option<Shown> {
        let block = self.doc.get(id)?;
        let full = full_body(block);
        let full_tokens = block_tokens(block, self.tokenizer);
        let shown = match representation {
            Representation::Full => Shown { annotation: String::new(), body: full },
            Representation::Truncated => {
                if full_tokens <= self.truncate_tokens {
                    return None;
                }
                let body = match &block.content {
                    Content::Code { language, source } => {
                        let mut cut = block.clone();
                        let kept = head(source, self.truncate_tokens, self.tokenizer);
                        cut.content = Content::Code { language: language.clone(), source: format!("{kept}\n…") };
                        full_body(&cut)
                    }
                    _ => format!("{} …", head(&full, self.truncate_tokens, self.tokenizer)),
                };
                Shown { annotation: format!(" truncated, {full_tokens} tokens in full"), body }
            }
            Representation::Summary => {
                let budget = self.summary_tokens.min(full_tokens / 2);
                if budget == 0 {
                    return None;
                }
                let body = self.summarizer.summarize(&full, budget, self.tokenizer);
                if body.is_empty() {
                    return None;
                }
                Shown { annotation: format!(" summary of {full_tokens} tokens"), body }
            }
            Representation::StructureOnly => {
                let (below, subtree_tokens) = subtree(self.doc, id, self.tokenizer);
                let role = block.role().map_or("block", Role::as_str);
                let label = match title(block) {
                    Some(_) if block.heading_level().is_some() => full.lines().next().unwrap_or("").to_owned(),
                    Some(title) => title,
                    None => head(&full, 12, self.tokenizer) + " …",
                };
                let annotation = if below == 0 {
                    format!(" stub {role}, open {full_tokens} tokens")
                } else {
                    format!(" stub {role}, open {full_tokens} tokens; {below} blocks below, {subtree_tokens} tokens")
                };
                Shown { annotation, body: label }
            }
        };
        Some(shown)
    }
}

/// The rendering a window's token budget bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetFormat {
    /// The default rendering, with full ids (short ids are never longer, so
    /// it bounds that rendering too).
    #[default]
    Ids,
    /// The markdown rendering (no id lines): for a context that will only
    /// be read, every token goes to text.
    Markdown,
}

/// An entry's segment text with `id` written as given.
pub fn entry_segment(id: &str, shown: &Shown) -> String {
    format!("[{id}]{}\n{}\n\n", shown.annotation, shown.body)
}

/// An entry's segment in the markdown format (no id line).
pub fn markdown_segment(shown: &Shown) -> String {
    format!("{}\n\n", shown.body)
}
