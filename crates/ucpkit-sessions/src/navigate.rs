//! Walks over one document: EXPAND (down, up, semantic), FOLLOW, PATH and
//! FIND. Pure functions of the document; the session layer adds limits,
//! results and metrics.

use std::collections::VecDeque;

use regex::Regex;
use ucpkit_core::{BlockId, Document, EdgeType, IdMap, IdSet};

use crate::error::AgentError;
use crate::safety::{Deadline, DepthGuard};

/// Steps between deadline checks in long walks.
const CHECK_EVERY: usize = 4096;

/// Which blocks an EXPAND lists (walks pass through the others).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only these roles (empty: any).
    pub roles: Vec<String>,
    /// Only blocks with one of these tags (empty: any).
    pub tags: Vec<String>,
}

impl Filter {
    /// Whether every block passes.
    pub fn is_empty(&self) -> bool {
        self.roles.is_empty() && self.tags.is_empty()
    }

    /// Whether the block passes.
    pub fn accepts(&self, doc: &Document, id: BlockId) -> bool {
        let Some(block) = doc.get(id) else { return false };
        let role_ok = self.roles.is_empty()
            || block.role().is_some_and(|r| self.roles.iter().any(|x| x.eq_ignore_ascii_case(r.as_str())));
        let tag_ok = self.tags.is_empty() || block.metadata.tags.iter().any(|t| self.tags.contains(t));
        role_ok && tag_ok
    }
}

/// Descendants of `from` down to `depth` levels, in document order, with
/// their level; at most `cap` listed, the total counted.
pub fn descendants(
    doc: &Document,
    from: BlockId,
    depth: usize,
    filter: &Filter,
    cap: usize,
    guard: &DepthGuard,
) -> Result<(Vec<(BlockId, usize)>, usize), AgentError> {
    let mut walk = DownWalk { doc, depth, filter, cap, guard, found: Vec::new(), total: 0 };
    walk.visit(from, 0)?;
    Ok((walk.found, walk.total))
}

/// A recursive pre-order walk, one [`DepthGuard`] level per tree level.
struct DownWalk<'a> {
    doc: &'a Document,
    depth: usize,
    filter: &'a Filter,
    cap: usize,
    guard: &'a DepthGuard,
    found: Vec<(BlockId, usize)>,
    total: usize,
}

impl DownWalk<'_> {
    fn visit(&mut self, at: BlockId, level: usize) -> Result<(), AgentError> {
        if level == self.depth {
            return Ok(());
        }
        let _level = self.guard.enter()?;
        let last = level + 1 == self.depth;
        for child in self.doc.children(at) {
            if self.filter.is_empty() || self.filter.accepts(self.doc, *child) {
                self.total += 1;
                if self.found.len() < self.cap {
                    self.found.push((*child, level + 1));
                }
            }
            if !last {
                self.visit(*child, level + 1)?;
            }
        }
        Ok(())
    }
}

/// Blocks reached over edges (both directions) within `depth` hops,
/// nearest first, with their hop count; at most `cap`.
pub fn connected(doc: &Document, from: BlockId, depth: usize, filter: &Filter, cap: usize) -> Vec<(BlockId, usize)> {
    let edges = doc.edges();
    let mut seen: IdSet = [from].into_iter().collect();
    let mut queue = VecDeque::from([(from, 0)]);
    let mut out = Vec::new();
    while let Some((at, hops)) = queue.pop_front() {
        if hops == depth {
            continue;
        }
        let next = edges.outgoing(at).iter().map(|e| e.target).chain(edges.incoming(at).iter().map(|(s, _)| *s));
        for block in next.collect::<Vec<_>>() {
            if seen.insert(block) {
                if filter.accepts(doc, block) && out.len() < cap {
                    out.push((block, hops + 1));
                }
                queue.push_back((block, hops + 1));
            }
        }
    }
    out
}

/// Targets of `from`'s outgoing edges of the given types (all types when
/// empty), optionally only `target`.
pub fn follow(doc: &Document, from: BlockId, types: &[EdgeType], target: Option<BlockId>) -> Vec<(BlockId, EdgeType)> {
    doc.edges()
        .outgoing(from)
        .iter()
        .filter(|e| types.is_empty() || types.contains(&e.edge_type))
        .filter(|e| target.is_none_or(|t| t == e.target))
        .map(|e| (e.target, e.edge_type.clone()))
        .collect()
}

/// Facts about a document version that walks reuse across sessions.
#[derive(Debug, Default)]
pub struct Indexes {
    /// Position of every reachable block in document order.
    pub order: IdMap<u32>,
    /// Blocks whose subtree holds an endpoint of an edge (PATH descends
    /// only into these, or towards its goal).
    pub linked: IdSet,
}

impl Indexes {
    /// Builds the indexes of a document.
    pub fn build(doc: &Document) -> Self {
        let mut order = IdMap::default();
        order.reserve(doc.len());
        for (i, id) in doc.document_order().enumerate() {
            order.insert(id, u32::try_from(i).unwrap_or(u32::MAX));
        }
        let mut linked = IdSet::default();
        for edge in doc.edges().iter() {
            for end in [edge.source, edge.target] {
                for node in std::iter::once(end).chain(doc.ancestors(end)) {
                    if !linked.insert(node) {
                        break;
                    }
                }
            }
        }
        Indexes { order, linked }
    }
}

/// Shortest path from `from` to `to` over parent/child links and edges
/// (edges walked both ways), as the list of blocks from start to end.
///
/// A bidirectional breadth-first search that expands the smaller frontier.
/// It never descends into a subtree that holds neither its goal nor an edge
/// endpoint: such a detour can only come back out the way it went in, so the
/// path found is still a shortest one.
pub fn path(
    doc: &Document,
    indexes: &Indexes,
    from: BlockId,
    to: BlockId,
    max: Option<usize>,
    deadline: &Deadline,
) -> Result<Vec<BlockId>, AgentError> {
    if from == to {
        return Ok(vec![from]);
    }
    let goal_chain = |goal: BlockId| -> IdSet { std::iter::once(goal).chain(doc.ancestors(goal)).collect() };
    let mut sides = [Side::new(from, goal_chain(to)), Side::new(to, goal_chain(from))];
    let mut steps = 0usize;
    let mut best: Option<(usize, BlockId)> = None;
    loop {
        let radius = sides[0].radius + sides[1].radius;
        if let Some((length, _)) = best {
            if length <= radius + 1 {
                break;
            }
        }
        if max.is_some_and(|m| radius >= m) || (sides[0].frontier.is_empty() && sides[1].frontier.is_empty()) {
            break;
        }
        let grow = if sides[1].frontier.is_empty()
            || (!sides[0].frontier.is_empty() && sides[0].frontier.len() <= sides[1].frontier.len())
        {
            0
        } else {
            1
        };
        let (this, other) = if grow == 0 {
            let (a, b) = sides.split_at_mut(1);
            (&mut a[0], &b[0])
        } else {
            let (a, b) = sides.split_at_mut(1);
            (&mut b[0], &a[0])
        };
        let frontier = std::mem::take(&mut this.frontier);
        this.radius += 1;
        for at in frontier {
            for next in neighbours(doc, indexes, at, &this.goal_chain) {
                steps += 1;
                if steps.is_multiple_of(CHECK_EVERY) {
                    deadline.check()?;
                }
                if this.parent.contains_key(&next) {
                    continue;
                }
                this.parent.insert(next, at);
                this.depth.insert(next, this.radius);
                this.frontier.push(next);
                if let Some(d) = other.depth.get(&next) {
                    let length = this.radius + d;
                    if best.is_none_or(|(l, _)| length < l) {
                        best = Some((length, next));
                    }
                }
            }
        }
    }
    let Some((length, meet)) = best else { return Err(AgentError::NoPath { from, to, max }) };
    if max.is_some_and(|m| length > m) {
        return Err(AgentError::NoPath { from, to, max });
    }
    let mut path = sides[0].trace(meet);
    path.reverse();
    path.extend(sides[1].trace(meet).into_iter().skip(1));
    Ok(path)
}

/// One direction of the bidirectional search.
struct Side {
    parent: IdMap<BlockId>,
    depth: IdMap<usize>,
    frontier: Vec<BlockId>,
    radius: usize,
    goal_chain: IdSet,
}

impl Side {
    fn new(start: BlockId, goal_chain: IdSet) -> Self {
        Side {
            parent: [(start, start)].into_iter().collect(),
            depth: [(start, 0)].into_iter().collect(),
            frontier: vec![start],
            radius: 0,
            goal_chain,
        }
    }

    /// Blocks from `meet` back to this side's start.
    fn trace(&self, meet: BlockId) -> Vec<BlockId> {
        let mut out = vec![meet];
        let mut at = meet;
        while let Some(prev) = self.parent.get(&at).copied().filter(|p| *p != at) {
            out.push(prev);
            at = prev;
        }
        out
    }
}

/// Where a path may step from `at`.
fn neighbours<'a>(
    doc: &'a Document,
    indexes: &'a Indexes,
    at: BlockId,
    goal_chain: &'a IdSet,
) -> impl Iterator<Item = BlockId> + 'a {
    let edges = doc.edges();
    doc.parent(at)
        .into_iter()
        .chain(doc.children(at).iter().copied().filter(|c| goal_chain.contains(c) || indexes.linked.contains(c)))
        .chain(edges.outgoing(at).iter().map(|e| e.target))
        .chain(edges.incoming(at).iter().map(|(s, _)| *s))
}

/// FIND's filters; all given filters must hold.
#[derive(Debug, Default)]
pub struct FindQuery {
    /// Role name.
    pub role: Option<String>,
    /// A tag the block carries.
    pub tag: Option<String>,
    /// The block's label.
    pub label: Option<String>,
    /// A regular expression over the block's text.
    pub pattern: Option<Regex>,
}

impl FindQuery {
    fn matches(&self, block: &ucpkit_core::Block) -> bool {
        self.role.as_ref().is_none_or(|r| block.role().is_some_and(|x| x.as_str().eq_ignore_ascii_case(r)))
            && self.tag.as_ref().is_none_or(|t| block.metadata.tags.contains(t))
            && self.label.as_ref().is_none_or(|l| block.metadata.label.as_ref() == Some(l))
            && self.pattern.as_ref().is_none_or(|p| p.is_match(&block.plain_text()))
    }
}

/// Blocks matching every filter: the first `cap` in document order, and
/// the number of matches.
pub fn find(
    doc: &Document,
    indexes: &Indexes,
    query: &FindQuery,
    cap: usize,
    deadline: &Deadline,
) -> Result<(Vec<BlockId>, usize), AgentError> {
    let mut matches: Vec<(u32, BlockId)> = Vec::new();
    for (i, block) in doc.blocks().enumerate() {
        if i % CHECK_EVERY == 0 {
            deadline.check()?;
        }
        if query.matches(block) {
            if let Some(position) = indexes.order.get(&block.id) {
                matches.push((*position, block.id));
            }
        }
    }
    let total = matches.len();
    if matches.len() > cap && cap > 0 {
        matches.select_nth_unstable(cap - 1);
        matches.truncate(cap);
    }
    matches.sort_unstable();
    matches.truncate(cap);
    Ok((matches.into_iter().map(|(_, id)| id).collect(), total))
}
