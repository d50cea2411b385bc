//! CTX commands: what a session's context window takes in, gives up,
//! compresses and renders.

use ucpkit_context::{Admitted, Env};
use ucpkit_core::BlockId;
use ucpkit_ucl::{Ctx, Reason, RenderFormat};

use super::Run;
use crate::error::AgentError;
use crate::metrics::Metrics;
use crate::reply::Reply;
use crate::session::Session;

impl Run<'_> {
    pub(super) fn ctx(&mut self, session: &mut Session, ctx: &Ctx, name: &'static str) -> Result<Reply, AgentError> {
        let traversal = self.traversal;
        let env = Env {
            doc: self.doc,
            tokenizer: &**traversal.tokenizer(),
            summarizer: &*traversal.summarizer,
            now_ms: self.now,
        };
        let mut added: Vec<Admitted> = Vec::new();
        let mut removed: Vec<BlockId> = Vec::new();
        let mut changed: Vec<BlockId> = Vec::new();
        let mut omitted = 0;
        match ctx {
            Ctx::Add { target, reason, relevance, note } => {
                let id = self.resolve(target)?;
                let admitted = session.window.add(&env, id, reason.unwrap_or(Reason::DirectReference), *relevance)?;
                if note.is_some() {
                    session.window.set_note(id, note.clone());
                }
                removed.clone_from(&admitted.evicted);
                added.push(admitted);
            }
            Ctx::AddResults => {
                if session.last_results.is_empty() {
                    return Err(AgentError::NoResults);
                }
                let reason = session.last_reason;
                let ids = session.last_results.clone();
                self.add_all(session, &env, &ids, reason, &mut added, &mut removed, &mut omitted);
            }
            Ctx::AddChildren { parent } => {
                let parent = self.resolve(parent)?;
                let ids: Vec<BlockId> =
                    self.doc.children(parent).iter().take(session.limits.max_results_per_operation).copied().collect();
                self.add_all(session, &env, &ids, Reason::StructuralContext, &mut added, &mut removed, &mut omitted);
            }
            Ctx::AddPath { from, to } => {
                let ids = self.path(session, from, to, None)?;
                self.add_all(session, &env, &ids, Reason::NavigationPath, &mut added, &mut removed, &mut omitted);
            }
            Ctx::Remove { target } => {
                let id = self.resolve(target)?;
                session.window.remove(&env, id)?;
                removed.push(id);
            }
            Ctx::Clear => {
                removed = session.window.entries().iter().map(|e| e.id).collect();
                session.window.clear(&env);
            }
            Ctx::Expand { direction, depth, tokens } => {
                let depth = depth.unwrap_or(1) as usize;
                let max = session.limits.max_expand_depth;
                if depth > max {
                    return Err(AgentError::DepthLimitExceeded { requested: depth, max });
                }
                let expansion = session.window.expand(&env, *direction, depth, tokens.map(|t| t as usize));
                Metrics::bump(&session.metrics.expansions, 1);
                for id in expansion.added.iter().chain(&expansion.stubs) {
                    if let Some(entry) = session.window.get(*id) {
                        added.push(Admitted {
                            id: *id,
                            representation: entry.representation,
                            already_present: false,
                            evicted: Vec::new(),
                        });
                    }
                }
                omitted = expansion.omitted;
            }
            Ctx::Compress { method } => changed = session.window.compress(&env, *method),
            Ctx::Prune { min_relevance, max_age } => removed = session.window.prune(&env, *min_relevance, *max_age),
            Ctx::Render { format } => {
                let format = format.unwrap_or(RenderFormat::Default);
                session.window.sync(&env);
                let text = session.window.render(&env, format, &mut session.ids);
                let tokens = match format {
                    RenderFormat::Default => session.window.tokens(),
                    _ => env.tokenizer.count(&text),
                };
                return Ok(Reply::Rendered { format, tokens, text });
            }
            Ctx::Stats => {
                session.window.sync(&env);
                return Ok(Reply::Stats { stats: Box::new(session.window.stats(&env)) });
            }
            Ctx::Focus { target } => {
                let id = target.as_ref().map(|t| self.resolve(t)).transpose()?;
                session.window.set_focus(&env, id)?;
            }
        }
        Metrics::bump(&session.metrics.context_adds, added.len() as u64);
        Metrics::bump(&session.metrics.context_removes, removed.len() as u64);
        Ok(Reply::Context {
            command: name,
            added,
            removed,
            changed,
            omitted,
            tokens: session.window.tokens(),
            blocks: session.window.len(),
            max_tokens: session.window.config().max_tokens,
            focus: session.window.focus(),
        })
    }

    /// Adds several blocks; those that do not fit even as stubs are counted.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn add_all(
        &self,
        session: &mut Session,
        env: &Env,
        ids: &[BlockId],
        reason: Reason,
        added: &mut Vec<Admitted>,
        removed: &mut Vec<BlockId>,
        omitted: &mut usize,
    ) {
        for id in ids {
            match session.window.add(env, *id, reason, None) {
                Ok(admitted) => {
                    removed.extend(admitted.evicted.iter().copied());
                    added.push(admitted);
                }
                Err(_) => *omitted += 1,
            }
        }
        removed.retain(|id| session.window.get(*id).is_none());
    }
}
