//! Data-driven cases: each `cases/<name>.ucl` runs in an engine over an
//! empty document (fixed clock), and the transcript — each command, then
//! its outcome or its error code and message — followed by the resulting
//! document in the UCL document form is compared with `cases/<name>.out`.
//! A case runs command by command and a failed command does not stop it,
//! so refusals show next to each other (each is checked to leave the
//! document exactly as it was); a `script_*` case runs as one script
//! (`Engine::run_script`: it stops at the first failure, and the transcript
//! ends with what its edits became). Adding a case is adding a file;
//! `UPDATE_EXPECT=1 cargo test -p ucpkit-engine --test cases` rewrites the
//! expectations.

mod common;
#[path = "../../../tests/support/expect.rs"]
mod expect;

use std::fmt::Write as _;
use std::path::Path;

fn transcript(source: &str, as_script: bool) -> String {
    let script = ucpkit_ucl::parse_script(source).unwrap_or_else(|e| panic!("{}", e.render(source)));
    let mut engine = common::engine();
    let mut out = String::new();
    if as_script {
        let run = engine.run_script(&script.document.commands);
        for (span, outcome) in script.spans.iter().zip(&run.outcomes) {
            writeln!(out, "> {}\n{outcome}", source[span.clone()].trim()).unwrap();
        }
        if let Some((index, error)) = &run.failure {
            writeln!(out, "> {}\nerror [{}]: {error}", source[script.spans[*index].clone()].trim(), error.code())
                .unwrap();
        }
        let end = run.end;
        writeln!(
            out,
            "== script ==\nkept: {:?}, changed: {}, open transaction: {}",
            end.kept, end.changed, end.open_transaction
        )
        .unwrap();
    }
    let commands = if as_script { &[][..] } else { &script.document.commands[..] };
    for (command, span) in commands.iter().zip(&script.spans) {
        writeln!(out, "> {}", source[span.clone()].trim()).unwrap();
        let before = engine.document().to_json(false);
        match engine.execute(command) {
            Ok(outcome) => writeln!(out, "{outcome}").unwrap(),
            Err(error) => {
                assert_eq!(engine.document().to_json(false), before, "{command} failed but changed the document");
                writeln!(out, "error [{}]: {error}", error.code()).unwrap();
            }
        }
    }
    let issues = engine.document().validate().issues;
    if !issues.is_empty() {
        writeln!(out, "== validation ==\n{issues:?}").unwrap();
    }
    writeln!(out, "== document ==\n{}", ucpkit_engine::export_ucl(engine.document())).unwrap();
    out
}

#[test]
fn every_case_matches_its_expectation() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    expect::check_cases(&dir, "ucl", |input| {
        let as_script = input.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("script_"));
        transcript(&std::fs::read_to_string(input).expect("case is UTF-8"), as_script)
    });
}
