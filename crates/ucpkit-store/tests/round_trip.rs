//! Whatever document goes into the store comes back identical: random
//! trees of every content variant, metadata field and edge type.

use proptest::prelude::*;
use ucpkit_core::{
    Align, Block, BlockId, Content, Document, Edge, EdgeType, MathNotation, MediaKind, Metadata, Role, SourceLocation,
    TextFormat, Timestamps,
};
use ucpkit_store::{SessionWrite, Store, Written};

#[path = "../src/testing.rs"]
mod testing;
use testing::places;

fn content() -> impl Strategy<Value = Content> {
    let text = "\\PC{0,40}";
    prop_oneof![
        (text, prop_oneof![Just(TextFormat::Plain), Just(TextFormat::Markdown), Just(TextFormat::Html)])
            .prop_map(|(text, format)| Content::Text { text, format }),
        (prop::option::of("[a-z]{1,8}"), text).prop_map(|(language, source)| Content::Code { language, source }),
        (prop::collection::vec(text, 0..3), prop::collection::vec(prop::collection::vec(text, 0..3), 0..3))
            .prop_map(|(columns, rows)| Content::Table { columns, rows, align: vec![Align::Right] }),
        text.prop_map(|expression| Content::Math { notation: MathNotation::Latex, expression }),
        (text, prop::option::of(text)).prop_map(|(uri, alt)| Content::Media {
            kind: MediaKind::Video,
            uri,
            alt,
            title: None
        }),
        text.prop_map(|s| Content::Json { value: serde_json::json!({ "s": s, "n": [1, 2.5, null] }) }),
        prop::collection::vec(any::<u8>(), 0..16).prop_map(|data| Content::Binary { mime: "a/b".into(), data }),
        Just(Content::Composite),
    ]
}

fn metadata() -> impl Strategy<Value = Metadata> {
    (
        prop::option::of(prop_oneof![Just(Role::Paragraph), Just(Role::Heading3), Just(Role::Custom("x-y".into()))]),
        prop::option::of("\\PC{0,10}"),
        prop::collection::vec("[a-z]{1,5}", 0..3),
        prop::option::of("\\PC{0,10}"),
        prop::option::of(("[a-z/]{1,10}", 0u32..500, 0u32..500)),
        prop::option::of(any::<u32>()),
        (any::<i64>(), any::<i64>()),
        prop::option::of("\\PC{0,10}"),
    )
        .prop_map(|(role, label, tags, summary, source, tokens, (created_ms, modified_ms), custom)| {
            let mut meta = Metadata {
                role,
                label,
                tags,
                summary,
                source: source.map(|(file, start_line, end_line)| SourceLocation {
                    file: file.into(),
                    start_line,
                    end_line,
                }),
                tokens,
                timestamps: Timestamps { created_ms, modified_ms },
                ..Metadata::default()
            };
            if let Some(value) = custom {
                meta.custom.insert("note".into(), value.into());
            }
            meta
        })
}

fn document() -> impl Strategy<Value = Document> {
    let blocks = prop::collection::vec((any::<usize>(), content(), metadata()), 0..40);
    let edges = prop::collection::vec((any::<usize>(), any::<usize>(), 0usize..4), 0..20);
    (blocks, edges).prop_map(|(blocks, edges)| {
        let mut doc = Document::new("prop");
        doc.metadata.title = Some("T".into());
        let mut ids = vec![BlockId::ROOT];
        for (i, (parent, content, meta)) in blocks.into_iter().enumerate() {
            let id = Block::derive_id(&content, meta.role.as_ref(), "", i as u32);
            doc.append_child(ids[parent % ids.len()], Block::new(id, content, meta)).unwrap();
            ids.push(id);
        }
        let types = [EdgeType::LinksTo, EdgeType::Supports, EdgeType::Custom("rel".into()), EdgeType::CitedBy];
        for (a, b, t) in edges {
            let mut edge = Edge::new(ids[a % ids.len()], types[t].clone(), ids[b % ids.len()]);
            edge.metadata.note = (t == 1).then(|| "why".to_owned());
            let _ = doc.add_edge(edge);
        }
        doc
    })
}

#[test]
fn documents_come_back_identical() {
    for place in places() {
        let store = std::cell::RefCell::new(place.open());
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(64));
        let outcome = runner.run(&document(), |doc| {
            let mut store = store.borrow_mut();
            store.save_document(&doc).unwrap();
            let back = store.load_document("prop").unwrap();
            prop_assert_eq!(back.to_json(false), doc.to_json(false));
            prop_assert!(back.validate().is_valid());
            Ok(())
        });
        outcome.unwrap_or_else(|e| panic!("{}: {e}", place.backend));
    }
}

#[test]
fn concurrent_first_opens_create_the_schema_once() {
    for place in places() {
        std::thread::scope(|scope| {
            for i in 0..8 {
                let place = &place;
                scope.spawn(move || place.open().save_document(&Document::new(format!("doc{i}"))).unwrap());
            }
        });
        let store = place.open();
        assert_eq!(store.documents().unwrap().len(), 8, "{}", place.backend);
        store.integrity_check().unwrap();
    }
}

#[test]
fn a_newer_schema_is_refused() {
    for place in places() {
        drop(place.open());
        if let Some(dir) = place.sqlite_dir() {
            let db = rusqlite::Connection::open(dir.join(ucpkit_store::DATABASE_FILE)).unwrap();
            db.execute_batch("PRAGMA user_version = 99;").unwrap();
            drop(db);
            let err = Store::open(&dir).err().expect("refused");
            assert!(err.to_string().contains("newer than this ucp supports"), "{err}");
        }
        #[cfg(feature = "postgres")]
        if let Some(url) = place.url() {
            let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
            db.batch_execute("INSERT INTO ucp_schema (version) VALUES (99)").unwrap();
            let err = Store::open_url(url, std::env::temp_dir()).err().expect("refused");
            assert!(err.to_string().contains("newer than this ucp supports"), "{err}");
        }
    }
}

/// A database of each earlier PostgreSQL schema (1: no log of changed
/// blocks, no vectors; 2: no vectors) is brought to the current one when
/// a node opens it, keeping what it holds; the log starts with the next
/// write.
#[cfg(feature = "postgres")]
#[test]
fn every_earlier_postgres_schema_is_migrated() {
    for place in places() {
        let Some(url) = place.url() else { continue };
        let mut store = place.open();
        store.save_document(&Document::new("d")).unwrap();
        drop(store);
        let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
        for (version, added_since) in [(1, "block_changes, vectors"), (2, "vectors")] {
            db.batch_execute(&format!(
                "DROP TABLE {added_since}; DELETE FROM ucp_schema; INSERT INTO ucp_schema VALUES ({version})"
            ))
            .unwrap();
            let mut store = place.open();
            let now: i64 = db.query_one("SELECT max(version) FROM ucp_schema", &[]).unwrap().get(0);
            assert_eq!(now, 3, "from version {version}");
            assert_eq!(store.load_document("d").unwrap().len(), 1, "what it held is kept");
            let before = store.revision("d").unwrap();
            let after = store.save_document(&Document::new("d")).unwrap();
            assert!(store.changed_since("d", before).unwrap().is_none(), "a whole write");
            assert_eq!(store.changed_since("d", after).unwrap(), Some((after, Vec::new())));
            store.save_vectors("d", "m", &[([7; 16], vec![0.5, 0.25])]).unwrap();
            assert_eq!(store.load_vectors("d", "m", &[[7; 16]]).unwrap()[&[7; 16]], [0.5, 0.25]);
        }
    }
}

#[test]
fn sessions_are_saved_listed_and_deleted_with_their_document() {
    for place in places() {
        let mut store = place.open();
        let doc = ucpkit_core::Document::new("d");
        let session = |name, record, opened_at| Some(SessionWrite { name, record, opened_at });
        let written = store.save_checked("d", 0, Some((&doc, &[])), session("a", "{\"v\":1}", 0)).unwrap();
        assert_eq!(written, Written { document: 1, session: Some(1) });
        store.save_checked("d", 1, None, session("a", "{\"v\":2}", 1)).unwrap();
        store.save_checked("d", 1, None, session("b", "{}", 0)).unwrap();
        let stored = store.load_session("d", "a").unwrap().unwrap();
        assert_eq!((stored.record.as_str(), stored.revision), ("{\"v\":2}", 2));
        assert_eq!(store.load_session("d", "zz").unwrap(), None);
        let names: Vec<String> = store.sessions("d").unwrap().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(store.delete_session("d", "b").unwrap());
        assert!(!store.delete_session("d", "b").unwrap());
        assert_eq!(store.load_document("d").unwrap().len(), 1, "the document was saved with the session");
        store.delete_document("d").unwrap();
        assert!(store.sessions("d").unwrap().is_empty());
    }
}

/// Two holders of one named session: the second save, based on the record
/// as it was before the first, writes nothing.
#[test]
fn a_session_saved_by_another_holder_is_not_overwritten() {
    for place in places() {
        let mut store = place.open();
        store.save_document(&Document::new("d")).unwrap();
        let session = |record, opened_at| Some(SessionWrite { name: "s", record, opened_at });
        store.save_checked("d", 1, None, session("{\"by\":\"first\"}", 0)).unwrap();
        let refused = store.save_checked("d", 1, None, session("{\"by\":\"second\"}", 0));
        match refused {
            Err(ucpkit_store::StoreError::SessionConflict { expected: 0, found: 1, .. }) => {}
            other => panic!("expected a session conflict, got {other:?}"),
        }
        assert_eq!(store.load_session("d", "s").unwrap().unwrap().record, "{\"by\":\"first\"}");
    }
}

/// Every write bumps a document's revision, and a checked write based on
/// a stale revision (another writer came in between) writes nothing.
#[test]
fn a_write_based_on_a_stale_revision_is_refused() {
    for place in places() {
        let mut first = place.open();
        let mut second = place.open();
        assert_eq!(first.revision("d").unwrap(), 0);
        first.save_document(&Document::new("d")).unwrap();
        let (loaded, revision) = second.load_with_revision("d").unwrap();
        assert_eq!(revision, 1);

        let mut edited = Document::new("d");
        edited.metadata.title = Some("first".into());
        assert_eq!(first.save_checked("d", 1, Some((&edited, &[])), None).unwrap().document, 2);
        let session = Some(SessionWrite { name: "s", record: "{}", opened_at: 0 });
        let stale = second.save_checked("d", revision, Some((&loaded, &[])), session);
        match stale {
            Err(ucpkit_store::StoreError::Conflict { expected: 1, found: 2, .. }) => {}
            other => panic!("expected a conflict, got {other:?}"),
        }
        assert_eq!(
            second.load_document("d").unwrap().metadata.title.as_deref(),
            Some("first"),
            "the first write stands"
        );
        assert_eq!(second.load_session("d", "s").unwrap(), None, "nothing of the refused write was stored");
        // A session alone, on the current revision, leaves the revision as it is.
        assert_eq!(second.save_checked("d", 2, None, session).unwrap(), Written { document: 2, session: Some(1) });
        assert!(first.delete_document("d").unwrap());
        assert_eq!(first.revision("d").unwrap(), 3, "a deletion is a write too");
    }
}

/// Processes that open a store nobody has created yet, all at once, each
/// get it (one creates it, the others wait their turn): none is refused
/// with "database is locked".
#[test]
fn a_new_store_opened_by_many_at_once_opens_for_all() {
    for place in (0..5).flat_map(|_| places()) {
        let barrier = std::sync::Barrier::new(8);
        std::thread::scope(|scope| {
            let openers: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        barrier.wait();
                        drop(place.open());
                    })
                })
                .collect();
            for opener in openers {
                opener.join().unwrap();
            }
        });
    }
}
