//! UCP's MCP client against real servers: the reference servers on npm
//! (everything over stdio and streamable HTTP, filesystem, memory) and the
//! time server on PyPI, installed pinned by `scripts/setup-mcp-servers`
//! (`scripts/test` runs it and these tests), and against servers that
//! misbehave (exit at start, hang, write garbage).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use ucpkit_mcp_client::{registry_tools, McpServers, ServerConfig, ServersConfig};

const NEEDS: &str = "UCP_MCP_SERVERS is not set (scripts/test runs scripts/setup-mcp-servers and sets it)";

/// The npm servers' folder.
fn node_modules() -> PathBuf {
    PathBuf::from(std::env::var_os("UCP_MCP_SERVERS").expect(NEEDS))
}

/// A reference server on npm, over stdio (`args` after its script).
fn reference(package: &str, args: &[&str]) -> ServerConfig {
    let script = node_modules().join("@modelcontextprotocol").join(package).join("dist/index.js");
    let mut all = vec![script.to_string_lossy().into_owned()];
    all.extend(args.iter().map(|a| a.to_string()));
    ServerConfig::stdio("node", all)
}

fn config(servers: &[(&str, ServerConfig)]) -> ServersConfig {
    let mut config = ServersConfig::default();
    for (name, server) in servers {
        config.add(name, server.clone()).unwrap();
    }
    config
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    ucpkit_mcp_client::tools::call_output(result).text
}

#[test]
#[ignore = "needs UCP_MCP_SERVERS: scripts/test installs the servers and runs this"]
fn nothing_starts_until_used_and_lists_are_cached() {
    let store = tempfile::tempdir().unwrap();
    let mut everything = reference("server-everything", &["stdio"]);
    everything.env.insert("UCP_GIVEN".into(), "given".into());
    let config = config(&[("everything", everything)]);

    let servers = McpServers::new(&config, Some(store.path())).unwrap();
    assert_eq!(servers.connects(), 0, "nothing is started with UCP");
    let listing = servers.listing("everything", false).unwrap();
    assert!(listing.tools.iter().any(|t| t.name == "echo"), "{:?}", listing.tools);
    assert!(!listing.resources.is_empty() && !listing.prompts.is_empty());
    assert_eq!(servers.connects(), 1, "a server never listed is connected once to list it");
    let echoed = servers.call_tool("everything", "echo", args(json!({"message": "hi"}))).unwrap();
    assert_eq!(text(&echoed), "Echo: hi");
    assert_eq!(servers.connects(), 1, "the listing's connection is used");
    // The server sees the variables it was given and those programs need, not UCP's others.
    let env = text(&servers.call_tool("everything", "get-env", args(json!({}))).unwrap());
    assert!(env.contains("UCP_GIVEN") && env.contains("PATH"), "{env}");
    assert!(!env.contains("CARGO_MANIFEST_DIR") && !env.contains("UCP_MCP_SERVERS"), "{env}");
    drop(servers);

    // Next time the lists come from the store: nothing starts, not even for the registry.
    let servers = Arc::new(McpServers::new(&config, Some(store.path())).unwrap());
    let (tools, notes) = registry_tools(&servers);
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(servers.connects(), 0, "the cached lists are used");
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert!(names.contains(&"mcp__everything__echo") && names.contains(&"mcp__everything__get-sum"), "{names:?}");
    assert!(names.contains(&"mcp__everything__read-resource") && names.contains(&"mcp__everything__get-prompt"));

    // Calls that race for the closed server open one connection.
    let racing: Vec<_> = (0..4)
        .map(|n| {
            let servers = servers.clone();
            std::thread::spawn(move || servers.call_tool("everything", "get-sum", args(json!({"a": n, "b": 1}))))
        })
        .collect();
    let sums: Vec<String> = racing.into_iter().map(|t| text(&t.join().unwrap().unwrap())).collect();
    assert!(sums.iter().any(|s| s.contains("The sum of 3 and 1 is 4")), "{sums:?}");
    assert_eq!(servers.connects(), 1, "one connection for the racing calls");
}

#[test]
#[ignore = "needs UCP_MCP_SERVERS: scripts/test installs the servers and runs this"]
fn the_registry_offers_them_under_its_rules() {
    let store = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    std::fs::write(files.path().join("notes.txt"), "the meeting moved to Tuesday").unwrap();
    let root = files.path().canonicalize().unwrap();
    let mut filesystem = reference("server-filesystem", &[root.to_str().unwrap()]);
    filesystem.disabled_tools = vec!["move_file".into()];
    let config = config(&[("files", filesystem), ("memory", reference("server-memory", &[]))]);
    let servers = Arc::new(McpServers::new(&config, Some(store.path())).unwrap());
    let (tools, notes) = registry_tools(&servers);
    assert!(notes.is_empty(), "{notes:?}");
    let library = Arc::new(ucpkit_registry::Library::open(ucpkit_registry::LibraryConfig::new(store.path())).unwrap());
    let offer = ucpkit_registry::ToolOffer { others: tools, ..ucpkit_registry::ToolOffer::documents(8000) };
    let listed: Vec<String> = ucpkit_registry::tools::list(&offer).into_iter().map(|t| t.name).collect();
    assert!(listed.contains(&"mcp__files__read_text_file".to_owned()), "{listed:?}");
    assert!(!listed.contains(&"mcp__files__move_file".to_owned()), "disabled_tools");
    let refused = servers.call_tool("files", "move_file", args(json!({"source": "a", "destination": "b"})));
    assert!(refused.unwrap_err().to_string().contains("not offered"), "disabled_tools holds for direct calls too");
    let connection = ucpkit_registry::Connection::new(library.clone(), Arc::new(offer.clone()));
    let path = root.join("notes.txt");
    let read = ucpkit_registry::tools::call(
        &connection,
        "mcp__files__read_text_file",
        &args(json!({"path": path.to_str().unwrap()})),
    )
    .unwrap();
    assert_eq!(read.text, "the meeting moved to Tuesday");
    let created = ucpkit_registry::tools::call(
        &connection,
        "mcp__memory__create_entities",
        &args(json!({"entities": [{"name": "Ada", "entityType": "person", "observations": ["writes Rust"]}]})),
    )
    .unwrap();
    assert!(!created.is_error, "{}", created.text);

    // Read-only keeps only the tools their server marks read-only.
    let read_only = ucpkit_registry::ToolOffer { read_only: true, ..offer.clone() };
    let listed: Vec<String> = ucpkit_registry::tools::list(&read_only).into_iter().map(|t| t.name).collect();
    assert!(listed.contains(&"mcp__files__read_text_file".to_owned()), "{listed:?}");
    assert!(!listed.contains(&"mcp__files__write_file".to_owned()), "{listed:?}");
    let connection = ucpkit_registry::Connection::new(library.clone(), Arc::new(read_only));
    let write = args(json!({"path": root.join("x.txt").to_str().unwrap(), "content": "x"}));
    assert!(ucpkit_registry::tools::call(&connection, "mcp__files__write_file", &write).is_err());
    assert!(!root.join("x.txt").exists());

    // find_tools searches them with UCP's own.
    let discovering = ucpkit_registry::ToolOffer { discover: true, ..offer };
    let connection = ucpkit_registry::Connection::new(library, Arc::new(discovering));
    let found = ucpkit_registry::tools::call(
        &connection,
        "find_tools",
        &args(json!({"intent": "add entities to the knowledge graph", "limit": 3})),
    )
    .unwrap();
    assert!(found.text.contains("mcp__memory__create_entities"), "{}", found.text);
}

#[test]
#[ignore = "needs UCP_MCP_SERVERS: scripts/test installs the servers and runs this"]
fn a_dead_server_is_started_again_and_an_idle_one_closed() {
    let marker = format!("ucp-test-{}", std::process::id());
    let mut everything = reference("server-everything", &["stdio", &marker]);
    everything.idle_timeout_secs = Some(1.5);
    let servers = McpServers::new(&config(&[("everything", everything)]), None).unwrap();
    assert_eq!(text(&servers.call_tool("everything", "echo", args(json!({"message": "1"}))).unwrap()), "Echo: 1");
    let killed = std::process::Command::new("pkill").args(["-f", &marker]).status().unwrap();
    assert!(killed.success());
    std::thread::sleep(Duration::from_millis(500));
    // The next call finds it dead and starts it again.
    let again = servers.call_tool("everything", "echo", args(json!({"message": "2"}))).unwrap();
    assert_eq!(text(&again), "Echo: 2");
    assert_eq!(servers.connects(), 2);
    assert_eq!(servers.connected(), 1);
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(servers.connected(), 0, "the idle server is disconnected");
}

#[test]
#[ignore = "needs UCP_MCP_SERVERS: scripts/test installs the servers and runs this"]
fn slow_calls_time_out_naming_the_server() {
    let mut everything = reference("server-everything", &["stdio"]);
    everything.tool_timeout_secs = Some(1.0);
    let servers = McpServers::new(&config(&[("everything", everything)]), None).unwrap();
    let started = Instant::now();
    let error = servers
        .call_tool("everything", "trigger-long-running-operation", args(json!({"duration": 20, "steps": 2})))
        .unwrap_err()
        .to_string();
    assert!(error.contains("everything") && error.contains("within 1 s"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10));
    // The server still answers.
    assert_eq!(text(&servers.call_tool("everything", "echo", args(json!({"message": "x"}))).unwrap()), "Echo: x");
}

#[test]
fn bad_servers_get_clear_errors_and_hold_up_nothing() {
    let shell = |script: &str| {
        let mut server = ServerConfig::stdio("sh", ["-c", script]);
        server.startup_timeout_secs = Some(2.0);
        server
    };
    let config = config(&[
        ("exits", shell("echo 'cannot find config' >&2; exit 3")),
        ("hangs", shell("sleep 30")),
        ("garbage", shell("while true; do echo '{not json'; done")),
        ("missing", ServerConfig::stdio("/nonexistent/ucp-mcp-server", [""; 0])),
    ]);
    let servers = McpServers::new(&config, None).unwrap();
    let started = Instant::now();
    let listings = servers.listings(false);
    assert!(started.elapsed() < Duration::from_secs(8), "the servers are listed at once: {:?}", started.elapsed());
    let error = |name: &str| listings.iter().find(|(n, _)| n == name).unwrap().1.as_ref().unwrap_err().to_string();
    assert!(error("exits").contains("exits") && error("exits").contains("cannot find config"), "{}", error("exits"));
    assert!(error("hangs").contains("hangs did not start: no answer to initialize within 2 s"), "{}", error("hangs"));
    assert!(error("garbage").contains("garbage"), "{}", error("garbage"));
    assert!(error("missing").contains("cannot run"), "{}", error("missing"));
    let unknown = servers.call_tool("nope", "x", Default::default()).unwrap_err().to_string();
    assert!(unknown.contains("no MCP server \"nope\""), "{unknown}");
}

/// The everything server over streamable HTTP on a free port, stopped
/// when dropped.
struct HttpEverything {
    child: std::process::Child,
    url: String,
}

impl HttpEverything {
    fn start() -> HttpEverything {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let script = node_modules().join("@modelcontextprotocol/server-everything/dist/index.js");
        let child = std::process::Command::new("node")
            .arg(script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(20), "the HTTP server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpEverything { child, url: format!("http://127.0.0.1:{port}/mcp") }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[ignore = "needs UCP_MCP_SERVERS: scripts/test installs the servers and runs this"]
fn a_streamable_http_server_is_reached_with_its_token() {
    let server = HttpEverything::start();
    let servers = McpServers::new(&config(&[("web", ServerConfig::http(&server.url))]), None).unwrap();
    let listing = servers.listing("web", false).unwrap();
    assert!(listing.tools.iter().any(|t| t.name == "get-sum"));
    let sum = servers.call_tool("web", "get-sum", args(json!({"a": 2, "b": 3}))).unwrap();
    assert!(text(&sum).contains("is 5"), "{}", text(&sum));
    let resource = &listing.resources[0];
    let read = servers.read_resource("web", &resource.uri).unwrap();
    assert!(!read.contents.is_empty());

    let mut tokened = ServerConfig::http(&server.url);
    tokened.bearer_token_env_var = Some("UCP_TEST_SURELY_UNSET_TOKEN".into());
    let servers = McpServers::new(&config(&[("web", tokened)]), None).unwrap();
    let error = servers.listing("web", false).unwrap_err().to_string();
    assert!(error.contains("UCP_TEST_SURELY_UNSET_TOKEN is not set"), "{error}");
}

#[test]
#[ignore = "needs UCP_MCP_TIME: scripts/test installs the PyPI time server and runs this"]
fn the_python_time_server_answers() {
    let time = std::env::var("UCP_MCP_TIME").expect("UCP_MCP_TIME is not set (scripts/test sets it)");
    let servers = McpServers::new(&config(&[("time", ServerConfig::stdio(time, [""; 0]))]), None).unwrap();
    let listing = servers.listing("time", false).unwrap();
    let names: Vec<&str> = listing.tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["get_current_time", "convert_time"]);
    let now = servers.call_tool("time", "get_current_time", args(json!({"timezone": "UTC"}))).unwrap();
    let now: Value = serde_json::from_str(&text(&now)).unwrap();
    assert_eq!(now["timezone"], "UTC");
    let wrong = servers.call_tool("time", "get_current_time", args(json!({"timezone": "Mars/Olympus"}))).unwrap();
    assert_eq!(wrong.is_error, Some(true), "a tool's own error is an answer, not a broken server");
}

#[test]
#[ignore = "needs UCP_MCP_SERVERS: scripts/test installs the servers and runs this"]
fn a_fifty_megabyte_answer_is_capped_and_paged() {
    // The server sends the file's text twice (as text and as structured
    // content): a 24 MB file is a 50 MB answer.
    let files = tempfile::tempdir().unwrap();
    let root = files.path().canonicalize().unwrap();
    let line = "all work and no play makes a dull answer\n";
    std::fs::write(root.join("big.txt"), line.repeat(24_000_000 / line.len())).unwrap();
    let store = tempfile::tempdir().unwrap();
    let servers = Arc::new(
        McpServers::new(&config(&[("files", reference("server-filesystem", &[root.to_str().unwrap()]))]), None)
            .unwrap(),
    );
    let (tools, _) = registry_tools(&servers);
    let library = Arc::new(ucpkit_registry::Library::open(ucpkit_registry::LibraryConfig::new(store.path())).unwrap());
    let offer = ucpkit_registry::ToolOffer { others: tools, ..ucpkit_registry::ToolOffer::documents(2000) };
    let connection = ucpkit_registry::Connection::new(library, Arc::new(offer));
    let path = root.join("big.txt");
    let first = ucpkit_registry::tools::call(
        &connection,
        "mcp__files__read_text_file",
        &args(json!({"path": path.to_str().unwrap()})),
    )
    .unwrap();
    assert!(first.text.starts_with(line) && first.text.len() < 20_000, "one page: {} bytes", first.text.len());
    assert!(first.text.contains("page 1 of"), "{}", &first.text[first.text.len() - 300..]);
    // The other servers' and UCP's own tools still answer.
    let own = ucpkit_registry::tools::call(&connection, "memory_recent", &args(json!({}))).unwrap();
    assert!(!own.is_error);
}

#[test]
#[ignore = "needs UCP_MCP_TIME: scripts/test installs the PyPI servers (with the Python SDK) and runs this"]
fn a_list_changed_notification_refreshes_the_cache() {
    let time = PathBuf::from(std::env::var_os("UCP_MCP_TIME").expect("UCP_MCP_TIME is not set (scripts/test sets it)"));
    let python = time.with_file_name("python");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/changing_server.py");
    let store = tempfile::tempdir().unwrap();
    let config = config(&[("changing", ServerConfig::stdio(python.to_str().unwrap(), [script]))]);
    let servers = McpServers::new(&config, Some(store.path())).unwrap();
    let names = |listing: &ucpkit_mcp_client::Listing| -> Vec<String> {
        listing.tools.iter().map(|t| t.name.to_string()).collect()
    };
    assert_eq!(names(&servers.listing("changing", false).unwrap()), ["grow"]);
    assert_eq!(text(&servers.call_tool("changing", "grow", Default::default()).unwrap()), "added");
    let started = Instant::now();
    while names(&servers.cached("changing").unwrap()) != ["grow", "grown"] {
        assert!(started.elapsed() < Duration::from_secs(10), "the lists were not refreshed");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(servers);
    let servers = McpServers::new(&config, Some(store.path())).unwrap();
    assert_eq!(names(&servers.cached("changing").unwrap()), ["grow", "grown"], "the store's cache too");
}
