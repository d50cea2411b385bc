//! Literals: `::` content and table rows, JSON-like values, strings and
//! their escapes.

use std::ops::Range;

use super::{PResult, Parser};
use crate::ast::*;
use crate::error::excerpt;
use crate::lexer::Tok;

impl<'s> Parser<'s> {
    /// `:: <content>` or nothing.
    pub(super) fn content(&mut self) -> PResult<Option<ContentLiteral>> {
        if !self.eat(Tok::DoubleColon) {
            return Ok(None);
        }
        if self.kind() == Tok::TableRow {
            let start = self.peek().span.start;
            let mut rows = Vec::new();
            loop {
                let token = self.bump();
                self.within_content_limit(start..token.span.end, "table")?;
                rows.push(self.table_row(token.span)?);
                // A blank line ends the table: the newline token then holds two line ends.
                let one_line_end = self.text().bytes().filter(|b| *b == b'\n').count() == 1;
                if self.kind() == Tok::Newline && one_line_end && self.next_kind() == Tok::TableRow {
                    self.bump();
                    continue;
                }
                break;
            }
            return Ok(Some(ContentLiteral::Table(rows)));
        }
        if self.at_command_end() {
            return Err(self.expected("content after '::'"));
        }
        Ok(Some(ContentLiteral::Value(self.value(false)?)))
    }

    /// Cells of one `|a|b|` row; `\|` is a literal bar, other escapes are
    /// those of strings.
    pub(super) fn table_row(&mut self, span: Range<usize>) -> PResult<Vec<String>> {
        let row = &self.src[span.clone()];
        let mut cells = Vec::new();
        let body = &row[1..];
        let mut cell_start = 0;
        let mut chars = body.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    chars.next();
                }
                '|' => {
                    let raw = body[cell_start..i].trim_matches([' ', '\t', '\r']);
                    let at = span.start + 1 + cell_start;
                    cells.push(self.unescape(raw, at, true)?);
                    cell_start = i + 1;
                }
                _ => {}
            }
        }
        let rest = body[cell_start..].trim();
        if !rest.is_empty() {
            let at = span.start + 1 + cell_start;
            return Err(self.error_at(at..span.end, "a table row must end with '|'".into()));
        }
        Ok(cells)
    }

    // ---- values -------------------------------------------------------

    /// A literal value. With `bare_words`, a word other than
    /// true/false/null reads as a string.
    pub(super) fn value(&mut self, bare_words: bool) -> PResult<Value> {
        match self.kind() {
            Tok::DqString | Tok::SqString | Tok::Unterminated => self.string().map(Value::String),
            Tok::Int => {
                let text = self.text();
                match text.parse::<i64>() {
                    Ok(n) => {
                        self.bump();
                        Ok(Value::Int(n))
                    }
                    Err(_) => {
                        let span = self.peek().span.clone();
                        Err(self.error_at(span, format!("number {} does not fit in 64 bits", excerpt(text, 40))))
                    }
                }
            }
            Tok::Float => {
                let text = self.text();
                match text.parse::<f64>() {
                    Ok(x) if x.is_finite() => {
                        self.bump();
                        Ok(Value::Float(x))
                    }
                    _ => {
                        let span = self.peek().span.clone();
                        Err(self.error_at(span, format!("number {} is out of range", excerpt(text, 40))))
                    }
                }
            }
            Tok::Word => {
                let text = self.text();
                let value = if text.eq_ignore_ascii_case("true") {
                    Value::Bool(true)
                } else if text.eq_ignore_ascii_case("false") {
                    Value::Bool(false)
                } else if text.eq_ignore_ascii_case("null") {
                    Value::Null
                } else if bare_words {
                    Value::String(text.to_owned())
                } else {
                    return Err(self.expected("a value (a string, number, true, false, null, [..] or {..})"));
                };
                self.bump();
                Ok(value)
            }
            Tok::LBracket => {
                self.bump();
                self.nested(|p| p.delimited(Tok::RBracket, "',' or ']' in the array", |p| p.value(bare_words)))
                    .map(Value::Array)
            }
            Tok::LBrace => {
                self.bump();
                self.nested(|p| {
                    p.delimited(Tok::RBrace, "',' or '}' in the object", |p| {
                        let key = match p.kind() {
                            Tok::DqString | Tok::SqString => p.string()?,
                            Tok::Word => p.bump_text().to_owned(),
                            _ => return Err(p.expected("an object key")),
                        };
                        p.expect(Tok::Colon, "':' after the object key")?;
                        p.skip_newlines();
                        Ok((key, p.value(bare_words)?))
                    })
                })
                .map(Value::Object)
            }
            Tok::LabelRef | Tok::At if bare_words => self.block_ref().map(Value::Ref),
            _ => Err(self.expected("a value (a string, number, true, false, null, [..] or {..})")),
        }
    }

    /// Comma-separated items up to `close` (the opening bracket already
    /// read); line breaks may fall anywhere between items.
    pub(super) fn delimited<T>(
        &mut self,
        close: Tok,
        what: &str,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        let mut items = Vec::new();
        loop {
            self.skip_newlines();
            if self.eat(close) {
                return Ok(items);
            }
            items.push(item(self)?);
            self.skip_newlines();
            if !self.eat(Tok::Comma) {
                self.skip_newlines();
                self.expect(close, what)?;
                return Ok(items);
            }
        }
    }

    /// The current string token, decoded.
    pub(super) fn string(&mut self) -> PResult<String> {
        let token = self.peek().clone();
        match token.kind {
            Tok::DqString | Tok::SqString => {
                self.bump();
                self.within_content_limit(token.span.clone(), "string")?;
                let inner = &self.src[token.span.start + 1..token.span.end - 1];
                self.unescape(inner, token.span.start + 1, false)
            }
            Tok::Unterminated => {
                self.bump();
                Err(self.error_at(token.span.start..token.span.start + 1, "string is never closed".into()))
            }
            _ => Err(self.expected("a quoted string")),
        }
    }

    /// Refuses a literal longer than [`super::ParseOptions::max_content_bytes`]
    /// before anything is decoded or copied.
    fn within_content_limit(&mut self, span: Range<usize>, what: &str) -> PResult<()> {
        let limit = self.options.max_content_bytes;
        if span.len() <= limit {
            return Ok(());
        }
        let at = span.start..span.start + 1;
        Err(self.error_at(
            at,
            format!(
                "this {what} is {} bytes, over the content limit of {} (ParseOptions::max_content_bytes); \
                 split the content or raise the limit",
                span.len(),
                human_bytes(limit)
            ),
        ))
    }

    /// Decodes `\n \t \r \0 \" \' \\ \u{XXXX}` (and `\|` in table cells); a
    /// line break written as CR LF in the source reads as `\n`.
    pub(super) fn unescape(&mut self, raw: &str, offset: usize, table_cell: bool) -> PResult<String> {
        if !raw.contains(['\\', '\r']) {
            return Ok(raw.to_owned());
        }
        let mut out = String::with_capacity(raw.len());
        let mut chars = raw.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '\r' && chars.peek().is_some_and(|(_, next)| *next == '\n') {
                continue;
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some((_, escape)) = chars.next() else {
                return Err(self.error_at(offset + i..offset + i + 1, "a lone '\\' ends the text".into()));
            };
            match escape {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                '"' | '\'' | '\\' => out.push(escape),
                '|' if table_cell => out.push('|'),
                'u' => {
                    let rest = &raw[i + 2..];
                    let decoded = rest
                        .strip_prefix('{')
                        .and_then(|r| r.split_once('}'))
                        .filter(|(hex, _)| (1..=6).contains(&hex.len()))
                        .and_then(|(hex, _)| u32::from_str_radix(hex, 16).ok().map(|n| (n, hex.len())))
                        .and_then(|(n, len)| char::from_u32(n).map(|c| (c, len)));
                    match decoded {
                        Some((c, len)) => {
                            out.push(c);
                            for _ in 0..len + 2 {
                                chars.next();
                            }
                        }
                        None => return Err(self.error_at(
                            offset + i..offset + i + 2,
                            "invalid unicode escape: expected \\u{XXXX} with 1 to 6 hex digits of a valid character"
                                .into(),
                        )),
                    }
                }
                other => {
                    let end = offset + i + 1 + other.len_utf8();
                    return Err(self.error_at(
                        offset + i..end,
                        format!("unknown escape '\\{other}' (expected \\n \\t \\r \\0 \\\" \\' \\\\ or \\u{{..}})"),
                    ));
                }
            }
        }
        Ok(out)
    }
}

/// `16 MiB`, `512 KiB` or `100 bytes`.
pub(crate) fn human_bytes(bytes: usize) -> String {
    const KIB: usize = 1024;
    if bytes >= KIB * KIB && bytes.is_multiple_of(KIB * KIB) {
        format!("{} MiB", bytes / (KIB * KIB))
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}
