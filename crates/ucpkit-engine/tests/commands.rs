//! Every edit command executes for real, and every refusal leaves the
//! document untouched.

mod common;

use common::*;
use ucpkit_core::{BlockId, Content, Role};
use ucpkit_engine::Kept;

#[test]
fn append_every_content_type() {
    let mut e = engine();
    let out = run(
        &mut e,
        &format!(
            r#"APPEND {ROOT} text WITH label="intro" role="heading2" tags=["a", "b"] format="plain" status="draft" :: "Hello"
APPEND {ROOT} code WITH lang="python" :: "print(1)"
APPEND {ROOT} table WITH align=["left", "right"] :: |Name|Age|
|Alice|30|
APPEND {ROOT} math :: "E = mc^2"
APPEND {ROOT} media WITH kind="image" alt="logo" :: "logo.png"
APPEND {ROOT} json :: {{"a": [1, 2.5, null]}}
APPEND {ROOT} binary WITH mime="image/png" :: "aGVsbG8="
APPEND {ROOT} composite WITH role=section
APPEND {ROOT} text AT 0 :: "first""#
        ),
    );
    let doc = e.document();
    assert_eq!(doc.len(), 10);
    let intro = doc.get(created(&out[0])).unwrap();
    assert_eq!(intro.content, Content::plain("Hello"));
    assert_eq!(intro.metadata.role, Some(Role::Heading2));
    assert_eq!(intro.metadata.label.as_deref(), Some("intro"));
    assert_eq!(intro.metadata.tags, ["a", "b"]);
    assert_eq!(intro.metadata.custom["status"], "draft");
    assert_eq!(intro.metadata.timestamps.created_ms, clock());
    assert_eq!(doc.get(created(&out[1])).unwrap().content, Content::code(Some("python".into()), "print(1)"));
    assert!(matches!(&doc.get(created(&out[2])).unwrap().content,
        Content::Table { columns, rows, align } if columns == &["Name", "Age"] && rows == &[vec!["Alice".to_owned(), "30".to_owned()]] && align.len() == 2));
    assert!(
        matches!(&doc.get(created(&out[3])).unwrap().content, Content::Math { expression, .. } if expression == "E = mc^2")
    );
    assert!(
        matches!(&doc.get(created(&out[4])).unwrap().content, Content::Media { uri, alt: Some(alt), .. } if uri == "logo.png" && alt == "logo")
    );
    assert_eq!(
        doc.get(created(&out[5])).unwrap().content,
        Content::Json { value: serde_json::json!({"a": [1, 2.5, null]}) }
    );
    assert!(matches!(&doc.get(created(&out[6])).unwrap().content, Content::Binary { data, .. } if data == b"hello"));
    assert_eq!(doc.get(created(&out[7])).unwrap().content, Content::Composite);
    assert_eq!(doc.children(BlockId::ROOT)[0], created(&out[8]));
    assert!(doc.validate().is_valid());
}

#[test]
fn snapshots_create_list_diff_restore_delete() {
    let mut e = engine();
    run(
        &mut e,
        &format!("APPEND {ROOT} text WITH label=\"a\" :: \"a\"\nSNAPSHOT CREATE \"one\" WITH description=\"first\""),
    );
    let before = e.document().to_json(false);
    run(&mut e, &format!("APPEND {ROOT} text :: \"b\"\nEDIT @a SET text = \"A\"\nSNAPSHOT CREATE \"two\""));
    let diff = run(&mut e, "SNAPSHOT DIFF \"one\" \"two\"")[0].diff.clone().unwrap();
    assert_eq!((diff.added.len(), diff.modified.len(), diff.removed.len()), (1, 1, 0));
    let list = run(&mut e, "SNAPSHOT LIST");
    assert_eq!(list[0].snapshots.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["one", "two"]);
    assert_eq!(list[0].snapshots[0].description.as_deref(), Some("first"));
    let version = e.document().version();
    run(&mut e, "SNAPSHOT RESTORE \"one\"");
    let without_version = |json: &str| {
        let mut value: serde_json::Value = serde_json::from_str(json).unwrap();
        value.as_object_mut().unwrap().remove("version");
        value
    };
    assert_eq!(
        without_version(&e.document().to_json(false)),
        without_version(&before),
        "restore brings back the exact document"
    );
    assert!(e.document().version() > version, "the version moves on, never back");
    run(&mut e, "SNAPSHOT DELETE \"one\"");
    assert_eq!(fails(&mut e, "SNAPSHOT RESTORE \"one\"").code(), "snapshot_not_found");
    assert_eq!(fails(&mut e, "SNAPSHOT CREATE \"two\"").code(), "snapshot_exists");
    assert_eq!(fails(&mut e, "SNAPSHOT CREATE \"x\" WITH colour=1").code(), "invalid_value");
    assert_eq!(fails(&mut e, "SNAPSHOT DIFF \"two\" \"nope\"").code(), "snapshot_not_found");
}

#[test]
fn traversal_and_context_commands_need_a_session() {
    let mut e = engine();
    for command in [format!("GOTO {ROOT}"), "CTX STATS".to_owned(), "SEARCH \"x\"".to_owned()] {
        assert_eq!(fails(&mut e, &command).code(), "needs_session");
    }
}

#[test]
fn outcomes_have_text_and_json_forms() {
    let mut e = engine();
    let out = run(&mut e, &format!("APPEND {ROOT} text :: \"a\""));
    let text = out[0].to_string();
    assert!(text.starts_with("APPEND ok: created 1 block (blk_"), "{text}");
    let json = serde_json::to_value(&out[0]).unwrap();
    assert_eq!(json["command"], "APPEND");
    assert_eq!(json["created"].as_array().unwrap().len(), 1);
}

#[test]
fn commands_on_a_real_corpus_keep_untouched_ids() {
    let mut e = ucpkit_engine::Engine::new(node_excerpt());
    let before: Vec<BlockId> = e.document().ordered_ids();
    let heading = e.document().blocks().find(|b| b.metadata.role == Some(Role::Heading2)).unwrap().id;
    run(
        &mut e,
        &format!("APPEND {heading} text :: \"note\"\nEDIT {heading} SET text += \"!\"\nMOVE {heading} TO {ROOT} AT 0"),
    );
    let after: ucpkit_core::IdSet = e.document().ordered_ids().into_iter().collect();
    assert!(before.iter().all(|id| after.contains(id)));
    assert!(e.document().validate().is_valid());
}

/// The one durability rule: a script's edits stand together, or are undone
/// back to its last COMMIT, or to before it.
#[test]
fn a_failed_script_keeps_nothing_or_its_last_commit() {
    let script = |source: &str| ucpkit_ucl::parse_commands(source).unwrap();
    let mut e = engine();
    let before = e.document().clone();

    let run = e.run_script(&script(&format!("APPEND {ROOT} text :: \"a\"\nDELETE blk_ffffffffffffffffffffffff")));
    assert_eq!((run.outcomes.len(), run.failure.as_ref().map(|f| f.0)), (1, Some(1)));
    assert_eq!((run.end.kept, run.end.changed), (Kept::Nothing, false));
    assert!(e.document().same_content(&before), "the APPEND before the failure is undone");
    assert!(e.document().version() > before.version() + 1, "the version moves on, never back");

    let run = e.run_script(&script(&format!(
        "BEGIN TRANSACTION\nAPPEND {ROOT} text WITH label=\"kept\" :: \"k\"\nCOMMIT\nAPPEND {ROOT} text :: \"lost\"\nSNAPSHOT CREATE \"s\"\nDELETE blk_ffffffffffffffffffffffff"
    )));
    assert_eq!((run.end.kept, run.end.changed), (Kept::LastCommit, true));
    assert_eq!(e.document().len(), 2, "only the committed block stands");
    assert_eq!(e.snapshots().count(), 0, "the snapshot after the COMMIT is undone too");

    let after_commit = e.document().clone();
    let run = e.run_script(&script(&format!("BEGIN TRANSACTION\nAPPEND {ROOT} text :: \"open\"")));
    assert!(run.failure.is_none() && run.end.open_transaction && !e.in_transaction());
    assert_eq!(run.end.kept, Kept::Nothing);
    assert!(e.document().same_content(&after_commit), "a transaction left open is rolled back");

    let run = e.run_script(&script(&format!("APPEND {ROOT} text :: \"b\"\nSNAPSHOT LIST")));
    assert_eq!((run.end.kept, run.end.changed), (Kept::Everything, true));
    assert_eq!(e.document().len(), 3);
    let run = e.run_script(&script("SNAPSHOT LIST"));
    assert!(!run.end.changed, "a script that only reads changes nothing");

    // A transaction opened before the script is not the script's to close.
    run_one(&mut e, "BEGIN TRANSACTION \"outer\"");
    let run = e.run_script(&script(&format!("APPEND {ROOT} text :: \"c\"")));
    assert!(run.failure.is_none() && !run.end.open_transaction && e.in_transaction());
    assert_eq!(run.end.kept, Kept::Everything);
    let length = e.document().len();
    let run = e.run_script(&script(&format!("APPEND {ROOT} text :: \"d\"\nCOMMIT \"outer\"")));
    let (at, error) = run.failure.expect("ending it inside a script is refused");
    assert!(at == 1 && error.to_string().contains("opened before this script"), "{error}");
    assert_eq!((run.end.kept, e.document().len(), e.in_transaction()), (Kept::Nothing, length, true));
    run_one(&mut e, "ROLLBACK \"outer\"");
    assert_eq!(e.document().len(), 3, "the outer transaction's edits, the script's included, are rolled back");
}

fn run_one(e: &mut ucpkit_engine::Engine, source: &str) {
    for command in ucpkit_ucl::parse_commands(source).unwrap() {
        e.execute(&command).unwrap();
    }
}
