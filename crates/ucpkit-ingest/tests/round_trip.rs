//! Exporting a markdown import and importing the export again gives the
//! same block ids and structure.

mod common;

use proptest::prelude::*;
use ucpkit_ingest::{markdown_document, to_markdown, IngestOptions};

fn assert_round_trip(name: &str, text: &str) {
    let options = IngestOptions::default();
    let first = markdown_document(name, text, &options);
    let exported = to_markdown(&first);
    let second = markdown_document(name, &exported, &options);
    assert_eq!(common::shape(&first), common::shape(&second), "{name}: structure changed\n--- export ---\n{exported}");
    assert_eq!(to_markdown(&second), exported, "{name}: second export differs");
}

/// Round-trips every markdown file of a folder.
fn round_trip_folder(dir: &std::path::Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            assert_round_trip(&path.display().to_string(), &std::fs::read_to_string(&path).unwrap());
        }
    }
}

#[test]
fn case_files_round_trip() {
    round_trip_folder(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cases"));
}

#[test]
fn node_excerpt_round_trips() {
    round_trip_folder(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/node-excerpt"));
}

#[test]
#[ignore = "needs UCP_NODE_CORPUS: scripts/test fetches it and runs this"]
fn full_node_docs_round_trip() {
    let dir = std::env::var("UCP_NODE_CORPUS").expect("UCP_NODE_CORPUS is not set (scripts/test sets it)");
    round_trip_folder(std::path::Path::new(&dir));
}

/// One markdown element, as generated source.
fn element() -> impl Strategy<Value = String> {
    let word = "[a-zA-Z]{1,8}";
    let words = prop::collection::vec(word, 1..8).prop_map(|w| w.join(" "));
    prop_oneof![
        (1u8..=6, words.clone()).prop_map(|(l, t)| format!("{} {t}", "#".repeat(l as usize))),
        words.clone(),
        prop::collection::vec(words.clone(), 1..4).prop_map(|items| items
            .iter()
            .map(|i| format!("- {i}"))
            .collect::<Vec<_>>()
            .join("\n")),
        (prop::option::of("[a-z]{1,6}"), prop::collection::vec(words.clone(), 0..4)).prop_map(|(lang, lines)| format!(
            "```{}\n{}\n```",
            lang.unwrap_or_default(),
            lines.join("\n")
        )),
        (words.clone(), words.clone()).prop_map(|(a, b)| format!("| {a} | {b} |\n| --- | --- |\n| {b} | {a} |")),
        words.clone().prop_map(|w| format!("> {w}")),
        Just("TODO".to_owned()),
        "[a-z]{1,8}".prop_map(|w| format!("![{w}]({w}.png)")),
        words.prop_map(|w| format!("[{w}]: https://example.com/{}", w.len())),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn generated_markdown_round_trips(elements in prop::collection::vec(element(), 0..30)) {
        let text = elements.join("\n\n");
        let options = IngestOptions::default();
        let first = markdown_document("gen", &text, &options);
        prop_assert!(first.validate().is_valid());
        let exported = to_markdown(&first);
        let second = markdown_document("gen", &exported, &options);
        prop_assert_eq!(common::shape(&first), common::shape(&second), "export:\n{}", exported);
    }
}
