//! Code ranked where it stands: a block of a source file counts a little
//! for the file it is in and for the class around it, so asked about an
//! issue, the methods of the class and file that match in many places come
//! before a lone match elsewhere. Blocks outside source files keep their
//! own score. Search hits and the code scope of a context rank this way.

use std::collections::HashMap;

use ucm_core::{outline, BlockId, Document, Role};

/// Blocks after a file's best that add to its evidence.
pub const FILE_EVIDENCE: usize = 10;
/// What each of those adds, as a share of its own score.
pub const FILE_EVIDENCE_SHARE: f64 = 0.1;
/// What a code block's file adds: this share of the file's evidence.
const FILE_SHARE: f64 = 0.2;
/// What its class (the symbol around it) adds: this share of the best
/// score among the class's own lines and its members.
const CONTAINER_SHARE: f64 = 0.1;
/// The most a file's evidence can be: a best block and ten more at 1.
const FILE_EVIDENCE_MAX: f64 = 1.0 + FILE_EVIDENCE_SHARE * FILE_EVIDENCE as f64;

/// A file's evidence from its blocks' scores: the best plus
/// [`FILE_EVIDENCE_SHARE`] of each of the next [`FILE_EVIDENCE`].
pub fn file_evidence(mut scores: Vec<f64>) -> f64 {
    scores.sort_by(|a, b| b.total_cmp(a));
    let best = scores.first().copied().unwrap_or(0.0);
    best + FILE_EVIDENCE_SHARE * scores.iter().skip(1).take(FILE_EVIDENCE).sum::<f64>()
}

/// Where a code block stands: its file, and the symbol around it if any.
struct Place<'d> {
    file: &'d str,
    container: Option<BlockId>,
}

/// The score in structure of each of `scored` (block, own score 0..1):
/// for a block of a source file, `own + FILE_SHARE × its file's evidence +
/// CONTAINER_SHARE × its class's best`, scaled back to 0..1, the evidence
/// taken from `scored` alone; any other block keeps its own score. `doc`
/// needs to hold the blocks and their ancestors only.
pub fn scores_in_structure(doc: &Document, scored: &[(BlockId, f64)]) -> Vec<f64> {
    let places: Vec<Option<Place>> = scored.iter().map(|(id, _)| place(doc, *id)).collect();
    let mut file_scores: HashMap<&str, Vec<f64>> = HashMap::new();
    let mut container_best: HashMap<BlockId, f64> = HashMap::new();
    for ((id, score), place) in scored.iter().zip(&places) {
        let Some(place) = place else { continue };
        file_scores.entry(place.file).or_default().push(*score);
        for key in place.container.iter().chain(is_symbol(doc, *id).then_some(id)) {
            let best = container_best.entry(*key).or_insert(0.0);
            *best = best.max(*score);
        }
    }
    let file_evidence: HashMap<&str, f64> =
        file_scores.into_iter().map(|(file, scores)| (file, file_evidence(scores))).collect();
    let scale = 1.0 + FILE_SHARE * FILE_EVIDENCE_MAX + CONTAINER_SHARE;
    scored
        .iter()
        .zip(&places)
        .map(|((_, score), place)| match place {
            Some(place) => {
                let file = file_evidence.get(place.file).copied().unwrap_or(0.0);
                let container = place.container.and_then(|c| container_best.get(&c)).copied().unwrap_or(0.0);
                (score + FILE_SHARE * file + CONTAINER_SHARE * container) / scale
            }
            None => *score,
        })
        .collect()
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
    Some(Place { file, container })
}

#[cfg(test)]
mod tests {
    use ucm_core::{Block, Content, Metadata, SourceLocation};

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
        assert!(scores[1] > scores[0], "{scores:?}");
        assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)), "{scores:?}");
    }

    #[test]
    fn blocks_outside_source_files_keep_their_score() {
        let mut doc = Document::new("d");
        let page = add(&mut doc, BlockId::ROOT, Content::Composite, Role::File, "page.md", None);
        let a = add(&mut doc, page, Content::markdown("alpha".to_owned()), Role::Paragraph, "", Some("page.md"));
        let b = add(&mut doc, page, Content::markdown("beta".to_owned()), Role::Paragraph, "", Some("page.md"));
        assert_eq!(scores_in_structure(&doc, &[(a, 0.9), (b, 0.2)]), vec![0.9, 0.2]);
    }

    #[test]
    fn a_files_evidence_is_its_best_and_a_tenth_of_its_next_ten() {
        assert_eq!(file_evidence(Vec::new()), 0.0);
        let scores = vec![0.1, 0.5, 0.2];
        assert!((file_evidence(scores) - (0.5 + 0.1 * 0.3)).abs() < 1e-12);
        let many = vec![1.0; 20];
        assert!((file_evidence(many) - FILE_EVIDENCE_MAX).abs() < 1e-12);
    }
}
