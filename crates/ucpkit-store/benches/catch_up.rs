//! A copy of a document another writer moved on by one edit, brought up
//! to date: read whole again (`whole_read`) against caught up from the
//! log of changed blocks (`catch_up`), side by side, on SQLite and, when
//! `UCP_TEST_POSTGRES` names a server (`scripts/pg-cluster start DIR`),
//! on PostgreSQL: `cargo bench -p ucpkit-store --all-features --bench catch_up`.
//!
//! The document is synthetic and deterministic: sections of paragraphs,
//! 100,000 blocks under `cargo bench` (2,000 under `cargo test`).

#[path = "../src/testing.rs"]
mod testing;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use ucpkit_core::{Block, BlockId, Content, Document, Metadata, Role};
use ucpkit_store::Store;

fn main() {
    divan::main();
}

/// `full` under `cargo bench`; `small` under `cargo test`, where divan
/// runs every bench once to prove it works.
fn scaled(full: usize, small: usize) -> usize {
    if std::env::args().any(|a| a == "--bench") {
        full
    } else {
        small
    }
}

/// A store holding the document one edit past `copy`, read at `since`.
struct Fixture {
    store: Store,
    copy: Document,
    since: u64,
    _place: testing::Place,
}

/// The fixture of `backend`, made once per run; `None` when this run has
/// no store on it.
fn fixture(backend: &'static str) -> Option<&'static Mutex<Fixture>> {
    static FIXTURES: OnceLock<Mutex<HashMap<&'static str, &'static Mutex<Fixture>>>> = OnceLock::new();
    let mut fixtures = FIXTURES.get_or_init(Default::default).lock().unwrap();
    if let Some(fixture) = fixtures.get(backend) {
        return Some(fixture);
    }
    let place = testing::places().into_iter().find(|place| place.backend == backend)?;
    let mut store = place.open();
    store.save_document(&document(scaled(100_000, 2_000))).unwrap();
    let (copy, since) = store.load_with_revision("d").unwrap();
    let (mut theirs, revision) = store.load_with_revision("d").unwrap();
    let edited = theirs.children(theirs.children(BlockId::ROOT)[3])[5];
    theirs.get_mut(edited).unwrap().content = Content::markdown("An edit another node made.");
    store.save_checked("d", revision, Some((&theirs, &[])), None).unwrap();
    let fixture: &'static Mutex<Fixture> =
        Box::leak(Box::new(Mutex::new(Fixture { store, copy, since, _place: place })));
    fixtures.insert(backend, fixture);
    Some(fixture)
}

/// Sections of twenty paragraphs each, `blocks` blocks in all.
fn document(blocks: usize) -> Document {
    let mut doc = Document::new("d");
    let mut section = BlockId::ROOT;
    for n in 0..blocks as u32 {
        let (text, role) = if n % 21 == 0 {
            (format!("## Section {n}"), Role::Heading2)
        } else {
            (format!("Paragraph {n} says what paragraph {n} says, in a sentence of ordinary length."), Role::Paragraph)
        };
        let content = Content::markdown(text);
        let heading = role == Role::Heading2;
        let block = Block::new(Block::derive_id(&content, Some(&role), "", n), content, Metadata::with_role(role));
        if heading {
            section = doc.append_child(BlockId::ROOT, block).unwrap();
        } else {
            doc.append_child(section, block).unwrap();
        }
    }
    doc
}

#[divan::bench(args = ["sqlite", "postgres"])]
fn whole_read(bencher: divan::Bencher, backend: &'static str) {
    let Some(fixture) = fixture(backend) else { return };
    bencher.bench(|| fixture.lock().unwrap().store.load_with_revision("d").unwrap());
}

#[divan::bench(args = ["sqlite", "postgres"])]
fn catch_up(bencher: divan::Bencher, backend: &'static str) {
    let Some(fixture) = fixture(backend) else { return };
    bencher.bench(|| {
        let fixture = fixture.lock().unwrap();
        let up = fixture.store.catch_up(&fixture.copy, fixture.since).unwrap().expect("one logged write");
        assert_eq!(up.changed.len(), 1);
        up
    });
}
