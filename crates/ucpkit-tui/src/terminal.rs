//! The terminal: raw mode and the alternate screen while the program
//! runs, put back on every way out (a normal quit, an error, a panic,
//! SIGTERM, SIGHUP, SIGINT or a terminal that went away); the loop that
//! reads keys, takes in the jobs' messages and draws.

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{self, DisableBracketedPaste, EnableBracketedPaste, Event};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use crate::app::App;

/// How the loop runs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Write timings here as JSON lines: the first frame's time after
    /// `started`, each key's time to its frame, the peak memory at the end.
    pub timings: Option<PathBuf>,
    /// When the program started (the loop's own start when `None`).
    pub started: Option<Instant>,
}

/// Longest the program waits, after the terminal is put back, for jobs
/// still running.
const QUIT_WAIT: Duration = Duration::from_secs(10);

/// Puts the terminal back as it was.
fn restore() {
    let _ = terminal::disable_raw_mode();
    let _ = execute!(std::io::stdout(), DisableBracketedPaste, LeaveAlternateScreen, cursor::Show);
}

/// Holds the terminal in raw mode on the alternate screen; dropping it
/// puts the terminal back.
struct Guard;

impl Guard {
    fn enter() -> std::io::Result<Guard> {
        terminal::enable_raw_mode()?;
        let guard = Guard;
        execute!(std::io::stdout(), EnterAlternateScreen, EnableBracketedPaste)?;
        // A panic of this thread (the screen's) puts the terminal back
        // before its message is printed; a job's panic is the job's
        // failure, reported on the screen.
        let screen = std::thread::current().id();
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().id() == screen {
                restore();
                previous(info);
            }
        }));
        Ok(guard)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Timings, as JSON lines, when asked for.
struct Timings(Option<std::fs::File>);

impl Timings {
    fn record(&mut self, line: serde_json::Value) {
        if let Some(file) = &mut self.0 {
            let _ = writeln!(file, "{line}");
        }
    }
}

/// Peak resident memory of this process in kB (Linux), if known.
fn peak_memory_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// How long the loop has, after SIGTERM, SIGHUP or SIGINT, to leave by
/// itself before the signal's thread puts the terminal back and ends the
/// process: once the terminal is gone, crossterm's read of it never
/// returns (crossterm-rs/crossterm#793), so the loop cannot notice.
const SIGNAL_GRACE: Duration = Duration::from_secs(1);

/// Raises `stop` on SIGTERM, SIGHUP or SIGINT; when the loop has not
/// `left` within [`SIGNAL_GRACE`], restores the terminal and exits.
fn watch_signals(stop: Arc<AtomicBool>, left: Arc<AtomicBool>) -> std::io::Result<signal_hook::iterator::Handle> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT])?;
    let handle = signals.handle();
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            stop.store(true, Ordering::SeqCst);
            std::thread::sleep(SIGNAL_GRACE);
            if !left.load(Ordering::SeqCst) {
                restore();
                std::process::exit(128 + signal);
            }
        }
    });
    Ok(handle)
}

/// Runs `app` on this process's terminal until the person quits.
pub fn run(app: &mut App, options: &Options) -> std::io::Result<()> {
    let started = options.started.unwrap_or_else(Instant::now);
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(std::io::Error::other("ucp tui needs a terminal (stdin and stdout)"));
    }
    let mut timings = Timings(match &options.timings {
        Some(path) => Some(std::fs::File::create(path)?),
        None => None,
    });
    let stop = Arc::new(AtomicBool::new(false));
    let left = Arc::new(AtomicBool::new(false));
    let signals = watch_signals(stop.clone(), left.clone())?;
    let _guard = Guard::enter()?;
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    terminal.clear()?;
    app.live = true;
    let mut dirty = true;
    let mut first = true;
    let mut key_at: Option<Instant> = None;
    while !app.quit && !stop.load(Ordering::Relaxed) {
        if dirty {
            terminal.draw(|frame| crate::draw::draw(app, frame))?;
            dirty = false;
            if first {
                first = false;
                timings.record(serde_json::json!({ "first_frame_ms": started.elapsed().as_secs_f64() * 1000.0 }));
            }
            if let Some(at) = key_at.take() {
                timings.record(serde_json::json!({
                    "key_to_frame_us": at.elapsed().as_micros() as u64,
                    "busy": !app.busy.is_empty(),
                }));
            }
        }
        // The spinner turns while a job runs; otherwise wait for a key
        // or a message.
        let wait = if app.busy.is_empty() { Duration::from_millis(50) } else { Duration::from_millis(20) };
        if event::poll(wait)? {
            key_at.get_or_insert_with(Instant::now);
            // Every event waiting is taken before the next frame.
            loop {
                match event::read()? {
                    Event::Key(key) => app.on_key(key),
                    Event::Paste(text) => app.on_paste(&text),
                    Event::Resize(..) | Event::FocusGained | Event::FocusLost | Event::Mouse(_) => {}
                }
                if app.quit || !event::poll(Duration::ZERO)? {
                    break;
                }
            }
            dirty = true;
        }
        dirty |= app.absorb();
        dirty |= !app.busy.is_empty();
    }
    left.store(true, Ordering::SeqCst);
    signals.close();
    app.agent_pane.cancel();
    drop(terminal);
    drop(_guard);
    // A write under way (a UCL script, a saved session, a transcript) is
    // let finish, within a bound.
    if !app.busy.is_empty() {
        eprintln!("ucp: letting {} job(s) finish…", app.busy.len());
        app.settle(QUIT_WAIT);
    }
    timings.record(serde_json::json!({ "peak_memory_kb": peak_memory_kb() }));
    Ok(())
}
