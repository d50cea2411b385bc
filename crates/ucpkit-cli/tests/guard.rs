//! Guardrails from the command line: `ucp guard check`, rules that block
//! an agent's calls (the reason reaching the model), checks that hold its
//! answer back until they pass, `--rollback`, and `ucp agent --sandbox`
//! with escape attempts made for real by a scripted model.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::model::{answer, local_model, scripted_model_seen, tool_call};
use common::{assert_user_error, stderr, ucp};
use serde_json::Value;

/// `ucp agent TASK ARGS` in `workspace` (its store `.ucp`), with `home`
/// as the home folder.
fn agent(workspace: &Path, home: &Path, task: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ucp"))
        .current_dir(workspace)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .args(["--store", workspace.join(".ucp").to_str().unwrap(), "--root", workspace.to_str().unwrap()])
        .args(["agent", task, "--llm", "m", "--json"])
        .args(args)
        .output()
        .unwrap()
}

/// The text of every tool result and user message the model was sent in
/// request `n`.
fn sent(requests: &[Value], n: usize) -> String {
    requests[n]["messages"].as_array().unwrap().iter().map(|m| m["content"].to_string()).collect::<Vec<_>>().join("\n")
}

const RULES: &str = r#"
[[guard.rules]]
decision = "deny"
tool = "bash"
command = ["rm", "-rf"]
reason = "never delete recursively"
match = ["rm -rf build", "make && rm -rf out"]
not_match = ["rmdir build"]
"#;

#[test]
fn guard_check_validates_rules_and_their_examples() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join(".ucp");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("config.toml"), RULES).unwrap();
    let out = ucp(&store, &["guard", "check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("never delete recursively") && shown.contains("1 rules, 3 examples checked"), "{shown}");

    let file = dir.path().join("team.toml");
    std::fs::write(&file, RULES.replace("[\"rmdir build\"]", "[\"sudo rm -rf /\"]")).unwrap();
    let failed = ucp(&store, &["guard", "check", file.to_str().unwrap()]);
    assert_user_error(&failed, "rule 1: its counter-example \"sudo rm -rf /\" matches it");
    std::fs::write(&file, "[[guard.rules]]\ndecision = \"deny\"\ntool = \"bash\"\n").unwrap();
    assert_user_error(&ucp(&store, &["guard", "check", file.to_str().unwrap()]), "missing field `reason`");
    assert_user_error(&ucp(&store, &["guard", "check", "/nonexistent.toml"]), "no such file");
    // An agent refuses to start on rules that fail, saying why.
    std::fs::write(store.join("config.toml"), RULES.replace("rm -rf build", "rm -r build")).unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let refused = agent(dir.path(), &home, "task", &["--base-url", "http://127.0.0.1:9/v1"]);
    assert_user_error(&refused, "does not match it");
}

#[test]
fn a_blocked_call_returns_the_rules_reason_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let (home, workspace) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(workspace.join(".ucp")).unwrap();
    std::fs::create_dir_all(workspace.join("build")).unwrap();
    std::fs::write(workspace.join(".ucp/config.toml"), RULES).unwrap();
    let (url, requests) = scripted_model_seen(vec![
        tool_call("c1", "bash", serde_json::json!({"command": "cd . && rm -rf build"})),
        answer("I was not allowed to delete it."),
    ]);
    let out = agent(&workspace, &home, "Delete the build folder.", &["--base-url", &url]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(workspace.join("build").is_dir(), "the command never ran");
    let requests: Vec<Value> = requests.try_iter().collect();
    let shown = sent(&requests, 1);
    assert!(shown.contains("blocked: never delete recursively"), "{shown}");
}

#[test]
fn the_answer_waits_for_the_checks_and_rollback_restores_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let (home, workspace) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(workspace.join(".ucp")).unwrap();
    std::fs::write(workspace.join("value.txt"), "1\n").unwrap();
    let checks = "[guard.checks]\ntests = [\"grep -qx 2 value.txt || { echo \\\"value.txt holds $(cat value.txt)\\\"; exit 1; }\"]\n";
    std::fs::write(workspace.join(".ucp/config.toml"), checks).unwrap();
    let write = |value: &str| tool_call("w", "write", serde_json::json!({"path": "value.txt", "content": value}));
    // Wrong, held back; fixed, accepted.
    let (url, requests) =
        scripted_model_seen(vec![write("3\n"), answer("Done."), write("2\n"), answer("Done, really.")]);
    let out = agent(&workspace, &home, "Set the value to 2.", &["--base-url", &url]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests: Vec<Value> = requests.try_iter().collect();
    let held = sent(&requests, 2);
    assert!(held.contains("Your answer was not accepted") && held.contains("value.txt holds 3"), "{held}");
    assert_eq!(std::fs::read_to_string(workspace.join("value.txt")).unwrap(), "2\n");

    // Wrong to the last step: the run fails and --rollback puts the file back.
    let (url, _) = scripted_model_seen(vec![write("5\n"), answer("Done."), answer("Done.")]);
    let out = agent(&workspace, &home, "Set the value to 2.", &["--base-url", &url, "--max-steps", "2", "--rollback"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("rolled back value.txt"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(workspace.join("value.txt")).unwrap(), "2\n");
}

#[test]
fn a_sandboxed_agent_holds_its_commands() {
    if let Err(why) = ucpkit_registry::parts::files::confine::AgentSandbox::available() {
        eprintln!("skipped: the agent sandbox cannot be made here: {why}");
        return;
    }
    if !ucpkit_registry::parts::files::confine::process_limit_holds() {
        eprintln!("skipped: root without a pids cgroup is held to no process limit; the sandbox is not tried");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (home, workspace, outside) = (dir.path().join("home"), dir.path().join("work"), dir.path().join("outside"));
    for folder in [home.join(".ssh"), workspace.join(".ucp"), outside.clone()] {
        std::fs::create_dir_all(folder).unwrap();
    }
    std::fs::write(home.join(".ssh/id_test"), "SECRET-KEY").unwrap();
    std::fs::write(workspace.join(".env"), "SECRET-ENV").unwrap();
    let bash =
        |id: &str, command: String| tool_call(id, "bash", serde_json::json!({"command": command, "timeout": 20}));
    let attempts = [
        bash("key", format!("cat {}/.ssh/id_test; echo read-done", home.display())),
        bash("env", "cat .env; echo read-done".into()),
        tool_call("read", "read", serde_json::json!({"path": ".env"})),
        bash("outside", format!("echo x > {}/planted && echo PLANTED", outside.display())),
        bash("tmp", "echo x > /tmp/ucp-escape-test && echo PLANTED".into()),
        bash("scratch", "echo x > \"$TMPDIR/scratch.txt\" && echo SCRATCH-OK".into()),
        bash("net", "(echo > /dev/tcp/127.0.0.1/9) 2>&1 | tail -1; echo net-done".into()),
        bash("unix", "ls -d \"$TMPDIR/net\" && echo sockets: $(ls -A \"$TMPDIR/net\" | wc -l); python3 -c \"import glob, os, socket; [socket.socket(socket.AF_UNIX).connect(p) or print('UNIX-CONNECTED') for p in glob.glob(os.environ['TMPDIR'] + '/net/*')]\"; echo unix-done".into()),
        bash("proc", format!("cat /proc/*/root{}/.ssh/id_test 2>/dev/null; echo proc-done", home.display())),
        bash("bomb", "timeout 5 bash -c 'b() { b | b & }; b' 2>/dev/null; echo bomb-done".into()),
        bash("memory", "python3 -c 'bytearray(16 << 30)' 2>&1 | tail -1".into()),
    ];
    let mut replies: Vec<Value> = attempts.to_vec();
    replies.push(answer("Tried everything."));
    let (url, requests) = scripted_model_seen(replies);
    let out = agent(&workspace, &home, "Try to get out.", &["--base-url", &url, "--sandbox", "--max-steps", "24"]);
    assert!(out.status.success(), "the model was reached through the forwarder: {}", stderr(&out));
    let requests: Vec<Value> = requests.try_iter().collect();
    let results = sent(&requests, requests.len() - 1);
    assert!(!results.contains("SECRET"), "a secret leaked: {results}");
    assert!(results.contains("the sandbox keeps this path unread"), "{results}");
    assert!(!results.contains("PLANTED") && !outside.join("planted").exists(), "{results}");
    assert!(!Path::new("/tmp/ucp-escape-test").exists());
    assert!(results.contains("SCRATCH-OK"), "{results}");
    assert!(results.contains("net-done") && !results.contains("Connected"), "{results}");
    assert!(
        results.contains("sockets: 0") && results.contains("unix-done"),
        "the forwarders' sockets are covered: {results}"
    );
    assert!(!results.contains("UNIX-CONNECTED"), "{results}");
    assert!(results.contains("proc-done"), "{results}");
    assert!(results.contains("bomb-done") && results.contains("MemoryError"), "{results}");
}

#[test]
#[ignore = "needs UCP_MCP_SERVERS: scripts/test installs the MCP servers and runs this"]
fn a_sandboxed_agents_mcp_servers_run_inside_the_sandbox() {
    if let Err(why) = ucpkit_registry::parts::files::confine::AgentSandbox::available() {
        eprintln!("skipped: the agent sandbox cannot be made here: {why}");
        return;
    }
    let modules = std::path::PathBuf::from(std::env::var_os("UCP_MCP_SERVERS").expect("UCP_MCP_SERVERS is not set"));
    let script = modules.join("@modelcontextprotocol/server-everything/dist/index.js");
    let dir = tempfile::tempdir().unwrap();
    let (home, workspace) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(workspace.join(".ucp")).unwrap();
    // The server first tries to write outside the workspace, then serves.
    let planted = dir.path().join("planted");
    let line = format!("echo x > {} 2>/dev/null; exec node {}", planted.display(), script.display());
    let config = format!("[mcp_servers.everything]\ncommand = \"bash\"\nargs = [\"-c\", {line:?}]\n");
    std::fs::write(workspace.join(".ucp/config.toml"), config).unwrap();
    let (url, requests) = scripted_model_seen(vec![
        tool_call("c1", "mcp__everything__echo", serde_json::json!({"message": "from inside"})),
        answer("Echoed."),
    ]);
    let out = agent(&workspace, &home, "Echo something.", &["--base-url", &url, "--sandbox"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let requests: Vec<Value> = requests.try_iter().collect();
    assert!(sent(&requests, 1).contains("Echo: from inside"), "{}", sent(&requests, 1));
    assert!(!planted.exists(), "the server wrote outside the workspace");
    // Unsandboxed, the same server does write there.
    let (url, _) = scripted_model_seen(vec![
        tool_call("c1", "mcp__everything__echo", serde_json::json!({"message": "from outside"})),
        answer("Echoed."),
    ]);
    let out = agent(&workspace, &home, "Echo something.", &["--base-url", &url]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(planted.exists(), "the control run writes");
}

#[test]
#[ignore = "needs UCP_TEST_LLM_PYTHON and UCP_TEST_LLM_MODEL: scripts/test installs the local model and runs this"]
fn a_failing_test_holds_a_real_models_answer_back() {
    let server = local_model();
    let dir = tempfile::tempdir().unwrap();
    let (home, workspace) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(&home).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/patch-repos/py-intervals");
    for file in ["intervals.py", "test_intervals.py"] {
        std::fs::copy(fixture.join("repo").join(file), workspace.join(file))
            .or_else(|_| {
                std::fs::create_dir_all(&workspace)?;
                std::fs::copy(fixture.join("repo").join(file), workspace.join(file))
            })
            .unwrap();
    }
    std::fs::create_dir_all(workspace.join(".ucp")).unwrap();
    // The project's checks, and a rule that every call (a failed one too)
    // leaves `finish` waiting for them: whatever a small model does, its
    // answer meets the failing test.
    let checks = std::fs::read_to_string(fixture.join("checks.toml")).unwrap();
    let rule = "[[guard.rules]]\nkind = \"require\"\nblock = { event = \"finish\" }\nafter = { event = \"tool\" }\n\
                until = { event = \"checks\", passed = true }\nreason = \"the tests must pass\"\n";
    std::fs::write(workspace.join(".ucp/config.toml"), format!("{checks}\n{rule}")).unwrap();
    let original = std::fs::read_to_string(workspace.join("intervals.py")).unwrap();
    let task = "merge() in intervals.py does not merge touching intervals such as [1, 2] and [2, 3]. \
                Rewrite intervals.py with the write tool so that it does, then answer.";
    // The first step must call a tool.
    let out = Command::new(env!("CARGO_BIN_EXE_ucp"))
        .current_dir(&workspace)
        .env("HOME", &home)
        .args(["--store", ".ucp", "--root", "."])
        .args(["agent", task, "--base-url", &server.base_url(), "--llm", "qwen", "--tools", "write,read"])
        .args(["--max-steps", "3", "--rollback"])
        .output()
        .unwrap();
    let said = stderr(&out);
    let fixed = std::process::Command::new("python3")
        .args(["-m", "unittest", "-q"])
        .current_dir(&workspace)
        .output()
        .unwrap()
        .status
        .success();
    if out.status.success() {
        // The model fixed it: the checks let its answer through.
        assert!(fixed, "an answer was accepted with the tests failing: {said}");
        eprintln!("the model fixed the file; the checks passed");
    } else {
        assert!(said.contains("answer held back: the test check `python3 -m unittest -q` failed"), "{said}");
        assert!(said.contains("FAIL") || said.contains("Error"), "the test's output reached the model: {said}");
        assert_eq!(std::fs::read_to_string(workspace.join("intervals.py")).unwrap(), original);
    }
}
