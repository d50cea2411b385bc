//! The eviction policy: when the window is over budget, which entries
//! leave first (by [`PruningPolicy`]), never the focus or its ancestors,
//! and how the largest entry is degraded when nothing else may go.

use std::collections::{HashMap, HashSet};
use ucpkit_core::outline;

use serde::{Deserialize, Serialize};
use ucpkit_core::{BlockId, IdSet};

use crate::entry::{Entry, Representation};
use ucpkit_analyzer::terms;

use crate::relevance::jaccard;
use crate::window::{refresh, Action, ContextWindow, Env};

/// Which entries leave first when the window is over budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PruningPolicy {
    /// Lowest current relevance first.
    #[default]
    RelevanceFirst,
    /// Least recently touched first.
    RecencyFirst,
    /// Near duplicates of other entries first.
    RedundancyFirst,
    /// Leaves before their ancestors, least relevant first.
    Strategic,
}

impl ContextWindow {
    /// Evicts (and as a last resort degrades protected entries) until the
    /// window is within budget.
    pub(crate) fn enforce(&mut self, env: &Env) {
        while !self.within_budget() {
            if let Some(victim) = self.victims(env, None, None).first().copied() {
                let index = self.index_of(victim).expect("victims are entries");
                let entry = self.entries.remove(index);
                let policy = self.config.policy;
                self.record(entry.id, Action::Evicted { policy }, entry.tokens, 0, env.now_ms);
            } else {
                self.degrade_largest(env);
            }
            self.recount(env);
        }
    }

    /// Shows the largest entry one step smaller, or drops it when it is
    /// already a stub.
    fn degrade_largest(&mut self, env: &Env) {
        let Some(index) = (0..self.entries.len()).max_by_key(|i| self.entries[*i].tokens) else { return };
        let builder = self.builder(env);
        let entry = &self.entries[index];
        let next = [Representation::Truncated, Representation::StructureOnly]
            .into_iter()
            .filter(|r| *r > entry.representation)
            .find(|r| builder.show(entry.id, *r).is_some());
        match next {
            Some(to) => {
                let mut smaller = entry.clone();
                smaller.representation = to;
                refresh(&mut smaller, &builder, self.task.as_ref());
                let (id, from, before, after) = (entry.id, entry.representation, entry.tokens, smaller.tokens);
                self.entries[index] = smaller;
                self.record(id, Action::Degraded { from, to }, before, after, env.now_ms);
            }
            None => {
                let entry = self.entries.remove(index);
                let policy = self.config.policy;
                self.record(entry.id, Action::Evicted { policy }, entry.tokens, 0, env.now_ms);
            }
        }
    }

    /// Entries that may be evicted, in the policy's order: never the focus
    /// or its ancestors, never `except`, and (with a floor) only entries no
    /// more relevant than the floor.
    pub(crate) fn victims(&self, env: &Env, floor: Option<f64>, except: Option<BlockId>) -> Vec<BlockId> {
        let protected = self.protected(env);
        let mut scored: Vec<(&Entry, f64)> = self
            .entries
            .iter()
            .filter(|e| !protected.contains(&e.id) && Some(e.id) != except)
            .map(|e| (e, self.score(env, e)))
            .filter(|(_, s)| floor.is_none_or(|f| *s <= f))
            .collect();
        let by_relevance = |a: &(&Entry, f64), b: &(&Entry, f64)| a.1.total_cmp(&b.1).then(a.0.order.cmp(&b.0.order));
        match self.config.policy {
            PruningPolicy::RelevanceFirst => scored.sort_by(by_relevance),
            PruningPolicy::RecencyFirst => {
                scored.sort_by(|a, b| a.0.accessed_ms.cmp(&b.0.accessed_ms).then_with(|| by_relevance(a, b)))
            }
            PruningPolicy::RedundancyFirst => {
                let redundancy = self.redundancy(env);
                scored.sort_by(|a, b| {
                    let (ra, rb) = (redundancy[&a.0.id], redundancy[&b.0.id]);
                    rb.total_cmp(&ra).then_with(|| by_relevance(a, b))
                });
            }
            PruningPolicy::Strategic => {
                let inner: IdSet = self.entries.iter().flat_map(|e| env.doc.ancestors(e.id)).collect();
                scored.sort_by(|a, b| {
                    inner.contains(&a.0.id).cmp(&inner.contains(&b.0.id)).then_with(|| by_relevance(a, b))
                });
            }
        }
        scored.into_iter().map(|(e, _)| e.id).collect()
    }

    /// For each entry, its highest term overlap with another entry, rounded
    /// to tenths so near duplicates tie and relevance decides among them.
    fn redundancy(&self, env: &Env) -> HashMap<BlockId, f64> {
        let sets: Vec<HashSet<String>> = self
            .entries
            .iter()
            .map(|e| env.doc.get(e.id).map(|b| terms(&outline::full_body(b)).into_iter().collect()).unwrap_or_default())
            .collect();
        let mut out = HashMap::new();
        for (i, entry) in self.entries.iter().enumerate() {
            let best = (0..sets.len()).filter(|j| *j != i).map(|j| jaccard(&sets[i], &sets[j])).fold(0.0, f64::max);
            out.insert(entry.id, (best * 10.0).round() / 10.0);
        }
        out
    }

    /// The focus and its ancestors.
    pub(crate) fn protected(&self, env: &Env) -> IdSet {
        self.focus.into_iter().flat_map(|f| std::iter::once(f).chain(env.doc.ancestors(f))).collect()
    }
}
