//! The traversal and context commands: EXPAND, FOLLOW, PATH, SEARCH, FIND,
//! VIEW and every CTX form.

use super::{suggest, PResult, Parser};
use crate::ast::*;
use crate::lexer::Tok;

impl Parser<'_> {
    pub(super) fn expand(&mut self) -> PResult<Command> {
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

    pub(super) fn direction_word(&mut self) -> Option<Direction> {
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

    pub(super) fn follow(&mut self) -> PResult<Command> {
        let source = self.block_ref()?;
        let mut edge_types = vec![self.edge_type()?];
        while self.eat(Tok::Comma) {
            edge_types.push(self.edge_type()?);
        }
        let target = if self.at_command_end() { None } else { Some(self.block_ref()?) };
        Ok(Command::Follow(Follow { source, edge_types, target }))
    }

    pub(super) fn path_query(&mut self) -> PResult<Command> {
        let from = self.block_ref()?;
        self.expect_word("TO", "TO after the first block id")?;
        let to = self.block_ref()?;
        let mut max = None;
        self.params(&["MAX"], |p, _| p.count("a path length").map(|v| max = Some(v)))?;
        Ok(Command::Path(PathQuery { from, to, max }))
    }

    pub(super) fn search(&mut self) -> PResult<Command> {
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

    pub(super) fn find(&mut self) -> PResult<Command> {
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

    pub(super) fn view(&mut self) -> PResult<Command> {
        let target = if self.eat_word("NEIGHBORHOOD") || self.eat_word("NEIGHBOURHOOD") {
            ViewTarget::Neighborhood { depth: None }
        } else if self.eat_word("MAP") {
            ViewTarget::Map { tokens: None }
        } else {
            ViewTarget::Block(self.block_ref()?)
        };
        let mut view = View { target, mode: None };
        let names: &[&str] = match view.target {
            ViewTarget::Neighborhood { .. } => &["DEPTH", "MODE"],
            ViewTarget::Map { .. } => &["TOKENS"],
            ViewTarget::Block(_) => &["MODE"],
        };
        self.params(names, |p, name| match name {
            "MODE" => p.view_mode().map(|m| view.mode = Some(m)),
            "TOKENS" => p.count("a token count").map(|t| view.target = ViewTarget::Map { tokens: Some(t) }),
            _ => p.count("a depth").map(|d| view.target = ViewTarget::Neighborhood { depth: Some(d) }),
        })?;
        Ok(Command::View(view))
    }

    pub(super) fn ctx(&mut self) -> PResult<Command> {
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
}
