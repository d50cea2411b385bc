//! A long report's headline searched on its own. An issue, a bug report
//! or a mail starts with a line that says what it is about; the lines
//! after it add examples, logs and code whose words drown the headline's
//! in one long query. So a long query of several lines is searched (and a
//! context's question ranked) twice — whole, and its first line alone —
//! and each block scores the two matches together: `(whole +
//! HEADLINE_WEIGHT × headline) / (1 + HEADLINE_WEIGHT)`. A query of one
//! line, or a short one, is searched once, as it is.

use std::collections::HashMap;

use ucpkit_core::BlockId;

use crate::scoring::LONG_QUERY_TERMS;
use crate::{SearchError, SearchHit, SearchOptions};

/// What a hit's match with the headline weighs beside its match with the
/// whole query.
pub const HEADLINE_WEIGHT: f64 = 0.25;

/// Hits drawn from each of the two searches before they are fused (the
/// request's limit when it asks for more), so a hit just past the limit
/// of one still counts that match.
pub const FUSION_DEPTH: usize = 100;

/// The headline of `query` — its first line that holds a term, unless
/// that line opens a code fence — when the query is long (as many
/// distinct terms as a report has, see `LONG_QUERY_TERMS`), its other
/// lines hold terms too, and the headline holds at least two terms and
/// fewer than a long query; `None` otherwise.
pub fn headline(query: &str) -> Option<&str> {
    if ucpkit_analyzer::distinct_terms(query).len() < LONG_QUERY_TERMS {
        return None;
    }
    let mut lines = query.lines().filter(|line| !ucpkit_analyzer::distinct_terms(line).is_empty());
    let first = lines.next()?;
    let trimmed = first.trim_start();
    if trimmed.starts_with("```") || trimmed.starts_with("~~~") || lines.next().is_none() {
        return None;
    }
    let terms = ucpkit_analyzer::distinct_terms(first).len();
    (2..LONG_QUERY_TERMS).contains(&terms).then_some(first)
}

/// Blocks scored by the whole query and by its headline, each scored by
/// both (0 for a list that lacks it): `(whole + HEADLINE_WEIGHT ×
/// headline) / (1 + HEADLINE_WEIGHT)`, best first; ties keep the whole
/// query's order, then the headline's.
pub fn fuse_scores(whole: &[(BlockId, f64)], headline: &[(BlockId, f64)]) -> Vec<(BlockId, f64)> {
    let by_headline: HashMap<BlockId, f64> = headline.iter().copied().collect();
    let in_whole: HashMap<BlockId, f64> = whole.iter().copied().collect();
    let score = |whole: f64, headline: f64| (whole + HEADLINE_WEIGHT * headline) / (1.0 + HEADLINE_WEIGHT);
    let mut fused: Vec<(BlockId, f64)> = whole
        .iter()
        .map(|&(id, s)| (id, score(s, by_headline.get(&id).copied().unwrap_or(0.0))))
        .chain(headline.iter().filter(|(id, _)| !in_whole.contains_key(id)).map(|&(id, s)| (id, score(0.0, s))))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1));
    fused
}

/// `search`'s hits for `query`: as one query, or for a long report of
/// several lines ([`headline`]) whole and by its headline, fused.
pub(crate) fn search_with(
    query: &str,
    options: &SearchOptions,
    search: impl Fn(&str, &SearchOptions) -> Result<Vec<SearchHit>, SearchError>,
) -> Result<Vec<SearchHit>, SearchError> {
    let Some(headline) = headline(query) else { return search(query, options) };
    let deep = SearchOptions { limit: options.limit.max(FUSION_DEPTH), min_similarity: 0.0, ..options.clone() };
    let whole = search(query, &deep)?;
    let headline = search(headline, &deep)?;
    Ok(fuse(whole, headline, options.limit, options.min_similarity))
}

/// [`fuse_scores`] of two searches' hits: the best `limit` scoring at
/// least `min_similarity`.
pub(crate) fn fuse(
    whole: Vec<SearchHit>,
    headline: Vec<SearchHit>,
    limit: usize,
    min_similarity: f64,
) -> Vec<SearchHit> {
    let pairs = |hits: Vec<SearchHit>| hits.into_iter().map(|hit| (hit.id, hit.score)).collect::<Vec<_>>();
    fuse_scores(&pairs(whole), &pairs(headline))
        .into_iter()
        .filter(|(_, score)| *score >= min_similarity)
        .take(limit)
        .map(|(id, score)| SearchHit { id, score })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(n: u8, score: f64) -> SearchHit {
        SearchHit { id: BlockId::from_bytes([n; 12]), score }
    }

    #[test]
    fn only_a_long_query_of_several_lines_has_a_headline() {
        let words: Vec<String> = (0..LONG_QUERY_TERMS).map(|i| format!("word{i}")).collect();
        let body = words.join(" ");
        let report = format!("Migrations use the value of an enum\n\n{body}");
        assert_eq!(headline(&report), Some("Migrations use the value of an enum"));
        assert_eq!(headline(&report.replace('\n', " ")), None, "one line");
        assert_eq!(headline("how do I read a csv file\nwith a custom delimiter"), None, "short");
        assert_eq!(headline(&format!("  \n---\nfirst words\n\n{body}")), Some("first words"));
        assert_eq!(headline(&format!("{body}\n  \n--")), None);
        assert_eq!(headline(&format!("```python\n{body}")), None, "a fence is no headline");
        assert_eq!(headline(&format!("Hi,\n{body}")), None, "one word is no headline");
        assert_eq!(headline(&format!("{body}\n{body}")), None, "a headline as long as a report is none");
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
        assert_eq!(cut.iter().map(|h| h.id.as_bytes()[0]).collect::<Vec<_>>(), vec![2], "0.244 beats 0.24");
        assert_eq!(fuse(vec![hit(1, 0.3)], Vec::new(), 10, 0.3).len(), 0, "0.3 / 1.25 is below 0.3");
    }
}
