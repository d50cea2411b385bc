//! Dispatches one parsed command in a session: traversal commands walk the
//! document (`walks`), CTX commands change the session's window (`ctx`),
//! edit commands go through the engine when the session may edit. Every
//! handler validates before it changes anything.

mod ctx;
mod walks;

use std::time::Duration;
use ucpkit_core::outline;

use regex::Regex;
use ucpkit_context::segment;
use ucpkit_core::{BlockId, Document};
use ucpkit_engine::Engine;
use ucpkit_ucl::{BlockRef, Command, Ctx, Reason, ViewMode, ViewTarget};

use crate::error::AgentError;
use crate::host::SessionHost;
use crate::metrics::Metrics;
use crate::navigate::{self, FindQuery};
use crate::reply::{Item, Reply, Stub};
use crate::safety::Deadline;
use crate::session::Session;
use crate::view::{view, BlockView};
use crate::Step;
use ucpkit_search::{structure, SearchOptions};

/// What a command may need the session to be allowed.
fn check_permission(session: &Session, command: &Command) -> Result<(), AgentError> {
    let caps = session.capabilities;
    let (allowed, what) = match command {
        c if c.is_edit() => (caps.can_edit, "edits"),
        Command::Search(_) => (caps.can_search, "SEARCH"),
        Command::Ctx(Ctx::Render { .. } | Ctx::Stats) => (true, ""),
        Command::Ctx(_) => (caps.can_modify_context, "changing the context window"),
        _ => (caps.can_traverse, "traversal"),
    };
    if allowed {
        Ok(())
    } else {
        Err(AgentError::NotPermitted(format!("this session may not do {what}")))
    }
}

impl SessionHost {
    pub(crate) fn dispatch(&self, session: &mut Session, command: &Command, now: i64) -> Result<Step, AgentError> {
        let mut command = command.clone();
        command.expand_short_ids(&session.ids).map_err(|n| {
            AgentError::BadReference(format!(
                "short id {n} is not known in this session (CTX RENDER FORMAT=SHORT_IDS assigns short ids)"
            ))
        })?;
        check_permission(session, &command)?;
        let name = command.name();
        if command.is_edit() {
            let mut engine = self.engine.write().unwrap_or_else(|e| e.into_inner());
            let outcome = engine.execute(&command)?;
            Metrics::bump(&session.metrics.edits, 1);
            return Ok(Step { command: name, reply: Reply::Edit { outcome }, warnings: Vec::new() });
        }
        let searches = u64::from(matches!(command, Command::Search(_)));
        session.usage.check(&session.limits.budget, 1, searches)?;
        if let Command::Ctx(ctx) = &command {
            let adds = matches!(
                ctx,
                Ctx::Add { .. } | Ctx::AddResults | Ctx::AddChildren { .. } | Ctx::AddPath { .. } | Ctx::Expand { .. }
            );
            let total = self.context_blocks.load(std::sync::atomic::Ordering::Relaxed);
            if adds && total >= self.limits.max_total_context_blocks {
                return Err(AgentError::BudgetExhausted {
                    budget: "total_context_blocks",
                    used: total as u64,
                    limit: self.limits.max_total_context_blocks as u64,
                });
            }
        }
        // One read guard for the whole command: `Run` resolves references
        // through it instead of locking again, since a second read lock can
        // wait forever behind a queued writer.
        let engine = self.engine.read().unwrap_or_else(|e| e.into_inner());
        let doc = engine.document();
        let mut notes = session.forget_deleted(doc);
        let mut run = Run { traversal: self, engine: &engine, doc, now, blocks_read: 0 };
        let reply = run.command(session, &command)?;
        session.usage.traversal_ops += 1;
        session.usage.search_ops += searches;
        session.usage.blocks_read += run.blocks_read;
        Metrics::bump(&session.metrics.blocks_visited, run.blocks_read);
        let budget_warnings = session.usage.warnings(&session.limits.budget);
        if !budget_warnings.is_empty() {
            Metrics::bump(&session.metrics.budget_warnings, 1);
        }
        notes.extend(budget_warnings.into_iter().map(|b| format!("{b} budget more than 80% spent")));
        Ok(Step { command: name, reply, warnings: notes })
    }
}

/// One command's execution against a document.
struct Run<'a> {
    traversal: &'a SessionHost,
    /// The engine under the command's read guard.
    engine: &'a Engine,
    doc: &'a Document,
    now: i64,
    blocks_read: u64,
}

impl Run<'_> {
    fn command(&mut self, session: &mut Session, command: &Command) -> Result<Reply, AgentError> {
        match command {
            Command::Goto(goto) => {
                let id = self.resolve(&goto.target)?;
                session.cursor.go(self.doc, id, session.limits.max_history);
                Metrics::bump(&session.metrics.navigations, 1);
                Ok(self.moved(session))
            }
            Command::Back(back) => {
                let steps = back.steps.unwrap_or(1) as usize;
                let available = session.cursor.history_len();
                session.cursor.back(self.doc, steps).ok_or(AgentError::EmptyHistory { requested: steps, available })?;
                Metrics::bump(&session.metrics.navigations, 1);
                Ok(self.moved(session))
            }
            Command::Expand(expand) => self.expand(session, expand),
            Command::Follow(follow) => {
                let source = self.resolve(&follow.source)?;
                let target = follow.target.as_ref().map(|t| self.resolve(t)).transpose()?;
                let edges = navigate::follow(self.doc, source, &follow.edge_types, target);
                if let (Some(target), true) = (target, edges.is_empty()) {
                    return Err(AgentError::NoPath { from: source, to: target, max: Some(1) });
                }
                if let Some(target) = target {
                    session.cursor.go(self.doc, target, session.limits.max_history);
                }
                Metrics::bump(&session.metrics.edges_followed, edges.len() as u64);
                let total = edges.len();
                let items = edges
                    .into_iter()
                    .take(session.limits.max_results_per_operation)
                    .map(|(id, edge)| self.item(session, id, ViewMode::Metadata, Some(edge.to_string())))
                    .collect();
                Ok(self.listing(session, "FOLLOW", items, Vec::new(), total, Reason::SemanticRelevance))
            }
            Command::Path(query) => {
                let ids = self.path(session, &query.from, &query.to, query.max.map(|m| m as usize))?;
                Metrics::bump(&session.metrics.edges_followed, ids.len().saturating_sub(1) as u64);
                let total = ids.len();
                let items = ids.into_iter().map(|id| self.item(session, id, ViewMode::Metadata, None)).collect();
                Ok(self.listing(session, "PATH", items, Vec::new(), total, Reason::NavigationPath))
            }
            Command::Search(search) => {
                let provider = self.traversal.search.as_ref().ok_or(AgentError::SearchNotConfigured)?;
                let options = SearchOptions {
                    limit: (search.limit.unwrap_or(10) as usize).min(session.limits.max_results_per_operation),
                    min_similarity: search.min_similarity.unwrap_or(0.0),
                    roles: search.roles.clone(),
                    tags: search.tags.clone(),
                };
                let failed = |e: ucpkit_search::SearchError| AgentError::SearchFailed(e.to_string());
                provider.sync(self.doc).map_err(failed)?;
                let hits = structure::search_ranked(self.doc, options.limit, |limit| {
                    provider.search(&search.query, &SearchOptions { limit, ..options.clone() }).map_err(failed)
                })?;
                if session.window.task().is_none() {
                    session.window.set_task_text(Some(&search.query));
                }
                Metrics::bump(&session.metrics.searches, 1);
                let total = hits.len();
                let items = hits
                    .into_iter()
                    .filter(|h| self.doc.contains(h.id))
                    .map(|h| {
                        let path = outline::titled_path(self.doc, h.id);
                        let occasion = self.doc.get(h.id).and_then(outline::occasion);
                        let note = match segment::header(self.doc, &path, occasion.as_deref()).trim_end() {
                            "§ /" => format!("{:.2}", h.score),
                            header => format!("{:.2} {header}", h.score),
                        };
                        self.item(session, h.id, ViewMode::Preview, Some(note))
                    })
                    .collect();
                Ok(self.listing(session, "SEARCH", items, Vec::new(), total, Reason::SemanticRelevance))
            }
            Command::Find(find) => {
                let pattern = find
                    .pattern
                    .as_deref()
                    .map(|p| {
                        Regex::new(p)
                            .map_err(|e| AgentError::InvalidPattern { pattern: p.to_owned(), reason: e.to_string() })
                    })
                    .transpose()?;
                let query =
                    FindQuery { role: find.role.clone(), tag: find.tag.clone(), label: find.label.clone(), pattern };
                let indexes = self.traversal.indexes(self.doc);
                let cap = session.limits.max_results_per_operation;
                let (ids, total) = navigate::find(self.doc, &indexes, &query, cap, &self.deadline())?;
                Metrics::bump(&session.metrics.searches, 1);
                self.blocks_read += self.doc.len() as u64;
                let items = ids.into_iter().map(|id| self.item(session, id, ViewMode::Preview, None)).collect();
                Ok(self.listing(session, "FIND", items, Vec::new(), total, Reason::DirectReference))
            }
            Command::View(v) => match &v.target {
                ViewTarget::Block(target) => {
                    let id = self.resolve(target)?;
                    let mode = v.mode.unwrap_or(ViewMode::Full);
                    Ok(Reply::View { view: self.view(session, id, mode) })
                }
                ViewTarget::Neighborhood { depth } => self.neighborhood(session, depth.unwrap_or(1) as usize, v.mode),
                ViewTarget::Map { tokens } => Ok(self.map(session, tokens.map(|t| t as usize))),
            },
            Command::Ctx(ctx) => self.ctx(session, ctx, command.name()),
            other => Err(AgentError::NotPermitted(format!("{} cannot run in a session", other.name()))),
        }
    }

    fn deadline(&self) -> Deadline {
        Deadline::after(Duration::from_millis(self.traversal.limits.operation_timeout_ms))
    }

    fn resolve(&self, reference: &BlockRef) -> Result<BlockId, AgentError> {
        let id = match reference {
            BlockRef::Id(id) => *id,
            other => self.engine.resolve(other).map_err(|e| match e {
                ucpkit_engine::EngineError::BlockNotFound(id) => AgentError::BlockNotFound(id),
                other => AgentError::BadReference(other.to_string()),
            })?,
        };
        if self.doc.contains(id) {
            Ok(id)
        } else {
            Err(AgentError::BlockNotFound(id))
        }
    }

    fn view(&mut self, session: &Session, id: BlockId, mode: ViewMode) -> BlockView {
        self.blocks_read += 1;
        match self.doc.get(id) {
            Some(block) => view(self.doc, block, mode, session.window.task_terms()),
            // Only a part of a stored document lists blocks it does not
            // hold; it records the id, and its reader reads it and runs
            // the commands again.
            None => BlockView::absent(id, mode),
        }
    }

    fn item(&mut self, session: &Session, id: BlockId, mode: ViewMode, note: Option<String>) -> Item {
        Item { view: self.view(session, id, mode), note }
    }

    fn moved(&mut self, session: &Session) -> Reply {
        Reply::Moved {
            at: self.view(session, session.cursor.position(), ViewMode::Metadata),
            history: session.cursor.history_len(),
        }
    }

    /// Stores a listing's blocks as the session's last results.
    fn listing(
        &self,
        session: &mut Session,
        command: &'static str,
        items: Vec<Item>,
        stubs: Vec<Stub>,
        total: usize,
        reason: Reason,
    ) -> Reply {
        session.last_results = items.iter().map(|i| i.view.id).chain(stubs.iter().map(|s| s.id)).collect();
        session.last_reason = reason;
        Reply::Listing { command, items, stubs, total }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{mpsc, Arc};

    use ucpkit_core::{Block, Content, Metadata};

    use super::*;

    /// A traversal over a document with one block labelled `intro`.
    fn labelled() -> (Arc<SessionHost>, BlockId) {
        let mut doc = Document::new("doc");
        let metadata = Metadata { label: Some("intro".into()), ..Metadata::default() };
        let id = BlockId::from_bytes([7; 12]);
        doc.append_child(BlockId::ROOT, Block::new(id, Content::plain("hello"), metadata)).unwrap();
        (Arc::new(SessionHost::new(Engine::new(doc))), id)
    }

    /// std's `RwLock` makes a second read wait behind a queued writer, so a
    /// command that locked the engine twice could hang the document for good.
    #[test]
    fn references_resolve_while_a_writer_waits() {
        let (traversal, intro) = labelled();
        let (done, outcome) = mpsc::channel();
        std::thread::spawn(move || {
            let engine = traversal.engine.read().unwrap();
            let queued = Arc::clone(&traversal);
            let writer = std::thread::spawn(move || drop(queued.engine.write()));
            // Give the writer time to queue behind the read guard.
            std::thread::sleep(Duration::from_millis(200));
            let run = Run { traversal: &traversal, engine: &engine, doc: engine.document(), now: 0, blocks_read: 0 };
            done.send(run.resolve(&BlockRef::Label("intro".into())).ok()).unwrap();
            drop(engine);
            writer.join().unwrap();
        });
        let resolved = outcome.recv_timeout(Duration::from_secs(30));
        assert_eq!(resolved, Ok(Some(intro)), "resolving @intro must not wait for the queued writer");
    }
}
