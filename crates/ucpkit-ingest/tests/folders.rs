//! Folder ingest: structure, deterministic ids, links, and bad input that
//! must become counted warnings.

use std::path::{Path, PathBuf};

use ucpkit_core::{BlockId, Content, EdgeType, Role};
use ucpkit_ingest::{ingest, WarningKind};

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn corpus() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "guide/intro.md", b"# Intro\n\nSee [setup](../setup.md#install-it) and [api](api.html).\n");
    write(root, "guide/api.md", b"# API\n\nCalls.\n");
    write(root, "setup.md", b"# Setup\n\n## Install it\n\nRun it. [Escape](../../etc/passwd) [gone](missing.md)\n");
    write(root, "notes.txt", b"first para\nline two\n\nsecond para\n");
    write(root, "logo.png", b"\x89PNG\r\n\x1a\n\0\0\0");
    write(root, "latin1.md", b"caf\xe9\n");
    write(root, "ignored/skip.md", b"# Should not appear\n");
    write(root, ".gitignore", b"ignored/\n");
    write(root, "page.html", b"<html><body><h1>Page</h1><p>Hi <a href='setup.md'>setup</a></p></body></html>");
    dir
}

#[test]
fn folders_become_directory_and_file_blocks_in_name_order() {
    let dir = corpus();
    let ingested = ingest(&[dir.path().to_path_buf()], "c", &Default::default(), &()).unwrap();
    let doc = &ingested.document;
    assert!(doc.validate().is_valid());
    let top: Vec<String> =
        doc.children(BlockId::ROOT).iter().map(|id| doc.get(*id).unwrap().metadata.label.clone().unwrap()).collect();
    assert_eq!(top, ["guide", "notes.txt", "page.html", "setup.md"]);
    let guide = doc.children(BlockId::ROOT)[0];
    let files: Vec<String> =
        doc.children(guide).iter().map(|id| doc.get(*id).unwrap().metadata.label.clone().unwrap()).collect();
    assert_eq!(files, ["guide/api.md", "guide/intro.md"]);
    assert!(doc.blocks().all(|b| !b.to_markdown().contains("Should not appear")));
    let notes = doc.children(BlockId::ROOT)[1];
    assert_eq!(doc.children(notes).len(), 2);

    let report = &ingested.report;
    assert_eq!(report.files, 5, "three markdown files, the text and the HTML page");
    let counts = report.warning_counts();
    assert_eq!(counts.get(&WarningKind::Binary), Some(&1));
    assert_eq!(counts.get(&WarningKind::NotUtf8), Some(&1));
    assert_eq!(counts.get(&WarningKind::OutsideCorpus), Some(&1));
    assert_eq!(counts.get(&WarningKind::UnresolvedLink), Some(&1));
    let ignored: Vec<&str> =
        report.warnings.iter().filter(|w| w.kind == WarningKind::Ignored).map(|w| w.path.as_str()).collect();
    assert_eq!(ignored, ["ignored"], "one warning for the ignored folder, none for its contents");
}

#[test]
fn links_between_files_become_edges_to_files_and_headings() {
    let dir = corpus();
    let doc = ingest(&[dir.path().to_path_buf()], "c", &Default::default(), &()).unwrap().document;
    let find = |text: &str| doc.blocks().find(|b| b.to_markdown() == text).map(|b| b.id).unwrap();
    let link_para = doc.blocks().find(|b| b.to_markdown().starts_with("See [setup]")).unwrap().id;
    let targets: Vec<BlockId> = doc.edges().outgoing(link_para).iter().map(|e| e.target).collect();
    let api_file = doc.blocks().find(|b| b.metadata.label.as_deref() == Some("guide/api.md")).unwrap().id;
    assert_eq!(targets, [find("## Install it"), api_file]);
    assert!(doc.edges().outgoing(link_para).iter().all(|e| e.edge_type == EdgeType::LinksTo));
    assert_eq!(doc.edges().incoming(api_file).len(), 1);
    let html_para = doc.blocks().find(|b| b.to_markdown() == "Hi setup").unwrap().id;
    let setup_file = doc.blocks().find(|b| b.metadata.label.as_deref() == Some("setup.md")).unwrap().id;
    assert_eq!(doc.edges().outgoing(html_para)[0].target, setup_file);
}

#[test]
fn reindexing_gives_identical_ids() {
    let dir = corpus();
    let a = ingest(&[dir.path().to_path_buf()], "c", &Default::default(), &()).unwrap().document;
    let b = ingest(&[dir.path().to_path_buf()], "c", &Default::default(), &()).unwrap().document;
    assert_eq!(a.ordered_ids(), b.ordered_ids());
}

#[test]
fn identical_paragraphs_under_three_headings_are_three_blocks() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "dup.md", b"# A\n\nSame text.\n\n# B\n\nSame text.\n\n# C\n\nSame text.\n");
    let doc = ingest(&[dir.path().join("dup.md")], "dup", &Default::default(), &()).unwrap().document;
    let same: Vec<BlockId> = doc.blocks().filter(|b| b.to_markdown() == "Same text.").map(|b| b.id).collect();
    assert_eq!(same.len(), 3);
    for id in &same {
        let parent = doc.parent(*id).unwrap();
        let listed_by = doc.blocks().filter(|b| doc.children(b.id).contains(id)).count();
        assert_eq!(listed_by, 1);
        assert_eq!(doc.get(parent).unwrap().role(), Some(&Role::Heading1));
    }
}

#[test]
fn a_single_bad_file_is_an_error_not_a_document() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "bad.md", b"\xff\xfe bad");
    let err = ingest(&[dir.path().join("bad.md")], "x", &Default::default(), &()).unwrap_err();
    assert!(err.to_string().contains("not valid UTF-8"), "{err}");
    let missing = ingest(&[PathBuf::from("/nonexistent/x.md")], "x", &Default::default(), &()).unwrap_err();
    assert!(missing.to_string().contains("/nonexistent/x.md"), "{missing}");
    write(dir.path(), "pic.png", b"\x89PNG\0");
    let unsupported = ingest(&[dir.path().join("pic.png")], "x", &Default::default(), &()).unwrap_err();
    assert!(unsupported.to_string().contains("unsupported"), "{unsupported}");
}

#[test]
fn oversized_files_are_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "big.md", &vec![b'a'; 4096]);
    write(dir.path(), "small.md", b"# Small\n");
    let options = ucpkit_ingest::IngestOptions { max_file_size: 1024, ..Default::default() };
    let ingested = ingest(&[dir.path().to_path_buf()], "x", &options, &()).unwrap();
    assert_eq!(ingested.report.files, 1);
    assert_eq!(ingested.report.warnings[0].kind, WarningKind::TooLarge);
}

#[test]
fn a_long_single_line_file_is_one_paragraph() {
    let dir = tempfile::tempdir().unwrap();
    let line = "word ".repeat(400_000);
    write(dir.path(), "line.md", line.as_bytes());
    let doc = ingest(&[dir.path().join("line.md")], "x", &Default::default(), &()).unwrap().document;
    assert_eq!(doc.len(), 2);
    let para = doc.get(doc.children(BlockId::ROOT)[0]).unwrap();
    assert_eq!(para.metadata.tokens, Some(400_000));
    assert!(matches!(&para.content, Content::Text { text, .. } if text.len() == line.trim_end().len()));
}

#[cfg(unix)]
#[test]
fn symlinks_loops_and_escapes_are_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.md", b"# Secret\n");
    write(outside.path(), "deep/hidden.md", b"# Hidden\n");
    write(dir.path(), "real.md", b"# Real\n");
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::os::unix::fs::symlink(dir.path(), dir.path().join("sub/loop")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.md"), dir.path().join("escape.md")).unwrap();
    // A link to a folder outside (`ln -s /etc c/etc`) is never entered.
    std::os::unix::fs::symlink(outside.path(), dir.path().join("etc")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("real.md"), dir.path().join("alias.md")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("nowhere.md"), dir.path().join("broken.md")).unwrap();
    let ingested = ingest(&[dir.path().to_path_buf()], "x", &Default::default(), &()).unwrap();
    let doc = &ingested.document;
    assert!(doc.blocks().all(|b| b.to_markdown() != "# Secret" && b.to_markdown() != "# Hidden"));
    let outside: Vec<String> = ingested
        .report
        .warnings
        .iter()
        .filter(|w| w.kind == WarningKind::OutsideCorpus)
        .map(|w| w.to_string())
        .collect();
    assert_eq!(
        outside,
        [
            "escape.md: symlink to a file outside the corpus; skipped",
            "etc: symlink to a folder outside the corpus; skipped"
        ]
    );
    let walk: Vec<String> =
        ingested.report.warnings.iter().filter(|w| w.kind == WarningKind::Walk).map(|w| w.to_string()).collect();
    assert_eq!(walk, ["sub/loop: symlink loop (points to a folder above it); skipped"]);
    assert_eq!(ingested.report.files, 2, "real.md and its in-corpus alias");
    let broken = ingested.report.warnings.iter().find(|w| w.path == "broken.md").expect("broken symlink warned");
    assert_eq!(broken.kind, WarningKind::Unreadable);
    assert!(broken.message.contains("broken symlink"), "{broken}");
}

#[cfg(unix)]
#[test]
fn unreadable_files_are_warnings() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "locked.md", b"# Locked\n");
    write(dir.path(), "open.md", b"# Open\n");
    let locked = dir.path().join("locked.md");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&locked).is_ok() {
        // Running as root: permissions do not stop reads. Simulate an
        // unreadable entry with a directory named like a markdown file.
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::remove_file(&locked).unwrap();
        std::fs::create_dir(dir.path().join("locked.md")).unwrap();
        std::fs::write(dir.path().join("locked.md/inner.md"), b"# Inner\n").unwrap();
    }
    let ingested = ingest(&[dir.path().to_path_buf()], "x", &Default::default(), &()).unwrap();
    assert!(ingested.document.validate().is_valid());
    let unreadable = ingested.report.warning_counts().get(&WarningKind::Unreadable).copied().unwrap_or(0);
    let files = ingested.report.files;
    assert!(unreadable == 1 || files == 2, "warnings {:?}, files {files}", ingested.report.warnings);
}
