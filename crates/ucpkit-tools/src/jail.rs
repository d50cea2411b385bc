//! The workspace jail: every path a tool touches is resolved against one
//! root folder, and refused when it leaves it — through `..`, an absolute
//! path elsewhere, or a symbolic link whose target is elsewhere.
//!
//! Checking a path by name and then opening it by name would leave a gap:
//! a folder swapped for a link in between leads the open elsewhere. So
//! the check only chooses the name (the real path, every link on the way
//! followed), and every open goes through a handle on the root, one
//! component at a time, refusing any link it meets ([`beneath`]): a path
//! changed after the check fails to open, and nothing outside the root is
//! ever read or written. Paths of the store and of the configuration UCP
//! reads can be marked protected: the tools never write under them.

use std::fs::File;
use std::io::Write as _;
use std::os::fd::{AsFd as _, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use crate::beneath;
use crate::ToolError;

/// A workspace root that paths are resolved against.
#[derive(Debug, Clone)]
pub struct Jail {
    root: PathBuf,
    /// The root, opened once: every open starts from it.
    handle: Arc<OwnedFd>,
    /// Real paths under which nothing is ever written.
    protected: Arc<[PathBuf]>,
}

/// What a path names, read from a handle opened on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A folder.
    Folder,
    /// Anything else: a FIFO, a device, a socket.
    Other,
}

impl Jail {
    /// A jail at `root`, which must be an existing folder (it is
    /// canonicalized, so a root reached through a link works).
    pub fn new(root: impl AsRef<Path>) -> Result<Self, ToolError> {
        let given = root.as_ref();
        let cannot = |e| ToolError::io("cannot open the workspace root", given.display().to_string(), e);
        let root = given.canonicalize().map_err(cannot)?;
        if !root.is_dir() {
            return Err(ToolError::Arguments(format!("the workspace root {} is not a folder", given.display())));
        }
        let handle = rustix::fs::open(&root, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
            .map_err(|e| cannot(e.into()))?;
        Ok(Jail { root, handle: Arc::new(handle), protected: Arc::from([]) })
    }

    /// The same jail, never writing under `paths` (each made real: the
    /// deepest part that exists is canonicalized).
    pub fn with_protected(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        self.protected = paths.into_iter().filter_map(|p| real_path(&std::path::absolute(p).ok()?)).collect();
        self
    }

    /// The root folder (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The real paths the tools never write under.
    pub fn protected(&self) -> &[PathBuf] {
        &self.protected
    }

    /// The real path of `path` (relative to the root, or absolute inside
    /// it), which may not exist yet: every link on the way is followed and
    /// the result must still be inside the root.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, ToolError> {
        let outside = || ToolError::OutsideRoot { path: path.to_owned(), root: self.root.clone() };
        let joined = if Path::new(path).is_absolute() { PathBuf::from(path) } else { self.root.join(path) };
        let lexical = normalize(&joined).ok_or_else(outside)?;
        if !lexical.starts_with(&self.root) {
            return Err(outside());
        }
        match real_path(&lexical) {
            Some(real) if real.starts_with(&self.root) => Ok(real),
            _ => Err(outside()),
        }
    }

    /// `path` as shown to a client: relative to the root with `/`
    /// separators, `.` for the root itself.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
            Ok(relative) => relative.to_string_lossy().replace('\\', "/"),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }

    /// What the real path `real` names, or `None` when nothing can be
    /// opened there (missing, or no longer under the root).
    pub fn kind(&self, real: &Path) -> Option<Kind> {
        let handle = self.open_beneath(real, OFlags::PATH, Mode::empty()).ok()?;
        kind_of(&handle).ok()
    }

    /// The metadata of what the real path `real` names, read from a handle
    /// on it; `None` as for [`Jail::kind`].
    pub fn metadata(&self, real: &Path) -> Option<std::fs::Metadata> {
        let handle = self.open_beneath(real, OFlags::PATH, Mode::empty()).ok()?;
        File::from(handle).metadata().ok()
    }

    /// A file a walk of the tree listed as a regular file, opened for
    /// reading in one step (no blocking open: a FIFO swapped in meanwhile
    /// is refused after its open, not waited on); `None` when it cannot be
    /// opened beneath the root or is no longer a regular file.
    pub(crate) fn open_listed(&self, real: &Path) -> Option<File> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY;
        let file = self.open_beneath(real, flags, Mode::empty()).ok()?;
        (kind_of(&file).ok()? == Kind::File).then(|| File::from(file))
    }

    /// The regular file at the real path `real` (shown as `shown`), opened
    /// for reading: a folder, FIFO or device is refused before it is
    /// opened for reading, so nothing blocks or has a side effect.
    pub fn open(&self, real: &Path, shown: &str) -> Result<File, ToolError> {
        let probe =
            self.open_beneath(real, OFlags::PATH, Mode::empty()).map_err(|e| failure(e, "cannot read", shown))?;
        let before = rustix::fs::fstat(&probe).map_err(|e| ToolError::io("cannot read", shown, e.into()))?;
        if kind_of(&probe).ok() != Some(Kind::File) {
            return Err(ToolError::NotAFile(shown.to_owned()));
        }
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY;
        let file = self.open_beneath(real, flags, Mode::empty()).map_err(|e| failure(e, "cannot read", shown))?;
        let after = rustix::fs::fstat(&file).map_err(|e| ToolError::io("cannot read", shown, e.into()))?;
        if (before.st_dev, before.st_ino) != (after.st_dev, after.st_ino) {
            return Err(ToolError::Changed(shown.to_owned()));
        }
        Ok(File::from(file))
    }

    /// A handle on the folder at the real path `real` (to run a command in).
    pub(crate) fn open_folder(&self, real: &Path, shown: &str) -> Result<OwnedFd, ToolError> {
        let folder = self.open_beneath(real, OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).map_err(|e| match e {
            Errno::NOTDIR => ToolError::Arguments(format!("cwd {shown} is not a folder")),
            e => failure(e, "cannot enter", shown),
        })?;
        Ok(folder)
    }

    /// Refuses a write under a protected path.
    pub(crate) fn check_writable(&self, real: &Path, shown: &str) -> Result<(), ToolError> {
        match self.protected.iter().find(|p| real.starts_with(p)) {
            Some(protected) => Err(ToolError::Protected { path: shown.to_owned(), under: self.display(protected) }),
            None => Ok(()),
        }
    }

    /// Writes `content` to the real path `real` atomically, making its
    /// missing folders: a temporary file beside it is written, flushed and
    /// renamed over it through a handle on the folder, so a reader or a
    /// crash sees the old file or the new one, never a part, and a folder
    /// swapped for a link meanwhile makes the write fail, not land
    /// elsewhere. An existing file keeps its permissions. Returns whether
    /// the file is new.
    pub(crate) fn write_atomic(&self, real: &Path, shown: &str, content: &[u8]) -> Result<bool, ToolError> {
        self.check_writable(real, shown)?;
        let (Some(folder), Some(name)) = (real.parent(), real.file_name()) else {
            return Err(ToolError::NotAFile(shown.to_owned()));
        };
        if real == self.root {
            return Err(ToolError::NotAFile(shown.to_owned()));
        }
        let cannot = |e: Errno| failure(e, "cannot write", shown);
        let folder = self.make_folders(folder).map_err(cannot)?;
        let existing = match rustix::fs::openat(&folder, name, OFlags::PATH | OFlags::NOFOLLOW, Mode::empty()) {
            Ok(handle) => Some(handle),
            Err(Errno::NOENT) => None,
            Err(e) => return Err(cannot(e)),
        };
        let permissions = match &existing {
            Some(handle) => match kind_of(handle).map_err(cannot)? {
                Kind::File => Some(rustix::fs::fstat(handle).map_err(cannot)?.st_mode & 0o7777),
                Kind::Folder | Kind::Other => return Err(ToolError::NotAFile(shown.to_owned())),
            },
            None => None,
        };
        let (temporary, temporary_name) = create_temporary(&folder).map_err(cannot)?;
        let written = (|| {
            let mut file = File::from(temporary);
            file.write_all(content)?;
            if let Some(mode) = permissions {
                rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?;
            }
            file.sync_all()?;
            rustix::fs::renameat(&folder, &temporary_name, &folder, name)?;
            Ok::<_, std::io::Error>(())
        })();
        if let Err(e) = written {
            let _ = rustix::fs::unlinkat(&folder, &temporary_name, rustix::fs::AtFlags::empty());
            return Err(ToolError::io("cannot write", shown, e));
        }
        Ok(existing.is_none())
    }

    /// Removes the file at the real path `real` (a link is removed, not
    /// followed); one already gone is no error.
    pub(crate) fn remove_file(&self, real: &Path, shown: &str) -> Result<(), ToolError> {
        self.check_writable(real, shown)?;
        let (Some(folder), Some(name)) = (real.parent(), real.file_name()) else {
            return Err(ToolError::NotAFile(shown.to_owned()));
        };
        let cannot = |e: Errno| failure(e, "cannot remove", shown);
        let folder = self.open_beneath(folder, OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).map_err(cannot)?;
        match rustix::fs::unlinkat(&folder, name, rustix::fs::AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(cannot(e)),
        }
    }

    /// Opens the real path `real` (under the root) with `flags`, through
    /// the root's handle, refusing any link on the way.
    fn open_beneath(&self, real: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
        let relative = self.relative(real)?;
        beneath::open(self.handle.as_fd(), relative, flags, mode)
    }

    /// Opens the folder at the real path `real`, making it and the folders
    /// above it under the root when missing.
    fn make_folders(&self, real: &Path) -> Result<OwnedFd, Errno> {
        let relative = self.relative(real)?;
        beneath::make_folders(self.handle.as_fd(), relative)
    }

    /// `real` relative to the root (`.` for the root itself).
    fn relative<'a>(&self, real: &'a Path) -> Result<&'a Path, Errno> {
        let relative = real.strip_prefix(&self.root).map_err(|_| Errno::XDEV)?;
        if relative.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(Errno::XDEV);
        }
        Ok(if relative.as_os_str().is_empty() { Path::new(".") } else { relative })
    }
}

/// What `folder` is when it is too broad to be a workspace root unless a
/// user names it: the filesystem's root, or the home folder.
pub fn broad_folder(folder: &Path) -> Option<&'static str> {
    let real = folder.canonicalize().ok()?;
    if real.parent().is_none() {
        return Some("the filesystem's root");
    }
    let home = std::env::var_os("HOME").and_then(|home| PathBuf::from(home).canonicalize().ok());
    (home.as_deref() == Some(real.as_path())).then_some("your home folder")
}

/// The kind of file a handle is on.
fn kind_of(handle: &OwnedFd) -> Result<Kind, Errno> {
    let stat = rustix::fs::fstat(handle)?;
    Ok(match rustix::fs::FileType::from_raw_mode(stat.st_mode) {
        rustix::fs::FileType::RegularFile => Kind::File,
        rustix::fs::FileType::Directory => Kind::Folder,
        _ => Kind::Other,
    })
}

/// A new file of a fresh name in `folder`, with the mode any program's new
/// file gets (0666 less the umask).
fn create_temporary(folder: &OwnedFd) -> Result<(OwnedFd, String), Errno> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    loop {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let name = format!(".ucp-write-{}-{}-{nanos:08x}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        match rustix::fs::openat(folder, &name, flags, Mode::from_raw_mode(0o666)) {
            Ok(file) => return Ok((file, name)),
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// A tool error for a failed open of a checked path.
fn failure(error: Errno, what: &'static str, shown: &str) -> ToolError {
    match error {
        Errno::NOENT => ToolError::NotFound(shown.to_owned()),
        // A link appeared on the way, or the path left the root, after the
        // check: refused rather than followed.
        Errno::LOOP | Errno::XDEV => ToolError::Changed(shown.to_owned()),
        Errno::NOTDIR => ToolError::NotAFile(shown.to_owned()),
        e => ToolError::io(what, shown, e.into()),
    }
}

/// The real path of the absolute, normalized `path`, which may not exist
/// yet: the deepest part that exists is canonicalized (every link on the
/// way followed) and the rest appended as written.
fn real_path(path: &Path) -> Option<PathBuf> {
    let mut existing = path;
    let mut rest = Vec::new();
    let mut real = loop {
        match existing.canonicalize() {
            Ok(real) => break real,
            Err(_) => {
                rest.push(existing.file_name()?.to_owned());
                existing = existing.parent()?;
            }
        }
    };
    for name in rest.iter().rev() {
        real.push(name);
    }
    Some(real)
}

/// `path` with `.` and `..` folded away lexically; `None` when `..` climbs
/// above the filesystem's root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_resolve_and_others_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "").unwrap();
        let jail = Jail::new(dir.path()).unwrap();
        let root = jail.root().to_owned();
        assert_eq!(jail.resolve("src/a.rs").unwrap(), root.join("src/a.rs"));
        assert_eq!(jail.resolve("src/../src/./a.rs").unwrap(), root.join("src/a.rs"));
        assert_eq!(jail.resolve("new/dir/file.txt").unwrap(), root.join("new/dir/file.txt"));
        assert_eq!(jail.resolve(root.join("src").to_str().unwrap()).unwrap(), root.join("src"));
        assert_eq!(jail.resolve(".").unwrap(), root);
        for bad in ["..", "../x", "src/../../x", "/etc/passwd", "/"] {
            let error = jail.resolve(bad).unwrap_err();
            assert!(matches!(error, ToolError::OutsideRoot { .. }), "{bad}: {error}");
            assert!(error.to_string().contains("outside the workspace"), "{error}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn links_that_leave_the_root_are_refused() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("secret")).unwrap();
        std::fs::write(dir.path().join("in.txt"), "").unwrap();
        std::os::unix::fs::symlink(dir.path().join("in.txt"), dir.path().join("alias")).unwrap();
        let jail = Jail::new(dir.path()).unwrap();
        for bad in ["out", "out/secret", "out/new-file", "secret"] {
            assert!(matches!(jail.resolve(bad), Err(ToolError::OutsideRoot { .. })), "{bad}");
        }
        assert_eq!(jail.resolve("alias").unwrap(), jail.root().join("in.txt"));
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_swapped_for_a_link_after_the_check_is_never_followed() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "outside").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/secret"), "inside").unwrap();
        let jail = Jail::new(dir.path()).unwrap();
        let read = jail.resolve("sub/secret").unwrap();
        let written = jail.resolve("sub/new").unwrap();
        // The check passed; now the folder becomes a link to the outside.
        std::fs::rename(dir.path().join("sub"), dir.path().join("old")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("sub")).unwrap();
        assert!(matches!(jail.open(&read, "sub/secret"), Err(ToolError::Changed(_))));
        assert!(matches!(jail.write_atomic(&written, "sub/new", b"x"), Err(ToolError::Changed(_))));
        assert!(!outside.path().join("new").exists());
        assert_eq!(jail.kind(&read), None);
    }

    #[test]
    fn writes_under_protected_paths_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".ucp")).unwrap();
        let jail = Jail::new(dir.path()).unwrap().with_protected([dir.path().join(".ucp"), dir.path().join("cfg")]);
        let store = jail.resolve(".ucp/config.toml").unwrap();
        let error = jail.write_atomic(&store, ".ucp/config.toml", b"x").unwrap_err();
        assert_eq!(error.code(), "protected");
        assert!(error.to_string().contains("never"), "{error}");
        let missing = jail.resolve("cfg/x").unwrap();
        assert_eq!(jail.write_atomic(&missing, "cfg/x", b"x").unwrap_err().code(), "protected");
        assert!(!dir.path().join(".ucp/config.toml").exists() && !dir.path().join("cfg").exists());
        let free = jail.resolve("a/b.txt").unwrap();
        assert!(jail.write_atomic(&free, "a/b.txt", b"ok").unwrap(), "a new file");
        assert_eq!(std::fs::read_to_string(dir.path().join("a/b.txt")).unwrap(), "ok");
    }

    #[cfg(unix)]
    #[test]
    fn an_atomic_write_keeps_permissions_and_leaves_no_temporary() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.sh");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o751)).unwrap();
        let jail = Jail::new(dir.path()).unwrap();
        let real = jail.resolve("run.sh").unwrap();
        assert!(!jail.write_atomic(&real, "run.sh", b"new").unwrap());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o751);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn the_filesystem_root_and_home_are_broad() {
        assert_eq!(broad_folder(Path::new("/")), Some("the filesystem's root"));
        if let Some(home) = std::env::var_os("HOME").filter(|h| Path::new(h).is_dir()) {
            assert_eq!(broad_folder(Path::new(&home)), Some("your home folder"));
        }
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(broad_folder(dir.path()), None);
    }

    #[test]
    fn display_is_relative_with_slashes() {
        let dir = tempfile::tempdir().unwrap();
        let jail = Jail::new(dir.path()).unwrap();
        assert_eq!(jail.display(&jail.root().join("a/b.rs")), "a/b.rs");
        assert_eq!(jail.display(jail.root()), ".");
    }
}
