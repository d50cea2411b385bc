//! A recursive-descent parser over the token list, with line-level error
//! recovery: a broken command is reported and parsing resumes on the next
//! line, so one run lists every error it can find.

use std::ops::Range;

use ucm_core::{BlockId, EdgeType};

use crate::ast::*;
use crate::error::{ParseError, ParseErrors};
use crate::lexer::{lex, Tok, Token};

/// Deepest nesting of brackets, parentheses and ATOMIC groups accepted.
const MAX_NESTING: usize = 64;
/// Errors kept before parsing gives up.
const MAX_ERRORS: usize = 100;

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
    let mut parser = Parser::new(source);
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
    let mut parser = Parser::new(source);
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
    tokens: Vec<Token>,
    pos: usize,
    errors: Vec<ParseError>,
    /// The command being parsed, named in errors.
    command: &'static str,
    depth: usize,
    sections_allowed: bool,
}

const COMMANDS: &[&str] = &[
    "EDIT", "APPEND", "MOVE", "DELETE", "LINK", "UNLINK", "PRUNE", "FOLD", "SNAPSHOT", "BEGIN", "COMMIT", "ROLLBACK",
    "ATOMIC", "GOTO", "BACK", "EXPAND", "FOLLOW", "PATH", "SEARCH", "FIND", "VIEW", "CTX",
];

impl<'s> Parser<'s> {
    fn new(src: &'s str) -> Self {
        Parser { src, tokens: lex(src), pos: 0, errors: Vec::new(), command: "", depth: 0, sections_allowed: true }
    }

    // ---- token access -------------------------------------------------

    fn peek(&self) -> &Token {
        &self.tokens[self.pos]
    }

    fn kind(&self) -> Tok {
        self.tokens[self.pos].kind
    }

    fn kind_at(&self, offset: usize) -> Tok {
        self.tokens.get(self.pos + offset).map_or(Tok::Eof, |t| t.kind)
    }

    fn text(&self) -> &'s str {
        &self.src[self.peek().span.clone()]
    }

    fn bump(&mut self) -> Token {
        let token = self.tokens[self.pos].clone();
        if token.kind != Tok::Eof {
            self.pos += 1;
        }
        token
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
            _ => {
                let text = &self.src[token.span.clone()];
                let short: String = text.chars().take(40).collect();
                let ellipsis = if short.len() < text.len() { "…" } else { "" };
                format!("'{short}{ellipsis}'")
            }
        }
    }

    fn error_at(&mut self, span: Range<usize>, message: String) -> Reported {
        let message = if self.command.is_empty() { message } else { format!("{}: {message}", self.command) };
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(ParseError::new(self.src, span, message));
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
                    let end = self.tokens[self.pos.saturating_sub(1)].span.end.max(start);
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
        if self.kind() != Tok::Word || !matches!(self.kind_at(1), Tok::Newline | Tok::Eof) {
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
                    let (mut reason, mut relevance) = (None, None);
                    self.params(&["REASON", "RELEVANCE"], |p, name| match name {
                        "REASON" => p.reason().map(|r| reason = Some(r)),
                        _ => p.fraction("a relevance between 0 and 1").map(|r| relevance = Some(r)),
                    })?;
                    Ctx::Add { target, reason, relevance }
                }
            }
            "REMOVE" => Ctx::Remove { target: self.block_ref()? },
            "CLEAR" => Ctx::Clear,
            "EXPAND" => {
                let direction = match self.text().to_ascii_uppercase().as_str() {
                    "UP" if self.kind() == Tok::Word => CtxDirection::Up,
                    "DOWN" if self.kind() == Tok::Word => CtxDirection::Down,
                    "SEMANTIC" if self.kind() == Tok::Word => CtxDirection::Semantic,
                    "AUTO" if self.kind() == Tok::Word => CtxDirection::Auto,
                    _ => return Err(self.expected("direction UP|DOWN|SEMANTIC|AUTO")),
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
                self.params(&["MIN_RELEVANCE", "MAX_AGE"], |p, name| match name {
                    "MIN_RELEVANCE" => p.fraction("a relevance between 0 and 1").map(|v| min_relevance = Some(v)),
                    _ => p.count("an age in seconds").map(|v| max_age = Some(u64::from(v))),
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
                            ("MARKDOWN", RenderFormat::Markdown),
                        ],
                        "DEFAULT|SHORT_IDS|MARKDOWN",
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
            &[
                ("direct_reference", Reason::DirectReference),
                ("semantic_relevance", Reason::SemanticRelevance),
                ("structural_context", Reason::StructuralContext),
                ("navigation_path", Reason::NavigationPath),
                ("user_preference", Reason::UserPreference),
                ("agent_decision", Reason::AgentDecision),
                ("system_required", Reason::SystemRequired),
            ],
            "a reason (direct_reference, semantic_relevance, structural_context, navigation_path, \
             user_preference, agent_decision, system_required)",
        )
    }

    /// `a,b,c` (words or strings) or `["a", "b"]`.
    fn word_list(&mut self, what: &str) -> PResult<Vec<String>> {
        if self.kind() == Tok::LBracket {
            let start = self.peek().span.start;
            let value = self.value(false)?;
            let end = self.tokens[self.pos - 1].span.end;
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

    /// `:: <content>` or nothing.
    fn content(&mut self) -> PResult<Option<ContentLiteral>> {
        if !self.eat(Tok::DoubleColon) {
            return Ok(None);
        }
        if self.kind() == Tok::TableRow {
            let mut rows = Vec::new();
            loop {
                let token = self.bump();
                rows.push(self.table_row(token.span)?);
                if self.kind() == Tok::Newline && self.kind_at(1) == Tok::TableRow {
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
    fn table_row(&mut self, span: Range<usize>) -> PResult<Vec<String>> {
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
    fn value(&mut self, bare_words: bool) -> PResult<Value> {
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
                        Err(self.error_at(span, format!("number {text} does not fit in 64 bits")))
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
                        Err(self.error_at(span, format!("number {text} is out of range")))
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
            _ => Err(self.expected("a value (a string, number, true, false, null, [..] or {..})")),
        }
    }

    /// Comma-separated items up to `close` (the opening bracket already
    /// read); line breaks may fall anywhere between items.
    fn delimited<T>(
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
    fn string(&mut self) -> PResult<String> {
        let token = self.peek().clone();
        match token.kind {
            Tok::DqString | Tok::SqString => {
                self.bump();
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

    /// Decodes `\n \t \r \0 \" \' \\ \u{XXXX}` (and `\|` in table cells).
    fn unescape(&mut self, raw: &str, offset: usize, table_cell: bool) -> PResult<String> {
        if !raw.contains('\\') {
            return Ok(raw.to_owned());
        }
        let mut out = String::with_capacity(raw.len());
        let mut chars = raw.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
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

    // ---- references, paths, conditions --------------------------------

    fn block_ref(&mut self) -> PResult<BlockRef> {
        const WHAT: &str = "a block id (blk_…, a short id or @label)";
        match self.kind() {
            Tok::Word if self.text().starts_with(ucm_core::ID_PREFIX) => {
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
                    Ok(id) if label.starts_with(ucm_core::ID_PREFIX) => BlockRef::Id(id),
                    _ => BlockRef::Label(label.to_owned()),
                })
            }
            Tok::At if matches!(self.kind_at(1), Tok::DqString | Tok::SqString) => {
                self.bump();
                self.string().map(BlockRef::Label)
            }
            _ => Err(self.expected(WHAT)),
        }
    }

    fn edge_type(&mut self) -> PResult<EdgeType> {
        let span = self.peek().span.clone();
        let name = match self.kind() {
            Tok::Word => {
                let mut name = self.bump_text().to_owned();
                if self.kind() == Tok::Colon && self.kind_at(1) == Tok::Word {
                    self.bump();
                    name.push(':');
                    name.push_str(self.bump_text());
                }
                name
            }
            Tok::DqString | Tok::SqString => self.string()?,
            _ => return Err(self.expected("an edge type (references, links_to, ... or custom:<name>)")),
        };
        let end = self.tokens[self.pos - 1].span.end;
        name.parse::<EdgeType>().map_err(|_| {
            let names: Vec<String> = EdgeType::BUILT_IN.iter().map(|t| t.name().into_owned()).collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let hint = match suggest(&name.to_ascii_lowercase(), &refs) {
                Some(s) => format!("did you mean {s}? "),
                None => String::new(),
            };
            self.error_at(
                span.start..end,
                format!("unknown edge type '{name}' ({hint}custom types are written custom:{name})"),
            )
        })
    }

    fn path(&mut self) -> PResult<Path> {
        let mut segments = Vec::new();
        if self.eat(Tok::Dollar) {
            segments.push(PathSegment::Field("content".into()));
            segments.push(PathSegment::Field("value".into()));
            if self.kind() == Tok::Word {
                segments.push(PathSegment::Field(self.bump_text().to_owned()));
            }
        } else if self.kind() == Tok::Word {
            segments.push(PathSegment::Field(self.bump_text().to_owned()));
        } else if self.kind() == Tok::LBracket && matches!(self.kind_at(1), Tok::DqString | Tok::SqString) {
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
    fn bracket_segment(&mut self) -> PResult<PathSegment> {
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

    fn optional_index(&mut self) -> PResult<Option<i64>> {
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

    fn optional_where(&mut self) -> PResult<Option<Condition>> {
        if self.eat_word("WHERE") {
            self.condition().map(Some)
        } else {
            Ok(None)
        }
    }

    fn condition(&mut self) -> PResult<Condition> {
        self.nested(|p| {
            let mut left = p.and_condition()?;
            while p.eat_word("OR") {
                let right = p.and_condition()?;
                left = Condition::Or(Box::new(left), Box::new(right));
            }
            Ok(left)
        })
    }

    fn and_condition(&mut self) -> PResult<Condition> {
        let mut left = self.unary_condition()?;
        while self.eat_word("AND") {
            let right = self.unary_condition()?;
            left = Condition::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary_condition(&mut self) -> PResult<Condition> {
        if self.eat_word("NOT") {
            return self.nested(|p| p.unary_condition()).map(|c| Condition::Not(Box::new(c)));
        }
        if self.eat(Tok::LParen) {
            let inner = self.condition()?;
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
