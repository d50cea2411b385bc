//! The workspace jail: every path a tool touches is resolved against one
//! root folder, and refused when it leaves it — through `..`, an absolute
//! path elsewhere, or a symbolic link whose target is elsewhere.

use std::path::{Component, Path, PathBuf};

use crate::ToolError;

/// A workspace root that paths are resolved against.
#[derive(Debug, Clone)]
pub struct Jail {
    root: PathBuf,
}

impl Jail {
    /// A jail at `root`, which must be an existing folder (it is
    /// canonicalized, so a root reached through a link works).
    pub fn new(root: impl AsRef<Path>) -> Result<Self, ToolError> {
        let given = root.as_ref();
        let root = given
            .canonicalize()
            .map_err(|e| ToolError::io("cannot open the workspace root", given.display().to_string(), e))?;
        if !root.is_dir() {
            return Err(ToolError::Arguments(format!("the workspace root {} is not a folder", given.display())));
        }
        Ok(Jail { root })
    }

    /// The root folder (canonical).
    pub fn root(&self) -> &Path {
        &self.root
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
        // Follow links: the deepest part that exists is canonicalized, the
        // rest (names not created yet) is appended as written.
        let mut existing = lexical.as_path();
        let mut rest = Vec::new();
        let real = loop {
            match existing.canonicalize() {
                Ok(real) => break real,
                Err(_) => match (existing.parent(), existing.file_name()) {
                    (Some(parent), Some(name)) => {
                        rest.push(name.to_owned());
                        existing = parent;
                    }
                    _ => return Err(outside()),
                },
            }
        };
        let mut real = real;
        for name in rest.iter().rev() {
            real.push(name);
        }
        if real.starts_with(&self.root) {
            Ok(real)
        } else {
            Err(outside())
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

    #[test]
    fn display_is_relative_with_slashes() {
        let dir = tempfile::tempdir().unwrap();
        let jail = Jail::new(dir.path()).unwrap();
        assert_eq!(jail.display(&jail.root().join("a/b.rs")), "a/b.rs");
        assert_eq!(jail.display(jail.root()), ".");
    }
}
