//! With a model, the store keeps one vector per block text, and the
//! vectors of texts edited away go: when the node that edits saves, when a
//! node catches a copy up after another writer's edit, and when a node
//! opens an index a writer without the model moved past. On both
//! backends.
#![cfg(feature = "models")]

#[path = "../../ucpkit-store/src/testing.rs"]
mod testing;

use std::path::Path;
use std::sync::Arc;

use ucpkit_core::{Block, BlockId, Content, Document, Metadata, Role};
use ucpkit_store::{Store, TextKey};
use ucpkit_workspace::{Library, LibraryConfig, NewSession, Workspace};

/// What a text's vector is stored under: 16 bytes of its BLAKE3 hash.
fn key(text: &str) -> TextKey {
    blake3::hash(text.as_bytes()).as_bytes()[..16].try_into().unwrap()
}

/// The texts of `doc`'s blocks that the store holds a vector of, under
/// the model of `workspace`, among `asked`.
fn stored(store: &Store, workspace: &Workspace, asked: &[&str]) -> Vec<String> {
    let model = workspace.index().embedder().expect("a model").identity().to_owned();
    let keys: Vec<TextKey> = asked.iter().map(|text| key(text)).collect();
    let found = store.load_vectors("d", &model, &keys).unwrap();
    asked.iter().filter(|text| found.contains_key(&key(text))).map(|text| text.to_string()).collect()
}

fn library(place: &testing::Place, cache: &Path, model: Option<&Path>) -> Arc<Library> {
    let base = match place.url() {
        Some(url) => LibraryConfig { store_dir: cache.to_owned(), ..LibraryConfig::new(url) },
        None => LibraryConfig::new(place.sqlite_dir().unwrap()),
    };
    Arc::new(Library::open(LibraryConfig { model: model.map(Path::to_owned), ..base }).unwrap())
}

/// Runs `script` on the library's copy of `d` and saves it.
fn run(library: &Library, script: &str) {
    let workspace = library.workspace("d").unwrap();
    let session = library.create_session(&workspace, &NewSession::default()).unwrap();
    assert!(library.run_script(&workspace, session, script).unwrap().written, "{script}");
}

#[test]
#[ignore = "needs UCP_TEST_MODEL: scripts/test fetches the model and runs this"]
fn the_vectors_of_texts_edited_away_go() {
    let Some(model) = std::env::var_os("UCP_TEST_MODEL") else {
        eprintln!("note: UCP_TEST_MODEL is not set: the stored-vectors test is skipped");
        return;
    };
    let model = Path::new(&model);
    for place in testing::places() {
        let caches = tempfile::tempdir().unwrap();
        let mut doc = Document::new("d");
        let mut ids = Vec::new();
        for text in ["alpha paragraph", "beta paragraph", "gamma paragraph"] {
            let content = Content::markdown(text);
            let id = Block::derive_id(&content, None, "", ids.len() as u32);
            doc.append_child(BlockId::ROOT, Block::new(id, content, Metadata::with_role(Role::Paragraph))).unwrap();
            ids.push(id);
        }
        let mut writer = place.open();
        writer.save_document(&doc).unwrap();
        let node = library(&place, &caches.path().join("a"), Some(model));
        let all = ["alpha paragraph", "beta paragraph", "gamma paragraph", "delta paragraph", "epsilon paragraph"];
        let held = node.workspace("d").unwrap();
        assert_eq!(stored(&writer, &held, &all), all[..3], "{}: each block's text", place.backend);

        // The node that edits drops the vector of the text it replaced.
        run(&node, &format!("EDIT {} SET content.text = \"delta paragraph\"", ids[0]));
        let expected = ["beta paragraph", "gamma paragraph", "delta paragraph"];
        assert_eq!(stored(&writer, &held, &all), expected, "{}: after its own edit", place.backend);

        // A writer without the model: the node catching its copy up drops it.
        let (mut theirs, revision) = writer.load_with_revision("d").unwrap();
        theirs.get_mut(ids[1]).unwrap().content = Content::markdown("epsilon paragraph");
        writer.save_checked("d", revision, Some((&theirs, &[])), None).unwrap();
        assert!(!node.is_current(&held), "{}: the copy is set aside", place.backend);
        let fresh = node.workspace("d").unwrap();
        assert_eq!(fresh.index_opened().updated, 1, "{}: caught up, not read whole", place.backend);
        let expected = ["gamma paragraph", "delta paragraph", "epsilon paragraph"];
        assert_eq!(stored(&writer, &fresh, &all), expected, "{}: after catching up", place.backend);

        // A node without the model edits; another opens the index afresh.
        let plain = library(&place, &caches.path().join("b"), None);
        run(&plain, &format!("EDIT {} SET content.text = \"alpha paragraph\"", ids[2]));
        let other = library(&place, &caches.path().join("c"), Some(model));
        let opened = other.workspace("d").unwrap();
        let expected = ["alpha paragraph", "delta paragraph", "epsilon paragraph"];
        assert_eq!(stored(&writer, &opened, &all), expected, "{}: after opening afresh", place.backend);
    }
}
