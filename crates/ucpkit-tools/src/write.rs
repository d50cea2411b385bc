//! `write`: a whole file written atomically through the jail.

use serde::Serialize;

use crate::{ToolError, Tools};

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
    /// The file `path` names, as the jail resolves it, and its whole text
    /// (`None` when it does not exist yet): what a write would replace.
    pub fn text_of(&self, path: &str) -> Result<(std::path::PathBuf, Option<String>), ToolError> {
        let real = self.jail.resolve(path)?;
        let shown = self.jail.display(&real);
        match self.whole_text(&real, &shown) {
            Ok(text) => Ok((real, Some(text))),
            Err(ToolError::NotFound(_)) => Ok((real, None)),
            Err(e) => Err(e),
        }
    }

    /// Writes a whole file (atomically), creating missing folders inside
    /// the workspace.
    pub fn write(&self, path: &str, content: &str) -> Result<WriteResult, ToolError> {
        self.check_writable("write")?;
        let real = self.jail.resolve(path)?;
        let shown = self.jail.display(&real);
        let created = self.put_text(&real, &shown, content)?;
        let lines = content.lines().count();
        let verb = if created { "created" } else { "overwrote" };
        let text = format!("{verb} {shown} ({lines} lines, {} bytes)\n", content.len());
        Ok(WriteResult { path: shown, created, bytes: content.len(), lines, text })
    }

    /// Puts the file `path` back as it was: `Some(text)` written whole,
    /// `None` (it did not exist) removed. What a rollback does.
    pub fn restore(&self, path: &str, text: Option<&str>) -> Result<(), ToolError> {
        self.check_writable("restore")?;
        let real = self.jail.resolve(path)?;
        let shown = self.jail.display(&real);
        match text {
            Some(text) => self.put_text(&real, &shown, text).map(|_| ()),
            None => self.jail.remove_file(&real, &shown),
        }
    }
}
