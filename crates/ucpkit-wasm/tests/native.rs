//! The in-memory store answers as the library over SQLite and the tantivy
//! index does: the same blocks from the same files, the same postings,
//! lengths and search hits, and the same context for each question.

use std::path::{Path, PathBuf};

use ucpkit_wasm::store::MemoryStore;
use ucpkit_workspace::{ContextOptions, IndexOptions, Library, LibraryConfig};

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(path)
}

/// Every file of `folder` but hidden ones (as a folder walk takes them),
/// as `(name, bytes)`.
fn files(folder: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| !path.file_name().unwrap().to_string_lossy().starts_with('.'))
        .map(|path| (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap()))
        .collect();
    // Any order: the store reads them in a folder walk's.
    files.reverse();
    files
}

fn library(dir: &Path) -> Library {
    let mut config = LibraryConfig::new(dir.join(".ucp"));
    config.allowed_roots = None;
    Library::open(config).unwrap()
}

/// Asks every question of both at `budget` and compares the texts.
fn same_contexts(corpus: &Path, questions: &[String], budget: usize) {
    let dir = tempfile::tempdir().unwrap();
    let library = library(dir.path());
    library.index(&[corpus.to_path_buf()], Some("docs"), &IndexOptions::default(), &()).unwrap();
    let mut store = MemoryStore::new();
    store.index("docs", &files(corpus)).unwrap();
    for question in questions {
        let options = ContextOptions { budget, ..ContextOptions::new(question.clone()) };
        let native = library.context_in(Some("docs"), &options).unwrap();
        let memory = store.context(Some("docs"), question, budget).unwrap();
        assert_eq!(memory.text, native.text, "{question}");
        assert_eq!(memory.tokens, native.tokens, "{question}");
    }
}

#[test]
fn contexts_over_the_node_excerpt_are_the_librarys() {
    let questions = [
        "How does punycode encode an internationalized domain name?",
        "How do I parse a query string into an object, and escape it back?",
        "How do I start the debugger and set a breakpoint?",
        "What is corepack and how do I enable it for a package manager?",
        "documentation stability index",
    ];
    let questions: Vec<String> = questions.iter().map(|q| q.to_string()).collect();
    for budget in [200, 1000, 4000] {
        same_contexts(&data("node-excerpt"), &questions, budget);
    }
}

#[test]
#[ignore = "needs UCP_NODE_CORPUS, the Node.js docs (scripts/test fetches them)"]
fn contexts_over_the_node_docs_are_the_librarys() {
    let corpus = PathBuf::from(std::env::var("UCP_NODE_CORPUS").expect("UCP_NODE_CORPUS"));
    let questions: Vec<String> = std::fs::read_to_string(data("eval/node-questions.jsonl"))
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()["question"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(questions.len(), 60);
    same_contexts(&corpus, &questions, 2000);
}
