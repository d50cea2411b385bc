//! A recursive-descent parser over a token stream, with line-level error
//! recovery: a broken command is reported and parsing resumes on the next
//! line, so one run lists every error it can find.
//!
//! Every recursion (brackets, parentheses, NOT, ATOMIC groups) goes through
//! [`Parser::nested`], capped at [`MAX_NESTING`]; chains such as
//! `a OR b OR c` are loops building one n-ary node, so no input can make
//! the parser, the printer or an evaluator recurse deeper than the cap.
//! `condition` holds references, paths and WHERE conditions, `literal`
//! values, strings and content.

mod condition;
mod literal;

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

    fn edit(&mut self) -> PResult<Command> {
        let target = self.block_ref()?;
        self.expect_word("SET", "SET after the block id")?;
        let path = self.path()?;
        let op = match self.kind() {
            Tok::Eq => {
                self.bump();
                EditOp::Set(self.value(true)?)
            }
            Tok::PlusEq => {
                self.bump();
                EditOp::Append(self.value(true)?)
            }
            Tok::MinusEq => {
                self.bump();
                EditOp::Remove(self.value(true)?)
            }
            Tok::PlusPlus => {
                self.bump();
                EditOp::Increment
            }
            Tok::MinusMinus => {
                self.bump();
                EditOp::Decrement
            }
            _ => return Err(self.expected("an operator = += -= ++ or -- after the path")),
        };
        let condition = self.optional_where()?;
        Ok(Command::Edit(Edit { target, path, op, condition }))
    }

    fn append(&mut self) -> PResult<Command> {
        let parent = self.block_ref()?;
        let content_type = self.content_type()?;
        let at = if self.eat_word("AT") { Some(self.count("a child position after AT")?) } else { None };
        let properties = if self.eat_word("WITH") { self.properties()? } else { Vec::new() };
        if !self.at_command_end() && self.kind() != Tok::DoubleColon {
            let what =
                if properties.is_empty() { "AT, WITH or '::' before the content" } else { "'::' before the content" };
            return Err(self.expected(what));
        }
        let content = self.content()?;
        Ok(Command::Append(Append { parent, content_type, at, properties, content }))
    }

    fn move_command(&mut self) -> PResult<Command> {
        let block = self.block_ref()?;
        let destination = if self.eat_word("TO") {
            let parent = self.block_ref()?;
            let at = if self.eat_word("AT") { Some(self.count("a child position after AT")?) } else { None };
            MoveDestination::To { parent, at }
        } else if self.eat_word("BEFORE") {
            MoveDestination::Before(self.block_ref()?)
        } else if self.eat_word("AFTER") {
            MoveDestination::After(self.block_ref()?)
        } else {
            return Err(self.expected("TO, BEFORE or AFTER after the block id"));
        };
        Ok(Command::Move(Move { block, destination }))
    }

    fn delete(&mut self) -> PResult<Command> {
        if self.at_command_end() {
            return Err(self.expected("a block id or WHERE"));
        }
        let target = if self.at_word("WHERE") || self.at_word("CASCADE") || self.at_word("PRESERVE_CHILDREN") {
            None
        } else {
            Some(self.block_ref()?)
        };
        let mode = if self.eat_word("CASCADE") {
            DeleteMode::Cascade
        } else if self.eat_word("PRESERVE_CHILDREN") {
            DeleteMode::PreserveChildren
        } else {
            DeleteMode::Orphan
        };
        let condition = self.optional_where()?;
        if target.is_none() && condition.is_none() {
            return Err(self.expected("a block id or WHERE"));
        }
        if !self.at_command_end() {
            return Err(self.expected("CASCADE, PRESERVE_CHILDREN, WHERE or the end of the command"));
        }
        Ok(Command::Delete(Delete { target, mode, condition }))
    }

    fn link(&mut self) -> PResult<Command> {
        let source = self.block_ref()?;
        let edge_type = self.edge_type()?;
        let target = self.block_ref()?;
        let properties = if self.eat_word("WITH") { self.properties()? } else { Vec::new() };
        Ok(Command::Link(Link { source, edge_type, target, properties }))
    }

    fn unlink(&mut self) -> PResult<Command> {
        let source = self.block_ref()?;
        let edge_type = self.edge_type()?;
        let target = self.block_ref()?;
        Ok(Command::Unlink(Unlink { source, edge_type, target }))
    }

    fn prune(&mut self) -> PResult<Command> {
        let target = if self.eat_word("UNREACHABLE") {
            PruneTarget::Unreachable
        } else if self.eat_word("WHERE") {
            PruneTarget::Where(self.condition()?)
        } else {
            return Err(self.expected("UNREACHABLE or WHERE"));
        };
        let dry_run = self.eat_word("DRY_RUN");
        Ok(Command::Prune(Prune { target, dry_run }))
    }

    fn fold(&mut self) -> PResult<Command> {
        let target = self.block_ref()?;
        let mut fold = Fold { target, depth: None, max_tokens: None, preserve_tags: Vec::new() };
        while !self.at_command_end() {
            let span = self.peek().span.clone();
            if self.eat_word("DEPTH") {
                self.eat(Tok::Eq);
                let depth = self.count("a depth after DEPTH")?;
                self.set_once(&mut fold.depth, depth, span, "DEPTH")?;
            } else if self.eat_word("MAX_TOKENS") {
                self.eat(Tok::Eq);
                let tokens = self.count("a token count after MAX_TOKENS")?;
                self.set_once(&mut fold.max_tokens, tokens, span, "MAX_TOKENS")?;
            } else if self.eat_word("PRESERVE_TAGS") {
                self.eat(Tok::Eq);
                fold.preserve_tags = self.word_list("tags after PRESERVE_TAGS")?;
            } else {
                return Err(self.expected("DEPTH, MAX_TOKENS or PRESERVE_TAGS"));
            }
        }
        if fold.depth.is_none() && fold.max_tokens.is_none() {
            return Err(self.expected("DEPTH <n> or MAX_TOKENS <n>"));
        }
        Ok(Command::Fold(fold))
    }

    fn snapshot(&mut self) -> PResult<Command> {
        let snapshot = if self.eat_word("CREATE") {
            let name = self.name("a snapshot name")?;
            let properties = if self.eat_word("WITH") { self.properties()? } else { Vec::new() };
            Snapshot::Create { name, properties }
        } else if self.eat_word("RESTORE") {
            Snapshot::Restore(self.name("a snapshot name")?)
        } else if self.eat_word("DELETE") {
            Snapshot::Delete(self.name("a snapshot name")?)
        } else if self.eat_word("LIST") {
            Snapshot::List
        } else if self.eat_word("DIFF") {
            let a = self.name("two snapshot names")?;
            Snapshot::Diff(a, self.name("a second snapshot name")?)
        } else {
            return Err(self.expected("CREATE, RESTORE, DELETE, LIST or DIFF"));
        };
        Ok(Command::Snapshot(snapshot))
    }

    fn atomic(&mut self) -> PResult<Command> {
        self.expect(Tok::LBrace, "'{' after ATOMIC")?;
        let commands = self.nested(|p| {
            let mut commands = Vec::new();
            loop {
                p.skip_newlines();
                if p.eat(Tok::RBrace) {
                    return Ok(commands);
                }
                if p.kind() == Tok::Eof {
                    p.command = "ATOMIC";
                    return Err(p.expected("'}' closing the ATOMIC group"));
                }
                let command = p.command();
                p.command = "ATOMIC";
                match command.and_then(|c| p.end_of_line().map(|()| c)) {
                    Ok(command) => commands.push(command),
                    Err(Reported) => {
                        // Keep looking for more errors up to the closing brace.
                        while !matches!(p.kind(), Tok::Newline | Tok::Eof | Tok::RBrace) {
                            p.bump();
                        }
                    }
                }
            }
        })?;
        self.command = "ATOMIC";
        Ok(Command::Atomic(Atomic { commands }))
    }

    fn expand(&mut self) -> PResult<Command> {
        let target = self.block_ref()?;
        let direction = match self.direction_word() {
            Some(d) => d,
            None => return Err(self.expected("direction UP|DOWN|BOTH|SEMANTIC after block id")),
        };
        let mut expand =
            Expand { target, direction, depth: None, mode: None, roles: Vec::new(), tags: Vec::new(), tokens: None };
        self.params(&["DEPTH", "MODE", "ROLES", "TAGS", "TOKENS"], |p, name| match name {
            "DEPTH" => p.count("a depth").map(|v| expand.depth = Some(v)),
            "MODE" => p.view_mode().map(|v| expand.mode = Some(v)),
            "ROLES" => p.word_list("roles").map(|v| expand.roles = v),
            "TAGS" => p.word_list("tags").map(|v| expand.tags = v),
            _ => p.count("a token budget").map(|v| expand.tokens = Some(v)),
        })?;
        Ok(Command::Expand(expand))
    }

    fn direction_word(&mut self) -> Option<Direction> {
        let direction = match self.text().to_ascii_uppercase().as_str() {
            "UP" => Direction::Up,
            "DOWN" => Direction::Down,
            "BOTH" => Direction::Both,
            "SEMANTIC" => Direction::Semantic,
            _ => return None,
        };
        (self.kind() == Tok::Word).then(|| {
            self.bump();
            direction
        })
    }

    fn follow(&mut self) -> PResult<Command> {
        let source = self.block_ref()?;
        let mut edge_types = vec![self.edge_type()?];
        while self.eat(Tok::Comma) {
            edge_types.push(self.edge_type()?);
        }
        let target = if self.at_command_end() { None } else { Some(self.block_ref()?) };
        Ok(Command::Follow(Follow { source, edge_types, target }))
    }

    fn path_query(&mut self) -> PResult<Command> {
        let from = self.block_ref()?;
        self.expect_word("TO", "TO after the first block id")?;
        let to = self.block_ref()?;
        let mut max = None;
        self.params(&["MAX"], |p, _| p.count("a path length").map(|v| max = Some(v)))?;
        Ok(Command::Path(PathQuery { from, to, max }))
    }

    fn search(&mut self) -> PResult<Command> {
        let query = match self.kind() {
            Tok::DqString | Tok::SqString | Tok::Unterminated => self.string()?,
            _ => return Err(self.expected("the query as a quoted string")),
        };
        let mut search = Search { query, limit: None, min_similarity: None, roles: Vec::new(), tags: Vec::new() };
        self.params(&["LIMIT", "MIN_SIMILARITY", "ROLES", "TAGS"], |p, name| match name {
            "LIMIT" => p.count("a result count").map(|v| search.limit = Some(v)),
            "MIN_SIMILARITY" => p.fraction("a similarity between 0 and 1").map(|v| search.min_similarity = Some(v)),
            "ROLES" => p.word_list("roles").map(|v| search.roles = v),
            _ => p.word_list("tags").map(|v| search.tags = v),
        })?;
        Ok(Command::Search(search))
    }

    fn find(&mut self) -> PResult<Command> {
        let mut find = Find::default();
        self.params(&["ROLE", "TAG", "LABEL", "PATTERN"], |p, name| {
            let value = p.word_or_string("a value")?;
            match name {
                "ROLE" => find.role = Some(value),
                "TAG" => find.tag = Some(value),
                "LABEL" => find.label = Some(value),
                _ => find.pattern = Some(value),
            }
            Ok(())
        })?;
        if find == Find::default() {
            return Err(self.expected("at least one of ROLE=, TAG=, LABEL=, PATTERN="));
        }
        Ok(Command::Find(find))
    }

    fn view(&mut self) -> PResult<Command> {
        let target = if self.eat_word("NEIGHBORHOOD") || self.eat_word("NEIGHBOURHOOD") {
            ViewTarget::Neighborhood { depth: None }
        } else {
            ViewTarget::Block(self.block_ref()?)
        };
        let mut view = View { target, mode: None };
        let names: &[&str] =
            if matches!(view.target, ViewTarget::Neighborhood { .. }) { &["DEPTH", "MODE"] } else { &["MODE"] };
        self.params(names, |p, name| match name {
            "MODE" => p.view_mode().map(|m| view.mode = Some(m)),
            _ => p.count("a depth").map(|d| view.target = ViewTarget::Neighborhood { depth: Some(d) }),
        })?;
        Ok(Command::View(view))
    }

    fn ctx(&mut self) -> PResult<Command> {
        const SUBCOMMANDS: &[&str] =
            &["ADD", "REMOVE", "CLEAR", "EXPAND", "COMPRESS", "PRUNE", "RENDER", "STATS", "FOCUS"];
        if self.kind() != Tok::Word {
            return Err(self.expected("ADD, REMOVE, CLEAR, EXPAND, COMPRESS, PRUNE, RENDER, STATS or FOCUS"));
        }
        let word = self.text().to_ascii_uppercase();
        let Some(sub) = SUBCOMMANDS.iter().find(|s| **s == word) else {
            let hint = suggest(&word, SUBCOMMANDS).map(|s| format!(" (did you mean CTX {s}?)")).unwrap_or_default();
            let found = self.found();
            let span = self.peek().span.clone();
            return Err(self.error_at(span, format!("unknown context command {found}{hint}")));
        };
        self.command = match *sub {
            "ADD" => "CTX ADD",
            "REMOVE" => "CTX REMOVE",
            "CLEAR" => "CTX CLEAR",
            "EXPAND" => "CTX EXPAND",
            "COMPRESS" => "CTX COMPRESS",
            "PRUNE" => "CTX PRUNE",
            "RENDER" => "CTX RENDER",
            "STATS" => "CTX STATS",
            _ => "CTX FOCUS",
        };
        self.bump();
        let ctx = match *sub {
            "ADD" => {
                if self.eat_word("RESULTS") {
                    Ctx::AddResults
                } else if self.eat_word("CHILDREN") {
                    Ctx::AddChildren { parent: self.block_ref()? }
                } else if self.eat_word("PATH") {
                    let from = self.block_ref()?;
                    self.expect_word("TO", "TO after the first block id")?;
                    Ctx::AddPath { from, to: self.block_ref()? }
                } else {
                    let target = self.block_ref()?;
                    let (mut reason, mut relevance, mut note) = (None, None, None);
                    self.params(&["REASON", "RELEVANCE"], |p, name| match name {
                        "REASON" => p.reason_or_note().map(|(r, n)| (reason, note) = (Some(r), n)),
                        _ => p.fraction("a relevance between 0 and 1").map(|r| relevance = Some(r)),
                    })?;
                    Ctx::Add { target, reason, relevance, note }
                }
            }
            "REMOVE" => Ctx::Remove { target: self.block_ref()? },
            "CLEAR" => Ctx::Clear,
            "EXPAND" => {
                let direction = match self.text().to_ascii_uppercase().as_str() {
                    "UP" if self.kind() == Tok::Word => CtxDirection::Up,
                    "DOWN" if self.kind() == Tok::Word => CtxDirection::Down,
                    "BOTH" if self.kind() == Tok::Word => CtxDirection::Both,
                    "SEMANTIC" if self.kind() == Tok::Word => CtxDirection::Semantic,
                    "AUTO" if self.kind() == Tok::Word => CtxDirection::Auto,
                    _ => return Err(self.expected("direction UP|DOWN|BOTH|SEMANTIC|AUTO")),
                };
                self.bump();
                let (mut depth, mut tokens) = (None, None);
                self.params(&["DEPTH", "TOKENS"], |p, name| match name {
                    "DEPTH" => p.count("a depth").map(|v| depth = Some(v)),
                    _ => p.count("a token budget").map(|v| tokens = Some(v)),
                })?;
                Ctx::Expand { direction, depth, tokens }
            }
            "COMPRESS" => {
                let mut method = None;
                self.params(&["METHOD"], |p, _| {
                    let m = p.keyword(
                        &[
                            ("TRUNCATE", CompressMethod::Truncate),
                            ("SUMMARIZE", CompressMethod::Summarize),
                            ("STRUCTURE_ONLY", CompressMethod::StructureOnly),
                        ],
                        "TRUNCATE|SUMMARIZE|STRUCTURE_ONLY",
                    )?;
                    method = Some(m);
                    Ok(())
                })?;
                match method {
                    Some(method) => Ctx::Compress { method },
                    None => return Err(self.expected("METHOD=TRUNCATE|SUMMARIZE|STRUCTURE_ONLY")),
                }
            }
            "PRUNE" => {
                let (mut min_relevance, mut max_age) = (None, None);
                // RELEVANCE and MIN_SIMILARITY are upstream's names for MIN_RELEVANCE.
                let names = ["MIN_RELEVANCE", "RELEVANCE", "MIN_SIMILARITY", "MAX_AGE"];
                self.params(&names, |p, name| match name {
                    "MAX_AGE" => p.count("an age in seconds").map(|v| max_age = Some(u64::from(v))),
                    _ => {
                        let at = p.peek().span.clone();
                        let value = p.fraction("a relevance between 0 and 1")?;
                        if min_relevance.replace(value).is_some() {
                            return Err(p.error_at(at, format!("{name} repeats the minimum relevance already given")));
                        }
                        Ok(())
                    }
                })?;
                Ctx::Prune { min_relevance, max_age }
            }
            "RENDER" => {
                let mut format = None;
                self.params(&["FORMAT"], |p, _| {
                    let f = p.keyword(
                        &[
                            ("DEFAULT", RenderFormat::Default),
                            ("SHORT_IDS", RenderFormat::ShortIds),
                            ("SHORT", RenderFormat::ShortIds),
                            ("MARKDOWN", RenderFormat::Markdown),
                            ("MD", RenderFormat::Markdown),
                        ],
                        "DEFAULT|SHORT_IDS|MARKDOWN (or SHORT, MD)",
                    )?;
                    format = Some(f);
                    Ok(())
                })?;
                Ctx::Render { format }
            }
            "STATS" => Ctx::Stats,
            _ => {
                if self.eat_word("CLEAR") {
                    Ctx::Focus { target: None }
                } else {
                    Ctx::Focus { target: Some(self.block_ref()?) }
                }
            }
        };
        Ok(Command::Ctx(ctx))
    }

    // ---- parameters ---------------------------------------------------

    /// `NAME=value` parameters in any order, each at most once. `=` may be
    /// left out (`DEPTH 2`). `on_value` parses the value of a known name.
    fn params(
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

    fn set_once<T>(&mut self, slot: &mut Option<T>, value: T, span: Range<usize>, name: &str) -> PResult<()> {
        if slot.is_some() {
            return Err(self.error_at(span, format!("{name} is given twice")));
        }
        *slot = Some(value);
        Ok(())
    }

    /// A non-negative integer that fits in `u32`.
    fn count(&mut self, what: &str) -> PResult<u32> {
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
    fn fraction(&mut self, what: &str) -> PResult<f64> {
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
    fn keyword<T: Copy>(&mut self, options: &[(&str, T)], listing: &str) -> PResult<T> {
        if matches!(self.kind(), Tok::Word | Tok::DqString | Tok::SqString) {
            let text = self.text().trim_matches(['"', '\'']);
            if let Some((_, value)) = options.iter().find(|(name, _)| name.eq_ignore_ascii_case(text)) {
                self.bump();
                return Ok(*value);
            }
        }
        Err(self.expected(listing))
    }

    fn view_mode(&mut self) -> PResult<ViewMode> {
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

    fn reason(&mut self) -> PResult<Reason> {
        self.keyword(
            REASONS,
            "a reason (direct_reference, semantic_relevance, structural_context, navigation_path, \
             user_preference, agent_decision, system_required)",
        )
    }

    /// A reason name, or (upstream's form) a quoted free text: kept as the
    /// note of an [`Reason::AgentDecision`].
    fn reason_or_note(&mut self) -> PResult<(Reason, Option<String>)> {
        let quoted_text = matches!(self.kind(), Tok::DqString | Tok::SqString | Tok::Unterminated)
            && !REASONS.iter().any(|(name, _)| name.eq_ignore_ascii_case(self.text().trim_matches(['"', '\''])));
        if quoted_text {
            return self.string().map(|text| (Reason::AgentDecision, Some(text)));
        }
        self.reason().map(|r| (r, None))
    }

    /// `a,b,c` (words or strings) or `["a", "b"]`.
    fn word_list(&mut self, what: &str) -> PResult<Vec<String>> {
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

    fn word_or_string(&mut self, what: &str) -> PResult<String> {
        match self.kind() {
            Tok::Word => Ok(self.bump_text().to_owned()),
            Tok::DqString | Tok::SqString | Tok::Unterminated => self.string(),
            _ => Err(self.expected(what)),
        }
    }

    fn bump_text(&mut self) -> &'s str {
        let span = self.bump().span;
        &self.src[span]
    }

    /// A name after SNAPSHOT / BEGIN TRANSACTION: a string or a word.
    fn name(&mut self, what: &str) -> PResult<String> {
        self.word_or_string(what)
    }

    fn optional_name(&mut self) -> PResult<Option<String>> {
        if self.at_command_end() {
            Ok(None)
        } else {
            self.name("a transaction name").map(Some)
        }
    }

    /// `key=value ...` up to `::` or the end of the command.
    fn properties(&mut self) -> PResult<Properties> {
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

    fn content_type(&mut self) -> PResult<ContentType> {
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
