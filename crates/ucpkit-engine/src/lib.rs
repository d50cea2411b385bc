//! The engine: executes UCL edit commands against a document, for real.
//!
//! Every command either applies completely or fails and changes nothing.
//! ATOMIC groups and transactions restore the exact prior document (and
//! snapshot set) when any command inside fails or is rolled back, so the
//! document's JSON is byte-for-byte what it was. Traversal and context
//! commands need an agent session and are refused here.
//!
//! ```
//! use ucpkit_engine::Engine;
//! use ucpkit_core::Document;
//!
//! let mut engine = Engine::new(Document::new("notes"));
//! let commands = ucpkit_ucl::parse_commands(
//!     "APPEND blk_000000000000000000000000 text WITH label=\"intro\" :: \"Hello\"\nEDIT @intro SET text += \", world\"",
//! )
//! .unwrap();
//! for command in &commands {
//!     println!("{}", engine.execute(command).unwrap());
//! }
//! assert_eq!(engine.document().len(), 2);
//! ```

mod access;
mod build;
mod condition;
mod error;
mod form;
mod history;
mod outcome;

use std::collections::HashMap;
use std::sync::Arc;

use ucpkit_core::{BlockId, Document, Edge, EdgeMetadata, IdSet, RemoveMode, Snapshot, Tokenizer};
use ucpkit_ucl::{
    Append, BlockRef, Command, Delete, DeleteMode, Edit, EditOp, Fold, Link, Move, MoveDestination, Prune, PruneTarget,
    Value,
};

use crate::condition::Matcher;
pub use crate::error::EngineError;
pub use crate::form::{export_ucl, import_ucl, ImportError};
use crate::history::{Checkpoint, ScriptScope, Snapshots};
pub use crate::history::{Kept, ScriptEnd, ScriptRun};
pub use crate::outcome::{Outcome, SnapshotDiff, SnapshotInfo};

/// The metadata key FOLD sets on blocks whose subtree is collapsed.
pub const FOLDED_KEY: &str = "folded";

/// Executes edit commands against one document.
pub struct Engine {
    document: Document,
    snapshots: Snapshots,
    transactions: Vec<Checkpoint>,
    script: Option<ScriptScope>,
    names: HashMap<String, BlockId>,
    tokenizer: Option<Arc<dyn Tokenizer>>,
    clock: fn() -> i64,
    atomic_depth: usize,
}

impl Engine {
    /// An engine over `document` with no snapshots.
    pub fn new(document: Document) -> Self {
        Engine {
            document,
            snapshots: Snapshots::new(),
            transactions: Vec::new(),
            script: None,
            names: HashMap::new(),
            tokenizer: None,
            clock: ucpkit_core::now_ms,
            atomic_depth: 0,
        }
    }

    /// An engine over `document` and its stored snapshots.
    pub fn with_snapshots(document: Document, snapshots: impl IntoIterator<Item = Snapshot>) -> Self {
        let mut engine = Engine::new(document);
        engine.snapshots = snapshots.into_iter().map(|s| (s.name.clone(), s)).collect();
        engine
    }

    /// Uses `clock` (ms since the Unix epoch) for timestamps.
    pub fn set_clock(&mut self, clock: fn() -> i64) {
        self.clock = clock;
    }

    /// Uses `tokenizer` for token counts FOLD needs (default: the
    /// document's encoding, or o200k_base).
    pub fn set_tokenizer(&mut self, tokenizer: Arc<dyn Tokenizer>) {
        self.tokenizer = Some(tokenizer);
    }

    /// The document as it stands.
    pub fn document(&self) -> &Document {
        &self.document
    }

    /// The snapshots, by name.
    pub fn snapshots(&self) -> impl Iterator<Item = &Snapshot> {
        self.snapshots.values()
    }

    /// Whether a transaction is open.
    pub fn in_transaction(&self) -> bool {
        !self.transactions.is_empty()
    }

    /// The document and snapshots, consuming the engine.
    pub fn into_parts(self) -> (Document, Vec<Snapshot>) {
        (self.document, self.snapshots.into_values().collect())
    }

    /// Runs one command. On error nothing changed.
    pub fn execute(&mut self, command: &Command) -> Result<Outcome, EngineError> {
        if command.is_edit() {
            self.enter_edit();
        }
        let outcome = match command {
            Command::Edit(edit) => self.edit(edit),
            Command::Append(append) => self.append(append),
            Command::Move(mv) => self.move_block(mv),
            Command::Delete(delete) => self.delete(delete),
            Command::Link(link) => self.link(link),
            Command::Unlink(unlink) => {
                let source = self.resolve(&unlink.source)?;
                let target = self.resolve(&unlink.target)?;
                match self.document.remove_edge(source, &unlink.edge_type, target) {
                    Some(_) => Ok(Outcome { edges_removed: 1, ..Outcome::new("UNLINK") }),
                    None => Err(EngineError::EdgeNotFound {
                        source_id: source,
                        edge_type: unlink.edge_type.to_string(),
                        target,
                    }),
                }
            }
            Command::Prune(prune) => self.prune(prune),
            Command::Fold(fold) => self.fold(fold),
            Command::Snapshot(snapshot) => self.snapshot(snapshot),
            Command::Transaction(transaction) => self.transaction(transaction),
            Command::Atomic(atomic) => self.atomic(&atomic.commands),
            other => Err(EngineError::NeedsSession(other.name())),
        }?;
        if outcome.changed() {
            self.document.metadata.modified_ms = (self.clock)();
        }
        self.note_success(command);
        Ok(outcome)
    }

    /// The block a reference names.
    pub fn resolve(&self, reference: &BlockRef) -> Result<BlockId, EngineError> {
        let id = match reference {
            BlockRef::Id(id) => *id,
            BlockRef::Name(name) => *self.names.get(name).ok_or_else(|| EngineError::UnknownName(name.clone()))?,
            BlockRef::Short(n) => return Err(EngineError::UnknownShortId(*n)),
            BlockRef::Label(label) => {
                let mut found = self.document.blocks().filter(|b| b.metadata.label.as_deref() == Some(label));
                let first = found.next().ok_or_else(|| EngineError::UnknownLabel(label.clone()))?;
                let more = found.count();
                if more > 0 {
                    return Err(EngineError::AmbiguousLabel { label: label.clone(), count: more + 1 });
                }
                first.id
            }
        };
        if self.document.contains(id) {
            Ok(id)
        } else {
            Err(EngineError::BlockNotFound(id))
        }
    }

    /// The operation with `@block` values replaced by the ids they name
    /// (borrowed as it is when it has none).
    fn resolve_refs<'o>(&self, op: &'o EditOp) -> Result<std::borrow::Cow<'o, EditOp>, EngineError> {
        let (EditOp::Set(value) | EditOp::Append(value) | EditOp::Remove(value)) = op else {
            return Ok(std::borrow::Cow::Borrowed(op));
        };
        if !value.has_refs() {
            return Ok(std::borrow::Cow::Borrowed(op));
        }
        let resolved = Value::from_json(&condition::resolved_json(value, &|r| self.resolve(r))?);
        Ok(std::borrow::Cow::Owned(match op {
            EditOp::Set(_) => EditOp::Set(resolved),
            EditOp::Append(_) => EditOp::Append(resolved),
            _ => EditOp::Remove(resolved),
        }))
    }

    fn edit(&mut self, edit: &Edit) -> Result<Outcome, EngineError> {
        let id = self.resolve(&edit.target)?;
        let block = self.document.get(id).expect("resolved ids exist");
        if let Some(condition) = &edit.condition {
            if !Matcher::new(condition, &|r| self.resolve(r))?.matches(block)? {
                return Ok(Outcome::noted("EDIT", "skipped: the WHERE condition does not hold"));
            }
        }
        let op = self.resolve_refs(&edit.op)?;
        let mut updated = block.clone();
        access::edit(&mut updated, &edit.path, &op)?;
        updated.metadata.tokens = None;
        updated.metadata.timestamps.modified_ms = (self.clock)();
        *self.document.get_mut(id).expect("resolved ids exist") = updated;
        Ok(Outcome { modified: vec![id], ..Outcome::new("EDIT") })
    }

    fn append(&mut self, append: &Append) -> Result<Outcome, EngineError> {
        let parent = self.resolve(&append.parent)?;
        let (content, mut metadata) = build::build(append.content_type, &append.properties, append.content.as_ref())?;
        // An appended paragraph is a paragraph, as an ingested one is.
        if metadata.role.is_none() {
            metadata.role = content.default_role();
        }
        let now = (self.clock)();
        if metadata.timestamps.created_ms == 0 {
            metadata.timestamps.created_ms = now;
        }
        if metadata.timestamps.modified_ms == 0 {
            metadata.timestamps.modified_ms = now;
        }
        let scope = parent.to_string();
        let mut occurrence = 0;
        let id = loop {
            let id = ucpkit_core::Block::derive_id(&content, metadata.role.as_ref(), &scope, occurrence);
            if !self.document.contains(id) {
                break id;
            }
            occurrence += 1;
        };
        let mut block = ucpkit_core::Block::new(id, content, metadata);
        // Counted like an ingested block, so stats and budgets see it at once.
        block.metadata.tokens = Some(self.count_tokens(&block.to_markdown()));
        match append.at {
            Some(at) => self.document.insert_child(parent, at as usize, block)?,
            None => self.document.append_child(parent, block)?,
        };
        Ok(Outcome { created: vec![id], ..Outcome::new("APPEND") })
    }

    fn move_block(&mut self, mv: &Move) -> Result<Outcome, EngineError> {
        let block = self.resolve(&mv.block)?;
        match &mv.destination {
            MoveDestination::To { parent, at } => {
                let parent = self.resolve(parent)?;
                self.document.move_block(block, parent, at.map(|a| a as usize))?;
            }
            MoveDestination::Before(sibling) | MoveDestination::After(sibling) => {
                let sibling = self.resolve(sibling)?;
                if sibling == block {
                    return Err(EngineError::InvalidValue("cannot move a block before or after itself".into()));
                }
                let parent = self.document.parent(sibling).ok_or_else(|| {
                    EngineError::InvalidValue(format!("{sibling} has no parent to move {block} next to"))
                })?;
                let position = self
                    .document
                    .children(parent)
                    .iter()
                    .filter(|c| **c != block)
                    .position(|c| *c == sibling)
                    .expect("the sibling is its parent's child");
                let index = if matches!(mv.destination, MoveDestination::After(_)) { position + 1 } else { position };
                self.document.move_block(block, parent, Some(index))?;
            }
        }
        Ok(Outcome { modified: vec![block], ..Outcome::new("MOVE") })
    }

    fn delete(&mut self, delete: &Delete) -> Result<Outcome, EngineError> {
        let mode = match delete.mode {
            DeleteMode::Orphan => RemoveMode::OrphanChildren,
            DeleteMode::Cascade => RemoveMode::Cascade,
            DeleteMode::PreserveChildren => RemoveMode::PreserveChildren,
        };
        let matcher = delete.condition.as_ref().map(|c| Matcher::new(c, &|r| self.resolve(r))).transpose()?;
        let targets = match &delete.target {
            Some(target) => {
                let id = self.resolve(target)?;
                if id.is_root() {
                    return Err(ucpkit_core::StructureError::Root.into());
                }
                if let Some(matcher) = &matcher {
                    if !matcher.matches(self.document.get(id).expect("resolved"))? {
                        return Ok(Outcome::noted("DELETE", "skipped: the WHERE condition does not hold"));
                    }
                }
                vec![id]
            }
            None => self.matching(matcher.as_ref().expect("the parser requires a target or WHERE"))?,
        };
        let mut outcome = Outcome::new("DELETE");
        for id in targets {
            if self.document.contains(id) {
                let removed = self.document.remove_block(id, mode)?;
                outcome.removed.extend(removed.blocks.iter().map(|b| b.id));
                outcome.edges_removed += removed.edges.len();
            }
        }
        if outcome.removed.is_empty() {
            outcome.note = Some("no block matched".into());
        }
        Ok(outcome)
    }

    /// Non-root blocks matching a condition, in document order then orphans.
    fn matching(&self, matcher: &Matcher<'_>) -> Result<Vec<BlockId>, EngineError> {
        let mut ids = Vec::new();
        for id in self.document.ordered_ids() {
            if !id.is_root() && matcher.matches(self.document.get(id).expect("listed"))? {
                ids.push(id);
            }
        }
        Ok(ids)
    }

    fn link(&mut self, link: &Link) -> Result<Outcome, EngineError> {
        let source = self.resolve(&link.source)?;
        let target = self.resolve(&link.target)?;
        let metadata = edge_metadata(&link.properties)?;
        let edge = Edge { source, edge_type: link.edge_type.clone(), target, metadata };
        if self.document.add_edge(edge)? {
            Ok(Outcome { edges_added: 1, ..Outcome::new("LINK") })
        } else {
            Ok(Outcome::noted("LINK", "already linked"))
        }
    }

    fn prune(&mut self, prune: &Prune) -> Result<Outcome, EngineError> {
        let mut outcome = Outcome { dry_run: prune.dry_run, ..Outcome::new("PRUNE") };
        match &prune.target {
            PruneTarget::Unreachable => {
                let reachable: IdSet = self.document.document_order().collect();
                let doomed: Vec<BlockId> =
                    self.document.ordered_ids().into_iter().filter(|id| !reachable.contains(id)).collect();
                if !prune.dry_run {
                    for id in &doomed {
                        if self.document.contains(*id) {
                            let removed = self.document.remove_block(*id, RemoveMode::OrphanChildren)?;
                            outcome.edges_removed += removed.edges.len();
                        }
                    }
                }
                outcome.removed = doomed;
            }
            PruneTarget::Where(condition) => {
                let roots = self.matching(&Matcher::new(condition, &|r| self.resolve(r))?)?;
                if prune.dry_run {
                    let mut seen = IdSet::default();
                    for root in roots {
                        for id in std::iter::once(root).chain(self.document.descendants(root)) {
                            if seen.insert(id) {
                                outcome.removed.push(id);
                            }
                        }
                    }
                } else {
                    for root in roots {
                        if self.document.contains(root) {
                            let removed = self.document.remove_block(root, RemoveMode::Cascade)?;
                            outcome.removed.extend(removed.blocks.iter().map(|b| b.id));
                            outcome.edges_removed += removed.edges.len();
                        }
                    }
                }
            }
        }
        if outcome.removed.is_empty() {
            outcome.note = Some("nothing to prune".into());
        }
        Ok(outcome)
    }

    fn fold(&mut self, fold: &Fold) -> Result<Outcome, EngineError> {
        let root = self.resolve(&fold.target)?;
        let preserved = |doc: &Document, id: BlockId| {
            doc.get(id).is_some_and(|b| b.metadata.tags.iter().any(|t| fold.preserve_tags.contains(t)))
        };
        // Walk the subtree; a block is folded when it is the first one the
        // depth or token limit cuts off on its branch.
        let mut folded = IdSet::default();
        let mut used: u64 = 0;
        let mut stack = vec![(root, 0u32)];
        while let Some((id, depth)) = stack.pop() {
            let keep = id == root || preserved(&self.document, id);
            if let Some(limit) = fold.max_tokens {
                let cost = u64::from(self.tokens_of(id));
                if !keep && used + cost > u64::from(limit) {
                    folded.insert(id);
                    continue;
                }
                used += cost;
            }
            let children = self.document.children(id);
            if !keep && !children.is_empty() && fold.depth.is_some_and(|limit| depth >= limit) {
                folded.insert(id);
                continue;
            }
            stack.extend(children.iter().rev().map(|c| (*c, depth + 1)));
        }
        let subtree: Vec<BlockId> = std::iter::once(root).chain(self.document.descendants(root)).collect();
        let mut outcome = Outcome::new("FOLD");
        for id in subtree {
            let is_folded = folded.contains(&id);
            let was_folded = self.document.get(id).is_some_and(|b| b.metadata.custom.contains_key(FOLDED_KEY));
            if is_folded != was_folded {
                let block = self.document.get_mut(id).expect("subtree blocks exist");
                if is_folded {
                    block.metadata.custom.insert(FOLDED_KEY.into(), true.into());
                } else {
                    block.metadata.custom.remove(FOLDED_KEY);
                }
                outcome.modified.push(id);
            }
        }
        outcome.note = Some(format!("{} block(s) folded under {root}", folded.len()));
        Ok(outcome)
    }

    /// A block's token count: cached, or counted now.
    fn tokens_of(&mut self, id: BlockId) -> u32 {
        let block = self.document.get(id).expect("walked blocks exist");
        match block.metadata.tokens {
            Some(tokens) => tokens,
            None => {
                let markdown = block.to_markdown();
                self.count_tokens(&markdown)
            }
        }
    }

    /// The tokens of `text` in the document's encoding (o200k_base unless
    /// it names another this build has).
    fn count_tokens(&mut self, text: &str) -> u32 {
        let encoding = self
            .document
            .metadata
            .tokenizer
            .as_deref()
            .and_then(ucpkit_core::Encoding::from_name)
            .unwrap_or(ucpkit_core::Encoding::O200k);
        let tokenizer = self.tokenizer.get_or_insert_with(|| Arc::new(ucpkit_core::BpeTokenizer::new(encoding)));
        u32::try_from(tokenizer.count(text)).unwrap_or(u32::MAX)
    }
}

/// Edge metadata from LINK properties: `confidence`, `note` (or
/// `description`), anything else custom.
fn edge_metadata(properties: &ucpkit_ucl::Properties) -> Result<EdgeMetadata, EngineError> {
    let mut metadata = EdgeMetadata::default();
    for (key, value) in properties {
        match (key.as_str(), value) {
            ("confidence", Value::Float(x)) => metadata.confidence = Some(*x as f32),
            ("confidence", Value::Int(x)) => metadata.confidence = Some(*x as f32),
            ("confidence", other) => {
                return Err(EngineError::InvalidValue(format!("confidence must be a number, not {other}")))
            }
            ("note" | "description", Value::String(text)) => metadata.note = Some(text.clone()),
            _ => {
                metadata.custom.insert(key.clone(), value.to_json());
            }
        }
    }
    Ok(metadata)
}
