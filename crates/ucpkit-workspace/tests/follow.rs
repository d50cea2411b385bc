//! Two nodes on one PostgreSQL store: the one following changes has read
//! the other's write again by the time its next call comes, announced by
//! the store as the write commits. Prints the median time from a write's
//! commit to the follower holding the new copy. On both backends: a copy
//! another writer moved past is caught up from the blocks written since.

#[path = "../../ucpkit-store/src/testing.rs"]
mod testing;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ucpkit_core::{Block, BlockId, Content, Document, Metadata, Role};
use ucpkit_search::{Mode, SearchOptions};
use ucpkit_store::Store;
use ucpkit_workspace::{Library, LibraryConfig};

fn node(url: &str, cache: &std::path::Path) -> Arc<Library> {
    let config = LibraryConfig { store_dir: cache.to_owned(), ..LibraryConfig::new(url) };
    Arc::new(Library::open(config).unwrap())
}

#[test]
#[ignore = "needs UCP_TEST_POSTGRES: scripts/test starts a throwaway PostgreSQL cluster and runs this"]
fn a_follower_reads_another_nodes_write_as_it_commits() {
    let Some(place) = testing::places().into_iter().find(|p| p.backend == "postgres") else { return };
    let caches = tempfile::tempdir().unwrap();
    let url = place.url().unwrap();
    let writer = node(url, &caches.path().join("writer"));
    let follower = node(url, &caches.path().join("follower"));
    let mut doc = Document::new("d");
    writer.store_document(doc.clone(), Vec::new()).unwrap();
    let mut held = follower.workspace("d").unwrap();
    assert!(follower.follow_changes().unwrap(), "a PostgreSQL store announces writes");

    let mut seen = Vec::new();
    for n in 0..20u32 {
        let content = Content::markdown(format!("edit {n}"));
        let block = Block::new(Block::derive_id(&content, None, "", n), content, Metadata::with_role(Role::Paragraph));
        doc.append_child(BlockId::ROOT, block).unwrap();
        writer.store_document(doc.clone(), Vec::new()).unwrap();
        let written = Instant::now();
        // The follower's loaded copy is replaced without it being asked.
        let fresh = loop {
            let now = follower.workspace("d").unwrap();
            if !Arc::ptr_eq(&now, &held) {
                break now;
            }
            assert!(written.elapsed() < Duration::from_secs(10), "edit {n} was not heard");
            std::thread::sleep(Duration::from_micros(200));
        };
        seen.push(written.elapsed());
        assert_eq!(fresh.traversal().engine().document().len(), n as usize + 2);
        assert!(follower.is_current(&fresh));
        held = fresh;
    }
    seen.sort();
    eprintln!("a follower held another node's write {:?} after it committed (median of {})", seen[10], seen.len());
}

#[test]
fn a_sqlite_store_announces_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let library = Arc::new(Library::open(LibraryConfig::new(dir.path().join(".ucp"))).unwrap());
    assert!(!library.follow_changes().unwrap(), "SQLite readers look before each call");
}

/// A node whose copy another writer moved past brings it up to date from
/// the blocks that writer changed: the blocks it did not touch are the
/// very ones the node held (not read again), the copy is what a whole
/// read gives, and its search index was synced for the edit alone.
#[test]
fn a_stale_copy_is_caught_up_from_the_blocks_written_since() {
    for place in testing::places() {
        let caches = tempfile::tempdir().unwrap();
        let library = match place.url() {
            Some(url) => node(url, caches.path()),
            None => Arc::new(Library::open(LibraryConfig::new(place.sqlite_dir().unwrap())).unwrap()),
        };
        let mut doc = Document::new("d");
        for n in 0..50u32 {
            let content = Content::markdown(format!("paragraph {n} of the notes"));
            let id = Block::derive_id(&content, None, "", n);
            doc.append_child(BlockId::ROOT, Block::new(id, content, Metadata::with_role(Role::Paragraph))).unwrap();
        }
        let mut writer = place.open();
        writer.save_document(&doc).unwrap();
        let held = library.workspace("d").unwrap();

        let (mut theirs, revision) = writer.load_with_revision("d").unwrap();
        let (edited, kept) = (theirs.children(BlockId::ROOT)[7], theirs.children(BlockId::ROOT)[8]);
        theirs.get_mut(edited).unwrap().content = Content::markdown("a wombat was here");
        writer.save_checked("d", revision, Some((&theirs, &[])), None).unwrap();

        assert!(!library.is_current(&held), "{}", place.backend);
        let fresh = library.workspace("d").unwrap();
        {
            let (old, new) = (held.traversal().engine(), fresh.traversal().engine());
            let shared = std::ptr::eq(old.document().get(kept).unwrap(), new.document().get(kept).unwrap());
            assert!(shared, "{}: an unchanged block was read again", place.backend);
            let whole = writer.load_document("d").unwrap();
            assert_eq!(new.document().to_json(true), whole.to_json(true), "{}", place.backend);
        }
        let synced = fresh.index_opened();
        assert_eq!((synced.added, synced.updated, synced.removed), (0, 1, 0), "{}", place.backend);
        let hits = fresh.index().search_mode("wombat", &SearchOptions::default(), Mode::Bm25).unwrap();
        assert_eq!(hits.iter().map(|hit| hit.id).collect::<Vec<_>>(), [edited]);
        assert!(library.is_current(&fresh));
    }
}
