//! What can go wrong while indexing or searching.

use std::path::PathBuf;

/// A search or indexing failure, with what a user needs to act on it.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The full-text engine failed.
    #[error("full-text index: {0}")]
    #[cfg(feature = "index")]
    Index(#[from] tantivy::TantivyError),
    /// A file of the index could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file of the index is not what this version wrote.
    #[error("{}: {reason}", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The embedding model could not be loaded or run.
    #[error("embedding model {}: {message}", path.display())]
    Model {
        /// The model directory.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The approximate vector index failed.
    #[error("vector index: {0}")]
    Vector(String),
    /// An index opened only to search was asked to change.
    #[error("this search index was opened only to search; open it with its document to bring it up to date")]
    SearchOnly,
    /// An index opened to follow a part's changes was asked to search, or
    /// to sync a whole document.
    #[error("this search index was opened only to follow changed blocks; open it with its document to search it")]
    ChangesOnly,
    /// Vector or hybrid search was asked for without a model.
    #[error("no embedding model is configured (pass --model DIR or set UCP_MODEL; scripts/fetch-model gets one)")]
    NoModel,
}

impl SearchError {
    /// A stable code for programs (`search_index`, `search_io` ...).
    pub fn code(&self) -> &'static str {
        match self {
            #[cfg(feature = "index")]
            SearchError::Index(_) => "search_index",
            SearchError::Io { .. } => "search_io",
            SearchError::Damaged { .. } => "search_damaged",
            SearchError::Model { .. } => "search_model",
            SearchError::Vector(_) => "search_vector",
            SearchError::NoModel => "search_no_model",
            SearchError::SearchOnly => "search_only",
            SearchError::ChangesOnly => "search_changes_only",
        }
    }

    #[cfg(feature = "index")]
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> SearchError {
        let path = path.into();
        move |source| SearchError::Io { path, source }
    }
}
