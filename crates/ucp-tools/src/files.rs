//! Reading text files with checks and writing files atomically: the file
//! handling `read`, `write` and `edit` share, and the `write` tool itself.

use std::io::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::{ToolError, Tools};

/// Extensions of image and document formats refused by name, before a read.
const NOT_TEXT_EXTENSIONS: &[(&str, &str)] = &[
    ("png", "an image"),
    ("jpg", "an image"),
    ("jpeg", "an image"),
    ("gif", "an image"),
    ("webp", "an image"),
    ("bmp", "an image"),
    ("ico", "an image"),
    ("tiff", "an image"),
    ("pdf", "a PDF document"),
    ("zip", "an archive"),
    ("gz", "an archive"),
    ("tar", "an archive"),
];

/// The text of the file at `real` (shown as `shown`): refused when it is
/// a folder, an image, binary (a NUL byte) or not UTF-8.
pub(crate) fn read_text(real: &Path, shown: &str) -> Result<String, ToolError> {
    let metadata = std::fs::metadata(real).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::NotFound(shown.to_owned()),
        _ => ToolError::io("cannot read", shown, e),
    })?;
    if !metadata.is_file() {
        return Err(ToolError::NotAFile(shown.to_owned()));
    }
    let extension = real.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if let Some((_, what)) = NOT_TEXT_EXTENSIONS.iter().find(|(e, _)| Some(*e) == extension.as_deref()) {
        return Err(ToolError::NotText { path: shown.to_owned(), what });
    }
    let bytes = std::fs::read(real).map_err(|e| ToolError::io("cannot read", shown, e))?;
    if bytes.contains(&0) {
        return Err(ToolError::NotText { path: shown.to_owned(), what: "binary" });
    }
    String::from_utf8(bytes).map_err(|_| ToolError::NotText { path: shown.to_owned(), what: "not UTF-8" })
}

/// Writes `content` to `real` atomically: a temporary file beside it is
/// written, flushed and renamed over it, so a reader or a crash sees the
/// old file or the new one, never a part. An existing file keeps its
/// permissions.
pub(crate) fn write_atomic(real: &Path, shown: &str, content: &[u8]) -> Result<(), ToolError> {
    let folder = real.parent().ok_or_else(|| ToolError::NotAFile(shown.to_owned()))?;
    let permissions = std::fs::metadata(real).ok().map(|m| m.permissions());
    let mut builder = tempfile::Builder::new();
    builder.prefix(".ucp-write-");
    // A new file gets the mode any program's new file gets (0666 less the
    // umask), not the temporary file's private 0600.
    #[cfg(unix)]
    if permissions.is_none() {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut temporary = builder.tempfile_in(folder).map_err(|e| ToolError::io("cannot write", shown, e))?;
    temporary.write_all(content).map_err(|e| ToolError::io("cannot write", shown, e))?;
    temporary.as_file().sync_all().map_err(|e| ToolError::io("cannot write", shown, e))?;
    if let Some(permissions) = permissions {
        std::fs::set_permissions(temporary.path(), permissions).map_err(|e| ToolError::io("cannot write", shown, e))?;
    }
    temporary.persist(real).map_err(|e| ToolError::io("cannot write", shown, e.error))?;
    Ok(())
}

/// What a `write` did.
#[derive(Debug, Clone, Serialize)]
pub struct WriteResult {
    /// Path relative to the root.
    pub path: String,
    /// The file did not exist before.
    pub created: bool,
    /// Bytes written.
    pub bytes: usize,
    /// Lines written.
    pub lines: usize,
    /// The compact text form.
    pub text: String,
}

impl Tools {
    /// Writes a whole file (atomically), creating missing folders inside
    /// the workspace.
    pub fn write(&self, path: &str, content: &str) -> Result<WriteResult, ToolError> {
        self.check_writable("write")?;
        let real = self.jail.resolve(path)?;
        let shown = self.jail.display(&real);
        if real.is_dir() {
            return Err(ToolError::NotAFile(shown));
        }
        let created = !real.exists();
        if let Some(folder) = real.parent() {
            std::fs::create_dir_all(folder).map_err(|e| ToolError::io("cannot create the folder of", &shown, e))?;
        }
        write_atomic(&real, &shown, content.as_bytes())?;
        let lines = content.lines().count();
        let verb = if created { "created" } else { "overwrote" };
        let text = format!("{verb} {shown} ({lines} lines, {} bytes)\n", content.len());
        Ok(WriteResult { path: shown, created, bytes: content.len(), lines, text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_checks_refuse_what_is_not_text() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("bin"), b"ab\0cd").unwrap();
        std::fs::write(p.join("latin1"), b"caf\xe9").unwrap();
        std::fs::write(p.join("pic.PNG"), b"whatever").unwrap();
        std::fs::write(p.join("ok.txt"), "fine").unwrap();
        assert!(read_text(&p.join("bin"), "bin").unwrap_err().to_string().contains("binary"));
        assert!(read_text(&p.join("latin1"), "latin1").unwrap_err().to_string().contains("not UTF-8"));
        assert!(read_text(&p.join("pic.PNG"), "pic.PNG").unwrap_err().to_string().contains("an image"));
        assert!(matches!(read_text(p, "."), Err(ToolError::NotAFile(_))));
        assert!(matches!(read_text(&p.join("nope"), "nope"), Err(ToolError::NotFound(_))));
        assert_eq!(read_text(&p.join("ok.txt"), "ok.txt").unwrap(), "fine");
    }

    #[cfg(unix)]
    #[test]
    fn an_atomic_write_keeps_permissions_and_leaves_no_temporary() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.sh");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o751)).unwrap();
        write_atomic(&file, "run.sh", b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o751);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
