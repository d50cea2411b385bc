//! Processes sharing one index take turns: whatever changes an index's
//! files (building it, a sync, recording its revision) runs while holding a
//! lock on a file beside the index's directory, which outlives the
//! directory being rebuilt. A process that dies lets go of its turn.

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::SearchError;

/// A held turn at the index in one directory; let go when dropped.
pub(crate) struct Turn {
    /// `None` where nobody may write (a read-only store): no turns needed.
    _file: Option<File>,
}

/// Waits for, then takes, the turn at the index in `dir`.
pub(crate) fn take_turn(dir: &Path) -> Result<Turn, SearchError> {
    let path = lock_path(dir);
    let opened = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| OpenOptions::new().create(true).truncate(false).write(true).open(&path));
    let file = match opened {
        Ok(file) => file,
        Err(e) if matches!(e.kind(), ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem) => {
            return Ok(Turn { _file: None })
        }
        Err(e) => return Err(SearchError::io(&path)(e)),
    };
    file.lock().map_err(SearchError::io(&path))?;
    Ok(Turn { _file: Some(file) })
}

/// `search/<index>.lock` for the index in `search/<index>`.
fn lock_path(dir: &Path) -> PathBuf {
    let name = dir.file_name().map_or_else(|| "index".into(), |n| n.to_string_lossy().into_owned());
    dir.with_file_name(format!("{name}.lock"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_is_held_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("doc.v1-abc");
        let turn = take_turn(&index).unwrap();
        let other = OpenOptions::new().write(true).open(dir.path().join("doc.v1-abc.lock")).unwrap();
        assert!(other.try_lock().is_err(), "another holder waits");
        drop(turn);
        assert!(other.try_lock().is_ok(), "free once dropped");
    }
}
