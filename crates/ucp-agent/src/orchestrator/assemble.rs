//! Assembling one context window from what the sub-agents shared.
//!
//! Every block keeps the best score any agent gave it. A first pass spreads
//! part of the budget over the best block of each section in turn, so the
//! second half of an answer that lies in another section is not crowded out
//! by the first. Then sections go in by rank: a small section whole (its text
//! reads best in one piece), a large one by its blocks that scored, best
//! first; whatever does not fit is skipped, never cut. In the formats with
//! ids, sections that were explored but got no room are listed as stubs
//! (SPEC §6) in a small reserve of the budget, so the agent knows what else
//! exists and can open it by id. The window bounds the rendering
//! the request asks for, so the returned text never exceeds the budget.

use std::collections::BTreeMap;

use ucl_parser::{IdMapper, Reason, RenderFormat};
use ucm_core::{BlockId, Document, IdMap, Role};
use ucp_context::{segment, BudgetFormat, ContextWindow, Env, Representation, WindowConfig};

use super::{heading_path, BuiltContext, ContextBlock, ContextRequest, OrchestratorConfig};
use crate::coordination::Discovery;
use crate::error::AgentError;
use crate::traversal::AgentTraversal;

/// A section and the scored blocks agents found in it.
struct Section {
    root: BlockId,
    priority: f64,
    best: f64,
    /// `(block, score)` in document order.
    blocks: Vec<(BlockId, f64)>,
}

/// Groups the discoveries by section, most promising section first: by its
/// best block's score plus `priority_weight` times its search priority.
fn sections(doc: &Document, discoveries: &[Discovery], priorities: &IdMap<f64>, priority_weight: f64) -> Vec<Section> {
    let mut scores: IdMap<(f64, BlockId)> = IdMap::default();
    for discovery in discoveries {
        let section = discovery.metadata.get("section").and_then(|s| s.parse::<BlockId>().ok());
        for block in &discovery.block_ids {
            let section = section.unwrap_or_else(|| super::section_of(doc, *block));
            let slot = scores.entry(*block).or_insert((discovery.score, section));
            if discovery.score > slot.0 {
                *slot = (discovery.score, section);
            }
        }
    }
    let mut by_section: BTreeMap<BlockId, Vec<(BlockId, f64)>> = BTreeMap::new();
    for (block, (score, section)) in scores {
        if doc.contains(block) {
            by_section.entry(section).or_default().push((block, score));
        }
    }
    let mut out: Vec<Section> = by_section
        .into_iter()
        .map(|(root, mut blocks)| {
            blocks.sort_by_cached_key(|(b, _)| segment::order_key(doc, *b));
            let best = blocks.iter().map(|(_, s)| *s).fold(0.0, f64::max);
            let priority = priorities.get(&root).copied().unwrap_or(0.0);
            Section { root, priority, best, blocks }
        })
        .collect();
    let key = |s: &Section| s.best + priority_weight * s.priority;
    out.sort_by(|a, b| key(b).total_cmp(&key(a)).then(b.best.total_cmp(&a.best)));
    out
}

/// Whether a block is a section's own title line (the window's group
/// headers already name it).
fn is_title(doc: &Document, id: BlockId) -> bool {
    doc.get(id).is_some_and(|b| b.heading_level().is_some() || matches!(b.role(), Some(Role::File | Role::Title)))
}

/// Builds the window for `request` from `discoveries`.
pub(super) fn assemble(
    traversal: &AgentTraversal,
    config: &OrchestratorConfig,
    request: &ContextRequest,
    discoveries: &[Discovery],
    priorities: &IdMap<f64>,
) -> Result<BuiltContext, AgentError> {
    let engine = traversal.engine();
    let doc = engine.document();
    let env = Env {
        doc,
        tokenizer: traversal.tokenizer.as_ref(),
        summarizer: traversal.summarizer.as_ref(),
        now_ms: (traversal.clock)(),
    };
    let budget_format =
        if request.format == RenderFormat::Markdown { BudgetFormat::Markdown } else { BudgetFormat::Ids };
    // Stubs point at what can be opened by id; a markdown context shows no
    // ids, so it spends the whole budget on text.
    let stubs = request.format != RenderFormat::Markdown;
    let stub_reserve = if stubs { (request.budget as f64 * config.stub_share) as usize } else { 0 };
    let mut window = ContextWindow::new(WindowConfig {
        max_tokens: request.budget.saturating_sub(stub_reserve),
        max_blocks: usize::MAX,
        budget_format,
        ..WindowConfig::default()
    });
    let mut relevance: IdMap<f64> = IdMap::default();
    let mut admit = |window: &mut ContextWindow, block: BlockId, score: f64| -> Result<bool, AgentError> {
        let fitted = window.add_if_fits(&env, block, Reason::SemanticRelevance, score, Representation::Full)?;
        if fitted.is_some_and(|f| !f.already_present) {
            relevance.insert(block, score);
        }
        Ok(window.get(block).is_some())
    };
    let sections = sections(doc, discoveries, priorities, config.priority_weight);
    // Spread: the best block of each section in turn, so that the second
    // half of an answer in another section is not crowded out by the first.
    let spread = (request.budget as f64 * config.spread_share) as usize;
    for section in &sections {
        if window.tokens() >= spread {
            break;
        }
        let content = section.blocks.iter().filter(|(b, _)| !is_title(doc, *b));
        if let Some(&(block, score)) = content.max_by(|a, b| a.1.total_cmp(&b.1)) {
            if score >= config.min_block_score {
                admit(&mut window, block, score)?;
            }
        }
    }
    // Depth: sections in order, small ones whole, large ones by their
    // blocks that scored, best first.
    let mut unopened = Vec::new();
    for section in &sections {
        let content: Vec<(BlockId, f64)> = section.blocks.iter().copied().filter(|(b, _)| !is_title(doc, *b)).collect();
        let whole: usize =
            content.iter().filter_map(|(b, _)| doc.get(*b)).map(|b| segment::block_tokens(b, env.tokenizer)).sum();
        let mut chosen: Vec<(BlockId, f64)> = if whole <= config.section_tokens {
            content
        } else {
            let mut strong: Vec<(BlockId, f64)> =
                content.into_iter().filter(|(_, s)| *s >= config.min_block_score).collect();
            strong.sort_by(|a, b| b.1.total_cmp(&a.1));
            strong
        };
        // A section nothing of which scored is not worth its tokens.
        if section.best < config.min_block_score {
            chosen.clear();
        }
        let mut opened = false;
        for (block, score) in chosen {
            opened |= admit(&mut window, block, score)?;
        }
        if !opened {
            unopened.push((section.root, section.best));
        }
    }
    // Stubs of the sections left out, in what the budget keeps for them.
    window.set_limits(&env, request.budget, usize::MAX);
    for (root, score) in unopened.into_iter().filter(|_| stubs) {
        if window.add_if_fits(&env, root, Reason::StructuralContext, score, Representation::StructureOnly)?.is_some() {
            relevance.insert(root, score);
        }
    }
    let mut ids = IdMapper::new();
    let mut text = window.render(&env, request.format, &mut ids);
    let mut tokens = env.tokenizer.count(&text);
    // The window bounds the counted format; short ids and markdown are never
    // longer, but the exact count is the promise, so check it.
    while tokens > request.budget {
        let Some(weakest) = window.entries().iter().min_by(|a, b| a.relevance.total_cmp(&b.relevance)).map(|e| e.id)
        else {
            break;
        };
        window.remove(&env, weakest)?;
        text = window.render(&env, request.format, &mut ids);
        tokens = env.tokenizer.count(&text);
    }
    let blocks = window
        .entries()
        .iter()
        .map(|entry| {
            let block = doc.get(entry.id);
            let source = block.and_then(|b| b.metadata.source.as_ref());
            ContextBlock {
                id: entry.id,
                role: block.and_then(|b| b.role()).map(|r| r.as_str().to_owned()),
                file: source.map(|s| s.file.to_string()),
                lines: source.map(|s| [s.start_line, s.end_line]),
                heading_path: heading_path(doc, entry.id),
                relevance: relevance.get(&entry.id).copied().unwrap_or(entry.relevance),
                representation: entry.representation,
                tokens: entry.tokens,
            }
        })
        .collect();
    Ok(BuiltContext {
        text,
        tokens,
        budget: request.budget,
        blocks,
        hits: 0,
        tasks: 0,
        agents: 0,
        discoveries: 0,
        timings: super::Timings::default(),
    })
}
