//! An `ucp mcp --http` server for tests, spoken to in raw HTTP/1.1 over
//! TCP, an `ucp mcp` over stdio, and the JSON-RPC messages they send.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

/// The token test servers are started with.
pub const TOKEN: &str = "s3cret-token";

/// `ucp mcp --http 127.0.0.1:0` with a token, killed on drop.
pub struct HttpServer {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl HttpServer {
    /// Started with the token [`TOKEN`] (in `UCP_MCP_TOKEN`).
    pub fn start(store: &Path, extra: &[&str]) -> HttpServer {
        HttpServer::start_with(store, Some(TOKEN), extra)
    }

    /// Started with `token`, or none.
    pub fn start_with(store: &Path, token: Option<&str>, extra: &[&str]) -> HttpServer {
        HttpServer::start_node(store, token, None, extra)
    }

    /// Started with `token`, or none, as the node whose caches are in
    /// `node` (UCP_CACHE_DIR: a store on a database server).
    pub fn start_node(store: &Path, token: Option<&str>, node: Option<&Path>, extra: &[&str]) -> HttpServer {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ucp"));
        if let Some(node) = node {
            command.env("UCP_CACHE_DIR", node);
        }
        command.env_remove("UCP_MCP_TOKEN");
        if let Some(token) = token {
            command.env("UCP_MCP_TOKEN", token);
        }
        let mut child = command
            .arg("--store")
            .arg(store)
            .args(["mcp", "--http", "127.0.0.1:0"])
            .args(extra)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
        let addr = line.split("http://").nth(1).and_then(|rest| rest.split('/').next()).unwrap_or_else(|| {
            panic!("no address in {line:?}");
        });
        HttpServer { child, addr: addr.parse().unwrap() }
    }

    /// One request on a fresh connection: status, headers (lowercase), body.
    pub fn request(&self, method: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, String, String) {
        let mut stream = TcpStream::connect(self.addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut head = format!(
            "{method} /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
             accept: application/json, text/event-stream\r\nconnection: close\r\ncontent-length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).unwrap();
        // A large body is written beside the read: the server may answer
        // before it has taken all of it.
        let writer = {
            let mut stream = stream.try_clone().unwrap();
            let body = body.to_vec();
            std::thread::spawn(move || {
                let _ = stream.write_all(&body);
            })
        };
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
        writer.join().unwrap();
        let raw = String::from_utf8_lossy(&raw).into_owned();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no response: {raw:?}"));
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        let head = head.to_ascii_lowercase();
        let body = if head.contains("transfer-encoding: chunked") { dechunk(body) } else { body.to_owned() };
        (status, head, body)
    }

    /// The server process's id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The `Authorization` header's value.
    pub fn auth(&self) -> String {
        format!("Bearer {TOKEN}")
    }

    /// Opens an MCP session; returns its id.
    pub fn initialize(&self) -> String {
        let auth = self.auth();
        let (status, head, body) =
            self.request("POST", &[("authorization", &auth)], &initialize(1).to_string().into_bytes());
        assert_eq!(status, 200, "{body}");
        let id = head.lines().find_map(|l| l.strip_prefix("mcp-session-id: ")).unwrap().trim().to_owned();
        self.post(&id, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        id
    }

    /// A message in a session; the reply's JSON-RPC message, if any.
    pub fn post(&self, session: &str, message: &Value) -> Option<Value> {
        let auth = self.auth();
        let headers =
            [("authorization", auth.as_str()), ("mcp-session-id", session), ("mcp-protocol-version", "2025-06-18")];
        let (status, _, body) = self.request("POST", &headers, message.to_string().as_bytes());
        assert!(status == 200 || status == 202, "{status}: {body}");
        rpc_message(&body)
    }

    /// A `tools/call` of `tool` in a session; its JSON-RPC reply.
    pub fn call(&self, session: &str, tool: &str, arguments: Value) -> Value {
        let call = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                          "params": {"name": tool, "arguments": arguments}});
        self.post(session, &call).unwrap()
    }

    /// The `ucl` tool in a session; its JSON-RPC reply.
    pub fn ucl(&self, session: &str, commands: &str) -> Value {
        let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                          "params": {"name": "ucl", "arguments": {"commands": commands}}});
        self.post(session, &call).unwrap()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The body of a chunked response.
pub fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// The JSON-RPC message in a response body: JSON, or an SSE event's data.
pub fn rpc_message(body: &str) -> Option<Value> {
    if let Ok(value) = serde_json::from_str(body) {
        return Some(value);
    }
    body.lines().filter_map(|l| l.strip_prefix("data: ")).find_map(|data| serde_json::from_str(data).ok())
}

/// An `initialize` request.
pub fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
}

/// The text of a tool result.
pub fn result_text(reply: &Value) -> String {
    reply["result"]["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect()
}

/// `ucp mcp` over stdio with its pipes.
pub struct StdioServer {
    /// The server's process.
    pub child: Child,
    /// Its stdin (dropped: the client has gone).
    pub input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl StdioServer {
    /// `ucp --store STORE mcp EXTRA…`.
    pub fn start(store: &Path, extra: &[&str]) -> StdioServer {
        StdioServer::start_node(store, None, extra)
    }

    /// [`StdioServer::start`] with the caches of node `node`
    /// (UCP_CACHE_DIR: a store on a database server).
    pub fn start_node(store: &Path, node: Option<&Path>, extra: &[&str]) -> StdioServer {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ucp"));
        if let Some(node) = node {
            command.env("UCP_CACHE_DIR", node);
        }
        let mut child = command
            .arg("--store")
            .arg(store)
            .arg("mcp")
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        StdioServer { child, input, output }
    }

    /// Writes one line to its stdin.
    pub fn send(&mut self, line: &str) {
        writeln!(self.input, "{line}").unwrap();
    }

    /// Reads messages until the reply to `id`.
    pub fn reply(&mut self, id: u64) -> Value {
        loop {
            let mut line = String::new();
            assert!(self.output.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Calls `tool` with `arguments`; the reply.
    pub fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": tool, "arguments": arguments}})
            .to_string(),
        );
        self.reply(id)
    }
}
