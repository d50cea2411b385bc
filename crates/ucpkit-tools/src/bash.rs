//! `bash`: a shell command run in a folder of the workspace, in a session
//! of its own (no controlling terminal), from a clean environment (only
//! [`PASSED_ENV`] and the names the user passes on), with a timeout, its
//! output (stdout and stderr in the order written) capped with the tail
//! kept. Each command runs under a keeper (the `keeper` module) that kills
//! everything the command started when it exits, times out or is killed,
//! and when its owner's process ends, however it ends.
//! A command may run in the background (at most [`MAX_RUNNING_JOBS`] at
//! once): it gets an id to poll and kill.
//! With a [`Sandbox`], every command runs inside it.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::keeper::{status_of, Kept};
use crate::sandbox::{Prepared, Sandbox};
use crate::{ToolError, Tools};

/// Timeout of a command that asks for none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Output bytes kept of one command (its tail).
const KEPT_OUTPUT_BYTES: usize = 256 * 1024;

/// How long the output of an exited command may take to drain.
const DRAIN_WAIT: Duration = Duration::from_millis(500);

/// Background jobs that may run at once for one [`Tools`].
pub const MAX_RUNNING_JOBS: usize = 8;

/// Ended background jobs kept for a poll; past it the oldest are dropped.
const MAX_ENDED_JOBS: usize = 16;

/// The environment variables a command gets from the server's (besides
/// `LC_*` and the names the user passes on): nothing that may hold a
/// secret (tokens and API keys stay with the server).
pub const PASSED_ENV: &[&str] =
    &["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR"];

/// Limits of bash calls.
#[derive(Debug, Clone)]
pub(crate) struct BashConfig {
    pub(crate) max_timeout: Duration,
    pub(crate) sandbox: Option<Sandbox>,
    /// Names of more environment variables commands get.
    pub(crate) passed_env: Vec<String>,
}

impl Default for BashConfig {
    fn default() -> Self {
        BashConfig { max_timeout: Duration::from_secs(600), sandbox: None, passed_env: Vec::new() }
    }
}

impl BashConfig {
    /// `command` with only the variables commands may see.
    fn environment(&self, command: &mut Command) {
        command.env_clear();
        for (name, value) in std::env::vars_os() {
            let passed = name.to_str().is_some_and(|name| {
                PASSED_ENV.contains(&name) || name.starts_with("LC_") || self.passed_env.iter().any(|p| p == name)
            });
            if passed {
                command.env(name, value);
            }
        }
    }
}

/// A bash call.
#[derive(Debug, Clone, Default)]
pub struct BashRequest {
    /// The command line, run by `bash -c`.
    pub command: String,
    /// Working folder, relative to the root (default: the root).
    pub cwd: Option<String>,
    /// Most time it may take (default [`DEFAULT_TIMEOUT`], at most the
    /// server's maximum).
    pub timeout: Option<Duration>,
    /// Start it and return its job id at once.
    pub background: bool,
}

/// Where a command stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum JobStatus {
    /// Still running (background jobs only).
    Running,
    /// Ended with an exit code.
    Exited {
        /// The exit code.
        code: i32,
    },
    /// Ended by a signal.
    Killed {
        /// The signal number.
        signal: i32,
    },
    /// Killed because it ran past its timeout.
    TimedOut,
}

/// A bash answer.
#[derive(Debug, Clone, Serialize)]
pub struct BashResult {
    /// The background job's id, for a background command.
    pub job: Option<u64>,
    /// Where the command stands.
    pub status: JobStatus,
    /// The output (its tail when long).
    pub output: String,
    /// Bytes of output left out from the start.
    pub cut_bytes: u64,
    /// Time it ran so far, in milliseconds.
    pub elapsed_ms: u64,
    /// The compact text form.
    pub text: String,
}

/// The last bytes of a stream, and how many came before them.
#[derive(Default)]
struct Tail {
    bytes: Vec<u8>,
    dropped: u64,
    /// Bytes a background poll has already returned.
    polled: u64,
    closed: bool,
}

impl Tail {
    fn push(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
        if self.bytes.len() > KEPT_OUTPUT_BYTES {
            let extra = self.bytes.len() - KEPT_OUTPUT_BYTES;
            self.bytes.drain(..extra);
            self.dropped += extra as u64;
        }
    }
}

/// A started command: its keeper and its output.
struct Running {
    kept: Kept,
    output: Arc<Mutex<Tail>>,
    /// How it ended, once it has.
    ended: Option<JobStatus>,
    started: Instant,
    deadline: Instant,
}

impl Running {
    fn start(
        config: &BashConfig,
        command: &str,
        cwd: (std::os::fd::OwnedFd, &std::path::Path),
        timeout: Duration,
        sandbox: Option<Prepared>,
    ) -> Result<Self, ToolError> {
        let (reader, writer) = std::io::pipe().map_err(|e| ToolError::io("cannot start", command, e))?;
        // The reader starts first: should the command not start, its end
        // of the pipe closes and the reader stops.
        let output = Arc::new(Mutex::new(Tail::default()));
        let sink = Arc::clone(&output);
        std::thread::Builder::new()
            .name("bash-output".into())
            .spawn(move || drain(reader, &sink))
            .map_err(|e| ToolError::io("no thread can read the output of", command, e))?;
        let mut shell = Command::new("bash");
        shell
            .arg("-c")
            .arg(command)
            .stdin(Stdio::null())
            .stdout(writer.try_clone().map_err(|e| ToolError::io("cannot start", command, e))?)
            .stderr(writer);
        config.environment(&mut shell);
        // `shell` goes with this process's copies of the pipe's write end.
        let kept = Kept::spawn(shell, cwd, sandbox).map_err(|e| ToolError::io("cannot start bash for", command, e))?;
        let started = Instant::now();
        Ok(Running { kept, output, ended: None, started, deadline: started + timeout })
    }

    /// Stops the command and everything it started.
    fn stop(&mut self) {
        self.kept.stop();
    }

    /// The status now, stopping the command when the deadline passed.
    fn check(&mut self) -> JobStatus {
        if let Some(ended) = self.ended {
            return ended;
        }
        let status = self.poll();
        if status != JobStatus::Running {
            self.ended = Some(status);
        }
        status
    }

    fn poll(&mut self) -> JobStatus {
        match self.kept.child.try_wait() {
            Ok(Some(status)) => status_of(status),
            Ok(None) if Instant::now() >= self.deadline => {
                self.stop();
                JobStatus::TimedOut
            }
            Ok(None) => JobStatus::Running,
            Err(_) => JobStatus::Killed { signal: libc::SIGKILL },
        }
    }

    /// Waits for the end (or the deadline), then for the output to drain.
    fn finish(mut self) -> (JobStatus, Self) {
        let status = loop {
            match self.check() {
                JobStatus::Running => std::thread::sleep(Duration::from_millis(5)),
                done => break done,
            }
        };
        let drained = Instant::now() + DRAIN_WAIT;
        while !self.output.lock().unwrap_or_else(|e| e.into_inner()).closed && Instant::now() < drained {
            std::thread::sleep(Duration::from_millis(2));
        }
        (status, self)
    }
}

fn drain(mut reader: std::io::PipeReader, sink: &Mutex<Tail>) {
    let mut buffer = [0u8; 8192];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => sink.lock().unwrap_or_else(|e| e.into_inner()).push(&buffer[..n]),
        }
    }
    sink.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
}

/// Background jobs of one [`Tools`]: a watcher thread kills those past
/// their deadline whether or not they are polled, and all are killed
/// when the `Tools` is dropped.
#[derive(Default)]
pub(crate) struct Jobs {
    next: AtomicU64,
    table: Arc<Mutex<JobTable>>,
}

#[derive(Default)]
struct JobTable {
    /// By id: the oldest first.
    jobs: BTreeMap<u64, Running>,
    /// A watcher thread is looking after the jobs.
    watched: bool,
}

/// How often the watcher looks at background jobs' deadlines.
const WATCH_EVERY: Duration = Duration::from_millis(50);

impl Jobs {
    fn lock(&self) -> std::sync::MutexGuard<'_, JobTable> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Refuses a new job while [`MAX_RUNNING_JOBS`] run, and drops the
    /// oldest ended jobs past [`MAX_ENDED_JOBS`].
    fn make_room(&self) -> Result<(), ToolError> {
        let mut table = self.lock();
        let mut ended: Vec<u64> = Vec::new();
        for (id, job) in table.jobs.iter_mut() {
            if job.check() != JobStatus::Running {
                ended.push(*id);
            }
        }
        let running = table.jobs.len() - ended.len();
        if running >= MAX_RUNNING_JOBS {
            let ids: Vec<String> = table.jobs.keys().filter(|id| !ended.contains(id)).map(u64::to_string).collect();
            return Err(ToolError::Arguments(format!(
                "{running} background jobs are running (at most {MAX_RUNNING_JOBS}): poll them for their end \
                 or kill one first (jobs {})",
                ids.join(", ")
            )));
        }
        for id in ended.iter().take(ended.len().saturating_sub(MAX_ENDED_JOBS - 1)) {
            table.jobs.remove(id);
        }
        Ok(())
    }

    /// Adds a job, starting the watcher when none runs. A job whose
    /// deadline nothing could watch is stopped and not added.
    fn add(&self, id: u64, mut job: Running) -> Result<(), ToolError> {
        let mut table = self.lock();
        if !table.watched {
            let weak = Arc::downgrade(&self.table);
            if let Err(e) = std::thread::Builder::new().name("bash-jobs".into()).spawn(move || watch(&weak)) {
                job.stop();
                return Err(ToolError::io("no thread can watch the deadline of job", id.to_string(), e));
            }
            table.watched = true;
        }
        table.jobs.insert(id, job);
        Ok(())
    }
}

/// Checks every job's deadline until none runs or the jobs are dropped.
fn watch(table: &std::sync::Weak<Mutex<JobTable>>) {
    loop {
        std::thread::sleep(WATCH_EVERY);
        let Some(table) = table.upgrade() else { return };
        let mut table = table.lock().unwrap_or_else(|e| e.into_inner());
        let mut running = false;
        for job in table.jobs.values_mut() {
            running |= job.check() == JobStatus::Running;
        }
        if !running {
            table.watched = false;
            return;
        }
    }
}

impl Drop for Jobs {
    fn drop(&mut self) {
        for job in self.lock().jobs.values_mut() {
            job.stop();
        }
    }
}

impl Tools {
    /// Runs a command (to its end, or in the background).
    pub fn bash(&self, request: &BashRequest) -> Result<BashResult, ToolError> {
        self.check_writable("bash")?;
        let cwd = self.jail.resolve(request.cwd.as_deref().unwrap_or("."))?;
        // A handle: the command starts in this very folder, whatever
        // becomes of its path meanwhile.
        let folder = self.jail.open_folder(&cwd, &self.jail.display(&cwd))?;
        let timeout = request.timeout.unwrap_or(DEFAULT_TIMEOUT);
        if timeout > self.bash.max_timeout || timeout.is_zero() {
            return Err(ToolError::Arguments(format!(
                "timeout must be between 1 ms and {} s",
                self.bash.max_timeout.as_secs()
            )));
        }
        if request.background {
            self.jobs.make_room()?;
        }
        let sandbox = self.bash.sandbox.as_ref().map(|s| s.prepare(&self.jail)).transpose()?;
        let running = Running::start(&self.bash, &request.command, (folder, &cwd), timeout, sandbox)?;
        if request.background {
            let id = self.jobs.next.fetch_add(1, Ordering::Relaxed) + 1;
            self.jobs.add(id, running)?;
            let text = format!("started job {id} in the background: poll it with job={id}, stop it with kill\n");
            return Ok(BashResult {
                job: Some(id),
                status: JobStatus::Running,
                output: String::new(),
                cut_bytes: 0,
                elapsed_ms: 0,
                text,
            });
        }
        let (status, running) = running.finish();
        Ok(self.answer(None, status, &running, false))
    }

    /// A background job's status and the output it wrote since the last
    /// poll; with `kill`, it and everything it started are killed first. A job that
    /// has ended is forgotten once polled.
    pub fn bash_job(&self, id: u64, kill: bool) -> Result<BashResult, ToolError> {
        let mut table = self.jobs.lock();
        let job = table.jobs.get_mut(&id).ok_or(ToolError::NoJob(id))?;
        if kill {
            job.stop();
        }
        let status = job.check();
        let result = self.answer(Some(id), status, job, true);
        if status != JobStatus::Running {
            table.jobs.remove(&id);
        }
        Ok(result)
    }

    /// The answer for a command: its status and output tail, within the cap.
    fn answer(&self, job: Option<u64>, status: JobStatus, running: &Running, since_poll: bool) -> BashResult {
        let (bytes, mut cut) = {
            let mut tail = running.output.lock().unwrap_or_else(|e| e.into_inner());
            let total = tail.dropped + tail.bytes.len() as u64;
            let from = if since_poll { tail.polled.max(tail.dropped) } else { tail.dropped };
            let skip = usize::try_from(from - tail.dropped).unwrap_or(0).min(tail.bytes.len());
            let cut = if since_poll { from.saturating_sub(tail.polled) } else { tail.dropped };
            tail.polled = total;
            (tail.bytes[skip..].to_vec(), cut)
        };
        let mut output = String::from_utf8_lossy(&bytes).into_owned();
        // Within the token cap: drop whole lines from the start.
        let room = self.max_tokens.saturating_sub(80);
        // Bytes bound tokens: most outputs are never counted.
        while output.len() > room && self.tokenizer().count(&output) > room {
            let quarter = output.len() / 4;
            let mut start = (quarter..output.len()).find(|&i| output.is_char_boundary(i)).unwrap_or(output.len());
            if let Some(newline) = output[start..].find('\n') {
                start += newline + 1;
            }
            cut += start as u64;
            output.drain(..start);
        }
        let elapsed_ms = u64::try_from(running.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut text = String::new();
        if cut > 0 {
            text.push_str(&format!("[output cut: the first {cut} bytes are left out, the tail follows]\n"));
        }
        text.push_str(&output);
        if !output.is_empty() && !output.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&match status {
            JobStatus::Running => format!("[job {} still running after {elapsed_ms} ms]\n", job.unwrap_or(0)),
            JobStatus::Exited { code } => format!("[exit code {code}, {elapsed_ms} ms]\n"),
            JobStatus::Killed { signal } => format!("[killed by signal {signal}, {elapsed_ms} ms]\n"),
            JobStatus::TimedOut => {
                format!("[timed out after {elapsed_ms} ms: the command and its children were killed]\n")
            }
        });
        BashResult { job, status, output, cut_bytes: cut, elapsed_ms, text }
    }
}
