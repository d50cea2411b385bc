//! The coding tools as `ucp` subcommands: flags, `--root`, `--json`, exit codes.

mod common;

#[path = "../../../tests/support/scratch.rs"]
mod scratch;

use std::process::Output;

use common::{stdout_json, ucp_stdin};

/// Runs `ucp --root ROOT ARGS...` (no store is needed).
fn tool(root: &std::path::Path, args: &[&str]) -> Output {
    let mut all = vec!["--root", root.to_str().unwrap()];
    all.extend_from_slice(args);
    ucp_stdin(&root.join(".ucp"), &all, "")
}

fn stdout(output: &Output) -> String {
    assert!(output.status.success(), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/a.rs"), "fn alpha() {}\nfn beta() { alpha() }\n").unwrap();
    std::fs::write(dir.path().join("src/b.py"), "def alpha():\n    pass\n").unwrap();
    dir
}

#[test]
fn grep_and_glob_answer_in_text_and_json() {
    let dir = project();
    assert_eq!(stdout(&tool(dir.path(), &["grep", "alpha"])), "src/a.rs\nsrc/b.py\n");
    let content =
        stdout(&tool(dir.path(), &["grep", "ALPHA", "src", "-i", "--output-mode", "content", "--type", "rust"]));
    assert_eq!(content, "src/a.rs\n1:fn alpha() {}\n2:fn beta() { alpha() }\n");
    let paged = stdout(&tool(dir.path(), &["grep", "alpha", "--head-limit", "1"]));
    assert_eq!(paged, "src/a.rs\n[1 more files: pass offset=1]\n");
    let json = stdout_json(&tool(dir.path(), &["grep", "alpha", "--output-mode", "count", "--json"]));
    assert_eq!(json["entries"][0]["count"], 2);
    assert_eq!(json["page"]["total"], 2);
    assert_eq!(stdout(&tool(dir.path(), &["glob", "**/*.py"])), "src/b.py\n");
}

#[test]
fn read_write_edit_round_trip() {
    let dir = project();
    let written = ucp_stdin(
        &dir.path().join(".ucp"),
        &["--root", dir.path().to_str().unwrap(), "write", "notes/n.md"],
        "one\ntwo\n",
    );
    assert_eq!(stdout(&written), "created notes/n.md (2 lines, 8 bytes)\n");
    let dry = stdout(&tool(dir.path(), &["edit", "notes/n.md", "--old", "two", "--new", "2", "--dry-run"]));
    assert!(dry.contains("-two\n+2\n"), "{dry}");
    assert_eq!(std::fs::read_to_string(dir.path().join("notes/n.md")).unwrap(), "one\ntwo\n");
    stdout(&tool(dir.path(), &["edit", "notes/n.md", "--old", "two", "--new", "2"]));
    assert_eq!(stdout(&tool(dir.path(), &["read", "notes/n.md", "--offset", "2"])), "     2\t2\n");
}

#[test]
fn refusals_exit_1_with_one_line_and_bash_reports_failure() {
    let dir = project();
    let outside = tool(dir.path(), &["read", "../secret"]);
    assert_eq!(outside.status.code(), Some(1));
    let message = String::from_utf8_lossy(&outside.stderr);
    assert!(message.starts_with("error: ../secret is outside the workspace"), "{message}");
    assert_eq!(message.lines().count(), 1);
    let ambiguous = tool(dir.path(), &["edit", "src/a.rs", "--old", "alpha", "--new", "x"]);
    assert!(String::from_utf8_lossy(&ambiguous.stderr).contains("occurs 2 times (lines 1, 2)"));
    let ran = tool(dir.path(), &["bash", "ls src; exit 5"]);
    assert_eq!(ran.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&ran.stdout).starts_with("a.rs\nb.py\n[exit code 5, "));
    assert_eq!(
        stdout(&tool(dir.path(), &["bash", "pwd", "--cwd", "src"])).lines().next().unwrap(),
        dir.path().canonicalize().unwrap().join("src").to_str().unwrap()
    );
}

#[test]
fn ast_search_and_the_bash_sandbox_from_the_command_line() {
    let dir = project();
    let found = stdout(&tool(dir.path(), &["ast-search", "fn $F() { $$$ }", "--lang", "rust"]));
    assert_eq!(found, "src/a.rs\n1: fn alpha() {}\n  $F = alpha\n2: fn beta() { alpha() }\n  $F = beta\n");
    let json = stdout_json(&tool(dir.path(), &["ast-search", "def $F($$$)", "--json"]));
    assert_eq!(json["matches"][0]["path"], "src/b.py");
    // A write outside the root (and outside /tmp) is denied in the sandbox.
    let outside = tempfile::tempdir_in(scratch::outside_tmp()).unwrap();
    let target = outside.path().join("x");
    let command = format!("touch {}", target.display());
    let denied = tool(dir.path(), &["bash", &command, "--sandbox"]);
    assert_eq!(denied.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&denied.stdout).contains("Permission denied"));
    assert!(!target.exists());
    assert!(tool(dir.path(), &["bash", &command]).status.success());
    assert!(target.exists());
}
