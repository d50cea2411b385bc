//! Invariants over random command sequences on a real corpus: the document
//! stays valid, untouched ids never change, failed commands and failed
//! groups leave the document byte-for-byte as it was, and the document
//! form round-trips exactly.

mod common;

use common::*;
use proptest::prelude::*;
use ucpkit_core::{BlockId, Document, Issue};
use ucpkit_engine::{export_ucl, import_ucl, Engine};
use ucpkit_ucl::{parse_commands, parse_document, Command};

/// One random command, written against whatever blocks exist when it runs.
#[derive(Debug, Clone)]
struct Op {
    kind: u8,
    a: usize,
    b: usize,
    text: String,
}

fn op() -> impl Strategy<Value = Op> {
    (0u8..16, any::<usize>(), any::<usize>(), "[a-z ]{0,12}").prop_map(|(kind, a, b, text)| Op { kind, a, b, text })
}

fn render(op: &Op, doc: &Document) -> String {
    let ids = doc.ordered_ids();
    let a = ids[op.a % ids.len()];
    let b = ids[op.b % ids.len()];
    let t = &op.text;
    match op.kind {
        0 => format!("APPEND {a} text WITH tags=[\"{t}\"] :: \"{t}\""),
        1 => format!("APPEND {a} code AT {} WITH lang=\"js\" :: \"{t}\"", op.b % 3),
        2 => format!("EDIT {a} SET text += \"{t}\""),
        3 => format!("EDIT {a} SET metadata.tags += [\"{t}\"]"),
        4 => format!("EDIT {a} SET label = \"{t}\" WHERE tags IS_EMPTY"),
        5 => format!("MOVE {a} TO {b}"),
        6 => format!("MOVE {a} BEFORE {b}"),
        7 => format!("DELETE {a}"),
        8 => format!("DELETE {a} CASCADE"),
        9 => format!("DELETE {a} PRESERVE_CHILDREN"),
        10 => format!("LINK {a} references {b} WITH note=\"{t}\""),
        11 => format!("UNLINK {a} references {b}"),
        12 => "PRUNE UNREACHABLE".to_owned(),
        13 => format!("FOLD {a} DEPTH {}", op.b % 3),
        14 => format!("EDIT {a} SET metadata.n ++"),
        _ => format!("DELETE WHERE tags CONTAINS \"{t}\""),
    }
}

fn command(text: &str) -> Command {
    parse_commands(text).unwrap_or_else(|e| panic!("{}", e.render(text))).remove(0)
}

fn structural_problems(doc: &Document) -> Vec<Issue> {
    doc.validate().issues.into_iter().filter(|i| !matches!(i, Issue::Orphan(_))).collect()
}

/// A document's JSON form, its version left out.
fn without_version(json: &str) -> serde_json::Value {
    let mut value: serde_json::Value = serde_json::from_str(json).expect("the document form is JSON");
    value.as_object_mut().expect("an object").remove("version");
    value
}

fn corpus() -> Document {
    thread_local!(static DOC: Document = node_excerpt());
    DOC.with(Clone::clone)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_command_keeps_the_document_valid_and_untouched_ids_stable(ops in prop::collection::vec(op(), 1..25)) {
        let mut engine = Engine::new(corpus());
        engine.set_clock(clock);
        for op in &ops {
            let text = render(op, engine.document());
            let before_ids: Vec<BlockId> = engine.document().ordered_ids();
            let before_json = engine.document().to_json(false);
            match engine.execute(&command(&text)) {
                Ok(outcome) => {
                    prop_assert!(structural_problems(engine.document()).is_empty(), "{text}: {:?}", structural_problems(engine.document()));
                    for id in before_ids {
                        prop_assert!(engine.document().contains(id) || outcome.removed.contains(&id), "{text} lost {id}");
                    }
                }
                Err(_) => prop_assert_eq!(engine.document().to_json(false), before_json, "{} failed but changed the document", text),
            }
        }
    }

    #[test]
    fn a_failing_atomic_group_restores_the_exact_document(ops in prop::collection::vec(op(), 0..12), fail_at in any::<usize>()) {
        let mut engine = Engine::new(corpus());
        let before = engine.document().to_json(false);
        let mut lines: Vec<String> = Vec::new();
        // Render against the document as it evolves, so earlier commands
        // are likely to succeed and the group really changes things first.
        let mut shadow = Engine::new(corpus());
        for op in &ops {
            let text = render(op, shadow.document());
            let _ = shadow.execute(&command(&text));
            lines.push(text);
        }
        let at = fail_at % (lines.len() + 1);
        lines.insert(at, "EDIT blk_ffffffffffffffffffffffff SET text = \"injected failure\"".to_owned());
        let group = format!("ATOMIC {{\n{}\n}}", lines.join("\n"));
        prop_assert!(engine.execute(&command(&group)).is_err());
        prop_assert_eq!(engine.document().to_json(false), before.clone());

        let mut transaction = vec!["BEGIN TRANSACTION \"t\"".to_owned()];
        transaction.extend(lines.iter().filter(|l| !l.contains("injected")).cloned());
        transaction.push("ROLLBACK \"t\"".to_owned());
        let version = engine.document().version();
        for line in &transaction {
            let _ = engine.execute(&command(line));
        }
        // The same document; its version moves on, never back, as the
        // states inside the transaction were seen.
        prop_assert!(engine.document().version() > version);
        prop_assert_eq!(without_version(&engine.document().to_json(false)), without_version(&before));
    }

    #[test]
    fn nested_transactions_and_scripts_return_to_exactly_what_they_began_with(
        steps in prop::collection::vec((0u8..10, op()), 0..40),
    ) {
        // The oracle: the document form at each open BEGIN, at the script's
        // start and at its last COMMIT of an outermost transaction.
        let mut engine = Engine::new(corpus());
        engine.set_clock(clock);
        engine.begin_script();
        let start = without_version(&engine.document().to_json(false));
        let mut open: Vec<serde_json::Value> = Vec::new();
        let mut last_commit = None;
        let mut failed = false;
        for (step, op) in &steps {
            let form = without_version(&engine.document().to_json(false));
            match step {
                0 => {
                    engine.execute(&command("BEGIN TRANSACTION")).expect("BEGIN");
                    open.push(form);
                }
                1 if !open.is_empty() => {
                    engine.execute(&command("ROLLBACK")).expect("ROLLBACK");
                    let began = open.pop().expect("open");
                    prop_assert_eq!(without_version(&engine.document().to_json(false)), began);
                }
                2 if !open.is_empty() => {
                    engine.execute(&command("COMMIT")).expect("COMMIT");
                    open.pop();
                    if open.is_empty() {
                        last_commit = Some(without_version(&engine.document().to_json(false)));
                    }
                }
                3 => {
                    let group = format!("ATOMIC {{\n{}\nEDIT blk_ffffffffffffffffffffffff SET text = \"x\"\n}}", render(op, engine.document()));
                    prop_assert!(engine.execute(&command(&group)).is_err());
                    prop_assert_eq!(without_version(&engine.document().to_json(false)), form);
                }
                _ => {
                    let text = render(op, engine.document());
                    if engine.execute(&command(&text)).is_err() {
                        prop_assert_eq!(without_version(&engine.document().to_json(false)), form, "{} failed", text);
                        failed = *step == 9;
                        if failed {
                            break;
                        }
                    }
                }
            }
        }
        // A script that failed, or that left a transaction open, returns to
        // its last COMMIT, or to its start.
        let end = engine.finish_script(!failed);
        let after = without_version(&engine.document().to_json(false));
        if failed || !open.is_empty() {
            let kept = if last_commit.is_some() { ucpkit_engine::Kept::LastCommit } else { ucpkit_engine::Kept::Nothing };
            prop_assert_eq!(end.kept, kept);
            prop_assert_eq!(after, last_commit.unwrap_or(start));
        }
        prop_assert!(structural_problems(engine.document()).is_empty());
    }

    #[test]
    fn the_document_form_round_trips_after_any_edits(ops in prop::collection::vec(op(), 0..15)) {
        let mut engine = Engine::new(corpus());
        for op in &ops {
            let text = render(op, engine.document());
            let _ = engine.execute(&command(&text));
        }
        let original = engine.document();
        let form = export_ucl(original);
        let parsed = parse_document(&form).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (imported, _) = import_ucl(&parsed, "ignored").map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(imported.document().to_json(false), original.to_json(false));
    }
}

#[test]
fn the_node_corpus_round_trips_through_the_document_form() {
    let original = corpus();
    let form = export_ucl(&original);
    let (imported, outcomes) = import_ucl(&parse_document(&form).unwrap(), "other").unwrap();
    assert!(outcomes.is_empty(), "edges are read directly, not executed");
    assert_eq!(imported.document().to_json(true), original.to_json(true));
}

#[test]
fn hand_written_forms_with_symbolic_ids_import() {
    let form = r#"
STRUCTURE
blk_root: [blk_intro, blk_body]
blk_body: [blk_code]

BLOCKS
text #blk_intro label="Introduction" role="intro" :: "Welcome to UCP!"
text #blk_body role="heading1" :: "Body"
code #blk_code lang="rust" :: "fn main() {}"

COMMANDS
LINK blk_intro references blk_body
EDIT blk_intro SET content.text = "Updated introduction"
APPEND blk_body text :: "More"
"#;
    let (engine, outcomes) = import_ucl(&parse_document(form).unwrap(), "hand").unwrap();
    let doc = engine.document();
    assert_eq!(doc.name(), "hand");
    assert_eq!(outcomes.len(), 2);
    assert_eq!(doc.children(BlockId::ROOT).len(), 2);
    assert_eq!(doc.edges().len(), 1);
    let intro = doc.blocks().find(|b| b.metadata.label.as_deref() == Some("Introduction")).unwrap();
    assert_eq!(intro.content, ucpkit_core::Content::markdown("Updated introduction"));
    assert!(doc.validate().is_valid());
}

#[test]
fn invalid_forms_are_refused() {
    for (form, needle) in [
        ("BLOCKS\ntext #blk_a :: \"x\"\ntext #blk_a :: \"y\"", "defined twice"),
        ("STRUCTURE\nblk_r: [blk_a]\nBLOCKS\ntext #blk_b :: \"x\"", "has no BLOCKS definition"),
        ("STRUCTURE\nblk_r: [blk_a, blk_a]\nBLOCKS\ntext #blk_a :: \"x\"", "listed as a child twice"),
        ("STRUCTURE\nblk_a: [blk_b]\nblk_b: [blk_a]\nBLOCKS\ntext #blk_a :: \"x\"\ntext #blk_b :: \"y\"", "not a tree"),
        ("BLOCKS\ntext #blk_a :: 5", "must be a string"),
        ("BLOCKS\ntext #blk_a :: \"x\"\nCOMMANDS\nDELETE blk_zzz", "command 1 of COMMANDS failed"),
    ] {
        let error = import_ucl(&parse_document(form).unwrap(), "x").err().unwrap_or_else(|| panic!("accepted {form}"));
        assert!(error.to_string().contains(needle), "{form}: {error}");
    }
}
