//! What the one-shot tests share: the repository's test data and a library
//! over a store in a folder.

use std::path::{Path, PathBuf};

use ucpkit_workspace::{Library, LibraryConfig};

/// A path under the repository's `tests/data`.
pub fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(path)
}

/// A library over the store `dir/.ucp` that may index any path.
pub fn open(dir: &Path) -> Library {
    let mut config = LibraryConfig::new(dir.join(".ucp"));
    config.allowed_roots = None;
    Library::open(config).unwrap()
}
