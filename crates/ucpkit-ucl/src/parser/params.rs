//! Parameters and small values: `NAME=value` lists, counts, fractions,
//! keywords, reasons, names, properties and content types.

use std::ops::Range;

use super::{PResult, Parser, REASONS};
use crate::ast::*;
use crate::lexer::Tok;

impl<'s> Parser<'s> {
    /// `NAME=value` parameters in any order, each at most once. `=` may be
    /// left out (`DEPTH 2`). `on_value` parses the value of a known name.
    pub(super) fn params(
        &mut self,
        names: &[&'static str],
        mut on_value: impl FnMut(&mut Self, &'static str) -> PResult<()>,
    ) -> PResult<()> {
        let mut seen: Vec<&str> = Vec::new();
        while !self.at_command_end() {
            let listing = names.join(", ");
            if self.kind() != Tok::Word {
                return Err(self.expected(&format!("a parameter ({listing}) or the end of the command")));
            }
            let word = self.text().to_ascii_uppercase();
            let span = self.peek().span.clone();
            let Some(name) = names.iter().copied().find(|n| *n == word) else {
                let found = self.found();
                return Err(self.error_at(span, format!("unknown parameter {found}; expected {listing}")));
            };
            if seen.contains(&name) {
                return Err(self.error_at(span, format!("{name} is given twice")));
            }
            seen.push(name);
            self.bump();
            self.eat(Tok::Eq);
            on_value(self, name)?;
        }
        Ok(())
    }

    pub(super) fn set_once<T>(
        &mut self,
        slot: &mut Option<T>,
        value: T,
        span: Range<usize>,
        name: &str,
    ) -> PResult<()> {
        if slot.is_some() {
            return Err(self.error_at(span, format!("{name} is given twice")));
        }
        *slot = Some(value);
        Ok(())
    }

    /// A non-negative integer that fits in `u32`.
    pub(super) fn count(&mut self, what: &str) -> PResult<u32> {
        if self.kind() != Tok::Int {
            return Err(self.expected(what));
        }
        match self.text().parse::<u32>() {
            Ok(n) => {
                self.bump();
                Ok(n)
            }
            Err(_) => {
                let found = self.found();
                let span = self.peek().span.clone();
                Err(self
                    .error_at(span, format!("expected {what} (a whole number from 0 to {}), found {found}", u32::MAX)))
            }
        }
    }

    /// A number between 0 and 1.
    pub(super) fn fraction(&mut self, what: &str) -> PResult<f64> {
        if !matches!(self.kind(), Tok::Int | Tok::Float) {
            return Err(self.expected(what));
        }
        match self.text().parse::<f64>() {
            Ok(x) if (0.0..=1.0).contains(&x) => {
                self.bump();
                Ok(x)
            }
            _ => Err(self.expected(what)),
        }
    }

    /// One of a fixed set of keywords, case-insensitive.
    pub(super) fn keyword<T: Copy>(&mut self, options: &[(&str, T)], listing: &str) -> PResult<T> {
        if matches!(self.kind(), Tok::Word | Tok::DqString | Tok::SqString) {
            let text = self.text().trim_matches(['"', '\'']);
            if let Some((_, value)) = options.iter().find(|(name, _)| name.eq_ignore_ascii_case(text)) {
                self.bump();
                return Ok(*value);
            }
        }
        Err(self.expected(listing))
    }

    pub(super) fn view_mode(&mut self) -> PResult<ViewMode> {
        self.keyword(
            &[
                ("FULL", ViewMode::Full),
                ("PREVIEW", ViewMode::Preview),
                ("METADATA", ViewMode::Metadata),
                ("IDS", ViewMode::Ids),
                ("ADAPTIVE", ViewMode::Adaptive),
            ],
            "a mode FULL|PREVIEW|METADATA|IDS|ADAPTIVE",
        )
    }

    pub(super) fn reason(&mut self) -> PResult<Reason> {
        self.keyword(
            REASONS,
            "a reason (direct_reference, semantic_relevance, structural_context, navigation_path, \
             user_preference, agent_decision, system_required)",
        )
    }

    /// A reason name, or (upstream's form) a quoted free text: kept as the
    /// note of an [`Reason::AgentDecision`].
    pub(super) fn reason_or_note(&mut self) -> PResult<(Reason, Option<String>)> {
        let quoted_text = matches!(self.kind(), Tok::DqString | Tok::SqString | Tok::Unterminated)
            && !REASONS.iter().any(|(name, _)| name.eq_ignore_ascii_case(self.text().trim_matches(['"', '\''])));
        if quoted_text {
            return self.string().map(|text| (Reason::AgentDecision, Some(text)));
        }
        self.reason().map(|r| (r, None))
    }

    /// `a,b,c` (words or strings) or `["a", "b"]`.
    pub(super) fn word_list(&mut self, what: &str) -> PResult<Vec<String>> {
        if self.kind() == Tok::LBracket {
            let start = self.peek().span.start;
            let value = self.value(false)?;
            let end = self.previous_end();
            let Value::Array(items) = value else { unreachable!("'[' starts an array") };
            return items
                .into_iter()
                .map(|item| match item {
                    Value::String(s) => Ok(s),
                    _ => Err(self.error_at(start..end, format!("expected {what} as strings"))),
                })
                .collect();
        }
        let mut items = vec![self.word_or_string(what)?];
        while self.eat(Tok::Comma) {
            items.push(self.word_or_string(what)?);
        }
        Ok(items)
    }

    pub(super) fn word_or_string(&mut self, what: &str) -> PResult<String> {
        match self.kind() {
            Tok::Word => Ok(self.bump_text().to_owned()),
            Tok::DqString | Tok::SqString | Tok::Unterminated => self.string(),
            _ => Err(self.expected(what)),
        }
    }

    pub(super) fn bump_text(&mut self) -> &'s str {
        let span = self.bump().span;
        &self.src[span]
    }

    /// A name after SNAPSHOT / BEGIN TRANSACTION: a string or a word.
    pub(super) fn name(&mut self, what: &str) -> PResult<String> {
        self.word_or_string(what)
    }

    pub(super) fn optional_name(&mut self) -> PResult<Option<String>> {
        if self.at_command_end() {
            Ok(None)
        } else {
            self.name("a transaction name").map(Some)
        }
    }

    /// `key=value ...` up to `::` or the end of the command.
    pub(super) fn properties(&mut self) -> PResult<Properties> {
        let mut properties: Properties = Vec::new();
        while !self.at_command_end() && self.kind() != Tok::DoubleColon {
            let span = self.peek().span.clone();
            let key = match self.kind() {
                Tok::Word => self.bump_text().to_owned(),
                Tok::DqString | Tok::SqString => self.string()?,
                _ => return Err(self.expected("a property name (key=value) or '::'")),
            };
            if properties.iter().any(|(k, _)| *k == key) {
                return Err(self.error_at(span, format!("property {key} is given twice")));
            }
            self.expect(Tok::Eq, &format!("'=' after property {key}"))?;
            let value = self.value(true)?;
            properties.push((key, value));
        }
        Ok(properties)
    }

    pub(super) fn content_type(&mut self) -> PResult<ContentType> {
        self.keyword(
            &[
                ("text", ContentType::Text),
                ("code", ContentType::Code),
                ("table", ContentType::Table),
                ("math", ContentType::Math),
                ("media", ContentType::Media),
                ("json", ContentType::Json),
                ("binary", ContentType::Binary),
                ("composite", ContentType::Composite),
            ],
            "a content type (text, code, table, math, media, json, binary, composite)",
        )
    }
}
