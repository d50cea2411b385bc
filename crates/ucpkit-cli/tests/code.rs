//! Code as a graph from the command line: `ucp map`, `ucp eval-code` and
//! `ucp lsp` (the real-server tests live in ucpkit-lsp).

mod common;

use std::path::{Path, PathBuf};

use common::{stdout_json, ucp_stdin};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/code")
}

fn run(store: &Path, args: &[&str]) -> std::process::Output {
    ucp_stdin(store, args, "")
}

#[test]
fn map_ranks_an_indexed_repository() {
    let store = tempfile::tempdir().unwrap();
    let repo = data().join("repos/shop-1.0");
    assert!(run(store.path(), &["index", repo.to_str().unwrap()]).status.success());
    let out = run(store.path(), &["map", "--budget", "200"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("shop/prices.py\n  def with_tax(amount):\n"), "{text}");
    let json = stdout_json(&run(store.path(), &["map", "how are receipts printed", "--json"]));
    assert_eq!(json["files"][0]["path"], "shop/receipt.py", "{json}");
    assert!(json["tokens"].as_u64().unwrap() <= 1024);
    let json = stdout_json(&run(store.path(), &["map", "--file", "shop/cart.py", "--json"]));
    assert_eq!(json["files"][0]["path"], "shop/cart.py", "{json}");
    let out = run(store.path(), &["map", "--file", "nope.py"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no file \"nope.py\""));
}

#[test]
fn eval_code_prints_the_metrics_of_both_systems() {
    let stores = tempfile::tempdir().unwrap();
    let tasks = data().join("tasks.jsonl");
    let repos = data().join("repos");
    let args = ["eval-code", tasks.to_str().unwrap(), "--repos", repos.to_str().unwrap()];
    let out = run(stores.path(), &args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("indexed shop-1.0: 5 files"), "{text}");
    let ucp = text.lines().find(|l| l.starts_with("ucp ") && l.contains("overall")).expect("an overall row");
    assert!(ucp.split_whitespace().nth(3) == Some("100.0"), "File@1 of both tasks: {ucp}");
    assert!(text.lines().any(|l| l.starts_with("reference-bm25")), "{text}");
}

#[test]
fn lsp_says_which_server_is_missing_and_how_to_get_it() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.py"), "x = 1\n").unwrap();
    let config = root.path().join("lsp.toml");
    std::fs::write(&config, "[servers.python]\ncommand = [\"ucp-no-such-server\"]\nextensions = [\"py\"]\n").unwrap();
    let args = ["--root", root.path().to_str().unwrap(), "lsp", "--lsp-config", config.to_str().unwrap()];
    let out = run(&root.path().join(".ucp"), &[&args[..], &["definition", "a.py", "1", "1"]].concat());
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ucp-no-such-server") && stderr.contains("pip install python-lsp-server"), "{stderr}");
    let out = run(&root.path().join(".ucp"), &[&args[..], &["symbols"]].concat());
    assert!(String::from_utf8_lossy(&out.stderr).contains("FILE, a --query"));
}

#[test]
fn search_ranks_files_by_their_hits() {
    let store = tempfile::tempdir().unwrap();
    let repo = data().join("repos/shop-1.0");
    assert!(run(store.path(), &["index", repo.to_str().unwrap()]).status.success());
    let out = run(store.path(), &["search", "discount percent coupon", "--files", "--limit", "2"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.starts_with(" 1. ")
            && text.lines().next().unwrap().contains("shop/prices.py (2 hits; best discount 11-15)"),
        "{text}"
    );
    let json = stdout_json(&run(store.path(), &["search", "discount", "--files", "--json"]));
    let files = json["files"].as_array().unwrap();
    assert!(files.iter().any(|f| f["file"] == "shop/prices.py" && f["best"]["symbol"] == "discount"), "{json}");
    let hits = stdout_json(&run(store.path(), &["search", "discount", "--json"]));
    assert!(hits["results"].as_array().unwrap().iter().any(|h| h["symbol"] == "discount"), "{hits}");
}

#[test]
fn view_map_shows_the_repository_map_in_a_session() {
    let store = tempfile::tempdir().unwrap();
    let repo = data().join("repos/shop-1.0");
    assert!(run(store.path(), &["index", repo.to_str().unwrap()]).status.success());
    let out = ucp_stdin(store.path(), &["run", "-"], "SEARCH \"receipt lines\" LIMIT=3\nVIEW MAP TOKENS=120\n");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let map = text.split("MAP: ").nth(1).unwrap_or_else(|| panic!("no map in {text}"));
    // The session's last results pull their file to the top.
    assert!(map.lines().nth(1).is_some_and(|l| l == "shop/receipt.py"), "{text}");
}
