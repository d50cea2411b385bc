//! Indexing a folder again after some files changed gives the document a
//! full ingest builds (blocks, tree, links), while touching only what the
//! changed files and the links into them hold.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use ucpkit_core::{BlockId, Document};
use ucpkit_ingest::{ingest, update, IngestOptions, Ingested, Update};

fn full(dir: &Path) -> Ingested {
    ingest(&[dir.to_path_buf()], "corpus", &IngestOptions::default(), &()).unwrap()
}

/// Every edge as `source type target`, per source in order, sources sorted.
fn edges(doc: &Document) -> Vec<String> {
    let mut sources: Vec<BlockId> = doc.edges().iter().map(|e| e.source).collect();
    sources.sort_unstable();
    sources.dedup();
    sources
        .into_iter()
        .flat_map(|s| doc.edges().outgoing(s).iter().map(|e| format!("{} {} {}", e.source, e.edge_type, e.target)))
        .collect()
}

/// The record without the files' stamps (those of files read at
/// different times differ).
fn without_stamps(sources: &ucpkit_ingest::Sources) -> (serde_json::Value, Vec<u8>) {
    let bytes = sources.to_bytes();
    let mut value: serde_json::Value = serde_json::from_slice(&bytes.files).unwrap();
    for file in value["files"].as_array_mut().unwrap() {
        file.as_object_mut().unwrap().remove("stamp");
    }
    (value, bytes.links)
}

/// Re-indexes `dir` incrementally from `before` and checks the result
/// against a full ingest; returns the blocks the update touched.
fn reindex_matches_full(dir: &Path, before: &Ingested) -> Option<Vec<BlockId>> {
    let paths = [dir.to_path_buf()];
    let options = IngestOptions::default();
    let mut document = before.document.clone();
    document.mark_saved();
    let fresh = full(dir);
    // As a store keeps it: the files part read on every run, the links
    // only to apply changes.
    let kept = before.sources.to_bytes();
    let previous = ucpkit_ingest::Sources::from_bytes(&kept.files).expect("the record reads back");
    match update(&paths, &options, &(), &previous).unwrap() {
        Update::Unchanged(report, _) => {
            assert!(document.same_content(&fresh.document), "unchanged, yet a full ingest differs");
            assert_eq!(report.files, fresh.report.files);
            None
        }
        Update::Rebuild => panic!("the same files: no rebuild expected"),
        Update::Changed(changes) => {
            let (report, sources) =
                changes.apply(&mut document, &kept.links).expect("the document the sources describe");
            assert!(changes_without_links_are_refused(dir, &previous, &before.document));
            assert!(document.same_content(&fresh.document), "blocks or tree differ from a full ingest");
            assert_eq!(edges(&document), edges(&fresh.document), "links differ from a full ingest");
            assert_eq!(without_stamps(&sources), without_stamps(&fresh.sources));
            assert_eq!(
                (report.files, report.bytes, report.blocks, report.tokens, report.links),
                (fresh.report.files, fresh.report.bytes, fresh.report.blocks, fresh.report.tokens, fresh.report.links)
            );
            assert!(document.validate().is_valid());
            Some(document.unsaved_changes().expect("changes known").blocks)
        }
    }
}

/// Applying changes with links that do not fit the files changes nothing.
fn changes_without_links_are_refused(dir: &Path, previous: &ucpkit_ingest::Sources, document: &Document) -> bool {
    let Update::Changed(changes) = update(&[dir.to_path_buf()], &IngestOptions::default(), &(), previous).unwrap()
    else {
        return false;
    };
    let mut copy = document.clone();
    changes.apply(&mut copy, b"[]").is_none() && copy.to_json(false) == document.to_json(false)
}

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_changed_file_is_replaced_and_links_into_it_follow_its_anchors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "a.md", "# A\n\nSee [two](guide/b.md#two) and [new](guide/b.md#new).\n\n## Alpha\n\nText.\n");
    write(d, "guide/b.md", "# B\n\nBack to [a](../a.md#alpha).\n\n## Two\n\nOld text.\n");
    write(
        d,
        "guide/c.html",
        "<h1>C</h1><p>Out to <a href=\"https://example.org\">x</a> and <a href=\"b.md\">b</a>.</p>",
    );
    write(d, "notes.txt", "plain\n\ntext\n");
    let before = full(d);

    assert_eq!(reindex_matches_full(d, &before), None, "nothing changed");

    // b gains the anchor a already links to, loses none, and its text changes.
    write(d, "guide/b.md", "# B\n\nBack to [a](../a.md#alpha).\n\n## Two\n\nNew text.\n\n## New\n\nMore.\n");
    let touched = reindex_matches_full(d, &before).expect("b changed");
    let untouched = before.document.document_order().filter(|id| {
        before.document.get(*id).and_then(|b| b.metadata.source.as_ref()).is_some_and(|s| &*s.file == "guide/c.html")
    });
    for id in untouched {
        assert!(!touched.contains(&id), "c.html's blocks are not rewritten");
    }
}

#[test]
fn files_that_come_or_go_rebuild_and_skipped_files_stay_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "a.md", "# A\n");
    std::fs::write(d.join("b.md"), [0u8, 1, 2]).unwrap();
    let before = full(d);
    let paths = [d.to_path_buf()];
    let options = IngestOptions::default();
    assert!(
        matches!(update(&paths, &options, &(), &before.sources).unwrap(), Update::Unchanged(r, _) if r.warnings.len() == 1)
    );

    std::fs::write(d.join("b.md"), "# B now readable\n").unwrap();
    assert!(matches!(update(&paths, &options, &(), &before.sources).unwrap(), Update::Rebuild));
    std::fs::write(d.join("b.md"), [0u8]).unwrap();
    write(d, "c.md", "# C\n");
    assert!(matches!(update(&paths, &options, &(), &before.sources).unwrap(), Update::Rebuild));
    let other: Vec<PathBuf> = vec![d.join("a.md")];
    assert!(matches!(update(&other, &options, &(), &before.sources).unwrap(), Update::Rebuild), "other paths");
}

/// A small random corpus: files with headings and links to each other's
/// headings (some of which do not exist).
fn file_text(seed: &[u8]) -> String {
    let mut text = String::new();
    for (i, byte) in seed.iter().enumerate() {
        match byte % 4 {
            0 => text.push_str(&format!("## H{}\n\n", byte % 5)),
            1 => text.push_str(&format!("Link to [x](f{}.md#h{}).\n\n", byte % 4, byte % 7)),
            2 => text.push_str(&format!("Paragraph {i} {byte}.\n\n")),
            _ => text.push_str(&format!("- item {byte}\n- [file](f{}.md)\n\n", byte % 4)),
        }
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn any_change_to_any_files_gives_what_a_full_ingest_gives(
        first in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..8), 4),
        second in prop::collection::vec(prop::option::of(prop::collection::vec(any::<u8>(), 0..8)), 4),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for (i, seed) in first.iter().enumerate() {
            write(d, &format!("f{i}.md"), &file_text(seed));
        }
        let before = full(d);
        for (i, seed) in second.iter().enumerate() {
            if let Some(seed) = seed {
                write(d, &format!("f{i}.md"), &file_text(seed));
            }
        }
        reindex_matches_full(d, &before);
    }
}

/// Copies `from` into `to`, file by file.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn the_node_docs_with_their_most_linked_page_rewritten() {
    let source = std::env::var_os("UCP_NODE_CORPUS").map(PathBuf::from).unwrap_or_else(|| {
        eprintln!("UCP_NODE_CORPUS not set (scripts/test sets it): the shipped excerpt stands in");
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/node-excerpt")
    });
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&source, dir.path());
    let before = full(dir.path());
    // The file most links point into: its headings move and one goes.
    let doc = &before.document;
    let file_of = |id: BlockId| doc.get(id).and_then(|b| b.metadata.source.as_ref()).map(|s| s.file.to_string());
    let mut counts = std::collections::HashMap::new();
    for edge in doc.edges().iter() {
        *counts.entry(file_of(edge.target)).or_insert(0) += 1;
    }
    let target = counts.into_iter().filter_map(|(f, n)| Some((n, f?))).max().expect("the corpus has links").1;
    let path = dir.path().join(&target);
    let text = std::fs::read_to_string(&path).unwrap();
    let second_heading = text.match_indices("\n## ").nth(1).map_or(text.len(), |(at, _)| at);
    let rewritten = format!("# Moved to the top\n\n{}\n\n## Added\n\nText.\n", &text[second_heading..]);
    std::fs::write(&path, rewritten).unwrap();
    let touched = reindex_matches_full(dir.path(), &before).expect("a file changed");
    assert!(touched.len() < before.document.len() / 2, "{} of {} blocks touched", touched.len(), before.document.len());
}

#[test]
fn a_settled_file_whose_size_and_time_are_unchanged_is_not_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "a.md", "# A\n\nalpha\n");
    write(d, "b.md", "# B\n\nbeta\n");
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let settle =
        |name: &str| std::fs::File::options().write(true).open(d.join(name)).unwrap().set_modified(past).unwrap();
    settle("a.md");
    settle("b.md");
    let before = full(d);
    let paths = [d.to_path_buf()];
    let options = IngestOptions::default();

    // Same size, same time: taken as unchanged without reading the text.
    write(d, "a.md", "# A\n\nALPHA\n");
    settle("a.md");
    assert!(matches!(update(&paths, &options, &(), &before.sources).unwrap(), Update::Unchanged(_, None)));
    // A lower size limit reads it again, and finds it skipped now.
    let small = IngestOptions { max_file_size: 4, ..IngestOptions::default() };
    assert!(matches!(update(&paths, &small, &(), &before.sources).unwrap(), Update::Rebuild));
    // Its time moved: read, and found changed.
    write(d, "a.md", "# A\n\nALPHA\n");
    assert!(matches!(update(&paths, &options, &(), &before.sources).unwrap(), Update::Changed(c) if c.files() == 1));
    // Touched, the same text: unchanged, with the new stamp to keep once
    // it settles.
    write(d, "a.md", "# A\n\nalpha\n");
    let later = past + std::time::Duration::from_secs(60);
    std::fs::File::options().write(true).open(d.join("a.md")).unwrap().set_modified(later).unwrap();
    let Update::Unchanged(_, Some(restamped)) = update(&paths, &options, &(), &before.sources).unwrap() else {
        panic!("the moved stamp is given back")
    };
    assert!(matches!(update(&paths, &options, &(), &restamped).unwrap(), Update::Unchanged(_, None)));
}
