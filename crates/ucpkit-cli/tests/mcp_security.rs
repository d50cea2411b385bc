//! `ucp mcp` against hostile input, through the real HTTP server spoken
//! to in raw HTTP: symlinks out of the allowed folders, a read-only server
//! asked to index, bad document names, foreign origins, host paths in
//! errors, and slow clients.

mod common;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use common::mcp::{initialize, result_text, HttpServer, TOKEN};
use common::{indexed, stderr, ucp};
use serde_json::{json, Value};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The stored documents as `open` lists them.
fn listed(server: &HttpServer, session: &str) -> String {
    result_text(&server.call(session, "open", json!({})))
}

#[cfg(unix)]
#[test]
fn open_never_reads_outside_the_allowed_folders() {
    let (dir, store) = indexed();
    let corpus = dir.path().join("c");
    write(&corpus, "a.md", "# A\n\nPlumbusword lives here.\n");
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.md", "# Secret\n\nQuuxfrobnicate lives here.\n");
    write(outside.path(), "deep/hidden.md", "# Hidden\n\nQuuxfrobnicate again.\n");
    // `ln -s /etc c/etc`: a folder link out of the allowed folder.
    std::os::unix::fs::symlink(outside.path(), corpus.join("etc")).unwrap();
    let server = HttpServer::start(&store, &["--allow", corpus.to_str().unwrap()]);
    let session = server.initialize();

    let opened = server.call(&session, "open", json!({"path": corpus.to_str().unwrap(), "name": "c"}));
    assert!(result_text(&opened).starts_with("indexed and opened c"), "{opened}");
    let inside = result_text(&server.call(&session, "search", json!({"query": "plumbusword"})));
    assert!(inside.contains("Plumbusword"), "{inside}");
    let escaped = result_text(&server.call(&session, "search", json!({"query": "quuxfrobnicate"})));
    assert!(!escaped.contains("Quuxfrobnicate"), "a file behind the link was indexed: {escaped}");

    // A path through the link, a missing path and one outside: one answer.
    let answer = |path: &Path| {
        let reply = server.call(&session, "open", json!({"path": path.to_str().unwrap()}));
        assert_eq!(reply["result"]["isError"], true, "{reply}");
        result_text(&reply).replace(path.to_str().unwrap(), "PATH")
    };
    let through_link = answer(&corpus.join("etc/secret.md"));
    let missing = answer(&corpus.join("nope.md"));
    let disallowed = answer(&outside.path().join("secret.md"));
    assert_eq!(missing, disallowed);
    assert_eq!(through_link, disallowed);
    assert!(missing.starts_with("PATH does not exist or is outside the folders"), "{missing}");
}

#[test]
fn a_read_only_server_changes_nothing_stored() {
    let (dir, store) = indexed();
    let allowed = dir.path().join("allowed");
    write(&allowed, "ok.md", "# Ok\n\nSmall.\n");
    let ok = allowed.join("ok.md");
    let indexed_ok = ucp(&store, &["index", ok.to_str().unwrap(), "--name", "ok"]);
    assert!(indexed_ok.status.success(), "{}", stderr(&indexed_ok));
    let server = HttpServer::start(&store, &["--read-only", "--allow", allowed.to_str().unwrap()]);
    let session = server.initialize();
    let before = listed(&server, &session);

    // The reported attack: replace a stored document with a small file.
    let replaced = server.call(&session, "open", json!({"path": ok.to_str().unwrap(), "name": "node"}));
    assert_eq!(replaced["result"]["isError"], true, "{replaced}");
    assert!(result_text(&replaced).contains("read-only"), "{replaced}");
    let added = server.call(&session, "open", json!({"path": ok.to_str().unwrap(), "name": "new"}));
    assert_eq!(added["result"]["isError"], true, "{added}");
    assert_eq!(listed(&server, &session).replace(" (open)", ""), before.replace(" (open)", ""));

    // The same content as stored: opened, nothing written.
    let same = server.call(&session, "open", json!({"path": ok.to_str().unwrap(), "name": "ok"}));
    assert!(result_text(&same).starts_with("unchanged since last indexed; opened ok"), "{same}");
    drop(server);
    let docs = String::from_utf8_lossy(&ucp(&store, &["docs"]).stdout).into_owned();
    assert!(!docs.contains("new") && docs.contains("node"), "{docs}");
}

#[test]
fn document_names_are_checked_before_anything_is_written() {
    let (dir, store) = indexed();
    let file = dir.path().join("allowed/ok.md");
    write(file.parent().unwrap(), "ok.md", "# Ok\n");
    let long = "n".repeat(300);

    let out = ucp(&store, &["index", file.to_str().unwrap(), "--name", &long]);
    common::assert_user_error(&out, "at most 128 characters; this one has 300");
    let docs = String::from_utf8_lossy(&ucp(&store, &["docs"]).stdout).into_owned();
    assert!(!docs.contains("nnnn"), "{docs}");

    let server = HttpServer::start(&store, &["--allow", file.parent().unwrap().to_str().unwrap()]);
    let session = server.initialize();
    for (name, rule) in [(long.as_str(), "at most 128 characters"), ("a/b", "`/`"), ("", "cannot be empty")] {
        let reply = server.call(&session, "open", json!({"path": file.to_str().unwrap(), "name": name}));
        assert_eq!(reply["result"]["isError"], true, "{reply}");
        assert!(result_text(&reply).contains(rule), "{reply}");
    }
    assert!(!listed(&server, &session).contains("nnnn"));
}

#[test]
fn errors_sent_to_clients_hold_no_host_paths() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("private-store-place");
    let server = HttpServer::start(&store, &["--create"]);
    let session = server.initialize();
    // An empty store: the error used to name the store's directory.
    let reply = server.call(&session, "search", json!({"query": "anything"}));
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    let text = result_text(&reply);
    assert!(text.contains("holds no documents") && text.contains("`open` tool"), "{text}");
    assert!(!text.contains("private-store-place") && !text.contains(dir.path().to_str().unwrap()), "{text}");
}

#[test]
fn an_agent_is_told_how_to_choose_among_several_documents() {
    let (_dir, store) = indexed();
    assert!(ucp(&store, &["rename", "node", "first"]).status.success());
    let excerpt = common::excerpt();
    assert!(ucp(&store, &["index", excerpt.to_str().unwrap(), "--name", "second"]).status.success());
    let server = HttpServer::start(&store, &[]);
    let session = server.initialize();
    let reply = server.call(&session, "search", json!({"query": "stream"}));
    let text = result_text(&reply);
    assert!(text.contains("`open` tool") && text.contains("first, second") && !text.contains("--doc"), "{text}");
    let opened = server.call(&session, "open", json!({"document": "second"}));
    assert_eq!(opened["result"]["isError"], false, "{opened}");
    let reply = server.call(&session, "search", json!({"query": "stream"}));
    assert_eq!(reply["result"]["isError"], false, "{reply}");
}

#[test]
fn foreign_origins_are_refused() {
    let (_dir, store) = indexed();
    let server = HttpServer::start(&store, &["--allow-origin", "https://app.example.com:443"]);
    let auth = server.auth();
    let body = initialize(1).to_string();
    let status = |origin: Option<&str>| {
        let mut headers = vec![("authorization", auth.as_str())];
        headers.extend(origin.map(|o| ("origin", o)));
        let (status, _, body) = server.request("POST", &headers, body.as_bytes());
        (status, body)
    };
    for foreign in ["http://evil.example", "null", "https://app.example.com:8443"] {
        let (code, body) = status(Some(foreign));
        assert_eq!(code, 403, "{foreign}: {body}");
        let error: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        assert_eq!(error["error"]["code"], -32600, "{body}");
    }
    for allowed in [None, Some("http://localhost:6274"), Some("http://127.0.0.1:3000"), Some("https://app.example.com")]
    {
        let (code, body) = status(allowed);
        assert_eq!(code, 200, "{allowed:?}: {body}");
    }
}

/// Reads until the server closes the connection; false if it stays open
/// past `wait`.
fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut sink = Vec::new();
    match stream.read_to_end(&mut sink) {
        Ok(_) => true,
        Err(e) => !matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut),
    }
}

#[test]
fn slow_clients_are_closed_and_do_not_lock_out_others() {
    let (_dir, store) = indexed();
    let args = ["--header-timeout", "2", "--body-timeout", "2", "--max-pending-connections", "16"];
    let server = HttpServer::start(&store, &args);
    // Slowloris: 64 connections that send one line of headers and wait.
    let mut slow: Vec<TcpStream> = (0..64)
        .map(|_| {
            let mut stream = TcpStream::connect(server.addr).unwrap();
            stream.write_all(b"POST /mcp HTTP/1.1\r\n").unwrap();
            stream
        })
        .collect();
    // A real client still gets through while they are open.
    let started = Instant::now();
    let session = server.initialize();
    assert!(result_text(&server.ucl(&session, "CTX STATS")).starts_with("1: 0 blocks"));
    assert!(started.elapsed() < Duration::from_secs(2), "the client waited {:?}", started.elapsed());
    // Every slow connection is closed: beyond the cap at once, the rest
    // by the header timeout.
    for (i, stream) in slow.iter_mut().enumerate() {
        assert!(closed_within(stream, Duration::from_secs(10)), "slow connection {i} is still open");
    }

    // A body that never arrives, behind a valid token: 408 after the timeout.
    let mut stream = TcpStream::connect(server.addr).unwrap();
    write!(stream, "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {TOKEN}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{{\"jsonrpc\"").unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut head = [0u8; 64];
    let n = stream.read(&mut head).unwrap();
    let head = String::from_utf8_lossy(&head[..n]);
    assert!(head.starts_with("HTTP/1.1 408"), "{head}");
}

#[test]
fn abandoned_sessions_make_room_and_sub_agents_take_none() {
    let (_dir, store) = indexed();
    let server = HttpServer::start(&store, &["--max-sessions", "2", "--evict-idle-after", "1"]);
    let a = server.initialize();
    let found = result_text(&server.ucl(&a, "FIND ROLE=heading1"));
    let heading = found.split_whitespace().find(|w| w.starts_with("blk_")).unwrap().to_owned();
    let added = server.call(&a, "ucl", json!({"commands": format!("CTX ADD {heading}"), "session": "keep"}));
    assert!(result_text(&added).contains("→ 1 blocks"), "{added}");
    let _b = server.initialize();
    // Both clients go away without closing their sessions; every place is taken.
    std::thread::sleep(Duration::from_millis(1500));
    let c = server.initialize();
    let stats = server.ucl(&c, "CTX STATS");
    assert!(result_text(&stats).starts_with("1: 0 blocks"), "the new client was refused: {stats}");
    // The `context` tool's sub-agents need no place of their own.
    let context = server.call(&c, "context", json!({"question": "how do I parse a query string", "budget": 1000}));
    assert_eq!(context["result"]["isError"], false, "{context}");
    // The named session was saved when it gave its place: taken up as it was.
    std::thread::sleep(Duration::from_millis(1500));
    let back = server.call(&a, "ucl", json!({"commands": "CTX STATS", "session": "keep"}));
    assert!(result_text(&back).starts_with("1: 1 blocks"), "{back}");
}

/// Every refusal, rmcp's own included, is a JSON-RPC error object.
#[test]
fn refusals_are_json_rpc_errors() {
    let (_dir, store) = indexed();
    let server = HttpServer::start(&store, &[]);
    let raw = |accept: &str, session: &str| -> (String, Value) {
        let body = initialize(1).to_string();
        let mut stream = TcpStream::connect(server.addr).unwrap();
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer {TOKEN}\r\ncontent-type: application/json\r\n\
             accept: {accept}\r\n{session}connection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).unwrap();
        let (head, body) = reply.split_once("\r\n\r\n").unwrap();
        let json = body.lines().find(|l| l.trim_start().starts_with('{')).unwrap_or("null");
        (head.lines().next().unwrap().to_owned(), serde_json::from_str(json).unwrap_or(Value::Null))
    };
    let (status, body) = raw("application/json", "");
    assert!(status.starts_with("HTTP/1.1 406"), "{status}");
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("text/event-stream"), "{body}");
    let (status, body) = raw("application/json, text/event-stream", "mcp-session-id: no-such-session\r\n");
    assert!(status.starts_with("HTTP/1.1 4"), "{status}");
    assert_eq!(body["jsonrpc"], "2.0", "{status}: {body}");
}
