//! Running the `ucp` binary from tests.

#![allow(dead_code)] // each test file takes the helpers it needs

pub mod mcp;
pub mod model;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The six-file excerpt of the Node.js docs the tests index.
pub fn excerpt() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/node-excerpt")
}

/// Runs `ucp --store STORE ARGS...`.
pub fn ucp(store: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ucp")).arg("--store").arg(store).args(args).output().unwrap()
}

/// Runs `ucp --store STORE ARGS...` as the node whose caches are in
/// `node` (UCP_CACHE_DIR: a store on a database server).
pub fn ucp_on(node: &Path, store: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ucp"))
        .env("UCP_CACHE_DIR", node)
        .args(["--store", store])
        .args(args)
        .output()
        .unwrap()
}

/// Runs `command` with `input` on stdin.
fn fed(mut command: Command, input: &str) -> Output {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// Runs `ucp --store STORE ARGS...` with `input` on stdin.
pub fn ucp_stdin(store: &Path, args: &[&str], input: &str) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ucp"));
    command.arg("--store").arg(store).args(args);
    fed(command, input)
}

/// `ucp --store URL --doc node run -` with `script` on its input, as the
/// node whose caches are in `node` (a store on a database server).
pub fn ucp_run_on(node: &Path, url: &str, script: &str) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ucp"));
    command.env("UCP_CACHE_DIR", node).args(["--store", url, "--doc", "node", "run", "-"]);
    fed(command, script)
}

/// The JSON a successful command printed.
pub fn stdout_json(output: &Output) -> Value {
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// What a command printed on stderr.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A failed command: exit code 1, one line on stderr, no panic.
pub fn assert_user_error(output: &Output, needle: &str) {
    let stderr = stderr(output);
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "not one line: {stderr}");
    assert!(stderr.contains(needle), "{stderr:?} lacks {needle:?}");
    assert!(!stderr.contains("panicked") && !stderr.contains("internal error"), "{stderr}");
}

/// Checks a command line that does not parse: clap's exit code 2, its
/// whole message naming `needle`, and the subcommand's help to read.
pub fn assert_usage_error(output: &Output, needle: &str) {
    let stderr = stderr(output);
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert!(stderr.contains(needle), "{stderr:?} lacks {needle:?}");
    assert!(stderr.contains("--help'"), "no hint to the help: {stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("internal error"), "{stderr}");
}

/// A store with the excerpt indexed as `node`.
pub fn indexed() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join(".ucp");
    let out = ucp(&store, &["index", excerpt().to_str().unwrap(), "--name", "node"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("indexed node: 6 files"), "{}", stderr(&out));
    (dir, store)
}

/// The process id a command wrote to `file` (`echo $$ > file`), once it
/// has (within a minute).
pub fn pid_written(file: &Path) -> u32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Some(pid) = std::fs::read_to_string(file).ok().and_then(|t| t.trim().parse::<u32>().ok()) {
            return pid;
        }
        assert!(std::time::Instant::now() < deadline, "the command never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Asserts that process `pid` ends within 10 s.
pub fn assert_ends(pid: u32) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while Path::new(&format!("/proc/{pid}")).exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "the command outlived the agent");
}
