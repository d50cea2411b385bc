//! Making a window smaller on request: CTX COMPRESS shows entries in a
//! smaller representation, CTX PRUNE removes the least relevant or stalest.

use crate::CompressMethod;
use ucpkit_core::BlockId;

use crate::entry::Representation;
use crate::window::{refresh, Action, ContextWindow, Env};

impl ContextWindow {
    /// Shows every entry but the focus with `method` where that is smaller.
    /// Returns the blocks changed.
    pub fn compress(&mut self, env: &Env, method: CompressMethod) -> Vec<BlockId> {
        self.sync(env);
        let to = match method {
            CompressMethod::Truncate => Representation::Truncated,
            CompressMethod::Summarize => Representation::Summary,
            CompressMethod::StructureOnly => Representation::StructureOnly,
        };
        let builder = self.builder(env);
        let mut changed = Vec::new();
        let mut records = Vec::new();
        for entry in &mut self.entries {
            if Some(entry.id) == self.focus || entry.representation == to {
                continue;
            }
            let mut candidate = entry.clone();
            candidate.representation = to;
            if builder.show(entry.id, to).is_none() {
                continue;
            }
            refresh(&mut candidate, &builder, self.task.as_ref());
            if candidate.tokens < entry.tokens {
                records.push((
                    entry.id,
                    Action::Compressed { from: entry.representation, to },
                    entry.tokens,
                    candidate.tokens,
                ));
                changed.push(entry.id);
                *entry = candidate;
            }
        }
        for (id, action, before, after) in records {
            self.record(id, action, before, after, env.now_ms);
        }
        self.recount(env);
        changed
    }

    /// Removes entries below `min_relevance` (current relevance) or not
    /// touched for `max_age_s` seconds; without either, entries below the
    /// configured threshold. The focus and its ancestors stay.
    pub fn prune(&mut self, env: &Env, min_relevance: Option<f64>, max_age_s: Option<u64>) -> Vec<BlockId> {
        self.sync(env);
        let min_relevance = match (min_relevance, max_age_s) {
            (None, None) => Some(self.config.min_relevance),
            (min, _) => min,
        };
        let protected = self.protected(env);
        let mut pruned = Vec::new();
        let mut kept = Vec::with_capacity(self.entries.len());
        for entry in std::mem::take(&mut self.entries) {
            let too_old = max_age_s.is_some_and(|age| env.now_ms - entry.accessed_ms > age as i64 * 1000);
            let too_weak = min_relevance.is_some_and(|min| self.score(env, &entry) < min);
            if protected.contains(&entry.id) || !(too_old || too_weak) {
                kept.push(entry);
            } else {
                let rule = if too_weak { "min_relevance" } else { "max_age" };
                pruned.push((entry.id, rule, entry.tokens));
            }
        }
        self.entries = kept;
        for (id, rule, tokens) in &pruned {
            self.record(*id, Action::Pruned { rule: (*rule).to_owned() }, *tokens, 0, env.now_ms);
        }
        self.recount(env);
        // What stays may now need longer `§` headers.
        self.enforce(env);
        pruned.into_iter().map(|(id, ..)| id).collect()
    }
}
