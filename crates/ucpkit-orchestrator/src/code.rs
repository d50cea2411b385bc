//! The code scope of a context: only blocks of source files, and the code
//! graph walked from the best of them — what they call, what calls them,
//! the types they extend, the class a method is in — so a function's
//! collaborators can join it in the window even when they share no word
//! with the question.

use ucpkit_core::{outline, BlockId, Document, EdgeType, IdMap};

/// The best blocks whose neighbours in the graph are added.
const WALKED: usize = 20;
/// A neighbour's score, as a share of the block it was reached from.
const NEIGHBOUR_SHARE: f64 = 0.5;

/// `ranked` narrowed to source files, with the graph neighbours of its
/// best blocks added (each at [`NEIGHBOUR_SHARE`] of the score it was
/// reached from, unless it ranks higher on its own); best first.
pub(crate) fn code_ranking(doc: &Document, ranked: Vec<(BlockId, f64)>) -> Vec<(BlockId, f64)> {
    let kept: Vec<(BlockId, f64)> = ranked.into_iter().filter(|(id, _)| outline::in_source_file(doc, *id)).collect();
    let mut best: IdMap<f64> = kept.iter().copied().collect();
    for (id, score) in kept.iter().take(WALKED) {
        let outgoing = doc
            .edges()
            .outgoing(*id)
            .iter()
            .filter(|e| matches!(e.edge_type, EdgeType::Calls | EdgeType::Extends | EdgeType::Implements))
            .map(|e| e.target);
        let incoming =
            doc.edges().incoming(*id).iter().filter(|(_, t)| *t == EdgeType::Calls).map(|(source, _)| *source);
        let container =
            doc.parent(*id).filter(|p| doc.get(*p).and_then(|b| b.role()).is_some_and(|r| r.is_code_symbol()));
        for neighbour in outgoing.chain(incoming).chain(container) {
            if neighbour == *id || !outline::in_source_file(doc, neighbour) {
                continue;
            }
            let reached = score * NEIGHBOUR_SHARE;
            let slot = best.entry(neighbour).or_insert(reached);
            *slot = slot.max(reached);
        }
    }
    let mut out: Vec<(BlockId, f64)> = best.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}
