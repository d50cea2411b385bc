//! A one-shot UCL script on the part of a stored document it names,
//! instead of the whole document.
//!
//! A script whose commands reach blocks only through the ids they name
//! (EDIT, APPEND, MOVE, DELETE of a block, LINK, UNLINK, transactions and
//! ATOMIC groups of those) touches those blocks, their ancestors and what
//! is next to them. Those are read from the store ([`Store::part`]), the
//! script runs on that partial document, and only the rows it changed are
//! written ([`Store::save_part`]), with the search index synced for the
//! changed blocks. Every id the run asks for that the part does not hold is
//! recorded ([`ucpkit_core::Document::partial`]); when there are any, they are
//! read too and the script runs again from the start (nothing was written),
//! so what is written is what the whole document would give. A script that
//! fails, names a block by label, scans the document (FIND, SEARCH, PATH,
//! DELETE WHERE, PRUNE), uses snapshots or the context window, a library
//! with a model, or a part that keeps growing: the document is loaded
//! whole, as before.

use std::sync::Arc;

use ucpkit_core::{outline, BlockId, Document, IdSet};
use ucpkit_search::{SearchConfig, SearchIndex};
use ucpkit_sessions::SessionId;
use ucpkit_store::Part;
use ucpkit_ucl::{parse_script, BlockRef, Command, Condition, ContentLiteral, EditOp, Value};

use crate::library::{Library, Workspace};
use crate::script::ScriptRun;
use crate::{NewSession, WorkspaceError};

/// Times a script runs on a grown part before the document is read whole.
const ROUNDS: usize = 4;

/// The most blocks a part may hold: past that, the whole document costs
/// about the same to read.
const MOST_BLOCKS: usize = 50_000;

/// What the next round reads: blocks alone (with their ancestors), and
/// blocks with everything below them.
#[derive(Default)]
struct Wanted {
    blocks: Vec<BlockId>,
    subtrees: Vec<BlockId>,
}

impl Library {
    /// Runs `source` like [`Library::run_script_replayed`], on the part of
    /// stored document `name` that it reaches; `None`, having written
    /// nothing, when that cannot be done (the caller loads the document).
    pub(crate) fn run_script_on_part(
        &self,
        name: &str,
        named: Option<&str>,
        options: &NewSession,
        source: &str,
        attempts: usize,
    ) -> Result<Option<(Arc<Workspace>, SessionId, ScriptRun)>, WorkspaceError> {
        if self.config.model.is_some() || self.config.read_only {
            return Ok(None);
        }
        let Some(first) = blocks_named(source) else { return Ok(None) };
        let dir = ucpkit_search::index_dir(&self.config.store_dir, name);
        crate::replayed(attempts, || {
            let Some(mut part) = self.store()?.part(name)? else { return Ok(None) };
            if !self.grow(&mut part, &first)? {
                return Ok(None);
            }
            let Some(index) = SearchIndex::open_for_changes(&dir, name, part.revision(), SearchConfig::default())?
            else {
                return Ok(None);
            };
            let index = Arc::new(index);
            for _ in 0..ROUNDS {
                let before = part.document();
                let mut doc = part.document();
                let absent = doc.partial();
                let mut workspace = self.assemble_part(doc, part.clone(), Arc::clone(&index));
                let session = match named {
                    Some(named) => self.open_named(&workspace, named, options)?,
                    None => self.create_session(&workspace, options)?,
                };
                let report = workspace.traversal().run_script(session, source)?;
                if !report.ok() {
                    // Its failure, its undoing and the session it leaves are
                    // reported from the whole document.
                    return Ok(None);
                }
                let wanted = {
                    let engine = workspace.traversal().engine();
                    let doc = engine.document();
                    let mut wanted = Wanted {
                        blocks: absent.take().into_iter().filter(|&id| !part.settled(id)).collect(),
                        subtrees: moved_or_retitled(&before, doc),
                    };
                    wanted.blocks.extend(part.outside(doc));
                    wanted.subtrees.retain(|&id| !subtree_held(doc, id));
                    wanted
                };
                let held = part.len();
                if !self.grow(&mut part, &wanted)? {
                    return Ok(None);
                }
                if part.len() != held {
                    continue; // the run saw less than the document holds: again
                }
                if !wanted.subtrees.is_empty() {
                    // Blocks below it are listed that the store does not hold.
                    return Ok(None);
                }
                // What it asked for and lacked, the document lacks too.
                workspace.part = Some(part.clone());
                // A conflict is replayed from a fresh part.
                let written = self.save_session(&workspace, session)?;
                let metrics = workspace.traversal().with_session(session, |s| s.metrics())?;
                return Ok(Some((Arc::new(workspace), session, ScriptRun { report, written, metrics })));
            }
            Ok(None)
        })
    }

    /// Reads `wanted` into `part`; false when the part would grow past
    /// [`MOST_BLOCKS`] or the stored document moved on.
    fn grow(&self, part: &mut Part, wanted: &Wanted) -> Result<bool, WorkspaceError> {
        let store = self.store()?;
        Ok((wanted.blocks.is_empty() || store.extend_part(part, &wanted.blocks, 0, MOST_BLOCKS)?)
            && (wanted.subtrees.is_empty() || store.extend_part(part, &wanted.subtrees, usize::MAX, MOST_BLOCKS)?))
    }
}

/// The blocks changed in `doc` since it was `before` whose heading path
/// below them may have changed: new ones, moved ones, and those whose
/// title changed. The search index re-reads what is below them.
fn moved_or_retitled(before: &Document, doc: &Document) -> Vec<BlockId> {
    let Some(changes) = doc.unsaved_changes() else { return Vec::new() };
    changes
        .blocks
        .into_iter()
        .filter(|&id| {
            let Some(now) = doc.holding(id) else { return false };
            match before.holding(id) {
                None => true,
                Some(was) => outline::title(was) != outline::title(now) || parent_of(before, id) != parent_of(doc, id),
            }
        })
        .collect()
}

/// The parent of a block the document holds.
fn parent_of(doc: &Document, id: BlockId) -> Option<BlockId> {
    doc.holding(id).and_then(|_| doc.parent(id))
}

/// Whether `doc` holds every block below `top`.
fn subtree_held(doc: &Document, top: BlockId) -> bool {
    let mut stack = vec![top];
    while let Some(id) = stack.pop() {
        if doc.holding(id).is_none() {
            return false;
        }
        stack.extend_from_slice(doc.children(id));
    }
    true
}

/// What a part must hold for `source` to run on it: the blocks it names
/// by id, and whole the ones it deletes or moves; `None` when it is not a
/// script a part can run (each command must reach blocks only through
/// ids it names, and the blocks next to them) or does not parse.
fn blocks_named(source: &str) -> Option<Wanted> {
    let script = parse_script(source).ok()?;
    let document = &script.document;
    if !document.structure.is_empty() || !document.blocks.is_empty() {
        return None;
    }
    let mut wanted = Wanted::default();
    let mut seen = IdSet::default();
    for command in &document.commands {
        if !reaches_only_what_it_names(command) {
            return None;
        }
        let mut by_id = true;
        command.clone().for_each_ref_mut(&mut |r| match r {
            BlockRef::Id(id) => {
                if seen.insert(*id) {
                    wanted.blocks.push(*id);
                }
            }
            BlockRef::Label(_) | BlockRef::Short(_) | BlockRef::Name(_) => by_id = false,
        });
        if !by_id {
            return None;
        }
        push_whole(command, &mut wanted.subtrees);
    }
    Some(wanted)
}

/// Adds the blocks `command` deletes or moves, which go with everything
/// below them.
fn push_whole(command: &Command, out: &mut Vec<BlockId>) {
    match command {
        Command::Delete(ucpkit_ucl::Delete { target: Some(BlockRef::Id(id)), .. })
        | Command::Move(ucpkit_ucl::Move { block: BlockRef::Id(id), .. }) => out.push(*id),
        Command::Atomic(atomic) => atomic.commands.iter().for_each(|c| push_whole(c, out)),
        _ => {}
    }
}

/// Whether `command` edits blocks it names, with values that name none.
fn reaches_only_what_it_names(command: &Command) -> bool {
    match command {
        Command::Edit(edit) => {
            let value = match &edit.op {
                EditOp::Set(v) | EditOp::Append(v) | EditOp::Remove(v) => Some(v),
                EditOp::Increment | EditOp::Decrement => None,
            };
            !value.is_some_and(Value::has_refs) && edit.condition.as_ref().is_none_or(|c| !condition_has_refs(c))
        }
        Command::Append(append) => {
            append.properties.iter().all(|(_, v)| !v.has_refs())
                && !matches!(&append.content, Some(ContentLiteral::Value(v)) if v.has_refs())
        }
        Command::Move(_) | Command::Unlink(_) | Command::Transaction(_) => true,
        Command::Delete(delete) => delete.target.is_some() && delete.condition.is_none(),
        Command::Link(link) => link.properties.iter().all(|(_, v)| !v.has_refs()),
        Command::Atomic(atomic) => atomic.commands.iter().all(reaches_only_what_it_names),
        _ => false,
    }
}

/// Whether a condition compares with a value that names a block.
fn condition_has_refs(condition: &Condition) -> bool {
    match condition {
        Condition::Compare { value, .. } => value.has_refs(),
        Condition::Check { .. } | Condition::Truthy(_) => false,
        Condition::Not(inner) => condition_has_refs(inner),
        Condition::And(terms) | Condition::Or(terms) => terms.iter().any(condition_has_refs),
    }
}
