//! What a hostile model or a careless user tried against the tools, each
//! kept as a regression test: a folder swapped for a link while a tool
//! runs, secrets in the environment, signals out of the sandbox, the store
//! rewritten from a command, processes that outlive their command or
//! their owner, unbounded background jobs, names that forge a listing.

#[path = "../../../tests/support/scratch.rs"]
mod scratch;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ucpkit_tools::*;

fn bash(tools: &Tools, command: &str) -> BashResult {
    tools.bash(&BashRequest { command: command.into(), ..Default::default() }).unwrap()
}

/// Whether process `pid` is gone (or a zombie no one will run again),
/// waiting up to ten seconds for it to go.
fn gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
        let dead =
            state.as_deref().is_none_or(|s| s.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z')));
        if dead || Instant::now() > deadline {
            return dead;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pid_in(file: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(pid) = std::fs::read_to_string(file).ok().and_then(|t| t.trim().parse().ok()) {
            return pid;
        }
        assert!(Instant::now() < deadline, "no pid in {}", file.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A folder inside the root swapped, again and again, between itself and
/// a link to a folder outside, while tools read, write and search under
/// it: nothing outside is ever read or written.
#[test]
fn a_folder_swapped_for_a_link_never_leads_a_tool_outside() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "OUTSIDE-SECRET\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_owned();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/secret.txt"), "inside\n").unwrap();
    let tools = Tools::new(&root).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (stop, root, outside) = (Arc::clone(&stop), root.clone(), outside.path().to_owned());
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                std::fs::rename(root.join("sub"), root.join("held")).unwrap();
                // A write may make a new `sub` at any moment: it goes.
                while std::os::unix::fs::symlink(&outside, root.join("sub")).is_err() {
                    let _ = std::fs::remove_dir_all(root.join("sub"));
                }
                std::thread::yield_now();
                std::fs::remove_file(root.join("sub")).unwrap();
                while std::fs::rename(root.join("held"), root.join("sub")).is_err() {
                    let _ = std::fs::remove_dir_all(root.join("sub"));
                }
                swaps += 1;
            }
            swaps
        })
    };
    let tries = 3000;
    let (mut read, mut written, mut read_outside, mut searched_outside) = (0, 0, 0, 0);
    for i in 0..tries {
        if let Ok(found) = tools.read(&ReadRequest { path: "sub/secret.txt".into(), ..Default::default() }) {
            read += 1;
            read_outside += usize::from(found.text.contains("OUTSIDE"));
        }
        if tools.write(&format!("sub/new-{i}.txt"), "x").is_ok() {
            written += 1;
        }
        let request = GrepRequest { pattern: "SECRET".into(), output_mode: OutputMode::Content, ..Default::default() };
        if let Ok(found) = tools.grep(&request) {
            searched_outside += usize::from(found.text.contains("OUTSIDE"));
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    let written_outside = std::fs::read_dir(outside.path()).unwrap().count() - 1;
    let escapes = (read_outside, written_outside, searched_outside);
    println!("{tries} tries: {swaps} swaps, {read} reads, {written} writes; escapes (read, write, grep): {escapes:?}");
    assert_eq!(escapes, (0, 0, 0), "nothing is read, written or searched outside");
    assert!(swaps > 100 && read > 0 && written > 0, "the race ran: {swaps} swaps, {read} reads, {written} writes");
}

#[test]
fn commands_get_a_clean_environment() {
    // Cargo gives the test process its CARGO_* variables.
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(dir.path()).unwrap();
    let env = bash(&tools, "env").output;
    assert!(!env.contains("CARGO_PKG_NAME") && !env.contains("CARGO_MANIFEST_DIR"), "{env}");
    assert!(env.lines().any(|l| l.starts_with("PATH=")), "{env}");
    let passing = Tools::new(dir.path()).unwrap().with_passed_env(vec!["CARGO_PKG_NAME".into()]);
    let env = bash(&passing, "env").output;
    assert!(env.contains("CARGO_PKG_NAME=ucpkit-tools") && !env.contains("CARGO_MANIFEST_DIR"), "{env}");
}

#[test]
fn a_sandboxed_command_signals_no_process_outside() {
    let dir = tempfile::tempdir().unwrap();
    let mut bystander = std::process::Command::new("sleep").arg("60").spawn().unwrap();
    let sandboxed =
        Tools::new(dir.path()).unwrap().with_sandbox(Some(Sandbox { network: false, scratch: None, hidden: None }));
    for pid in [bystander.id(), std::process::id()] {
        let tried = bash(&sandboxed, &format!("kill -0 {pid} && echo reached || echo refused"));
        assert!(tried.output.ends_with("refused\n"), "pid {pid}: {}", tried.output);
    }
    let killed = bash(&sandboxed, &format!("kill -9 {}; echo done", bystander.id()));
    assert!(killed.output.ends_with("done\n"), "{}", killed.output);
    assert!(bystander.try_wait().unwrap().is_none(), "the bystander lives");
    let open = Tools::new(dir.path()).unwrap();
    assert_eq!(bash(&open, &format!("kill -0 {} && echo reached", bystander.id())).output, "reached\n");
    bystander.kill().unwrap();
    bystander.wait().unwrap();
}

#[test]
fn the_store_is_never_writable_from_the_tools_or_the_sandbox() {
    let dir = tempfile::tempdir_in(scratch::outside_tmp()).unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("nested/.ucp")).unwrap();
    let config = root.join("nested/.ucp/config.toml");
    std::fs::write(&config, "[agent]\nprovider = \"local\"\n").unwrap();
    let protected = [root.join("nested/.ucp"), root.join("user-config/ucp")];
    let tools = Tools::new(root).unwrap().with_protected(protected.clone()).with_sandbox(Some(Sandbox {
        network: false,
        scratch: None,
        hidden: None,
    }));
    let error = tools.write("nested/.ucp/config.toml", "evil").unwrap_err();
    assert_eq!(error.code(), "protected", "{error}");
    let edit = EditRequest {
        path: "nested/.ucp/config.toml".into(),
        edits: vec![Replacement { old_string: "local".into(), new_string: "evil".into(), replace_all: false }],
        dry_run: false,
    };
    assert_eq!(tools.edit(&edit).unwrap_err().code(), "protected");
    for attack in [
        "echo 'base_url = \"http://evil\"' >> nested/.ucp/config.toml",
        "mv nested/.ucp nested/old",
        "mv nested nested-old",
        "rm -rf nested/.ucp",
        "touch nested/.ucp/new",
        "mkdir -p user-config/ucp/x",
    ] {
        let tried = bash(&tools, &format!("{attack} && echo done"));
        assert!(!tried.output.contains("done"), "{attack}: {}", tried.output);
    }
    // Nor from a working folder inside the store or above it.
    for (cwd, attack) in [("nested/.ucp", "echo x >> config.toml"), ("nested", "echo x >> .ucp/config.toml")] {
        let request =
            BashRequest { command: format!("{attack} && echo done"), cwd: Some(cwd.into()), ..Default::default() };
        let tried = tools.bash(&request).unwrap();
        assert!(!tried.output.contains("done"), "{cwd}: {attack}: {}", tried.output);
    }
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "[agent]\nprovider = \"local\"\n");
    assert!(root.join("user-config/ucp").is_dir(), "a missing protected folder is made, to be held");
    let free = bash(&tools, "echo fine > nested/other.txt && cat nested/other.txt");
    assert_eq!(free.output, "fine\n", "the rest of the root stays writable");
}

#[test]
fn a_root_in_tmp_cannot_be_moved_from_the_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join(".ucp")).unwrap();
    let tools = Tools::new(&root).unwrap().with_protected([root.join(".ucp")]).with_sandbox(Some(Sandbox {
        network: false,
        scratch: None,
        hidden: None,
    }));
    let moved = format!("{}-moved", root.display());
    let tried = bash(&tools, &format!("cd / && mv {} {moved} && echo done", root.display()));
    assert!(!tried.output.contains("done"), "{}", tried.output);
    assert!(root.join(".ucp").is_dir() && !Path::new(&moved).exists());
}

#[test]
fn nothing_a_command_starts_outlives_it() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(dir.path()).unwrap();
    // Escaped into a session of its own, and double-forked away.
    let ended = bash(&tools, "setsid sleep 300 & echo $! > a.pid; (setsid sleep 301 & echo $! > b.pid); sleep 0.2");
    assert_eq!(ended.status, JobStatus::Exited { code: 0 }, "{}", ended.text);
    for file in ["a.pid", "b.pid"] {
        assert!(gone(pid_in(&dir.path().join(file))), "{file}");
    }
    // Past its timeout.
    let request = BashRequest {
        command: "setsid sleep 302 & echo $! > c.pid; sleep 100".into(),
        timeout: Some(Duration::from_millis(700)),
        ..Default::default()
    };
    assert_eq!(tools.bash(&request).unwrap().status, JobStatus::TimedOut);
    assert!(gone(pid_in(&dir.path().join("c.pid"))));
    // In the sandbox too.
    let sandboxed =
        Tools::new(dir.path()).unwrap().with_sandbox(Some(Sandbox { network: false, scratch: None, hidden: None }));
    let ended = bash(&sandboxed, "setsid sleep 303 & sleep 0.2");
    assert_eq!(ended.status, JobStatus::Exited { code: 0 }, "{}", ended.text);
    assert_eq!(running_with_arguments(&["sleep", "303"]), 0);
}

/// How many processes run with exactly these arguments.
fn running_with_arguments(wanted: &[&str]) -> usize {
    let wanted: Vec<u8> = wanted.iter().flat_map(|a| a.bytes().chain([0])).collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == wanted))
        .filter(|e| std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| !s.contains(") Z ")))
        .count()
}

#[test]
fn background_jobs_are_capped_and_end_with_their_owner() {
    let dir = tempfile::tempdir().unwrap();
    let tools = Tools::new(dir.path()).unwrap();
    let start = |n: usize| {
        tools.bash(&BashRequest {
            command: format!("setsid sleep 400 & echo $! > job{n}.pid; wait"),
            background: true,
            ..Default::default()
        })
    };
    let jobs: Vec<u64> = (0..bash::MAX_RUNNING_JOBS).map(|n| start(n).unwrap().job.unwrap()).collect();
    let refused = start(99).unwrap_err().to_string();
    assert!(refused.contains("at most 8"), "{refused}");
    assert!(matches!(tools.bash_job(jobs[0], true).unwrap().status, JobStatus::Killed { .. }));
    assert!(gone(pid_in(&dir.path().join("job0.pid"))), "a killed job's children go with it");
    start(8).unwrap();
    let pids: Vec<u32> = (1..=8).map(|n| pid_in(&dir.path().join(format!("job{n}.pid")))).collect();
    drop(tools);
    for pid in pids {
        assert!(gone(pid), "{pid} outlived the tools that started it");
    }
}

/// Not a test of its own: the next test runs this binary again with only
/// this function and `UCP_TEST_OWNER_DIR` set, as the owner of a
/// background job that it then kills. Run plainly, it returns at once.
#[test]
fn helper_owner_of_a_background_job() {
    let Some(dir) = std::env::var_os("UCP_TEST_OWNER_DIR") else { return };
    let tools = Tools::new(&dir).unwrap();
    let request = BashRequest {
        command: "setsid sleep 500 & echo $! > owned.pid; wait".into(),
        background: true,
        ..Default::default()
    };
    tools.bash(&request).unwrap();
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn background_jobs_end_when_their_owner_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let mut owner = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "helper_owner_of_a_background_job", "--nocapture", "--test-threads", "1"])
        .env("UCP_TEST_OWNER_DIR", dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = pid_in(&dir.path().join("owned.pid"));
    assert!(Path::new(&format!("/proc/{pid}")).exists(), "the job runs");
    owner.kill().unwrap(); // SIGKILL: no destructor runs
    owner.wait().unwrap();
    assert!(gone(pid), "the job outlived its owner");
}

#[test]
fn names_cannot_forge_a_listing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("evil\nforged.rs"), "needle\n").unwrap();
    std::fs::write(dir.path().join("esc\x1b]52;c;AAAA\x07.txt"), "needle\n").unwrap();
    let tools = Tools::new(dir.path()).unwrap();
    let found = tools.grep(&GrepRequest { pattern: "needle".into(), ..Default::default() }).unwrap();
    assert_eq!(found.text.lines().count(), 2, "{}", found.text);
    assert!(found.text.contains("evil\\nforged.rs") && found.text.contains("esc\\x1b]52"), "{}", found.text);
    assert!(!found.text.contains('\x1b'));
    let content = GrepRequest { pattern: "needle".into(), output_mode: OutputMode::Content, ..Default::default() };
    assert!(!tools.grep(&content).unwrap().text.contains('\x1b'));
    let listed = tools.glob(&GlobRequest { pattern: "*".into(), ..Default::default() }).unwrap();
    assert_eq!(listed.text.lines().count(), 2, "{}", listed.text);
    assert!(listed.paths.iter().any(|p| p.contains('\n')), "JSON keeps the name as it is");
}

#[test]
fn megabyte_arguments_are_answered_not_panicked_on() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "fn main() {}\n").unwrap();
    let tools = Tools::new(dir.path()).unwrap();
    let huge = "x".repeat(1 << 20);
    for pattern in [huge.clone(), "a*".repeat(1 << 19)] {
        match tools.glob(&GlobRequest { pattern, ..Default::default() }) {
            Ok(found) => assert_eq!(found.page.total, 0),
            Err(e) => assert!(e.to_string().len() < 500, "refused in a few words"),
        }
    }
    let short_or_none = |result: Result<GrepResult, ToolError>| match result {
        Ok(found) => found.page.total == 0,
        Err(e) => e.to_string().len() < 500,
    };
    assert!(short_or_none(tools.grep(&GrepRequest { pattern: huge.clone(), ..Default::default() })));
    let globbed = GrepRequest { pattern: "main".into(), globs: vec![huge.clone()], ..Default::default() };
    assert!(short_or_none(tools.grep(&globbed)));
    let ast = tools.ast_search(&AstRequest { pattern: huge.clone(), ..Default::default() });
    assert!(ast.is_ok_and(|found| found.page.total == 0));
    let read = tools.read(&ReadRequest { path: huge, ..Default::default() });
    assert!(read.is_err());
}

#[test]
fn huge_files_cost_their_head_to_refuse_and_long_edits_stay_right() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::File::create(dir.path().join("sparse.txt")).unwrap().set_len(1 << 30).unwrap();
    let tools = Tools::new(dir.path()).unwrap();
    let read = tools.read(&ReadRequest { path: "sparse.txt".into(), ..Default::default() });
    assert!(read.unwrap_err().to_string().contains("binary"));
    // 40,000 replacements in one edit, each start's line right.
    let text: String = (0..40_000).map(|i| format!("let v{i} = old();\n")).collect();
    std::fs::write(dir.path().join("many.rs"), &text).unwrap();
    let edit = EditRequest {
        path: "many.rs".into(),
        edits: vec![Replacement { old_string: "old()".into(), new_string: "new_value()".into(), replace_all: true }],
        dry_run: false,
    };
    let edited = tools.edit(&edit).unwrap();
    assert_eq!(edited.replacements, 40_000);
    assert_eq!(edited.lines, (1..=40_000).collect::<Vec<_>>());
    // A read of a long file keeps only what it shows.
    let long: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("long.txt"), long).unwrap();
    let page = tools.read(&ReadRequest { path: "long.txt".into(), offset: Some(150_000), limit: Some(2) }).unwrap();
    assert_eq!((page.total_lines, page.lines_shown), (200_000, 2));
    assert!(page.text.contains("150000\tline 149999\n150001\tline 150000\n"), "{}", page.text);
}
