//! A long report's headline searched on its own. An issue, a bug report
//! or a mail starts with a line that says what it is about; the lines
//! after it add examples, logs and code whose words drown the headline's
//! in one long query. So a long query of several lines is searched twice —
//! whole, and its first line alone — and each hit scores the two matches
//! together: `(whole + HEADLINE_WEIGHT × headline) / (1 + HEADLINE_WEIGHT)`.
//! A query of one line, or a short one, is searched once, as it is.

use std::collections::HashMap;

use ucm_core::BlockId;

use crate::SearchHit;

/// What a hit's match with the headline weighs beside its match with the
/// whole query.
const HEADLINE_WEIGHT: f64 = 0.25;

/// The headline of `query` — its first line that holds a term — when the
/// query is long (`long` says whether it has enough distinct terms) and
/// its other lines hold terms too; `None` otherwise.
pub(crate) fn headline(query: &str, long: bool) -> Option<&str> {
    if !long {
        return None;
    }
    let mut lines = query.lines().filter(|line| !ucp_analyzer::distinct_terms(line).is_empty());
    let first = lines.next()?;
    lines.next().is_some().then_some(first)
}

/// The hits of the whole query and of its headline, each scored by both
/// matches (0 for a list that lacks it), the best `limit` scoring at
/// least `min_similarity`, best first; ties keep the whole query's order.
pub(crate) fn fuse(
    whole: Vec<SearchHit>,
    headline: Vec<SearchHit>,
    limit: usize,
    min_similarity: f64,
) -> Vec<SearchHit> {
    let by_headline: HashMap<BlockId, f64> = headline.iter().map(|hit| (hit.id, hit.score)).collect();
    let in_whole: HashMap<BlockId, f64> = whole.iter().map(|hit| (hit.id, hit.score)).collect();
    let score = |whole: f64, headline: f64| (whole + HEADLINE_WEIGHT * headline) / (1.0 + HEADLINE_WEIGHT);
    let mut fused: Vec<SearchHit> = whole
        .iter()
        .map(|hit| SearchHit { id: hit.id, score: score(hit.score, by_headline.get(&hit.id).copied().unwrap_or(0.0)) })
        .chain(
            headline
                .iter()
                .filter(|hit| !in_whole.contains_key(&hit.id))
                .map(|hit| SearchHit { id: hit.id, score: score(0.0, hit.score) }),
        )
        .filter(|hit| hit.score >= min_similarity)
        .collect();
    fused.sort_by(|a, b| b.score.total_cmp(&a.score));
    fused.truncate(limit);
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(n: u8, score: f64) -> SearchHit {
        SearchHit { id: BlockId::from_bytes([n; 12]), score }
    }

    #[test]
    fn only_a_long_query_of_several_lines_has_a_headline() {
        let report = "Migrations use the value of an enum\n\nWhen an Enum is a default, the migration ...";
        assert_eq!(headline(report, true), Some("Migrations use the value of an enum"));
        assert_eq!(headline(report, false), None);
        assert_eq!(headline("how do I read a csv file", true), None);
        assert_eq!(headline("  \n---\nfirst words\n\nmore words", true), Some("first words"));
        assert_eq!(headline("one line\n  \n--", true), None);
    }

    #[test]
    fn hits_score_both_matches_and_the_headline_lifts_its_own() {
        let whole = vec![hit(1, 0.30), hit(2, 0.28), hit(3, 0.10)];
        let headline = vec![hit(3, 0.90), hit(4, 0.50)];
        let fused = fuse(whole, headline, 10, 0.0);
        let order: Vec<u8> = fused.iter().map(|h| h.id.as_bytes()[0]).collect();
        assert_eq!(order, vec![3, 1, 2, 4]);
        assert!((fused[0].score - (0.10 + 0.25 * 0.90) / 1.25).abs() < 1e-12);
        assert!((fused[3].score - 0.25 * 0.50 / 1.25).abs() < 1e-12);
        assert!(fused.iter().all(|h| (0.0..=1.0).contains(&h.score)));
        let cut = fuse(vec![hit(1, 0.30), hit(2, 0.28)], vec![hit(2, 0.1)], 1, 0.2);
        assert_eq!(cut.len(), 1);
        assert_eq!(fuse(vec![hit(1, 0.3)], Vec::new(), 10, 0.3).len(), 0, "0.3 / 1.25 is below 0.3");
    }
}
