//! A pids cgroup of its own for the agent sandbox: the most processes
//! everything inside may have at once, root's included (the kernel does
//! not hold root to `RLIMIT_NPROC`), and a sweep of whatever is left when
//! the agent ends. Made where this process may make one (root, or a
//! delegated cgroup); elsewhere the sandbox falls back to the rlimit.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

/// Rounds of killing what is left before the group is removed.
const SWEEPS: usize = 1000;

/// A pids cgroup, removed (with what is left in it) when dropped.
pub(crate) struct PidsGroup {
    dir: PathBuf,
    procs: CString,
}

impl PidsGroup {
    /// A new group under this process's own, holding at most `max`
    /// processes; `None` where none can be made.
    pub(crate) fn make(max: u64) -> Option<PidsGroup> {
        let parent = own_group()?;
        let dir = parent.join(format!("ucp-sandbox-{}-{}", std::process::id(), crate::confine::unique()));
        std::fs::create_dir(&dir).ok()?;
        let group = PidsGroup { procs: CString::new(dir.join("cgroup.procs").as_os_str().as_bytes()).ok()?, dir };
        std::fs::write(group.dir.join("pids.max"), max.to_string()).ok()?;
        Some(group)
    }

    /// Its `cgroup.procs`: a process joins by writing `0` to it.
    pub(crate) fn procs(&self) -> &CString {
        &self.procs
    }
}

impl Drop for PidsGroup {
    fn drop(&mut self) {
        for _ in 0..SWEEPS {
            let left = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
            let pids: Vec<i32> = left.lines().filter_map(|l| l.trim().parse().ok()).collect();
            if pids.is_empty() {
                break;
            }
            for pid in pids {
                // SAFETY: kill takes plain integers.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The folder of this process's pids cgroup: a cgroup v1 hierarchy with
/// the pids controller, or the v2 one where it is enabled.
fn own_group() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in mounts.lines() {
        let (before, after) = line.split_once(" - ")?;
        let fields: Vec<&str> = before.split(' ').collect();
        let (root, point) = (fields.get(3)?, Path::new(fields.get(4)?));
        let mut after = after.split(' ');
        let (kind, options) = (after.next()?, after.nth(1).unwrap_or(""));
        let own = match kind {
            "cgroup" if options.split(',').any(|o| o == "pids") => groups.lines().find_map(|l| {
                let mut parts = l.splitn(3, ':');
                let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
                controllers.split(',').any(|c| c == "pids").then(|| path.to_owned())
            }),
            "cgroup2" => {
                let controllers = std::fs::read_to_string(point.join("cgroup.controllers")).unwrap_or_default();
                let path = groups.lines().find_map(|l| l.strip_prefix("0::").map(str::to_owned));
                path.filter(|_| controllers.split_whitespace().any(|c| c == "pids"))
            }
            _ => None,
        };
        let Some(own) = own else { continue };
        let relative = Path::new(&own).strip_prefix(root).ok()?;
        return Some(point.join(relative));
    }
    None
}
