//! The built-in traversal policy, which needs no model.
//!
//! For a section it issues, round by round:
//! 1. `EXPAND <section> DOWN MODE=full`: everything the section holds;
//! 2. scores each of the section's own blocks (those not under a
//!    subsection heading) by the question's ranking of the document's
//!    blocks, or, for a block it did not rank, by how much of the
//!    question's weighted terms the block and its heading path hold;
//!    shares every own block in the pool with its score (the orchestrator
//!    assembles the context from the pool), queues subsections that match
//!    the question as tasks of their own, and `FOLLOW`s the links of its
//!    best relevant blocks;
//! 3. `VIEW`s the link targets;
//! 4. queues the targets that match the question as tasks.

use std::time::Duration;

use ucpkit_core::{BlockId, EdgeType, IdMap};
use ucpkit_ucl::{BlockRef, Command, Direction, Expand, Follow, View, ViewMode, ViewTarget};

use crate::policy::{block_discovery, Decision, Exploration, ExplorationTask, Policy, QueryTerms, TaskOrigin};
use ucpkit_sessions::BlockView;
use ucpkit_sessions::{Item, Reply};

/// The heuristic policy and its thresholds.
#[derive(Debug, Clone, PartialEq)]
pub struct HeuristicPolicy {
    /// How deep a section is expanded.
    pub depth: u32,
    /// Score of a block the question's ranking did not score (a link
    /// target, a block the ranking left out), per unit of term coverage.
    pub coverage_weight: f64,
    /// Score from which a block's links are followed.
    pub follow_score: f64,
    /// Term coverage from which a subsection becomes a task of its own.
    pub subsection_coverage: f64,
    /// Term coverage from which a link target becomes a task.
    pub link_coverage: f64,
    /// Links followed per section (from its best blocks).
    pub links: usize,
    /// How long shared discoveries live.
    pub ttl: Duration,
}

impl Default for HeuristicPolicy {
    fn default() -> Self {
        HeuristicPolicy {
            depth: 6,
            coverage_weight: 0.5,
            follow_score: 0.25,
            subsection_coverage: 0.5,
            link_coverage: 0.4,
            links: 3,
            ttl: Duration::from_secs(600),
        }
    }
}

/// A block of the section, as the expansion showed it.
struct Seen<'a> {
    view: &'a BlockView,
    /// The subsection heading it lies under (`None`: the section's own).
    under: Option<BlockId>,
}

fn id(block: BlockId) -> BlockRef {
    BlockRef::Id(block)
}

fn is_heading(view: &BlockView) -> bool {
    view.role.as_deref().is_some_and(|r| r.starts_with("heading"))
}

/// The listing items of every successful command of a round.
fn listings(round: &[crate::policy::Observed]) -> impl Iterator<Item = (&Command, &[Item])> {
    round.iter().filter_map(|o| match &o.result {
        Ok(step) => match &step.reply {
            Reply::Listing { items, .. } => Some((&o.command, items.as_slice())),
            _ => None,
        },
        Err(_) => None,
    })
}

/// The targets of the FOLLOWs of a round, each with the block linking to it.
fn link_targets(round: &[crate::policy::Observed]) -> Vec<(BlockId, BlockId)> {
    let mut targets: Vec<(BlockId, BlockId)> = Vec::new();
    for (command, items) in listings(round) {
        let Command::Follow(Follow { source: BlockRef::Id(from), .. }) = command else { continue };
        for item in items {
            if !targets.iter().any(|(_, t)| *t == item.view.id) {
                targets.push((*from, item.view.id));
            }
        }
    }
    targets
}

impl HeuristicPolicy {
    /// The blocks of the section's expansion, each with the subsection it
    /// lies under (the listing is in document order with depths).
    fn seen<'a>(items: &'a [Item]) -> Vec<Seen<'a>> {
        let mut out = Vec::with_capacity(items.len());
        let mut open: Option<(BlockId, i32)> = None;
        for item in items {
            let view = &item.view;
            if open.is_some_and(|(_, depth)| view.depth <= depth) {
                open = None;
            }
            if open.is_none() && is_heading(view) {
                out.push(Seen { view, under: Some(view.id) });
                open = Some((view.id, view.depth));
                continue;
            }
            out.push(Seen { view, under: open.map(|(heading, _)| heading) });
        }
        out
    }

    /// A block's score: the question's ranking of it (see [`crate::rank`])
    /// when it ranked it, else a share of how much of the question's
    /// weighted terms its text and the section's heading path (`heading`,
    /// analyzed) hold.
    fn score(&self, exploration: &Exploration<'_>, heading: u64, view: &BlockView) -> f64 {
        let terms = exploration.terms;
        terms.ranked(view.id).unwrap_or_else(|| {
            let text = view.text.as_deref().unwrap_or("");
            self.coverage_weight * terms.coverage_mask(heading | terms.block_mask(view.id, text))
        })
    }

    /// Round 2: score the section, add, share, queue subsections, follow links.
    fn judge_section(&self, exploration: &Exploration<'_>, items: &[Item]) -> Decision {
        let task = exploration.task;
        let seen = Self::seen(items);
        let heading = exploration.terms.mask_of(&QueryTerms::analyze(&task.heading_path.join(" ")));
        let mut decision = Decision::default();
        let mut own: Vec<(BlockId, f64, usize)> = seen
            .iter()
            .filter(|s| s.under.is_none())
            .map(|s| (s.view.id, self.score(exploration, heading, s.view), s.view.edges))
            .collect();
        let best = own.iter().map(|(_, s, _)| *s).fold(0.0, f64::max);
        // The section's heading speaks for the whole section; a root that
        // is content itself (a block under no heading: a memory) keeps its
        // own ranking.
        let heading_score = self.coverage_weight * exploration.terms.coverage_mask(heading);
        let own_score = exploration.terms.ranked(task.root).unwrap_or(0.0);
        let section_score = heading_score.max(best).max(own_score);
        decision.share.push(block_discovery(task.root, section_score, task.root, "section", self.ttl));
        for (block, score, _) in &own {
            decision.share.push(block_discovery(*block, *score, task.root, "section block", self.ttl));
        }
        own.sort_by(|a, b| b.1.total_cmp(&a.1));
        if matches!(task.origin, TaskOrigin::Search) {
            for (block, _, _) in
                own.iter().filter(|(_, s, edges)| *s >= self.follow_score && *edges > 0).take(self.links)
            {
                decision.commands.push(Command::Follow(Follow {
                    source: id(*block),
                    edge_types: vec![EdgeType::LinksTo],
                    target: None,
                }));
            }
        }
        // Subsections that match the question on their own.
        let mut masks: IdMap<u64> = IdMap::default();
        for s in &seen {
            if let Some(under) = s.under {
                let mask = exploration.terms.block_mask(s.view.id, s.view.text.as_deref().unwrap_or(""));
                *masks.entry(under).or_default() |= mask;
            }
        }
        for heading in seen.iter().filter(|s| s.under == Some(s.view.id)) {
            let coverage = exploration.terms.coverage_mask(masks.get(&heading.view.id).copied().unwrap_or(0));
            if coverage >= self.subsection_coverage {
                let title = heading.view.text.as_deref().unwrap_or("").trim_start_matches('#').trim().to_owned();
                let mut heading_path = task.heading_path.clone();
                heading_path.push(title);
                decision.spawn.push(ExplorationTask {
                    root: heading.view.id,
                    heading_path,
                    hits: Vec::new(),
                    priority: task.priority * 0.8 * coverage,
                    origin: TaskOrigin::Subsection { of: task.root },
                });
            }
        }
        decision.done = !decision.commands.iter().any(|c| matches!(c, Command::Follow(_)));
        decision
    }

    /// Round 4: link targets that match the question become tasks.
    fn judge_links(&self, exploration: &Exploration<'_>, items: &[(BlockId, &BlockView)]) -> Decision {
        let task = exploration.task;
        let mut decision = Decision { done: true, ..Decision::default() };
        for (from, view) in items {
            let text = view.text.as_deref().unwrap_or("");
            let coverage = exploration.terms.coverage_mask(exploration.terms.block_mask(view.id, text));
            if coverage >= self.link_coverage && view.id != task.root {
                let title = text.lines().next().unwrap_or("").trim_start_matches('#').trim().to_owned();
                decision.spawn.push(ExplorationTask {
                    root: view.id,
                    heading_path: vec![title],
                    hits: Vec::new(),
                    priority: task.priority * 0.6 * coverage,
                    origin: TaskOrigin::Link { from: *from },
                });
            }
        }
        decision
    }
}

impl Policy for HeuristicPolicy {
    fn name(&self) -> &str {
        "heuristic"
    }

    fn decide(&self, exploration: &Exploration<'_>) -> Decision {
        let task = exploration.task;
        match exploration.rounds {
            [] => Decision {
                commands: vec![Command::Expand(Expand {
                    target: id(task.root),
                    direction: Direction::Down,
                    depth: Some(self.depth),
                    mode: Some(ViewMode::Full),
                    roles: Vec::new(),
                    tags: Vec::new(),
                    tokens: None,
                })],
                ..Decision::default()
            },
            [expanded] => {
                let items = listings(expanded).next().map_or(&[][..], |(_, items)| items);
                self.judge_section(exploration, items)
            }
            [_, judged] => {
                let commands: Vec<Command> = link_targets(judged)
                    .iter()
                    .map(|(_, target)| {
                        Command::View(View { target: ViewTarget::Block(id(*target)), mode: Some(ViewMode::Preview) })
                    })
                    .collect();
                Decision { done: commands.is_empty(), commands, ..Decision::default() }
            }
            [_, judged, viewed] => {
                let targets = link_targets(judged);
                let views: Vec<(BlockId, &BlockView)> = viewed
                    .iter()
                    .filter_map(|o| match &o.result {
                        Ok(step) => match &step.reply {
                            Reply::View { view } => {
                                targets.iter().find(|(_, t)| *t == view.id).map(|(from, _)| (*from, view))
                            }
                            _ => None,
                        },
                        Err(_) => None,
                    })
                    .collect();
                self.judge_links(exploration, &views)
            }
            _ => Decision { done: true, ..Decision::default() },
        }
    }
}
