//! The keeper: every command runs as the only child of a small process of
//! its own, forked between the fork and the exec of the command (so no
//! second program is needed).
//!
//! The keeper is a child subreaper: whatever the command starts stays its
//! descendant, even in a session of its own (`setsid`) or double-forked
//! away. It waits for two things: the command's end, and the end of its
//! control pipe, whose write end only the [`Kept`] handle holds. When the
//! command ends, or when the pipe closes — the job was stopped or timed
//! out, or its owner's process ended, however it ended, `kill -9`
//! included — it kills every process left and exits as the command did.
//! The command runs in a process group of its own (so `kill 0` in it
//! reaches the command, not the keeper) and dies with the keeper.

use std::io::{PipeReader, PipeWriter};
use std::os::fd::{AsRawFd as _, OwnedFd, RawFd};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use crate::sandbox::Prepared;
use crate::sys::{check, in_folder};

/// How long a keeper may take to clean up once told to stop.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// Rounds of killing a keeper makes at most (each kills every child left).
const KILL_ROUNDS: usize = 10_000;

/// Pauses of 10 ms a keeper that cannot list its children waits for them.
const UNLISTED_PAUSES: usize = 50;

/// A command started under its keeper.
pub(crate) struct Kept {
    /// The keeper (it exits as the command did).
    pub child: Child,
    /// The control pipe's write end: closing it stops the command.
    control: Option<PipeWriter>,
}

impl Kept {
    /// Starts `command` in the folder `cwd` (a handle on it, and its real
    /// path), under a keeper, inside `sandbox` when given.
    pub(crate) fn spawn(
        mut command: Command,
        cwd: (OwnedFd, &std::path::Path),
        sandbox: Option<Prepared>,
    ) -> std::io::Result<Kept> {
        use std::os::unix::ffi::OsStrExt as _;
        let (control_read, control_write) = std::io::pipe()?;
        let path = std::ffi::CString::new(cwd.1.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
        let setup = Setup { cwd: cwd.0, cwd_path: path, control: control_read, sandbox };
        // SAFETY: the closure runs in the child between fork and exec; it
        // only makes system calls on memory prepared before the fork (no
        // allocation, no locks), as `pre_exec` requires, and the keeper's
        // branch never returns: it exits.
        unsafe {
            command.pre_exec(move || setup.run());
        }
        let child = command.spawn()?;
        // `command` drops here, with this process's copy of the read end.
        Ok(Kept { child, control: Some(control_write) })
    }

    /// Stops the command and everything it started: the keeper is told
    /// (its control pipe closes), then killed if it has not ended in
    /// [`STOP_WAIT`] (the command dies with it).
    pub(crate) fn stop(&mut self) {
        self.control = None;
        let deadline = Instant::now() + STOP_WAIT;
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                _ => return,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the command to end (the keeper ends after it) and gives
    /// its status.
    pub(crate) fn wait(mut self) -> std::io::Result<ExitStatus> {
        self.child.wait()
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        if self.control.is_some() {
            self.stop();
        }
    }
}

/// What the child needs, made before the fork.
struct Setup {
    /// The working folder: a handle, and its real path (see `Setup::run`).
    cwd: OwnedFd,
    cwd_path: std::ffi::CString,
    control: PipeReader,
    sandbox: Option<Prepared>,
}

impl Setup {
    /// Runs in the forked child: becomes the keeper, forks the command
    /// (which returns to exec) and keeps it (never returns).
    fn run(&self) -> std::io::Result<()> {
        // SAFETY: see `Kept::spawn`: plain system calls after fork.
        unsafe {
            // A session of its own: no controlling terminal, so nothing the
            // command runs can read or type into the terminal the server
            // runs in (a prompt on /dev/tty fails at once).
            check(libc::setsid())?;
            match &self.sandbox {
                None => check(libc::fchdir(self.cwd.as_raw_fd()))?,
                Some(sandbox) => {
                    sandbox.enter_namespaces()?;
                    // By path, through the new mounts: a handle taken before
                    // them reaches under the read-only binds. It must still
                    // be the folder the handle is on.
                    check(libc::chdir(self.cwd_path.as_ptr()))?;
                    if !in_folder(self.cwd.as_raw_fd())? {
                        return Err(std::io::Error::from_raw_os_error(libc::ELOOP));
                    }
                }
            }
            check(libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))?;
            // Children are waited for, even when the owner ignores SIGCHLD.
            libc::signal(libc::SIGCHLD, libc::SIG_DFL);
            let keeper = libc::getpid();
            let control = self.control.as_raw_fd();
            match libc::fork() {
                -1 => Err(std::io::Error::last_os_error()),
                0 => {
                    // The command: dies with its keeper, in a group of its own.
                    check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
                    let parent = libc::getppid();
                    // Outside a PID namespace of its own its parent is the
                    // keeper, unless the keeper is already gone.
                    let own_namespace = self.sandbox.as_ref().is_some_and(Prepared::new_pid_namespace);
                    if !own_namespace && parent != keeper {
                        libc::_exit(127);
                    }
                    check(libc::setpgid(0, 0))?;
                    libc::close(control);
                    if let Some(sandbox) = &self.sandbox {
                        sandbox.restrict()?;
                    }
                    Ok(())
                }
                command => keep(command, control),
            }
        }
    }
}

/// The keeper's life: waits for the command or the control pipe's end,
/// kills whatever is left, and exits as the command did.
///
/// # Safety
/// Only in a forked child: it closes file descriptors and exits.
unsafe fn keep(command: libc::pid_t, control: RawFd) -> ! {
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGPIPE] {
        libc::signal(signal, libc::SIG_IGN);
    }
    let pidfd = i32::try_from(libc::syscall(libc::SYS_pidfd_open, command, 0)).unwrap_or(-1);
    close_all_but(&[control, pidfd]);
    let mut status: Option<libc::c_int> = None;
    let mut stopped = false;
    while status.is_none() {
        let mut fds = [
            libc::pollfd { fd: control, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: pidfd, events: libc::POLLIN, revents: 0 },
        ];
        // Without a pidfd (before Linux 5.3) the command's end is polled
        // for; with one, orphans handed to the keeper are reaped each second.
        let (count, timeout) = if pidfd >= 0 { (2, 1000) } else { (1, 20) };
        libc::poll(fds.as_mut_ptr(), count, timeout);
        reap(command, &mut status);
        if status.is_none() && fds[0].revents != 0 {
            stopped = true;
            break;
        }
    }
    kill_all(command, &mut status);
    exit_as(if stopped { None } else { status })
}

/// Reaps every child that ended; records the command's status.
unsafe fn reap(command: libc::pid_t, status: &mut Option<libc::c_int>) {
    loop {
        let mut code = 0;
        let pid = libc::waitpid(-1, &mut code, libc::WNOHANG);
        if pid <= 0 {
            return;
        }
        if pid == command {
            *status = Some(code);
        }
    }
}

/// Kills the command and every process left under the keeper, round after
/// round (a process's children come to the keeper when it dies), until no
/// child is left. Without `/proc` to list them, only the command's group
/// can be named: it is killed for a short while, then the keeper goes.
unsafe fn kill_all(command: libc::pid_t, status: &mut Option<libc::c_int>) {
    // Not once it is reaped: its pid may be another process's by now.
    if status.is_none() {
        libc::kill(command, libc::SIGKILL);
    }
    let mut code = 0;
    let mut pauses = 0;
    for _ in 0..KILL_ROUNDS {
        let listed = kill_children();
        if !listed {
            libc::kill(-command, libc::SIGKILL);
        }
        // One child ends (or, unlisted, none may yet), then every other
        // that has ended is reaped before the next round.
        let mut pid = libc::waitpid(-1, &mut code, if listed { 0 } else { libc::WNOHANG });
        while pid > 0 {
            if pid == command && status.is_none() {
                *status = Some(code);
            }
            pid = libc::waitpid(-1, &mut code, libc::WNOHANG);
        }
        if pid < 0 && *libc::__errno_location() == libc::ECHILD {
            return;
        }
        if !listed {
            pauses += 1;
            if pauses > UNLISTED_PAUSES {
                return;
            }
            let pause = libc::timespec { tv_sec: 0, tv_nsec: 10_000_000 };
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
    }
}

/// Sends SIGKILL to every child the keeper has (`/proc`'s list); false
/// when the list cannot be read.
unsafe fn kill_children() -> bool {
    let fd = libc::open(c"/proc/thread-self/children".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return false;
    }
    let mut buffer = [0u8; 4096];
    let mut pid: libc::pid_t = 0;
    loop {
        let read = libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len());
        if read <= 0 {
            break;
        }
        for &byte in &buffer[..read as usize] {
            if byte.is_ascii_digit() {
                pid = pid.saturating_mul(10).saturating_add(libc::pid_t::from(byte - b'0'));
            } else if pid > 0 {
                libc::kill(pid, libc::SIGKILL);
                pid = 0;
            }
        }
    }
    if pid > 0 {
        libc::kill(pid, libc::SIGKILL);
    }
    libc::close(fd);
    true
}

/// Closes every file descriptor but `keep` (negative ones are ignored):
/// the keeper holds no pipe its owner waits on, and none of another job's.
pub(crate) unsafe fn close_all_but(keep: &[RawFd]) {
    let mut kept: [RawFd; 2] = [-1, -1];
    for (slot, fd) in kept.iter_mut().zip(keep) {
        *slot = *fd;
    }
    kept.sort_unstable();
    let mut from: libc::c_uint = 0;
    for fd in kept.iter().filter(|fd| **fd >= 0) {
        let fd = *fd as libc::c_uint;
        if fd > from {
            close_range(from, fd - 1);
        }
        from = fd + 1;
    }
    close_range(from, libc::c_uint::MAX);
}

/// `close_range(2)` (Linux 5.9), else each descriptor up to the limit.
unsafe fn close_range(first: libc::c_uint, last: libc::c_uint) {
    if libc::syscall(libc::SYS_close_range, first, last, 0) == 0 {
        return;
    }
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    let top = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 { limit.rlim_cur.min(1 << 16) } else { 1024 };
    let top = libc::c_uint::try_from(top).unwrap_or(1024).min(last.saturating_add(1));
    for fd in first..top {
        libc::close(fd as RawFd);
    }
}

/// Ends the keeper as the command ended: its exit code, or its signal
/// (without a core dump); killed when the command was stopped.
pub(crate) unsafe fn exit_as(status: Option<libc::c_int>) -> ! {
    let signal = match status {
        Some(code) if libc::WIFEXITED(code) => libc::_exit(libc::WEXITSTATUS(code)),
        Some(code) if libc::WIFSIGNALED(code) => libc::WTERMSIG(code),
        _ => libc::SIGKILL,
    };
    let none = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    libc::setrlimit(libc::RLIMIT_CORE, &none);
    libc::signal(signal, libc::SIG_DFL);
    let mut set: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut set);
    libc::sigaddset(&mut set, signal);
    libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    libc::kill(libc::getpid(), signal);
    libc::_exit(128 + signal)
}

/// The status a keeper exited with, read as the command's.
pub(crate) fn status_of(status: ExitStatus) -> crate::JobStatus {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => crate::JobStatus::Exited { code },
        (None, Some(signal)) => crate::JobStatus::Killed { signal },
        (None, None) => crate::JobStatus::Killed { signal: 0 },
    }
}
