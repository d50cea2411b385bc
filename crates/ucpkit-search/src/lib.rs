//! Search over a UCM document, offline.
//!
//! - **BM25** ([`Mode::Bm25`]) with tantivy: one index document per block,
//!   its text, heading path and label searched with a code-aware analyzer
//!   ([`analyzer`]), its role and tags filterable. Scores are normalized to
//!   0..1 by the most the query could score.
//! - **Vectors** ([`Mode::Vector`]): an [`Embedder`] (built in with the
//!   `models` feature: a model2vec model or an ONNX sentence encoder loaded
//!   from a directory) and exact or (with `models`) HNSW nearest-neighbour
//!   search.
//! - **Hybrid** ([`Mode::Hybrid`]): reciprocal rank fusion ([`fuse`]) of both;
//!   the default whenever a model is configured.
//! - **Code where it stands** ([`structure`]): hits of source files ranked
//!   with a share of the other matches in their file and class, as search
//!   and the code scope of a context show them.
//!
//! Without the default `index` feature (the WebAssembly build) only the
//! in-memory [`MemoryIndex`] is built: same analysis and BM25, no files,
//! no threads, no models.
//!
//! A `SearchIndex` lives in a directory, is brought up to date with
//! [`SearchIndex::sync`] (only changed blocks are re-indexed) and implements
//! the [`RagProvider`] seam that UCL's SEARCH calls.

#[cfg(feature = "index")]
pub mod analyzer;
#[cfg(feature = "index")]
mod bm25;
#[cfg(feature = "index")]
mod catalog;
#[cfg(feature = "index")]
mod catalog_file;
#[cfg(feature = "index")]
mod embed;
mod error;
mod fusion;
pub mod headline;
#[cfg(feature = "index")]
mod index;
mod indexable;
mod memory;
mod provider;
mod scoring;
pub mod structure;
#[cfg(feature = "index")]
mod turns;
#[cfg(feature = "index")]
mod vector;

#[cfg(feature = "index")]
pub use embed::{load_embedder, Embedder};
#[cfg(feature = "models")]
pub use embed::{OnnxEmbedder, StaticEmbedder};
pub use error::SearchError;
pub use fusion::fuse;
#[cfg(feature = "index")]
pub use index::{CatchUp, ChangedSince, Mode, SearchConfig, SearchIndex, SyncProgress, SyncReport, Write};
#[cfg(feature = "index")]
pub use indexable::embedding_texts;
pub use memory::MemoryIndex;
pub use provider::{BlockLengths, RagCapabilities, RagProvider, SearchHit, SearchOptions, TermPostings, MAX_HITS};
#[cfg(feature = "index")]
pub use vector::{hnsw_threshold, HNSW_MIN_COMPONENTS};

#[cfg(feature = "index")]
use std::path::{Path, PathBuf};

/// Where the index of the document `name` lives in a store directory:
/// `<store>/search/<name made safe for a file name>-<digest of the name>`,
/// so that different names never share one.
#[cfg(feature = "index")]
pub fn index_dir(store_dir: &Path, name: &str) -> PathBuf {
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    let digest = blake3::hash(name.as_bytes()).to_hex();
    store_dir.join("search").join(format!("{safe}-{}", &digest[..8]))
}
