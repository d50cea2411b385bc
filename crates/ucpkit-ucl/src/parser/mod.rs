//! A recursive-descent parser over a token stream, with line-level error
//! recovery: a broken command is reported and parsing resumes on the next
//! line, so one run lists every error it can find.
//!
//! Every recursion (brackets, parentheses, NOT, ATOMIC groups) goes through
//! [`Parser::nested`], capped at [`MAX_NESTING`]; chains such as
//! `a OR b OR c` are loops building one n-ary node, so no input can make
//! the parser, the printer or an evaluator recurse deeper than the cap.
//! This module holds the entry points, the token cursor, recovery and the
//! dispatch of commands; `edits` and `traversal` one function per command,
//! `params` parameter lists and small values, `condition` references,
//! paths and WHERE conditions, `literal` values, strings and content.

mod condition;
mod edits;
mod literal;
mod params;
mod traversal;

use std::ops::Range;

use crate::ast::*;
use crate::error::{LineIndex, ParseError, ParseErrors};
use crate::lexer::{Tok, Token, TokenStream};

/// Deepest nesting of brackets, parentheses, NOT and ATOMIC groups
/// accepted; syntax trees from the parser (and from deserializing one) are
/// never deeper, so code walking them recursively stays within this bound.
pub const MAX_NESTING: usize = 64;
/// Errors kept before parsing gives up.
const MAX_ERRORS: usize = 100;

/// Limits applied while parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseOptions {
    /// Largest string literal, or table, accepted as one value, in bytes
    /// of source; a longer one is an error naming the limit, found before
    /// the text is decoded or copied.
    pub max_content_bytes: usize,
}

impl ParseOptions {
    /// The default content limit: 16 MiB.
    pub const DEFAULT_MAX_CONTENT_BYTES: usize = 16 * 1024 * 1024;
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions { max_content_bytes: Self::DEFAULT_MAX_CONTENT_BYTES }
    }
}

/// A parsed script with the byte span of each top-level command.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// The parsed sections.
    pub document: UclDocument,
    /// Byte span of each entry of `document.commands`.
    pub spans: Vec<Range<usize>>,
}

/// Parses a script: a command list, or the document form with its
/// `STRUCTURE` / `BLOCKS` / `COMMANDS` sections.
pub fn parse_script(source: &str) -> Result<Script, ParseErrors> {
    parse_script_with(source, &ParseOptions::default())
}

/// [`parse_script`] with explicit limits.
pub fn parse_script_with(source: &str, options: &ParseOptions) -> Result<Script, ParseErrors> {
    let mut parser = Parser::new(source, options);
    let script = parser.script();
    if parser.errors.is_empty() {
        Ok(script)
    } else {
        Err(ParseErrors(parser.errors))
    }
}

/// Parses a script and returns its sections.
pub fn parse_document(source: &str) -> Result<UclDocument, ParseErrors> {
    parse_script(source).map(|s| s.document)
}

/// Parses a command list (no `STRUCTURE` or `BLOCKS` sections allowed).
pub fn parse_commands(source: &str) -> Result<Vec<Command>, ParseErrors> {
    let mut parser = Parser::new(source, &ParseOptions::default());
    parser.sections_allowed = false;
    let script = parser.script();
    if parser.errors.is_empty() {
        Ok(script.document.commands)
    } else {
        Err(ParseErrors(parser.errors))
    }
}

/// Which part of a document form the parser is in.
#[derive(Clone, Copy, PartialEq)]
enum Section {
    Structure,
    Blocks,
    Commands,
}

/// An error already recorded; the caller recovers at the next line.
struct Reported;

type PResult<T> = Result<T, Reported>;

struct Parser<'s> {
    src: &'s str,
    tokens: TokenStream<'s>,
    options: ParseOptions,
    /// Built at the first error, for line and column.
    lines: Option<LineIndex>,
    errors: Vec<ParseError>,
    /// The command being parsed, named in errors.
    command: &'static str,
    depth: usize,
    /// Open parentheses of the condition being parsed: inside them line
    /// breaks are spaces.
    parens: usize,
    sections_allowed: bool,
}

const REASONS: &[(&str, Reason)] = &[
    ("direct_reference", Reason::DirectReference),
    ("semantic_relevance", Reason::SemanticRelevance),
    ("structural_context", Reason::StructuralContext),
    ("navigation_path", Reason::NavigationPath),
    ("user_preference", Reason::UserPreference),
    ("agent_decision", Reason::AgentDecision),
    ("system_required", Reason::SystemRequired),
];

const COMMANDS: &[&str] = &[
    "EDIT", "APPEND", "MOVE", "DELETE", "LINK", "UNLINK", "PRUNE", "FOLD", "SNAPSHOT", "BEGIN", "COMMIT", "ROLLBACK",
    "ATOMIC", "GOTO", "BACK", "EXPAND", "FOLLOW", "PATH", "SEARCH", "FIND", "VIEW", "CTX",
];

impl<'s> Parser<'s> {
    fn new(src: &'s str, options: &ParseOptions) -> Self {
        Parser {
            src,
            tokens: TokenStream::new(src),
            options: *options,
            lines: None,
            errors: Vec::new(),
            command: "",
            depth: 0,
            parens: 0,
            sections_allowed: true,
        }
    }

    // ---- token access -------------------------------------------------

    fn peek(&self) -> &Token {
        self.tokens.current()
    }

    fn kind(&self) -> Tok {
        self.tokens.current().kind
    }

    /// The kind of the token after the current one.
    fn next_kind(&self) -> Tok {
        self.tokens.lookahead().kind
    }

    /// Whether the token after the current one is the word `word`.
    fn next_is_word(&self, word: &str) -> bool {
        let next = self.tokens.lookahead();
        next.kind == Tok::Word && self.src[next.span.clone()].eq_ignore_ascii_case(word)
    }

    /// Where the last consumed token ended.
    fn previous_end(&self) -> usize {
        self.tokens.previous_end()
    }

    fn text(&self) -> &'s str {
        &self.src[self.peek().span.clone()]
    }

    fn bump(&mut self) -> Token {
        self.tokens.advance()
    }

    fn at_word(&self, word: &str) -> bool {
        self.kind() == Tok::Word && self.text().eq_ignore_ascii_case(word)
    }

    fn eat_word(&mut self, word: &str) -> bool {
        let found = self.at_word(word);
        if found {
            self.bump();
        }
        found
    }

    fn eat(&mut self, kind: Tok) -> bool {
        let found = self.kind() == kind;
        if found {
            self.bump();
        }
        found
    }

    fn skip_newlines(&mut self) {
        while self.kind() == Tok::Newline {
            self.bump();
        }
    }

    /// Whether the current command has ended (line end, input end, or the
    /// `}` closing an ATOMIC group).
    fn at_command_end(&self) -> bool {
        matches!(self.kind(), Tok::Newline | Tok::Eof) || (self.kind() == Tok::RBrace && self.depth > 0)
    }

    // ---- errors -------------------------------------------------------

    /// How the current token reads in an error.
    fn found(&self) -> String {
        let token = self.peek();
        match token.kind {
            Tok::Newline | Tok::Eof => token.kind.describe().to_owned(),
            _ => format!("'{}'", crate::error::excerpt(&self.src[token.span.clone()], 40)),
        }
    }

    fn error_at(&mut self, span: Range<usize>, message: String) -> Reported {
        let message = if self.command.is_empty() { message } else { format!("{}: {message}", self.command) };
        if self.errors.len() < MAX_ERRORS {
            let lines = self.lines.get_or_insert_with(|| LineIndex::new(self.src));
            self.errors.push(ParseError::at(lines, self.src, span, message));
        }
        Reported
    }

    /// "expected X, found Y" at the current token.
    fn expected(&mut self, what: &str) -> Reported {
        let found = self.found();
        let span = self.peek().span.clone();
        self.error_at(span, format!("expected {what}, found {found}"))
    }

    fn expect(&mut self, kind: Tok, what: &str) -> PResult<Token> {
        if self.kind() == kind {
            Ok(self.bump())
        } else {
            Err(self.expected(what))
        }
    }

    fn expect_word(&mut self, word: &str, what: &str) -> PResult<()> {
        if self.eat_word(word) {
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }

    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_NESTING {
            let span = self.peek().span.clone();
            return Err(self.error_at(span, format!("nesting deeper than {MAX_NESTING} levels")));
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    /// Skips the rest of a broken line.
    fn recover(&mut self) {
        while !matches!(self.kind(), Tok::Newline | Tok::Eof) {
            self.bump();
        }
    }

    // ---- script -------------------------------------------------------

    fn script(&mut self) -> Script {
        let mut document = UclDocument::default();
        let mut spans = Vec::new();
        let mut section = Section::Commands;
        loop {
            self.skip_newlines();
            if self.kind() == Tok::Eof || self.errors.len() >= MAX_ERRORS {
                break;
            }
            self.command = "";
            if let Some(next) = self.section_header() {
                section = next;
                continue;
            }
            let start = self.peek().span.start;
            let parsed = match section {
                Section::Structure => self.structure_entry().map(|e| document.structure.push(e)),
                Section::Blocks => self.block_def().map(|b| document.blocks.push(b)),
                Section::Commands => self.command().map(|c| {
                    document.commands.push(c);
                    let end = self.previous_end().max(start);
                    spans.push(start..end);
                }),
            };
            let parsed = parsed.and_then(|()| self.end_of_line());
            if parsed.is_err() {
                self.recover();
            }
        }
        Script { document, spans }
    }

    /// A `STRUCTURE`, `BLOCKS` or `COMMANDS` line.
    fn section_header(&mut self) -> Option<Section> {
        if self.kind() != Tok::Word || !matches!(self.next_kind(), Tok::Newline | Tok::Eof) {
            return None;
        }
        let section = match self.text().to_ascii_uppercase().as_str() {
            "STRUCTURE" => Section::Structure,
            "BLOCKS" => Section::Blocks,
            "COMMANDS" => Section::Commands,
            _ => return None,
        };
        let token = self.bump();
        if !self.sections_allowed && section != Section::Commands {
            let word = self.src[token.span.clone()].to_owned();
            self.error_at(token.span, format!("{word} sections belong to the document form; expected a command"));
        }
        Some(section)
    }

    fn end_of_line(&mut self) -> PResult<()> {
        if self.at_command_end() {
            Ok(())
        } else {
            let found = self.found();
            let span = self.peek().span.clone();
            Err(self.error_at(span, format!("unexpected {found} after the end of the command")))
        }
    }

    fn structure_entry(&mut self) -> PResult<StructureEntry> {
        self.command = "STRUCTURE";
        let parent = self.block_ref()?;
        self.expect(Tok::Colon, "':' after the parent id")?;
        self.expect(Tok::LBracket, "'[' opening the list of children")?;
        let children = self.delimited(Tok::RBracket, "',' or ']' in the list of children", Self::block_ref)?;
        Ok(StructureEntry { parent, children })
    }

    fn block_def(&mut self) -> PResult<BlockDef> {
        self.command = "BLOCKS";
        let content_type = self.content_type()?;
        self.expect(Tok::Hash, "'#' before the block id")?;
        let id = self.block_ref()?;
        let properties = self.properties()?;
        let content = self.content()?;
        Ok(BlockDef { content_type, id, properties, content })
    }

    // ---- commands -----------------------------------------------------

    fn command(&mut self) -> PResult<Command> {
        if self.kind() != Tok::Word {
            return Err(self.expected("a command"));
        }
        let word = self.text().to_ascii_uppercase();
        let Some(&name) = COMMANDS.iter().find(|c| **c == word) else {
            let hint = suggest(&word, COMMANDS).map(|s| format!(" (did you mean {s}?)")).unwrap_or_default();
            let found = self.found();
            let span = self.peek().span.clone();
            return Err(self.error_at(span, format!("unknown command {found}{hint}")));
        };
        self.command = name;
        self.bump();
        match name {
            "EDIT" => self.edit(),
            "APPEND" => self.append(),
            "MOVE" => self.move_command(),
            "DELETE" => self.delete(),
            "LINK" => self.link(),
            "UNLINK" => self.unlink(),
            "PRUNE" => self.prune(),
            "FOLD" => self.fold(),
            "SNAPSHOT" => self.snapshot(),
            "BEGIN" => {
                self.command = "BEGIN TRANSACTION";
                self.expect_word("TRANSACTION", "TRANSACTION after BEGIN")?;
                Ok(Command::Transaction(Transaction::Begin { name: self.optional_name()? }))
            }
            "COMMIT" => Ok(Command::Transaction(Transaction::Commit { name: self.optional_name()? })),
            "ROLLBACK" => Ok(Command::Transaction(Transaction::Rollback { name: self.optional_name()? })),
            "ATOMIC" => self.atomic(),
            "GOTO" => Ok(Command::Goto(Goto { target: self.block_ref()? })),
            "BACK" => {
                let steps = if self.at_command_end() { None } else { Some(self.count("the number of steps")?) };
                Ok(Command::Back(Back { steps }))
            }
            "EXPAND" => self.expand(),
            "FOLLOW" => self.follow(),
            "PATH" => self.path_query(),
            "SEARCH" => self.search(),
            "FIND" => self.find(),
            "VIEW" => self.view(),
            "CTX" => self.ctx(),
            _ => unreachable!("every listed command is handled"),
        }
    }
}

/// The closest candidate within two edits, for "did you mean" hints.
fn suggest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (edit_distance(&word.to_ascii_uppercase(), &c.to_ascii_uppercase()), *c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}
