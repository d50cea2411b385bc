//! Every edit command executes for real, and every refusal leaves the
//! document untouched.

mod common;

use common::*;
use ucm_core::{BlockId, Content, EdgeType, Role};
use ucm_engine::{EngineError, Kept};

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
fn identical_appends_get_distinct_ids() {
    let mut e = engine();
    let out = run(&mut e, &format!("APPEND {ROOT} text :: \"same\"\nAPPEND {ROOT} text :: \"same\""));
    assert_ne!(created(&out[0]), created(&out[1]));
}

#[test]
fn append_refusals() {
    let mut e = engine();
    for (command, code) in [
        (format!("APPEND {ROOT} text WITH tags=[1] :: \"x\""), "invalid_value"),
        (format!("APPEND {ROOT} binary :: \"not base64!\""), "invalid_value"),
        (format!("APPEND {ROOT} composite :: \"x\""), "invalid_value"),
        (format!("APPEND {ROOT} text"), "invalid_value"),
        (format!("APPEND {ROOT} json :: |a|"), "invalid_value"),
        (format!("APPEND {ROOT} table :: \"x\""), "invalid_value"),
        (format!("APPEND {ROOT} text AT 5 :: \"x\""), "position_out_of_range"),
        ("APPEND blk_ffffffffffffffffffffffff text :: \"x\"".to_owned(), "block_not_found"),
        ("APPEND @nobody text :: \"x\"".to_owned(), "unknown_label"),
        ("APPEND 3 text :: \"x\"".to_owned(), "unknown_short_id"),
        ("APPEND blk_intro text :: \"x\"".to_owned(), "unknown_name"),
    ] {
        assert_eq!(fails(&mut e, &command).code(), code, "{command}");
    }
}

#[test]
fn edit_paths_operators_and_conditions() {
    let mut e = engine();
    let out = run(
        &mut e,
        &format!(
            "APPEND {ROOT} text WITH label=\"p\" :: \"Hello\"\nAPPEND {ROOT} table :: |a|b|\n|1|2|\nAPPEND {ROOT} json :: {{\"n\": 1}}\nAPPEND {ROOT} code :: \"x = 1\""
        ),
    );
    let (p, table, json, code) = (created(&out[0]), created(&out[1]), created(&out[2]), created(&out[3]));
    run(
        &mut e,
        &format!(
            r#"EDIT @p SET content.text += ", world"
EDIT @p SET text[0:5] = "Howdy"
EDIT @p SET metadata.tags += ["x", "y"]
EDIT @p SET tags -= ["x"]
EDIT @p SET metadata.summary = "greeting"
EDIT @p SET role = "quote"
EDIT @p SET metadata.views ++
EDIT @p SET views += 10
EDIT @p SET metadata.views --
EDIT @p SET label = "q"
EDIT {table} SET content.rows[0][1] = "two"
EDIT {table} SET content.columns[0] = "A"
EDIT {json} SET $n ++
EDIT {json} SET $list = [1]
EDIT {code} SET lang = "rust"
EDIT {code} SET content.text = "let x = 1;""#
        ),
    );
    let doc = e.document();
    let block = doc.get(p).unwrap();
    assert_eq!(block.content, Content::markdown("Howdy, world"));
    assert_eq!(block.metadata.tags, ["y"]);
    assert_eq!(block.metadata.summary.as_deref(), Some("greeting"));
    assert_eq!(block.metadata.role, Some(Role::Quote));
    assert_eq!(block.metadata.custom["views"], 10);
    assert_eq!(block.metadata.label.as_deref(), Some("q"));
    assert!(block.metadata.tokens.is_none(), "edits invalidate the cached count");
    assert!(
        matches!(&doc.get(table).unwrap().content, Content::Table { columns, rows, .. } if columns[0] == "A" && rows[0][1] == "two")
    );
    assert_eq!(doc.get(json).unwrap().content, Content::Json { value: serde_json::json!({"n": 2, "list": [1]}) });
    assert_eq!(doc.get(code).unwrap().content, Content::code(Some("rust".into()), "let x = 1;"));

    let skipped = run(&mut e, "EDIT @q SET text = \"no\" WHERE role = paragraph");
    assert!(!skipped[0].changed());
    run(&mut e, "EDIT @q SET text = \"yes\" WHERE role = quote AND tags CONTAINS \"y\"");
    assert_eq!(e.document().get(p).unwrap().content, Content::markdown("yes"));
}

#[test]
fn edit_refusals_change_nothing() {
    let mut e = engine();
    let out = run(
        &mut e,
        &format!("APPEND {ROOT} table WITH label=\"t\" :: |a|\n|1|\nAPPEND {ROOT} text WITH label=\"p\" :: \"x\""),
    );
    assert!(!out.is_empty());
    for (command, code) in [
        ("EDIT @t SET text = \"x\"", "invalid_path"),
        ("EDIT @t SET content.rows[9][0] = \"x\"", "invalid_path"),
        ("EDIT @t SET content.rows = 3", "invalid_value"),
        ("EDIT @t SET content.nothing = 3", "invalid_path"),
        ("EDIT @p SET id = \"blk_x\"", "invalid_path"),
        ("EDIT @p SET content.type = \"code\"", "invalid_path"),
        ("EDIT @p SET text ++", "invalid_value"),
        ("EDIT @p SET text = 5", "invalid_value"),
        ("EDIT @p SET tags = [1]", "invalid_value"),
        ("EDIT @p SET label = [1]", "invalid_value"),
        ("EDIT @p SET lang = \"rust\"", "invalid_path"),
        ("EDIT @p SET text[0:1] += \"x\"", "invalid_path"),
        ("EDIT @p SET text = \"x\" WHERE text MATCHES \"(\"", "invalid_regex"),
        ("EDIT @p SET metadata = 1", "invalid_path"),
    ] {
        assert_eq!(fails(&mut e, command).code(), code, "{command}");
    }
}

#[test]
fn move_in_every_form_and_cycle_refusal() {
    let mut e = engine();
    let out = run(
        &mut e,
        &format!("APPEND {ROOT} text WITH label=\"a\" :: \"a\"\nAPPEND {ROOT} text WITH label=\"b\" :: \"b\"\nAPPEND @a text WITH label=\"c\" :: \"c\""),
    );
    let (a, b, c) = (created(&out[0]), created(&out[1]), created(&out[2]));
    run(&mut e, "MOVE @b BEFORE @a\nMOVE @c AFTER @a");
    assert_eq!(e.document().children(BlockId::ROOT), &[b, a, c]);
    run(&mut e, "MOVE @c TO @b AT 0\nMOVE @a TO @b");
    assert_eq!(e.document().children(b), &[c, a]);
    assert_eq!(fails(&mut e, "MOVE @b TO @a").code(), "cycle");
    assert_eq!(fails(&mut e, "MOVE @b TO @b").code(), "cycle");
    assert_eq!(fails(&mut e, "MOVE @a AFTER @a").code(), "invalid_value");
    assert_eq!(fails(&mut e, &format!("MOVE {ROOT} TO @a")).code(), "root_immutable");
    assert_eq!(fails(&mut e, "MOVE @a TO @b AT 7").code(), "position_out_of_range");
}

#[test]
fn delete_in_all_three_modes_and_by_condition() {
    let script = format!(
        "APPEND {ROOT} text WITH label=\"a\" :: \"a\"\nAPPEND @a text WITH label=\"a1\" tags=[\"old\"] :: \"a1\"\nAPPEND @a text WITH label=\"a2\" :: \"a2\"\nLINK @a1 references @a2"
    );
    let mut e = engine();
    let out = run(&mut e, &script);
    let (a1, a2) = (created(&out[1]), created(&out[2]));
    let deleted = run(&mut e, "DELETE @a");
    assert_eq!(deleted[0].removed.len(), 1);
    assert!(e.document().contains(a1) && e.document().parent(a1).is_none(), "children become orphans");

    let mut e = engine();
    run(&mut e, &script);
    let deleted = run(&mut e, "DELETE @a CASCADE");
    assert_eq!((deleted[0].removed.len(), deleted[0].edges_removed), (3, 1));
    assert_eq!(e.document().len(), 1);

    let mut e = engine();
    run(&mut e, &script);
    run(&mut e, "DELETE @a PRESERVE_CHILDREN");
    assert_eq!(e.document().children(BlockId::ROOT), &[a1, a2]);

    let mut e = engine();
    run(&mut e, &script);
    let deleted = run(&mut e, "DELETE WHERE tags CONTAINS \"old\"");
    assert_eq!(deleted[0].removed, vec![a1]);
    let skipped = run(&mut e, "DELETE @a2 WHERE label = \"zzz\"");
    assert!(!skipped[0].changed() && e.document().contains(a2));
    assert!(!run(&mut e, "DELETE WHERE label = \"zzz\"")[0].changed());
    assert_eq!(fails(&mut e, &format!("DELETE {ROOT}")).code(), "root_immutable");
    assert_eq!(fails(&mut e, "DELETE blk_ffffffffffffffffffffffff").code(), "block_not_found");
    assert!(e.document().validate().issues.iter().all(|i| matches!(i, ucm_core::Issue::Orphan(_))));
}

#[test]
fn link_and_unlink() {
    let mut e = engine();
    let out = run(
        &mut e,
        &format!("APPEND {ROOT} text WITH label=\"a\" :: \"a\"\nAPPEND {ROOT} text WITH label=\"b\" :: \"b\""),
    );
    let (a, b) = (created(&out[0]), created(&out[1]));
    let linked =
        run(&mut e, "LINK @a supports @b WITH confidence=0.9 note=\"why\" weight=3\nLINK @a custom:see-also @b");
    assert_eq!(linked[0].edges_added, 1);
    let edge = &e.document().edges().outgoing(a)[0];
    assert_eq!(edge.metadata.confidence, Some(0.9));
    assert_eq!(edge.metadata.note.as_deref(), Some("why"));
    assert_eq!(edge.metadata.custom["weight"], 3);
    assert_eq!(e.document().edges().outgoing(a)[1].edge_type, EdgeType::Custom("see-also".into()));
    assert!(!run(&mut e, "LINK @a supports @b")[0].changed(), "an existing edge is reported, not duplicated");
    run(&mut e, "UNLINK @a supports @b");
    assert_eq!(e.document().edges().incoming(b).len(), 1);
    assert_eq!(fails(&mut e, "UNLINK @a supports @b").code(), "edge_not_found");
    assert_eq!(fails(&mut e, "LINK @a supports blk_ffffffffffffffffffffffff").code(), "block_not_found");
    assert_eq!(fails(&mut e, "LINK @a supports @b WITH confidence=\"high\"").code(), "invalid_value");
}

#[test]
fn prune_unreachable_and_where_with_dry_run() {
    let mut e = engine();
    run(
        &mut e,
        &format!("APPEND {ROOT} text WITH label=\"a\" tags=[\"tmp\"] :: \"a\"\nAPPEND @a text :: \"a1\"\nAPPEND {ROOT} text WITH label=\"b\" :: \"b\"\nAPPEND @b text :: \"b1\"\nDELETE @b"),
    );
    let dry = run(&mut e, "PRUNE UNREACHABLE DRY_RUN");
    assert!(dry[0].dry_run && dry[0].removed.len() == 1);
    assert_eq!(e.document().len(), 4);
    run(&mut e, "PRUNE UNREACHABLE");
    assert_eq!(e.document().len(), 3);
    assert!(e.document().validate().is_valid());
    let dry = run(&mut e, "PRUNE WHERE tags CONTAINS \"tmp\" DRY_RUN");
    assert_eq!(dry[0].removed.len(), 2);
    assert_eq!(e.document().len(), 3);
    run(&mut e, "PRUNE WHERE tags CONTAINS \"tmp\"");
    assert_eq!(e.document().len(), 1);
    assert!(!run(&mut e, "PRUNE UNREACHABLE")[0].changed());
}

#[test]
fn fold_by_depth_tokens_and_preserved_tags() {
    let mut e = engine();
    run(
        &mut e,
        &format!(
            "APPEND {ROOT} composite WITH label=\"s\"\nAPPEND @s composite WITH label=\"s1\"\nAPPEND @s1 text WITH label=\"deep\" :: \"deep text here\"\nAPPEND @s composite WITH label=\"s2\" tags=[\"keep\"]\nAPPEND @s2 text :: \"kept\""
        ),
    );
    let label = |e: &ucm_engine::Engine, l: &str| {
        e.document().blocks().find(|b| b.metadata.label.as_deref() == Some(l)).unwrap().id
    };
    let folded = |e: &ucm_engine::Engine, l: &str| {
        e.document().get(label(e, l)).unwrap().metadata.custom.contains_key(ucm_engine::FOLDED_KEY)
    };
    run(&mut e, "FOLD @s DEPTH 1 PRESERVE_TAGS [\"keep\"]");
    assert!(folded(&e, "s1") && !folded(&e, "s2") && !folded(&e, "s"));
    run(&mut e, "FOLD @s DEPTH 5");
    assert!(!folded(&e, "s1"), "a new FOLD replaces the old one");
    let out = run(&mut e, "FOLD @s MAX_TOKENS 1");
    assert!(folded(&e, "deep"), "{}", out[0]);
    assert_eq!(fails(&mut e, "FOLD @missing DEPTH 1").code(), "unknown_label");
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
    run(&mut e, "SNAPSHOT RESTORE \"one\"");
    assert_eq!(e.document().to_json(false), before, "restore brings back the exact document");
    run(&mut e, "SNAPSHOT DELETE \"one\"");
    assert_eq!(fails(&mut e, "SNAPSHOT RESTORE \"one\"").code(), "snapshot_not_found");
    assert_eq!(fails(&mut e, "SNAPSHOT CREATE \"two\"").code(), "snapshot_exists");
    assert_eq!(fails(&mut e, "SNAPSHOT CREATE \"x\" WITH colour=1").code(), "invalid_value");
    assert_eq!(fails(&mut e, "SNAPSHOT DIFF \"two\" \"nope\"").code(), "snapshot_not_found");
}

#[test]
fn transactions_commit_rollback_and_nest() {
    let mut e = engine();
    let before = e.document().to_json(false);
    run(
        &mut e,
        &format!("BEGIN TRANSACTION \"t\"\nAPPEND {ROOT} text :: \"x\"\nSNAPSHOT CREATE \"s\"\nROLLBACK \"t\""),
    );
    assert_eq!(e.document().to_json(false), before);
    assert_eq!(e.snapshots().count(), 0, "snapshots roll back too");
    run(&mut e, &format!("BEGIN TRANSACTION\nAPPEND {ROOT} text :: \"x\"\nBEGIN TRANSACTION \"inner\"\nAPPEND {ROOT} text :: \"y\"\nROLLBACK \"inner\"\nCOMMIT"));
    assert_eq!(e.document().len(), 2);
    assert!(!e.in_transaction());
    assert_eq!(fails(&mut e, "COMMIT").code(), "no_transaction");
    assert_eq!(fails(&mut e, "ROLLBACK").code(), "no_transaction");
    run(&mut e, "BEGIN TRANSACTION \"a\"");
    assert_eq!(fails(&mut e, "COMMIT \"b\"").code(), "transaction_mismatch");
}

#[test]
fn atomic_groups_apply_all_or_nothing() {
    let mut e = engine();
    let before = e.document().to_json(false);
    let error = fails(&mut e, &format!("ATOMIC {{\n  APPEND {ROOT} text WITH label=\"a\" :: \"a\"\n  EDIT @a SET tags += [\"x\"]\n  DELETE blk_ffffffffffffffffffffffff\n}}"));
    assert!(matches!(error, EngineError::Atomic { index: 3, .. }), "{error}");
    assert_eq!(e.document().to_json(false), before);
    let out = run(
        &mut e,
        &format!("ATOMIC {{\n  APPEND {ROOT} text WITH label=\"a\" :: \"a\"\n  EDIT @a SET tags += [\"x\"]\n}}"),
    );
    assert_eq!(out[0].group.len(), 2);
    assert_eq!(fails(&mut e, "ATOMIC {\n  BEGIN TRANSACTION\n}").code(), "atomic_failed");
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
    let mut e = ucm_engine::Engine::new(node_excerpt());
    let before: Vec<BlockId> = e.document().ordered_ids();
    let heading = e.document().blocks().find(|b| b.metadata.role == Some(Role::Heading2)).unwrap().id;
    run(
        &mut e,
        &format!("APPEND {heading} text :: \"note\"\nEDIT {heading} SET text += \"!\"\nMOVE {heading} TO {ROOT} AT 0"),
    );
    let after: ucm_core::IdSet = e.document().ordered_ids().into_iter().collect();
    assert!(before.iter().all(|id| after.contains(id)));
    assert!(e.document().validate().is_valid());
}

/// The one durability rule: a script's edits stand together, or are undone
/// back to its last COMMIT, or to before it.
#[test]
fn a_failed_script_keeps_nothing_or_its_last_commit() {
    let script = |source: &str| ucl_parser::parse_commands(source).unwrap();
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
}

fn run_one(e: &mut ucm_engine::Engine, source: &str) {
    for command in ucl_parser::parse_commands(source).unwrap() {
        e.execute(&command).unwrap();
    }
}
