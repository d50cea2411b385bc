//! Files through an editor: when a front end is given the editor's
//! buffers (an ACP client's `fs/read_text_file` and `fs/write_text_file`),
//! `read`, `edit` and `write` read what the user sees, unsaved changes
//! included, and write through the editor, which shows the change. The
//! jail still decides which paths may be reached (beneath the root, never
//! a protected one, only a regular file or none yet); only the bytes
//! travel through the editor. What remains: the editor opens the path by
//! name, so a link swapped in between the jail's check and the editor's
//! open is followed by the editor (the disk route has no such gap).

use std::path::Path;

use crate::text::{check_text, read_whole, refuse_by_extension, MAX_WHOLE_BYTES};
use crate::{Kind, ToolError, Tools};

/// An editor's view of the workspace's text files.
pub trait Buffers: Send + Sync {
    /// The text of the file at `path` (absolute, beneath the root) as the
    /// editor has it; `Ok(None)` when there is no such file.
    fn read(&self, path: &Path) -> Result<Option<String>, String>;

    /// Writes `text` as the file at `path` (absolute, beneath the root).
    fn write(&self, path: &Path, text: &str) -> Result<(), String>;
}

impl Tools {
    /// The whole text of the file at `real` (shown as `shown`): from the
    /// editor when there is one, else from disk, at most
    /// [`MAX_WHOLE_BYTES`].
    pub(crate) fn whole_text(&self, real: &Path, shown: &str) -> Result<String, ToolError> {
        let Some(buffers) = &self.buffers else { return read_whole(&self.jail, real, shown) };
        self.check_for_editor(real, shown)?;
        let text = buffers.read(real).map_err(|e| ToolError::Editor(format!("{shown}: {e}")))?;
        let text = text.ok_or_else(|| ToolError::NotFound(shown.to_owned()))?;
        if text.len() as u64 > MAX_WHOLE_BYTES {
            return Err(ToolError::TooLarge(format!(
                "{shown} has {} bytes: files of up to {} MiB are read whole",
                text.len(),
                MAX_WHOLE_BYTES >> 20
            )));
        }
        check_text(text.as_bytes(), true, shown)?;
        Ok(text)
    }

    /// Writes `text` as the file at `real`: through the editor when there
    /// is one, else atomically on disk. Returns whether the file is new.
    pub(crate) fn put_text(&self, real: &Path, shown: &str, text: &str) -> Result<bool, ToolError> {
        let Some(buffers) = &self.buffers else { return self.jail.write_atomic(real, shown, text.as_bytes()) };
        self.jail.check_writable(real, shown)?;
        self.check_for_editor(real, shown)?;
        let created = !real.exists();
        buffers.write(real, text).map_err(|e| ToolError::Editor(format!("{shown}: {e}")))?;
        Ok(created)
    }

    /// Whether the file at `real` is read through an editor: there is
    /// one, and the file is not too large to be read whole (the disk route
    /// streams those).
    pub(crate) fn through_editor(&self, real: &Path) -> bool {
        self.buffers.is_some() && self.jail.metadata(real).is_none_or(|metadata| metadata.len() <= MAX_WHOLE_BYTES)
    }

    /// What the editor may be asked about: a regular file, or none yet,
    /// without the extension of an image or an archive.
    fn check_for_editor(&self, real: &Path, shown: &str) -> Result<(), ToolError> {
        refuse_by_extension(real, shown)?;
        match self.jail.kind(real) {
            None | Some(Kind::File) => Ok(()),
            Some(_) => Err(ToolError::NotAFile(shown.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::{EditRequest, ReadRequest, Replacement};

    /// An editor holding its buffers in memory.
    #[derive(Default)]
    struct Editor(Mutex<HashMap<PathBuf, String>>);

    impl Buffers for Editor {
        fn read(&self, path: &Path) -> Result<Option<String>, String> {
            Ok(self.0.lock().unwrap().get(path).cloned())
        }

        fn write(&self, path: &Path, text: &str) -> Result<(), String> {
            self.0.lock().unwrap().insert(path.to_owned(), text.to_owned());
            Ok(())
        }
    }

    #[test]
    fn read_edit_and_write_go_through_the_editor_within_the_jail() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "on disk\n").unwrap();
        let editor = Arc::new(Editor::default());
        editor.0.lock().unwrap().insert(root.join("a.txt"), "unsaved one\nunsaved two\n".into());
        let tools = Tools::new(&root).unwrap().with_protected([root.join(".ucp")]).with_buffers(Some(editor.clone()));
        let read = tools.read(&ReadRequest { path: "a.txt".into(), offset: Some(2), limit: None }).unwrap();
        assert!(read.text.contains("unsaved two") && !read.text.contains("on disk"), "{}", read.text);
        let edit = EditRequest {
            path: "a.txt".into(),
            edits: vec![Replacement { old_string: "one".into(), new_string: "1".into(), replace_all: false }],
            dry_run: false,
        };
        tools.edit(&edit).unwrap();
        assert_eq!(editor.0.lock().unwrap()[&root.join("a.txt")], "unsaved 1\nunsaved two\n");
        assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "on disk\n", "the editor writes, not us");
        assert!(tools.write("new.txt", "x").unwrap().created);
        assert!(!root.join("new.txt").exists());
        assert_eq!(tools.write("../outside.txt", "x").unwrap_err().code(), "outside_root");
        assert_eq!(tools.write(".ucp/config.toml", "x").unwrap_err().code(), "protected");
        assert_eq!(
            tools.read(&ReadRequest { path: "gone.txt".into(), ..Default::default() }).unwrap_err().code(),
            "not_found"
        );
        std::fs::create_dir(root.join("dir")).unwrap();
        assert_eq!(
            tools.read(&ReadRequest { path: "dir".into(), ..Default::default() }).unwrap_err().code(),
            "not_a_file"
        );
        assert_eq!(tools.write("picture.png", "x").unwrap_err().code(), "not_text");
        assert_eq!(editor.0.lock().unwrap().len(), 2, "nothing outside, protected or not a file reached the editor");
    }
}
