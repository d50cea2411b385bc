//! Running systems over questions and budgets, and the report.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use serde::Serialize;
use ucpkit_orchestrator::{ContextRequest, Orchestrator, Scope};
use ucpkit_sessions::SessionHost;
use ucpkit_ucl::RenderFormat;

use crate::metric::answered;
use crate::questions::Question;
use crate::EvalError;

/// What a system returned for one question and budget.
#[derive(Debug, Clone, PartialEq)]
pub struct Retrieved {
    /// The context.
    pub text: String,
    /// Its tokens.
    pub tokens: usize,
    /// The corpus files it drew from.
    pub files: Vec<String>,
    /// How long it took, in milliseconds.
    pub ms: f64,
}

/// Something that builds a context for a question within a budget.
pub trait ContextSystem {
    /// Its name in the report.
    fn name(&self) -> String;

    /// The context for `question` in at most `budget` tokens.
    fn build(&self, question: &str, budget: usize) -> Result<Retrieved, EvalError>;
}

/// The engine: the orchestrator's sub-agents over a traversal.
pub struct Orchestrated<'a> {
    /// The document's engine, with its search provider.
    pub traversal: &'a SessionHost,
    /// The orchestrator and its policy.
    pub orchestrator: &'a Orchestrator,
    /// How contexts are rendered (and counted).
    pub format: RenderFormat,
}

impl ContextSystem for Orchestrated<'_> {
    fn name(&self) -> String {
        "ucp context".to_owned()
    }

    fn build(&self, question: &str, budget: usize) -> Result<Retrieved, EvalError> {
        let started = Instant::now();
        let request = ContextRequest { question: question.to_owned(), budget, format: self.format, scope: Scope::All };
        let built = self.orchestrator.context(self.traversal, &request)?;
        let mut files: Vec<String> = built.blocks.iter().filter_map(|b| b.file.clone()).collect();
        files.sort_unstable();
        files.dedup();
        Ok(Retrieved { text: built.text, tokens: built.tokens, files, ms: started.elapsed().as_secs_f64() * 1000.0 })
    }
}

/// The engine over several stored sources at once (documents, code and
/// memories: [`ucpkit_workspace::Sources`]), one ranking and one budget.
pub struct Across<'a> {
    /// The store's library.
    pub library: &'a ucpkit_workspace::Library,
    /// What the contexts are built from.
    pub sources: ucpkit_workspace::Sources,
    /// The orchestrator's options (question and budget are each run's).
    pub options: ucpkit_workspace::ContextOptions,
}

impl ContextSystem for Across<'_> {
    fn name(&self) -> String {
        "ucp context (sources)".to_owned()
    }

    fn build(&self, question: &str, budget: usize) -> Result<Retrieved, EvalError> {
        let started = Instant::now();
        let options =
            ucpkit_workspace::ContextOptions { question: question.to_owned(), budget, ..self.options.clone() };
        let built = self.library.context_across(&self.sources, &options)?;
        let mut files: Vec<String> = built.blocks.iter().filter_map(|b| b.file.clone()).collect();
        files.sort_unstable();
        files.dedup();
        Ok(Retrieved { text: built.text, tokens: built.tokens, files, ms: started.elapsed().as_secs_f64() * 1000.0 })
    }
}

/// One question run by one system at one budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// The question's id.
    pub question: String,
    /// Its kind.
    pub kind: String,
    /// The system.
    pub system: String,
    /// The budget.
    pub budget: usize,
    /// Every answer was in the context.
    pub all: bool,
    /// Some answer was.
    pub any: bool,
    /// The context drew from a gold file.
    pub gold_file: bool,
    /// Tokens used.
    pub tokens: usize,
    /// Milliseconds taken.
    pub ms: f64,
}

/// ALL recall of the questions of one kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KindRecall {
    /// Questions of the kind.
    pub questions: usize,
    /// Share answered in full.
    pub all: f64,
}

/// A system's figures at one budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The system.
    pub system: String,
    /// The budget.
    pub budget: usize,
    /// Share of questions with every answer in the context.
    pub all: f64,
    /// Share with at least one.
    pub any: f64,
    /// ALL recall by question kind.
    pub kinds: BTreeMap<String, KindRecall>,
    /// Share of questions whose context drew from a gold file.
    pub gold_file: f64,
    /// Mean tokens used.
    pub mean_tokens: f64,
    /// Most tokens used (never over the budget).
    pub max_tokens: usize,
    /// Median latency per question, in milliseconds.
    pub p50_ms: f64,
    /// 95th percentile latency, in milliseconds.
    pub p95_ms: f64,
}

/// The evaluation of some systems on some questions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The tokenizer every budget was counted with.
    pub tokenizer: String,
    /// Questions run.
    pub questions: usize,
    /// Budgets run.
    pub budgets: Vec<usize>,
    /// Figures per system and budget.
    pub rows: Vec<Row>,
    /// Every question's result.
    pub outcomes: Vec<Outcome>,
}

/// Nearest-rank percentile of `values` (0 when empty).
fn percentile(values: &mut [f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * values.len() as f64).ceil() as usize;
    values[rank.clamp(1, values.len()) - 1]
}

/// Runs every system on every question at every budget. `progress` hears
/// of each finished question run. A system going over a budget is an error:
/// the comparison would be meaningless.
pub fn evaluate(
    systems: &[&dyn ContextSystem],
    questions: &[Question],
    budgets: &[usize],
    tokenizer: &str,
    progress: &mut dyn FnMut(&Outcome),
) -> Result<Report, EvalError> {
    let mut outcomes = Vec::new();
    for system in systems {
        let name = system.name();
        for &budget in budgets {
            for question in questions {
                let got = system.build(&question.question, budget)?;
                if got.tokens > budget {
                    return Err(EvalError::OverBudget {
                        system: name,
                        question: question.id.clone(),
                        budget,
                        tokens: got.tokens,
                    });
                }
                let found = answered(&got.text, &question.answers);
                let outcome = Outcome {
                    question: question.id.clone(),
                    kind: question.kind.clone(),
                    system: name.clone(),
                    budget,
                    all: found.all,
                    any: found.any,
                    gold_file: question.gold.iter().any(|g| got.files.contains(&g.file)),
                    tokens: got.tokens,
                    ms: got.ms,
                };
                progress(&outcome);
                outcomes.push(outcome);
            }
        }
    }
    let mut rows = Vec::new();
    for system in systems {
        let name = system.name();
        for &budget in budgets {
            let runs: Vec<&Outcome> = outcomes.iter().filter(|o| o.system == name && o.budget == budget).collect();
            rows.push(row(&name, budget, &runs));
        }
    }
    Ok(Report {
        tokenizer: tokenizer.to_owned(),
        questions: questions.len(),
        budgets: budgets.to_vec(),
        rows,
        outcomes,
    })
}

fn row(system: &str, budget: usize, runs: &[&Outcome]) -> Row {
    let n = runs.len().max(1) as f64;
    let share = |f: &dyn Fn(&Outcome) -> bool| runs.iter().filter(|o| f(o)).count() as f64 / n;
    let mut kinds: BTreeMap<String, KindRecall> = BTreeMap::new();
    for run in runs {
        let kind = kinds.entry(run.kind.clone()).or_default();
        kind.questions += 1;
        kind.all += f64::from(u8::from(run.all));
    }
    for kind in kinds.values_mut() {
        kind.all /= kind.questions as f64;
    }
    let mut ms: Vec<f64> = runs.iter().map(|o| o.ms).collect();
    Row {
        system: system.to_owned(),
        budget,
        all: share(&|o| o.all),
        any: share(&|o| o.any),
        kinds,
        gold_file: share(&|o| o.gold_file),
        mean_tokens: runs.iter().map(|o| o.tokens as f64).sum::<f64>() / n,
        max_tokens: runs.iter().map(|o| o.tokens).max().unwrap_or(0),
        p50_ms: percentile(&mut ms, 50.0),
        p95_ms: percentile(&mut ms, 95.0),
    }
}

impl Report {
    /// The figures as one table, systems side by side per budget, with the
    /// first system's ALL recall relative to each other system's.
    pub fn table(&self) -> String {
        let kinds: Vec<String> = {
            let mut kinds: Vec<String> = self.rows.iter().flat_map(|r| r.kinds.keys().cloned()).collect();
            kinds.sort_unstable();
            kinds.dedup();
            kinds
        };
        let percent = |x: f64| format!("{:.1}%", x * 100.0);
        let mut header = vec!["budget".to_owned(), "system".to_owned(), "ALL".to_owned(), "ANY".to_owned()];
        header.extend(kinds.iter().cloned());
        header.extend(["gold file", "tokens", "p50 ms", "p95 ms"].map(str::to_owned));
        let mut lines = vec![header];
        for budget in &self.budgets {
            let rows: Vec<&Row> = self.rows.iter().filter(|r| r.budget == *budget).collect();
            for row in &rows {
                let mut line = vec![budget.to_string(), row.system.clone(), percent(row.all), percent(row.any)];
                line.extend(kinds.iter().map(|k| row.kinds.get(k).map_or("-".to_owned(), |r| percent(r.all))));
                line.extend([
                    percent(row.gold_file),
                    format!("{:.0}", row.mean_tokens),
                    format!("{:.1}", row.p50_ms),
                    format!("{:.1}", row.p95_ms),
                ]);
                lines.push(line);
            }
        }
        let widths: Vec<usize> =
            (0..lines[0].len()).map(|c| lines.iter().map(|l| l[c].chars().count()).max().unwrap_or(0)).collect();
        let mut out = String::new();
        for (i, line) in lines.iter().enumerate() {
            let cells: Vec<String> = line
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(c, (cell, w))| if c == 1 { format!("{cell:<w$}") } else { format!("{cell:>w$}") })
                .collect();
            let _ = writeln!(out, "{}", cells.join("  ").trim_end());
            if i == 0 {
                let _ = writeln!(out, "{}", widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  "));
            }
        }
        let first = self.rows.first().map(|r| r.system.clone()).unwrap_or_default();
        for budget in &self.budgets {
            let ours = self.rows.iter().find(|r| r.budget == *budget && r.system == first);
            for other in self.rows.iter().filter(|r| r.budget == *budget && r.system != first) {
                if let Some(ours) = ours.filter(|_| other.all > 0.0) {
                    let _ = writeln!(
                        out,
                        "at {budget} tokens, {first} ALL = {:.2}x {}",
                        ours.all / other.all,
                        other.system
                    );
                }
            }
        }
        let _ = writeln!(out, "{} questions; tokens counted with {}", self.questions, self.tokenizer);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo;

    impl ContextSystem for Echo {
        fn name(&self) -> String {
            "echo".into()
        }

        fn build(&self, question: &str, budget: usize) -> Result<Retrieved, EvalError> {
            let text: String = question.chars().take(budget).collect();
            Ok(Retrieved { tokens: text.chars().count(), text, files: vec!["a.md".into()], ms: budget as f64 })
        }
    }

    fn question(id: &str, text: &str, answers: &[&str], kind: &str) -> Question {
        Question {
            id: id.into(),
            question: text.into(),
            answers: answers.iter().map(|a| (*a).to_owned()).collect(),
            gold: vec![crate::questions::Gold { file: "a.md".into(), heading: String::new() }],
            kind: kind.into(),
        }
    }

    #[test]
    fn recall_latency_and_kinds_are_aggregated() {
        let questions = [
            question("1", "alpha beta", &["alpha", "beta"], "fact"),
            question("2", "gamma delta", &["gamma", "zzz"], "multi"),
        ];
        let mut seen = 0;
        let report = evaluate(&[&Echo], &questions, &[5, 100], "chars", &mut |_| seen += 1).unwrap();
        assert_eq!(seen, 4);
        let at = |budget| report.rows.iter().find(|r| r.budget == budget).unwrap();
        // At 5 characters: "alpha" / "gamma": no question whole, both partly.
        assert_eq!((at(5).all, at(5).any), (0.0, 1.0));
        assert_eq!((at(100).all, at(100).any), (0.5, 1.0));
        assert_eq!(at(100).kinds["fact"].all, 1.0);
        assert_eq!(at(100).kinds["multi"].all, 0.0);
        assert_eq!(at(5).p50_ms, 5.0);
        assert_eq!(at(100).gold_file, 1.0);
        let table = report.table();
        assert!(table.contains("50.0%") && table.contains("echo"), "{table}");
    }

    #[test]
    fn going_over_the_budget_is_an_error() {
        struct Greedy;
        impl ContextSystem for Greedy {
            fn name(&self) -> String {
                "greedy".into()
            }
            fn build(&self, _: &str, budget: usize) -> Result<Retrieved, EvalError> {
                Ok(Retrieved { text: String::new(), tokens: budget + 1, files: Vec::new(), ms: 0.0 })
            }
        }
        let questions = [question("1", "q", &["a"], "fact")];
        let failed = evaluate(&[&Greedy], &questions, &[10], "chars", &mut |_| {});
        assert!(matches!(failed, Err(EvalError::OverBudget { tokens: 11, .. })));
    }

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let mut values: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&mut values, 50.0), 10.0);
        assert_eq!(percentile(&mut values, 95.0), 19.0);
        assert_eq!(percentile(&mut [], 50.0), 0.0);
    }
}
