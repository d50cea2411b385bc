//! The UCM model: blocks with deterministic ids, typed content and metadata,
//! an ordered tree with O(1) parent lookup, typed edges indexed both ways,
//! validation, a stable JSON form and exact token counts.
//!
//! This crate does no I/O and knows nothing of sessions, stores or parsers.
//!
//! ```
//! use ucpkit_core::{Block, BlockId, Content, Document, Metadata, Role};
//!
//! let mut doc = Document::new("notes");
//! let content = Content::markdown("Hello");
//! let id = Block::derive_id(&content, Some(&Role::Paragraph), "", 0);
//! doc.append_child(BlockId::ROOT, Block::new(id, content, Metadata::with_role(Role::Paragraph))).unwrap();
//! assert_eq!(doc.parent(id), Some(BlockId::ROOT));
//! assert!(doc.validate().is_valid());
//! ```

mod block;
mod content;
mod document;
mod edge;
#[cfg(feature = "test-support")]
pub mod edits;
mod id;
mod idmap;
mod journal;
mod json;
mod loader;
mod metadata;
mod name;
mod nodes;
pub mod outline;
mod printable;
mod render;
mod snapshot;
mod undo;
mod validate;
mod vocabulary;

pub use block::Block;
pub use content::{canonical_json, normalize_text, Align, Content, MathNotation, MediaKind, TextFormat};
pub use document::{Absent, Ancestors, Descendants, Document, DocumentMetadata, RemoveMode, Removed, StructureError};
pub use edge::{Edge, EdgeIndex, EdgeMetadata, EdgeType, UnknownEdgeType};
pub use id::{BlockId, IdHasher, IdMap, IdSet, ParseIdError, PassThroughHasher, ID_PREFIX};
pub use idmap::IdMapper;
pub use journal::UnsavedChanges;
pub use json::{JsonError, JSON_FORMAT};
pub use loader::DocumentLoader;
pub use metadata::{Metadata, Role, SourceLocation, Timestamps};
pub use name::{document_name_rule, MAX_DOCUMENT_NAME_CHARS};
pub use printable::{escape_char, printable, terminal_text};
pub use snapshot::Snapshot;
pub use ucpkit_tokens::{BpeTokenizer, Encoding, Tokenizer};
pub use undo::Mark;
pub use validate::{Issue, ValidationReport};
pub use vocabulary::{CompressMethod, CtxDirection, Reason, RenderFormat};

/// Now, in milliseconds since the Unix epoch: the one clock of every
/// timestamp (0 before 1970, saturating far in the future).
pub fn now_ms() -> i64 {
    web_time::SystemTime::now()
        .duration_since(web_time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
