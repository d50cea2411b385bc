//! The code localization harness end to end on a small fixture: tasks
//! over `tests/data/code/repos/shop-1.0`, indexed into a store of its own,
//! run through the engine and the reference baseline.

use std::path::Path;

use ucpkit_eval::code::{load_code_tasks, run_code_eval, CodeEvalOptions};

#[test]
fn the_harness_scores_engine_and_baseline_on_each_task() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/code");
    let tasks = load_code_tasks(&data.join("tasks.jsonl")).unwrap();
    assert_eq!(tasks.len(), 2);
    let stores = tempfile::tempdir().unwrap();
    let options = CodeEvalOptions {
        repos: data.join("repos"),
        stores: stores.path().to_owned(),
        budget: 400,
        baseline: true,
        model: None,
    };
    let mut seen = 0;
    let report = run_code_eval(&tasks, &options, &mut |snapshot, _| {
        assert_eq!(snapshot, "shop-1.0");
        seen += 1;
    })
    .unwrap();
    assert_eq!(seen, 4);
    assert_eq!(report.snapshots.len(), 1);
    assert!(report.snapshots[0].built && report.snapshots[0].files == 5);
    for outcome in report.outcomes.iter().filter(|o| o.system == "ucp") {
        assert_eq!(outcome.file_rank, Some(1), "{outcome:?}");
        assert!(outcome.func_all_at_10 && outcome.context_all, "{outcome:?}");
        assert!(outcome.context_tokens <= 400);
        // Each task's one gold function is the engine's first unit.
        assert_eq!(outcome.gold_unit_ranks, vec![Some(1)], "{outcome:?}");
    }
    // A gold rank within 10 is what Func@10 counts, for either system.
    for outcome in &report.outcomes {
        assert_eq!(outcome.gold_unit_ranks.len(), 1);
        assert_eq!(outcome.func_all_at_10, outcome.gold_unit_ranks[0].is_some_and(|r| r <= 10), "{outcome:?}");
    }
    assert_eq!(report.outcomes.iter().filter(|o| o.system == "reference-bm25").count(), 2);
    let table = report.table();
    assert!(table.contains("File@5") && table.contains("Ctx@400"), "{table}");
    // A second run finds the snapshot indexed.
    let again = run_code_eval(&tasks[..1], &options, &mut |_, _| {}).unwrap();
    assert!(!again.snapshots[0].built);
    // A snapshot that is not there is a clear error.
    let missing = CodeEvalOptions { repos: stores.path().join("none"), ..options };
    let error = run_code_eval(&tasks, &missing, &mut |_, _| {}).unwrap_err().to_string();
    assert!(error.contains("shop-1.0"), "{error}");
}
