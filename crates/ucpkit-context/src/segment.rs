//! The text of one window entry in each representation (the structural
//! facts around a block — title, heading path, order, size — are
//! `ucpkit_core::outline`'s).
//!
//! A rendered window is a sequence of segments: group headers (`§ a > b`)
//! and entries (`[id] annotation` line, body, blank line). Every segment
//! ends with a blank line and starts with `§` or `[`, so BPE pre-tokenization
//! never merges across segments and the window's token count is exactly the
//! sum of its segments' counts (checked by a property test).

use serde::{Deserialize, Serialize};
use ucpkit_core::outline::{block_tokens, full_body, head, subtree, title};
use ucpkit_core::{BlockId, Content, Document, Role, Tokenizer};

use crate::entry::Representation;
use crate::summarize::Summarizer;

/// The `§ a > b > c` header line for a heading path (with its blank line),
/// the entries' occasion (their session and time) last.
pub fn header(doc: &Document, path: &[BlockId], occasion: Option<&str>) -> String {
    let mut titles: Vec<String> = path.iter().filter_map(|id| doc.get(*id).and_then(title)).collect();
    titles.extend(occasion.map(str::to_owned));
    if titles.is_empty() {
        "§ /\n\n".to_owned()
    } else {
        format!("§ {}\n\n", titles.join(" > "))
    }
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
                let body = match &block.content {
                    // Code stays code: its summary is shown inside the block's fence.
                    Content::Code { language, source } => {
                        let kept = self.summarizer.summarize(source, budget, self.tokenizer);
                        if kept.is_empty() {
                            return None;
                        }
                        let mut cut = block.clone();
                        cut.content = Content::Code { language: language.clone(), source: kept };
                        full_body(&cut)
                    }
                    _ => self.summarizer.summarize(&full, budget, self.tokenizer),
                };
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
