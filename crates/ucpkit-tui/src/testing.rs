//! What the tests share: a store holding the Node.js excerpt the
//! repository ships.

use std::path::Path;
use std::sync::Arc;

use ucpkit_workspace::{IndexOptions, Library, LibraryConfig};

/// A fresh store in a temporary folder holding `tests/data/node-excerpt`
/// as the document `node`.
pub(crate) fn library() -> (tempfile::TempDir, Arc<Library>) {
    let dir = tempfile::tempdir().unwrap();
    let config = LibraryConfig { allowed_roots: None, ..LibraryConfig::new(dir.path().join(".ucp")) };
    let library = Library::open(config).unwrap();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/node-excerpt");
    library.index(&[corpus], Some("node"), &IndexOptions::default(), &()).unwrap();
    (dir, Arc::new(library))
}
