//! Data-driven scenarios: rules and an event trace in
//! (`tests/scenarios/*.toml`), the expected decision and reason of each
//! step out. Steps: `propose` (one call's events: deny, ask, allow, or
//! none when no rule spoke; an ask is approved when `approve = true`),
//! `request` (`finish` and the like: selected, or deadlock), `happen`
//! (what the environment reports: checks results), `add_rules`.

use serde::Deserialize;
use ucpkit_guard::{Decision, Event, Guard, Rule, RuleSpec};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    description: String,
    #[serde(default)]
    rules: Vec<RuleSpec>,
    steps: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    #[serde(default)]
    propose: Vec<Event>,
    #[serde(default)]
    request: Option<Event>,
    #[serde(default)]
    happen: Vec<Event>,
    #[serde(default)]
    add_rules: Vec<RuleSpec>,
    #[serde(default)]
    approve: bool,
    #[serde(default)]
    expect: Option<String>,
    /// Words the reason must hold.
    #[serde(default)]
    reason: Option<String>,
}

fn compile(specs: &[RuleSpec], from: usize) -> Vec<Rule> {
    specs.iter().enumerate().map(|(i, s)| Rule::new(s, from + i + 1, Some("/home/u")).unwrap()).collect()
}

#[test]
fn scenarios_decide_as_written() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let (mut correct, mut total, mut failures) = (0, 0, Vec::new());
    for file in &files {
        let scenario: Scenario = toml::from_str(&std::fs::read_to_string(file).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!scenario.description.is_empty());
        let mut added = scenario.rules.len();
        let guard = Guard::new(&compile(&scenario.rules, 0));
        // Scenario time is the guard's own: steps run at once.
        for (n, step) in scenario.steps.iter().enumerate() {
            if !step.add_rules.is_empty() {
                guard.add_rules(&compile(&step.add_rules, added));
                added += step.add_rules.len();
            }
            if !step.happen.is_empty() {
                guard.happened(&step.happen);
            }
            let (got, reason) = if let Some(event) = &step.request {
                match guard.request(event) {
                    Ok(()) => ("selected".to_owned(), String::new()),
                    Err(report) => ("deadlock".to_owned(), report.to_string()),
                }
            } else if !step.propose.is_empty() {
                let mut asked = None;
                let result = guard.pass(&step.propose, None, |j| {
                    asked = Some(j.reason());
                    if step.approve {
                        Ok(())
                    } else {
                        Err("declined".into())
                    }
                });
                match (result, asked) {
                    (_, Some(reason)) => ("ask".to_owned(), reason),
                    (Ok(j), None) => match j.decision {
                        Some(Decision::Allow) => ("allow".to_owned(), j.reason()),
                        None => ("none".to_owned(), String::new()),
                        other => unreachable!("{other:?} is never passed without asking"),
                    },
                    (Err(refusal), None) => ("deny".to_owned(), refusal.reason()),
                }
            } else {
                continue;
            };
            let Some(expected) = &step.expect else { continue };
            total += 1;
            let reason_ok = step.reason.as_ref().is_none_or(|words| reason.contains(words.as_str()));
            if got == *expected && reason_ok {
                correct += 1;
            } else {
                failures.push(format!(
                    "{name} step {}: expected {expected} ({:?}), got {got} ({reason})",
                    n + 1,
                    step.reason
                ));
            }
        }
    }
    println!("scenario decisions: {correct}/{total} correct over {} files", files.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(total >= 40, "the scenarios hold {total} decisions");
}
