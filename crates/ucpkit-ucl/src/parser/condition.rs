//! Block references, edge types, paths and WHERE conditions.

use ucpkit_core::{BlockId, EdgeType};

use super::{suggest, PResult, Parser};
use crate::ast::*;
use crate::lexer::Tok;

impl<'s> Parser<'s> {
    // ---- references, paths, conditions --------------------------------

    pub(super) fn block_ref(&mut self) -> PResult<BlockRef> {
        const WHAT: &str = "a block id (blk_…, a short id or @label)";
        match self.kind() {
            Tok::Word if self.text().starts_with(ucpkit_core::ID_PREFIX) => {
                let text = self.bump_text();
                Ok(match text.parse::<BlockId>() {
                    Ok(id) => BlockRef::Id(id),
                    Err(_) => BlockRef::Name(text.to_owned()),
                })
            }
            Tok::Int => match self.text().parse::<u32>() {
                Ok(n) => {
                    self.bump();
                    Ok(BlockRef::Short(n))
                }
                Err(_) => Err(self.expected(WHAT)),
            },
            Tok::LabelRef => {
                let label = &self.bump_text()[1..];
                Ok(match label.parse::<BlockId>() {
                    Ok(id) if label.starts_with(ucpkit_core::ID_PREFIX) => BlockRef::Id(id),
                    _ => BlockRef::Label(label.to_owned()),
                })
            }
            Tok::At if matches!(self.next_kind(), Tok::DqString | Tok::SqString) => {
                self.bump();
                self.string().map(BlockRef::Label)
            }
            _ => Err(self.expected(WHAT)),
        }
    }

    pub(super) fn edge_type(&mut self) -> PResult<EdgeType> {
        let span = self.peek().span.clone();
        let name = match self.kind() {
            Tok::Word => {
                let mut name = self.bump_text().to_owned();
                if self.kind() == Tok::Colon && self.next_kind() == Tok::Word {
                    self.bump();
                    name.push(':');
                    name.push_str(self.bump_text());
                }
                name
            }
            Tok::DqString | Tok::SqString => self.string()?,
            _ => return Err(self.expected("an edge type (references, links_to, ... or custom:<name>)")),
        };
        let end = self.previous_end();
        name.parse::<EdgeType>().map_err(|_| {
            let message = unknown_edge_type(&name);
            self.error_at(span.start..end, message)
        })
    }

    pub(super) fn path(&mut self) -> PResult<Path> {
        let mut segments = Vec::new();
        if self.eat(Tok::Dollar) {
            segments.push(PathSegment::Field("content".into()));
            segments.push(PathSegment::Field("value".into()));
            if self.kind() == Tok::Word {
                segments.push(PathSegment::Field(self.bump_text().to_owned()));
            }
        } else if self.kind() == Tok::Word {
            segments.push(PathSegment::Field(self.bump_text().to_owned()));
        } else if self.kind() == Tok::LBracket && matches!(self.next_kind(), Tok::DqString | Tok::SqString) {
            self.bump();
            segments.push(self.bracket_segment()?);
        } else {
            return Err(self.expected("a path (content.text, metadata.tags ...)"));
        }
        loop {
            if self.eat(Tok::Dot) {
                if self.kind() != Tok::Word {
                    return Err(self.expected("a field name after '.'"));
                }
                segments.push(PathSegment::Field(self.bump_text().to_owned()));
            } else if self.eat(Tok::LBracket) {
                segments.push(self.bracket_segment()?);
            } else {
                return Ok(Path(segments));
            }
        }
    }

    /// After `[`: `i]`, `a:b]`, `:b]`, `a:]`, `:]` or `"key"]`.
    pub(super) fn bracket_segment(&mut self) -> PResult<PathSegment> {
        if matches!(self.kind(), Tok::DqString | Tok::SqString) {
            let key = self.string()?;
            self.expect(Tok::RBracket, "']'")?;
            return Ok(PathSegment::Field(key));
        }
        let start = self.optional_index()?;
        if self.eat(Tok::Colon) {
            let end = self.optional_index()?;
            self.expect(Tok::RBracket, "']' closing the slice")?;
            return Ok(PathSegment::Slice(start, end));
        }
        self.expect(Tok::RBracket, "']' closing the index")?;
        match start {
            Some(i) => Ok(PathSegment::Index(i)),
            None => Err(self.expected("an index")),
        }
    }

    pub(super) fn optional_index(&mut self) -> PResult<Option<i64>> {
        if self.kind() != Tok::Int {
            return Ok(None);
        }
        match self.text().parse::<i64>() {
            Ok(i) => {
                self.bump();
                Ok(Some(i))
            }
            Err(_) => Err(self.expected("an index that fits in 64 bits")),
        }
    }

    pub(super) fn optional_where(&mut self) -> PResult<Option<Condition>> {
        if self.eat_word("WHERE") {
            self.condition().map(Some)
        } else {
            Ok(None)
        }
    }

    /// `a OR b OR ...` as one n-ary node (a loop, not a recursion per
    /// term); one level of [`Parser::nested`] per parenthesis or NOT.
    pub(super) fn condition(&mut self) -> PResult<Condition> {
        self.nested(|p| p.chain("OR", Self::and_condition, Condition::Or))
    }

    fn and_condition(&mut self) -> PResult<Condition> {
        self.chain("AND", Self::unary_condition, Condition::And)
    }

    /// `operand (OP operand)*` as one n-ary node when there are two or more
    /// operands (a loop, so a long chain costs no recursion).
    fn chain(
        &mut self,
        op: &str,
        operand: fn(&mut Self) -> PResult<Condition>,
        node: fn(Vec<Condition>) -> Condition,
    ) -> PResult<Condition> {
        let first = operand(self)?;
        if !self.eat_operator(op) {
            return Ok(first);
        }
        let mut terms = vec![first, operand(self)?];
        while self.eat_operator(op) {
            terms.push(operand(self)?);
        }
        Ok(node(terms))
    }

    /// Eats `AND` / `OR`, which may start the next line (or, inside
    /// parentheses, come after any line break); a line break after the
    /// operator is skipped too.
    fn eat_operator(&mut self, operator: &str) -> bool {
        let continues = self.kind() == Tok::Newline
            && (self.parens > 0 || (self.next_kind() == Tok::Word && self.next_is_word(operator)));
        if continues {
            self.bump();
        }
        let found = self.eat_word(operator);
        if found {
            self.skip_newlines();
        }
        found
    }

    pub(super) fn unary_condition(&mut self) -> PResult<Condition> {
        if self.eat_word("NOT") {
            return self.nested(|p| p.unary_condition()).map(|c| Condition::Not(Box::new(c)));
        }
        if self.eat(Tok::LParen) {
            self.parens += 1;
            self.skip_newlines();
            let inner = self.condition();
            if inner.is_ok() {
                self.skip_newlines();
            }
            self.parens -= 1;
            let inner = inner?;
            self.expect(Tok::RParen, "')' closing the condition")?;
            return Ok(inner);
        }
        let path = self.path()?;
        let op = match self.kind() {
            Tok::Eq => Some(CompareOp::Eq),
            Tok::Ne => Some(CompareOp::Ne),
            Tok::Gt => Some(CompareOp::Gt),
            Tok::Ge => Some(CompareOp::Ge),
            Tok::Lt => Some(CompareOp::Lt),
            Tok::Le => Some(CompareOp::Le),
            Tok::Word => match self.text().to_ascii_uppercase().as_str() {
                "CONTAINS" => Some(CompareOp::Contains),
                "STARTS_WITH" => Some(CompareOp::StartsWith),
                "ENDS_WITH" => Some(CompareOp::EndsWith),
                "MATCHES" => Some(CompareOp::Matches),
                "EXISTS" | "IS_NULL" | "IS_NOT_NULL" | "IS_EMPTY" => None,
                _ => return Ok(Condition::Truthy(path)),
            },
            _ => return Ok(Condition::Truthy(path)),
        };
        if let Some(op) = op {
            self.bump();
            let value = self.value(true)?;
            return Ok(Condition::Compare { path, op, value });
        }
        let check = match self.bump_text().to_ascii_uppercase().as_str() {
            "EXISTS" => Check::Exists,
            "IS_NULL" => Check::IsNull,
            "IS_NOT_NULL" => Check::IsNotNull,
            _ => Check::IsEmpty,
        };
        Ok(Condition::Check { path, check })
    }
}

/// Upstream's tree relations, which UCP keeps as the document tree itself.
const TREE_RELATIONS: &[&str] = &["parent_of", "child_of", "sibling_of", "previous_sibling", "next_sibling"];

/// Why `name` is no edge type, with the known ones and the custom form.
fn unknown_edge_type(name: &str) -> String {
    let names: Vec<String> = EdgeType::BUILT_IN.iter().map(|t| t.name().into_owned()).collect();
    let known: Vec<&str> = names.iter().map(String::as_str).collect();
    let lower = name.to_ascii_lowercase();
    let shown = crate::error::excerpt(name, 40);
    let advice = if TREE_RELATIONS.contains(&lower.as_str()) {
        format!("{lower} is the document tree in UCP, not an edge: use EXPAND UP|DOWN, GOTO or PATH; ")
    } else if lower == "transformed_from" {
        "did you mean derived_from? ".to_owned()
    } else {
        suggest(&lower, &known).map(|s| format!("did you mean {s}? ")).unwrap_or_default()
    };
    format!(
        "unknown edge type '{shown}' ({advice}known types: {}; custom types are written custom:{shown})",
        known.join(", ")
    )
}
