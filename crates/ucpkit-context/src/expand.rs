//! `CTX EXPAND`: budget-aware growth of the window around the focus (or
//! every entry when there is none).
//!
//! Candidates are ranked by current relevance; the most relevant are added
//! in full while the budget lasts, and the rest become structure-only stubs
//! (one per unopened subtree) so the agent sees what exists and what opening
//! it would cost. Expansion never evicts what is already in the window.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::{CtxDirection, Reason};
use serde::Serialize;
use ucpkit_core::{BlockId, Document, IdMap, IdSet};

use crate::entry::{base_score, Entry, Representation};
use crate::segment::Builder;
use crate::window::{refresh, ContextWindow, Env};

/// Most candidates one expansion considers (nearest first).
const MAX_CANDIDATES: usize = 2000;

/// What CTX EXPAND did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Expansion {
    /// Blocks added in full.
    pub added: Vec<BlockId>,
    /// Blocks added as structure-only stubs.
    pub stubs: Vec<BlockId>,
    /// Candidates that did not fit even as stubs.
    pub omitted: usize,
    /// Tokens the expansion added.
    pub tokens: usize,
}

impl ContextWindow {
    /// Expands the window in `direction` up to `depth` steps, spending at
    /// most `tokens` (and never more than the window's free budget).
    pub fn expand(&mut self, env: &Env, direction: CtxDirection, depth: usize, tokens: Option<usize>) -> Expansion {
        self.sync(env);
        let bases: Vec<BlockId> = match self.focus {
            Some(focus) => vec![focus],
            None => self.entries.iter().map(|e| e.id).collect(),
        };
        let present: IdSet = self.entries.iter().map(|e| e.id).collect();
        let candidates = candidates(env.doc, &bases, direction, depth.max(1), &present);
        let start = self.total_tokens;
        let limit = start.saturating_add(tokens.unwrap_or(usize::MAX)).min(self.config.max_tokens);

        let builder = self.builder(env);
        let mut scored: IdMap<(Entry, f64)> = IdMap::default();
        let mut children: IdMap<Vec<BlockId>> = IdMap::default();
        let mut roots = Vec::new();
        for (id, reason, parent) in &candidates {
            let entry = self.new_entry(&builder, *id, *reason, base_score(*reason), Representation::Full, env.now_ms);
            let score = self.score(env, &entry);
            scored.insert(*id, (entry, score));
            match parent {
                Some(p) => children.entry(*p).or_default().push(*id),
                None => roots.push(*id),
            }
        }
        let rank = |id: &BlockId| Ranked { score: scored[id].1, order: scored[id].0.order.clone(), id: *id };

        // The map first: a stub for every root candidate, most relevant
        // first, within half the budget.
        let mut expansion = Expansion::default();
        let stub_limit = start + (limit - start) / 2;
        let mut ranked_roots: Vec<Ranked> = roots.iter().map(rank).collect();
        ranked_roots.sort_by(|a, b| b.cmp(a));
        let mut heap = BinaryHeap::new();
        for root in ranked_roots {
            if self.fits_within(env, self.stub(&builder, &scored[&root.id].0), stub_limit) {
                heap.push(root);
            } else {
                expansion.omitted += 1;
            }
        }
        // Then open stubs in order of relevance, each with its unopened
        // children as stubs, while the budget lasts.
        while let Some(Ranked { id, .. }) = heap.pop() {
            let index = self.index_of(id).expect("stubs in the heap are entries");
            let stub = self.entries.remove(index);
            let mut opened = vec![scored[&id].0.clone()];
            let kids = children.get(&id).map_or(&[][..], Vec::as_slice);
            opened.extend(kids.iter().map(|k| self.stub(&builder, &scored[k].0)));
            if self.all_fit_within(env, opened, limit) {
                expansion.added.push(id);
                heap.extend(kids.iter().map(rank));
            } else {
                self.insert_sorted(stub);
                self.recount(env);
            }
        }
        expansion.stubs = self
            .entries
            .iter()
            .filter(|e| e.representation == Representation::StructureOnly && scored.contains_key(&e.id))
            .map(|e| e.id)
            .collect();
        // A heading can stand in for the header of the blocks below it, so
        // the total may even shrink.
        expansion.tokens = self.total_tokens.saturating_sub(start);
        expansion
    }

    /// The stub form of a candidate.
    fn stub(&self, builder: &Builder, entry: &Entry) -> Entry {
        let mut stub = entry.clone();
        stub.representation = Representation::StructureOnly;
        refresh(&mut stub, builder, self.task.as_ref());
        stub
    }

    /// Inserts all `entries` if the window then stays within `limit` tokens
    /// and its block budget; otherwise leaves the window unchanged.
    fn all_fit_within(&mut self, env: &Env, entries: Vec<Entry>, limit: usize) -> bool {
        let before = self.total_tokens;
        let ids: Vec<BlockId> = entries.iter().map(|e| e.id).collect();
        for entry in entries {
            self.insert_sorted(entry);
        }
        self.recount(env);
        if self.total_tokens <= limit && self.within_budget() {
            return true;
        }
        self.entries.retain(|e| !ids.contains(&e.id));
        self.total_tokens = before;
        false
    }

    /// Inserts `entry` if the window then stays within `limit` tokens and
    /// its block budget; otherwise leaves the window unchanged.
    fn fits_within(&mut self, env: &Env, entry: Entry, limit: usize) -> bool {
        let id = entry.id;
        let before = self.total_tokens;
        self.insert_sorted(entry);
        self.recount(env);
        if self.total_tokens <= limit && self.within_budget() {
            return true;
        }
        let index = self.index_of(id).expect("just inserted");
        self.entries.remove(index);
        self.total_tokens = before;
        false
    }
}

/// Blocks reached from `bases`, nearest first, with the reason they would
/// be added for and, for blocks reached downwards from another candidate,
/// that candidate (whose stub covers them); blocks in `present` are left out.
fn candidates(
    doc: &Document,
    bases: &[BlockId],
    direction: CtxDirection,
    depth: usize,
    present: &IdSet,
) -> Vec<(BlockId, Reason, Option<BlockId>)> {
    let mut seen: IdSet = present.clone();
    let mut out = Vec::new();
    let mut push = |id: BlockId, reason: Reason, parent: Option<BlockId>, out: &mut Vec<_>| {
        if out.len() < MAX_CANDIDATES && !id.is_root() && seen.insert(id) {
            out.push((id, reason, parent));
        }
    };
    let (up, down, semantic) = match direction {
        CtxDirection::Up => (depth, 0, 0),
        CtxDirection::Down => (0, depth, 0),
        CtxDirection::Both => (depth, depth, 0),
        CtxDirection::Semantic => (0, 0, depth),
        CtxDirection::Auto => (1, depth, 1),
    };
    for base in bases {
        for ancestor in doc.ancestors(*base).take(up) {
            push(ancestor, Reason::StructuralContext, None, &mut out);
        }
    }
    let mut queue: VecDeque<(BlockId, usize)> = bases.iter().map(|b| (*b, 0)).collect();
    while let Some((id, level)) = queue.pop_front() {
        if level == down {
            continue;
        }
        let covering = (level > 0 && !present.contains(&id)).then_some(id);
        for child in doc.children(id) {
            push(*child, Reason::NavigationPath, covering, &mut out);
            queue.push_back((*child, level + 1));
        }
    }
    let mut queue: VecDeque<(BlockId, usize)> = bases.iter().map(|b| (*b, 0)).collect();
    let mut visited: IdSet = bases.iter().copied().collect();
    while let Some((id, level)) = queue.pop_front() {
        if level == semantic {
            continue;
        }
        let edges = doc.edges();
        let neighbours = edges.outgoing(id).iter().map(|e| e.target).chain(edges.incoming(id).iter().map(|(s, _)| *s));
        for next in neighbours.collect::<Vec<_>>() {
            if visited.insert(next) {
                push(next, Reason::SemanticRelevance, None, &mut out);
                queue.push_back((next, level + 1));
            }
        }
    }
    out
}

/// A candidate in the opening queue: most relevant first, then document order.
#[derive(PartialEq)]
struct Ranked {
    score: f64,
    order: Vec<u32>,
    id: BlockId,
}

impl Eq for Ranked {}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score.total_cmp(&other.score).then_with(|| other.order.cmp(&self.order))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
