//! Data-driven cases: each `cases/<name>.ucl` is parsed and the result —
//! `ok` and the canonical print, or every error rendered with its caret
//! snippet — compared with `cases/<name>.out`. Adding a case is adding a
//! file; `UPDATE_EXPECT=1 cargo test -p ucpkit-ucl --test cases` rewrites
//! the expectations.

#[path = "../../../tests/support/expect.rs"]
mod expect;

use std::path::Path;

use ucpkit_ucl::{parse_document, parse_script, print_document};

fn outcome(source: &str) -> String {
    match parse_script(source) {
        Ok(script) => {
            let printed = print_document(&script.document);
            let again = parse_document(&printed).expect("canonical UCL parses");
            assert_eq!(again, script.document, "canonical UCL reads back equal:\n{printed}");
            format!("ok\n{printed}")
        }
        Err(errors) => errors.render(source),
    }
}

#[test]
fn every_case_matches_its_expectation() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    expect::check_cases(&dir, "ucl", |input| outcome(&std::fs::read_to_string(input).expect("case is UTF-8")));
}
