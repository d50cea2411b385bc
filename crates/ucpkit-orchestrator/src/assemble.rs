//! Assembling one context window from what the sub-agents shared.
//!
//! Every block keeps the best score any agent gave it (for the blocks the
//! question's ranking scored, that score: see [`crate::rank`]). Blocks go in
//! best first while they fit, each with its short neighbours in its section
//! (a default, a type, a version note next to a paragraph is often what
//! answers) and, when it ends on a question, the block after it, which
//! answers it, however long; whatever does not fit is skipped, never cut,
//! and a cheaper block further down may still take the room left. Each
//! block is quoted in full under its section's `§` line, so a block that
//! answers reads in its place however few of its neighbours made it. In the
//! formats with ids, sections that were explored but got no room are
//! listed as stubs in a small reserve of the budget, so the agent
//! knows what else exists and can open it by id. The window bounds the
//! rendering the request asks for, so the returned text never exceeds the
//! budget.

use ucpkit_context::{BudgetFormat, ContextWindow, Env, Representation, WindowConfig};
use ucpkit_core::{BlockId, Document, IdMap, IdSet, Role};
use ucpkit_ucl::{IdMapper, Reason, RenderFormat};

use super::{heading_path, BuiltContext, ContextBlock, ContextRequest, OrchestratorConfig, Scope};
use crate::coordination::Discovery;
use ucpkit_sessions::AgentError;
use ucpkit_sessions::SessionHost;

/// Every block the agents scored with its best score and its section,
/// best first (ties in id order, so the context is deterministic).
fn scored_blocks(doc: &Document, discoveries: &[Discovery], scope: Scope) -> Vec<(BlockId, f64, BlockId)> {
    let mut best: IdMap<(f64, BlockId)> = IdMap::default();
    for discovery in discoveries {
        let section = discovery.metadata.get("section").and_then(|s| s.parse::<BlockId>().ok());
        for block in &discovery.block_ids {
            let section = section.unwrap_or_else(|| super::section_of(doc, *block));
            let slot = best.entry(*block).or_insert((discovery.score, section));
            if discovery.score > slot.0 {
                *slot = (discovery.score, section);
            }
        }
    }
    let in_scope = |b: &BlockId| scope == Scope::All || ucpkit_core::outline::in_source_file(doc, *b);
    let mut out: Vec<(BlockId, f64, BlockId)> = best
        .into_iter()
        .filter(|(b, _)| doc.contains(*b) && in_scope(b))
        .map(|(b, (score, section))| (b, score, section))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// Whether a block is a section's own title line (the window's group
/// headers already name it).
fn is_title(doc: &Document, id: BlockId) -> bool {
    doc.get(id).is_some_and(|b| b.heading_level().is_some() || matches!(b.role(), Some(Role::File | Role::Title)))
}

/// Whether a block of prose ends on a question (what follows it in its
/// section is the answer: a FAQ's entry, a turn of a conversation).
fn asks(doc: &Document, id: BlockId) -> bool {
    doc.get(id).is_some_and(|b| !b.role().is_some_and(Role::is_code) && b.plain_text().trim_end().ends_with('?'))
}

/// Builds the window for `request` from `discoveries`.
pub(super) fn assemble(
    traversal: &SessionHost,
    config: &OrchestratorConfig,
    request: &ContextRequest,
    discoveries: &[Discovery],
) -> Result<BuiltContext, AgentError> {
    let engine = traversal.engine();
    let doc = engine.document();
    let env = Env {
        doc,
        tokenizer: traversal.tokenizer().as_ref(),
        summarizer: traversal.summarizer().as_ref(),
        now_ms: (traversal.clock())(),
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
    let scored = scored_blocks(doc, discoveries, request.scope);
    // Sections in the order of their best block, for the stubs.
    let mut sections: Vec<(BlockId, f64)> = Vec::new();
    let mut listed = IdSet::default();
    let limit = window.config().max_tokens;
    let layout = crate::rank::layout(traversal, doc);
    let short = |id: BlockId| {
        doc.get(id).is_some_and(|b| b.metadata.tokens.is_some_and(|t| t as usize <= config.neighbour_tokens))
    };
    for &(block, score, section) in &scored {
        if listed.insert(section) {
            sections.push((section, score));
        }
        if score < config.min_block_score || is_title(doc, block) {
            continue;
        }
        // A block's segment holds at least its own tokens: one larger than
        // the room left is not worth pricing.
        let room = limit.saturating_sub(window.tokens());
        let fits = doc.get(block).is_some_and(|b| b.metadata.tokens.is_none_or(|t| t as usize <= room));
        if fits && admit(&mut window, block, score)? {
            // The short lines around a block (a default, a type, a version
            // note) come with it; so does the answer to a question it ends on.
            let answer = layout.next_in_section(block).filter(|_| asks(doc, block));
            for neighbour in layout.neighbours(block) {
                // A part of the document may lack the answer: `contains`
                // notes it, and the next round reads it.
                let answers = Some(neighbour) == answer && doc.contains(neighbour);
                if window.get(neighbour).is_none() && (short(neighbour) || answers) {
                    admit(&mut window, neighbour, score)?;
                }
            }
        }
    }
    let opened: IdSet =
        scored.iter().filter(|(b, _, _)| window.get(*b).is_some()).map(|(_, _, section)| *section).collect();
    let unopened = sections.into_iter().filter(|(section, _)| !opened.contains(section));
    // Stubs of the sections left out, in what the budget keeps for them.
    window.set_limits(&env, request.budget, usize::MAX);
    for (root, score) in unopened.filter(|_| stubs) {
        if window.add_if_fits(&env, root, Reason::StructuralContext, score, Representation::StructureOnly)?.is_some() {
            relevance.insert(root, score);
        }
    }
    let mut ids = IdMapper::new();
    let render = |window: &ContextWindow, ids: &mut IdMapper| {
        let parts = window.render_parts(&env, request.format, ids);
        let text: String = parts.iter().map(|p| p.text.as_str()).collect();
        (parts, text)
    };
    let (mut parts, mut text) = render(&window, &mut ids);
    let mut tokens = env.tokenizer.count(&text);
    // The window bounds the counted format; short ids and markdown are never
    // longer, but the exact count is the promise, so check it.
    while tokens > request.budget {
        let Some(weakest) = window.entries().iter().min_by(|a, b| a.relevance.total_cmp(&b.relevance)).map(|e| e.id)
        else {
            break;
        };
        window.remove(&env, weakest)?;
        (parts, text) = render(&window, &mut ids);
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
                document: None,
                role: block.and_then(|b| b.role()).map(|r| r.as_str().to_owned()),
                file: source.map(|s| s.file.to_string()),
                lines: source.map(|s| [s.start_line, s.end_line]),
                heading_path: heading_path(doc, entry.id),
                occasion: block.and_then(ucpkit_core::outline::occasion),
                symbol: block.and_then(ucpkit_core::outline::symbol).map(str::to_owned),
                relevance: relevance.get(&entry.id).copied().unwrap_or(entry.relevance),
                representation: entry.representation,
                tokens: entry.tokens,
            }
        })
        .collect();
    Ok(BuiltContext {
        text,
        parts,
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
