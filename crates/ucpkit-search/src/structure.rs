//! Code ranked where it stands: a block of a source file gains a little
//! from the other matches in its file and in its class, so asked about an
//! issue, the methods of the class and file that match in many places come
//! before a lone match elsewhere, which keeps its own score. Blocks outside
//! source files keep their own score. Search hits (`ucp search`, MCP
//! `search`, UCL `SEARCH`) rank this way.

use std::collections::HashMap;

use ucpkit_core::{outline, BlockId, Document, Role};

use crate::SearchHit;

/// The best blocks (by their own score) the evidence is taken from; a
/// search that finds code draws at least this many hits to rank among.
pub const EVIDENCE_POOL: usize = 100;
/// Blocks after a file's best that add to its evidence.
pub const FILE_EVIDENCE: usize = 10;
/// What each of those adds, as a share of its own score.
pub const FILE_EVIDENCE_SHARE: f64 = 0.1;
/// What a code block's file adds: this share of the evidence of the
/// file's other blocks.
const FILE_SHARE: f64 = 0.2;
/// What its class adds: this share of the best score among the other
/// blocks inside the class (for a class, among the blocks inside it).
const CONTAINER_SHARE: f64 = 0.1;

/// A file's evidence from its blocks' scores: the best plus
/// [`FILE_EVIDENCE_SHARE`] of each of the next [`FILE_EVIDENCE`].
pub fn file_evidence(mut scores: Vec<f64>) -> f64 {
    scores.sort_by(|a, b| b.total_cmp(a));
    let best = scores.first().copied().unwrap_or(0.0);
    best + FILE_EVIDENCE_SHARE * scores.iter().skip(1).take(FILE_EVIDENCE).sum::<f64>()
}

/// Whether hits drawn `limit` at a time should be drawn again,
/// [`EVIDENCE_POOL`] of them, to be ranked where they stand: when fewer
/// were drawn and one lies in a source file.
pub fn wants_pool(doc: &Document, ids: impl IntoIterator<Item = BlockId>, limit: usize) -> bool {
    limit < EVIDENCE_POOL && ids.into_iter().any(|id| outline::in_source_file(doc, id))
}

/// Where a code block stands: its file, the symbol around it if any, and
/// itself if it is a symbol (its members' evidence is its own).
struct Place<'d> {
    file: &'d str,
    container: Option<BlockId>,
    symbol: Option<BlockId>,
}

/// Scores with the entry they came from, best first, at most `N`.
#[derive(Default)]
struct Best<const N: usize>(Vec<(f64, usize)>);

impl<const N: usize> Best<N> {
    fn push(&mut self, score: f64, entry: usize) {
        let at = self.0.partition_point(|(s, _)| *s >= score);
        if at < N {
            self.0.insert(at, (score, entry));
            self.0.truncate(N);
        }
    }

    /// The scores of entries other than `entry`, best first.
    fn others(&self, entry: usize) -> impl Iterator<Item = f64> + '_ {
        self.0.iter().filter(move |(_, e)| *e != entry).map(|(s, _)| *s)
    }
}

/// The score in structure of each of `scored` (block, own score, best
/// first): for a block of a source file, `own + FILE_SHARE × the evidence
/// of its file's other blocks + CONTAINER_SHARE × its class's best
/// other`, the evidence taken from the first [`EVIDENCE_POOL`] of
/// `scored`; a lone match keeps its own score, and any block outside
/// source files keeps its own. `doc` needs to hold the blocks and their
/// ancestors only.
pub fn scores_in_structure(doc: &Document, scored: &[(BlockId, f64)]) -> Vec<f64> {
    let places: Vec<Option<Place>> = scored.iter().map(|(id, _)| place(doc, *id)).collect();
    let mut files: HashMap<&str, Best<{ FILE_EVIDENCE + 2 }>> = HashMap::new();
    let mut containers: HashMap<BlockId, Best<2>> = HashMap::new();
    for (entry, ((_, score), place)) in scored.iter().zip(&places).enumerate().take(EVIDENCE_POOL) {
        let Some(place) = place else { continue };
        files.entry(place.file).or_default().push(*score, entry);
        if let Some(container) = place.container {
            containers.entry(container).or_default().push(*score, entry);
        }
    }
    scored
        .iter()
        .zip(&places)
        .enumerate()
        .map(|(entry, ((_, score), place))| {
            let Some(place) = place else { return *score };
            let file = files.get(place.file).map_or(0.0, |best| file_evidence(best.others(entry).collect()));
            let class = [place.container, place.symbol]
                .into_iter()
                .flatten()
                .filter_map(|key| containers.get(&key)?.others(entry).next())
                .fold(0.0, f64::max);
            score + FILE_SHARE * file + CONTAINER_SHARE * class
        })
        .collect()
}

/// A hit ranked where it stands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankedHit {
    /// The block.
    pub id: BlockId,
    /// Its score in structure (0..1), what the hits are ordered by.
    pub score: f64,
    /// Its own match, as the index scored it.
    pub match_score: f64,
}

/// `hits` (best first, as a search answers them, scores 0..1) ranked
/// where they stand, the best `limit`; ties keep the search's order. A
/// hit's gain from its structure ([`scores_in_structure`], at most a
/// half) closes that share of the gap between its own score and 1, so
/// scores stay in 0..1 and a lone match keeps its own.
pub fn rank_hits(doc: &Document, hits: &[SearchHit], limit: usize) -> Vec<RankedHit> {
    let scored: Vec<(BlockId, f64)> = hits.iter().map(|hit| (hit.id, hit.score.clamp(0.0, 1.0))).collect();
    let mut ranked: Vec<RankedHit> = scored
        .iter()
        .zip(scores_in_structure(doc, &scored))
        .map(|(&(id, own), in_structure)| {
            let gain = (in_structure - own).clamp(0.0, 1.0);
            RankedHit { id, score: own + (1.0 - own) * gain, match_score: own }
        })
        .collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score));
    ranked.truncate(limit);
    ranked
}

/// The hits `search(limit)` draws, ranked where they stand ([`rank_hits`]),
/// the best `limit`: drawn again, [`EVIDENCE_POOL`] of them, when the first
/// draw found code ([`wants_pool`]).
pub fn search_ranked<E>(
    doc: &Document,
    limit: usize,
    mut search: impl FnMut(usize) -> Result<Vec<SearchHit>, E>,
) -> Result<Vec<RankedHit>, E> {
    let mut hits = search(limit)?;
    if wants_pool(doc, hits.iter().map(|hit| hit.id), limit) {
        hits = search(EVIDENCE_POOL)?;
    }
    Ok(rank_hits(doc, &hits, limit))
}

fn is_symbol(doc: &Document, id: BlockId) -> bool {
    doc.get(id).and_then(|b| b.role()).is_some_and(Role::is_code_symbol)
}

/// The file and container of a block of a source file; `None` for any
/// other block.
fn place(doc: &Document, id: BlockId) -> Option<Place<'_>> {
    if !outline::in_source_file(doc, id) {
        return None;
    }
    let file = doc.get(id)?.metadata.source.as_ref()?.file.as_ref();
    let container = doc.parent(id).filter(|p| is_symbol(doc, *p));
    Some(Place { file, container, symbol: is_symbol(doc, id).then_some(id) })
}

#[cfg(test)]
mod tests {
    use ucpkit_core::{Block, Content, Metadata, SourceLocation};

    use super::*;

    fn add(
        doc: &mut Document,
        parent: BlockId,
        content: Content,
        role: Role,
        label: &str,
        file: Option<&str>,
    ) -> BlockId {
        let id = Block::derive_id(&content, Some(&role), label, doc.len() as u32);
        let mut metadata = Metadata::with_role(role);
        metadata.label = Some(label.into());
        metadata.source = file.map(|f| SourceLocation { file: f.into(), start_line: 1, end_line: 1 });
        doc.append_child(parent, Block::new(id, content, metadata)).unwrap();
        id
    }

    fn source_file(doc: &mut Document, file: &str) -> BlockId {
        let id = add(doc, BlockId::ROOT, Content::Composite, Role::File, file, None);
        doc.get_mut(id).unwrap().metadata.custom.insert("language".into(), "python".into());
        id
    }

    fn symbol(doc: &mut Document, parent: BlockId, file: &str, role: Role, name: &str) -> BlockId {
        let content = Content::code(Some("python".into()), format!("def {name}(): pass"));
        add(doc, parent, content, role, name, Some(file))
    }

    #[test]
    fn a_method_of_a_class_that_matches_in_many_places_passes_a_lone_match() {
        let mut doc = Document::new("d");
        let busy = source_file(&mut doc, "busy.py");
        let class = symbol(&mut doc, busy, "busy.py", Role::Class, "Query");
        let methods: Vec<BlockId> =
            (0..4).map(|n| symbol(&mut doc, class, "busy.py", Role::Method, &format!("m{n}"))).collect();
        let lone_file = source_file(&mut doc, "lone.py");
        let lone = symbol(&mut doc, lone_file, "lone.py", Role::Function, "lone");
        let scored: Vec<(BlockId, f64)> = [lone, methods[0], methods[1], methods[2], methods[3]]
            .into_iter()
            .zip([0.5, 0.45, 0.4, 0.3, 0.3])
            .collect();
        let scores = scores_in_structure(&doc, &scored);
        assert_eq!(scores[0], 0.5, "a lone match keeps its own score");
        assert!(scores[1] > scores[0], "{scores:?}");
        // Its file's other blocks (0.4 best, 0.3 and 0.3 more) and its
        // class's best other member (0.4).
        let expected = 0.45 + 0.2 * (0.4 + 0.1 * 0.6) + 0.1 * 0.4;
        assert!((scores[1] - expected).abs() < 1e-12, "{scores:?}");
        assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)), "{scores:?}");
    }

    #[test]
    fn blocks_outside_source_files_keep_their_score() {
        let mut doc = Document::new("d");
        let page = add(&mut doc, BlockId::ROOT, Content::Composite, Role::File, "page.md", None);
        let a = add(&mut doc, page, Content::markdown("alpha".to_owned()), Role::Paragraph, "", Some("page.md"));
        let b = add(&mut doc, page, Content::markdown("beta".to_owned()), Role::Paragraph, "", Some("page.md"));
        assert_eq!(scores_in_structure(&doc, &[(a, 0.9), (b, 0.2)]), vec![0.9, 0.2]);
        assert!(!wants_pool(&doc, [a, b], 10), "prose is not drawn again");
    }

    #[test]
    fn evidence_comes_from_the_pool_alone_and_a_class_gains_from_its_members() {
        let mut doc = Document::new("d");
        let file = source_file(&mut doc, "a.py");
        let class = symbol(&mut doc, file, "a.py", Role::Class, "Model");
        let method = symbol(&mut doc, class, "a.py", Role::Method, "save");
        let fillers: Vec<BlockId> =
            (0..EVIDENCE_POOL).map(|n| symbol(&mut doc, file, "b.py", Role::Function, &format!("f{n}"))).collect();
        assert!(wants_pool(&doc, [method], 10) && !wants_pool(&doc, [method], EVIDENCE_POOL));
        // The class and its method past the pool: no evidence from each other.
        let mut scored: Vec<(BlockId, f64)> = fillers.iter().map(|id| (*id, 0.9)).collect();
        scored.extend([(class, 0.2), (method, 0.1)]);
        let scores = scores_in_structure(&doc, &scored);
        assert_eq!(&scores[EVIDENCE_POOL..], &[0.2, 0.1]);
        // Inside the pool: the class gains a tenth of its method's, and more
        // as the other block of its file.
        let scores = scores_in_structure(&doc, &[(class, 0.2), (method, 0.1)]);
        assert!((scores[0] - (0.2 + 0.2 * 0.1 + 0.1 * 0.1)).abs() < 1e-12, "{scores:?}");
        let hits = [SearchHit { id: method, score: 1.0 }, SearchHit { id: class, score: 0.9 }];
        let ranked = rank_hits(&doc, &hits, 10);
        assert!(ranked.iter().all(|h| (h.match_score..=1.0).contains(&h.score)), "{ranked:?}");
        assert_eq!(rank_hits(&doc, &hits, 1).len(), 1);
    }

    #[test]
    fn a_files_evidence_is_its_best_and_a_tenth_of_its_next_ten() {
        assert_eq!(file_evidence(Vec::new()), 0.0);
        let scores = vec![0.1, 0.5, 0.2];
        assert!((file_evidence(scores) - (0.5 + 0.1 * 0.3)).abs() < 1e-12);
        let many = vec![1.0; 20];
        assert!((file_evidence(many) - 2.0).abs() < 1e-12);
    }
}
