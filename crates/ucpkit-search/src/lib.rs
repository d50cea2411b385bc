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
//! A [`SearchIndex`] lives in a directory, is brought up to date with
//! [`SearchIndex::sync`] (only changed blocks are re-indexed) and implements
//! the [`RagProvider`] seam that UCL's SEARCH calls.

pub mod analyzer;
mod bm25;
mod catalog;
mod catalog_file;
mod embed;
mod error;
mod fusion;
pub mod headline;
mod index;
mod provider;
pub mod structure;
mod turns;
mod vector;

pub use embed::{load_embedder, Embedder};
#[cfg(feature = "models")]
pub use embed::{OnnxEmbedder, StaticEmbedder};
pub use error::SearchError;
pub use fusion::fuse;
pub use index::{Mode, SearchConfig, SearchIndex, SyncProgress, SyncReport, Write};
pub use provider::{BlockLengths, RagCapabilities, RagProvider, SearchHit, SearchOptions, TermPostings, MAX_HITS};
pub use vector::{hnsw_threshold, HNSW_MIN_COMPONENTS};

use std::path::{Path, PathBuf};

/// Where the index of the document `name` lives in a store directory:
/// `<store>/search/<name made safe for a file name>-<digest of the name>`,
/// so that different names never share one.
pub fn index_dir(store_dir: &Path, name: &str) -> PathBuf {
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    let digest = blake3::hash(name.as_bytes()).to_hex();
    store_dir.join("search").join(format!("{safe}-{}", &digest[..8]))
}
