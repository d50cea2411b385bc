//! Hostile sizes: flat AND/OR chains of any length parse, print, serialize
//! and read back without recursion per term; nesting beyond the cap is an
//! error, never a stack overflow (checked on small stacks); oversized
//! literals are refused by the content limit before they are copied.

use ucpkit_ucl::*;

/// Runs `f` on a thread with a 256 KiB stack: recursion per term would
/// overflow it.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    on_stack(256 * 1024, f)
}

fn on_stack<T: Send + 'static>(bytes: usize, f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(bytes).spawn(f).expect("thread starts").join().expect("no panic")
}

fn or_chain(terms: usize) -> String {
    let terms: Vec<String> = (0..terms).map(|i| format!("text = \"v{i}\"")).collect();
    format!("PRUNE WHERE {}\n", terms.join(" OR "))
}

fn check_flat_chain(terms: usize) {
    on_small_stack(move || {
        let source = or_chain(terms);
        let commands = parse_commands(&source).expect("a flat chain parses");
        let Command::Prune(Prune { target: PruneTarget::Where(Condition::Or(operands)), .. }) = &commands[0] else {
            panic!("one n-ary OR")
        };
        assert_eq!(operands.len(), terms);
        assert_eq!(commands[0].clone().to_string() + "\n", source);
        let json = serde_json::to_string(&commands).expect("serializes");
        let back: Vec<Command> = serde_json::from_str(&json).expect("deserializes");
        assert_eq!(back, commands);
    });
}

#[test]
fn a_flat_chain_of_20_000_terms_is_one_node() {
    check_flat_chain(20_000);
}

#[test]
fn a_flat_chain_of_a_million_terms_is_one_node() {
    check_flat_chain(1_000_000);
}

#[test]
fn nesting_beyond_the_cap_is_an_error_on_a_small_stack() {
    // 64 levels of unoptimized frames need more than 256 KiB; the 100,000
    // levels below would need hundreds of MiB if the cap did not hold.
    on_stack(1024 * 1024, || {
        for source in [
            format!("PRUNE WHERE {}x{}", "(".repeat(100_000), ")".repeat(100_000)),
            format!("DELETE WHERE {}x", "NOT ".repeat(100_000)),
            format!("EDIT blk_a SET x = {}1{}", "[".repeat(100_000), "]".repeat(100_000)),
            format!("PRUNE WHERE {}x = [{}]{}", "(".repeat(40), "[".repeat(40), ")".repeat(40)),
        ] {
            let errors = parse_commands(&source).unwrap_err();
            assert!(errors.0[0].message.contains("nesting deeper than 64 levels"), "{errors}");
        }
        let within = format!("PRUNE WHERE {}a = 1 OR b = 2{}", "(".repeat(60), ")".repeat(60));
        let parsed = parse_commands(&within).expect("60 levels are within the cap");
        let printed = print_commands(&parsed);
        assert_eq!(parse_commands(&printed).unwrap(), parsed);
    });
}

#[test]
fn deserializing_a_condition_deeper_than_the_cap_is_an_error() {
    on_small_stack(|| {
        let deep = format!("{}{{\"truthy\":[{{\"field\":\"x\"}}]}}{}", "{\"not\":".repeat(100), "}".repeat(100));
        let error = serde_json::from_str::<Condition>(&deep).unwrap_err();
        assert!(error.to_string().contains("deeper than 64"), "{error}");
        let shallow = format!("{}{{\"truthy\":[{{\"field\":\"x\"}}]}}{}", "{\"not\":".repeat(10), "}".repeat(10));
        assert_eq!(serde_json::from_str::<Condition>(&shallow).unwrap().depth(), 11);
        assert!(serde_json::from_str::<Condition>("{\"or\":[{\"truthy\":[{\"field\":\"x\"}]}]}").is_err());
    });
}

#[test]
fn oversized_strings_are_refused_with_the_limit_named() {
    let options = ParseOptions { max_content_bytes: 1024 };
    let source = format!("APPEND blk_a text :: \"{}\"", "x".repeat(2000));
    let errors = parse_script_with(&source, &options).unwrap_err();
    assert!(errors.0[0].message.contains("over the content limit of 1 KiB"), "{errors}");
    let table = format!("APPEND blk_a table :: |{}|\n|b|", "a".repeat(2000));
    assert!(parse_script_with(&table, &options).is_err());
    assert!(parse_script_with(&format!("APPEND blk_a text :: \"{}\"", "x".repeat(1000)), &options).is_ok());
    assert_eq!(ParseOptions::default().max_content_bytes, 16 * 1024 * 1024);
}

#[test]
fn the_line_index_agrees_with_a_scan() {
    let source = "GOTO a\n\nécrit x\r\nBACK 2\n\u{1F600} y";
    let index = LineIndex::new(source);
    for offset in 0..=source.len() {
        assert_eq!(index.line_column(source, offset), line_column(source, offset), "offset {offset}");
    }
}

#[test]
fn control_characters_in_found_text_are_escaped() {
    let errors = parse_commands("GOTO \u{1b}[2J").unwrap_err();
    let message = &errors.0[0].message;
    assert!(message.contains("\\x1b") && !message.contains('\u{1b}'), "{message}");
}
