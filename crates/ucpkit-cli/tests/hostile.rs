//! The front ends against what a hostile campaign tried through them:
//! secrets in a command's environment and the store rewritten over MCP,
//! a cut `rules_for` whose next page could not be asked for, forgetting
//! what is not there, a root that defaults to `/` or the home folder, and
//! memory writers racing each other.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::mcp::{result_text, HttpServer, TOKEN};
use common::{indexed, stderr, stdout_json, ucp};
use serde_json::json;

#[test]
fn over_mcp_commands_see_no_token_and_nothing_writes_the_store() {
    let (dir, store) = indexed();
    let root = dir.path().to_str().unwrap();
    // The default store, ./.ucp, lies inside the root.
    let server = HttpServer::start(&store, &["--root", root, "--sandbox"]);
    let session = server.initialize();
    let env = result_text(&server.call(&session, "bash", json!({"command": "env"})));
    assert!(!env.contains(TOKEN) && env.contains("PATH="), "{env}");
    let written = server.call(&session, "write", json!({"path": ".ucp/config.toml", "content": "[agent]\n"}));
    assert_eq!(written["result"]["isError"], true, "{written}");
    assert!(result_text(&written).contains("never write"), "{written}");
    for attack in ["echo '[agent]' >> .ucp/config.toml", "mv .ucp elsewhere", "rm -rf .ucp/search"] {
        let tried = result_text(&server.call(&session, "bash", json!({"command": format!("{attack} && echo done")})));
        assert!(!tried.contains("done"), "{attack}: {tried}");
    }
    assert!(!store.join("config.toml").exists() && store.join("search").is_dir());
    let free = result_text(&server.call(&session, "bash", json!({"command": "echo ok > notes.txt && cat notes.txt"})));
    assert!(free.starts_with("ok\n"), "{free}");
}

#[test]
fn a_cut_result_pages_through_the_tool_that_gave_it() {
    let (dir, store) = indexed();
    let rules: String = (0..2000).map(|i| format!("Rule {i}: check the thing numbered {i}.\n\n")).collect();
    std::fs::write(dir.path().join("AGENTS.md"), rules).unwrap();
    let root = dir.path().to_str().unwrap();
    let tools = "rules_for,memory_forget";
    let server = HttpServer::start(&store, &["--root", root, "--tools", tools, "--max-result-tokens", "1000"]);
    let session = server.initialize();
    let first = result_text(&server.call(&session, "rules_for", json!({"budget": 100_000})));
    assert!(first.contains("next: call rules_for with page=2"), "{}", &first[first.len() - 300..]);
    let second = server.call(&session, "rules_for", json!({"page": 2}));
    assert_eq!(second["result"]["isError"], false, "{second}");
    let second = result_text(&second);
    assert!(second.contains("page 2 of") && second.contains("next: call rules_for with page=3"), "{second}");
    // Its schema says so, where ucl is not offered; another tool's pages are not its own.
    let listed = server.post(&session, &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})).unwrap();
    let rules_for = listed["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "rules_for").unwrap();
    assert_eq!(rules_for["inputSchema"]["properties"]["page"]["type"], "integer", "{rules_for}");
    let other = server.call(&session, "memory_forget", json!({"page": 2}));
    assert!(result_text(&other).contains("came from rules_for"), "{other}");
    let forgot = server.call(&session, "memory_forget", json!({"id": "blk_000000000000000000000001"}));
    assert_eq!(forgot["result"]["isError"], true, "forgetting nothing is an error: {forgot}");
}

/// `ucp ARGS` run in `folder` with `HOME` set to `home`.
fn ucp_in(folder: &Path, home: &Path, store: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ucp"))
        .current_dir(folder)
        .env("HOME", home)
        .arg("--store")
        .arg(store)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn the_filesystem_root_and_home_are_a_workspace_only_when_named() {
    let (dir, store) = indexed();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    for (folder, what) in [(Path::new("/"), "the filesystem's root"), (home.as_path(), "your home folder")] {
        let grep = ucp_in(folder, &home, &store, &["grep", "anything"]);
        assert_eq!(grep.status.code(), Some(1), "{}", stderr(&grep));
        let said = stderr(&grep);
        assert!(said.contains(what) && said.contains(&format!("--root {}", folder.display())), "{said}");
        // Its client (none here) would get the document tools; it says so.
        let served = ucp_in(folder, &home, &store, &["mcp"]);
        assert!(stderr(&served).contains("the coding tools, rules and skills are not offered"), "{}", stderr(&served));
        let asked = ucp_in(folder, &home, &store, &["mcp", "--tools", "grep"]);
        assert!(!asked.status.success() && stderr(&asked).contains(what), "{}", stderr(&asked));
    }
    let named = ucp_in(&home, &home, &store, &["--root", home.to_str().unwrap(), "grep", "anything"]);
    assert!(named.status.success(), "{}", stderr(&named));
}

#[test]
fn memory_writers_racing_each_other_all_land() {
    let (_dir, store) = indexed();
    let (writers, each) = (4, 12);
    let children: Vec<_> = (0..writers)
        .map(|w| {
            let store = store.clone();
            std::thread::spawn(move || {
                for i in 0..each {
                    let text = format!("Writer {w} found fact {i}: the racing writer number {w} saw item {i}.");
                    let out = ucp(&store, &["memory", "add", &text, "--kind", "finding"]);
                    assert!(out.status.success(), "writer {w}, memory {i}: {}", stderr(&out));
                }
            })
        })
        .collect();
    for child in children {
        child.join().unwrap();
    }
    let recent = stdout_json(&ucp(&store, &["memory", "recent", "--limit", "1000", "--json"]));
    assert_eq!(recent.as_array().unwrap().len(), writers * each, "{recent}");
}
