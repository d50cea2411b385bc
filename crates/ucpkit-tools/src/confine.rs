//! The sandbox around a whole agent (`ucp agent --sandbox`, `ucp acp
//! --sandbox`, `ucp mcp --sandbox`): the agent runs again as a child in
//! namespaces of its own, made between fork and exec:
//!
//! - a **user**, a **PID** (the agent is its process 1, with a `/proc`
//!   of its own) and a **mount namespace**, where each denied path (by
//!   default `~/.ssh`, `~/.aws`, `~/.config/gcloud`, `~/.gnupg`,
//!   `~/.netrc`, `~/.docker/config.json`, `~/.kube` and every `.env` file
//!   of the workspace) is covered: a folder by an empty read-only tmpfs,
//!   a file by `/dev/null`, then locked by a user namespace below (its
//!   root cannot unmount them);
//! - a **network namespace** with only loopback: the model's endpoint and
//!   the allowed hosts are reached through forwarders — inside, a local
//!   address per host (named in a private `/etc/hosts`); outside, a
//!   forwarder that connects to that host and port and nowhere else;
//! - **limits**: memory (each process's data: `RLIMIT_DATA`, which
//!   runtimes that reserve address space they never touch, V8, still
//!   meet), processes (a pids cgroup of its
//!   own where one can be made — root is held by nothing else — and
//!   `RLIMIT_NPROC`), and wall-clock time (the child is killed when it
//!   runs past it); whatever is left in its cgroup when it ends is killed;
//! - **seccomp**: the calls that reach past a sandbox (ptrace, bpf,
//!   kernel modules and keyrings, `open_by_handle_at`, kexec ...) fail.
//!
//! Its commands and MCP servers run in the nested sandbox of
//! [`crate::Sandbox`] ([`Inside::child_sandbox`]): Landlock lets them
//! write only under the workspace, the sandbox's scratch folder and
//! `/dev`, and the store is bound read-only. The agent process itself is
//! not Landlocked (its children's sandboxes need mounts, which Landlock
//! forbids): its own writes go through the workspace jail.

use std::ffi::CString;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::os::fd::{AsRawFd as _, FromRawFd as _};
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::sandbox::{c_path, locked_flags};
use crate::sys::{check, write_proc};
use crate::ToolError;

/// The variable that tells the child it runs inside, and how.
pub const INSIDE_VAR: &str = "UCP_SANDBOX";

/// Paths under the home folder denied by default.
pub const DENIED_IN_HOME: &[&str] =
    &[".ssh", ".aws", ".config/gcloud", ".gnupg", ".netrc", ".docker/config.json", ".kube"];

/// System calls that fail inside (`EPERM`).
const DENIED_CALLS: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
];

/// A name no other sandbox of this process takes.
pub(crate) fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
}

/// Whether the process limit holds here: for a user other than root the
/// rlimit does; root is held only by a pids cgroup, which must be makeable.
pub fn process_limit_holds() -> bool {
    // SAFETY: getuid touches no memory.
    (unsafe { libc::getuid() }) != 0 || crate::pids::PidsGroup::make(1).is_some()
}

/// A host and port the agent may reach.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    /// A name, or a loopback address.
    pub host: String,
    /// The port.
    pub port: u16,
}

impl std::str::FromStr for Endpoint {
    type Err = String;

    /// `host:port` (or `[v6]:port`).
    fn from_str(text: &str) -> Result<Self, String> {
        let (host, port) = text.rsplit_once(':').ok_or_else(|| format!("{text:?} is not host:port"))?;
        let port = port.parse().map_err(|_| format!("{text:?} has no valid port"))?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(format!("{text:?} has no host"));
        }
        Ok(Endpoint { host: host.to_owned(), port })
    }
}

/// What the sandbox allows and denies.
#[derive(Debug, Clone, Default)]
pub struct AgentSandbox {
    /// The workspace: its commands write here.
    pub workspace: PathBuf,
    /// Paths nothing inside reads (missing ones are skipped).
    pub deny_read: Vec<PathBuf>,
    /// The hosts it may reach (the model's endpoints among them).
    pub hosts: Vec<Endpoint>,
    /// Most bytes of data (writable memory) of each process (`None`: no limit).
    pub memory_bytes: Option<u64>,
    /// Most processes and threads.
    pub max_processes: u64,
    /// Most wall-clock time (`None`: no limit).
    pub time_limit: Option<Duration>,
}

/// How the child finds its sandbox (passed in [`INSIDE_VAR`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Inside {
    /// Its scratch folder (its `TMPDIR`).
    pub scratch: PathBuf,
    /// Each local address, and the socket its forwarder connects it to.
    pub forwards: Vec<(SocketAddr, PathBuf)>,
}

/// A mount the child makes.
struct Cover {
    target: CString,
    /// A folder (an empty tmpfs), else a file (`/dev/null` bound on it).
    folder: bool,
    /// The flags a read-only remount of a file's bind must keep.
    locked: libc::c_ulong,
}

impl AgentSandbox {
    /// The default denied paths under `home`, and the `.env` files of the
    /// workspace (found now: later ones are the guard rules' to deny).
    pub fn default_denied(home: Option<&Path>, workspace: &Path) -> Vec<PathBuf> {
        let mut denied: Vec<PathBuf> =
            home.map(|h| DENIED_IN_HOME.iter().map(|p| h.join(p)).collect()).unwrap_or_default();
        let walk =
            ignore::WalkBuilder::new(workspace).standard_filters(false).hidden(false).max_depth(Some(12)).build();
        for entry in walk.flatten() {
            let name = entry.file_name().to_string_lossy();
            if (name == ".env" || name.starts_with(".env.")) && entry.file_type().is_some_and(|t| t.is_file()) {
                denied.push(entry.into_path());
            }
        }
        denied
    }

    /// Whether the sandbox can be made here: a command run inside an
    /// empty one, or why not.
    pub fn available() -> Result<(), ToolError> {
        let dir = tempfile::tempdir().map_err(|e| ToolError::Arguments(format!("no scratch folder: {e}")))?;
        let sandbox = AgentSandbox { workspace: dir.path().to_owned(), max_processes: 64, ..AgentSandbox::default() };
        let mut probe = Command::new("true");
        probe.stdin(std::process::Stdio::null());
        match sandbox.run(probe)? {
            0 => Ok(()),
            code => Err(ToolError::Arguments(format!("a command in the agent sandbox exited with {code}"))),
        }
    }

    /// Runs `command` (the agent, started again) inside and waits for it;
    /// returns its exit code (128 + the signal when killed). Refused when
    /// the kernel cannot make the sandbox.
    pub fn run(&self, mut command: Command) -> Result<i32, ToolError> {
        let fail =
            |what: &str, e: &dyn std::fmt::Display| ToolError::Arguments(format!("the agent sandbox: {what}: {e}"));
        let scratch =
            tempfile::Builder::new().prefix("ucp-sandbox-").tempdir().map_err(|e| fail("no scratch folder", &e))?;
        let net = scratch.path().join("net");
        std::fs::create_dir(&net).map_err(|e| fail("no scratch folder", &e))?;
        // The allowed names first (a name is taken from its first line:
        // an allowed `localhost` goes through its forwarder too).
        let mut hosts_file = String::new();
        let mut forwards = Vec::new();
        let mut named: Vec<(&str, IpAddr)> = Vec::new();
        for (n, endpoint) in self.hosts.iter().enumerate() {
            let local = match endpoint.host.parse::<IpAddr>() {
                Ok(ip) if ip.is_loopback() => ip,
                Ok(ip) => return Err(fail("hosts are reached by name or on a loopback address", &ip)),
                // One address per name, whatever its ports.
                Err(_) => match named.iter().find(|(host, _)| *host == endpoint.host) {
                    Some((_, ip)) => *ip,
                    None => {
                        let [a, b] =
                            u16::try_from(named.len() + 2).map_err(|e| fail("too many hosts", &e))?.to_be_bytes();
                        let ip = IpAddr::V4(Ipv4Addr::new(127, 0, a, b));
                        hosts_file.push_str(&format!("{ip}\t{}\n", endpoint.host));
                        named.push((&endpoint.host, ip));
                        ip
                    }
                },
            };
            let socket = net.join(format!("{n}.sock"));
            let listener = UnixListener::bind(&socket).map_err(|e| fail("no forwarder", &e))?;
            let target = endpoint.clone();
            std::thread::Builder::new()
                .spawn(move || crate::forward::forward_out(listener, target))
                .map_err(|e| fail("no forwarder", &e))?;
            forwards.push((SocketAddr::new(local, endpoint.port), socket));
        }
        hosts_file.push_str("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n");
        let hosts = scratch.path().join("hosts");
        std::fs::write(&hosts, hosts_file).map_err(|e| fail("no hosts file", &e))?;
        let inside = Inside { scratch: scratch.path().to_owned(), forwards };
        command.env(INSIDE_VAR, serde_json::to_string(&inside).map_err(|e| fail("cannot describe", &e))?);
        command.env("TMPDIR", scratch.path());
        let group = crate::pids::PidsGroup::make(self.max_processes);
        // SAFETY: getuid touches no memory.
        if group.is_none() && unsafe { libc::getuid() } == 0 {
            eprintln!("ucp: no pids cgroup can be made here, and root is not held to a process limit: the sandbox does not limit processes");
        }
        let setup = self.setup(&hosts, group.as_ref().map(|g| g.procs().clone()))?;
        // SAFETY: the closure runs between fork and exec and only makes
        // system calls on memory prepared before the fork.
        unsafe {
            command.pre_exec(move || setup.enter());
        }
        let mut child = command.spawn().map_err(|e| fail("the agent did not start", &e))?;
        // A handle on the process itself: a signal sent through it after
        // the child is reaped fails, and never reaches a reused pid.
        // SAFETY: pidfd_open takes plain integers; the fd is owned below.
        let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, child.id(), 0) };
        let pidfd = (pidfd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(pidfd as i32) });
        let (done, finished) = std::sync::mpsc::channel::<()>();
        if let (Some(limit), Some(pidfd)) = (self.time_limit, pidfd) {
            let watcher = std::thread::Builder::new().spawn(move || {
                if finished.recv_timeout(limit).is_err() {
                    eprintln!("ucp: the sandboxed agent ran past its time limit of {} s; stopping it", limit.as_secs());
                    // SAFETY: a valid pidfd, a signal number, no info.
                    unsafe {
                        libc::syscall(
                            libc::SYS_pidfd_send_signal,
                            pidfd.as_raw_fd(),
                            libc::SIGKILL,
                            std::ptr::null::<u8>(),
                            0,
                        )
                    };
                }
            });
            if let Err(e) = watcher {
                // An agent nothing holds to its time limit does not run.
                let _ = child.kill();
                let _ = child.wait();
                return Err(fail("cannot watch its time limit", &e));
            }
        }
        // The terminal's Ctrl-C is the agent's to handle (it stops after
        // the current call); this process waits for it to end.
        // SAFETY: setting a signal's disposition to ignore.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            libc::signal(libc::SIGTERM, libc::SIG_IGN);
        }
        let status = child.wait().map_err(|e| fail("lost the agent", &e))?;
        let _ = done.send(());
        // Whatever the agent left running goes with its group.
        drop(group);
        use std::os::unix::process::ExitStatusExt as _;
        Ok(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
    }

    /// Everything the child does before exec, made ready.
    fn setup(&self, hosts: &Path, group: Option<CString>) -> Result<Setup, ToolError> {
        let mut covers = Vec::new();
        for path in &self.deny_read {
            let Ok(meta) = std::fs::metadata(path) else { continue };
            let real = path.canonicalize().unwrap_or_else(|_| path.clone());
            let locked = if meta.is_dir() { 0 } else { locked_flags(&real)? };
            covers.push(Cover { target: c_path(&real)?, folder: meta.is_dir(), locked });
        }
        let etc_hosts = match Path::new("/etc/hosts").canonicalize() {
            Ok(etc) => Some((c_path(hosts)?, c_path(&etc)?, locked_flags(&etc)?)),
            Err(_) => None,
        };
        // SAFETY: getuid and getgid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let line = |id: u32| CString::new(format!("{id} {id} 1")).expect("digits hold no NUL");
        let arch = seccompiler::TargetArch::try_from(std::env::consts::ARCH)
            .map_err(|e| ToolError::Arguments(format!("the agent sandbox: {e}")))?;
        let rules = DENIED_CALLS.iter().map(|call| (*call, Vec::new())).collect();
        let filter = seccompiler::SeccompFilter::new(
            rules,
            seccompiler::SeccompAction::Allow,
            seccompiler::SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )
        .and_then(seccompiler::BpfProgram::try_from)
        .map_err(|e| ToolError::Arguments(format!("the agent sandbox: seccomp: {e}")))?;
        Ok(Setup {
            group,
            maps: (line(uid), line(gid)),
            covers,
            hosts: etc_hosts,
            memory: self.memory_bytes,
            processes: self.max_processes.min(hard_process_limit()),
            filter,
        })
    }
}

/// What the child does between fork and exec.
struct Setup {
    /// The `cgroup.procs` of its pids group, to join first.
    group: Option<CString>,
    maps: (CString, CString),
    covers: Vec<Cover>,
    /// The private hosts file, `/etc/hosts` it is bound on, and the
    /// flags its read-only remount must keep.
    hosts: Option<(CString, CString, libc::c_ulong)>,
    memory: Option<u64>,
    processes: u64,
    filter: seccompiler::BpfProgram,
}

impl Setup {
    fn enter(&self) -> std::io::Result<()> {
        let none = std::ptr::null();
        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        // SAFETY: system calls on valid NUL-terminated strings and plain
        // structs made before the fork; nothing is allocated.
        unsafe {
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            if let Some(procs) = &self.group {
                write_proc(procs, c"0")?;
            }
            if let Some(bytes) = self.memory {
                check(libc::setrlimit(libc::RLIMIT_DATA, &libc::rlimit { rlim_cur: bytes, rlim_max: bytes }))?;
            }
            check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWNET | libc::CLONE_NEWPID))?;
            self.map_ids()?;
            // Counted in the new namespace only (set before it, the user's
            // tasks elsewhere would count against it too).
            let processes = libc::rlimit { rlim_cur: self.processes, rlim_max: self.processes };
            check(libc::setrlimit(libc::RLIMIT_NPROC, &processes))?;
            check(libc::mount(none, c"/".as_ptr(), none, libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()))?;
            for cover in &self.covers {
                let target = cover.target.as_ptr();
                if cover.folder {
                    let options = c"size=4k,mode=0500";
                    check(libc::mount(
                        c"tmpfs".as_ptr(),
                        target,
                        c"tmpfs".as_ptr(),
                        flags | libc::MS_RDONLY,
                        options.as_ptr().cast(),
                    ))?;
                } else {
                    check(libc::mount(c"/dev/null".as_ptr(), target, none, libc::MS_BIND, std::ptr::null()))?;
                    let remount = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY;
                    check(libc::mount(none, target, none, remount | cover.locked, std::ptr::null()))?;
                }
            }
            if let Some((file, etc, locked)) = &self.hosts {
                check(libc::mount(file.as_ptr(), etc.as_ptr(), none, libc::MS_BIND, std::ptr::null()))?;
                let remount = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY;
                check(libc::mount(none, etc.as_ptr(), none, remount | locked, std::ptr::null()))?;
            }
            loopback_up()?;
            // The agent is process 1 of the new PID namespace: this process
            // stands by it and exits as it does.
            match libc::fork() {
                -1 => return Err(std::io::Error::last_os_error()),
                0 => {}
                agent => stand_by(agent),
            }
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
            // A /proc of its own namespace: the host's would show other
            // processes, and through `/proc/PID/root` their uncovered files.
            check(libc::mount(c"proc".as_ptr(), c"/proc".as_ptr(), c"proc".as_ptr(), flags, std::ptr::null()))?;
            // A namespace below, where the mounts above are locked: its
            // root cannot unmount a cover to see what lies beneath.
            check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS))?;
            self.map_ids()?;
        }
        // Not `Error::other`: nothing may be allocated here.
        seccompiler::apply_filter(&self.filter).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
    }

    /// Maps the user and group to themselves in a new user namespace.
    fn map_ids(&self) -> std::io::Result<()> {
        write_proc(c"/proc/self/setgroups", c"deny")?;
        write_proc(c"/proc/self/uid_map", &self.maps.0)?;
        write_proc(c"/proc/self/gid_map", &self.maps.1)
    }
}

/// The hard `RLIMIT_NPROC` now (a limit cannot be raised past it).
fn hard_process_limit() -> u64 {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `limit` is a valid rlimit to fill.
    match unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut limit) } {
        0 => limit.rlim_max,
        _ => u64::MAX,
    }
}

/// The process between the sandbox's owner and the agent: it holds no
/// file (so the owner's spawn returns once the agent runs), leaves the
/// terminal's signals to the agent, and exits as the agent does.
///
/// # Safety
/// Only in the forked child, between fork and exec: it never returns.
unsafe fn stand_by(agent: libc::pid_t) -> ! {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGPIPE] {
        libc::signal(signal, libc::SIG_IGN);
    }
    crate::keeper::close_all_but(&[]);
    let mut status = 0;
    loop {
        match libc::waitpid(agent, &mut status, 0) {
            pid if pid == agent => crate::keeper::exit_as(Some(status)),
            -1 if *libc::__errno_location() == libc::EINTR => continue,
            _ => crate::keeper::exit_as(None),
        }
    }
}

/// Brings the new network namespace's loopback up.
///
/// # Safety
/// Plain system calls; allocation-free.
unsafe fn loopback_up() -> std::io::Result<()> {
    let socket = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
    check(socket)?;
    let mut request: libc::ifreq = std::mem::zeroed();
    for (to, from) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *to = *from as libc::c_char;
    }
    let result = (|| {
        check(libc::ioctl(socket, libc::SIOCGIFFLAGS, &mut request))?;
        request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        check(libc::ioctl(socket, libc::SIOCSIFFLAGS, &request))
    })();
    libc::close(socket);
    result
}

impl Inside {
    /// The sandbox this process runs in, when it was started inside one.
    /// Refused when the variable says so and this process is not in a
    /// user namespace of its own (the variable alone proves nothing).
    pub fn current() -> Result<Option<Inside>, ToolError> {
        let Ok(text) = std::env::var(INSIDE_VAR) else { return Ok(None) };
        let map = std::fs::read_to_string("/proc/self/uid_map").unwrap_or_default();
        let initial = map.split_whitespace().collect::<Vec<_>>() == ["0", "0", "4294967295"];
        if initial {
            return Err(ToolError::Arguments(format!("{INSIDE_VAR} is set, but this process is not in a sandbox")));
        }
        serde_json::from_str(&text).map(Some).map_err(|e| ToolError::Arguments(format!("{INSIDE_VAR}: {e}")))
    }

    /// Starts the forwarders: a listener on each local address, carried
    /// to its socket (the outside forwarder). Called first thing inside.
    pub fn start_forwarders(&self) -> std::io::Result<()> {
        for (address, socket) in &self.forwards {
            let listener = TcpListener::bind(address)?;
            let socket = socket.clone();
            std::thread::Builder::new().spawn(move || crate::forward::forward_in(listener, socket))?;
        }
        Ok(())
    }

    /// The sandbox its commands and MCP servers run in: Landlock writes
    /// under the workspace, this scratch folder and `/dev`; the network of
    /// the agent's namespace (the forwarders) when `network`.
    pub fn child_sandbox(&self, network: bool) -> crate::Sandbox {
        // The forwarders' sockets are covered: commands have no network.
        let hidden = self.forwards.first().and_then(|(_, socket)| socket.parent()).map(Path::to_owned);
        crate::Sandbox { network, scratch: Some(self.scratch.clone()), hidden }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_read_as_host_and_port() {
        assert_eq!("api.example.com:443".parse(), Ok(Endpoint { host: "api.example.com".into(), port: 443 }));
        assert_eq!("[::1]:8080".parse(), Ok(Endpoint { host: "::1".into(), port: 8080 }));
        assert!("example.com".parse::<Endpoint>().is_err());
        assert!(":80".parse::<Endpoint>().is_err());
        assert!("x:http".parse::<Endpoint>().is_err());
    }

    #[test]
    fn the_default_denied_paths_hold_the_home_secrets_and_env_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("app/.git")).unwrap();
        std::fs::write(dir.path().join("app/.env"), "KEY=1").unwrap();
        std::fs::write(dir.path().join(".env.local"), "KEY=1").unwrap();
        std::fs::write(dir.path().join(".envrc"), "x").unwrap();
        let denied = AgentSandbox::default_denied(Some(Path::new("/home/u")), dir.path());
        assert!(denied.contains(&PathBuf::from("/home/u/.ssh")) && denied.contains(&PathBuf::from("/home/u/.aws")));
        assert!(denied.contains(&PathBuf::from("/home/u/.config/gcloud")));
        assert!(denied.contains(&dir.path().join("app/.env")) && denied.contains(&dir.path().join(".env.local")));
        assert!(!denied.contains(&dir.path().join(".envrc")));
    }
}
