//! An OS sandbox for `bash`, from Linux facilities any user has: Landlock
//! lets the command write only under the workspace root, `/tmp` and
//! `/dev` (reading and running stay allowed everywhere), and a new user
//! and network namespace leaves it with no network at all (not even
//! loopback). Both are applied in the child between fork and exec, so
//! they bind the command and everything it starts, and nothing else.

use std::ffi::CString;
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::Command;

use landlock::{
    path_beneath_rules, Access, AccessFs, CompatLevel, Compatible as _, Ruleset, RulesetAttr as _,
    RulesetCreatedAttr as _, ABI,
};

use crate::ToolError;

/// Folders besides the root a sandboxed command may write under.
const WRITABLE: [&str; 2] = ["/tmp", "/dev"];

/// What a sandboxed command may not do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sandbox {
    /// Keep the network (only the filesystem is confined).
    pub network: bool,
}

/// A sandbox made ready in the parent, applied in the child.
pub(crate) struct Prepared {
    ruleset: OwnedFd,
    /// `/proc/self/uid_map` and `gid_map` lines mapping the user to itself.
    maps: Option<(CString, CString)>,
}

impl Sandbox {
    /// Checks the sandbox can be made here (the kernel has Landlock), so a
    /// server refuses to start instead of failing its first command.
    pub fn check(&self, root: &Path) -> Result<(), ToolError> {
        self.prepare(root).map(drop)
    }

    /// Builds the Landlock ruleset for `root` (refused where the kernel
    /// has no Landlock: a sandbox asked for is never silently absent).
    pub(crate) fn prepare(&self, root: &Path) -> Result<Prepared, ToolError> {
        let unavailable = |e: &dyn std::fmt::Display| {
            ToolError::Arguments(format!("the bash sandbox needs Landlock (Linux 5.13 or later, enabled): {e}"))
        };
        // Writes, creation, removal and renames need Landlock's first ABI;
        // truncation (ABI 3) is confined too where the kernel has it.
        let (required, wanted) = (ABI::V1, ABI::V3);
        let mut writable = vec![root.to_owned()];
        writable.extend(WRITABLE.iter().map(std::path::PathBuf::from).filter(|p| p.exists()));
        let ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(required))
            .map(|r| r.set_compatibility(CompatLevel::BestEffort))
            .and_then(|r| r.handle_access(AccessFs::from_all(wanted)))
            .and_then(|r| r.create())
            .and_then(|r| r.add_rules(path_beneath_rules(["/"], AccessFs::from_read(wanted))))
            .and_then(|r| r.add_rules(path_beneath_rules(&writable, AccessFs::from_all(wanted))))
            .map_err(|e| unavailable(&e))?;
        let ruleset: Option<OwnedFd> = ruleset.into();
        let ruleset = ruleset.ok_or_else(|| unavailable(&"no ruleset was created"))?;
        let maps = (!self.network).then(|| {
            // SAFETY: getuid and getgid cannot fail and touch no memory.
            let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
            let line = |id: u32| CString::new(format!("{id} {id} 1")).expect("digits hold no NUL");
            (line(uid), line(gid))
        });
        Ok(Prepared { ruleset, maps })
    }
}

impl Prepared {
    /// Makes `command` enter the sandbox when it starts.
    pub(crate) fn apply(self, command: &mut Command) {
        // SAFETY: the closure runs in the child between fork and exec; it
        // only makes system calls on memory prepared before the fork (no
        // allocation, no locks), as `pre_exec` requires.
        unsafe {
            command.pre_exec(move || {
                if let Some((uid_map, gid_map)) = &self.maps {
                    check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET))?;
                    write_proc(c"/proc/self/setgroups", c"deny")?;
                    write_proc(c"/proc/self/uid_map", uid_map)?;
                    write_proc(c"/proc/self/gid_map", gid_map)?;
                }
                check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
                let restricted = libc::syscall(libc::SYS_landlock_restrict_self, self.ruleset.as_raw_fd(), 0);
                check(i32::try_from(restricted).unwrap_or(-1))
            });
        }
    }
}

fn check(result: i32) -> std::io::Result<()> {
    if result < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Writes `text` to a `/proc` file with raw system calls (safe after fork).
fn write_proc(path: &std::ffi::CStr, text: &std::ffi::CStr) -> std::io::Result<()> {
    // SAFETY: both pointers are valid NUL-terminated strings; the fd is closed below.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    check(fd)?;
    let bytes = text.to_bytes();
    // SAFETY: `bytes` is valid for its length.
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    let failed = (written < 0).then(std::io::Error::last_os_error);
    // SAFETY: fd was opened above.
    unsafe { libc::close(fd) };
    failed.map_or(Ok(()), Err)
}
