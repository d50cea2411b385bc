//! `read`: a text file's lines, numbered as `cat -n` does, from an offset
//! and up to a limit, long lines cut, within the token cap, in memory that
//! does not grow with the file.

use serde::Serialize;

use crate::page::Meter;
use crate::text::TextLines;
use crate::{ToolError, Tools};

/// Lines a read returns when no limit is given.
pub const DEFAULT_READ_LINES: usize = 2000;

/// A read call.
#[derive(Debug, Clone, Default)]
pub struct ReadRequest {
    /// The file, relative to the root.
    pub path: String,
    /// First line to return, 1-based (default 1).
    pub offset: Option<usize>,
    /// Most lines to return (default 2000, `DEFAULT_READ_LINES`).
    pub limit: Option<usize>,
}

/// A read answer.
#[derive(Debug, Clone, Serialize)]
pub struct ReadResult {
    /// Path relative to the root.
    pub path: String,
    /// First line shown (1-based).
    pub first_line: usize,
    /// Lines shown.
    pub lines_shown: usize,
    /// Lines in the file.
    pub total_lines: usize,
    /// The numbered lines, and a closing note when lines are left.
    pub text: String,
}

impl Tools {
    /// Reads lines of a text file, going through it a chunk at a time (its
    /// lines are counted to the end; only the lines shown are kept).
    pub fn read(&self, request: &ReadRequest) -> Result<ReadResult, ToolError> {
        let real = self.jail.resolve(&request.path)?;
        let shown = self.jail.display(&real);
        let first = request.offset.unwrap_or(1);
        if first == 0 {
            return Err(ToolError::Arguments("offset is a 1-based line number".into()));
        }
        let mut lines = match self.through_editor(&real) {
            true => TextLines::in_memory(self.whole_text(&real, &shown)?, &shown)?,
            false => TextLines::open(&self.jail, &real, &shown)?,
        };
        let limit = request.limit.unwrap_or(DEFAULT_READ_LINES).max(1);
        let tokenizer = || self.tokenizer();
        let mut meter = Meter::new(self.max_tokens.saturating_sub(40), &tokenizer);
        let mut text = String::new();
        let mut shown_lines = 0;
        let mut total = 0;
        // Set once a line does not fit: the lines after it are only counted.
        let mut full = false;
        loop {
            let wanted = !full && total + 1 >= first && shown_lines < limit;
            let Some(line) = lines.next_line(wanted)? else { break };
            total += 1;
            if !wanted {
                continue;
            }
            let number = total.to_string();
            let width = number.len().max(6);
            let cut = match line.more {
                0 => String::new(),
                more => format!("… [line cut: {more} more characters]"),
            };
            let numbered = format!("{number:>width$}\t{}{cut}\n", line.head);
            if !meter.admit(&text, &numbered) {
                if request.limit.is_some() {
                    return Err(ToolError::TooLarge(format!(
                        "lines {first}–{} of {shown} take more than {} tokens: ask for fewer lines \
                         (offset={first} limit={shown_lines}), then go on from offset={}",
                        first + limit - 1,
                        self.max_tokens,
                        first + shown_lines
                    )));
                }
                full = true;
                continue;
            }
            text.push_str(&numbered);
            shown_lines += 1;
        }
        if first > total.max(1) {
            return Err(ToolError::Arguments(format!("offset {first} is past the end: {shown} has {total} lines")));
        }
        let next = first + shown_lines;
        if next <= total {
            text.push_str(&format!("[lines {first}–{} of {total} shown: pass offset={next} to read on]\n", next - 1));
        }
        if total == 0 {
            text.push_str(&format!("[{shown} is empty]\n"));
        }
        Ok(ReadResult { path: shown, first_line: first, lines_shown: shown_lines, total_lines: total, text })
    }
}
