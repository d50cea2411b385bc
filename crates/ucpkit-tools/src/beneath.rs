//! Opening a path beneath a folder handle without following any link:
//! `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` where the kernel
//! has it (Linux 5.6), else one `O_NOFOLLOW` step per component. The paths
//! given are real paths already (every link resolved when they were
//! checked), so a link met here means the tree changed since: refused
//! (`ELOOP`), never followed.

use std::os::fd::{AsFd as _, BorrowedFd, OwnedFd};
use std::path::{Component, Path};

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// Tries of `openat2` that a concurrent rename may make fail (`EAGAIN`).
const RENAME_RETRIES: usize = 8;

/// Opens `relative` (plain names only, or `.`) beneath `folder`.
pub(crate) fn open(folder: BorrowedFd<'_>, relative: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
    let how = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    for _ in 0..RENAME_RETRIES {
        match rustix::fs::openat2(folder, relative, flags | OFlags::CLOEXEC, mode, how) {
            Err(Errno::AGAIN) => continue,
            Err(Errno::NOSYS | Errno::PERM) if !openat2_works() => break,
            result => return result,
        }
    }
    open_by_steps(folder, relative, flags, mode)
}

/// Opens the folder `relative` beneath `folder`, making each missing
/// folder on the way (mode 0777 less the umask).
pub(crate) fn make_folders(folder: BorrowedFd<'_>, relative: &Path) -> Result<OwnedFd, Errno> {
    let step = OFlags::PATH | OFlags::DIRECTORY;
    let mut current = rustix::io::dup(folder)?;
    for part in relative.components() {
        let name = match part {
            Component::Normal(name) => name,
            Component::CurDir => continue,
            _ => return Err(Errno::XDEV),
        };
        current = match open(current.as_fd(), Path::new(name), step, Mode::empty()) {
            Ok(next) => next,
            Err(Errno::NOENT) => {
                match rustix::fs::mkdirat(&current, name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(e),
                }
                open(current.as_fd(), Path::new(name), step, Mode::empty())?
            }
            Err(e) => return Err(e),
        };
    }
    Ok(current)
}

/// Whether this kernel has `openat2` (some sandboxes refuse it with
/// `EPERM`; then the steps are used).
fn openat2_works() -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(|| {
        let how = ResolveFlags::BENEATH;
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        rustix::fs::openat2(rustix::fs::CWD, ".", flags, Mode::empty(), how).is_ok()
    })
}

/// The fallback: each folder on the way opened with `O_NOFOLLOW`, then the
/// last component, a link there refused too.
fn open_by_steps(folder: BorrowedFd<'_>, relative: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
    let names: Vec<&std::ffi::OsStr> = relative
        .components()
        .filter(|c| *c != Component::CurDir)
        .map(|c| match c {
            Component::Normal(name) => Ok(name),
            _ => Err(Errno::XDEV),
        })
        .collect::<Result<_, _>>()?;
    let Some((last, folders)) = names.split_last() else {
        return rustix::fs::openat(folder, ".", flags | OFlags::CLOEXEC, mode);
    };
    let mut current: Option<OwnedFd> = None;
    for name in folders {
        let at = current.as_ref().map_or(folder, |f| f.as_fd());
        let step = rustix::fs::openat(at, *name, OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())?;
        match file_type(&step)? {
            rustix::fs::FileType::Directory => current = Some(step),
            rustix::fs::FileType::Symlink => return Err(Errno::LOOP),
            _ => return Err(Errno::NOTDIR),
        }
    }
    let at = current.as_ref().map_or(folder, |f| f.as_fd());
    let opened = rustix::fs::openat(at, *last, flags | OFlags::NOFOLLOW | OFlags::CLOEXEC, mode)?;
    // With O_PATH, O_NOFOLLOW opens a link itself instead of failing.
    if file_type(&opened)? == rustix::fs::FileType::Symlink {
        return Err(Errno::LOOP);
    }
    Ok(opened)
}

fn file_type(handle: &OwnedFd) -> Result<rustix::fs::FileType, Errno> {
    Ok(rustix::fs::FileType::from_raw_mode(rustix::fs::fstat(handle)?.st_mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(dir: &Path) -> OwnedFd {
        rustix::fs::open(dir, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).unwrap()
    }

    #[test]
    fn both_ways_open_plain_paths_and_refuse_links() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/f"), "x").unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("link")).unwrap();
        std::os::unix::fs::symlink("f", dir.path().join("a/flink")).unwrap();
        let handle = root(dir.path());
        for open in [open, open_by_steps] {
            let read = OFlags::RDONLY;
            assert!(open(handle.as_fd(), Path::new("a/f"), read, Mode::empty()).is_ok());
            assert!(open(handle.as_fd(), Path::new("."), OFlags::PATH, Mode::empty()).is_ok());
            assert_eq!(open(handle.as_fd(), Path::new("link/f"), read, Mode::empty()).unwrap_err(), Errno::LOOP);
            assert_eq!(open(handle.as_fd(), Path::new("a/flink"), read, Mode::empty()).unwrap_err(), Errno::LOOP);
            let path_only = open(handle.as_fd(), Path::new("a/flink"), OFlags::PATH, Mode::empty());
            assert_eq!(path_only.unwrap_err(), Errno::LOOP);
            assert_eq!(open(handle.as_fd(), Path::new("a/none"), read, Mode::empty()).unwrap_err(), Errno::NOENT);
        }
    }

    #[test]
    fn folders_are_made_on_the_way_but_not_through_links() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let handle = root(dir.path());
        make_folders(handle.as_fd(), Path::new("x/y/z")).unwrap();
        assert!(dir.path().join("x/y/z").is_dir());
        assert_eq!(make_folders(handle.as_fd(), Path::new("out/new")).unwrap_err(), Errno::LOOP);
        assert!(!outside.path().join("new").exists());
    }
}
