//! `ucp tui` end to end: the real binary in a tmux pane, driven by
//! `send-keys` and read by `capture-pane`. It opens the bundled guide,
//! searches it, builds a context within a budget, quits, and the terminal
//! is as it was (mode and screen); SIGTERM puts it back too, and a closed
//! terminal ends it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// One tmux server of this test's own (its socket in the test's folder),
/// killed when dropped.
struct Tmux {
    bin: PathBuf,
    socket: PathBuf,
}

impl Tmux {
    fn command(&self) -> Command {
        let mut command = Command::new(&self.bin);
        command.arg("-S").arg(&self.socket).args(["-f", "/dev/null"]);
        command
    }

    fn run(&self, args: &[&str]) -> String {
        let out = self.command().args(args).output().unwrap();
        assert!(out.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Starts `command` in a new 100×30 window named `name`.
    fn start(&self, name: &str, command: &str) {
        let new = if self.run_ok(&["has-session"]) { "new-window" } else { "new-session" };
        let mut args = vec![new, "-d", "-n", name];
        if new == "new-session" {
            args.extend(["-x", "100", "-y", "30"]);
        }
        args.push(command);
        self.run(&args);
    }

    fn run_ok(&self, args: &[&str]) -> bool {
        self.command().args(args).output().is_ok_and(|o| o.status.success())
    }

    fn keys(&self, window: &str, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", window];
        args.extend(keys);
        self.run(&args);
    }

    fn text(&self, window: &str, text: &str) {
        self.run(&["send-keys", "-t", window, "-l", text]);
    }

    fn screen(&self, window: &str) -> String {
        self.run(&["capture-pane", "-p", "-t", window])
    }

    /// Waits until the window's screen holds `what` (or, when `shown` is
    /// false, no longer does); the screen then.
    fn wait(&self, window: &str, what: &str, shown: bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let screen = self.screen(window);
            if screen.contains(what) == shown {
                return screen;
            }
            assert!(Instant::now() < deadline, "{what:?} shown is not {shown} on the screen:\n{screen}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn wait_for(&self, window: &str, what: &str) -> String {
        self.wait(window, what, true)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
    }
}

/// The pane's command: the terminal's settings before and after
/// `ucp tui` compared, then a shell line that stays.
fn pane_command(dir: &Path, tui: &str) -> String {
    let d = dir.display();
    format!(
        "sh -c 'stty -g > {d}/before; sh -c \"echo \\$\\$ > {d}/pid; exec {tui}\"; echo exit=$?; stty -g > {d}/after; \
         cmp -s {d}/before {d}/after && echo restored=yes; exec sleep 120'"
    )
}

#[test]
#[ignore = "needs UCP_TEST_TMUX: scripts/test fetches tmux (scripts/setup-tmux) and runs this"]
fn the_tui_opens_the_guide_searches_builds_a_context_and_restores_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let bin = std::env::var_os("UCP_TEST_TMUX").expect("UCP_TEST_TMUX").into();
    let tmux = Tmux { bin, socket: dir.path().join("tmux.sock") };
    let store = dir.path().join(".ucp");
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    let ucp = env!("CARGO_BIN_EXE_ucp");
    let indexed =
        Command::new(ucp).arg("--store").arg(&store).arg("index").arg(&guide).args(["--name", "guide"]).output();
    assert!(indexed.unwrap().status.success());
    // A home of its own: the user's configuration stays out.
    let tui = format!("env HOME={} {ucp} --store {} tui --doc guide", dir.path().display(), store.display());
    tmux.start("main", &pane_command(dir.path(), &tui));

    tmux.wait_for("main", "Tree: guide");
    tmux.keys("main", &["/"]);
    tmux.text("main", "token budget");
    tmux.keys("main", &["Enter"]);
    tmux.wait_for("main", "hits for token budget");
    tmux.keys("main", &["Enter"]);
    let screen = tmux.wait("main", "hits for token budget", false);
    assert!(screen.contains("Block"), "Enter jumps to the hit and closes the search:\n{screen}");

    tmux.keys("main", &["Tab"]);
    tmux.wait_for("main", "Question on guide");
    tmux.text("main", "How does the context window stay within its token budget?");
    tmux.keys("main", &["Down", "BSpace", "BSpace", "BSpace", "BSpace"]);
    tmux.text("main", "800");
    tmux.keys("main", &["Enter"]);
    let screen = tmux.wait_for("main", " / 800 tokens");
    let used: usize = screen
        .split(" / 800 tokens")
        .next()
        .and_then(|before| before.split(|c: char| !c.is_ascii_digit()).rfind(|s| !s.is_empty()))
        .and_then(|n| n.parse().ok())
        .expect("the budget bar shows the tokens used");
    assert!((1..=800).contains(&used), "{used} tokens in an 800-token budget:\n{screen}");
    assert!(screen.contains("Rendered"), "{screen}");

    tmux.keys("main", &["Escape", "q"]);
    let screen = tmux.wait_for("main", "restored=");
    assert!(screen.contains("exit=0"), "{screen}");
    assert!(screen.contains("restored=yes"), "the terminal's mode is as before:\n{screen}");
    assert!(!screen.contains("Tree: guide"), "the alternate screen is left:\n{screen}");
    assert_eq!(tmux.run(&["display", "-p", "-t", "main", "#{alternate_on}"]).trim(), "0");

    // SIGTERM: the terminal is put back all the same.
    std::fs::remove_file(dir.path().join("pid")).unwrap();
    tmux.start("term", &pane_command(dir.path(), &tui));
    tmux.wait_for("term", "Tree: guide");
    let pid = std::fs::read_to_string(dir.path().join("pid")).unwrap();
    assert!(Command::new("kill").args(["-TERM", pid.trim()]).status().unwrap().success());
    let screen = tmux.wait_for("term", "restored=");
    assert!(screen.contains("restored=yes"), "{screen}");
    assert_eq!(tmux.run(&["display", "-p", "-t", "term", "#{alternate_on}"]).trim(), "0");

    // The terminal goes away (the window is closed): the program ends
    // instead of spinning on a terminal that is gone.
    std::fs::remove_file(dir.path().join("pid")).unwrap();
    tmux.start("hup", &pane_command(dir.path(), &tui));
    tmux.wait_for("hup", "Tree: guide");
    let pid = std::fs::read_to_string(dir.path().join("pid")).unwrap();
    tmux.run(&["kill-window", "-t", "hup"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while Command::new("kill").args(["-0", pid.trim()]).output().unwrap().status.success() {
        assert!(Instant::now() < deadline, "ucp tui outlived its terminal");
        std::thread::sleep(Duration::from_millis(100));
    }
}
