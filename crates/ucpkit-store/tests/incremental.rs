//! A document saved change by change reads back exactly as the copy in
//! memory, whatever edits came between saves: inserts anywhere, moves,
//! removals of every mode, content and metadata edits, edges added and
//! removed, snapshots restored.

use proptest::prelude::*;
use ucpkit_core::{Block, BlockId, Content, Document, Edge, EdgeType, Metadata, RemoveMode, Role};
use ucpkit_store::Store;

#[path = "../src/testing.rs"]
mod testing;

/// One change to the document, its block choices as indexes into the
/// blocks present when it runs.
#[derive(Debug, Clone)]
enum Step {
    Insert {
        parent: usize,
        index: usize,
        text: String,
    },
    Move {
        block: usize,
        parent: usize,
        index: usize,
    },
    Remove {
        block: usize,
        mode: u8,
    },
    Edit {
        block: usize,
        text: String,
    },
    Label {
        block: usize,
        label: Option<String>,
    },
    Link {
        from: usize,
        to: usize,
    },
    Unlink {
        from: usize,
    },
    /// Puts the document back to an earlier copy (as a snapshot restore
    /// does): the journal no longer knows what changed.
    Restore,
    Save,
}

fn step() -> impl Strategy<Value = Step> {
    let text = "[a-z ]{0,12}";
    prop_oneof![
        4 => (any::<usize>(), any::<usize>(), text).prop_map(|(parent, index, text)| Step::Insert { parent, index, text }),
        2 => (any::<usize>(), any::<usize>(), any::<usize>()).prop_map(|(block, parent, index)| Step::Move { block, parent, index }),
        2 => (any::<usize>(), 0u8..3).prop_map(|(block, mode)| Step::Remove { block, mode }),
        2 => (any::<usize>(), text).prop_map(|(block, text)| Step::Edit { block, text }),
        1 => (any::<usize>(), prop::option::of("[a-z]{1,4}")).prop_map(|(block, label)| Step::Label { block, label }),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(from, to)| Step::Link { from, to }),
        1 => any::<usize>().prop_map(|from| Step::Unlink { from }),
        1 => Just(Step::Restore),
        3 => Just(Step::Save),
    ]
}

fn pick(doc: &Document, n: usize) -> BlockId {
    let ids = doc.ordered_ids();
    ids[n % ids.len()]
}

fn apply(doc: &mut Document, step: &Step, counter: &mut u32, earlier: &Document) {
    match step {
        Step::Insert { parent, index, text } => {
            let parent = pick(doc, *parent);
            let content = Content::markdown(text.clone());
            *counter += 1;
            let id = Block::derive_id(&content, Some(&Role::Paragraph), "t", *counter);
            let metadata = Metadata { tokens: Some(text.len() as u32 + 1), ..Metadata::with_role(Role::Paragraph) };
            let block = Block::new(id, content, metadata);
            let index = index % (doc.children(parent).len() + 1);
            doc.insert_child(parent, index, block).unwrap();
        }
        Step::Move { block, parent, index } => {
            let (block, parent) = (pick(doc, *block), pick(doc, *parent));
            let len = doc.children(parent).len() + 1;
            // Refusals (the root, a cycle) change nothing, as in the engine.
            let _ = doc.move_block(block, parent, Some(index % len)).or_else(|_| doc.move_block(block, parent, None));
        }
        Step::Remove { block, mode } => {
            let mode = [RemoveMode::Cascade, RemoveMode::OrphanChildren, RemoveMode::PreserveChildren][*mode as usize];
            let _ = doc.remove_block(pick(doc, *block), mode);
        }
        Step::Edit { block, text } => {
            let id = pick(doc, *block);
            let block = doc.get_mut(id).unwrap();
            block.content = Content::markdown(text.clone());
            block.metadata.tokens = Some(text.len() as u32 * 2);
        }
        Step::Label { block, label } => {
            let id = pick(doc, *block);
            doc.get_mut(id).unwrap().metadata.label = label.clone();
        }
        Step::Link { from, to } => {
            let (from, to) = (pick(doc, *from), pick(doc, *to));
            doc.add_edge(Edge::new(from, EdgeType::References, to)).unwrap();
        }
        Step::Unlink { from } => {
            let from = pick(doc, *from);
            if let Some(edge) = doc.edges().outgoing(from).first().cloned() {
                doc.remove_edge(edge.source, &edge.edge_type, edge.target);
            }
        }
        Step::Restore => {
            let version = doc.version();
            *doc = Document::from_json(&earlier.to_json(false)).unwrap();
            doc.advance_version_past(version);
        }
        Step::Save => {}
    }
}

#[test]
fn saving_what_changed_reads_back_as_the_copy_in_memory() {
    for place in testing::places() {
        let store = std::cell::RefCell::new(place.open());
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(64));
        let outcome = runner
            .run(&prop::collection::vec(step(), 1..40), |steps| save_change_by_change(&mut store.borrow_mut(), &steps));
        outcome.unwrap_or_else(|e| panic!("{}: {e}", place.backend));
    }
}

/// Saves a document after each of `steps` that says so, and at the end,
/// checking what the store reads back each time.
fn save_change_by_change(store: &mut Store, steps: &[Step]) -> Result<(), TestCaseError> {
    let mut doc = Document::new("d");
    let mut counter = 0;
    for n in 0..4 {
        apply(
            &mut doc,
            &Step::Insert { parent: 0, index: n, text: format!("seed {n}") },
            &mut counter,
            &Document::new("d"),
        );
    }
    let mut revision = store.save_document(&doc).unwrap();
    let (mut doc, loaded) = store.load_with_revision("d").unwrap();
    prop_assert_eq!(loaded, revision);
    let earlier = doc.clone();
    for step in steps {
        apply(&mut doc, step, &mut counter, &earlier);
        if matches!(step, Step::Save) {
            revision = store.save_checked("d", revision, Some((&doc, &[])), None).unwrap().document;
            doc.mark_saved();
            prop_assert_eq!(store.load_document("d").unwrap().to_json(true), doc.to_json(true));
        }
    }
    store.save_checked("d", revision, Some((&doc, &[])), None).unwrap();
    let back = store.load_document("d").unwrap();
    prop_assert_eq!(back.to_json(true), doc.to_json(true));
    let summary = &store.documents().unwrap()[0];
    prop_assert_eq!((summary.blocks, summary.edges), (doc.len() as u64, doc.edges().len() as u64));
    let tokens: u64 = doc.blocks().map(|b| u64::from(b.metadata.tokens.unwrap_or(0))).sum();
    prop_assert_eq!(summary.tokens, tokens, "the token total follows the changed rows");
    store.integrity_check().unwrap();
    Ok(())
}

#[test]
fn an_edit_rewrites_only_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(dir.path()).unwrap();
    let mut doc = Document::new("d");
    let mut counter = 0;
    let empty = Document::new("d");
    for n in 0..2000 {
        apply(&mut doc, &Step::Insert { parent: n, index: 0, text: format!("block {n}") }, &mut counter, &empty);
    }
    store.save_document(&doc).unwrap();
    let (mut doc, _) = store.load_with_revision("d").unwrap();
    let id = pick(&doc, 1234);
    doc.get_mut(id).unwrap().content = Content::markdown("changed");
    let changes = doc.unsaved_changes().unwrap();
    assert_eq!(changes.blocks, vec![id]);
    // What a save writes lands in the write-ahead log, emptied first.
    let written = |store: &mut Store, save: &dyn Fn(&mut Store)| -> u64 {
        let conn = rusqlite::Connection::open(dir.path().join(ucpkit_store::DATABASE_FILE)).unwrap();
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
        save(store);
        std::fs::metadata(dir.path().join(format!("{}-wal", ucpkit_store::DATABASE_FILE))).unwrap().len()
    };
    let revision = store.revision("d").unwrap();
    let edit = written(&mut store, &|store| {
        store.save_checked("d", revision, Some((&doc, &[])), None).unwrap();
    });
    assert_eq!(store.load_document("d").unwrap().to_json(true), doc.to_json(true));
    let whole = written(&mut store, &|store| {
        store.save_document(&doc).unwrap();
    });
    assert!(edit * 10 < whole, "an edit wrote {edit} bytes, the whole document {whole}");
    assert_eq!(store.load_document("d").unwrap().to_json(true), doc.to_json(true));
}
