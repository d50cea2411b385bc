//! An OS sandbox for `bash`, from Linux facilities any user has:
//!
//! - **Landlock** lets the command write only under the workspace root,
//!   `/tmp` and `/dev` (reading and running stay allowed everywhere), and,
//!   where the kernel has it (Linux 6.12), keeps it from signalling any
//!   process outside the sandbox or reaching an abstract Unix socket
//!   outside it.
//! - A new **user namespace** with a **PID namespace**: the command is
//!   process 1 of its own tree, so it cannot name (let alone signal) a
//!   process outside, and when it ends the kernel ends everything left in
//!   the tree.
//! - A new **mount namespace** where the protected paths (the store, the
//!   configuration UCP reads) that lie in a writable place are bound
//!   read-only, and the folders above them down from that place are
//!   mount points, which cannot be renamed or removed: the command can
//!   neither rewrite them nor put others in their place.
//! - Without network, a new **network namespace**: no network at all (not
//!   even loopback).
//!
//! The namespaces are entered by the command's keeper (see [`crate::keeper`])
//! before it starts the command, Landlock by the command itself, both
//! between fork and exec: they bind the command and everything it starts,
//! and nothing else.

use std::ffi::CString;
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use landlock::{
    path_beneath_rules, Access, AccessFs, CompatLevel, Compatible as _, Ruleset, RulesetAttr as _,
    RulesetCreatedAttr as _, Scope, ABI,
};

use crate::keeper::Kept;
use crate::sys::{check, write_proc};
use crate::{Jail, ToolError};

/// Folders besides the root a sandboxed command may write under (with no
/// scratch folder of its own).
const WRITABLE: [&str; 2] = ["/tmp", "/dev"];

/// What a sandboxed command may not do.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sandbox {
    /// Keep the network (only the filesystem and processes are confined).
    pub network: bool,
    /// The one folder besides the root (and `/dev`) it may write under,
    /// instead of `/tmp` (an agent sandbox's scratch folder).
    pub scratch: Option<PathBuf>,
    /// A folder it cannot see into (covered by an empty read-only tmpfs):
    /// an agent sandbox's forwarder sockets.
    pub hidden: Option<PathBuf>,
}

/// A bind mount made in the sandbox's mount namespace.
struct Bind {
    path: CString,
    /// Read-only, with the flags the mount it lies on has and a remount
    /// inside a user namespace must keep; `None`: only pinned in place.
    read_only: Option<libc::c_ulong>,
    /// Covered by an empty read-only tmpfs instead.
    cover: bool,
}

/// A sandbox made ready in the parent, applied in the child.
pub(crate) struct Prepared {
    ruleset: OwnedFd,
    /// `/proc/self/uid_map` and `gid_map` lines mapping the user to itself.
    maps: (CString, CString),
    /// The namespaces the keeper makes.
    namespaces: libc::c_int,
    binds: Vec<Bind>,
}

impl Sandbox {
    /// Checks the sandbox can be made here (the kernel has Landlock and
    /// user namespaces), so a server refuses to start instead of failing
    /// its first command.
    pub fn check(&self, jail: &Jail) -> Result<(), ToolError> {
        let prepared = self.prepare(jail)?;
        let cwd = jail.open_folder(jail.root(), ".")?;
        let mut command = std::process::Command::new("true");
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        let kept = Kept::spawn(command, (cwd, jail.root()), Some(prepared)).map_err(|e| unavailable(&e))?;
        match kept.wait() {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(unavailable(&format!("a sandboxed command did not run: {status}"))),
            Err(e) => Err(unavailable(&e)),
        }
    }

    /// Builds the Landlock ruleset and the mounts for `jail` (refused where
    /// the kernel has no Landlock: a sandbox asked for is never silently
    /// absent).
    pub(crate) fn prepare(&self, jail: &Jail) -> Result<Prepared, ToolError> {
        // Writes, creation, removal and renames need Landlock's first ABI;
        // truncation (ABI 3) is confined too where the kernel has it, and
        // signals and abstract sockets (ABI 6) are scoped.
        let (required, wanted) = (ABI::V1, ABI::V3);
        let writable = writable_places(jail.root(), self.scratch.as_deref());
        let ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(required))
            .map(|r| r.set_compatibility(CompatLevel::BestEffort))
            .and_then(|r| r.handle_access(AccessFs::from_all(wanted)))
            .and_then(|r| r.scope(Scope::Signal | Scope::AbstractUnixSocket))
            .and_then(|r| r.create())
            .and_then(|r| r.add_rules(path_beneath_rules(["/"], AccessFs::from_read(wanted))))
            .and_then(|r| r.add_rules(path_beneath_rules(&writable, AccessFs::from_all(wanted))))
            .map_err(|e| unavailable(&e))?;
        let ruleset: Option<OwnedFd> = ruleset.into();
        let ruleset = ruleset.ok_or_else(|| unavailable(&"no ruleset was created"))?;
        // SAFETY: getuid and getgid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let line = |id: u32| CString::new(format!("{id} {id} 1")).expect("digits hold no NUL");
        let mut namespaces = libc::CLONE_NEWUSER | libc::CLONE_NEWPID | libc::CLONE_NEWNS;
        if !self.network {
            namespaces |= libc::CLONE_NEWNET;
        }
        let mut binds = binds(jail.root(), jail.protected(), &writable)?;
        if let Some(hidden) = &self.hidden {
            binds.push(Bind { path: c_path(hidden)?, read_only: None, cover: true });
        }
        Ok(Prepared { ruleset, maps: (line(uid), line(gid)), namespaces, binds })
    }
}

impl Sandbox {
    /// Makes `command` (a server the agent starts: an MCP server) start
    /// inside this sandbox, as a `bash` command would.
    pub fn confine(&self, jail: &Jail, command: &mut std::process::Command) -> Result<(), ToolError> {
        use std::os::unix::process::CommandExt as _;
        let mut prepared = self.prepare(jail)?;
        // Not a PID namespace: the server would be no member of it, and a
        // process whose children would be in another cannot make threads.
        prepared.namespaces &= !libc::CLONE_NEWPID;
        // SAFETY: both calls are made between fork and exec on memory
        // prepared before the fork (see `Prepared`).
        unsafe {
            command.pre_exec(move || {
                prepared.enter_namespaces()?;
                prepared.restrict()
            });
        }
        Ok(())
    }
}

fn unavailable(e: &dyn std::fmt::Display) -> ToolError {
    ToolError::Arguments(format!(
        "the bash sandbox needs Landlock (Linux 5.13 or later, enabled) and user namespaces: {e}"
    ))
}

/// The root and the other places a sandboxed command may write under.
fn writable_places(root: &Path, scratch: Option<&Path>) -> Vec<PathBuf> {
    let mut writable = vec![root.to_owned()];
    match scratch {
        Some(scratch) => writable.extend([scratch, Path::new("/dev")].iter().filter_map(|p| p.canonicalize().ok())),
        None => writable.extend(WRITABLE.iter().filter_map(|p| Path::new(p).canonicalize().ok())),
    }
    writable
}

/// The mounts that keep `protected` paths lying in a `writable` place
/// read-only and in place, outermost first. The folders between the place
/// and each of them are pinned (bound onto themselves: a mount point
/// cannot be renamed or removed), and so are the root and the folders
/// above it when it lies in another writable place (`/tmp/project`), so
/// no one moves a store, or the root holding it, away to put another in
/// its place. A protected path not made yet is made an empty folder, so
/// that it can be held read-only before anything else makes it.
fn binds(root: &Path, protected: &[PathBuf], writable: &[PathBuf]) -> Result<Vec<Bind>, ToolError> {
    let mut binds: Vec<Bind> = Vec::new();
    let pin = |folders: Vec<&Path>, binds: &mut Vec<Bind>| -> Result<(), ToolError> {
        for folder in folders.into_iter().rev() {
            let folder = c_path(folder)?;
            if !binds.iter().any(|b| b.path == folder) {
                binds.push(Bind { path: folder, read_only: None, cover: false });
            }
        }
        Ok(())
    };
    if let Some(place) = writable.iter().find(|w| root.starts_with(w) && root != *w) {
        pin(root.ancestors().take_while(|a| a != place).collect(), &mut binds)?;
    }
    for path in protected {
        let Some(place) = writable.iter().find(|w| path.starts_with(w) && path != *w) else { continue };
        if std::fs::symlink_metadata(path).is_err() {
            std::fs::create_dir_all(path)
                .map_err(|e| ToolError::io("cannot make the protected folder", path.display().to_string(), e))?;
        }
        pin(path.ancestors().skip(1).take_while(|a| a != place).collect(), &mut binds)?;
        let flags = locked_flags(path)?;
        binds.retain(|b| b.path.as_bytes() != path.as_os_str().as_bytes());
        binds.push(Bind { path: c_path(path)?, read_only: Some(flags), cover: false });
    }
    Ok(binds)
}

pub(crate) fn c_path(path: &Path) -> Result<CString, ToolError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| ToolError::Arguments(format!("{} holds a NUL byte", path.display())))
}

/// The flags of the mount `path` lies on that a read-only remount inside a
/// user namespace must keep (the kernel refuses to drop them).
pub(crate) fn locked_flags(path: &Path) -> Result<libc::c_ulong, ToolError> {
    let c = c_path(path)?;
    // SAFETY: `c` is a valid NUL-terminated path and `stat` a valid buffer.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut stat) } < 0 {
        let e = std::io::Error::last_os_error();
        return Err(ToolError::io("cannot protect", path.display().to_string(), e));
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    Ok(pairs.iter().filter(|(st, _)| stat.f_flag & st != 0).fold(0, |flags, (_, ms)| flags | ms))
}

impl Prepared {
    /// Enters the namespaces and makes the mounts: run by the keeper
    /// between fork and exec, so only system calls on memory prepared
    /// before the fork (no allocation, no locks).
    pub(crate) fn enter_namespaces(&self) -> std::io::Result<()> {
        // SAFETY: system calls on valid NUL-terminated strings made before the fork.
        unsafe {
            check(libc::unshare(self.namespaces))?;
            write_proc(c"/proc/self/setgroups", c"deny")?;
            write_proc(c"/proc/self/uid_map", &self.maps.0)?;
            write_proc(c"/proc/self/gid_map", &self.maps.1)?;
            if self.binds.is_empty() {
                return Ok(());
            }
            // Nothing done here reaches the mounts outside.
            let none = std::ptr::null();
            check(libc::mount(none, c"/".as_ptr(), none, libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()))?;
            for bind in &self.binds {
                let path = bind.path.as_ptr();
                if bind.cover {
                    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC | libc::MS_RDONLY;
                    let options = c"size=4k,mode=0500";
                    check(libc::mount(c"tmpfs".as_ptr(), path, c"tmpfs".as_ptr(), flags, options.as_ptr().cast()))?;
                    continue;
                }
                check(libc::mount(path, path, none, libc::MS_BIND | libc::MS_REC, std::ptr::null()))?;
                if let Some(flags) = bind.read_only {
                    let remount = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags;
                    check(libc::mount(none, path, none, remount, std::ptr::null()))?;
                }
            }
        }
        Ok(())
    }

    /// Whether the command is process 1 of a PID namespace of its own.
    pub(crate) fn new_pid_namespace(&self) -> bool {
        self.namespaces & libc::CLONE_NEWPID != 0
    }

    /// Confines the calling process with Landlock: run by the command
    /// between fork and exec, like [`Prepared::enter_namespaces`]. In a
    /// PID namespace of its own, it first mounts a `/proc` of that
    /// namespace where it may: the host's shows other processes.
    pub(crate) fn restrict(&self) -> std::io::Result<()> {
        // SAFETY: prctl, mount and the Landlock system call take plain
        // integers and NUL-terminated strings.
        unsafe {
            if self.new_pid_namespace() {
                // Where the kernel refuses (a /proc partly hidden by a
                // container), the host's stays: this sandbox confines
                // writes, network and processes, not reads.
                let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                libc::mount(c"proc".as_ptr(), c"/proc".as_ptr(), c"proc".as_ptr(), flags, std::ptr::null());
            }
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
            let restricted = libc::syscall(libc::SYS_landlock_restrict_self, self.ruleset.as_raw_fd(), 0);
            check(i32::try_from(restricted).unwrap_or(-1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths_in_writable_places_are_bound_read_only_and_pinned() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b/store")).unwrap();
        let protected = [root.join("a/b/store"), root.join("cfg/ucp"), PathBuf::from("/usr/share")];
        let writable = [root.clone()];
        let made = binds(&root, &protected, &writable).unwrap();
        let shown: Vec<(String, bool)> = made
            .iter()
            .map(|b| (b.path.to_string_lossy().replace(root.to_str().unwrap(), "R"), b.read_only.is_some()))
            .collect();
        let expected = [("R/a", false), ("R/a/b", false), ("R/a/b/store", true), ("R/cfg", false), ("R/cfg/ucp", true)];
        assert_eq!(shown, expected.map(|(p, r)| (p.to_owned(), r)));
        // A root inside another writable place is pinned, with the folders above it there.
        let place = root.parent().unwrap().to_owned();
        let inner = binds(&root, &[], &[root.clone(), place.clone()]).unwrap();
        let pinned: Vec<String> = inner.iter().map(|b| b.path.to_string_lossy().into_owned()).collect();
        assert_eq!(pinned, [root.to_string_lossy().into_owned()]);
        assert!(inner.iter().all(|b| b.read_only.is_none()));
        assert!(root.join("cfg/ucp").is_dir(), "a missing protected path is made, to be held");
    }
}
