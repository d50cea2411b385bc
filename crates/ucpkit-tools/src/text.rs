//! Text files as `read` and `edit` take them: opened through the jail,
//! refused when they are not text once their head has been looked at (a
//! 1 GB file of zeros costs one small read), then read whole up to a size
//! (`edit`) or a line at a time in bounded memory (`read`).

use std::fs::File;
use std::io::Read as _;
use std::path::Path;

use crate::page::MAX_LINE_CHARS;
use crate::{Jail, ToolError};

/// Largest file read whole (to be edited).
pub const MAX_WHOLE_BYTES: u64 = 32 << 20;

/// Bytes looked at before anything else is read.
const SNIFF_BYTES: usize = 8 << 10;

/// Bytes read at a time when going through lines.
const CHUNK_BYTES: usize = 64 << 10;

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

/// Refuses a path with the extension of an image, a document or an
/// archive, before anything is read.
pub(crate) fn refuse_by_extension(real: &Path, shown: &str) -> Result<(), ToolError> {
    let extension = real.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match NOT_TEXT_EXTENSIONS.iter().find(|(e, _)| Some(*e) == extension.as_deref()) {
        Some((_, what)) => Err(ToolError::NotText { path: shown.to_owned(), what }),
        None => Ok(()),
    }
}

/// The text file at `real` (shown as `shown`), opened: refused when it is
/// not a regular file or has the extension of an image or an archive.
fn open_text(jail: &Jail, real: &Path, shown: &str) -> Result<File, ToolError> {
    refuse_by_extension(real, shown)?;
    jail.open(real, shown)
}

/// Refuses bytes that are not text: a NUL (binary) or invalid UTF-8.
/// `complete`: `bytes` end where the file or a line ends, so a character
/// cut at the end is invalid too. Returns how many bytes are whole
/// characters (the rest waits for the next read).
pub(crate) fn check_text(bytes: &[u8], complete: bool, shown: &str) -> Result<usize, ToolError> {
    if bytes.contains(&0) {
        return Err(ToolError::NotText { path: shown.to_owned(), what: "binary" });
    }
    match std::str::from_utf8(bytes) {
        Ok(_) => Ok(bytes.len()),
        Err(e) if e.error_len().is_none() && !complete => Ok(e.valid_up_to()),
        Err(_) => Err(ToolError::NotText { path: shown.to_owned(), what: "not UTF-8" }),
    }
}

/// Reads up to `limit` bytes of `file` into `into`.
fn read_up_to(file: &mut impl std::io::Read, into: &mut Vec<u8>, limit: usize, shown: &str) -> Result<(), ToolError> {
    file.take(limit as u64).read_to_end(into).map(drop).map_err(|e| ToolError::io("cannot read", shown, e))
}

/// The whole text of the file at `real`: its head is checked first, then
/// its size ([`MAX_WHOLE_BYTES`]), then all of it.
pub(crate) fn read_whole(jail: &Jail, real: &Path, shown: &str) -> Result<String, ToolError> {
    let mut file = open_text(jail, real, shown)?;
    let mut bytes = Vec::new();
    read_up_to(&mut file, &mut bytes, SNIFF_BYTES, shown)?;
    check_text(&bytes, false, shown)?;
    let size = file.metadata().map_err(|e| ToolError::io("cannot read", shown, e))?.len();
    if size > MAX_WHOLE_BYTES {
        return Err(ToolError::TooLarge(format!(
            "{shown} has {size} bytes: files of up to {} MiB are edited whole; change it with bash, or \
             write a new file",
            MAX_WHOLE_BYTES >> 20
        )));
    }
    read_up_to(&mut file, &mut bytes, (MAX_WHOLE_BYTES + 1) as usize, shown)?;
    if bytes.len() as u64 > MAX_WHOLE_BYTES {
        return Err(ToolError::TooLarge(format!("{shown} grew past {} MiB while it was read", MAX_WHOLE_BYTES >> 20)));
    }
    check_text(&bytes, true, shown)?;
    String::from_utf8(bytes).map_err(|_| ToolError::NotText { path: shown.to_owned(), what: "not UTF-8" })
}

/// The text of a file a walk listed (for `ast_search`): `None` when it
/// cannot be opened, is larger than [`MAX_WHOLE_BYTES`] or is not UTF-8.
pub(crate) fn read_listed(jail: &Jail, real: &Path) -> Option<String> {
    let file = jail.open_listed(real)?;
    if file.metadata().ok()?.len() > MAX_WHOLE_BYTES {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_WHOLE_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

/// One line as `read` shows it: at most [`MAX_LINE_CHARS`] characters of
/// it, and how many more it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineHead {
    /// The line's first characters, without its line end.
    pub head: String,
    /// Characters of the line left out.
    pub more: usize,
}

/// The lines of a text file, read a chunk at a time: memory holds one
/// chunk and one line's head, whatever the file's size or its longest
/// line. A NUL or invalid UTF-8 anywhere fails the read when it is met.
/// Only the bytes the file had when it was opened are read (a log that
/// keeps growing does not hold the read).
pub(crate) struct TextLines {
    file: Box<dyn std::io::Read + Send>,
    shown: String,
    buffer: Vec<u8>,
    start: usize,
    end: bool,
    /// Bytes read at a time.
    chunk: usize,
}

impl TextLines {
    /// The lines of the file at `real`.
    pub(crate) fn open(jail: &Jail, real: &Path, shown: &str) -> Result<Self, ToolError> {
        let file = open_text(jail, real, shown)?;
        let size = file.metadata().map_err(|e| ToolError::io("cannot read", shown, e))?.len();
        TextLines::of(Box::new(file.take(size)), shown)
    }

    /// The lines of `text` (a file's as an editor has it).
    pub(crate) fn in_memory(text: String, shown: &str) -> Result<Self, ToolError> {
        TextLines::of(Box::new(std::io::Cursor::new(text.into_bytes())), shown)
    }

    fn of(file: Box<dyn std::io::Read + Send>, shown: &str) -> Result<Self, ToolError> {
        Ok(TextLines { file, shown: shown.to_owned(), buffer: Vec::new(), start: 0, end: false, chunk: CHUNK_BYTES })
    }

    /// Reads more of the file after the bytes not yet taken; false at its end.
    fn refill(&mut self) -> Result<bool, ToolError> {
        if self.end {
            return Ok(false);
        }
        self.buffer.drain(..self.start);
        self.start = 0;
        let before = self.buffer.len();
        read_up_to(&mut self.file, &mut self.buffer, self.chunk, &self.shown)?;
        self.end = self.buffer.len() == before;
        Ok(!self.end)
    }

    /// The next line (its head when `keep`, else only its checks), or
    /// `None` after the last. Like `str::lines`, a last line end makes no
    /// empty line after it, and a CR before a LF is not part of the line.
    pub(crate) fn next_line(&mut self, keep: bool) -> Result<Option<LineHead>, ToolError> {
        let mut line = LineHead { head: String::new(), more: 0 };
        let mut head_chars = 0;
        let mut any = false;
        let mut last_cr = false;
        loop {
            if self.start == self.buffer.len() && !self.refill()? {
                return Ok(any.then_some(line));
            }
            let rest = &self.buffer[self.start..];
            let newline = rest.iter().position(|&b| b == b'\n');
            let segment = &rest[..newline.unwrap_or(rest.len())];
            let complete = newline.is_some() || self.end;
            let whole = check_text(segment, complete, &self.shown)?;
            if whole == 0 && newline.is_none() {
                // A character cut by the chunk's end: read on (at the
                // file's end the cut character is refused).
                if !self.refill()? {
                    check_text(&self.buffer[self.start..], true, &self.shown)?;
                }
                continue;
            }
            any = true;
            let text = std::str::from_utf8(&segment[..whole]).unwrap_or_default();
            if keep {
                for c in text.chars() {
                    if head_chars < MAX_LINE_CHARS {
                        line.head.push(c);
                        head_chars += 1;
                    } else {
                        line.more += 1;
                    }
                }
            }
            self.start += whole;
            last_cr = text.chars().next_back().map_or(last_cr, |c| c == '\r');
            if newline.is_some_and(|at| at == whole) {
                self.start += 1;
                if keep && last_cr {
                    // CR LF ends the line: the CR is not part of it.
                    if line.more > 0 {
                        line.more -= 1;
                    } else {
                        line.head.pop();
                    }
                }
                return Ok(Some(line));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jail_with(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Jail) {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in files {
            std::fs::write(dir.path().join(name), bytes).unwrap();
        }
        let jail = Jail::new(dir.path()).unwrap();
        (dir, jail)
    }

    fn whole(jail: &Jail, name: &str) -> Result<String, ToolError> {
        read_whole(jail, &jail.resolve(name).unwrap(), name)
    }

    fn lines(jail: &Jail, name: &str) -> Result<Vec<LineHead>, ToolError> {
        lines_by(jail, name, CHUNK_BYTES)
    }

    fn lines_by(jail: &Jail, name: &str, chunk: usize) -> Result<Vec<LineHead>, ToolError> {
        let mut lines = TextLines::open(jail, &jail.resolve(name).unwrap(), name)?;
        lines.chunk = chunk;
        let mut out = Vec::new();
        while let Some(line) = lines.next_line(true)? {
            out.push(line);
        }
        Ok(out)
    }

    #[test]
    fn text_checks_refuse_what_is_not_text() {
        let (_dir, jail) = jail_with(&[
            ("bin", b"ab\0cd"),
            ("latin1", b"caf\xe9"),
            ("pic.PNG", b"whatever"),
            ("ok.txt", b"fine"),
            ("cut", b"caf\xc3"),
        ]);
        type Reader = fn(&Jail, &str) -> Result<String, ToolError>;
        let readers: [Reader; 2] = [whole, |j, n| lines(j, n).map(|_| String::new())];
        for read in readers {
            assert!(read(&jail, "bin").unwrap_err().to_string().contains("binary"));
            assert!(read(&jail, "latin1").unwrap_err().to_string().contains("not UTF-8"));
            assert!(read(&jail, "cut").unwrap_err().to_string().contains("not UTF-8"));
            assert!(read(&jail, "pic.PNG").unwrap_err().to_string().contains("an image"));
            assert!(matches!(read(&jail, "."), Err(ToolError::NotAFile(_))));
            assert!(matches!(read(&jail, "nope"), Err(ToolError::NotFound(_))));
        }
        assert_eq!(whole(&jail, "ok.txt").unwrap(), "fine");
    }

    #[test]
    fn lines_match_str_lines_across_chunk_ends() {
        // Characters of 1 to 4 bytes and CRLF line ends, past several chunks.
        let mut text = String::new();
        for i in 0..20_000 {
            text.push_str(["a", "é", "€", "😀"][i % 4]);
            if i % 7 == 0 {
                text.push_str(if i % 2 == 0 { "\r\n" } else { "\n" });
            }
        }
        text.push_str("\nlast\r");
        let (_dir, jail) = jail_with(&[("t.txt", text.as_bytes())]);
        let read: Vec<String> = lines(&jail, "t.txt").unwrap().into_iter().map(|l| l.head).collect();
        let expected: Vec<String> = text.lines().map(|l| l.chars().take(MAX_LINE_CHARS).collect()).collect();
        assert_eq!(read, expected);
    }

    proptest::proptest! {
        #[test]
        fn lines_read_in_any_chunks_are_str_lines(
            text in "([a-z é€😀\\r]{0,8}\\n?){0,40}",
            chunk in 1usize..12,
        ) {
            let (_dir, jail) = jail_with(&[("t.txt", text.as_bytes())]);
            let read = lines_by(&jail, "t.txt", chunk).unwrap();
            let expected: Vec<LineHead> = text.lines().map(|l| LineHead { head: l.into(), more: 0 }).collect();
            proptest::prop_assert_eq!(read, expected);
        }
    }

    #[test]
    fn a_long_line_keeps_only_its_head() {
        let line = "x".repeat(3 * CHUNK_BYTES + 5);
        let (_dir, jail) = jail_with(&[("long", format!("{line}\nshort").as_bytes())]);
        let read = lines(&jail, "long").unwrap();
        assert_eq!(read[0].head.len(), MAX_LINE_CHARS);
        assert_eq!(read[0].more, line.len() - MAX_LINE_CHARS);
        assert_eq!(read[1], LineHead { head: "short".into(), more: 0 });
    }

    #[cfg(unix)]
    #[test]
    fn a_huge_sparse_file_is_refused_after_its_head() {
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::File::create(dir.path().join("sparse")).unwrap();
        file.set_len(1 << 30).unwrap();
        let jail = Jail::new(dir.path()).unwrap();
        let error = whole(&jail, "sparse").unwrap_err();
        assert!(error.to_string().contains("binary"), "{error}");
        assert!(lines(&jail, "sparse").unwrap_err().to_string().contains("binary"));
        let big = std::fs::File::create(dir.path().join("big.txt")).unwrap();
        std::io::Write::write_all(&mut &big, "text\n".repeat(2 * SNIFF_BYTES).as_bytes()).unwrap();
        big.set_len(MAX_WHOLE_BYTES + 1).unwrap();
        // Its head is text; its size alone refuses it, before a full read.
        let error = whole(&jail, "big.txt").unwrap_err();
        assert_eq!(error.code(), "too_large", "{error}");
    }
}
