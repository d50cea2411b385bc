//! Any text either parses or yields errors with valid positions; what
//! parses prints back to canonical UCL that parses to the same tree, and
//! executing it against a small document never panics or breaks the tree.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match ucl_parser::parse_script(text) {
        Err(errors) => {
            for error in &errors.0 {
                assert!(error.line >= 1 && error.column >= 1 && error.span.end <= text.len());
                let _ = error.render(text);
            }
        }
        Ok(script) => {
            for command in &script.document.commands {
                if let ucl_parser::Command::Prune(ucl_parser::Prune {
                    target: ucl_parser::PruneTarget::Where(condition),
                    ..
                }) = command
                {
                    assert!(condition.depth() <= ucl_parser::MAX_NESTING);
                }
            }
            let printed = ucl_parser::print_document(&script.document);
            let again = ucl_parser::parse_document(&printed).expect("canonical UCL parses");
            assert_eq!(again, script.document);
            let mut engine = ucm_engine::Engine::new(ucm_core::Document::new("fuzz"));
            for command in &script.document.commands {
                let _ = engine.execute(command);
            }
            let problems = engine.document().validate().issues;
            assert!(problems.iter().all(|i| matches!(i, ucm_core::Issue::Orphan(_))), "{problems:?}");
        }
    }
});
