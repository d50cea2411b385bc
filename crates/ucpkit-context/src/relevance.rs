//! How relevant a window entry is now: its stated relevance (reason or
//! RELEVANCE), its lexical similarity to the session task, its distance from
//! the focus, and how recently it was touched.

use std::collections::HashSet;

use ucpkit_core::{BlockId, Document};

use ucpkit_analyzer::terms;

use crate::entry::Entry;

/// Weights of the four signals (renormalized over the signals present).
const STATED: f64 = 0.4;
const TASK: f64 = 0.3;
const PROXIMITY: f64 = 0.2;
const RECENCY: f64 = 0.1;

/// The distinct terms of a task.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Task {
    text: String,
    terms: HashSet<String>,
}

impl Task {
    /// A task from its description or query.
    pub fn new(text: &str) -> Self {
        Task { text: text.to_owned(), terms: terms(text).into_iter().collect() }
    }

    /// The task as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Fraction of the task's terms found in `text` (0..1).
    pub fn similarity(&self, text: &str) -> f64 {
        if self.terms.is_empty() {
            return 0.0;
        }
        let found: HashSet<String> = terms(text).into_iter().filter(|t| self.terms.contains(t)).collect();
        found.len() as f64 / self.terms.len() as f64
    }
}

/// Number of tree edges between two blocks (through their lowest common
/// ancestor); `None` when they share no ancestor.
pub fn tree_distance(doc: &Document, a: BlockId, b: BlockId) -> Option<usize> {
    let up_a: Vec<BlockId> = std::iter::once(a).chain(doc.ancestors(a)).collect();
    for (steps_b, node) in std::iter::once(b).chain(doc.ancestors(b)).enumerate() {
        if let Some(steps_a) = up_a.iter().position(|x| *x == node) {
            return Some(steps_a + steps_b);
        }
    }
    None
}

/// The signals behind an entry's current relevance.
pub struct Signals {
    /// Milliseconds since the entry was last touched.
    pub age_ms: i64,
    /// Half-life of recency, in milliseconds.
    pub half_life_ms: i64,
    /// Tree distance to the focus, when there is a focus.
    pub focus_distance: Option<usize>,
}

/// Current relevance of an entry (0..1).
pub fn score(entry: &Entry, signals: &Signals) -> f64 {
    let mut total = STATED * entry.relevance;
    let mut weight = STATED;
    if let Some(task) = entry.task_score {
        total += TASK * task;
        weight += TASK;
    }
    if let Some(distance) = signals.focus_distance {
        total += PROXIMITY / (1.0 + distance as f64);
        weight += PROXIMITY;
    }
    let age = signals.age_ms.max(0) as f64;
    total += RECENCY * 0.5f64.powf(age / signals.half_life_ms.max(1) as f64);
    weight += RECENCY;
    (total / weight).clamp(0.0, 1.0)
}

/// Jaccard similarity of two term sets.
pub fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    let shared = a.intersection(b).count();
    shared as f64 / (a.len() + b.len() - shared) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_similarity_counts_distinct_task_terms() {
        // Analyzed as search analyzes: `readFile` is read + file, `reads` is read.
        let task = Task::new("read a file with fs");
        assert!((task.similarity("fs.readFile reads a whole file") - 1.0).abs() < 1e-9);
        assert!((task.similarity("the file") - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(task.similarity("nothing related"), 0.0);
        assert_eq!(Task::new("the of").similarity("the of"), 0.0);
    }

    #[test]
    fn jaccard_of_sets() {
        let a: HashSet<String> = ["x", "y"].map(String::from).into();
        let b: HashSet<String> = ["y", "z"].map(String::from).into();
        assert!((jaccard(&a, &b) - 1.0 / 3.0).abs() < 1e-9);
    }
}
