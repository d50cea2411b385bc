//! `ucp search` and the search index behind SEARCH, end to end through the
//! binary: results and their fields, edits kept in step, a damaged index
//! rebuilt with a message, and clear errors.

mod common;

use std::path::Path;

use common::{indexed, stderr, stdout_json as json, ucp, ucp_stdin};
use serde_json::Value;

fn search(store: &Path, query: &str, extra: &[&str]) -> Value {
    let mut args = vec!["search", query, "--json"];
    args.extend_from_slice(extra);
    json(&ucp(store, &args))
}

#[test]
fn results_carry_id_score_source_heading_path_and_preview() {
    let (_dir, store) = indexed();
    let found = search(&store, "step out of the current function", &["--limit", "5"]);
    assert_eq!(found["mode"], "bm25");
    let results = found["results"].as_array().unwrap();
    assert!(!results.is_empty() && results.len() <= 5);
    let stepping = results
        .iter()
        .find(|r| r["heading_path"].as_array().unwrap().iter().any(|h| h == "Stepping"))
        .expect("the Stepping list is among the results");
    assert_eq!(stepping["file"], "debugger.md");
    assert!(stepping["id"].as_str().unwrap().starts_with("blk_"));
    assert!(stepping["preview"].as_str().unwrap().contains("`out`"));
    let lines = stepping["lines"].as_array().unwrap();
    assert!(lines[0].as_u64().unwrap() >= 1 && lines[1].as_u64() >= lines[0].as_u64());
    let scores: Vec<f64> = results.iter().map(|r| r["score"].as_f64().unwrap()).collect();
    assert!(scores.iter().all(|s| *s > 0.0 && *s <= 1.0));
    assert!(scores.windows(2).all(|w| w[0] >= w[1]));

    let text = ucp(&store, &["search", "step out of the current function", "--limit", "3"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.starts_with(" 1. blk_"), "{text}");
    assert!(text.contains("§ debugger.md > "), "{text}");
}

#[test]
fn role_filters_and_empty_results() {
    let (_dir, store) = indexed();
    let headings = search(&store, "debugger", &["--roles", "heading1,heading2,heading3"]);
    let results = headings["results"].as_array().unwrap();
    assert!(!results.is_empty());
    assert!(results.iter().all(|r| r["role"].as_str().unwrap().starts_with("heading")));
    let none = search(&store, "zzzznothing", &[]);
    assert_eq!(none["results"], serde_json::json!([]));
    let out = ucp(&store, &["search", "zzzznothing"]);
    assert!(out.status.success());
    assert!(stderr(&out).contains("no results"), "{}", stderr(&out));
}

#[test]
fn edits_through_ucl_are_searchable_at_once() {
    let (_dir, store) = indexed();
    let script = r#"APPEND @debugger.md text :: "Quokkas are marsupials of Rottnest Island.""#;
    let out = ucp_stdin(&store, &["--doc", "node", "run", "-"], script);
    assert!(out.status.success(), "{}", stderr(&out));
    let found = ucp(&store, &["search", "quokka marsupials", "--json"]);
    assert!(!stderr(&found).contains("rebuilt") && !stderr(&found).contains("behind"), "{}", stderr(&found));
    let results = json(&found)["results"].as_array().unwrap().clone();
    assert_eq!(results.len(), 1);
    assert!(results[0]["preview"].as_str().unwrap().contains("Quokkas"));

    // SEARCH in a session sees it too, and its results feed CTX ADD RESULTS.
    let session = "SEARCH \"quokka\" LIMIT=3\nCTX ADD RESULTS\nCTX RENDER FORMAT=MARKDOWN";
    let out = ucp_stdin(&store, &["run", "--session", "s", "-"], session);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("SEARCH: 1 block"), "{text}");
    assert!(text.contains("Quokkas are marsupials"), "{text}");
}

#[test]
fn a_damaged_index_is_rebuilt_with_a_message() {
    let (_dir, store) = indexed();
    let search_dir = std::fs::read_dir(store.join("search")).unwrap().next().unwrap().unwrap().path();
    std::fs::write(search_dir.join("catalog.bin"), b"not a catalog").unwrap();
    // A one-shot search reads only the full-text index, which is whole.
    let out = ucp(&store, &["search", "stepping", "--json"]);
    assert!(!json(&out)["results"].as_array().unwrap().is_empty(), "{}", stderr(&out));
    // So does a one-shot context, which reads parts of the store.
    let out = ucp(&store, &["context", "stepping through code", "--budget", "500"]);
    assert!(out.status.success() && !stderr(&out).contains("rebuilt"), "{}", stderr(&out));
    // The next call that loads the document finds the damage and rebuilds.
    let root = "GOTO blk_000000000000000000000000";
    let out = ucp_stdin(&store, &["--doc", "node", "run", "-"], root);
    assert!(stderr(&out).contains("rebuilt the search index of node because"), "{}", stderr(&out));
    // Rebuilt once: the next call is quiet.
    let out = ucp_stdin(&store, &["--doc", "node", "run", "-"], root);
    assert!(out.status.success() && !stderr(&out).contains("rebuilt"), "{}", stderr(&out));
}

#[test]
fn a_missing_index_is_built_by_the_first_search() {
    let (_dir, store) = indexed();
    std::fs::remove_dir_all(store.join("search")).unwrap();
    let out = ucp(&store, &["search", "stepping", "--json"]);
    assert!(stderr(&out).contains("there is no search index yet"), "{}", stderr(&out));
    assert!(!json(&out)["results"].as_array().unwrap().is_empty());
}

#[test]
fn vector_modes_need_a_model_and_a_bad_model_is_a_clear_error() {
    let (dir, store) = indexed();
    let out = ucp(&store, &["search", "stepping", "--mode", "vector"]);
    assert_eq!(out.status.code(), Some(1));
    let message = stderr(&out);
    assert_eq!(message.trim_end().lines().count(), 1, "{message}");
    assert!(message.contains("--model"), "{message}");

    let empty = dir.path().join("not-a-model");
    std::fs::create_dir_all(&empty).unwrap();
    let out = ucp(&store, &["--model", empty.to_str().unwrap(), "search", "stepping"]);
    assert_eq!(out.status.code(), Some(1));
    // A build without model support says how to get it instead.
    let expected = if cfg!(feature = "models") { "model.onnx" } else { "--features models" };
    assert!(stderr(&out).contains(expected), "{}", stderr(&out));
}

#[test]
#[ignore = "needs UCP_TEST_MODEL: scripts/test fetches the model and runs this"]
fn hybrid_search_with_a_model_when_one_is_configured() {
    let model = std::env::var_os("UCP_TEST_MODEL").expect("UCP_TEST_MODEL is not set (scripts/test sets it)");
    let (_dir, store) = indexed();
    let model = model.to_str().unwrap();
    let out = ucp(&store, &["--model", model, "search", "step out of a function", "--json"]);
    let found = json(&out);
    assert_eq!(found["mode"], "hybrid");
    assert!(!found["results"].as_array().unwrap().is_empty());
    let vector = json(&ucp(&store, &["--model", model, "search", "debugging", "--mode", "vector", "--json"]));
    assert_eq!(vector["mode"], "vector");
    assert!(!vector["results"].as_array().unwrap().is_empty());
}
