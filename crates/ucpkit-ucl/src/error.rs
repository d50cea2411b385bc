//! Parse errors: message, character-based line and column, caret snippets.

use std::fmt;
use std::ops::Range;

use ucpkit_core::escape_char;

/// One problem found while parsing.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ParseError {
    /// What went wrong, led by the command it happened in
    /// (`EXPAND: expected direction UP|DOWN|BOTH|SEMANTIC after block id, found 'depth'`).
    pub message: String,
    /// Byte range of the offending text.
    pub span: Range<usize>,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
}

impl ParseError {
    /// An error at `span` of `source`, placed with a [`LineIndex`] of it.
    pub(crate) fn at(lines: &LineIndex, source: &str, span: Range<usize>, message: String) -> Self {
        let (line, column) = lines.line_column(source, span.start);
        ParseError { message: sanitize_message(&message), span, line, column }
    }

    /// The error with the offending line and a caret under the span:
    ///
    /// ```text
    /// error: EXPAND: expected direction UP|DOWN|BOTH|SEMANTIC after block id, found 'depth'
    ///  --> line 1, column 37
    ///   |
    /// 1 | EXPAND blk_000000000000000000000000 depth=2
    ///   |                                     ^^^^^
    /// ```
    ///
    /// Control characters of the line show as escapes (`\x1b`, `\0`, `\r`)
    /// with the caret kept under them, and a long line is cut to a window
    /// around the span, marked with `…`.
    pub fn render(&self, source: &str) -> String {
        let start = floor_char_boundary(source, self.span.start);
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..].find('\n').map_or(source.len(), |i| start + i);
        let end = floor_char_boundary(source, self.span.end.clamp(start, line_end));
        let snippet = Snippet::new(&source[line_start..start], &source[start..end], &source[end..line_end]);
        let number = self.line.to_string();
        let pad = " ".repeat(number.len());
        format!(
            "error: {}\n{pad}--> line {}, column {}\n{pad} |\n{number} | {}\n{pad} | {}{}\n",
            self.message,
            self.line,
            self.column,
            snippet.text,
            snippet.indent,
            "^".repeat(snippet.caret_width.max(1))
        )
    }
}

/// Display columns kept before the span in a snippet.
const CONTEXT_BEFORE: usize = 40;
/// Display columns of the whole snippet line.
const SNIPPET_WIDTH: usize = 120;
/// Longest message kept, in characters.
const MAX_MESSAGE_CHARS: usize = 1000;

/// One source line made safe to print, with the caret's place.
struct Snippet {
    text: String,
    indent: String,
    caret_width: usize,
}

impl Snippet {
    /// Escapes the three parts of a line and keeps a window of at most
    /// [`SNIPPET_WIDTH`] columns around the span; only the window is read,
    /// so a line of megabytes costs what its window costs.
    fn new(before: &str, span: &str, after: &str) -> Self {
        let after = after.strip_suffix('\r').unwrap_or(after);
        let mut kept_before: Vec<char> = Vec::new();
        let mut width_before = 0;
        let mut cut_left = false;
        for c in before.chars().rev() {
            let width = escape_char(c).chars().count();
            if width_before + width > CONTEXT_BEFORE {
                cut_left = true;
                break;
            }
            width_before += width;
            kept_before.push(c);
        }
        let mut text = String::new();
        let mut indent = String::new();
        if cut_left {
            text.push('…');
            indent.push(' ');
        }
        for &c in kept_before.iter().rev() {
            let escaped = escape_char(c);
            indent.extend(escaped.chars().map(|e| if e == '\t' { '\t' } else { ' ' }));
            text.push_str(&escaped);
        }
        let mut budget = SNIPPET_WIDTH.saturating_sub(width_before);
        let caret_width = push_within(&mut text, span, &mut budget);
        push_within(&mut text, after, &mut budget);
        Snippet { text, indent, caret_width }
    }
}

/// Appends `part` escaped while it fits `budget` columns (then `…`);
/// returns the columns written.
fn push_within(out: &mut String, part: &str, budget: &mut usize) -> usize {
    let mut written = 0;
    for c in part.chars() {
        let escaped = escape_char(c);
        let width = escaped.chars().count();
        if width > *budget {
            out.push('…');
            *budget = 0;
            return written;
        }
        *budget -= width;
        written += width;
        out.push_str(&escaped);
    }
    written
}

/// `text` with control characters escaped and cut after `max_chars`
/// characters with `…`, for quoting input inside a message.
pub(crate) fn excerpt(text: &str, max_chars: usize) -> String {
    ucpkit_core::printable(text, max_chars).into_owned()
}

/// A message safe to print: input quoted in it has its control characters
/// escaped, and it stops after [`MAX_MESSAGE_CHARS`].
fn sanitize_message(message: &str) -> String {
    if message.len() <= MAX_MESSAGE_CHARS && !message.chars().any(|c| c.is_control()) {
        return message.to_owned();
    }
    excerpt(message, MAX_MESSAGE_CHARS)
}

fn floor_char_boundary(source: &str, offset: usize) -> usize {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Every error a parse found, in source order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ParseErrors(pub Vec<ParseError>);

impl ParseErrors {
    /// All errors with caret snippets.
    pub fn render(&self, source: &str) -> String {
        self.0.iter().map(|e| e.render(source)).collect::<Vec<_>>().join("\n")
    }
}

impl fmt::Display for ParseErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ParseErrors {}

/// 1-based line and character column of a byte offset. Scans the source
/// up to the offset: for many offsets of one source use a [`LineIndex`].
pub fn line_column(source: &str, offset: usize) -> (usize, usize) {
    LineIndex::new(&source[..floor_char_boundary(source, offset)]).line_column(source, offset)
}

/// Where each line of a source starts, built once so that the line and
/// column of any offset cost a binary search plus the characters of that
/// line before it (linear overall for a script's commands in order).
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Indexes the lines of `source`.
    pub fn new(source: &str) -> Self {
        let breaks = source.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1);
        LineIndex { starts: std::iter::once(0).chain(breaks).collect() }
    }

    /// 1-based line and character column of byte `offset` of the indexed
    /// `source` (an offset inside a character counts as that character).
    pub fn line_column(&self, source: &str, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(source, offset);
        let line = self.starts.partition_point(|start| *start <= offset);
        let mut line_start = self.starts[line - 1];
        if line == 1 && source.starts_with('\u{feff}') && offset >= 3 {
            line_start = 3;
        }
        let column = source[line_start..offset].chars().count() + 1;
        (line, column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_not_bytes() {
        let source = "APPEND blk_a text :: \"héllo\" ~";
        let offset = source.find('~').unwrap();
        assert_eq!(line_column(source, offset), (1, 30));
        assert_eq!(line_column("a\nb\nécrit x", "a\nb\nécrit ".len()), (3, 7));
    }

    #[test]
    fn render_points_at_the_span() {
        let source = "GOTO blk_a\nEXPAND x depth=2";
        let at = source.find("depth").unwrap();
        let error = ParseError::at(&LineIndex::new(source), source, at..at + 5, "EXPAND: bad".into());
        let text = error.render(source);
        assert!(text.contains("--> line 2, column 10"), "{text}");
        assert!(text.contains("2 | EXPAND x depth=2\n  |          ^^^^^\n"), "{text}");
    }
}
