//! The window's hard budget, over random command sequences on the Node.js
//! documentation excerpt: after every operation the rendering the budget
//! counts (exact tokenizer) fits `max_tokens` and equals the window's own
//! count, the window holds at most `max_blocks` entries, and with the ids
//! format counted every other format fits too.

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use ucpkit_context::{
    BudgetFormat, ContextWindow, Env, ExtractiveSummarizer, PruningPolicy, Representation, WindowConfig,
};
use ucpkit_context::{CompressMethod, CtxDirection, IdMapper, Reason, RenderFormat};
use ucpkit_core::{BlockId, BpeTokenizer, Document, Tokenizer};

fn corpus() -> &'static (Document, Vec<BlockId>) {
    static CORPUS: OnceLock<(Document, Vec<BlockId>)> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/node-excerpt");
        let doc =
            ucpkit_ingest::ingest(&[dir], "node", &ucpkit_ingest::IngestOptions::default(), &()).unwrap().document;
        let ids: Vec<BlockId> = doc.document_order().collect();
        (doc, ids)
    })
}

#[derive(Debug, Clone)]
enum Op {
    Add(usize, Reason),
    AddIfFits(usize, Representation),
    Remove(usize),
    Clear,
    Expand(CtxDirection, usize, Option<usize>),
    Compress(CompressMethod),
    Prune(Option<f64>),
    Focus(Option<usize>),
    Task(bool),
    Limits(usize, usize),
    Wait(i64),
}

fn reason() -> impl Strategy<Value = Reason> {
    prop_oneof![
        Just(Reason::DirectReference),
        Just(Reason::SemanticRelevance),
        Just(Reason::StructuralContext),
        Just(Reason::AgentDecision),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let index = 0usize..10_000;
    let direction = prop_oneof![
        Just(CtxDirection::Up),
        Just(CtxDirection::Down),
        Just(CtxDirection::Semantic),
        Just(CtxDirection::Auto)
    ];
    let method = prop_oneof![
        Just(CompressMethod::Truncate),
        Just(CompressMethod::Summarize),
        Just(CompressMethod::StructureOnly)
    ];
    prop_oneof![
        6 => (index.clone(), reason()).prop_map(|(i, r)| Op::Add(i, r)),
        2 => (index.clone(), prop_oneof![
            Just(Representation::Full),
            Just(Representation::Truncated),
            Just(Representation::StructureOnly)
        ])
        .prop_map(|(i, r)| Op::AddIfFits(i, r)),
        1 => index.clone().prop_map(Op::Remove),
        1 => Just(Op::Clear),
        3 => (direction, 1usize..4, proptest::option::of(50usize..3000)).prop_map(|(d, n, t)| Op::Expand(d, n, t)),
        1 => method.prop_map(Op::Compress),
        1 => proptest::option::of(0.0f64..1.0).prop_map(Op::Prune),
        1 => proptest::option::of(index.clone()).prop_map(Op::Focus),
        1 => any::<bool>().prop_map(Op::Task),
        1 => (40usize..6000, 1usize..60).prop_map(|(t, b)| Op::Limits(t, b)),
        1 => (0i64..600_000).prop_map(Op::Wait),
    ]
}

fn policy() -> impl Strategy<Value = PruningPolicy> {
    prop_oneof![
        Just(PruningPolicy::RelevanceFirst),
        Just(PruningPolicy::RecencyFirst),
        Just(PruningPolicy::RedundancyFirst),
        Just(PruningPolicy::Strategic),
    ]
}

fn check(window: &ContextWindow, env: &Env, tokenizer: &BpeTokenizer) {
    let max = window.config().max_tokens;
    let counted = match window.config().budget_format {
        BudgetFormat::Ids => RenderFormat::Default,
        BudgetFormat::Markdown => RenderFormat::Markdown,
    };
    let text = window.render(env, counted, &mut IdMapper::new());
    let rendered = tokenizer.count(&text);
    assert_eq!(rendered, window.tokens(), "the window's count differs from its rendering:\n{text}");
    assert!(rendered <= max, "{rendered} tokens > {max}");
    assert!(window.len() <= window.config().max_blocks);
    if counted == RenderFormat::Default {
        for format in [RenderFormat::ShortIds, RenderFormat::Markdown] {
            let text = window.render(env, format, &mut IdMapper::new());
            assert!(tokenizer.count(&text) <= max, "{format:?} over budget");
        }
    }
    assert_eq!(text, window.render(env, counted, &mut IdMapper::new()), "rendering is not deterministic");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_operation_keeps_the_window_within_budget(
        ops in proptest::collection::vec(op(), 1..40),
        policy in policy(),
        max_tokens in 60usize..4000,
        max_blocks in 1usize..80,
        markdown in any::<bool>(),
    ) {
        let (doc, ids) = corpus();
        let tokenizer = BpeTokenizer::default();
        let mut now = 1_700_000_000_000;
        let budget_format = if markdown { BudgetFormat::Markdown } else { BudgetFormat::Ids };
        let config = WindowConfig { max_tokens, max_blocks, policy, budget_format, ..WindowConfig::default() };
        let mut window = ContextWindow::new(config);
        let pick = |i: usize| ids[i % ids.len()];
        for op in ops {
            let env = Env { doc, tokenizer: &tokenizer, summarizer: &ExtractiveSummarizer, now_ms: now };
            match op {
                Op::Add(i, reason) => {
                    let before = (window.tokens(), window.len());
                    if window.add(&env, pick(i), reason, None).is_err() {
                        prop_assert_eq!(before, (window.tokens(), window.len()));
                    }
                }
                Op::AddIfFits(i, representation) => {
                    let before = (window.tokens(), window.len(), window.entries().to_vec());
                    match window.add_if_fits(&env, pick(i), Reason::AgentDecision, 0.5, representation) {
                        Ok(Some(admitted)) => prop_assert!(admitted.evicted.is_empty()),
                        Ok(None) => prop_assert_eq!(before, (window.tokens(), window.len(), window.entries().to_vec())),
                        Err(e) => panic!("{e}"),
                    }
                }
                Op::Remove(i) => {
                    let _ = window.remove(&env, pick(i));
                }
                Op::Clear => {
                    window.clear(&env);
                }
                Op::Expand(direction, depth, tokens) => {
                    let before = window.tokens();
                    let expansion = window.expand(&env, direction, depth, tokens);
                    if let Some(limit) = tokens {
                        prop_assert!(window.tokens().saturating_sub(before) <= limit);
                    }
                    prop_assert_eq!(expansion.tokens, window.tokens().saturating_sub(before));
                }
                Op::Compress(method) => {
                    let before = window.tokens();
                    window.compress(&env, method);
                    prop_assert!(window.tokens() <= before);
                }
                Op::Prune(min) => {
                    window.prune(&env, min, None);
                }
                Op::Focus(i) => window.set_focus(&env, i.map(pick)).unwrap(),
                Op::Task(on) => window.set_task(&env, on.then_some("parse a query string with punycode")),
                Op::Limits(tokens, blocks) => window.set_limits(&env, tokens, blocks),
                Op::Wait(ms) => now += ms,
            }
            check(&window, &env, &tokenizer);
        }
    }
}
