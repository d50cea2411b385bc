//! Data-driven cases: each `cases/<name>.ucl` is parsed and the result —
//! `ok` and the canonical print, or every error rendered with its caret
//! snippet — compared with `cases/<name>.out`. Adding a case is adding a
//! file; `UPDATE_EXPECT=1 cargo test -p ucl-parser --test cases` rewrites
//! the expectations.

use std::path::Path;

use ucl_parser::{parse_document, parse_script, print_document};

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
    let bless = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/cases exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ucl"))
        .collect();
    names.sort();
    assert!(!names.is_empty());
    let mut mismatches = Vec::new();
    for input in names {
        let source = std::fs::read_to_string(&input).expect("case is UTF-8");
        let actual = outcome(&source);
        let expected_path = input.with_extension("out");
        if bless {
            std::fs::write(&expected_path, &actual).expect("expectation written");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected != actual {
            mismatches.push(format!("{}:\n--- expected\n{expected}\n--- actual\n{actual}", input.display()));
        }
    }
    assert!(mismatches.is_empty(), "{}\n(UPDATE_EXPECT=1 to accept)", mismatches.join("\n"));
}
