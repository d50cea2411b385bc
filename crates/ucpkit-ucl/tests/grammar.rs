//! Every command of the UCL grammar (docs/ucl.md) parses with the meaning the spec gives it, in
//! the spellings of the upstream documentation and the design documents.

use ucpkit_core::{BlockId, EdgeType};
use ucpkit_ucl::*;

const A: &str = "blk_0123456789abcdef01234567";
const B: &str = "blk_fedcba9876543210fedcba98";

fn id(text: &str) -> BlockRef {
    BlockRef::Id(text.parse::<BlockId>().unwrap())
}

fn one(source: &str) -> Command {
    let mut commands = parse_commands(source).unwrap_or_else(|e| panic!("{}", e.render(source)));
    assert_eq!(commands.len(), 1, "{source}");
    let command = commands.remove(0);
    let printed = command.to_string();
    assert_eq!(parse_commands(&printed).unwrap(), vec![command.clone()], "canonical form {printed:?}");
    command
}

fn path(text: &str) -> Path {
    Path(text.split('.').map(|s| PathSegment::Field(s.to_owned())).collect())
}

#[test]
fn edit_with_every_operator_and_where() {
    let source = format!("EDIT {A} SET content.text = \"New\" WHERE status = \"draft\"");
    assert_eq!(
        one(&source),
        Command::Edit(Edit {
            target: id(A),
            path: path("content.text"),
            op: EditOp::Set(Value::String("New".into())),
            condition: Some(Condition::Compare {
                path: path("status"),
                op: CompareOp::Eq,
                value: Value::String("draft".into())
            }),
        })
    );
    let Command::Edit(edit) = one(&format!("EDIT {A} SET metadata.tags += [\"new-tag\"]")) else { panic!() };
    assert_eq!(edit.op, EditOp::Append(Value::Array(vec![Value::String("new-tag".into())])));
    let Command::Edit(edit) = one(&format!("EDIT {A} SET text -= \"x\"")) else { panic!() };
    assert_eq!(edit.op, EditOp::Remove(Value::String("x".into())));
    let Command::Edit(edit) = one(&format!("edit {A} set metadata.count++")) else { panic!() };
    assert_eq!(edit.op, EditOp::Increment);
    let Command::Edit(edit) = one(&format!("EDIT {A} SET metadata.count --")) else { panic!() };
    assert_eq!(edit.op, EditOp::Decrement);
    let Command::Edit(edit) = one(&format!("EDIT {A} SET content.rows[1][-1] = \"x\"")) else { panic!() };
    assert_eq!(
        edit.path.0,
        [
            PathSegment::Field("content".into()),
            PathSegment::Field("rows".into()),
            PathSegment::Index(1),
            PathSegment::Index(-1)
        ]
    );
    let Command::Edit(edit) = one(&format!("EDIT {A} SET text[0:5] = \"Hello\"")) else { panic!() };
    assert_eq!(edit.path.0[1], PathSegment::Slice(Some(0), Some(5)));
    let Command::Edit(edit) = one(&format!("EDIT {A} SET $users[0].name = 'Bob'")) else { panic!() };
    assert_eq!(edit.path.to_string(), "content.value.users[0].name");
}

#[test]
fn conditions_have_precedence_and_every_operator() {
    let Command::Delete(delete) =
        one("DELETE WHERE (priority > 5 OR urgent) AND NOT archived AND label STARTS_WITH \"ch\"")
    else {
        panic!()
    };
    let text = delete.condition.unwrap().to_string();
    assert_eq!(text, "(priority > 5 OR urgent) AND NOT archived AND label STARTS_WITH \"ch\"");
    for op in ["=", "!=", ">", ">=", "<", "<=", "CONTAINS", "STARTS_WITH", "ENDS_WITH", "MATCHES"] {
        one(&format!("DELETE WHERE x {op} 1"));
    }
    for check in ["EXISTS", "IS_NULL", "IS_NOT_NULL", "IS_EMPTY"] {
        let Command::Delete(delete) = one(&format!("DELETE WHERE summary {check}")) else { panic!() };
        assert!(matches!(delete.condition, Some(Condition::Check { .. })));
    }
    let Command::Delete(delete) = one("DELETE WHERE a = 1 OR b = 2 AND c = 3") else { panic!() };
    assert!(matches!(delete.condition, Some(Condition::Or(ref terms)) if matches!(terms[1], Condition::And(..))));
    let Command::Delete(delete) = one("delete where role = heading1") else { panic!() };
    assert_eq!(delete.condition.unwrap().to_string(), "role = \"heading1\"");
}

#[test]
fn append_with_properties_and_every_content_form() {
    let source = format!("APPEND {A} text WITH label=\"intro\" role=\"heading2\" tags=[\"a\"] :: \"Content\"");
    assert_eq!(
        one(&source),
        Command::Append(Append {
            parent: id(A),
            content_type: ContentType::Text,
            at: None,
            properties: vec![
                ("label".into(), Value::String("intro".into())),
                ("role".into(), Value::String("heading2".into())),
                ("tags".into(), Value::Array(vec![Value::String("a".into())])),
            ],
            content: Some(ContentLiteral::Value(Value::String("Content".into()))),
        })
    );
    let Command::Append(append) = one(&format!("APPEND {A} code AT 0 WITH lang=\"python\" :: \"def f():\n    pass\""))
    else {
        panic!()
    };
    assert_eq!(append.at, Some(0));
    assert_eq!(append.content, Some(ContentLiteral::Value(Value::String("def f():\n    pass".into()))));
    let Command::Append(append) = one(&format!("APPEND {A} json :: {{\"key\": \"value\", \"count\": 42}}")) else {
        panic!()
    };
    assert_eq!(
        append.content,
        Some(ContentLiteral::Value(Value::Object(vec![
            ("key".into(), Value::String("value".into())),
            ("count".into(), Value::Int(42))
        ])))
    );
    let source = format!("APPEND {A} table :: |Name|Age|\n                  |Alice|30|\n |Bob \\| Jr|25|");
    let Command::Append(append) = one(&source) else { panic!() };
    assert_eq!(
        append.content,
        Some(ContentLiteral::Table(vec![
            vec!["Name".into(), "Age".into()],
            vec!["Alice".into(), "30".into()],
            vec!["Bob | Jr".into(), "25".into()],
        ]))
    );
    let Command::Append(append) = one(&format!("APPEND {A} composite WITH role=section")) else { panic!() };
    assert_eq!(append.content, None);
    assert_eq!(append.properties, vec![("role".into(), Value::String("section".into()))]);
}

#[test]
fn strings_decode_every_escape() {
    let Command::Append(append) = one(&format!(r#"APPEND {A} text :: "a\nb\tc\"d\'e\\f\u{{e9}}\r\0""#)) else {
        panic!()
    };
    assert_eq!(append.content, Some(ContentLiteral::Value(Value::String("a\nb\tc\"d'e\\f\u{e9}\r\0".into()))));
    let Command::Append(append) = one(&format!(r#"APPEND {A} text :: 'single "quoted"'"#)) else { panic!() };
    assert_eq!(append.content, Some(ContentLiteral::Value(Value::String("single \"quoted\"".into()))));
}

#[test]
fn move_delete_link_unlink() {
    assert_eq!(
        one(&format!("MOVE {A} TO {B} AT 2")),
        Command::Move(Move { block: id(A), destination: MoveDestination::To { parent: id(B), at: Some(2) } })
    );
    assert!(matches!(
        one(&format!("MOVE {A} BEFORE {B}")),
        Command::Move(Move { destination: MoveDestination::Before(_), .. })
    ));
    assert!(matches!(
        one(&format!("MOVE {A} AFTER @intro")),
        Command::Move(Move { destination: MoveDestination::After(BlockRef::Label(_)), .. })
    ));
    for (suffix, mode) in [
        ("", DeleteMode::Orphan),
        (" CASCADE", DeleteMode::Cascade),
        (" PRESERVE_CHILDREN", DeleteMode::PreserveChildren),
    ] {
        let Command::Delete(delete) = one(&format!("DELETE {A}{suffix}")) else { panic!() };
        assert_eq!(delete.mode, mode);
        assert_eq!(delete.target, Some(id(A)));
    }
    let Command::Link(link) = one(&format!("LINK {A} supports {B} WITH confidence=0.95")) else { panic!() };
    assert_eq!(link.edge_type, EdgeType::Supports);
    assert_eq!(link.properties, vec![("confidence".into(), Value::Float(0.95))]);
    let Command::Link(link) = one(&format!("LINK {A} custom:see-also {B}")) else { panic!() };
    assert_eq!(link.edge_type, EdgeType::Custom("see-also".into()));
    let Command::Unlink(unlink) = one(&format!("UNLINK {A} references {B}")) else { panic!() };
    assert_eq!(unlink.edge_type, EdgeType::References);
}

#[test]
fn prune_fold_snapshot_transactions_atomic() {
    assert_eq!(
        one("PRUNE UNREACHABLE DRY_RUN"),
        Command::Prune(Prune { target: PruneTarget::Unreachable, dry_run: true })
    );
    assert!(matches!(
        one("PRUNE WHERE tags CONTAINS \"temp\""),
        Command::Prune(Prune { target: PruneTarget::Where(_), dry_run: false })
    ));
    assert_eq!(
        one(&format!("FOLD {A} DEPTH 1 PRESERVE_TAGS [\"important\", \"summary\"]")),
        Command::Fold(Fold {
            target: id(A),
            depth: Some(1),
            max_tokens: None,
            preserve_tags: vec!["important".into(), "summary".into()]
        })
    );
    assert!(matches!(one(&format!("FOLD {A} MAX_TOKENS 4000")), Command::Fold(Fold { max_tokens: Some(4000), .. })));
    assert_eq!(
        one("SNAPSHOT CREATE \"v1.0\" WITH description=\"Initial\""),
        Command::Snapshot(Snapshot::Create {
            name: "v1.0".into(),
            properties: vec![("description".into(), Value::String("Initial".into()))]
        })
    );
    assert_eq!(one("SNAPSHOT RESTORE \"v1\""), Command::Snapshot(Snapshot::Restore("v1".into())));
    assert_eq!(one("SNAPSHOT DELETE \"v1\""), Command::Snapshot(Snapshot::Delete("v1".into())));
    assert_eq!(one("SNAPSHOT LIST"), Command::Snapshot(Snapshot::List));
    assert_eq!(one("SNAPSHOT DIFF \"a\" \"b\""), Command::Snapshot(Snapshot::Diff("a".into(), "b".into())));
    assert_eq!(one("BEGIN TRANSACTION"), Command::Transaction(Transaction::Begin { name: None }));
    assert_eq!(
        one("begin transaction \"import\""),
        Command::Transaction(Transaction::Begin { name: Some("import".into()) })
    );
    assert_eq!(one("COMMIT \"import\""), Command::Transaction(Transaction::Commit { name: Some("import".into()) }));
    assert_eq!(one("ROLLBACK"), Command::Transaction(Transaction::Rollback { name: None }));
    let Command::Atomic(atomic) =
        one(&format!("ATOMIC {{\n  APPEND {A} text :: \"one\"\n\n  LINK {A} supports {B}\n}}"))
    else {
        panic!()
    };
    assert_eq!(atomic.commands.len(), 2);
}

#[test]
fn traversal_commands_with_all_parameters() {
    assert_eq!(one(&format!("GOTO {A}")), Command::Goto(Goto { target: id(A) }));
    assert_eq!(one("BACK"), Command::Back(Back { steps: None }));
    assert_eq!(one("BACK 3"), Command::Back(Back { steps: Some(3) }));
    assert_eq!(
        one(&format!("EXPAND {A} DOWN DEPTH=2 MODE=PREVIEW ROLES=heading1,heading2 TAGS=a TOKENS=500")),
        Command::Expand(Expand {
            target: id(A),
            direction: Direction::Down,
            depth: Some(2),
            mode: Some(ViewMode::Preview),
            roles: vec!["heading1".into(), "heading2".into()],
            tags: vec!["a".into()],
            tokens: Some(500),
        })
    );
    assert_eq!(
        one(&format!("expand {A} down depth=3 mode=preview roles=heading1,heading2")),
        one(&format!("EXPAND {A} DOWN DEPTH=3 MODE=PREVIEW ROLES=heading1,heading2"))
    );
    assert!(matches!(
        one(&format!("EXPAND {A} SEMANTIC MODE=ADAPTIVE")),
        Command::Expand(Expand { mode: Some(ViewMode::Adaptive), .. })
    ));
    for direction in ["UP", "BOTH"] {
        one(&format!("EXPAND {A} {direction}"));
    }
    assert_eq!(
        one(&format!("FOLLOW {A} references,links_to {B}")),
        Command::Follow(Follow {
            source: id(A),
            edge_types: vec![EdgeType::References, EdgeType::LinksTo],
            target: Some(id(B))
        })
    );
    assert_eq!(
        one(&format!("PATH {A} TO {B} MAX=5")),
        Command::Path(PathQuery { from: id(A), to: id(B), max: Some(5) })
    );
    assert_eq!(
        one("SEARCH \"fs.readFile\" LIMIT=10 MIN_SIMILARITY=0.5 ROLES=paragraph TAGS=api"),
        Command::Search(Search {
            query: "fs.readFile".into(),
            limit: Some(10),
            min_similarity: Some(0.5),
            roles: vec!["paragraph".into()],
            tags: vec!["api".into()],
        })
    );
    assert_eq!(
        one("FIND PATTERN=\"TODO.*\""),
        Command::Find(Find { pattern: Some("TODO.*".into()), ..Find::default() })
    );
    assert_eq!(
        one("FIND ROLE=heading2 TAG=api LABEL=\"x y\""),
        Command::Find(Find {
            role: Some("heading2".into()),
            tag: Some("api".into()),
            label: Some("x y".into()),
            pattern: None
        })
    );
    for mode in ["full", "preview", "metadata", "ids", "adaptive"] {
        one(&format!("VIEW {A} mode={mode}"));
    }
    assert_eq!(
        one("VIEW NEIGHBORHOOD DEPTH=2"),
        Command::View(View { target: ViewTarget::Neighborhood { depth: Some(2) }, mode: None })
    );
}

#[test]
fn context_commands_with_all_parameters() {
    assert_eq!(
        one(&format!("CTX ADD {A} REASON=semantic_relevance RELEVANCE=0.9")),
        Command::Ctx(Ctx::Add {
            target: id(A),
            reason: Some(Reason::SemanticRelevance),
            relevance: Some(0.9),
            note: None
        })
    );
    assert_eq!(one("CTX ADD RESULTS"), Command::Ctx(Ctx::AddResults));
    assert_eq!(one(&format!("CTX ADD CHILDREN {A}")), Command::Ctx(Ctx::AddChildren { parent: id(A) }));
    assert_eq!(one(&format!("CTX ADD PATH {A} TO {B}")), Command::Ctx(Ctx::AddPath { from: id(A), to: id(B) }));
    assert_eq!(one("CTX REMOVE 3"), Command::Ctx(Ctx::Remove { target: BlockRef::Short(3) }));
    assert_eq!(one("CTX CLEAR"), Command::Ctx(Ctx::Clear));
    assert_eq!(
        one("CTX EXPAND AUTO DEPTH=2 TOKENS=800"),
        Command::Ctx(Ctx::Expand { direction: CtxDirection::Auto, depth: Some(2), tokens: Some(800) })
    );
    for method in ["truncate", "SUMMARIZE", "structure_only"] {
        one(&format!("CTX COMPRESS method={method}"));
    }
    assert_eq!(
        one("CTX PRUNE min_relevance=0.3 max_age=300"),
        Command::Ctx(Ctx::Prune { min_relevance: Some(0.3), max_age: Some(300) })
    );
    assert_eq!(one("CTX RENDER FORMAT=SHORT_IDS"), Command::Ctx(Ctx::Render { format: Some(RenderFormat::ShortIds) }));
    assert_eq!(one("CTX STATS"), Command::Ctx(Ctx::Stats));
    assert_eq!(one("CTX FOCUS @intro"), Command::Ctx(Ctx::Focus { target: Some(BlockRef::Label("intro".into())) }));
    assert_eq!(one("CTX FOCUS CLEAR"), Command::Ctx(Ctx::Focus { target: None }));
}

#[test]
fn comments_and_blank_lines_are_skipped() {
    let source = format!("# plan\n// next\nGOTO {A} // go\n\n   # indented\nBACK\n");
    assert_eq!(parse_commands(&source).unwrap().len(), 2);
}

#[test]
fn block_references_in_every_form() {
    assert_eq!(one("GOTO 12"), Command::Goto(Goto { target: BlockRef::Short(12) }));
    assert_eq!(
        one("GOTO @api.fs:read-file"),
        Command::Goto(Goto { target: BlockRef::Label("api.fs:read-file".into()) })
    );
    assert_eq!(one("GOTO @\"a label\""), Command::Goto(Goto { target: BlockRef::Label("a label".into()) }));
    assert_eq!(one(&format!("GOTO @{A}")), Command::Goto(Goto { target: id(A) }));
    assert_eq!(one("GOTO blk_intro"), Command::Goto(Goto { target: BlockRef::Name("blk_intro".into()) }));
}

#[test]
fn document_form_sections() {
    let source = r#"
STRUCTURE
blk_root: [blk_intro, blk_body]

BLOCKS
text #blk_intro label="Introduction" :: "Welcome to UCP!"
table #blk_body :: |a|b|
                   |1|2|

COMMANDS
EDIT blk_intro SET content.text = "Updated introduction"
"#;
    let script = parse_script(source).unwrap();
    let document = &script.document;
    assert_eq!(document.structure.len(), 1);
    assert_eq!(document.structure[0].children.len(), 2);
    assert_eq!(document.blocks.len(), 2);
    assert_eq!(
        document.blocks[1].content,
        Some(ContentLiteral::Table(vec![vec!["a".into(), "b".into()], vec!["1".into(), "2".into()]]))
    );
    assert_eq!(document.commands.len(), 1);
    assert_eq!(script.spans.len(), 1);
    assert_eq!(parse_document(&print_document(document)).unwrap(), *document);
    let errors = parse_commands(source).unwrap_err();
    assert!(errors.0[0].message.contains("sections belong to the document form"), "{errors}");
}

// ---- errors ------------------------------------------------------------

fn errors(source: &str) -> Vec<ParseError> {
    parse_script(source).expect_err(source).0
}

#[test]
fn error_names_command_expectation_and_finding_with_position() {
    let source = format!("GOTO {A}\nEXPAND {A} depth=2");
    let errors = errors(&source);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].message, "EXPAND: expected direction UP|DOWN|BOTH|SEMANTIC after block id, found 'depth'");
    assert_eq!((errors[0].line, errors[0].column), (2, 37));
    let rendered = errors[0].render(&source);
    assert!(rendered.contains(&format!("2 | EXPAND {A} depth=2\n  | {}^^^^^", " ".repeat(36))), "{rendered}");
}

#[test]
fn columns_count_characters() {
    let errors = errors("APPEND @ünïcødé text :: \"é\" extra");
    assert_eq!(errors[0].column, 29, "{:?}", errors[0]);
    assert!(errors[0].message.contains("unexpected 'extra' after the end of the command"), "{:?}", errors[0]);
}

#[test]
fn every_broken_line_is_reported() {
    let source =
        format!("GOTO\nGOTO {A}\nFROB x\nEXPAND {A} SIDEWAYS\nATOMIC {{\n  GOTO\n  LINK {A} nope {B}\n}}\nCTX ADD\n");
    let errors = errors(&source);
    let lines: Vec<usize> = errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, [1, 3, 4, 6, 7, 9], "{errors:#?}");
    assert!(errors[1].message.contains("unknown command 'FROB'"));
    assert!(errors[4].message.contains("unknown edge type 'nope'"));
}

#[test]
fn helpful_messages_for_common_mistakes() {
    let cases = [
        ("EXPNAD blk_a DOWN", "did you mean EXPAND?"),
        ("CTX ADDD RESULTS", "did you mean CTX ADD?"),
        ("LINK blk_a refrences blk_b", "did you mean references?"),
        ("LINK blk_a depends_on blk_b", "custom types are written custom:depends_on"),
        ("EDIT blk_a SET text \"x\"", "expected an operator = += -= ++ or -- after the path"),
        ("EDIT blk_a text = 1", "EDIT: expected SET after the block id"),
        ("APPEND blk_a paragraph :: \"x\"", "expected a content type"),
        ("APPEND blk_a text \"x\"", "expected AT, WITH or '::' before the content"),
        ("APPEND blk_a text ::", "expected content after '::'"),
        ("APPEND blk_a text :: \"never closed", "string is never closed"),
        ("APPEND blk_a text :: \"bad \\q escape\"", "unknown escape '\\q'"),
        ("APPEND blk_a text :: \"\\u{110000}\"", "invalid unicode escape"),
        ("APPEND blk_a table :: |a|b", "a table row must end with '|'"),
        ("MOVE blk_a INTO blk_b", "expected TO, BEFORE or AFTER"),
        ("DELETE", "expected a block id or WHERE"),
        ("PRUNE EVERYTHING", "expected UNREACHABLE or WHERE"),
        ("FOLD blk_a", "expected DEPTH <n> or MAX_TOKENS <n>"),
        ("SNAPSHOT TAKE \"x\"", "expected CREATE, RESTORE, DELETE, LIST or DIFF"),
        ("BEGIN \"x\"", "expected TRANSACTION after BEGIN"),
        ("ATOMIC {\nGOTO blk_a\n", "expected '}' closing the ATOMIC group"),
        ("EXPAND blk_a DOWN DEPTH=two", "expected a depth"),
        ("EXPAND blk_a DOWN DEPTH=-1", "expected a depth"),
        ("EXPAND blk_a DOWN DEPTH=99999999999", "a whole number from 0 to"),
        ("EXPAND blk_a DOWN WIDTH=2", "unknown parameter 'WIDTH'; expected DEPTH, MODE, ROLES, TAGS, TOKENS"),
        ("EXPAND blk_a DOWN DEPTH=1 DEPTH=2", "DEPTH is given twice"),
        ("EXPAND blk_a DOWN MODE=everything", "expected a mode FULL|PREVIEW|METADATA|IDS|ADAPTIVE"),
        ("SEARCH fs", "expected the query as a quoted string"),
        ("SEARCH \"x\" MIN_SIMILARITY=1.5", "expected a similarity between 0 and 1"),
        ("FIND", "expected at least one of ROLE=, TAG=, LABEL=, PATTERN="),
        ("CTX ADD blk_a REASON=whim", "expected a reason"),
        ("CTX COMPRESS", "expected METHOD=TRUNCATE|SUMMARIZE|STRUCTURE_ONLY"),
        ("CTX EXPAND SIDEWAYS", "expected direction UP|DOWN|BOTH|SEMANTIC|AUTO"),
        ("CTX RENDER FORMAT=html", "expected DEFAULT|SHORT_IDS|MARKDOWN"),
        ("GOTO ~", "expected a block id"),
        ("GOTO blk_a blk_b", "unexpected 'blk_b' after the end of the command"),
        ("EDIT blk_a SET x = 99999999999999999999", "does not fit in 64 bits"),
        ("EDIT blk_a SET x = 1e999", "is out of range"),
        ("EDIT blk_a SET x = [1, 2", "expected ',' or ']' in the array"),
        ("EDIT blk_a SET x = {\"a\" 1}", "expected ':' after the object key"),
        ("EDIT blk_a SET x = 1 WHERE (a = 1", "expected ')' closing the condition"),
        ("APPEND blk_a text WITH label=\"a\" label=\"b\" :: \"x\"", "property label is given twice"),
        ("STRUCTURE\nblk_a [blk_b]", "expected ':' after the parent id"),
        ("BLOCKS\ntext blk_a :: \"x\"", "expected '#' before the block id"),
    ];
    for (source, expected) in cases {
        let errors = parse_script(source).expect_err(source).0;
        assert!(
            errors.iter().any(|e| e.message.contains(expected)),
            "{source:?}: wanted {expected:?}, got {errors:#?}"
        );
    }
}

#[test]
fn errors_carry_exact_spans() {
    let errors = errors("GOTO blk_a\n  CTX REMOVE ?");
    assert_eq!((errors[0].line, errors[0].column), (2, 14));
    assert_eq!(errors[0].span, 24..25);
}

#[test]
fn short_ids_expand_to_the_full_ids_they_name() {
    let mut map = ucpkit_ucl::IdMapper::new();
    let (a, b) = ("blk_000000000000000000000001", "blk_000000000000000000000002");
    let text = format!("GOTO {a}\nLINK {b} references {a}");
    let short = map.shorten(&text);
    assert_eq!(short, "GOTO 1\nLINK 2 references 1");
    let mut commands = ucpkit_ucl::parse_commands(&short).unwrap();
    for command in &mut commands {
        command.expand_short_ids(&map).unwrap();
    }
    assert_eq!(commands, ucpkit_ucl::parse_commands(&text).unwrap());
    let mut unknown = ucpkit_ucl::parse_commands("GOTO 42").unwrap().remove(0);
    assert_eq!(unknown.expand_short_ids(&map), Err(42));
}
