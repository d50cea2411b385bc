//! What the gate costs a tool call: one call's events (the call, its
//! write, its command) judged and selected by a guard holding 100 rules
//! of every kind. `cargo bench -p ucpkit-guard`.

use serde_json::{json, Map};
use ucpkit_guard::{Act, Event, Guard, Rule, RuleSpec, MAIN_AGENT};

fn main() {
    divan::main();
}

/// 100 rules: plain ones on tools, commands, paths and arguments, and
/// stateful ones (require, mutex, rate-limit, block-until).
fn hundred_rules() -> Vec<Rule> {
    let mut text = String::new();
    for i in 0..100 {
        text.push_str(&match i % 10 {
            0 => format!("[[rules]]\ndecision = \"deny\"\ntool = \"bash\"\ncommand = [\"tool{i}\", \"--force\"]\nreason = \"r{i}\"\n"),
            1 => format!("[[rules]]\ndecision = \"ask\"\ntool = \"{{write,edit}}\"\npath = \"area{i}/**\"\nreason = \"r{i}\"\n"),
            2 => format!("[[rules]]\ndecision = \"deny\"\npath = \"**/secret{i}.txt\"\nreason = \"r{i}\"\n"),
            3 => format!("[[rules]]\ndecision = \"allow\"\ntool = \"read{i}\"\nreason = \"r{i}\"\n"),
            4 => format!("[[rules]]\ndecision = \"deny\"\ntool = \"write\"\nargs = {{ content = \"*KEY{i}*\" }}\nreason = \"r{i}\"\n"),
            5 => format!("[[rules]]\nkind = \"require\"\nblock = {{ event = \"finish\" }}\nafter = {{ event = \"write\", path = \"mod{i}/**\" }}\nuntil = {{ event = \"checks\", passed = true }}\nreason = \"r{i}\"\n"),
            6 => format!("[[rules]]\nkind = \"mutex\"\non = {{ event = \"write\", path = \"pkg{i}/**\" }}\nreason = \"r{i}\"\n"),
            7 => format!("[[rules]]\nkind = \"rate_limit\"\non = {{ event = \"command\", command = [\"cmd{i}\"] }}\nmax = 5\nper_seconds = 60\nreason = \"r{i}\"\n"),
            8 => format!("[[rules]]\nkind = \"block_until\"\nblock = {{ event = \"write\", path = \"late{i}/**\" }}\nuntil = {{ event = \"tool\", tool = \"plan\" }}\nreason = \"r{i}\"\n"),
            _ => format!("[[rules]]\ndecision = \"ask\"\ntool = \"bash\"\ncommand = [\"deploy{i}\"]\nreason = \"r{i}\"\n"),
        });
    }
    #[derive(serde::Deserialize)]
    struct File {
        rules: Vec<RuleSpec>,
    }
    let file: File = toml::from_str(&text).expect("the rules parse");
    file.rules.iter().enumerate().map(|(i, spec)| Rule::new(spec, i + 1, None).expect("the rules compile")).collect()
}

#[divan::bench]
fn edit_call_with_100_rules(bencher: divan::Bencher) {
    let guard = Guard::new(&hundred_rules());
    let args: Map<String, serde_json::Value> =
        json!({"path": "src/lib.rs", "old_string": "a", "new_string": "b"}).as_object().cloned().unwrap_or_default();
    let events = [
        Event::new(
            MAIN_AGENT,
            Act::Tool { tool: "edit".into(), args, command: None, paths: vec!["src/lib.rs".into()] },
        ),
        Event::new(MAIN_AGENT, Act::Write { path: "src/lib.rs".into() }),
    ];
    bencher.bench(|| guard.pass(divan::black_box(&events), None, |_| Ok(())).is_ok());
}

#[divan::bench]
fn bash_call_with_100_rules(bencher: divan::Bencher) {
    let guard = Guard::new(&hundred_rules());
    let line = "cargo test --workspace && git status";
    let args: Map<String, serde_json::Value> = json!({"command": line}).as_object().cloned().unwrap_or_default();
    bencher.bench(|| {
        let events = [
            Event::new(
                MAIN_AGENT,
                Act::Tool { tool: "bash".into(), args: args.clone(), command: Some(line.into()), paths: vec![] },
            ),
            Event::new(MAIN_AGENT, Act::Command { line: line.into() }),
        ];
        guard.pass(divan::black_box(&events), None, |_| Ok(())).is_ok()
    });
}
