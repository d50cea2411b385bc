//! Hostile inputs, data-driven: every `tests/data/hostile/NAME.EXT.gen`
//! describes a file too large to keep in the repository (100,000 nested
//! elements ...). The test expands it into `NAME.EXT`, ingests it, and
//! compares a summary of the document with a snapshot. Ingest must finish
//! (in time linear in the input: a quadratic case would take minutes) and
//! never overflow the stack. Add a case by adding a file; re-bless with
//! `INSTA_UPDATE=always`.
//!
//! A `.gen` file has one instruction per line; `#` starts a comment:
//! - `text: T` appends `T` once;
//! - `repeat N: T` appends `T` N times.
//!
//! In `T`, `\n` stands for a line break.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use ucpkit_core::Document;

#[test]
fn hostile_inputs_ingest_to_bounded_documents() {
    insta::glob!("data/hostile/*.gen", |spec| {
        let source = expand(&std::fs::read_to_string(spec).unwrap());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(spec.file_stem().unwrap());
        std::fs::write(&file, &source).unwrap();
        let ingested = ucpkit_ingest::ingest(&[file], "hostile", &Default::default(), &()).unwrap();
        let doc = ingested.document;
        assert!(doc.validate().is_valid(), "{:?}", doc.validate());
        insta::assert_snapshot!(summary(&doc, source.len()));
    });
}

/// The file a `.gen` description stands for.
fn expand(spec: &str) -> String {
    let mut out = String::new();
    for line in spec.lines().map(str::trim_start).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (count, text) = match line.split_once(": ") {
            Some(("text", text)) => (1, text),
            Some((repeat, text)) if repeat.starts_with("repeat ") => {
                (repeat["repeat ".len()..].parse::<usize>().expect("a count after repeat"), text)
            }
            _ => panic!("not an instruction: {line}"),
        };
        out.push_str(&text.replace("\\n", "\n").repeat(count));
    }
    out
}

/// Size, depth, blocks by role, and the start of every block's text.
fn summary(doc: &Document, bytes: usize) -> String {
    let mut roles: BTreeMap<String, usize> = BTreeMap::new();
    let mut depth = 0;
    let mut text = String::new();
    for id in doc.document_order() {
        depth = depth.max(doc.depth(id));
        let block = doc.get(id).unwrap();
        let role = block.role().map_or("root".to_owned(), ToString::to_string);
        *roles.entry(role.clone()).or_default() += 1;
        let markdown = block.to_markdown();
        if !markdown.is_empty() && text.lines().count() < 12 {
            let flat: String = markdown.replace('\n', "⏎").chars().take(60).collect();
            let _ = writeln!(text, "  {role}: {flat:?} ({} chars)", markdown.chars().count());
        }
    }
    let mut out = format!("input: {bytes} bytes\nblocks: {}\ndepth: {depth}\nroles: {roles:?}\n", doc.len());
    out.push_str(&text);
    out
}

#[test]
fn the_generator_expands_repeats_and_line_breaks() {
    assert_eq!(expand("# c\nrepeat 3: <a>\ntext: x\\ny\n"), "<a><a><a>x\ny");
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hostile").is_dir());
}
