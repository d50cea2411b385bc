//! Data-driven session scripts: every `tests/scripts/*.ucl` runs, command by
//! command, in one editing session over the Node.js excerpt, and the
//! transcript (each command, then its reply or its error code and message,
//! then its warnings) is compared with a snapshot in `tests/snapshots/`.
//! Unlike `run_script`, a failed command does not stop the script, so a
//! case can show what a session does after an error. Add a case by adding
//! a file; re-bless with `INSTA_UPDATE=always`.

mod common;

use std::fmt::Write;

#[test]
fn session_scripts_match_snapshots() {
    insta::glob!("scripts/*.ucl", |path| {
        let source = std::fs::read_to_string(path).unwrap();
        let script = ucpkit_ucl::parse_script(&source).unwrap_or_else(|e| panic!("{}", e.render(&source)));
        let traversal = common::traversal();
        let session = common::session(&traversal);
        let mut transcript = String::new();
        for (command, span) in script.document.commands.iter().zip(&script.spans) {
            writeln!(transcript, "> {}", source[span.clone()].trim()).unwrap();
            match traversal.execute(session, command) {
                Ok(step) => writeln!(transcript, "{step}").unwrap(),
                Err(error) => writeln!(transcript, "error [{}]: {error}", error.code()).unwrap(),
            }
        }
        insta::assert_snapshot!(transcript);
    });
}
