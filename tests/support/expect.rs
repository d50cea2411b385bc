//! Expectation files of data-driven tests, shared by the crates that have
//! them (included with `#[path]`): every `<name>.<extension>` in a folder
//! gives an output that is compared with `<name>.out` beside it, and
//! `UPDATE_EXPECT=1` rewrites the `.out` files instead. Adding a case is
//! adding a file.

use std::path::Path;

/// Runs `outcome` on every case in `dir` and fails listing each mismatch
/// (expected, then actual), or writes the outputs when blessing.
pub fn check_cases(dir: &Path, extension: &str, outcome: impl Fn(&Path) -> String) {
    let bless = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut inputs: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "no .{extension} case in {}", dir.display());
    let mut mismatches = Vec::new();
    for input in inputs {
        let actual = outcome(&input);
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
