//! Reciprocal rank fusion: merges ranked lists by rank alone, so BM25 and
//! cosine scores, which live on different scales, need no calibration.

use ucpkit_core::IdMap;

use crate::SearchHit;

/// Fuses ranked `lists`, each with a weight: a hit at (1-based) rank `r`
/// of a list of weight `w` earns `w / (k + r)`, summed over lists. Scores
/// are normalized by the most a hit can earn (first everywhere), so they
/// stay within 0..1. Ties keep the order of first appearance.
pub fn fuse(lists: &[(&[SearchHit], f64)], k: f64) -> Vec<SearchHit> {
    let mut scores: IdMap<(f64, usize)> = IdMap::default();
    let mut seen = 0;
    for (list, weight) in lists {
        for (rank, hit) in list.iter().enumerate() {
            let entry = scores.entry(hit.id).or_insert_with(|| {
                seen += 1;
                (0.0, seen)
            });
            entry.0 += weight / (k + rank as f64 + 1.0);
        }
    }
    let best = lists.iter().map(|(_, w)| w).sum::<f64>() / (k + 1.0);
    let mut fused: Vec<(f64, usize, SearchHit)> =
        scores.into_iter().map(|(id, (score, first))| (score, first, SearchHit { id, score: score / best })).collect();
    fused.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    fused.into_iter().map(|(_, _, hit)| hit).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_core::BlockId;

    fn hits(ids: &[u8]) -> Vec<SearchHit> {
        ids.iter().map(|&n| SearchHit { id: BlockId::from_bytes([n; 12]), score: 0.5 }).collect()
    }

    #[test]
    fn agreement_wins_and_scores_stay_in_range() {
        let a = hits(&[1, 2, 3]);
        let b = hits(&[3, 1, 4]);
        let fused = fuse(&[(&a, 1.0), (&b, 1.0)], 60.0);
        let order: Vec<u8> = fused.iter().map(|h| h.id.as_bytes()[0]).collect();
        assert_eq!(order, [1, 3, 2, 4]);
        assert!(fused.iter().all(|h| h.score > 0.0 && h.score <= 1.0));
        let alone = fuse(&[(&a, 1.0)], 60.0);
        assert_eq!(alone[0].score, 1.0);
    }

    #[test]
    fn empty_lists_fuse_to_nothing() {
        assert!(fuse(&[(&[], 1.0), (&[], 0.5)], 60.0).is_empty());
    }
}
