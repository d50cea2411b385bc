//! Property tests: printing any syntax tree and parsing it back gives the
//! same tree, and no input makes the parser panic.

use proptest::prelude::*;
use ucpkit_core::{BlockId, EdgeType};
use ucpkit_ucl::*;

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,12}",
        "\\PC{0,16}",
        Just("line one\nline \"two\"\t\\ end".to_owned()),
        Just("héllo wörld 日本".to_owned()),
    ]
}

fn word() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{0,8}(-[a-z0-9]{1,4})?"
        .prop_filter("not a reserved value", |w| !["true", "false", "null"].contains(&w.as_str()))
}

fn block_ref() -> impl Strategy<Value = BlockRef> {
    prop_oneof![
        any::<[u8; 12]>().prop_map(|b| BlockRef::Id(BlockId::from_bytes(b))),
        (0u32..100_000).prop_map(BlockRef::Short),
        prop_oneof!["[a-z_][a-z0-9_.:-]{0,10}", "[\\p{L}_][\\p{L}\\p{N}_.:-]{0,6}", "\\PC{1,8}"]
            .prop_map(BlockRef::Label),
        "blk_[g-z_]{1,10}".prop_map(BlockRef::Name),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::Int),
        prop::num::f64::NORMAL.prop_map(Value::Float),
        (-1000.0f64..1000.0).prop_map(Value::Float),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((text(), inner), 0..4).prop_map(Value::Object),
        ]
    })
}

fn path() -> impl Strategy<Value = Path> {
    let first = prop_oneof![word(), Just("content".to_owned()), Just("metadata".to_owned()), text()]
        .prop_map(PathSegment::Field);
    let rest = prop_oneof![
        word().prop_map(PathSegment::Field),
        text().prop_map(PathSegment::Field),
        any::<i64>().prop_map(PathSegment::Index),
        (prop::option::of(-5i64..50), prop::option::of(-5i64..50)).prop_map(|(a, b)| PathSegment::Slice(a, b)),
    ];
    (first, prop::collection::vec(rest, 0..3)).prop_map(|(first, mut rest)| {
        rest.insert(0, first);
        Path(rest)
    })
}

fn condition() -> impl Strategy<Value = Condition> {
    let compare = prop_oneof![
        Just(CompareOp::Eq),
        Just(CompareOp::Ne),
        Just(CompareOp::Gt),
        Just(CompareOp::Ge),
        Just(CompareOp::Lt),
        Just(CompareOp::Le),
        Just(CompareOp::Contains),
        Just(CompareOp::StartsWith),
        Just(CompareOp::EndsWith),
        Just(CompareOp::Matches),
    ];
    let check = prop_oneof![Just(Check::Exists), Just(Check::IsNull), Just(Check::IsNotNull), Just(Check::IsEmpty)];
    let block_value = prop_oneof![
        any::<[u8; 12]>().prop_map(|b| BlockRef::Id(BlockId::from_bytes(b))),
        prop_oneof!["[a-z_][a-z0-9_.:-]{0,10}", "\\PC{1,8}"].prop_map(BlockRef::Label),
    ]
    .prop_map(Value::Ref);
    let leaf = prop_oneof![
        (path(), compare, prop_oneof![4 => value(), 1 => block_value])
            .prop_map(|(path, op, value)| Condition::Compare { path, op, value }),
        (path(), check).prop_map(|(path, check)| Condition::Check { path, check }),
        path().prop_map(Condition::Truthy),
    ];
    // n-ary AND/OR nested in any way: the printer parenthesizes what the
    // source must have grouped, so every shape reads back equal.
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|c| Condition::Not(Box::new(c))),
            prop::collection::vec(inner.clone(), 2..5).prop_map(Condition::And),
            prop::collection::vec(inner, 2..5).prop_map(Condition::Or),
        ]
    })
}

const REASON_NAMES: &[&str] = &[
    "direct_reference",
    "semantic_relevance",
    "structural_context",
    "navigation_path",
    "user_preference",
    "agent_decision",
    "system_required",
];

fn properties() -> impl Strategy<Value = Properties> {
    prop::collection::btree_map(prop_oneof![word(), text()], value(), 0..3).prop_map(|m| m.into_iter().collect())
}

fn content_type() -> impl Strategy<Value = ContentType> {
    prop_oneof![
        Just(ContentType::Text),
        Just(ContentType::Code),
        Just(ContentType::Table),
        Just(ContentType::Math),
        Just(ContentType::Media),
        Just(ContentType::Json),
        Just(ContentType::Binary),
        Just(ContentType::Composite),
    ]
}

fn content() -> impl Strategy<Value = Option<ContentLiteral>> {
    prop::option::of(prop_oneof![
        value().prop_map(ContentLiteral::Value),
        prop::collection::vec(prop::collection::vec(prop_oneof!["[a-z |\\\\]{0,6}", text()], 0..4), 1..4)
            .prop_map(ContentLiteral::Table),
    ])
}

fn edge_type() -> impl Strategy<Value = EdgeType> {
    prop_oneof![
        prop::sample::select(EdgeType::BUILT_IN.to_vec()),
        word().prop_map(|w| EdgeType::Custom(w.into())),
        "\\PC{1,8}".prop_map(|w| EdgeType::Custom(w.into())),
    ]
}

fn words() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(prop_oneof![word(), text()], 0..3)
}

fn fraction() -> impl Strategy<Value = f64> {
    0.0f64..=1.0
}

fn view_mode() -> impl Strategy<Value = ViewMode> {
    prop_oneof![
        Just(ViewMode::Full),
        Just(ViewMode::Preview),
        Just(ViewMode::Metadata),
        Just(ViewMode::Ids),
        Just(ViewMode::Adaptive),
    ]
}

fn edit_command() -> impl Strategy<Value = Command> {
    let op = prop_oneof![
        value().prop_map(EditOp::Set),
        value().prop_map(EditOp::Append),
        value().prop_map(EditOp::Remove),
        Just(EditOp::Increment),
        Just(EditOp::Decrement),
    ];
    let name = prop_oneof![word(), text()];
    prop_oneof![
        (block_ref(), path(), op, prop::option::of(condition()))
            .prop_map(|(target, path, op, condition)| Command::Edit(Edit { target, path, op, condition })),
        (block_ref(), content_type(), prop::option::of(0u32..50), properties(), content()).prop_map(
            |(parent, content_type, at, properties, content)| Command::Append(Append {
                parent,
                content_type,
                at,
                properties,
                content
            })
        ),
        (block_ref(), block_ref(), prop::option::of(0u32..9), 0..3u8).prop_map(|(block, other, at, kind)| {
            let destination = match kind {
                0 => MoveDestination::To { parent: other, at },
                1 => MoveDestination::Before(other),
                _ => MoveDestination::After(other),
            };
            Command::Move(Move { block, destination })
        }),
        (prop::option::of(block_ref()), 0..3u8, prop::option::of(condition()))
            .prop_filter("a target or a condition", |(t, _, c)| t.is_some() || c.is_some())
            .prop_map(|(target, mode, condition)| {
                let mode = [DeleteMode::Orphan, DeleteMode::Cascade, DeleteMode::PreserveChildren][mode as usize];
                Command::Delete(Delete { target, mode, condition })
            }),
        (block_ref(), edge_type(), block_ref(), properties()).prop_map(|(source, edge_type, target, properties)| {
            Command::Link(Link { source, edge_type, target, properties })
        }),
        (block_ref(), edge_type(), block_ref()).prop_map(|(source, edge_type, target)| Command::Unlink(Unlink {
            source,
            edge_type,
            target
        })),
        (prop::option::of(condition()), any::<bool>()).prop_map(|(c, dry_run)| Command::Prune(Prune {
            target: c.map_or(PruneTarget::Unreachable, PruneTarget::Where),
            dry_run
        })),
        (block_ref(), prop::option::of(0u32..9), prop::option::of(0u32..9999), words())
            .prop_filter("depth or tokens", |(_, d, t, _)| d.is_some() || t.is_some())
            .prop_map(|(target, depth, max_tokens, preserve_tags)| Command::Fold(Fold {
                target,
                depth,
                max_tokens,
                preserve_tags
            })),
        prop_oneof![
            (name.clone(), properties()).prop_map(|(name, properties)| Snapshot::Create { name, properties }),
            name.clone().prop_map(Snapshot::Restore),
            name.clone().prop_map(Snapshot::Delete),
            Just(Snapshot::List),
            (name.clone(), name.clone()).prop_map(|(a, b)| Snapshot::Diff(a, b)),
        ]
        .prop_map(Command::Snapshot),
        (prop::option::of(name), 0..3u8).prop_map(|(name, kind)| Command::Transaction(match kind {
            0 => Transaction::Begin { name },
            1 => Transaction::Commit { name },
            _ => Transaction::Rollback { name },
        })),
    ]
}

fn traversal_command() -> impl Strategy<Value = Command> {
    let direction =
        prop_oneof![Just(Direction::Up), Just(Direction::Down), Just(Direction::Both), Just(Direction::Semantic)];
    prop_oneof![
        block_ref().prop_map(|target| Command::Goto(Goto { target })),
        prop::option::of(0u32..20).prop_map(|steps| Command::Back(Back { steps })),
        (
            block_ref(),
            direction,
            prop::option::of(0u32..9),
            prop::option::of(view_mode()),
            words(),
            words(),
            prop::option::of(0u32..99999)
        )
            .prop_map(|(target, direction, depth, mode, roles, tags, tokens)| Command::Expand(Expand {
                target,
                direction,
                depth,
                mode,
                roles,
                tags,
                tokens
            })),
        (block_ref(), prop::collection::vec(edge_type(), 1..3), prop::option::of(block_ref()))
            .prop_map(|(source, edge_types, target)| Command::Follow(Follow { source, edge_types, target })),
        (block_ref(), block_ref(), prop::option::of(0u32..20)).prop_map(|(from, to, max)| Command::Path(PathQuery {
            from,
            to,
            max
        })),
        (text(), prop::option::of(0u32..100), prop::option::of(fraction()), words(), words()).prop_map(
            |(query, limit, min_similarity, roles, tags)| Command::Search(Search {
                query,
                limit,
                min_similarity,
                roles,
                tags
            })
        ),
        (prop::option::of(text()), prop::option::of(word()), prop::option::of(text()), prop::option::of(text()))
            .prop_filter("one filter", |(a, b, c, d)| a.is_some() || b.is_some() || c.is_some() || d.is_some())
            .prop_map(|(role, tag, label, pattern)| Command::Find(Find { role, tag, label, pattern })),
        (
            prop_oneof![
                block_ref().prop_map(ViewTarget::Block),
                prop::option::of(0u32..5).prop_map(|depth| ViewTarget::Neighborhood { depth })
            ],
            prop::option::of(view_mode())
        )
            .prop_map(|(target, mode)| Command::View(View { target, mode })),
        prop::option::of(1u32..100_000)
            .prop_map(|tokens| Command::View(View { target: ViewTarget::Map { tokens }, mode: None })),
    ]
}

fn ctx_command() -> impl Strategy<Value = Command> {
    let reason = prop::sample::select(vec![
        Reason::DirectReference,
        Reason::SemanticRelevance,
        Reason::StructuralContext,
        Reason::NavigationPath,
        Reason::UserPreference,
        Reason::AgentDecision,
        Reason::SystemRequired,
    ]);
    let direction = prop::sample::select(vec![
        CtxDirection::Up,
        CtxDirection::Down,
        CtxDirection::Both,
        CtxDirection::Semantic,
        CtxDirection::Auto,
    ]);
    let method =
        prop::sample::select(vec![CompressMethod::Truncate, CompressMethod::Summarize, CompressMethod::StructureOnly]);
    let format = prop::sample::select(vec![RenderFormat::Default, RenderFormat::ShortIds, RenderFormat::Markdown]);
    prop_oneof![
        (block_ref(), prop::option::of(reason), prop::option::of(fraction()))
            .prop_map(|(target, reason, relevance)| Ctx::Add { target, reason, relevance, note: None }),
        (block_ref(), text(), prop::option::of(fraction()))
            .prop_filter("a note is never a reason name", |(_, note, _)| {
                !REASON_NAMES.iter().any(|name| name.eq_ignore_ascii_case(note.trim_matches(['"', '\''])))
            })
            .prop_map(|(target, note, relevance)| Ctx::Add {
                target,
                reason: Some(Reason::AgentDecision),
                relevance,
                note: Some(note),
            }),
        Just(Ctx::AddResults),
        block_ref().prop_map(|parent| Ctx::AddChildren { parent }),
        (block_ref(), block_ref()).prop_map(|(from, to)| Ctx::AddPath { from, to }),
        block_ref().prop_map(|target| Ctx::Remove { target }),
        Just(Ctx::Clear),
        (direction, prop::option::of(0u32..9), prop::option::of(0u32..9999))
            .prop_map(|(direction, depth, tokens)| Ctx::Expand { direction, depth, tokens }),
        method.prop_map(|method| Ctx::Compress { method }),
        (prop::option::of(fraction()), prop::option::of(0u64..100_000))
            .prop_map(|(min_relevance, max_age)| Ctx::Prune { min_relevance, max_age }),
        prop::option::of(format).prop_map(|format| Ctx::Render { format }),
        Just(Ctx::Stats),
        prop::option::of(block_ref()).prop_map(|target| Ctx::Focus { target }),
    ]
    .prop_map(Command::Ctx)
}

fn command() -> impl Strategy<Value = Command> {
    let simple = prop_oneof![edit_command(), traversal_command(), ctx_command()];
    simple.prop_recursive(2, 12, 4, |inner| {
        prop::collection::vec(inner, 0..4).prop_map(|commands| Command::Atomic(Atomic { commands }))
    })
}

fn document() -> impl Strategy<Value = UclDocument> {
    let entry = (block_ref(), prop::collection::vec(block_ref(), 0..4))
        .prop_map(|(parent, children)| StructureEntry { parent, children });
    let def = (content_type(), block_ref(), properties(), content())
        .prop_map(|(content_type, id, properties, content)| BlockDef { content_type, id, properties, content });
    (prop::collection::vec(entry, 0..3), prop::collection::vec(def, 0..3), prop::collection::vec(command(), 0..4))
        .prop_map(|(structure, blocks, commands)| UclDocument { structure, blocks, commands })
}

/// Runs a property on a thread with a large stack: the recursive tree
/// strategies need more than the default 2 MiB in unoptimized builds.
fn check<S: Strategy + 'static>(cases: u32, strategy: fn() -> S, test: fn(S::Value) -> Result<(), TestCaseError>)
where
    S::Value: std::fmt::Debug,
{
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(cases));
            if let Err(failure) = runner.run(&strategy(), test) {
                panic!("{failure}");
            }
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn printed_commands_parse_back_equal() {
    check(
        512,
        || prop::collection::vec(command(), 1..6),
        |commands| {
            let text = print_commands(&commands);
            let parsed =
                parse_commands(&text).map_err(|e| TestCaseError::fail(format!("{}\n{text}", e.render(&text))))?;
            prop_assert_eq!(parsed, commands, "{}", text);
            Ok(())
        },
    );
}

#[test]
fn printed_documents_parse_back_equal() {
    check(256, document, |document| {
        let text = print_document(&document);
        let parsed = parse_document(&text).map_err(|e| TestCaseError::fail(format!("{}\n{text}", e.render(&text))))?;
        prop_assert_eq!(parsed, document, "{}", text);
        Ok(())
    });
}

proptest! {

    #[test]
    fn arbitrary_text_never_panics(source in "\\PC{0,200}") {
        let _ = parse_script(&source);
    }

    #[test]
    fn ucl_like_text_never_panics(source in prop::collection::vec(prop_oneof![
        Just("EDIT "), Just("APPEND "), Just("ATOMIC {"), Just("}"), Just("\n"), Just("blk_"), Just("\""), Just("'"),
        Just("["), Just("]"), Just("{"), Just("("), Just(")"), Just("::"), Just("|a|"), Just("WHERE "), Just("NOT "),
        Just("= "), Just("-- "), Just("\\u{"), Just("@"), Just("#"), Just("é"), Just("CTX "), Just("1"), Just(" "),
    ], 0..60)) {
        let source: String = source.concat();
        if let Err(errors) = parse_script(&source) {
            for error in &errors.0 {
                prop_assert!(error.line >= 1 && error.column >= 1);
                prop_assert!(error.span.end <= source.len());
                let _ = error.render(&source);
            }
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let source = format!("EDIT blk_a SET x = {}1{}", "[".repeat(10_000), "]".repeat(10_000));
    let errors = parse_commands(&source).unwrap_err();
    assert!(errors.0[0].message.contains("nesting deeper than"), "{errors}");
    let source = format!("PRUNE WHERE {}x{}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(parse_commands(&source).is_err());
    let source = format!("DELETE WHERE {}x", "NOT ".repeat(10_000));
    assert!(parse_commands(&source).is_err());
}
