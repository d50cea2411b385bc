//! Parse errors: message, character-based line and column, caret snippets.

use std::fmt;
use std::ops::Range;

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
    /// An error at `span` of `source`.
    pub(crate) fn new(source: &str, span: Range<usize>, message: String) -> Self {
        let (line, column) = line_column(source, span.start);
        ParseError { message, span, line, column }
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
    pub fn render(&self, source: &str) -> String {
        let start = self.span.start.min(source.len());
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..].find('\n').map_or(source.len(), |i| start + i);
        let text = source[line_start..line_end].trim_end_matches('\r');
        let end = self.span.end.clamp(start, line_end);
        let width = source[start..end].chars().count().max(1);
        let number = self.line.to_string();
        let pad = " ".repeat(number.len());
        let indent: String = source[line_start..start].chars().map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
        format!(
            "error: {}\n{pad}--> line {}, column {}\n{pad} |\n{number} | {text}\n{pad} | {indent}{}\n",
            self.message,
            self.line,
            self.column,
            "^".repeat(width)
        )
    }
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

/// 1-based line and character column of a byte offset.
pub fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &source[..offset];
    let line = before.bytes().filter(|b| *b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
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
        let error = ParseError::new(source, at..at + 5, "EXPAND: bad".into());
        let text = error.render(source);
        assert!(text.contains("--> line 2, column 10"), "{text}");
        assert!(text.contains("2 | EXPAND x depth=2\n  |          ^^^^^\n"), "{text}");
    }
}
