//! The upstream conformance set: every UCL snippet taken from the upstream
//! UCP project's tests and docs (`tests/data/ucl-peer`, a copy of the
//! shared evaluation set) parses or fails as its manifest says, never panics, and
//! every accepted snippet prints to canonical UCL that parses back equal.

use std::path::{Path, PathBuf};

use ucpkit_ucl::{parse_document, parse_script, print_document};

/// Snippets upstream's docs show but its own parser rejects
/// (`upstream_parser = rejects`, `ucp_should = either`), which UCP rejects
/// too, with why. Any other mismatch fails the test.
const DOC_ONLY_FORMS: &[(&str, &str)] = &[
    ("v042", "APPEND root ...: `root` is neither a block id nor a label"),
    ("v133", "APPEND without a content type"),
    ("v156", "a `#` comment after a command"),
    ("v157", "a `#` comment after a command, and EXPAND's depth without DEPTH="),
    ("v158", "EXPAND's depth without DEPTH="),
    ("v159", "a `#` comment after a command, and FOLLOW without a block"),
    ("v160", "FOLLOW without a block"),
    ("v161", "a `#` comment after a command"),
    ("v163", "a `#` comment after a command"),
    ("v165", "EDIT <id> APPEND is no EDIT operator"),
    ("v166", "EDIT <id> REMOVE is no EDIT operator"),
    ("v167", "properties separated by commas"),
    ("v270", "the `[*]` wildcard in a path"),
    ("v437", "a `#` comment after a command"),
    ("v438", "a `#` comment after a command"),
];

struct Case {
    name: String,
    folder: String,
    upstream: String,
    should: String,
}

fn peer_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/ucl-peer")
}

fn manifest(dir: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(dir.join("manifest.tsv")).expect("manifest.tsv is readable");
    text.lines()
        .skip(1)
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert!(fields.len() >= 4, "manifest row with too few columns: {line}");
            Case {
                name: fields[0].to_owned(),
                folder: fields[1].to_owned(),
                upstream: fields[2].to_owned(),
                should: fields[3].to_owned(),
            }
        })
        .collect()
}

/// What went wrong with one snippet, or `None` when it behaves as the
/// manifest says. A snippet of `valid/` that UCP rejects is a failure even
/// where the manifest allows either, unless listed in [`DOC_ONLY_FORMS`].
fn check(case: &Case, source: &str) -> Option<String> {
    let result = std::panic::catch_unwind(|| parse_script(source));
    let Ok(result) = result else { return Some("the parser panicked".into()) };
    let documented_valid = case.folder == "valid";
    match (&result, case.should.as_str()) {
        (Ok(script), "parse" | "either" | "parse-or-clear-error") => {
            let printed = print_document(&script.document);
            match parse_document(&printed) {
                Ok(again) if again == script.document => None,
                Ok(_) => Some(format!("canonical form reads back different:\n{printed}")),
                Err(errors) => Some(format!("canonical form does not parse:\n{printed}\n{}", errors.render(&printed))),
            }
        }
        (Err(_), "reject") => None,
        (Err(_), "either") if !documented_valid => None,
        (Err(errors), "parse-or-clear-error") if errors.0.iter().any(|e| e.message.contains("custom:")) => None,
        (Err(errors), _) => Some(format!("rejected:\n{}", errors.render(source))),
        (Ok(_), _) => Some("accepted, but upstream and UCP agree it is an error".into()),
    }
}

#[test]
fn upstream_snippets_parse_as_the_manifest_says() {
    let dir = peer_dir();
    let cases = manifest(&dir);
    assert!(cases.len() >= 496, "the manifest lists only {} snippets", cases.len());
    let mut failures = Vec::new();
    let mut allowed = 0;
    for case in &cases {
        let path = dir.join(&case.folder).join(format!("{}.ucl", case.name));
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let Some(problem) = check(case, &source) else { continue };
        let known = DOC_ONLY_FORMS.iter().any(|(name, _)| *name == case.name);
        if known && case.upstream == "rejects" {
            allowed += 1;
        } else {
            failures.push(format!("{} ({}, should {}): {problem}\n{source}", case.name, case.upstream, case.should));
        }
    }
    // A listed form that now parses is fine only if the list shrinks with it.
    for (name, why) in DOC_ONLY_FORMS {
        let case = cases.iter().find(|c| c.name == *name);
        assert!(case.is_some_and(|c| c.upstream == "rejects"), "{name} ({why}) is not an upstream-rejected snippet");
    }
    assert!(failures.is_empty(), "{} snippet(s) misbehave:\n\n{}", failures.len(), failures.join("\n---\n"));
    assert_eq!(allowed, DOC_ONLY_FORMS.len(), "a documented doc-only form now behaves: remove it from DOC_ONLY_FORMS");
}
