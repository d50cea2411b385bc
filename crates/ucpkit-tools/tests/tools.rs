//! The tools end to end over a real folder, through the Rust API.

#[path = "../../../tests/support/scratch.rs"]
mod scratch;

use std::path::Path;
use std::time::Duration;

use ucpkit_tools::*;

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let write = |path: &str, text: &[u8]| {
        let file = p.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    };
    std::fs::create_dir(p.join(".git")).unwrap();
    write(".gitignore", b"target/\n");
    write("src/main.rs", b"fn main() {\n    let value = helper();\n    println!(\"{value}\");\n}\n");
    write("src/lib.rs", b"pub fn helper() -> u32 {\n    42\n}\n\n// helpers end here\n");
    write("src/deep/util.py", b"def helper():\n    return 1\n");
    write("target/built.rs", b"fn helper() {}\n");
    write(".hidden/secret.rs", b"fn helper() {}\n");
    write("blob.bin", b"helper\0\x01\x02");
    write("README.md", b"# Demo\nCall helper() from main.\n");
    dir
}

fn grep(tools: &Tools, pattern: &str, edit: impl FnOnce(&mut GrepRequest)) -> GrepResult {
    let mut request = GrepRequest { pattern: pattern.into(), ..Default::default() };
    edit(&mut request);
    tools.grep(&request).unwrap()
}

#[test]
fn grep_lists_files_sorted_skipping_ignored_hidden_and_binary_ones() {
    let dir = tree();
    let tools = Tools::new(dir.path()).unwrap();
    let found = grep(&tools, "helper", |_| {});
    assert_eq!(found.text, "README.md\nsrc/deep/util.py\nsrc/lib.rs\nsrc/main.rs\n");
    assert_eq!(found.page.total, 4);
    let counted = grep(&tools, "helper", |r| r.output_mode = OutputMode::Count);
    assert_eq!(counted.text, "README.md:1\nsrc/deep/util.py:1\nsrc/lib.rs:2\nsrc/main.rs:1\n");
    let typed = grep(&tools, "helper", |r| r.file_type = Some("py".into()));
    assert_eq!(typed.text, "src/deep/util.py\n");
    let globbed = grep(&tools, "helper", |r| r.globs = vec!["*.rs".into(), "!main.rs".into()]);
    assert_eq!(globbed.text, "src/lib.rs\n");
    let within = grep(&tools, "helper", |r| r.path = Some("src/deep".into()));
    assert_eq!(within.text, "src/deep/util.py\n");
    let none = grep(&tools, "no such thing", |_| {});
    assert!(none.text.starts_with("no matches ("), "{}", none.text);
}

#[test]
fn grep_content_shows_numbered_lines_with_context_under_their_file() {
    let dir = tree();
    let tools = Tools::new(dir.path()).unwrap();
    let found = grep(&tools, "HELPER", |r| {
        r.output_mode = OutputMode::Content;
        r.case_insensitive = true;
        r.path = Some("src".into());
    });
    assert_eq!(
        found.text,
        "src/deep/util.py\n1:def helper():\nsrc/lib.rs\n1:pub fn helper() -> u32 {\n5:// helpers end here\n\
         src/main.rs\n2:    let value = helper();\n"
    );
    let context = grep(&tools, "42", |r| {
        r.output_mode = OutputMode::Content;
        r.before = 1;
        r.after = 1;
    });
    assert_eq!(context.text, "src/lib.rs\n1-pub fn helper() -> u32 {\n2:    42\n3-}\n");
    let spanning = grep(&tools, r"fn main\(\) \{.*?println", |r| {
        r.output_mode = OutputMode::Content;
        r.multiline = true;
    });
    assert_eq!(spanning.page.total, 1);
    assert!(spanning.text.contains("3:    println!"), "{}", spanning.text);
}

#[test]
fn grep_pages_say_how_many_are_left() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..30 {
        std::fs::write(dir.path().join(format!("f{i:02}.txt")), "needle\n").unwrap();
    }
    let tools = Tools::new(dir.path()).unwrap();
    let first = grep(&tools, "needle", |r| r.paging = Paging { offset: 0, head_limit: 10 });
    assert!(first.text.starts_with("f00.txt\n"));
    assert!(first.text.ends_with("f09.txt\n[20 more files: pass offset=10]\n"), "{}", first.text);
    let last = grep(&tools, "needle", |r| r.paging = Paging { offset: 25, head_limit: 10 });
    assert_eq!(last.text.lines().count(), 5);
    assert_eq!(last.page.next_offset, None);
    let bad = tools.grep(&GrepRequest { pattern: "(".into(), ..Default::default() }).unwrap_err();
    assert!(bad.to_string().starts_with("pattern:"), "{bad}");
}

#[test]
fn glob_matches_paths_and_orders_them() {
    let dir = tree();
    let tools = Tools::new(dir.path()).unwrap();
    let by_path = |pattern: &str| {
        let request = GlobRequest { pattern: pattern.into(), order: GlobOrder::Path, ..Default::default() };
        tools.glob(&request).unwrap().paths
    };
    assert_eq!(by_path("src/**/*.rs"), ["src/lib.rs", "src/main.rs"]);
    assert_eq!(by_path("**/*.py"), ["src/deep/util.py"]);
    assert_eq!(by_path("*.rs"), Vec::<String>::new(), "* stays inside a folder");
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(dir.path().join("src/lib.rs"), "pub fn helper() {}\n").unwrap();
    let newest = tools.glob(&GlobRequest { pattern: "src/*.rs".into(), ..Default::default() }).unwrap();
    assert_eq!(newest.paths, ["src/lib.rs", "src/main.rs"], "newest first");
}

#[test]
fn read_numbers_lines_pages_them_and_refuses_binary() {
    let dir = tree();
    let tools = Tools::new(dir.path()).unwrap();
    let read = tools.read(&ReadRequest { path: "src/main.rs".into(), ..Default::default() }).unwrap();
    assert_eq!(
        read.text,
        "     1\tfn main() {\n     2\t    let value = helper();\n     3\t    println!(\"{value}\");\n     4\t}\n"
    );
    let part = tools.read(&ReadRequest { path: "src/main.rs".into(), offset: Some(2), limit: Some(2) }).unwrap();
    assert_eq!(part.text, "     2\t    let value = helper();\n     3\t    println!(\"{value}\");\n[lines 2–3 of 4 shown: pass offset=4 to read on]\n");
    let error = tools.read(&ReadRequest { path: "blob.bin".into(), ..Default::default() }).unwrap_err();
    assert_eq!(error.to_string(), "blob.bin is binary, not text: this tool reads and edits text files only");
    let past = tools.read(&ReadRequest { path: "src/main.rs".into(), offset: Some(9), limit: None }).unwrap_err();
    assert!(past.to_string().contains("has 4 lines"), "{past}");
}

#[test]
fn read_stays_under_the_token_cap() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..3000).map(|i| format!("line {i} with some words in it\n")).collect();
    std::fs::write(dir.path().join("big.txt"), text).unwrap();
    let tools = Tools::new(dir.path()).unwrap().with_max_tokens(1000);
    let read = tools.read(&ReadRequest { path: "big.txt".into(), ..Default::default() }).unwrap();
    assert!(read.lines_shown < 3000 && read.lines_shown > 50);
    assert!(read.text.contains(&format!("pass offset={} to read on", read.lines_shown + 1)));
    let error = tools.read(&ReadRequest { path: "big.txt".into(), offset: Some(1), limit: Some(500) }).unwrap_err();
    assert!(error.to_string().contains("ask for fewer lines (offset=1 limit="), "{error}");
}

#[test]
fn write_creates_folders_inside_and_refuses_outside() {
    let dir = tree();
    let tools = Tools::new(dir.path()).unwrap();
    let written = tools.write("new/folder/a.txt", "one\ntwo\n").unwrap();
    assert_eq!(written.text, "created new/folder/a.txt (2 lines, 8 bytes)\n");
    assert_eq!(std::fs::read_to_string(dir.path().join("new/folder/a.txt")).unwrap(), "one\ntwo\n");
    assert!(!tools.write("new/folder/a.txt", "three\n").unwrap().created);
    for outside in ["../escape.txt", "/tmp/escape.txt", "src/../../escape.txt"] {
        let error = tools.write(outside, "x").unwrap_err();
        assert!(matches!(error, ToolError::OutsideRoot { .. }), "{outside}: {error}");
    }
    assert!(!dir.path().parent().unwrap().join("escape.txt").exists());
    let read_only = Tools::new(dir.path()).unwrap().with_read_only(true);
    assert!(matches!(read_only.write("b.txt", "x"), Err(ToolError::ReadOnly("write"))));
    assert!(matches!(
        read_only.bash(&BashRequest { command: "true".into(), ..Default::default() }),
        Err(ToolError::ReadOnly("bash"))
    ));
}

fn edit(path: &str, old: &str, new: &str) -> EditRequest {
    EditRequest {
        path: path.into(),
        edits: vec![Replacement { old_string: old.into(), new_string: new.into(), replace_all: false }],
        dry_run: false,
    }
}

#[test]
fn edit_replaces_unique_text_and_reports_ambiguity_with_lines() {
    let dir = tree();
    let tools = Tools::new(dir.path()).unwrap();
    let done = tools.edit(&edit("src/lib.rs", "    42", "    43")).unwrap();
    assert_eq!(done.text, "edited src/lib.rs: 1 replacement(s) at line 2\n");
    assert!(std::fs::read_to_string(dir.path().join("src/lib.rs")).unwrap().contains("    43\n"));
    let error = tools.edit(&edit("src/lib.rs", "helper", "aid")).unwrap_err();
    assert!(error.to_string().contains("occurs 2 times (lines 1, 5)"), "{error}");
    let missing = tools.edit(&edit("src/lib.rs", "nothing like it", "x")).unwrap_err();
    assert!(matches!(missing, ToolError::EditNotFound { .. }));
}

#[test]
fn a_dry_run_returns_the_diff_and_writes_nothing() {
    let dir = tree();
    let tools = Tools::new(dir.path()).unwrap();
    let before = std::fs::read_to_string(dir.path().join("src/lib.rs")).unwrap();
    let mut request = edit("src/lib.rs", "    42", "    43");
    request.dry_run = true;
    let dry = tools.edit(&request).unwrap();
    assert!(dry.diff.contains("-    42\n+    43\n"), "{}", dry.diff);
    assert!(dry.text.starts_with("dry run, nothing written"));
    assert_eq!(std::fs::read_to_string(dir.path().join("src/lib.rs")).unwrap(), before);
}

#[test]
fn several_replacements_land_all_or_none() {
    let dir = tree();
    let tools = Tools::new(dir.path()).unwrap();
    let path = dir.path().join("src/main.rs");
    let before = std::fs::read_to_string(&path).unwrap();
    let mut request = edit("src/main.rs", "let value", "let result");
    request.edits.push(Replacement { old_string: "not there".into(), new_string: "x".into(), replace_all: false });
    assert!(tools.edit(&request).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before, "the first replacement was not written");
    request.edits[1] = Replacement { old_string: "{value}".into(), new_string: "{result}".into(), replace_all: false };
    let done = tools.edit(&request).unwrap();
    assert_eq!(done.replacements, 2);
    assert!(std::fs::read_to_string(&path).unwrap().contains("let result = helper();\n    println!(\"{result}\")"));
}

#[test]
fn later_replacements_move_the_lines_reported_for_earlier_ones() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "0123456789\nfoo\n").unwrap();
    let tools = Tools::new(dir.path()).unwrap();
    let mut request = edit("f.txt", "foo", "bar");
    request.edits.push(Replacement {
        old_string: "0123456789\n".into(),
        new_string: String::new(),
        replace_all: false,
    });
    let done = tools.edit(&request).unwrap();
    assert_eq!(done.lines, [1, 1]);
    assert_eq!(std::fs::read_to_string(dir.path().join("f.txt")).unwrap(), "bar\n");
}

#[cfg(unix)]
#[test]
fn new_files_follow_the_umask_not_the_temporary_files_mode() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(dir.path()).unwrap();
    tools.write("new.txt", "x").unwrap();
    // SAFETY: umask only reads and sets this process's mask; set back at once.
    let mask = unsafe {
        let mask = libc::umask(0o022);
        libc::umask(mask);
        mask
    };
    let mode = std::fs::metadata(dir.path().join("new.txt")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666 & !(mask as u32));
}

#[cfg(unix)]
#[test]
fn edit_keeps_crlf_line_ends_and_permissions() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.bat");
    std::fs::write(&file, "echo one\r\necho two\r\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tools = Tools::new(dir.path()).unwrap();
    tools.edit(&edit("run.bat", "echo one\necho two", "echo 1\necho 2\necho 3")).unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "echo 1\r\necho 2\r\necho 3\r\n");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o755);
}

#[test]
fn every_tool_refuses_paths_outside_the_root() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("secret.txt"), "helper\n").unwrap();
    std::fs::create_dir(outer.path().join("work")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outer.path(), outer.path().join("work/up")).unwrap();
    let tools = Tools::new(outer.path().join("work")).unwrap();
    let outside = |e: ToolError| assert!(matches!(e, ToolError::OutsideRoot { .. }), "{e}");
    for path in ["..", "../secret.txt", "up/secret.txt"] {
        outside(
            tools
                .grep(&GrepRequest { pattern: "h".into(), path: Some(path.into()), ..Default::default() })
                .unwrap_err(),
        );
        outside(
            tools
                .glob(&GlobRequest { pattern: "*".into(), path: Some(path.into()), ..Default::default() })
                .unwrap_err(),
        );
        outside(tools.read(&ReadRequest { path: path.into(), ..Default::default() }).unwrap_err());
        outside(tools.edit(&edit(path, "helper", "x")).unwrap_err());
        outside(
            tools
                .bash(&BashRequest { command: "pwd".into(), cwd: Some(path.into()), ..Default::default() })
                .unwrap_err(),
        );
    }
    assert_eq!(std::fs::read_to_string(outer.path().join("secret.txt")).unwrap(), "helper\n");
}

fn bash(tools: &Tools, command: &str) -> BashResult {
    tools.bash(&BashRequest { command: command.into(), ..Default::default() }).unwrap()
}

#[test]
fn bash_reports_output_and_exit_code_in_its_folder() {
    let dir = tree();
    let tools = Tools::new(dir.path()).unwrap();
    let ran = bash(&tools, "echo out; echo err >&2; exit 3");
    assert_eq!(ran.status, JobStatus::Exited { code: 3 });
    assert_eq!(ran.output, "out\nerr\n");
    assert!(ran.text.starts_with("out\nerr\n[exit code 3, "), "{}", ran.text);
    let inside =
        tools.bash(&BashRequest { command: "ls".into(), cwd: Some("src/deep".into()), ..Default::default() }).unwrap();
    assert_eq!(inside.output, "util.py\n");
}

/// Whether a process exists and is not a zombie waiting to be reaped.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        Err(_) => false,
    }
}

fn pid_in(path: &Path) -> i32 {
    std::fs::read_to_string(path).unwrap().trim().parse().unwrap()
}

#[test]
fn commands_have_no_controlling_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(dir.path()).unwrap();
    let ran = bash(&tools, "exec 3</dev/tty && echo opened");
    assert_ne!(ran.status, JobStatus::Exited { code: 0 }, "{}", ran.output);
    assert!(!ran.output.contains("opened"));
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(dir.path()).unwrap();
    let request = BashRequest {
        command: "sleep 60 & echo $! > child.pid; echo started; sleep 60".into(),
        timeout: Some(Duration::from_millis(500)),
        ..Default::default()
    };
    let ran = tools.bash(&request).unwrap();
    assert_eq!(ran.status, JobStatus::TimedOut);
    assert!(ran.text.contains("started\n[timed out after"), "{}", ran.text);
    let child = pid_in(&dir.path().join("child.pid"));
    std::thread::sleep(Duration::from_millis(100));
    assert!(!alive(child), "the background child {child} survived the timeout");
}

#[test]
fn long_output_keeps_its_tail_under_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(dir.path()).unwrap().with_max_tokens(500);
    let ran = bash(&tools, "seq 1 20000");
    assert!(ran.output.ends_with("19999\n20000\n"));
    assert!(ran.cut_bytes > 0);
    assert!(ran.text.starts_with("[output cut: the first"), "{}", &ran.text[..80]);
}

#[test]
fn background_jobs_are_polled_and_killed() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(dir.path()).unwrap();
    let started = tools
        .bash(&BashRequest {
            command: "echo $$ > job.pid; echo first; sleep 60".into(),
            background: true,
            ..Default::default()
        })
        .unwrap();
    let id = started.job.unwrap();
    assert_eq!(started.status, JobStatus::Running);
    std::thread::sleep(Duration::from_millis(300));
    let polled = tools.bash_job(id, false).unwrap();
    assert_eq!((polled.status, polled.output.as_str()), (JobStatus::Running, "first\n"));
    let again = tools.bash_job(id, false).unwrap();
    assert_eq!(again.output, "", "a poll returns only what is new");
    let pid = pid_in(&dir.path().join("job.pid"));
    let killed = tools.bash_job(id, true).unwrap();
    assert_eq!(killed.status, JobStatus::Killed { signal: 9 });
    assert!(!alive(pid));
    assert!(matches!(tools.bash_job(id, false), Err(ToolError::NoJob(_))));
    let overdue = tools
        .bash(&BashRequest {
            command: "echo $$ > late.pid; sleep 60".into(),
            timeout: Some(Duration::from_millis(300)),
            background: true,
            ..Default::default()
        })
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    assert!(!alive(pid_in(&dir.path().join("late.pid"))), "a job past its timeout dies unpolled");
    assert_eq!(tools.bash_job(overdue.job.unwrap(), false).unwrap().status, JobStatus::TimedOut);
    let quick =
        tools.bash(&BashRequest { command: "echo done".into(), background: true, ..Default::default() }).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let finished = tools.bash_job(quick.job.unwrap(), false).unwrap();
    assert_eq!((finished.status, finished.output.as_str()), (JobStatus::Exited { code: 0 }, "done\n"));
}

fn sources() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let file = dir.path().join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    };
    write("src/main.rs", "fn main() {\n    let a = open().unwrap();\n    let b = parse(a)\n        .unwrap();\n}\n");
    write("tool.py", "def helper(a, b):\n    return a\n\nclass K:\n    def method(self):\n        pass\n");
    write("web/app.ts", "function add(a: number, b: number): number { return a + b; }\n");
    write("web/ui.js", "function greet(name) { console.log(name); }\n");
    write("cmd/main.go", "package main\n\nfunc Run(x int) int { return x }\n");
    write("lib/util.c", "int twice(int x) { return 2 * x; }\n");
    dir
}

fn ast(tools: &Tools, pattern: &str, lang: Option<&str>) -> AstResult {
    let request = AstRequest { pattern: pattern.into(), lang: lang.map(str::to_owned), ..Default::default() };
    tools.ast_search(&request).unwrap()
}

#[test]
fn ast_search_finds_structure_with_captures_in_each_language() {
    let dir = sources();
    let tools = Tools::new(dir.path()).unwrap();
    let unwraps = ast(&tools, "$X.unwrap()", Some("rust"));
    assert_eq!(unwraps.page.total, 2);
    assert_eq!(unwraps.matches[0].captures, [("X".to_owned(), "open()".to_owned())]);
    assert_eq!((unwraps.matches[1].start_line, unwraps.matches[1].end_line), (3, 4), "a match spanning lines");
    assert_eq!(unwraps.matches[1].text, "parse(a)\n        .unwrap()", "the exact source slice");
    assert!(
        unwraps.text.starts_with("src/main.rs\n2: open().unwrap()\n  $X = open()\n3-4: parse(a)\n"),
        "{}",
        unwraps.text
    );

    let defs = ast(&tools, "def $F($$$ARGS)", Some("python"));
    let names: Vec<_> =
        defs.matches.iter().map(|m| m.captures.iter().find(|c| c.0 == "F").unwrap().1.clone()).collect();
    assert_eq!(names, ["helper", "method"]);
    assert_eq!(defs.matches[0].captures[0], ("ARGS".to_owned(), "a, b".to_owned()));

    assert_eq!(ast(&tools, "function $F($$$) { $$$ }", Some("javascript")).matches[0].path, "web/ui.js");
    assert_eq!(ast(&tools, "return $A + $B", Some("typescript")).matches[0].path, "web/app.ts");
    assert_eq!(
        ast(&tools, "func $F($$$) int { $$$ }", Some("go")).matches[0].captures,
        [("F".to_owned(), "Run".to_owned())]
    );
    assert_eq!(ast(&tools, "2 * $X", Some("c")).matches[0].path, "lib/util.c");
}

#[test]
fn ast_search_without_a_language_tries_each_file_by_extension() {
    let dir = sources();
    let tools = Tools::new(dir.path()).unwrap();
    // `$F($$$)` is a call in every language here.
    let calls = ast(&tools, "console.log($X)", None);
    assert_eq!(calls.page.total, 1, "{}", calls.text);
    let none = ast(&tools, "nothing_like_this($X)", None);
    assert!(none.text.starts_with("no matches ("), "{}", none.text);
    let unknown =
        tools.ast_search(&AstRequest { pattern: "$X".into(), lang: Some("cobol".into()), ..Default::default() });
    assert!(unknown.unwrap_err().to_string().contains("is not one of"));
    let outside = tools.ast_search(&AstRequest { pattern: "$X".into(), path: Some("..".into()), ..Default::default() });
    assert!(matches!(outside, Err(ToolError::OutsideRoot { .. })));
}

#[test]
fn ast_search_pages_like_grep() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..30).map(|i| format!("fn f{i}() {{ g().unwrap(); }}\n")).collect();
    std::fs::write(dir.path().join("many.rs"), text).unwrap();
    let tools = Tools::new(dir.path()).unwrap();
    let request =
        AstRequest { pattern: "$X.unwrap()".into(), paging: Paging { offset: 0, head_limit: 5 }, ..Default::default() };
    let page = tools.ast_search(&request).unwrap();
    assert_eq!(page.matches.len(), 5);
    assert!(page.text.ends_with("[25 more matches: pass offset=5]\n"), "{}", page.text);
}

#[test]
fn the_sandbox_confines_writes_to_the_root_and_cuts_the_network() {
    let outside = tempfile::tempdir_in(scratch::outside_tmp()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sandboxed =
        Tools::new(dir.path()).unwrap().with_sandbox(Some(Sandbox { network: false, scratch: None, hidden: None }));
    let inside = bash(&sandboxed, "echo in > inside.txt && cat inside.txt");
    assert_eq!((inside.status, inside.output.as_str()), (JobStatus::Exited { code: 0 }, "in\n"));
    let target = outside.path().join("x.txt");
    let denied = bash(&sandboxed, &format!("echo out > {}", target.display()));
    assert_ne!(denied.status, JobStatus::Exited { code: 0 });
    assert!(denied.output.contains("Permission denied"), "{}", denied.output);
    assert!(!target.exists());
    assert_eq!(bash(&sandboxed, "cat /etc/hostname > /dev/null && echo read").output, "read\n", "reads stay allowed");
    let kept = outside.path().join("kept.txt");
    std::fs::write(&kept, "keep me").unwrap();
    let truncated = bash(&sandboxed, &format!("truncate -s 0 {}", kept.display()));
    assert_ne!(truncated.status, JobStatus::Exited { code: 0 }, "{}", truncated.output);
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "keep me");

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    assert!(!bash(&sandboxed, &connect).output.contains("connected"));
    let open =
        Tools::new(dir.path()).unwrap().with_sandbox(Some(Sandbox { network: true, scratch: None, hidden: None }));
    assert_eq!(bash(&open, &connect).output, "connected\n");
    assert!(!bash(&open, &format!("echo out > {}", target.display())).output.is_empty(), "still confined");
}
