//! The context window an agent curates under a hard token budget.
//!
//! A [`ContextWindow`] holds block ids with an inclusion reason, a relevance
//! and a [`Representation`] (full, truncated, summary or a structure-only
//! stub). Every operation leaves its default rendering within
//! `max_tokens` (exact tokenizer) and `max_blocks`: blocks that do not fit
//! evict less relevant ones by the [`PruningPolicy`] or are shown smaller,
//! and the result says which. Nothing is ever lost: every entry keeps its
//! id and can be opened back to its full text, and the window logs what
//! left and why.
//!
//! ```
//! use ucpkit_context::{IdMapper, Reason, RenderFormat};
//! use ucpkit_core::{Block, BlockId, BpeTokenizer, Content, Document, Metadata, Role};
//! use ucpkit_context::{ContextWindow, Env, ExtractiveSummarizer, WindowConfig};
//!
//! let mut doc = Document::new("notes");
//! let content = Content::markdown("UCP keeps the window within budget.");
//! let id = Block::derive_id(&content, Some(&Role::Paragraph), "notes", 0);
//! doc.append_child(BlockId::ROOT, Block::new(id, content, Metadata::with_role(Role::Paragraph))).unwrap();
//!
//! let tokenizer = BpeTokenizer::default();
//! let env = Env { doc: &doc, tokenizer: &tokenizer, summarizer: &ExtractiveSummarizer, now_ms: 0 };
//! let mut window = ContextWindow::new(WindowConfig { max_tokens: 100, ..WindowConfig::default() });
//! window.add(&env, id, Reason::DirectReference, None).unwrap();
//! let text = window.render(&env, RenderFormat::ShortIds, &mut IdMapper::new());
//! assert_eq!(text, "[1]\nUCP keeps the window within budget.\n\n");
//! assert!(window.tokens() <= 100);
//! ```

mod compact;
mod entry;
mod error;
mod evict;
mod expand;
mod relevance;
mod render;
pub mod segment;
mod summarize;
mod window;

pub use entry::{base_score, Entry, Representation};
pub use error::WindowError;
pub use evict::PruningPolicy;
pub use expand::Expansion;
pub use relevance::{tree_distance, Task};
pub use render::{RenderedPart, Stats};
pub use segment::BudgetFormat;
pub use summarize::{ExtractiveSummarizer, Summarizer};
pub use ucpkit_core::{CompressMethod, CtxDirection, IdMapper, Reason, RenderFormat};
pub use window::{Action, Admitted, Change, ContextWindow, Env, WindowConfig, LOG_LEN};
