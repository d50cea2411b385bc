//! Many UCP nodes on one PostgreSQL database (`--store postgres://…`):
//! writers in separate processes, each node with a cache folder of its
//! own, one of them killed mid-write, lose no acknowledged edit, leave no
//! half-written document, and every node's next answer reflects the
//! database. Needs a server: scripts/test starts a throwaway cluster
//! (scripts/pg-cluster) and names it in UCP_TEST_POSTGRES.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::mcp::{initialize, result_text, HttpServer, StdioServer, TOKEN};
use common::{excerpt, stdout_json, ucp_on as on, ucp_run_on as run};
use serde_json::json;

const ROOT: &str = "blk_000000000000000000000000";

/// The test server's throwaway databases (the store's conformance suite's).
#[path = "../../ucpkit-store/src/testing.rs"]
mod testing;
use ucpkit_store::Store;

/// A database of its own on the test server, dropped with it; `None`
/// (the test skipped, as `places` says) when no server is given.
fn database() -> Option<testing::Place> {
    testing::places().into_iter().find(|p| p.backend == "postgres")
}

/// The texts of the stored document's blocks, as a new node at `node`
/// reads them, checking that each of `acknowledged` is there exactly once.
fn stored_once(node: &Path, url: &str, acknowledged: &[String]) -> Vec<String> {
    let exported = stdout_json(&on(node, url, &["--doc", "node", "export", "--format", "json"]));
    let texts: Vec<String> = exported["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["content"]["text"].as_str().map(str::to_owned))
        .collect();
    for text in acknowledged {
        assert_eq!(texts.iter().filter(|t| *t == text).count(), 1, "{text:?} is stored once");
    }
    texts
}

#[test]
#[ignore = "needs UCP_TEST_POSTGRES: scripts/test starts a throwaway PostgreSQL cluster and runs this"]
fn nodes_writing_at_once_lose_no_acknowledged_edit() {
    let Some(place) = database() else { return };
    let url = place.url().unwrap().to_owned();
    let nodes = tempfile::tempdir().unwrap();
    let node = |n: usize| nodes.path().join(format!("node{n}"));
    let indexed = on(&node(0), &url, &["index", excerpt().to_str().unwrap(), "--name", "node"]);
    assert!(indexed.status.success(), "{}", String::from_utf8_lossy(&indexed.stderr));
    let blocks = |n| stdout_json(&on(&node(n), &url, &["docs", "--json"]))[0]["blocks"].as_u64().unwrap();
    let before = blocks(0);

    // Three nodes append one block per run, eight runs each, all at once,
    // while a fourth writes 2,000 blocks in one run, killed at once, later
    // and later still, then let finish.
    const RUNS: usize = 8;
    const BIG: u64 = 2000;
    const KILLS_MS: [Option<u64>; 4] = [Some(300), Some(1500), Some(4000), None];
    let acknowledged: Vec<String> = std::thread::scope(|scope| {
        let killed = scope.spawn(|| {
            for (k, delay) in KILLS_MS.into_iter().enumerate() {
                let big: String =
                    (0..BIG).map(|n| format!("APPEND {ROOT} text :: \"bulk block {n} wombatite{k}\"\n")).collect();
                let script = nodes.path().join(format!("big{k}.ucl"));
                std::fs::write(&script, big).unwrap();
                let mut child = Command::new(env!("CARGO_BIN_EXE_ucp"))
                    .env("UCP_CACHE_DIR", node(4))
                    .args(["--store", &url, "--doc", "node", "run", script.to_str().unwrap()])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                if let Some(delay) = delay {
                    std::thread::sleep(std::time::Duration::from_millis(delay));
                    let _ = child.kill();
                }
                let status = child.wait().unwrap();
                assert!(delay.is_some() || status.success(), "the run let finish failed");
            }
        });
        let writers: Vec<_> = (1..=3)
            .map(|n| {
                let (url, dir) = (&url, node(n));
                scope.spawn(move || {
                    let mut done = Vec::new();
                    for k in 0..RUNS {
                        let text = format!("edit {k} of node {n} quokkaword{n}x{k}");
                        let edit = format!("APPEND {ROOT} text :: \"{text}\"");
                        let out = run(&dir, url, &edit);
                        assert!(out.status.success(), "node {n}: {}", String::from_utf8_lossy(&out.stderr));
                        done.push(text);
                    }
                    done
                })
            })
            .collect();
        killed.join().unwrap();
        writers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    assert_eq!(acknowledged.len(), 3 * RUNS);

    // A new node reads every acknowledged edit and the killed run whole or
    // not at all.
    let texts = stored_once(&node(5), &url, &acknowledged);
    let mut bulk = 0;
    for (k, delay) in KILLS_MS.into_iter().enumerate() {
        let stored = texts.iter().filter(|t| t.ends_with(&format!("wombatite{k}"))).count() as u64;
        match delay {
            Some(delay) => {
                assert!(stored == 0 || stored == BIG, "{stored} blocks of the run killed after {delay} ms were stored");
                eprintln!("the run killed after {delay} ms left {stored} of its {BIG} blocks");
            }
            None => assert_eq!(stored, BIG, "the run let finish was acknowledged"),
        }
        bulk += stored;
    }
    assert_eq!(blocks(5), before + acknowledged.len() as u64 + bulk);
    let stats = stdout_json(&on(&node(5), &url, &["--doc", "node", "stats", "--json"]));
    assert_eq!(stats["validation_issues"], 0);

    // Each writer node's search finds what the others wrote.
    for n in 1..=3 {
        let other = n % 3 + 1;
        let word = format!("quokkaword{other}x{}", RUNS - 1);
        let hits = stdout_json(&on(&node(n), &url, &["--doc", "node", "search", &word, "--json"]));
        assert!(!hits["results"].as_array().unwrap().is_empty(), "node {n} does not find {word}");
    }
}

#[test]
fn a_server_that_is_gone_is_a_clear_error() {
    let node = tempfile::tempdir().unwrap();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("postgres://ucp:secret@127.0.0.1:{port}/none?connect_timeout=2");
    let out = on(node.path(), &url, &["docs"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("connecting to PostgreSQL"), "{stderr}");
    assert!(!stderr.contains("secret"), "the password is not shown: {stderr}");
}

/// Where a place's store is, as `--store` takes it.
fn location(place: &testing::Place) -> String {
    match place.url() {
        Some(url) => url.to_owned(),
        None => place.sqlite_dir().unwrap().display().to_string(),
    }
}

#[test]
fn a_store_migrates_to_another_backend_and_back_losing_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let origin = dir.path().join(".ucp").display().to_string();
    let node = dir.path().join("node");
    assert!(on(&node, &origin, &["index", excerpt().to_str().unwrap(), "--name", "node"]).status.success());
    let script = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let edits =
        script("edits.ucl", format!("APPEND {ROOT} text :: \"kept across backends\"\nSNAPSHOT CREATE \"before\"\n"));
    let list = script("list.ucl", "SNAPSHOT LIST\n".into());
    let edited = on(&node, &origin, &["--doc", "node", "run", "--session", "s", &edits]);
    assert!(edited.status.success(), "{}", String::from_utf8_lossy(&edited.stderr));
    let export = |store: &str| on(&node, store, &["--doc", "node", "export", "--format", "json"]).stdout;
    let before = export(&origin);
    for place in testing::places() {
        let there = location(&place);
        let moved = on(&node, &origin, &["store", "migrate", "--to", &there, "--json"]);
        assert!(moved.status.success(), "{}", String::from_utf8_lossy(&moved.stderr));
        let copied = stdout_json(&moved);
        assert_eq!((copied["documents"].as_u64(), copied["snapshots"].as_u64()), (Some(1), Some(1)), "{copied}");
        assert_eq!(copied["sessions"], 1);
        assert_eq!(export(&there), before, "{}", place.backend);
        let back = dir.path().join(format!("back-{}", place.backend)).display().to_string();
        let returned = on(&node, &there, &["store", "migrate", "--from", &there, "--to", &back]);
        assert!(returned.status.success(), "{}", String::from_utf8_lossy(&returned.stderr));
        assert_eq!(export(&back), before, "back from {}", place.backend);
        let sessions = on(&node, &back, &["--doc", "node", "run", "--session", "s", &list]);
        let listed = String::from_utf8_lossy(&sessions.stdout);
        assert!(listed.contains("before"), "the snapshot came back: {listed}");
    }
    let dotted = format!("{}/./.ucp", dir.path().display());
    let same = on(&node, &origin, &["store", "migrate", "--to", &dotted]);
    assert_eq!(same.status.code(), Some(1), "a store is not copied into itself");
    let back = dir.path().join("back-sqlite").display().to_string();
    let again = on(&node, &origin, &["store", "migrate", "--to", &back]);
    assert_eq!(again.status.code(), Some(1), "names the target holds are not replaced unasked");
    assert!(on(&node, &origin, &["store", "migrate", "--to", &back, "--replace"]).status.success());
}

#[test]
#[ignore = "needs UCP_TEST_POSTGRES: scripts/test starts a throwaway PostgreSQL cluster and runs this"]
fn three_mcp_servers_and_a_cli_writer_share_one_database() {
    let Some(place) = database() else { return };
    let url = place.url().unwrap().to_owned();
    let nodes = tempfile::tempdir().unwrap();
    let node = |n: usize| nodes.path().join(format!("node{n}"));
    assert!(on(&node(0), &url, &["index", excerpt().to_str().unwrap(), "--name", "node"]).status.success());
    let servers: Vec<HttpServer> =
        (1..=3).map(|n| HttpServer::start_node(Path::new(&url), Some(TOKEN), Some(&node(n)), &[])).collect();
    const EDITS: usize = 6;
    let acknowledged: Vec<String> = std::thread::scope(|scope| {
        // Node 3 is killed while a big script of its runs.
        // It says when its session is open, so that a slow machine does
        // not kill it before the script is sent.
        let doomed = &servers[2];
        let (opened, session_open) = std::sync::mpsc::channel();
        scope.spawn(move || {
            let session = doomed.initialize();
            opened.send(()).unwrap();
            let big: String = (0..2000).map(|k| format!("APPEND {ROOT} text :: \"doomed {k} dingoword\"\n")).collect();
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| doomed.ucl(&session, &big)));
        });
        let writers: Vec<_> = servers[..2]
            .iter()
            .enumerate()
            .map(|(n, server)| {
                scope.spawn(move || {
                    let session = server.initialize();
                    (0..EDITS)
                        .map(|k| {
                            let text = format!("mcp edit {k} of node {n} platypusword{n}x{k}");
                            // A write another node beat is refused, nothing
                            // written, and redone by the client, as MCP
                            // clients are told to.
                            for _ in 0..50 {
                                let reply = server.ucl(&session, &format!("APPEND {ROOT} text :: \"{text}\""));
                                if reply["result"]["isError"] == false {
                                    return text;
                                }
                                let said = result_text(&reply);
                                assert!(said.contains("changed in the store by another writer"), "{reply}");
                            }
                            panic!("node {n} never got its edit {k} in")
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let cli = scope.spawn(|| {
            (0..EDITS)
                .map(|k| {
                    let text = format!("cli edit {k} echidnaword{k}");
                    let out = run(&node(4), &url, &format!("APPEND {ROOT} text :: \"{text}\""));
                    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                    text
                })
                .collect::<Vec<_>>()
        });
        session_open.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let pid = servers[2].pid();
        // SIGKILL, as a node's machine failing would.
        assert!(Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap().success());
        let mut done: Vec<String> = writers.into_iter().flat_map(|w| w.join().unwrap()).collect();
        done.extend(cli.join().unwrap());
        done
    });
    assert_eq!(acknowledged.len(), 3 * EDITS);

    let texts = stored_once(&node(5), &url, &acknowledged);
    let doomed = texts.iter().filter(|t| t.ends_with("dingoword")).count();
    assert!(doomed == 0 || doomed == 2000, "{doomed} blocks of the killed node's script were stored");
    eprintln!("the node killed mid-script left {doomed} of its 2000 blocks");
    let stats = stdout_json(&on(&node(5), &url, &["--doc", "node", "stats", "--json"]));
    assert_eq!(stats["validation_issues"], 0);

    // The surviving servers' next answers hold what everyone else wrote.
    for (n, server) in servers[..2].iter().enumerate() {
        let session = server.initialize();
        for word in [format!("platypusword{}x{}", 1 - n, EDITS - 1), format!("echidnaword{}", EDITS - 1)] {
            let hits = result_text(&server.call(&session, "search", json!({"query": word})));
            assert!(hits.contains(&word), "node {n} does not find {word}: {hits}");
        }
    }
}

/// `ucp mcp --sandbox` over stdio on a PostgreSQL store: the whole server
/// runs inside the agent sandbox (a network of its own), reaches the
/// database through the forwarder the sandbox makes for the URL's host
/// and port, and serves and edits the store as any node does.
#[test]
#[ignore = "needs UCP_TEST_POSTGRES: scripts/test starts a throwaway PostgreSQL cluster and runs this"]
fn a_sandboxed_stdio_server_reaches_its_database() {
    let Some(place) = database() else { return };
    let url = place.url().unwrap().to_owned();
    let nodes = tempfile::tempdir().unwrap();
    let (writer, sandboxed) = (nodes.path().join("writer"), nodes.path().join("sandboxed"));
    assert!(on(&writer, &url, &["index", excerpt().to_str().unwrap(), "--name", "node"]).status.success());
    let root = tempfile::tempdir().unwrap();
    let root = root.path().to_str().unwrap();
    let mut server = StdioServer::start_node(Path::new(&url), Some(&sandboxed), &["--sandbox", "--root", root]);
    server.send(&initialize(1).to_string());
    assert_eq!(server.reply(1)["result"]["serverInfo"]["name"], "ucp");
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let edit =
        server.call(2, "ucl", json!({"commands": format!("APPEND {ROOT} text :: \"a quokkaword from the sandbox\"")}));
    assert_ne!(edit["result"]["isError"], true, "{edit}");
    let hits = server.call(3, "search", json!({"query": "quokkaword"}));
    assert!(result_text(&hits).contains("a quokkaword from the sandbox"), "{hits}");
    drop(server);
    // The edit is in the database: another node reads it.
    let texts = stored_once(&writer, &url, &["a quokkaword from the sandbox".to_owned()]);
    assert!(!texts.is_empty());
}
