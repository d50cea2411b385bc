//! End-to-end tests of the `ucp` binary: every command, global options in
//! either position, exit codes, one-line errors, and a kill mid-index.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{assert_usage_error, assert_user_error, excerpt, indexed, stderr, stdout_json, ucp, ucp_stdin};

#[test]
fn index_then_inspect_every_command() {
    let (_dir, store) = indexed();
    let docs = stdout_json(&ucp(&store, &["docs", "--json"]));
    assert_eq!(docs[0]["name"], "node");
    let blocks = docs[0]["blocks"].as_u64().unwrap();

    let stats = stdout_json(&ucp(&store, &["stats", "--json"]));
    assert_eq!(stats["blocks"].as_u64(), Some(blocks));
    assert_eq!(stats["blocks_by_role"]["file"], 6);
    assert_eq!(stats["tokenizer"], "o200k_base");
    assert_eq!(stats["validation_issues"], 0);

    let tree = stdout_json(&ucp(&store, &["tree", "--depth", "1", "--json"]));
    let files: Vec<&str> = tree["children"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap()).collect();
    assert_eq!(files, ["NOTICE", "corepack.md", "debugger.md", "documentation.md", "punycode.md", "querystring.md"]);

    let exported = stdout_json(&ucp(&store, &["export", "--format", "json"]));
    let all = exported["blocks"].as_array().unwrap();
    assert_eq!(all.len() as u64, blocks);
    assert!(all.iter().all(|b| b["id"].as_str().unwrap().starts_with("blk_")));

    let heading = all.iter().find(|b| b["content"]["text"] == "Stepping").unwrap();
    let id = heading["id"].as_str().unwrap();
    let view = stdout_json(&ucp(&store, &["view", id, "--mode", "full", "--json"]));
    assert_eq!(view["content"], "### Stepping");
    assert_eq!(view["source"]["file"], "debugger.md");
    let by_label = stdout_json(&ucp(&store, &["view", "@debugger.md", "--mode", "metadata", "--json"]));
    assert_eq!(by_label["role"], "file");
    let ids = stdout_json(&ucp(&store, &["view", id, "--mode", "ids", "--json"]));
    assert_eq!(ids, serde_json::json!({"id": id, "role": "heading3"}));

    let text = ucp(&store, &["export"]);
    let markdown = String::from_utf8(text.stdout).unwrap();
    assert!(markdown.contains("<!-- ucp:file debugger.md -->"));
    assert!(markdown.contains("### Stepping"));
}

#[test]
fn global_options_go_before_or_after_the_subcommand() {
    let (dir, store) = indexed();
    let before = Command::new(env!("CARGO_BIN_EXE_ucp"))
        .args(["--json", "--doc", "node", "--store"])
        .arg(&store)
        .arg("stats")
        .output()
        .unwrap();
    let after = Command::new(env!("CARGO_BIN_EXE_ucp"))
        .arg("stats")
        .args(["--doc", "node", "--json", "--store"])
        .arg(&store)
        .output()
        .unwrap();
    assert_eq!(stdout_json(&before), stdout_json(&after));
    let via_env = Command::new(env!("CARGO_BIN_EXE_ucp"))
        .args(["docs", "--json"])
        .env("UCP_STORE", &store)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(stdout_json(&via_env)[0]["name"], "node");
}

#[test]
fn several_documents_need_doc() {
    let (_dir, store) = indexed();
    let file = excerpt().join("punycode.md");
    assert!(ucp(&store, &["index", file.to_str().unwrap()]).status.success());
    let docs = stdout_json(&ucp(&store, &["docs", "--json"]));
    assert_eq!(docs.as_array().unwrap().len(), 2);
    assert_user_error(&ucp(&store, &["stats"]), "--doc NAME");
    assert_user_error(&ucp(&store, &["stats", "--doc", "nope"]), "no document named \"nope\"");
    let one = stdout_json(&ucp(&store, &["stats", "--doc", "punycode", "--json"]));
    assert_eq!(one["title"], "Punycode");
}

#[test]
fn bad_input_gets_one_line_and_changes_nothing() {
    let (dir, store) = indexed();
    let before = ucp(&store, &["export", "--format", "json"]).stdout;

    let bad = dir.path().join("node.md");
    std::fs::write(&bad, b"# Title\n\xff\xfe\n").unwrap();
    assert_user_error(&ucp(&store, &["index", bad.to_str().unwrap()]), "not valid UTF-8 (first bad byte at offset 8)");
    let big = dir.path().join("big.md");
    std::fs::write(&big, "word ".repeat(100)).unwrap();
    let too_big = ucp(&store, &["index", big.to_str().unwrap(), "--max-file-size", "100"]);
    assert_user_error(&too_big, "500 bytes is over the 100-byte limit (--max-file-size)");
    assert!(!String::from_utf8_lossy(&too_big.stderr).contains("skipped"));
    assert_user_error(&ucp(&store, &["index", "/definitely/not/here"]), "/definitely/not/here");
    assert_user_error(&ucp(&store, &["view", "blk_123"]), "invalid block id");
    assert_user_error(&ucp(&store, &["view", "blk_ffffffffffffffffffffffff"]), "not found");
    assert_user_error(&ucp(&store, &["view", "@nolabel"]), "no block is labelled");
    assert_usage_error(&ucp(&store, &["tree", "--depth", "minus"]), "invalid value");
    assert_usage_error(&ucp(&store, &["frobnicate"]), "unrecognized subcommand");
    assert_user_error(&ucp(&dir.path().join("elsewhere"), &["docs"]), "no store at");

    assert_eq!(ucp(&store, &["export", "--format", "json"]).stdout, before);
    let help = Command::new(env!("CARGO_BIN_EXE_ucp")).args(["index", "--help"]).output().unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("--max-file-size"));
}

/// Writes a markdown corpus big enough that saving it takes a while.
fn big_corpus(dir: &Path) -> PathBuf {
    let root = dir.join("big");
    std::fs::create_dir_all(&root).unwrap();
    for file in 0..40 {
        let mut text = String::new();
        for section in 0..400 {
            text.push_str(&format!(
                "## Section {file}.{section}\n\nParagraph {section} of file {file} with words.\n\n"
            ));
            text.push_str(&format!("- item {section}\n- another item\n\n"));
        }
        std::fs::write(root.join(format!("f{file:02}.md")), text).unwrap();
    }
    root
}

#[test]
fn killing_index_mid_write_leaves_the_store_as_it_was() {
    let (dir, store) = indexed();
    let before = ucp(&store, &["export", "--format", "json"]).stdout;
    let big = big_corpus(dir.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_ucp"))
        .arg("--store")
        .arg(&store)
        .args(["index", big.to_str().unwrap(), "--name", "node"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // The CLI announces the write phase on stderr when it is not a terminal.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
    assert!(line.starts_with("ucp: writing node"), "{line}");
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the index finished before it was killed");

    let after = ucp(&store, &["export", "--format", "json"]).stdout;
    assert_eq!(after, before, "a killed index changed the store");
    let stats = stdout_json(&ucp(&store, &["stats", "--json"]));
    assert_eq!(stats["validation_issues"], 0);
}

#[test]
fn killing_an_index_of_changed_files_mid_write_leaves_the_store_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join(".ucp");
    let big = big_corpus(dir.path());
    assert!(ucp(&store, &["index", big.to_str().unwrap()]).status.success());
    let before = ucp(&store, &["export", "--format", "json"]).stdout;
    for file in 0..20 {
        let path = big.join(format!("f{file:02}.md"));
        let text = std::fs::read_to_string(&path).unwrap().replace("with words", "with okapi words");
        std::fs::write(path, text).unwrap();
    }
    let index = || {
        Command::new(env!("CARGO_BIN_EXE_ucp"))
            .arg("--store")
            .arg(&store)
            .args(["index", big.to_str().unwrap()])
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut child = index();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
    assert!(line.starts_with("ucp: writing big"), "{line}");
    child.kill().unwrap();
    assert!(!child.wait().unwrap().success(), "the index finished before it was killed");
    assert_eq!(ucp(&store, &["export", "--format", "json"]).stdout, before, "a killed index changed the store");

    // Run to the end, it writes the changed files; once more, nothing.
    assert!(index().wait().unwrap().success());
    let hits = stdout_json(&ucp(&store, &["search", "okapi", "--json"]));
    assert_eq!(hits["results"].as_array().unwrap().len(), 10, "the changed files are searchable");
    assert_eq!(stdout_json(&ucp(&store, &["stats", "--json"]))["validation_issues"], 0);
    let again = ucp(&store, &["index", big.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("unchanged"), "{}", String::from_utf8_lossy(&again.stderr));
}

#[test]
fn argument_errors_say_everything_clap_knows() {
    let (_dir, store) = indexed();
    let out = ucp(&store, &["context"]);
    assert_usage_error(&out, "<QUESTION>");
    assert!(stderr(&out).contains("'ucp context --help'"), "the subcommand's help: {}", stderr(&out));
    let text = stderr(&ucp(&store, &["contxt", "q"]));
    assert!(text.contains("similar") && text.contains("context"), "a did-you-mean: {text}");
    let text = stderr(&ucp(&store, &["view", "x", "--mode", "nope"]));
    assert!(text.contains("possible values") && text.contains("metadata"), "{text}");
    for budget in ["0", "10"] {
        let out = ucp(&store, &["context", "streams", "--budget", budget]);
        assert_eq!(out.status.code(), Some(2), "budget {budget}: {}", stderr(&out));
    }
    let help = ucp(&store, &["index", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("Examples:"));
    let completions = ucp(&store, &["completions", "bash"]);
    assert!(completions.status.success() && String::from_utf8_lossy(&completions.stdout).contains("_ucp"));
}

#[test]
fn a_budget_too_small_for_any_match_says_so() {
    let (_dir, store) = indexed();
    let out = ucp(&store, &["context", "How do streams handle backpressure?", "--budget", "32"]);
    let text = stderr(&out);
    if out.status.success() {
        // Something small enough matched: a context, within the budget.
        assert!(!out.stdout.is_empty(), "{text}");
    } else {
        assert_eq!(out.status.code(), Some(3), "{text}");
        assert!(text.contains("no relevant block fits in 32 tokens"), "{text}");
        assert_eq!(text.trim_end().lines().count(), 1, "{text}");
    }
}

#[test]
fn documents_are_renamed_and_deleted_with_their_index() {
    let (_dir, store) = indexed();
    assert!(ucp(&store, &["rename", "node", "handbook"]).status.success());
    let docs = stdout_json(&ucp(&store, &["docs", "--json"]));
    assert_eq!(docs[0]["name"], "handbook");
    let hits = stdout_json(&ucp(&store, &["--doc", "handbook", "search", "stream", "--json"]));
    assert!(!hits["results"].as_array().unwrap().is_empty(), "the search index follows");
    common::assert_user_error(&ucp(&store, &["rename", "nope", "x"]), "no document named \"nope\"");
    assert!(ucp(&store, &["rm", "handbook"]).status.success());
    assert!(!store.join("search/handbook").exists());
    common::assert_user_error(&ucp(&store, &["rm", "handbook"]), "no document named");
    assert_eq!(stdout_json(&ucp(&store, &["docs", "--json"])), serde_json::json!([]));
}

#[test]
fn indexing_an_edited_document_again_needs_force_and_keeps_a_snapshot() {
    let (dir, store) = indexed();
    let script = dir.path().join("edit.ucl");
    std::fs::write(&script, format!("APPEND {ROOT} text :: \"my note\"\n")).unwrap();
    assert!(ucp(&store, &["run", script.to_str().unwrap()]).status.success());
    let excerpt = common::excerpt();
    let again = ucp(&store, &["index", excerpt.to_str().unwrap(), "--name", "node"]);
    common::assert_user_error(&again, "--force");
    let forced = ucp(&store, &["index", excerpt.to_str().unwrap(), "--name", "node", "--force"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    let list = dir.path().join("list.ucl");
    std::fs::write(&list, "SNAPSHOT LIST\n").unwrap();
    let out = String::from_utf8(ucp(&store, &["run", list.to_str().unwrap()]).stdout).unwrap();
    assert!(out.contains("before-index-"), "{out}");
}

#[test]
fn a_failed_first_index_leaves_no_store_behind() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join(".ucp");
    let out = ucp(&store, &["index", dir.path().join("missing").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!store.exists(), "an empty store was left");
    assert!(ucp(&store, &["export", "--json"]).status.code() == Some(1));
}

const ROOT: &str = "blk_000000000000000000000000";

#[test]
fn killing_an_edit_mid_write_leaves_the_store_before_or_after_it() {
    const ADDED: u64 = 3000;
    let script: String =
        (0..ADDED).map(|n| format!("APPEND {ROOT} text :: \"appended block {n} zanzibarite\"\n")).collect();
    // Each trial kills the run later: early ones die before the write,
    // later ones during it or after; every one must leave a whole state.
    for delay_ms in [30, 80, 150, 250, 400, 700] {
        let (dir, store) = indexed();
        let blocks = |store: &Path| stdout_json(&ucp(store, &["docs", "--json"]))[0]["blocks"].as_u64().unwrap();
        let before = blocks(&store);
        let file = dir.path().join("append.ucl");
        std::fs::write(&file, &script).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_ucp"))
            .arg("--store")
            .arg(&store)
            .args(["run", file.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        child.wait().unwrap();

        let after = blocks(&store);
        assert!(after == before || after == before + ADDED, "{after} blocks after a kill at {delay_ms} ms");
        let stats = stdout_json(&ucp(&store, &["stats", "--json"]));
        assert_eq!(stats["validation_issues"], 0);
        // The search index, caught up when opened, agrees with the store.
        let hits = ucp(&store, &["search", "zanzibarite", "--json"]);
        let found = !stdout_json(&hits)["results"].as_array().unwrap().is_empty();
        assert_eq!(found, after > before, "search after a kill at {delay_ms} ms");
    }
}

#[test]
fn parse_prints_the_tree_or_canonical_ucl_and_reports_every_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join(".ucp");
    let out = ucp_stdin(&store, &["parse"], "expand blk_000000000000000000000000 down depth=2\n");
    let json = stdout_json(&out);
    assert_eq!(json["commands"][0]["command"], "expand");
    assert_eq!(json["commands"][0]["depth"], 2);
    let out = ucp_stdin(&store, &["parse", "-", "--canonical"], "ctx add results\n");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "CTX ADD RESULTS\n");
    let out = ucp_stdin(&store, &["parse"], "GOTO\nEXPAND blk_a sideways\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("--> line 1, column 5") && stderr.contains("--> line 2, column 14"), "{stderr}");
    assert!(stderr.contains("^^^^^^^^") && stderr.contains("2 parse errors"), "{stderr}");
}

#[test]
fn run_saves_only_what_succeeds() {
    let (_dir, store) = indexed();
    let before = ucp(&store, &["export", "--format", "json"]).stdout;
    let failing = format!("APPEND {ROOT} text WITH label=\"n\" :: \"note\"\nDELETE blk_ffffffffffffffffffffffff\n");
    let out = ucp_stdin(&store, &["run", "-"], &failing);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("line 2, column 1: DELETE blk_ffffffffffffffffffffffff failed")
            && stderr.contains("nothing saved"),
        "{stderr}"
    );
    assert_eq!(ucp(&store, &["export", "--format", "json"]).stdout, before, "a failed script changes nothing");

    let ok =
        format!("APPEND {ROOT} text WITH label=\"n\" :: \"note\"\nEDIT @n SET text += \"!\"\nSNAPSHOT CREATE \"s1\"\n");
    let out = ucp_stdin(&store, &["run", "-", "--json"], &ok);
    let report = stdout_json(&out);
    assert_eq!(report["ok"], true);
    assert_eq!(report["steps"].as_array().unwrap().len(), 3);
    let view = ucp(&store, &["view", "@n"]);
    assert!(String::from_utf8_lossy(&view.stdout).contains("note!"));

    let listed = ucp_stdin(&store, &["run", "-"], "SNAPSHOT LIST\n");
    assert!(String::from_utf8_lossy(&listed.stdout).contains("\"s1\""), "snapshots survive a restart");

    let partial = format!("BEGIN TRANSACTION\nAPPEND {ROOT} text WITH label=\"kept\" :: \"kept\"\nCOMMIT\nAPPEND {ROOT} text WITH label=\"lost\" :: \"lost\"\nDELETE blk_ffffffffffffffffffffffff\n");
    let out = ucp_stdin(&store, &["run", "-"], &partial);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("kept the state of the last COMMIT"));
    assert!(ucp(&store, &["view", "@kept"]).status.success());
    assert!(!ucp(&store, &["view", "@lost"]).status.success());
}

#[test]
fn export_and_import_of_the_document_form_is_lossless() {
    let (dir, store) = indexed();
    let form = dir.path().join("node.ucl");
    let out = ucp(&store, &["export", "--format", "ucl", "--out", form.to_str().unwrap()]);
    assert!(out.status.success());
    let out = ucp(&store, &["import-ucl", form.to_str().unwrap(), "--name", "copy"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let original = stdout_json(&ucp(&store, &["--doc", "node", "export", "--format", "json"]));
    let mut copy = stdout_json(&ucp(&store, &["--doc", "copy", "export", "--format", "json"]));
    copy["name"] = original["name"].clone();
    assert_eq!(copy, original);
    let out = ucp_stdin(&store, &["import-ucl", "-"], "BLOCKS\ntext #blk_a :: 5\n");
    assert_user_error(&out, "must be a string");
}

#[test]
fn sessions_persist_between_runs() {
    let (_dir, store) = indexed();
    let first = ucp_stdin(
        &store,
        &["run", "--session", "work", "--budget", "400", "-"],
        "FIND ROLE=heading1\nCTX ADD RESULTS\nCTX RENDER FORMAT=SHORT_IDS\nGOTO 1\n",
    );
    let text = String::from_utf8_lossy(&first.stdout);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    assert!(text.contains("[1]\n# Corepack"), "{text}");
    assert!(text.contains("4: at blk_f5a8b5badf0ccd1d5fa84d02 heading1"), "{text}");
    // The second run continues: short ids, history and window are back.
    let second = ucp_stdin(&store, &["--json", "run", "--session", "work", "-"], "CTX REMOVE 1\nBACK\nCTX STATS\n");
    let report = stdout_json(&second);
    assert_eq!(report["ok"], true, "{report}");
    let stats = &report["steps"][2]["result"]["reply"]["stats"];
    assert_eq!(stats["blocks"], 4);
    assert_eq!(stats["max_tokens"], 400);
    assert!(stats["tokens"].as_u64().unwrap() <= 400);
    // --budget changes an existing session's budget at once.
    let third = ucp_stdin(&store, &["--json", "run", "--session", "work", "--budget", "30", "-"], "CTX STATS\n");
    let stats = &stdout_json(&third)["steps"][0]["result"]["reply"]["stats"];
    assert_eq!(stats["max_tokens"], 30);
    assert!(stats["tokens"].as_u64().unwrap() <= 30, "{stats}");
}

#[test]
fn a_failed_session_command_reports_its_code_and_keeps_earlier_effects() {
    let (_dir, store) = indexed();
    let out = ucp_stdin(&store, &["run", "--session", "s", "-"], "CTX ADD blk_000000000000000000000000\nBACK 3\n");
    assert_user_error(&out, "[empty_history]");
    let again = ucp_stdin(&store, &["--json", "run", "--session", "s", "-"], "CTX STATS\n");
    assert_eq!(stdout_json(&again)["steps"][0]["result"]["reply"]["stats"]["blocks"], 1);
    let parse = ucp_stdin(&store, &["run", "--session", "s", "-"], "GOTO\n");
    assert_eq!(parse.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&parse.stderr).contains('^'));
}

#[test]
fn session_edits_are_saved_with_the_session() {
    let (_dir, store) = indexed();
    let out = ucp_stdin(
        &store,
        &["run", "--session", "e", "-"],
        "APPEND blk_000000000000000000000000 text WITH label=\"memo\" :: \"Remember this\"\nCTX ADD @memo\n",
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let view = ucp(&store, &["view", "@memo"]);
    assert!(String::from_utf8_lossy(&view.stdout).contains("Remember this"));
}

#[test]
fn the_shell_runs_commands_from_its_input() {
    let (_dir, store) = indexed();
    let out = ucp_stdin(
        &store,
        &["shell", "--session", "sh"],
        "GOTO blk_000000000000000000000000\nBACK\nATOMIC {\n}\n.quit\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("at blk_000000000000000000000000 root"), "{stdout}");
    assert!(stderr.contains("[empty_history]"), "{stderr}");
    let again = ucp_stdin(&store, &["--json", "run", "--session", "sh", "-"], "CTX STATS\n");
    assert_eq!(stdout_json(&again)["session"], "sh");
}

/// Every count a user types is checked against its range before anything
/// runs: one line naming the range, no allocation sized by the value.
#[test]
fn out_of_range_counts_are_refused_before_anything_runs() {
    let (_dir, store) = indexed();
    let cases: &[&[&str]] = &[
        &["search", "fs", "--limit", "2147483648"],
        &["search", "fs", "--limit", "0"],
        &["context", "fs", "--budget", "0"],
        &["context", "fs", "--budget", "18446744073709551615"],
        &["context", "fs", "--agents", "1000000000"],
        &["eval", "q.jsonl", "--budget", "1000,0"],
        &["tree", "--depth", "100000"],
        &["run", "-", "--session", "s", "--budget", "0"],
    ];
    for args in cases {
        assert_usage_error(&ucp(&store, args), "is not in");
    }
}

/// File names and text holding escape sequences, NUL-like controls and
/// carriage returns are shown escaped in listings, never sent raw to the
/// terminal.
#[test]
fn control_characters_are_escaped_in_listings() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::write(corpus.join("evil\x1b[2J\rname.md"), "# Title \x1b]0;pwned\x07\n\nBody\x1b[31m red\n").unwrap();
    let store = dir.path().join(".ucp");
    assert!(ucp(&store, &["index", corpus.to_str().unwrap(), "--name", "c"]).status.success());
    for args in [&["tree"][..], &["docs"], &["search", "red"], &["stats"]] {
        let output = ucp(&store, args);
        assert!(output.status.success(), "{args:?}");
        let shown = String::from_utf8(output.stdout).unwrap();
        assert!(!shown.chars().any(|c| c.is_control() && c != '\n'), "{args:?}: {shown:?}");
    }
    let tree = String::from_utf8(ucp(&store, &["tree"]).stdout).unwrap();
    assert!(tree.contains("evil\\x1b[2J name.md"), "{tree}");
}

/// Several `ucp run` at once on one store: a run whose copy went stale runs
/// its script again on the document as it is then, so every edit lands;
/// were one refused, its error would say another writer came in between,
/// and its edit would be absent — never silently lost.
#[test]
fn concurrent_runs_lose_no_edit() {
    let (_dir, store) = indexed();
    let runs: Vec<_> = (0..4)
        .map(|n| {
            let script = format!("APPEND {ROOT} text WITH label=\"w{n}\" :: \"writer {n}\"\n");
            std::thread::spawn({
                let store = store.clone();
                move || ucp_stdin(&store, &["run", "-"], &script)
            })
        })
        .collect();
    let outputs: Vec<_> = runs.into_iter().map(|r| r.join().unwrap()).collect();
    for (n, out) in outputs.iter().enumerate() {
        let saved = ucp(&store, &["view", &format!("@w{n}")]).status.success();
        if out.status.success() {
            assert!(saved, "writer {n} reported success but its edit is not in the store");
        } else {
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("changed in the store by another writer"), "{stderr}");
            assert!(!saved, "writer {n} was refused but its edit is in the store");
        }
    }
    assert!(outputs.iter().all(|o| o.status.success()), "every run replayed until it landed");
}

/// Two processes each incrementing one counter fifteen times: thirty
/// increments, none lost. One names it by label (the document is loaded
/// whole), the other by id (only the parts the edit reaches are read).
#[test]
fn concurrent_increments_all_count() {
    let (_dir, store) = indexed();
    let setup = format!("APPEND {ROOT} text WITH label=\"c\" counter=0 :: \"counter\"\n");
    assert!(ucp_stdin(&store, &["run", "-"], &setup).status.success());
    let view = stdout_json(&ucp(&store, &["view", "@c", "--json"]));
    let id = view["id"].as_str().unwrap().to_owned();
    let workers: Vec<_> = ["@c".to_owned(), id.clone()]
        .into_iter()
        .map(|target| {
            let store = store.clone();
            std::thread::spawn(move || {
                for _ in 0..15 {
                    let out = ucp_stdin(&store, &["run", "-"], &format!("EDIT {target} SET counter ++\n"));
                    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let doc = stdout_json(&ucp(&store, &["export", "--format", "json"]));
    let block = doc["blocks"].as_array().unwrap().iter().find(|b| b["id"] == id).unwrap().clone();
    assert_eq!(block["metadata"]["custom"]["counter"], 30, "{block}");
}

#[test]
fn view_section_shows_a_heading_with_what_is_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("guide.md");
    std::fs::write(&file, "# Top\n\nIntro text.\n\n## Sub\n\nSub text.\n\n# Other\n\nElsewhere.\n").unwrap();
    let store = dir.path().join(".ucp");
    assert!(common::ucp(&store, &["index", file.to_str().unwrap()]).status.success());
    let exported = common::stdout_json(&common::ucp(&store, &["export", "--format", "json"]));
    let top = exported["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["content"]["text"] == "Top")
        .map(|b| b["id"].as_str().unwrap().to_owned())
        .expect("the heading block");
    let out = common::ucp(&store, &["view", &top, "--mode", "section"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.ends_with("# Top\n\nIntro text.\n\n## Sub\n\nSub text.\n"), "{text}");
    assert!(!text.contains("Elsewhere"), "{text}");
    let json = common::stdout_json(&common::ucp(&store, &["view", &top, "--mode", "section", "--json"]));
    assert_eq!(json["section_blocks"], 4);
    assert_eq!(json["section_complete"], true);
}

#[test]
fn a_plan_link_is_taken_back_once() {
    let (_dir, store) = indexed();
    let node = |title: &str| {
        let out = ucp(&store, &["plan", "add", title, "--type", "step", "--json"]);
        stdout_json(&out)["id"].as_str().unwrap().to_owned()
    };
    let (parent, child) = (node("Ship memory"), node("Test recall"));
    assert!(ucp(&store, &["plan", "link", &parent, &child]).status.success());
    let unlinked = ucp(&store, &["plan", "unlink", &parent, &child]);
    assert!(unlinked.status.success(), "{}", stderr(&unlinked));
    assert_user_error(&ucp(&store, &["plan", "unlink", &parent, &child]), "no relation from");
}
