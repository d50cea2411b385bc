//! Any text either parses or yields errors with valid positions; what
//! parses prints back to canonical UCL that parses to the same tree, and
//! executing it against a small document never panics or breaks the tree.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match ucpkit_ucl::parse_script(text) {
        Err(errors) => {
            for error in &errors.0 {
                assert!(error.line >= 1 && error.column >= 1 && error.span.end <= text.len());
                let _ = error.render(text);
            }
        }
        Ok(script) => {
            for command in &script.document.commands {
                if let ucpkit_ucl::Command::Prune(ucpkit_ucl::Prune {
                    target: ucpkit_ucl::PruneTarget::Where(condition),
                    ..
                }) = command
                {
                    assert!(condition.depth() <= ucpkit_ucl::MAX_NESTING);
                }
            }
            let printed = ucpkit_ucl::print_document(&script.document);
            let again = ucpkit_ucl::parse_document(&printed).expect("canonical UCL parses");
            assert_eq!(again, script.document);
            let mut engine = ucpkit_engine::Engine::new(ucpkit_core::Document::new("fuzz"));
            for command in &script.document.commands {
                let _ = engine.execute(command);
            }
            let problems = engine.document().validate().issues;
            assert!(problems.iter().all(|i| matches!(i, ucpkit_core::Issue::Orphan(_))), "{problems:?}");
        }
    }
});
