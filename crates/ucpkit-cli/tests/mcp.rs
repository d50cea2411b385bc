//! `ucp mcp` end to end: raw JSON-RPC over stdio and HTTP (faults
//! included), and the official Python SDK when `UCP_MCP_PYTHON` names a
//! Python that has it (scripts/test sets one up).

mod common;

use std::io::Write as _;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::mcp::{initialize, result_text, HttpServer, StdioServer, TOKEN};
use common::{excerpt, indexed, stderr, ucp, ucp_stdin};
use serde_json::{json, Value};

fn docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

#[test]
fn http_faults_get_json_rpc_errors_and_the_server_keeps_serving() {
    let (_dir, store) = indexed();
    let server = HttpServer::start(&store, &[]);

    for auth in [None, Some("Bearer wrong"), Some(TOKEN)] {
        let headers: Vec<(&str, &str)> = auth.map(|a| vec![("authorization", a)]).unwrap_or_default();
        let (status, head, body) = server.request("POST", &headers, initialize(1).to_string().as_bytes());
        assert_eq!(status, 401, "{auth:?}: {body}");
        assert!(head.contains("www-authenticate: bearer"));
        assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["error"]["code"], -32001);
    }

    let one = server.initialize();
    let two = server.initialize();
    assert_ne!(one, two);
    let found = result_text(&server.ucl(&one, "FIND ROLE=heading1"));
    let ids: Vec<&str> = found.split_whitespace().filter(|w| w.starts_with("blk_")).collect();
    assert!(ids.len() >= 2, "{found}");
    assert!(result_text(&server.ucl(&one, &format!("CTX ADD {}", ids[0]))).contains("→ 1 blocks"));

    let auth = server.auth();
    let headers = [("authorization", auth.as_str()), ("mcp-session-id", one.as_str())];
    // Malformed JSON.
    let (status, _, body) = server.request("POST", &headers, b"{\"jsonrpc\": \"2.0\", \"id\": ");
    assert_eq!(status, 400);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["error"]["code"], -32700);
    // JSON, but not JSON-RPC.
    let (status, _, body) = server.request("POST", &headers, br#"{"id": 4, "hello": "world"}"#);
    assert_eq!(status, 400);
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((error["error"]["code"].as_i64(), error["id"].as_i64()), (Some(-32600), Some(4)));
    // Over 10 MB.
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"ucl","arguments":{{"commands":"{}"}}}}}}"#,
        "x".repeat(11 << 20)
    );
    let (status, _, body) = server.request("POST", &headers, huge.as_bytes());
    assert_eq!(status, 413);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["error"]["code"], -32600);
    // An unknown tool.
    let unknown =
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "rm_rf", "arguments": {}}});
    let reply = server.post(&one, &unknown).unwrap();
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    // Without --root, an HTTP server offers no coding tools: bash is not there to call.
    let listed = server.post(&one, &json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list"})).unwrap();
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 10, "the document and memory tools: {listed}");
    let bash = server.call(&one, "bash", json!({"command": "true"}));
    assert_eq!(bash["error"]["code"], -32602, "{bash}");
    // A client that goes away mid-call.
    let mut stream = TcpStream::connect(server.addr).unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "context", "arguments": {"question": "how do I parse a query string", "budget": 2000}}})
    .to_string();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         authorization: {auth}\r\nmcp-session-id: {one}\r\ncontent-length: {}\r\n\r\n{call}",
        call.len()
    )
    .unwrap();
    drop(stream);
    // A request cut off inside its body.
    let mut stream = TcpStream::connect(server.addr).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: {auth}\r\ncontent-length: 500\r\n\r\n{{\"jsonrpc\""
    )
    .unwrap();
    drop(stream);

    // Both sessions go on, each with its own window.
    let stats = result_text(&server.ucl(&one, "CTX STATS"));
    assert!(stats.starts_with("1: 1 blocks"), "{stats}");
    let added = result_text(&server.ucl(&two, &format!("CTX ADD {}\nCTX ADD {}\nCTX STATS", ids[0], ids[1])));
    assert!(added.contains("3: 2 blocks"), "{added}");
    let stats = result_text(&server.ucl(&one, "CTX STATS"));
    assert!(stats.starts_with("1: 1 blocks"), "{stats}");
    // Closing a session answers 204; the session is gone.
    let (status, _, _) = server.request("DELETE", &[("authorization", &auth), ("mcp-session-id", &one)], b"");
    assert_eq!(status, 204);
}

#[test]
fn stdio_serves_tools_keeps_edits_and_survives_bad_lines() {
    let (dir, store) = indexed();
    let mut server = StdioServer::start(&store, &["--allow", excerpt().to_str().unwrap()]);
    server.send(&initialize(1).to_string());
    assert_eq!(server.reply(1)["result"]["serverInfo"]["name"], "ucp");
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    server.send("{this is not json");
    server.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let tools = server.reply(2);
    let names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "ucl",
            "context",
            "search",
            "repo_map",
            "open",
            "memory_store",
            "memory_search",
            "memory_recent",
            "memory_forget",
            "plan",
            "rules_for",
            "skills_list",
            "skill_load",
            "grep",
            "glob",
            "read",
            "write",
            "edit",
            "bash",
            "ast_search",
            "lsp_definition",
            "lsp_references",
            "lsp_hover",
            "lsp_symbols"
        ]
    );

    let unknown = server.call(3, "nope", json!({}));
    assert_eq!(unknown["error"]["code"], -32602);
    let bad_args = server.call(4, "search", json!({"query": 7}));
    assert_eq!(bad_args["result"]["isError"], true);
    assert!(result_text(&bad_args).contains("query: invalid type: integer `7`, expected a string"));

    // An edit through MCP is saved in the store and searchable.
    let found = result_text(&server.call(5, "ucl", json!({"commands": "FIND ROLE=heading1"})));
    let heading = found.split_whitespace().find(|w| w.starts_with("blk_")).unwrap().to_owned();
    let edit = format!(r#"APPEND {heading} text :: "Zorblax tuning lives here.""#);
    let appended = server.call(6, "ucl", json!({"commands": edit}));
    assert_eq!(appended["result"]["isError"], false, "{appended}");
    let hits = result_text(&server.call(7, "search", json!({"query": "zorblax"})));
    assert!(hits.contains("Zorblax tuning"), "{hits}");

    // Indexing is limited to the allowed folders.
    let outside = server.call(8, "open", json!({"path": docs().to_str().unwrap()}));
    assert_eq!(outside["result"]["isError"], true);
    assert!(result_text(&outside).contains("outside the folders"), "{outside}");
    let opened = server.call(9, "open", json!({"path": excerpt().to_str().unwrap(), "name": "excerpt"}));
    assert!(result_text(&opened).starts_with("indexed and opened excerpt"), "{opened}");
    let listed = result_text(&server.call(10, "open", json!({})));
    assert!(listed.contains("excerpt: ") && listed.contains("(open)") && listed.contains("node: "), "{listed}");
    let again = server.call(11, "open", json!({"path": excerpt().to_str().unwrap(), "name": "excerpt"}));
    assert!(result_text(&again).starts_with("unchanged"), "{again}");

    drop(server.input);
    let status = server.child.wait().unwrap();
    assert!(status.success(), "{status}");
    let search = ucp(&store, &["--doc", "node", "search", "zorblax"]);
    assert!(String::from_utf8_lossy(&search.stdout).contains("Zorblax"), "{}", stderr(&search));
    drop(dir);
}

#[test]
fn http_refuses_to_start_off_loopback_without_a_token() {
    let (_dir, store) = indexed();
    let out = ucp(&store, &["mcp", "--http", "0.0.0.0:0"]);
    common::assert_user_error(&out, "not a loopback address");
}

#[test]
fn a_missing_store_is_refused_unless_created() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("typo/.ucp");
    let out = ucp(&store, &["mcp"]);
    common::assert_user_error(&out, "no store at");
    assert!(!dir.path().join("typo").exists(), "nothing is created");
    let mut server = StdioServer::start(&store, &["--create"]);
    server.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#);
    assert!(server.reply(1)["result"].is_object());
    assert!(store.exists(), "--create makes the store");
    server.child.kill().unwrap();
    server.child.wait().unwrap();
}

/// The Python SDK's clients (stdio and HTTP) and a short load run.
#[test]
#[ignore = "needs UCP_MCP_PYTHON: scripts/test installs the SDK and runs this"]
fn official_python_sdk_and_load() {
    let python = std::env::var_os("UCP_MCP_PYTHON").expect("UCP_MCP_PYTHON is not set (scripts/test sets it)");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_clients.py");
    let out = Command::new(&python)
        .arg(&script)
        .env("UCP_BIN", env!("CARGO_BIN_EXE_ucp"))
        .env("UCP_CORPUS", docs())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));

    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join(".ucp");
    assert!(ucp(&store, &["index", docs().to_str().unwrap()]).status.success());
    let load = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mcp-load");
    let out = Command::new(&python)
        .arg(load)
        .args(["--ucp", env!("CARGO_BIN_EXE_ucp"), "--store", store.to_str().unwrap()])
        .args(["--clients", "8", "--commands", "100", "--timeout", "120", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((report["errors"].as_u64(), report["commands"].as_u64()), (Some(0), Some(800)), "{report}");
}

/// Memory across processes, rules and skills loaded when relevant, and
/// tool discovery, through the Python SDK's stdio client (with the ONNX
/// model when one was fetched, so memories are found by meaning).
#[test]
#[ignore = "needs UCP_MCP_PYTHON: scripts/test installs the SDK and runs this"]
fn memory_rules_skills_and_discovery_through_the_python_sdk() {
    let python = std::env::var_os("UCP_MCP_PYTHON").expect("UCP_MCP_PYTHON is not set (scripts/test sets it)");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_guidance.py");
    let mut command = Command::new(&python);
    command.arg(&script).env("UCP_BIN", env!("CARGO_BIN_EXE_ucp"));
    if cfg!(feature = "models") {
        if let Some(model) = std::env::var_os("UCP_TEST_ONNX_MODEL") {
            command.env("UCP_MODEL", model);
        }
    }
    let out = command.output().unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
}

/// A second, independent client: the MCP Inspector's command line, when
/// `UCP_MCP_INSPECTOR` names it (scripts/test installs it from npm).
#[test]
#[ignore = "needs UCP_MCP_INSPECTOR: scripts/test installs it and runs this"]
fn mcp_inspector_cli_lists_tools_and_calls_one() {
    let inspector = std::env::var_os("UCP_MCP_INSPECTOR").expect("UCP_MCP_INSPECTOR is not set (scripts/test sets it)");
    let (_dir, store) = indexed();
    let inspect = |args: &[&str]| {
        let out = Command::new(&inspector)
            .args(["--cli", env!("CARGO_BIN_EXE_ucp"), "--store", store.to_str().unwrap(), "mcp"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let tools = inspect(&["--method", "tools/list"]);
    assert_eq!(tools["tools"].as_array().unwrap().len(), 24, "{tools}");
    let called = inspect(&["--method", "tools/call", "--tool-name", "search", "--tool-arg", "query=querystring"]);
    assert_eq!(called["isError"], false, "{called}");
    assert!(result_text(&json!({ "result": called })).contains("querystring.md:"), "{called}");
}

/// A server and the command line on one store: an edit made with `ucp run`
/// while the server holds the document is visible to the server's client
/// on its next call, and the client's own edit after it is kept too.
#[test]
fn a_server_sees_edits_made_by_another_process() {
    let (_dir, store) = indexed();
    let mut server = StdioServer::start(&store, &[]);
    server.send(&initialize(1).to_string());
    server.reply(1);
    server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let before = result_text(&server.call(2, "search", json!({"query": "quokkafrobnicator"})));
    assert!(!before.contains("Quokkafrobnicator"), "{before}");

    let root = "blk_000000000000000000000000";
    let out = ucp_stdin(&store, &["run", "-"], &format!("APPEND {root} text :: \"Quokkafrobnicator from the CLI\"\n"));
    assert!(out.status.success(), "{}", stderr(&out));

    let after = result_text(&server.call(3, "search", json!({"query": "quokkafrobnicator"})));
    assert!(after.contains("Quokkafrobnicator from the CLI"), "{after}");
    let edit = format!("APPEND {root} text :: \"Zebrafrobnicator from MCP\"");
    let appended = server.call(4, "ucl", json!({"commands": edit}));
    assert_eq!(appended["result"]["isError"], false, "{appended}");
    drop(server.input);
    assert!(server.child.wait().unwrap().success());
    let stored = String::from_utf8_lossy(&ucp(&store, &["export", "--format", "json"]).stdout).into_owned();
    assert!(stored.contains("Quokkafrobnicator from the CLI") && stored.contains("Zebrafrobnicator from MCP"));
}

/// Two servers on one store, then a re-index under them: every edit of
/// either server lands, and an edit after the re-index is made on the
/// re-indexed document instead of writing the server's old copy back.
#[test]
fn two_servers_and_a_reindex_lose_no_edit() {
    let (dir, store) = indexed();
    let start = || {
        let mut server = StdioServer::start(&store, &[]);
        server.send(&initialize(1).to_string());
        server.reply(1);
        server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        server
    };
    let (mut a, mut b) = (start(), start());
    let root = "blk_000000000000000000000000";
    let mut id = 1;
    let mut append = |server: &mut StdioServer, text: &str| {
        id += 1;
        let reply = server.call(id, "ucl", json!({"commands": format!("APPEND {root} text :: \"{text}\"")}));
        assert_eq!(reply["result"]["isError"], false, "{reply}");
    };
    let stored = || String::from_utf8_lossy(&ucp(&store, &["export", "--format", "json"]).stdout).into_owned();
    for round in 0..3 {
        append(&mut a, &format!("alpha edit {round}"));
        append(&mut b, &format!("bravo edit {round}"));
    }
    let all = stored();
    for round in 0..3 {
        assert!(
            all.contains(&format!("alpha edit {round}")) && all.contains(&format!("bravo edit {round}")),
            "{round}"
        );
    }

    // A re-index with one more file replaces the edited document (asked
    // for with --force).
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    for entry in std::fs::read_dir(excerpt()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), corpus.join(entry.file_name())).unwrap();
    }
    std::fs::write(corpus.join("extra.md"), "# Extra\n\nA paragraph about capybaras.\n").unwrap();
    let out = ucp(&store, &["index", corpus.to_str().unwrap(), "--name", "node", "--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let reindexed_blocks = stored().matches("\"id\"").count();

    append(&mut a, "after the re-index");
    let after = stored();
    assert!(after.contains("capybaras") && after.contains("after the re-index"), "the re-index stands");
    assert_eq!(after.matches("\"id\"").count(), reindexed_blocks + 1, "one block more than the re-index wrote");
    for server in [a, b] {
        drop(server.input);
        let mut child = server.child;
        assert!(child.wait().unwrap().success());
    }
}

#[test]
fn with_ucp_log_every_tool_call_is_recorded_on_stderr() {
    let (_dir, store) = indexed();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ucp"))
        .arg("--store")
        .arg(&store)
        .arg("mcp")
        .env("UCP_LOG", "ucpkit_registry=info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let call = |id: u64, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "search", "arguments": arguments}});
    for message in [
        initialize(1),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        call(2, json!({"query": "stream"})),
        call(3, json!({"q": "stream"})),
    ] {
        writeln!(input, "{message}").unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains(r#"tool call tool="search""#) && log.contains("failed=false"), "{log}");
    assert!(log.contains(r#"refused or failed tool="search""#) && log.contains(r#"code="invalid_argument""#), "{log}");
    assert!(!log.contains("rmcp"), "the filter keeps to the registry: {log}");
}
