//! Copying text out of the terminal: the OSC 52 sequence (the terminal,
//! or tmux with `set-clipboard on`, puts it on the clipboard; no program
//! can tell whether it did), and always a file beside the store too.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine as _;

/// Most bytes sent through OSC 52 (terminals drop longer sequences).
const OSC52_MAX: usize = 100_000;

/// The OSC 52 sequence that puts `text` on the clipboard.
pub(crate) fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64::engine::general_purpose::STANDARD.encode(text))
}

/// Copies `text`: through OSC 52 on `terminal` when the terminal may take
/// it (not the Linux console, not too long), and into `file`, written
/// whole. Says what was done.
pub(crate) fn copy(text: &str, terminal: Option<&mut dyn Write>, file: &Path) -> Result<String, String> {
    let mut sent = false;
    let console = std::env::var("TERM").is_ok_and(|t| t == "linux" || t == "dumb");
    if let Some(out) = terminal {
        if !console && text.len() <= OSC52_MAX {
            sent = out.write_all(osc52(text).as_bytes()).and_then(|()| out.flush()).is_ok();
        }
    }
    let temp: PathBuf = file.with_extension("md.tmp");
    std::fs::write(&temp, text)
        .and_then(|()| std::fs::rename(&temp, file))
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(if sent {
        format!("copied (OSC 52) and written to {}", file.display())
    } else {
        format!("written to {}", file.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_goes_to_the_terminal_encoded_and_to_the_file_as_is() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("context.md");
        let mut terminal = Vec::new();
        let said = copy("§ a > b\n\nText.", Some(&mut terminal), &file).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "§ a > b\n\nText.");
        if !terminal.is_empty() {
            assert_eq!(String::from_utf8(terminal).unwrap(), osc52("§ a > b\n\nText."));
            assert!(said.contains("OSC 52"));
        }
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x07");
    }
}
