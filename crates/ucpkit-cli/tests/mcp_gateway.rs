//! UCP as an MCP client, end to end through the `ucp` binary: the servers
//! of `.ucp/config.toml` listed and called by `ucp mcp-servers`, and
//! served behind discovery by `ucp mcp --gateway`, each started by the
//! first call to one of its tools. The servers are the reference servers
//! `scripts/setup-mcp-servers` installs from npm.

mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::mcp::{initialize, result_text};
use common::{assert_user_error, ucp};
use serde_json::{json, Value};

/// A store whose configuration names the everything server, its command
/// line carrying `marker` so its processes can be counted.
fn configured_store(marker: &str) -> tempfile::TempDir {
    let modules =
        PathBuf::from(std::env::var_os("UCP_MCP_SERVERS").expect("UCP_MCP_SERVERS is not set (scripts/test sets it)"));
    let script = modules.join("@modelcontextprotocol/server-everything/dist/index.js");
    let store = tempfile::tempdir().unwrap();
    let config = format!(
        "[agent]\nmax_context_tokens = 4000\n\n[mcp_servers.everything]\ncommand = \"node\"\nargs = [{:?}, \"stdio\", {marker:?}]\n",
        script.to_str().unwrap()
    );
    std::fs::write(store.path().join("config.toml"), config).unwrap();
    store
}

/// How many processes have `marker` on their command line.
fn processes(marker: &str) -> usize {
    let out = Command::new("pgrep").args(["-f", marker]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count()
}

fn text(output: &std::process::Output) -> String {
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
#[ignore = "needs UCP_MCP_SERVERS: scripts/test installs the servers and runs this"]
fn mcp_servers_lists_and_calls() {
    let marker = format!("ucp-cli-list-{}", std::process::id());
    let store = configured_store(&marker);
    let listed = text(&ucp(store.path(), &["mcp-servers", "list"]));
    assert!(listed.contains("everything  [stdio] node") && listed.contains("not listed yet"), "{listed}");
    let tools = text(&ucp(store.path(), &["mcp-servers", "tools", "everything"]));
    assert!(tools.contains("mcp__everything__echo\n    Echoes back the input string"), "{tools}");
    let listed = text(&ucp(store.path(), &["mcp-servers", "list"]));
    assert!(listed.contains("13 tools, 7 resources, 4 prompts"), "{listed}");
    let echoed =
        text(&ucp(store.path(), &["mcp-servers", "call", "everything", "echo", "--args", r#"{"message":"x"}"#]));
    assert_eq!(echoed, "Echo: x\n");
    let failed = ucp(store.path(), &["mcp-servers", "call", "everything", "nope"]);
    assert_user_error(&failed, "Tool nope not found");
    assert_user_error(&ucp(store.path(), &["mcp-servers", "call", "elsewhere", "echo"]), "no MCP server \"elsewhere\"");
    assert_user_error(
        &ucp(store.path(), &["mcp-servers", "call", "everything", "echo", "--args", "[1]"]),
        "JSON object",
    );
    assert_eq!(processes(&marker), 0, "every server stops with ucp");

    let sandboxed = ucp(store.path(), &["mcp", "--gateway", "--sandbox", "--http", "127.0.0.1:0", "--create"]);
    assert_user_error(&sandboxed, "cannot go with --sandbox");

    // A mistake in a section is named, and nothing runs.
    std::fs::write(store.path().join("config.toml"), "[mcp_servers.x]\ncomand = \"node\"\n").unwrap();
    assert_user_error(&ucp(store.path(), &["mcp-servers", "list"]), "comand");
}

/// `ucp mcp` over stdio.
struct Gateway {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
}

impl Gateway {
    fn start(store: &Path) -> Gateway {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ucp"))
            .arg("--store")
            .arg(store)
            .args(["mcp", "--gateway", "--create"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut gateway = Gateway { child, input, output };
        gateway.request(&initialize(1));
        gateway.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        gateway
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.input, "{message}").unwrap();
    }

    fn request(&mut self, message: &Value) -> Value {
        self.send(message);
        loop {
            let mut line = String::new();
            assert!(self.output.read_line(&mut line).unwrap() > 0, "the gateway closed stdout");
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == message["id"] {
                return reply;
            }
        }
    }

    fn call(&mut self, id: u64, tool: &str, arguments: Value) -> String {
        let reply = self.request(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
        result_text(&reply)
    }
}

#[test]
#[ignore = "needs UCP_MCP_SERVERS: scripts/test installs the servers and runs this"]
fn the_gateway_starts_a_server_at_its_first_call() {
    let marker = format!("ucp-cli-gateway-{}", std::process::id());
    let store = configured_store(&marker);
    // Listed once, into the store's cache.
    text(&ucp(store.path(), &["mcp-servers", "list", "--refresh"]));
    let mut gateway = Gateway::start(store.path());
    let tools = gateway.request(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["ucl", "context", "search", "find_tools"]);
    let found = gateway.call(3, "find_tools", json!({"intent": "echo back a message"}));
    assert!(found.contains("mcp__everything__echo"), "{found}");
    assert_eq!(processes(&marker), 0, "no server started before its first call");
    assert_eq!(gateway.call(4, "mcp__everything__echo", json!({"message": "hi"})), "Echo: hi");
    assert_eq!(processes(&marker), 1);
    drop(gateway.input);
    assert!(gateway.child.wait().unwrap().success());
    let started = std::time::Instant::now();
    while processes(&marker) > 0 {
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "the server outlived the gateway");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
