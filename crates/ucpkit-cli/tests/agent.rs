//! `ucp agent`, `ucp context --llm-policy` and the MCP agent tools. The
//! tests marked ignored run against a real local model (Qwen2.5-Coder-0.5B
//! on llama.cpp, installed by `scripts/setup-llm`, started per test); a
//! 0.5B model's words vary, so they assert structure: the loop grounds its
//! first step in a tool, calls only allowed tools, keeps its budget, ends
//! with an answer and saves a transcript that a second run takes up. The
//! others need no model.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::mcp::{result_text, HttpServer};
use common::model::{local_model, scripted_model};
use common::{assert_user_error, indexed, stderr, stdout_json, ucp};
use serde_json::{json, Value};

#[test]
#[ignore = "needs UCP_TEST_LLM_PYTHON and UCP_TEST_LLM_MODEL: scripts/test installs the local model and runs this"]
fn the_agent_answers_from_the_docs_with_a_real_local_model() {
    let server = local_model();
    let (_dir, store) = indexed();
    let url = server.base_url();
    let allowed = ["search", "ucl", "context"];
    let budget = 2500;
    let run = |task: &str| {
        let out = ucp(
            &store,
            &["agent", task, "--base-url", &url, "--llm", "qwen", "--tools", &allowed.join(","), "--budget", "2500"]
                .into_iter()
                .chain(["--max-steps", "3", "--session", "research", "--json"])
                .collect::<Vec<_>>(),
        );
        stdout_json(&out)
    };
    let first = run("How does a readable stream handle backpressure?");
    let steps = first["steps"].as_array().unwrap();
    assert!(!steps.is_empty() && steps.len() <= 4, "{first}");
    assert!(!steps[0]["tools"].as_array().unwrap().is_empty(), "the first step calls a tool: {first}");
    for step in steps {
        assert!(step["conversation_tokens"].as_u64().unwrap() <= budget, "{step}");
        assert_eq!(step["usage_reported"], true, "the server reports usage: {step}");
        for tool in step["tools"].as_array().unwrap() {
            let name = tool["tool"].as_str().unwrap();
            assert!(allowed.contains(&name) || tool["is_error"] == true, "{tool}");
        }
    }
    for call in steps.iter().flat_map(|s| s["tools"].as_array().unwrap()) {
        assert!(call["arguments"].is_object(), "arguments parse: {call}");
    }
    assert!(first["answer"].is_string());
    assert_eq!(first["session"], "research");

    let second = run("And what about writable streams?");
    assert!(second["total_steps"].as_u64().unwrap() > steps.len() as u64, "the session was taken up: {second}");
}

#[test]
#[ignore = "needs UCP_TEST_LLM_PYTHON and UCP_TEST_LLM_MODEL: scripts/test installs the local model and runs this"]
fn a_context_built_with_the_llm_policy() {
    let server = local_model();
    let (_dir, store) = indexed();
    let question = "How does a readable stream handle backpressure?";
    let args = ["context", question, "--budget", "800", "--llm-policy", "--base-url", &server.base_url(), "--llm", "q"];
    let out = ucp(&store, &[&args[..], &["--json"]].concat());
    let context = stdout_json(&out);
    assert!(!context["context"]["blocks"].as_array().unwrap().is_empty(), "{context}");
    assert!(context["context"]["tokens"].as_u64().unwrap() <= 800);
    let report = stderr(&out);
    let calls: usize = report
        .split("llm policy: ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no policy report in {report}"));
    assert!(calls >= 1, "{report}");
}

#[test]
#[ignore = "needs UCP_MCP_PYTHON, UCP_TEST_LLM_PYTHON and UCP_TEST_LLM_MODEL: scripts/test sets them and runs this"]
fn task_and_ask_user_through_the_python_sdk() {
    let server = local_model();
    let python = std::env::var_os("UCP_MCP_PYTHON").expect("UCP_MCP_PYTHON is not set (scripts/test sets it)");
    let (_dir, store) = indexed();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_agents.py");
    let out = Command::new(python)
        .arg(script)
        .env("UCP_BIN", env!("CARGO_BIN_EXE_ucp"))
        .env("UCP_STORE", &store)
        .env("UCP_LLM_URL", server.base_url())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
}

#[test]
fn without_a_model_the_agent_says_how_to_name_one() {
    let (dir, store) = indexed();
    let home = dir.path().join("home");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ucp"))
            .env("XDG_CONFIG_HOME", &home)
            .arg("--store")
            .arg(&store)
            .args(["agent", "What are streams?"])
            .args(extra)
            .output()
            .unwrap()
    };
    assert_user_error(&run(&[]), "--base-url");
    let flags = ["--base-url", "http://127.0.0.1:9/v1", "--llm", "m"];
    assert_user_error(&run(&[&flags[..], &["--tools", "search,serach"]].concat()), "no tool \"serach\"");
    assert_user_error(&run(&[&flags[..], &["--session", " "]].concat()), "--session needs a name");
    let context = ucp(&store, &["context", "streams", "--base-url", "http://127.0.0.1:9/v1"]);
    assert_user_error(&context, "need --llm-policy");
    assert_user_error(&run(&["--base-url", "http://127.0.0.1:9/v1", "--llm", "m"]), "could not reach the model API");
    std::fs::write(store.join("config.toml"), "[agent]\nprovider = \"nope\"\n").unwrap();
    assert_user_error(&run(&[]), "no provider named \"nope\"");
    std::fs::write(store.join("config.toml"), "[agent]\nmodle = 1\n").unwrap();
    assert_user_error(&run(&[]), "config.toml");
}

#[test]
fn the_mcp_agent_tools_are_offered_on_request_and_fail_clearly() {
    let (_dir, store) = indexed();
    let plain = HttpServer::start(&store, &[]);
    let session = plain.initialize();
    let listed = plain.post(&session, &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).unwrap();
    let names: Vec<&str> =
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(!names.contains(&"task") && !names.contains(&"ask_user"), "{names:?}");
    drop(plain);

    let agents = HttpServer::start(&store, &["--agents", "--base-url", "http://127.0.0.1:9/v1", "--llm", "m"]);
    let session = agents.initialize();
    let listed = agents.post(&session, &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).unwrap();
    let names: Vec<&str> =
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"task") && names.contains(&"ask_user"), "{names:?}");
    let asked =
        agents.call(&session, "ask_user", json!({"question": "Which?", "options": [{"label": "A"}, {"label": "B"}]}));
    assert_eq!(asked["result"]["isError"], true);
    assert!(result_text(&asked).contains("does not support elicitation"), "{asked}");
    let task = agents.call(&session, "task", json!({"type": "explore", "prompt": "Find streams"}));
    assert_eq!(task["result"]["isError"], true);
    let result: Value = serde_json::from_str(&result_text(&task)).unwrap();
    assert_eq!(result["status"], "failed");
    assert!(result["result"].as_str().unwrap().contains("could not reach"), "{result}");
    let unknown = agents.call(&session, "task", json!({"id": "task-41"}));
    assert!(result_text(&unknown).contains("no task"), "{unknown}");
}

#[test]
fn ctrl_c_stops_the_agent_between_streamed_pieces() {
    use std::io::{Read as _, Write as _};
    let (_dir, store) = indexed();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let Ok((mut stream, _)) = listener.accept() else { return };
        let mut request = [0u8; 65536];
        let _ = stream.read(&mut request);
        let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n");
        // A model that streams a word every 100 ms for a minute.
        for _ in 0..600 {
            let event = r#"data: {"choices":[{"index":0,"delta":{"content":"word "}}]}"#;
            if stream.write_all(format!("{event}\n\n").as_bytes()).is_err() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    });
    let child = Command::new(env!("CARGO_BIN_EXE_ucp"))
        .arg("--store")
        .arg(&store)
        .args(["agent", "What are streams?", "--base-url", &url, "--llm", "m", "--session", "s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let started = std::time::Instant::now();
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "it stopped at the next piece");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted; session s keeps the steps that finished"), "{}", stderr(&out));
}

#[test]
fn the_model_cannot_write_escape_sequences_to_the_terminal() {
    use std::io::Read as _;
    use std::os::fd::FromRawFd as _;
    let (_dir, store) = indexed();
    let text = "\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[2JClipboard and screen are safe.\n";
    // The first step owes a tool call: a text answer is asked for again.
    let url = scripted_model(vec![json!({"role": "assistant", "content": text}); 3]);
    let (mut main, mut secondary) = (0, 0);
    // SAFETY: openpty writes two descriptors into the integers given.
    let opened =
        unsafe { libc::openpty(&mut main, &mut secondary, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
    assert_eq!(opened, 0, "a pseudo-terminal");
    // SAFETY: both descriptors were just opened and are owned here alone.
    let (mut terminal, secondary) =
        unsafe { (std::fs::File::from_raw_fd(main), std::fs::File::from_raw_fd(secondary)) };
    let mut child = Command::new(env!("CARGO_BIN_EXE_ucp"))
        .arg("--store")
        .arg(&store)
        .args(["agent", "Say hello.", "--base-url", &url, "--llm", "m", "--tools", "search"])
        .stdin(std::process::Stdio::null())
        .stdout(secondary)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    let mut shown = Vec::new();
    let mut buffer = [0u8; 4096];
    // The terminal reads what was written until the program's side closed.
    while let Ok(n) = terminal.read(&mut buffer) {
        if n == 0 {
            break;
        }
        shown.extend_from_slice(&buffer[..n]);
    }
    let shown = String::from_utf8_lossy(&shown);
    assert!(shown.contains("Clipboard and screen are safe."), "{shown:?}");
    assert!(!shown.contains('\u{1b}') && !shown.contains('\u{7}'), "{shown:?}");
    assert!(shown.contains("\\x1b]52;c;cHduZWQ=\\x07"), "{shown:?}");
}

#[test]
fn a_second_ctrl_c_ends_the_command_the_agent_runs() {
    let (dir, store) = indexed();
    let command = "echo $$ > job.pid; exec sleep 300";
    let call = json!({"id": "c1", "type": "function", "function": {"name": "bash", "arguments": json!({"command": command}).to_string()}});
    let url = scripted_model(vec![json!({"role": "assistant", "content": null, "tool_calls": [call]})]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_ucp"))
        .arg("--store")
        .arg(&store)
        .args(["--root", dir.path().to_str().unwrap()])
        .args(["agent", "Wait a while.", "--base-url", &url, "--llm", "m", "--tools", "bash"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = common::pid_written(&dir.path().join("job.pid"));
    for _ in 0..2 {
        assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status}");
    common::assert_ends(pid);
}

#[test]
#[ignore = "needs UCP_MCP_SERVERS: scripts/test installs the MCP servers and runs this"]
fn the_agent_calls_a_configured_mcp_servers_tool() {
    let modules =
        PathBuf::from(std::env::var_os("UCP_MCP_SERVERS").expect("UCP_MCP_SERVERS is not set (scripts/test sets it)"));
    let script = modules.join("@modelcontextprotocol/server-everything/dist/index.js");
    let (_dir, store) = indexed();
    let config = format!("[mcp_servers.everything]\ncommand = \"node\"\nargs = [{:?}]\n", script.to_str().unwrap());
    std::fs::write(store.join("config.toml"), config).unwrap();
    let call = json!({"id": "c1", "type": "function",
        "function": {"name": "mcp__everything__echo", "arguments": "{\"message\": \"from the agent\"}"}});
    let url = scripted_model(vec![
        json!({"role": "assistant", "content": null, "tool_calls": [call]}),
        json!({"role": "assistant", "content": "The server echoed it."}),
    ]);
    let out = ucp(&store, &["agent", "Echo something.", "--base-url", &url, "--llm", "m", "--json"]);
    let report = stdout_json(&out);
    let called = &report["steps"][0]["tools"][0];
    assert_eq!(called["tool"], "mcp__everything__echo", "{report:#}");
    assert_eq!(called["is_error"], false, "an offered tool, answered by the server: {report:#}");
    assert_eq!(report["answer"], "The server echoed it.");
}
