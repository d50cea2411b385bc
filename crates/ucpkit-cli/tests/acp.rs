//! `ucp acp`: UCP's agent over the Agent Client Protocol. Most tests play
//! a client byte for byte (JSON-RPC lines on the agent's stdio) against a
//! scripted model, so each turn is deterministic: a tool call, the
//! permission asked with its diff, cancel, load and list, the client's MCP
//! servers, bad input. The tests marked ignored drive it with the real
//! clients `scripts/test` installs (the official TypeScript SDK's client
//! and `acpx`) and with the real local model.

mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use common::model::{answer, local_model, scripted_model, scripted_model_seen, tool_call};
use serde_json::{json, Value};

/// How long a test waits for one message.
const WAIT: Duration = Duration::from_secs(30);

/// `ucp acp` under test, spoken to one JSON-RPC line at a time.
struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Agent {
    /// `ucp --store STORE acp ARGS...` with the model at `url`.
    fn start(store: &Path, url: &str, args: &[&str]) -> Agent {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ucp"))
            .arg("--store")
            .arg(store)
            .args(["acp", "--base-url", url, "--llm", "m"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        Agent { stdin: child.stdin.take(), child, lines, next_id: 1 }
    }

    /// Writes one line as it is.
    fn write(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Sends request `method` and returns its id.
    fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        id
    }

    /// Sends a notification.
    fn notify(&mut self, method: &str, params: Value) {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string());
    }

    /// Answers the agent's request `id`.
    fn reply(&mut self, id: &Value, result: Value) {
        self.write(&json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string());
    }

    /// The next message.
    fn next(&mut self) -> Value {
        let line = self.lines.recv_timeout(WAIT).expect("a message from the agent");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Messages until one `matches` (that one last).
    fn until(&mut self, matches: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let message = self.next();
            let done = matches(&message);
            seen.push(message);
            if done {
                return seen;
            }
        }
    }

    /// The answer to request `id`, and what came before it.
    fn answer_to(&mut self, id: u64) -> (Value, Vec<Value>) {
        let mut seen = self.until(|m| m["id"] == id && m.get("method").is_none());
        let answer = seen.pop().unwrap();
        (answer, seen)
    }

    /// `initialize` as a client that offers `capabilities`.
    fn initialize(&mut self, capabilities: Value) -> Value {
        let id = self.send("initialize", json!({"protocolVersion": 1, "clientCapabilities": capabilities}));
        self.answer_to(id).0
    }

    /// A new session in `cwd` with the client's MCP `servers`.
    fn new_session(&mut self, cwd: &Path, servers: Value) -> String {
        let id = self.send("session/new", json!({"cwd": cwd, "mcpServers": servers}));
        let (answer, _) = self.answer_to(id);
        answer["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{answer}")).to_owned()
    }

    /// Sends a prompt of `text` in `session`; returns the request's id.
    fn prompt(&mut self, session: &str, text: &str) -> u64 {
        self.send("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}))
    }

    /// Started, initialized as a client offering nothing, with a session
    /// open in `root`: the agent and the session's id.
    fn with_session(store: &Path, url: &str, root: &Path, args: &[&str]) -> (Agent, String) {
        let mut agent = Agent::start(store, url, args);
        agent.initialize(json!({}));
        let session = agent.new_session(root, json!([]));
        (agent, session)
    }

    /// Closes its stdin and waits for it to exit.
    fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `session/update`s among `messages`, by kind.
fn updates<'a>(messages: &'a [Value], kind: &str) -> Vec<&'a Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "session/update" && m["params"]["update"]["sessionUpdate"] == kind)
        .map(|m| &m["params"]["update"])
        .collect()
}

/// A folder to work in, with `a.txt`, and a store beside it.
fn workspace() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("project");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.txt"), "hello world\n").unwrap();
    let store = dir.path().join("store");
    (dir, root.canonicalize().unwrap(), store)
}

/// The permission request among `messages`.
fn permission_request(messages: &[Value]) -> &Value {
    messages.iter().find(|m| m["method"] == "session/request_permission").expect("a permission request")
}

#[test]
fn an_edit_is_asked_for_with_its_diff_and_shown_done() {
    let (_dir, root, store) = workspace();
    let edit = json!({"path": "a.txt", "old_string": "hello", "new_string": "goodbye"});
    let (url, seen) = scripted_model_seen(vec![tool_call("c1", "edit", edit), answer("The file now says goodbye.")]);
    let mut agent = Agent::start(&store, &url, &[]);
    let init = agent.initialize(json!({}));
    assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
    let capabilities = &init["result"]["agentCapabilities"];
    assert_eq!(capabilities["loadSession"], true);
    assert_eq!(capabilities["mcpCapabilities"]["http"], true);
    assert_eq!(capabilities["promptCapabilities"]["embeddedContext"], true);
    for what in ["list", "resume", "close"] {
        assert!(capabilities["sessionCapabilities"][what].is_object(), "{capabilities}");
    }
    let session = agent.new_session(&root, json!([]));
    let commands = agent.until(|m| m["params"]["update"]["sessionUpdate"] == "available_commands_update");
    let names = commands.last().unwrap()["params"]["update"]["availableCommands"].to_string();
    assert!(names.contains("\"context\"") && names.contains("\"search\"") && names.contains("\"memory\""));
    let turn = agent.prompt(&session, "Say goodbye in a.txt");
    let before = agent.until(|m| m["method"] == "session/request_permission");
    let request = permission_request(&before).clone();
    let path = root.join("a.txt");
    let call = &request["params"]["toolCall"];
    assert_eq!(call["title"], format!("Edit {}", path.display()), "{request}");
    assert_eq!(call["kind"], "edit");
    assert_eq!(
        call["content"][0],
        json!({"type": "diff", "path": path, "oldText": "hello world\n", "newText": "goodbye world\n"})
    );
    let options: Vec<&str> =
        request["params"]["options"].as_array().unwrap().iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(options, ["allow_once", "allow_always", "reject_once", "reject_always"]);
    let announced = updates(&before, "tool_call");
    // `pending` is the status a call has until said otherwise.
    assert!(announced[0].get("status").is_none(), "waits for approval: {announced:?}");
    assert_eq!(announced[0]["locations"][0]["path"], json!(path));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello world\n", "nothing written before the answer");
    agent.reply(&request["id"], json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}));
    let (done, after) = agent.answer_to(turn);
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "goodbye world\n");
    let finished = updates(&after, "tool_call_update");
    let last = finished.iter().rev().find(|u| u["status"].is_string()).unwrap();
    assert_eq!(last["status"], "completed", "{finished:?}");
    assert!(last["content"].to_string().contains("\"type\":\"diff\""), "the diff is shown: {last}");
    let text: String =
        updates(&after, "agent_message_chunk").iter().map(|u| u["content"]["text"].as_str().unwrap()).collect();
    assert_eq!(text, "The file now says goodbye.");
    assert!(!updates(&after, "usage_update").is_empty());
    let _ = seen.recv_timeout(WAIT).unwrap();
    assert!(agent.finish().success());
}

#[test]
fn a_rejected_command_does_not_run_and_the_model_is_told_why() {
    let (_dir, root, store) = workspace();
    let touch = json!({"command": "touch ran.txt"});
    let (url, seen) = scripted_model_seen(vec![
        tool_call("c1", "bash", touch.clone()),
        tool_call("c2", "bash", touch),
        answer("It was not allowed."),
    ]);
    let (mut agent, session) = Agent::with_session(&store, &url, &root, &[]);
    let turn = agent.prompt(&session, "Create ran.txt");
    let request = permission_request(&agent.until(|m| m["method"] == "session/request_permission")).clone();
    let call = &request["params"]["toolCall"];
    assert_eq!(call["title"], format!("Run `touch ran.txt` in {}", root.display()), "{request}");
    assert_eq!(call["kind"], "execute");
    let always = request["params"]["options"][3]["name"].as_str().unwrap();
    assert_eq!(always, "Always reject `touch` commands in this session");
    agent.reply(&request["id"], json!({"outcome": {"outcome": "selected", "optionId": "reject_always"}}));
    // The second call is refused without asking again.
    let (done, after) = agent.answer_to(turn);
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert!(after.iter().all(|m| m["method"] != "session/request_permission"), "asked once: {after:?}");
    assert!(!root.join("ran.txt").exists());
    let requests: Vec<Value> = seen.try_iter().collect();
    let told = requests.last().unwrap()["messages"].to_string();
    assert!(told.contains("not approved: the user rejected `touch` commands for this session"), "{told}");
}

#[test]
fn the_folders_guard_rules_ask_through_the_client_and_deny_without_asking() {
    let (_dir, root, store) = workspace();
    std::fs::create_dir(root.join(".ucp")).unwrap();
    let rules = "[[guard.rules]]\ndecision = \"ask\"\ntool = \"read\"\npath = \"a.txt\"\nreason = \"a.txt is private\"\n\
                 [[guard.rules]]\ndecision = \"deny\"\ntool = \"bash\"\ncommand = [\"touch\"]\nreason = \"no new files\"\n";
    std::fs::write(root.join(".ucp/config.toml"), rules).unwrap();
    let (url, seen) = scripted_model_seen(vec![
        tool_call("c1", "read", json!({"path": "a.txt"})),
        tool_call("c2", "bash", json!({"command": "touch ran.txt"})),
        answer("Read it; the file was not made."),
    ]);
    let (mut agent, session) = Agent::with_session(&store, &url, &root, &[]);
    let turn = agent.prompt(&session, "Read a.txt, then make ran.txt");
    // A read is never asked for, unless a rule says so.
    let request = permission_request(&agent.until(|m| m["method"] == "session/request_permission")).clone();
    assert_eq!(request["params"]["toolCall"]["title"], format!("Read {}", root.join("a.txt").display()), "{request}");
    agent.reply(&request["id"], json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}));
    let (done, after) = agent.answer_to(turn);
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert!(after.iter().all(|m| m["method"] != "session/request_permission"), "a deny asks nobody: {after:?}");
    assert!(!root.join("ran.txt").exists());
    let requests: Vec<Value> = seen.try_iter().collect();
    let told = requests.last().unwrap()["messages"].to_string();
    assert!(told.contains("hello world") && told.contains("blocked: no new files"), "{told}");
}

#[test]
fn allow_always_is_remembered_for_the_session() {
    let (_dir, root, store) = workspace();
    let first = json!({"path": "a.txt", "old_string": "hello", "new_string": "hi"});
    let second = json!({"path": "a.txt", "old_string": "world", "new_string": "there"});
    let url = scripted_model(vec![tool_call("c1", "edit", first), tool_call("c2", "edit", second), answer("Done.")]);
    let (mut agent, session) = Agent::with_session(&store, &url, &root, &[]);
    let turn = agent.prompt(&session, "Edit twice");
    let request = permission_request(&agent.until(|m| m["method"] == "session/request_permission")).clone();
    assert_eq!(request["params"]["options"][1]["name"], "Always allow edit calls in this session");
    agent.reply(&request["id"], json!({"outcome": {"outcome": "selected", "optionId": "allow_always"}}));
    let (done, after) = agent.answer_to(turn);
    assert_eq!(done["result"]["stopReason"], "end_turn");
    assert!(after.iter().all(|m| m["method"] != "session/request_permission"), "{after:?}");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "hi there\n");
}

#[test]
fn a_read_only_session_never_asks() {
    let (_dir, root, store) = workspace();
    let url = scripted_model(vec![
        tool_call("c1", "write", json!({"path": "new.txt", "content": "x"})),
        answer("I may not write here."),
    ]);
    let (mut agent, session) = Agent::with_session(&store, &url, &root, &["--read-only"]);
    let turn = agent.prompt(&session, "Write new.txt");
    let (done, seen) = agent.answer_to(turn);
    assert_eq!(done["result"]["stopReason"], "end_turn");
    assert!(seen.iter().all(|m| m["method"] != "session/request_permission"));
    assert!(!root.join("new.txt").exists());
}

#[test]
fn cancel_answers_a_pending_permission_request_and_ends_the_turn() {
    let (_dir, root, store) = workspace();
    let url = scripted_model(vec![tool_call("c1", "bash", json!({"command": "touch ran.txt"}))]);
    let (mut agent, session) = Agent::with_session(&store, &url, &root, &[]);
    let turn = agent.prompt(&session, "Create ran.txt");
    let request = permission_request(&agent.until(|m| m["method"] == "session/request_permission")).clone();
    agent.notify("session/cancel", json!({"sessionId": session}));
    let seen = agent.until(|m| m["id"] == turn);
    assert_eq!(seen.last().unwrap()["result"]["stopReason"], "cancelled", "{seen:?}");
    // The agent withdrew its request (`$/cancel_request`) — a client
    // that answers it anyway changes nothing.
    agent.reply(&request["id"], json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}));
    std::thread::sleep(Duration::from_millis(300));
    assert!(!root.join("ran.txt").exists());
    assert!(agent.finish().success());
}

#[test]
fn cancel_stops_a_streaming_model_call() {
    let (_dir, root, store) = workspace();
    // A model that streams a word every 50 ms for ten minutes.
    let url = scripted_model(vec![
        json!({"slow": 12_000}),
        tool_call("c1", "read", json!({"path": "a.txt"})),
        answer("Hello world."),
    ]);
    let (mut agent, session) = Agent::with_session(&store, &url, &root, &["--tools", "read"]);
    let turn = agent.prompt(&session, "Talk");
    agent.until(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk");
    let cancelled = Instant::now();
    agent.notify("session/cancel", json!({"sessionId": session}));
    let (done, _) = agent.answer_to(turn);
    assert_eq!(done["result"]["stopReason"], "cancelled");
    assert!(cancelled.elapsed() < WAIT);
    // The next turn runs once the cancelled one has let go of the model.
    let next = agent.prompt(&session, "Again");
    let (again, seen) = agent.answer_to(next);
    assert_eq!(again["result"]["stopReason"], "end_turn", "{again}");
    let said: String =
        updates(&seen, "agent_message_chunk").iter().map(|u| u["content"]["text"].as_str().unwrap()).collect();
    assert_eq!(said, "Hello world.", "nothing of the cancelled turn is shown");
}

#[test]
fn a_terminal_session_is_listed_loaded_and_taken_up_in_the_editor() {
    let (_dir, root, store) = workspace();
    let read = || json!({"path": "a.txt"});
    let url = scripted_model(vec![
        tool_call("c1", "read", read()),
        answer("It says hello world."),
        tool_call("c2", "read", read()),
        answer("Still hello world."),
        tool_call("c3", "read", read()),
        answer("Hello world, as before."),
    ]);
    let out = Command::new(env!("CARGO_BIN_EXE_ucp"))
        .current_dir(&root)
        .arg("--store")
        .arg(&store)
        .args(["agent", "What does a.txt say?", "--base-url", &url, "--llm", "m", "--session", "mine"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut agent = Agent::start(&store, &url, &[]);
    agent.initialize(json!({}));
    let id = agent.send("session/list", json!({"cwd": root}));
    let (listed, _) = agent.answer_to(id);
    let sessions = listed["result"]["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{listed}");
    assert_eq!(sessions[0]["sessionId"], "mine");
    assert_eq!(sessions[0]["title"], "What does a.txt say?");
    assert_eq!(sessions[0]["cwd"], json!(root));
    let elsewhere = agent.send("session/list", json!({"cwd": "/nowhere"}));
    assert_eq!(agent.answer_to(elsewhere).0["result"]["sessions"], json!([]));
    let load = agent.send("session/load", json!({"sessionId": "mine", "cwd": root, "mcpServers": []}));
    let (loaded, replayed) = agent.answer_to(load);
    assert!(loaded.get("result").is_some(), "{loaded}");
    assert_eq!(updates(&replayed, "user_message_chunk")[0]["content"]["text"], "What does a.txt say?");
    let call = updates(&replayed, "tool_call");
    assert_eq!(call[0]["toolCallId"], "c1");
    assert_eq!(call[0]["kind"], "read");
    let result = updates(&replayed, "tool_call_update");
    assert!(result[0]["content"].to_string().contains("hello world"), "{result:?}");
    assert_eq!(updates(&replayed, "agent_message_chunk")[0]["content"]["text"], "It says hello world.");
    let turn = agent.prompt("mine", "And now?");
    assert_eq!(agent.answer_to(turn).0["result"]["stopReason"], "end_turn");
    drop(agent);
    // Back in the terminal, the editor's turn is part of the session.
    let out =
        ucp_json(&store, &["agent", "Once more", "--base-url", &url, "--llm", "m", "--session", "mine", "--json"]);
    assert_eq!(out["total_steps"].as_u64(), Some(6), "{out}");
}

/// `ucp --json ...`'s output.
fn ucp_json(store: &Path, args: &[&str]) -> Value {
    common::stdout_json(&common::ucp(store, args))
}

#[test]
fn bad_input_gets_the_protocols_errors() {
    let (_dir, root, store) = workspace();
    let url = scripted_model(vec![]);
    let mut agent = Agent::start(&store, &url, &[]);
    agent.write("{not json");
    assert_eq!(agent.next()["error"]["code"], -32700);
    let early = agent.send("session/new", json!({"cwd": root, "mcpServers": []}));
    assert_eq!(agent.answer_to(early).0["error"]["code"], -32600, "before initialize");
    let init = agent.send("initialize", json!({"protocolVersion": 99, "clientCapabilities": {}}));
    assert_eq!(agent.answer_to(init).0["result"]["protocolVersion"], 1, "the newest it speaks");
    let unknown = agent.send("session/teleport", json!({}));
    assert_eq!(agent.answer_to(unknown).0["error"]["code"], -32601);
    let orphan = agent.prompt("no-such-session", "hi");
    let (answer, _) = agent.answer_to(orphan);
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(answer["error"]["data"].as_str().unwrap().contains("session/new"), "{answer}");
    let relative = agent.send("session/new", json!({"cwd": "relative/dir", "mcpServers": []}));
    assert_eq!(agent.answer_to(relative).0["error"]["code"], -32602);
    let missing = agent.send("session/load", json!({"sessionId": "never", "cwd": root, "mcpServers": []}));
    assert!(agent.answer_to(missing).0["error"]["data"].as_str().unwrap().contains("never"));
    let session = agent.new_session(&root, json!([]));
    let empty = agent.send("session/prompt", json!({"sessionId": session, "prompt": []}));
    assert_eq!(agent.answer_to(empty).0["error"]["code"], -32602);
    assert!(agent.finish().success(), "the client closing its end ends the agent cleanly");
}

#[test]
fn a_client_that_goes_away_mid_turn_leaves_nothing_running() {
    let (_dir, root, store) = workspace();
    let url = scripted_model(vec![tool_call("c1", "bash", json!({"command": "echo $$ > job.pid; exec sleep 300"}))]);
    let (mut agent, session) = Agent::with_session(&store, &url, &root, &[]);
    agent.prompt(&session, "Wait");
    let request = permission_request(&agent.until(|m| m["method"] == "session/request_permission")).clone();
    agent.reply(&request["id"], json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}));
    let pid = common::pid_written(&root.join("job.pid"));
    let status = agent.finish();
    assert!(status.success(), "{status}");
    common::assert_ends(pid);
}

#[test]
fn slash_commands_run_their_tool() {
    let (_dir, store) = common::indexed();
    let root = store.parent().unwrap().canonicalize().unwrap();
    let url = scripted_model(vec![]);
    let (mut agent, session) = Agent::with_session(&store, &url, &root, &[]);
    let turn = agent.prompt(&session, "/search backpressure");
    let (done, seen) = agent.answer_to(turn);
    assert_eq!(done["result"]["stopReason"], "end_turn");
    assert_eq!(updates(&seen, "tool_call")[0]["kind"], "search");
    let text: String =
        updates(&seen, "agent_message_chunk").iter().map(|u| u["content"]["text"].as_str().unwrap()).collect();
    assert!(text.to_lowercase().contains("backpressure"), "{text}");
}

#[test]
fn the_plan_and_a_sub_agents_steps_are_shown() {
    let (_dir, root, store) = workspace();
    let url = scripted_model(vec![
        tool_call("c1", "plan", json!({"action": "add", "title": "Read a.txt"})),
        tool_call("c2", "task", json!({"type": "explore", "prompt": "What does a.txt say?"})),
        // The sub-agent's own two steps.
        tool_call("s1", "grep", json!({"pattern": "hello"})),
        answer("a.txt says hello world."),
        answer("The sub-agent found hello world."),
    ]);
    let (mut agent, session) = Agent::with_session(&store, &url, &root, &[]);
    let turn = agent.prompt(&session, "Plan, then delegate");
    // Adding to the plan changes it for good: asked first.
    let mut seen = agent.until(|m| m["method"] == "session/request_permission");
    let request = permission_request(&seen).clone();
    assert_eq!(request["params"]["toolCall"]["title"], "plan: Read a.txt");
    agent.reply(&request["id"], json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}));
    let (done, after) = agent.answer_to(turn);
    seen.extend(after);
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let plan = updates(&seen, "plan");
    assert_eq!(plan[0]["entries"][0]["content"], "Read a.txt", "{plan:?}");
    assert_eq!(plan[0]["entries"][0]["status"], "pending");
    let task = updates(&seen, "tool_call").into_iter().find(|c| c["toolCallId"] == "c2").unwrap();
    assert_eq!(task["kind"], "think");
    let progress: Vec<String> = updates(&seen, "tool_call_update")
        .iter()
        .filter(|u| u["toolCallId"] == "c2" && u["status"].is_null())
        .map(|u| u["content"][0]["content"]["text"].as_str().unwrap().to_owned())
        .collect();
    let last = progress.last().unwrap();
    assert!(last.contains("explore task-1: started"), "{progress:?}");
    assert!(last.contains("explore task-1: grep {\"pattern\":\"hello\"}"), "{progress:?}");
    assert!(last.contains("explore task-1: done after 2 steps"), "{progress:?}");
}

#[test]
fn a_sub_agents_write_is_asked_for_as_a_call_of_its_own() {
    let (_dir, root, store) = workspace();
    let url = scripted_model(vec![
        tool_call("c1", "task", json!({"type": "default", "prompt": "Write b.txt"})),
        tool_call("s1", "write", json!({"path": "b.txt", "content": "x\n"})),
        answer("Written."),
        answer("The sub-agent wrote b.txt."),
    ]);
    let (mut agent, session) = Agent::with_session(&store, &url, &root, &[]);
    let turn = agent.prompt(&session, "Delegate a write");
    let seen = agent.until(|m| m["method"] == "session/request_permission");
    let request = permission_request(&seen).clone();
    let call = &request["params"]["toolCall"];
    assert_eq!(call["toolCallId"], "c1.1", "under the task's call: {request}");
    assert_eq!(call["title"], format!("Write {}", root.join("b.txt").display()));
    assert_eq!(call["content"][0]["newText"], "x\n");
    let announced = updates(&seen, "tool_call");
    assert!(announced.iter().any(|c| c["toolCallId"] == "c1.1"), "shown before it is asked: {announced:?}");
    agent.reply(&request["id"], json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}));
    let (done, after) = agent.answer_to(turn);
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "x\n");
    let finished = updates(&after, "tool_call_update");
    assert!(finished.iter().any(|u| u["toolCallId"] == "c1.1" && u["status"] == "completed"), "{finished:?}");
}

#[test]
fn the_clients_files_are_read_and_written_through_it() {
    let (_dir, root, store) = workspace();
    let edit = json!({"path": "a.txt", "old_string": "unsaved", "new_string": "saved"});
    let url = scripted_model(vec![tool_call("c1", "edit", edit), answer("Done.")]);
    let mut agent = Agent::start(&store, &url, &[]);
    agent.initialize(json!({"fs": {"readTextFile": true, "writeTextFile": true}}));
    let session = agent.new_session(&root, json!([]));
    let turn = agent.prompt(&session, "Save it");
    let path = root.join("a.txt");
    // The editor's buffer holds text the disk does not.
    let read = agent.until(|m| m["method"] == "fs/read_text_file").pop().unwrap();
    assert_eq!(read["params"]["path"], json!(path));
    agent.reply(&read["id"], json!({"content": "unsaved buffer\n"}));
    let request = permission_request(&agent.until(|m| m["method"] == "session/request_permission")).clone();
    assert_eq!(request["params"]["toolCall"]["content"][0]["oldText"], "unsaved buffer\n");
    agent.reply(&request["id"], json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}}));
    let read = agent.until(|m| m["method"] == "fs/read_text_file").pop().unwrap();
    agent.reply(&read["id"], json!({"content": "unsaved buffer\n"}));
    let write = agent.until(|m| m["method"] == "fs/write_text_file").pop().unwrap();
    assert_eq!(write["params"]["content"], "saved buffer\n");
    agent.reply(&write["id"], json!(null));
    assert_eq!(agent.answer_to(turn).0["result"]["stopReason"], "end_turn");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello world\n", "the editor wrote, not UCP");
}

#[test]
#[ignore = "needs UCP_MCP_SERVERS: scripts/test installs the MCP servers and runs this"]
fn the_clients_mcp_servers_join_the_session() {
    let modules =
        PathBuf::from(std::env::var_os("UCP_MCP_SERVERS").expect("UCP_MCP_SERVERS is not set (scripts/test sets it)"));
    let script = modules.join("@modelcontextprotocol/server-everything/dist/index.js");
    let (_dir, root, store) = workspace();
    let url = scripted_model(vec![
        tool_call("c1", "mcp__everything__echo", json!({"message": "from the editor's server"})),
        answer("It echoed."),
    ]);
    let mut agent = Agent::start(&store, &url, &[]);
    agent.initialize(json!({}));
    let servers = json!([
        {"name": "everything", "command": "node", "args": [script], "env": []},
        {"name": "broken", "command": "/nonexistent/server", "args": [], "env": []},
        {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []}
    ]);
    let session = agent.new_session(&root, servers);
    let notes = agent.until(|m| {
        m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            && m["params"]["update"]["content"]["text"].as_str().is_some_and(|t| t.contains("broken"))
    });
    let said: String =
        updates(&notes, "agent_message_chunk").iter().map(|u| u["content"]["text"].as_str().unwrap()).collect();
    assert!(said.contains("broken"), "a server that cannot start is said: {said}");
    assert!(said.contains("not SSE"), "{said}");
    let turn = agent.prompt(&session, "Echo something");
    let (done, seen) = agent.answer_to(turn);
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let result = updates(&seen, "tool_call_update");
    assert!(result.iter().any(|u| u["content"].to_string().contains("from the editor's server")), "{result:?}");
}

/// The real ACP clients `scripts/test` installed.
fn acp_clients() -> PathBuf {
    PathBuf::from(std::env::var_os("UCP_ACP_CLIENTS").expect("UCP_ACP_CLIENTS is not set (scripts/test sets it)"))
}

#[test]
#[ignore = "needs UCP_ACP_CLIENTS: scripts/test installs the official TypeScript SDK and acpx, and runs this"]
fn the_official_typescript_client_drives_a_turn() {
    let (_dir, root, store) = workspace();
    let edit = json!({"path": "a.txt", "old_string": "hello", "new_string": "goodbye"});
    let url = scripted_model(vec![
        tool_call("c1", "edit", edit),
        tool_call("c2", "bash", json!({"command": "cat a.txt"})),
        answer("Done."),
        json!({"slow": 12_000}),
    ]);
    let clients = acp_clients();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/acp-client.mjs");
    let out = Command::new(clients.join("node"))
        .arg(script)
        .env("UCP_ACP_CLIENTS", &clients)
        .env("UCP_BIN", env!("CARGO_BIN_EXE_ucp"))
        .env("UCP_STORE", &store)
        .env("UCP_MODEL_URL", &url)
        .env("UCP_CWD", &root)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    println!("{report}");
    assert_eq!(report["failed"], json!([]), "{report}");
    assert!(report["passed"].as_array().unwrap().len() >= 8, "{report}");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "goodbye world\n");
}

#[test]
#[ignore = "needs UCP_ACP_CLIENTS: scripts/test installs the official TypeScript SDK and acpx, and runs this"]
fn acpx_runs_a_turn_with_approvals() {
    let (_dir, root, store) = workspace();
    let edit = json!({"path": "a.txt", "old_string": "hello", "new_string": "goodbye"});
    let url = scripted_model(vec![tool_call("c1", "edit", edit), answer("Edited by acpx.")]);
    let clients = acp_clients();
    let agent = format!("{} --store {} acp --base-url {url} --llm m", env!("CARGO_BIN_EXE_ucp"), store.display());
    let out = Command::new(clients.join("node"))
        .arg(clients.join("node_modules/acpx/dist/cli.js"))
        .args(["--agent", &agent, "--approve-all", "--format", "json", "--cwd"])
        .arg(&root)
        .args(["--timeout", "60", "exec", "Say goodbye in a.txt"])
        .env("HOME", store.parent().unwrap())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("Edited by acpx."), "{stdout}");
    assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "goodbye world\n");
}

#[test]
#[ignore = "needs UCP_TEST_LLM_PYTHON and UCP_TEST_LLM_MODEL: scripts/test installs the local model and runs this"]
fn a_turn_with_the_real_local_model() {
    let server = local_model();
    let (_dir, root, store) = workspace();
    let args = ["--tools", "read,grep", "--max-steps", "3", "--budget", "2500"];
    let (mut agent, session) = Agent::with_session(&store, &server.base_url(), &root, &args);
    let turn = agent.prompt(&session, "What does the file a.txt say?");
    let (done, seen) = agent.answer_to(turn);
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    let calls = updates(&seen, "tool_call");
    assert!(!calls.is_empty(), "the first step calls a tool: {seen:?}");
    assert!(calls.iter().all(|c| ["read", "search"].contains(&c["kind"].as_str().unwrap())), "{calls:?}");
    assert!(!updates(&seen, "agent_message_chunk").is_empty());
}
