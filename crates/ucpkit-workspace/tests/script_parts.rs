//! A one-shot script that edits blocks it names by id runs on the part of
//! the store it reaches, and leaves the store exactly as running it on the
//! whole document does: the same blocks, tree, links and totals, and a
//! search index that finds the same blocks with the same scores. Scripts
//! the part cannot run (a label, a scan of the document, a failure) are
//! run on the whole document.

mod common;

use std::path::{Path, PathBuf};

use common::{data, open};
use serde_json::Value;
use ucpkit_core::{BlockId, Document, Role};
use ucpkit_workspace::{IndexOptions, NewSession, SearchRequest};

const NAME: &str = "node";

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The Node.js excerpt indexed once; each case copies the store twice.
struct Fixture {
    _dir: tempfile::TempDir,
    indexed: PathBuf,
    doc: Document,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let indexed = dir.path().join("indexed");
        let library = open(&indexed);
        library.index(&[data("node-excerpt")], Some(NAME), &IndexOptions::default(), &()).unwrap();
        let doc = library.read_document(Some(NAME)).unwrap();
        Fixture { _dir: dir, indexed, doc }
    }

    /// Blocks of `role` with at least `children` children, in document order.
    fn blocks(&self, role: Role, children: usize) -> Vec<BlockId> {
        self.doc
            .document_order()
            .filter(|&id| {
                let block = self.doc.get(id).unwrap();
                block.role() == Some(&role) && self.doc.children(id).len() >= children
            })
            .collect()
    }

    /// Runs `script` one-shot on a copy (from parts) and on a copy whose
    /// document is loaded first; asserts both stores end the same, and
    /// returns whether the first ran on parts and its transcript.
    fn same_either_way(&self, script: &str, queries: &[&str]) -> bool {
        let cases = tempfile::tempdir().unwrap();
        let (parts, whole) = (cases.path().join("parts"), cases.path().join("whole"));
        copy_dir(&self.indexed, &parts);
        copy_dir(&self.indexed, &whole);

        let one_shot = open(&parts);
        let by_parts = one_shot.run_script_replayed(NAME, None, &NewSession::default(), script, 4);
        let on_parts = !one_shot.holds(NAME);
        drop(one_shot);
        let loaded = open(&whole);
        loaded.workspace(NAME).unwrap();
        let by_whole = loaded.run_script_replayed(NAME, None, &NewSession::default(), script, 4);
        drop(loaded);

        match (by_parts, by_whole) {
            (Ok((_, _, a)), Ok((_, _, b))) => {
                assert_eq!(a.transcript(), b.transcript(), "{script}");
                assert_eq!(a.failure(), b.failure(), "{script}");
                assert_eq!(a.written, b.written, "{script}");
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{script}"),
            (a, b) => panic!("{script}: one failed and one did not: {:?} / {:?}", a.err(), b.err()),
        }
        assert_eq!(stored(&parts), stored(&whole), "{script}");
        assert_eq!(totals(&parts), totals(&whole), "{script}");
        assert_eq!(totals(&parts), recount(&parts), "the stored totals are the document's: {script}");
        for query in queries {
            assert_eq!(hits(&parts, query), hits(&whole, query), "{script}: search {query:?}");
        }
        on_parts
    }
}

/// The stored document as JSON, without the times edits stamp.
fn stored(dir: &Path) -> Value {
    let doc = open(dir).read_document(Some(NAME)).unwrap();
    let mut json: Value = serde_json::from_str(&doc.to_json(false)).unwrap();
    strip_times(&mut json);
    json
}

fn strip_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, _| !key.ends_with("_ms"));
            map.values_mut().for_each(strip_times);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_times),
        _ => {}
    }
}

/// Blocks, tokens and edges as the store's summary lists them.
fn totals(dir: &Path) -> (u64, u64, u64) {
    let summary = open(dir).documents().unwrap().into_iter().find(|d| d.name == NAME).unwrap();
    (summary.blocks, summary.tokens, summary.edges)
}

/// The same totals counted over the stored document.
fn recount(dir: &Path) -> (u64, u64, u64) {
    let doc = open(dir).read_document(Some(NAME)).unwrap();
    let tokens = doc.blocks().map(|b| u64::from(b.metadata.tokens.unwrap_or(0))).sum();
    (doc.len() as u64, tokens, doc.edges().len() as u64)
}

/// The search hits for `query` with their scores, from the stored index.
fn hits(dir: &Path, query: &str) -> Vec<(String, String, Vec<String>)> {
    let library = open(dir);
    let workspace = library.workspace(NAME).unwrap();
    assert!(workspace.index_opened().rebuilt.is_none() && !workspace.index_opened().changed(), "index was current");
    // Every hit: a cut among blocks of equal score would fall anywhere.
    let request = SearchRequest { limit: 1000, ..SearchRequest::new(query) };
    let results = workspace.search(&request).unwrap().results;
    assert!(results.len() < 1000);
    let mut hits: Vec<_> = results.into_iter().map(|h| (format!("{:.9}", h.score), h.id, h.heading_path)).collect();
    // Blocks of equal score come in the order the index happens to hold them.
    hits.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    hits
}

#[test]
fn scripts_that_name_their_blocks_write_what_the_whole_document_would() {
    let fixture = Fixture::new();
    let paragraphs = fixture.blocks(Role::Paragraph, 0);
    let sections = fixture.blocks(Role::Heading2, 2);
    let (p, q, r) = (paragraphs[3], paragraphs[30], paragraphs[60]);
    let (s, t) = (sections[1], sections[sections.len() - 2]);
    let linked = fixture.doc.edges().iter().next().expect("the excerpt links between pages").clone();
    let edge_type = linked.edge_type.to_string();
    let cases = [
        (format!("EDIT {p} SET text = \"zebra crossing rules\""), vec!["zebra crossing"]),
        (format!("EDIT {p} SET tags += [\"reviewed\"]"), vec![]),
        // A new title: the index re-reads the blocks below it.
        (format!("EDIT {s} SET text = \"## Quokka handling\""), vec!["quokka"]),
        (
            format!("APPEND {s} text :: \"A wombat paragraph\"\nAPPEND {s} text AT 0 :: \"A wombat preface\""),
            vec!["wombat"],
        ),
        (format!("MOVE {s} TO {t}"), vec!["quokka", "stream"]),
        (format!("MOVE {q} BEFORE {r}"), vec![]),
        (format!("DELETE {s} CASCADE"), vec!["stream"]),
        (format!("DELETE {s}"), vec![]),
        (format!("DELETE {} CASCADE", linked.target), vec![]),
        (format!("LINK {p} references {q}\nUNLINK {} {edge_type} {}", linked.source, linked.target), vec![]),
        (
            format!("ATOMIC {{\n  EDIT {q} SET text = \"okapi\"\n  APPEND {q} text :: \"okapi child\"\n}}"),
            vec!["okapi"],
        ),
        (
            format!(
                "BEGIN TRANSACTION\nEDIT {p} SET text = \"rolled back\"\nROLLBACK\nBEGIN TRANSACTION\nEDIT {r} SET \
                 text = \"narwhal\"\nCOMMIT"
            ),
            vec!["narwhal", "rolled back"],
        ),
    ];
    for (script, queries) in &cases {
        assert!(fixture.same_either_way(script, queries), "ran on parts: {script}");
    }
}

#[test]
fn blocks_named_inside_a_deleted_moved_or_retitled_section_do_not_cut_it_short() {
    let fixture = Fixture::new();
    let doc = &fixture.doc;
    // A section whose first subsection has content of its own.
    let (outer, inner) = fixture
        .blocks(Role::Heading1, 2)
        .into_iter()
        .find_map(|h| {
            let inner = doc
                .children(h)
                .iter()
                .copied()
                .find(|&c| doc.get(c).unwrap().role() == Some(&Role::Heading2) && !doc.children(c).is_empty())?;
            Some((h, inner))
        })
        .expect("a heading with a subsection with content");
    let elsewhere =
        fixture.blocks(Role::Heading2, 2).into_iter().find(|&h| !doc.ancestors(h).any(|a| a == outer)).unwrap();
    for script in [
        format!("EDIT {inner} SET label = \"inner\"\nDELETE {outer} CASCADE"),
        format!("EDIT {outer} SET text = \"# Renamed outer\"\nEDIT {inner} SET label = \"inner\""),
        format!("EDIT {inner} SET label = \"inner\"\nMOVE {outer} TO {elsewhere}"),
    ] {
        assert!(fixture.same_either_way(&script, &["renamed outer", "stream"]), "ran on parts: {script}");
    }
}

#[test]
fn a_rewritten_blocks_links_keep_their_order() {
    let fixture = Fixture::new();
    let doc = &fixture.doc;
    let source = doc
        .document_order()
        .find(|&id| {
            let out = doc.edges().outgoing(id);
            out.len() >= 2 && out[0].target != out[1].target
        })
        .expect("a block linking to two blocks");
    let second = doc.edges().outgoing(source)[1].target;
    let script = format!("EDIT {second} SET label = \"second\"\nEDIT {source} SET label = \"source\"");
    assert!(fixture.same_either_way(&script, &[]), "ran on parts: {script}");
}

#[test]
fn every_kind_of_block_deleted_moved_or_edited_from_parts_writes_the_same() {
    let fixture = Fixture::new();
    let order: Vec<BlockId> = fixture.doc.document_order().filter(|id| !id.is_root()).collect();
    let home = fixture.blocks(Role::Heading2, 2)[0];
    // Blocks spread over the document, of every role and depth.
    for (k, &id) in order.iter().enumerate().step_by(order.len() / 12) {
        let script = match k % 3 {
            0 => format!("DELETE {id} CASCADE"),
            1 => format!("EDIT {id} SET text = \"capybara {k}\""),
            _ if fixture.doc.ancestors(home).any(|a| a == id) || id == home => continue,
            _ => format!("MOVE {id} TO {home} AT 0"),
        };
        assert!(fixture.same_either_way(&script, &["capybara"]), "ran on parts: {script}");
    }
}

#[test]
fn scripts_a_part_cannot_run_are_run_on_the_whole_document() {
    let fixture = Fixture::new();
    let p = fixture.blocks(Role::Paragraph, 0)[5];
    let missing = BlockId::from_bytes([7; 12]);
    for script in [
        // Found by scanning the document, not named.
        "FIND ROLE=paragraph".to_owned(),
        "DELETE WHERE role = \"paragraph\" AND text CONTAINS \"deprecated\"".to_owned(),
        format!("APPEND {p} text WITH label=\"mine\" :: \"labelled\"\nEDIT @mine SET text = \"relabelled\""),
        // A failure is reported, and undone, as the whole document does.
        format!("EDIT {p} SET text = \"never kept\"\nEDIT {missing} SET text = \"no such block\""),
        "SNAPSHOT CREATE \"before\"".to_owned(),
    ] {
        assert!(!fixture.same_either_way(&script, &["never kept"]), "ran on the whole document: {script}");
    }
}

#[test]
fn a_named_session_run_from_parts_is_taken_up_again() {
    let fixture = Fixture::new();
    let p = fixture.blocks(Role::Paragraph, 0)[2];
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture.indexed, dir.path());
    let options = NewSession { task: Some("tidy the intro".into()), ..NewSession::default() };
    for n in 0..3 {
        let library = open(dir.path());
        let script = format!("EDIT {p} SET text = \"pass {n}\"");
        let (_, _, run) = library.run_script_replayed(NAME, Some("tidy"), &options, &script, 4).unwrap();
        assert!(run.ok() && run.written && !library.holds(NAME));
        assert_eq!(run.metrics.commands, n as u64 + 1, "the session's counters carry over");
    }
    let library = open(dir.path());
    let doc = library.read_document(Some(NAME)).unwrap();
    assert_eq!(doc.get(p).unwrap().plain_text(), "pass 2");
}
