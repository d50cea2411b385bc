//! The edit commands: EDIT, APPEND, MOVE, DELETE, LINK, UNLINK, PRUNE, FOLD,
//! SNAPSHOT, and ATOMIC groups.

use super::{PResult, Parser, Reported};
use crate::ast::*;
use crate::lexer::Tok;

impl Parser<'_> {
    pub(super) fn edit(&mut self) -> PResult<Command> {
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

    pub(super) fn append(&mut self) -> PResult<Command> {
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

    pub(super) fn move_command(&mut self) -> PResult<Command> {
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

    pub(super) fn delete(&mut self) -> PResult<Command> {
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

    pub(super) fn link(&mut self) -> PResult<Command> {
        let source = self.block_ref()?;
        let edge_type = self.edge_type()?;
        let target = self.block_ref()?;
        let properties = if self.eat_word("WITH") { self.properties()? } else { Vec::new() };
        Ok(Command::Link(Link { source, edge_type, target, properties }))
    }

    pub(super) fn unlink(&mut self) -> PResult<Command> {
        let source = self.block_ref()?;
        let edge_type = self.edge_type()?;
        let target = self.block_ref()?;
        Ok(Command::Unlink(Unlink { source, edge_type, target }))
    }

    pub(super) fn prune(&mut self) -> PResult<Command> {
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

    pub(super) fn fold(&mut self) -> PResult<Command> {
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

    pub(super) fn snapshot(&mut self) -> PResult<Command> {
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

    pub(super) fn atomic(&mut self) -> PResult<Command> {
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
}
