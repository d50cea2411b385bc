//! The walks of a command: PATH, EXPAND in every direction (semantic
//! included, within a token budget), the neighbourhood of the cursor, and
//! the repository map around the session (VIEW MAP).

use ucpkit_core::outline;
use ucpkit_core::BlockId;
use ucpkit_ucl::{BlockRef, Direction, Expand, Reason, ViewMode};

use super::Run;
use crate::error::AgentError;
use crate::metrics::Metrics;
use crate::navigate::{self, Filter};
use crate::reply::{Item, Reply, Stub};
use crate::safety::DepthGuard;
use crate::session::Session;

/// Tokens of a VIEW MAP that names none.
const MAP_TOKENS: usize = 1024;

impl Run<'_> {
    pub(super) fn path(
        &mut self,
        session: &Session,
        from: &BlockRef,
        to: &BlockRef,
        max: Option<usize>,
    ) -> Result<Vec<BlockId>, AgentError> {
        let from = self.resolve(from)?;
        let to = self.resolve(to)?;
        let indexes = self.traversal.indexes(self.doc);
        let max = max.or(Some(session.limits.max_results_per_operation));
        navigate::path(self.doc, &indexes, from, to, max, &self.deadline())
    }

    pub(super) fn expand(&mut self, session: &mut Session, expand: &Expand) -> Result<Reply, AgentError> {
        let from = self.resolve(&expand.target)?;
        let depth = expand.depth.unwrap_or(1) as usize;
        let max = session.limits.max_expand_depth;
        if depth > max {
            return Err(AgentError::DepthLimitExceeded { requested: depth, max });
        }
        let filter = Filter { roles: expand.roles.clone(), tags: expand.tags.clone() };
        let cap = session.limits.max_results_per_operation;
        let guard = DepthGuard::new(max);
        let mut found: Vec<(BlockId, i32)> = Vec::new();
        let mut total = 0;
        if matches!(expand.direction, Direction::Up | Direction::Both) {
            let ups: Vec<(BlockId, i32)> = self
                .doc
                .ancestors(from)
                .take(depth)
                .enumerate()
                .filter(|(_, id)| filter.accepts(self.doc, *id))
                .map(|(i, id)| (id, -(i as i32 + 1)))
                .collect();
            total += ups.len();
            found.extend(ups.into_iter().rev());
        }
        if matches!(expand.direction, Direction::Down | Direction::Both) {
            let (downs, count) = navigate::descendants(self.doc, from, depth, &filter, cap, &guard)?;
            total += count;
            found.extend(downs.into_iter().map(|(id, level)| (id, level as i32)));
        }
        if expand.direction == Direction::Semantic {
            let linked = navigate::connected(self.doc, from, depth, &filter, cap);
            Metrics::bump(&session.metrics.edges_followed, linked.len() as u64);
            total += linked.len();
            found.extend(linked.into_iter().map(|(id, hops)| (id, hops as i32)));
        }
        found.truncate(cap);
        Metrics::bump(&session.metrics.expansions, 1);
        let mode = expand.mode.unwrap_or(ViewMode::Preview);
        let (items, stubs) = match expand.tokens {
            Some(budget) => self.budgeted(session, &found, mode, budget as usize),
            None => (found.iter().map(|(id, depth)| self.item_at(session, *id, *depth, mode)).collect(), Vec::new()),
        };
        Ok(self.listing(session, "EXPAND", items, stubs, total, Reason::StructuralContext))
    }

    pub(super) fn item_at(&mut self, session: &Session, id: BlockId, depth: i32, mode: ViewMode) -> Item {
        let mut item = self.item(session, id, mode, None);
        item.view.depth = depth;
        item
    }

    /// EXPAND with TOKENS: the most task-relevant (then nearest) blocks are
    /// shown in the mode asked while their lines fit the budget; the rest
    /// become stubs with their subtree's size and price.
    pub(super) fn budgeted(
        &mut self,
        session: &Session,
        found: &[(BlockId, i32)],
        mode: ViewMode,
        budget: usize,
    ) -> (Vec<Item>, Vec<Stub>) {
        let tokenizer = &**self.traversal.tokenizer();
        let task = session.window.task_terms();
        let mut ranked: Vec<(usize, f64)> = found
            .iter()
            .enumerate()
            .map(|(i, (id, depth))| {
                // A part of a stored document may list a block it does not hold (see `view`).
                let similarity = match (task, self.doc.get(*id)) {
                    (Some(task), Some(block)) => task.similarity(&block.plain_text()),
                    _ => 0.0,
                };
                (i, similarity - f64::from(depth.unsigned_abs()) * 1e-3)
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut shown = vec![false; found.len()];
        let mut spent = 0;
        for (i, _) in ranked {
            let (id, depth) = found[i];
            let line = self.item_at(session, id, depth, mode).view.to_string();
            let cost = tokenizer.count(&line) + 1;
            if spent + cost <= budget {
                spent += cost;
                shown[i] = true;
            }
        }
        let unshown: ucpkit_core::IdSet =
            found.iter().zip(&shown).filter(|(_, shown)| !**shown).map(|((id, _), _)| *id).collect();
        let mut items = Vec::new();
        let mut stubs = Vec::new();
        for (i, (id, depth)) in found.iter().enumerate() {
            if shown[i] {
                items.push(self.item_at(session, *id, *depth, mode));
            } else if *depth < 0 || !self.doc.parent(*id).is_some_and(|p| unshown.contains(&p)) {
                let (below, tokens) = outline::subtree(self.doc, *id, tokenizer);
                let own = self.doc.get(*id).map_or(0, |b| outline::block_tokens(b, tokenizer));
                let role = self.doc.get(*id).and_then(|b| b.role()).map(|r| r.as_str().to_owned());
                stubs.push(Stub { id: *id, role, below, tokens: own + tokens });
            }
        }
        (items, stubs)
    }

    /// The repository map around the session: PageRank over the code
    /// graph, personalized to the window's blocks (by relevance), the
    /// cursor and the last results, within `tokens` (default
    /// [`MAP_TOKENS`], at most the session's context budget).
    pub(super) fn map(&mut self, session: &Session, tokens: Option<usize>) -> Reply {
        let budget = tokens.unwrap_or(MAP_TOKENS).min(session.limits.max_context_tokens).max(1);
        let mut seeds: Vec<(BlockId, f64)> =
            session.window.entries().iter().map(|e| (e.id, e.relevance.max(0.1))).collect();
        seeds.push((session.cursor.position(), 1.0));
        seeds.extend(session.last_results.iter().map(|id| (*id, 0.5)));
        seeds.retain(|(id, _)| !id.is_root());
        let map = ucpkit_code::map::repo_map(self.doc, &seeds, budget, self.traversal.tokenizer().as_ref());
        self.blocks_read += self.doc.len() as u64;
        Reply::Map { text: map.text, tokens: map.tokens, files: map.files.into_iter().map(|f| f.path).collect() }
    }

    pub(super) fn neighborhood(
        &mut self,
        session: &mut Session,
        depth: usize,
        mode: Option<ViewMode>,
    ) -> Result<Reply, AgentError> {
        let max = session.limits.max_expand_depth;
        if depth > max {
            return Err(AgentError::DepthLimitExceeded { requested: depth, max });
        }
        let cap = session.limits.max_results_per_operation;
        let mode = mode.unwrap_or(ViewMode::Ids);
        let near = session.cursor.neighborhood(self.doc, cap).clone();
        let at = self.view(session, session.cursor.position(), ViewMode::Metadata);
        let ancestors = near.ancestors.iter().map(|id| self.view(session, *id, mode)).collect();
        let children = if depth <= 1 {
            near.children.iter().map(|id| self.item_at(session, *id, 1, mode).view).collect()
        } else {
            let guard = DepthGuard::new(max);
            let (below, _) =
                navigate::descendants(self.doc, session.cursor.position(), depth, &Filter::default(), cap, &guard)?;
            below.into_iter().map(|(id, level)| self.item_at(session, id, level as i32, mode).view).collect()
        };
        let siblings = near.siblings.iter().map(|id| self.view(session, *id, mode)).collect();
        let connections = near
            .connections
            .iter()
            .map(|(id, edge, outgoing)| {
                let arrow = if *outgoing { format!("-{edge}->") } else { format!("<-{edge}-") };
                self.item(session, *id, mode, Some(arrow))
            })
            .collect();
        Ok(Reply::Neighborhood { at, ancestors, children, siblings, connections })
    }
}
