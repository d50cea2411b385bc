//! The orchestrator end to end over the Node.js excerpt: search, sub-agents
//! running a policy in parallel, one window within the budget.

#[path = "../../ucpkit-sessions/tests/common/mod.rs"]
mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{searchable, TempIndex};
use proptest::prelude::*;
use ucpkit_core::{BpeTokenizer, Tokenizer};
use ucpkit_engine::Engine;
use ucpkit_orchestrator::coordination::{DiscoveryRelevance, NewDiscovery};
use ucpkit_orchestrator::policy::{Decision, Exploration, HeuristicPolicy, Policy};
use ucpkit_orchestrator::{ContextRequest, Orchestrator, OrchestratorConfig, Scope};
use ucpkit_sessions::{AgentError, SessionHost};
use ucpkit_ucl::RenderFormat;

fn heuristic() -> Orchestrator {
    Orchestrator::new(Arc::new(HeuristicPolicy::default()), OrchestratorConfig { agents: 4, ..Default::default() })
}

fn request(question: &str, budget: usize, format: RenderFormat) -> ContextRequest {
    ContextRequest { question: question.to_owned(), budget, format, scope: Scope::All }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_context_holds_the_answers_with_their_sources() {
    let traversal = searchable();
    let question = "In the node inspect debugger, how do I step out of the current function?";
    let built = heuristic().context(&traversal, &request(question, 1000, RenderFormat::Markdown)).unwrap();
    assert!(collapse(&built.text).contains("`out`, `o`: Step out"), "{}", built.text);
    assert!(built.tokens <= 1000 && built.tokens > 0);
    assert_eq!(built.tokens, BpeTokenizer::default().count(&built.text), "tokens are the exact count");
    assert!(built.hits > 0 && built.tasks > 0 && built.agents > 0 && built.discoveries > 0);
    let stepping = built
        .blocks
        .iter()
        .find(|b| b.heading_path.last().is_some_and(|h| h == "Stepping"))
        .expect("a block of the Stepping section");
    assert_eq!(stepping.file.as_deref(), Some("debugger.md"));
    let [first, last] = stepping.lines.unwrap();
    assert!(first >= 106 && last >= first, "lines {first}-{last} lie in the Stepping section");
    assert_eq!(stepping.heading_path[..2], ["debugger.md".to_owned(), "Debugger".to_owned()]);
    // Sub-agents leave nothing behind: their sessions are gone (their
    // claims and discoveries lived in the job's own coordinator).
    assert!(traversal.list_sessions().is_empty());
}

#[test]
fn every_format_stays_within_its_budget() {
    let traversal = searchable();
    let tokenizer = BpeTokenizer::default();
    for format in [RenderFormat::Default, RenderFormat::ShortIds, RenderFormat::Markdown] {
        for budget in [60, 300, 1500] {
            let built = heuristic().context(&traversal, &request("punycode encode domain", budget, format)).unwrap();
            assert!(built.tokens <= budget, "{format:?} at {budget}: {}", built.tokens);
            assert_eq!(built.tokens, tokenizer.count(&built.text));
            assert!(!built.blocks.is_empty(), "{format:?} at {budget}: something fits");
        }
    }
    let ids = heuristic().context(&traversal, &request("punycode encode", 600, RenderFormat::Default)).unwrap();
    assert!(ids.text.contains("[blk_"), "the default format shows ids");
}

#[test]
fn a_question_nothing_matches_gives_an_empty_context() {
    let traversal = searchable();
    let built = heuristic().context(&traversal, &request("xylophone marmalade", 500, RenderFormat::Markdown)).unwrap();
    assert!(built.blocks.is_empty() && built.text.is_empty() && built.tokens == 0);
}

#[test]
fn a_budget_out_of_range_is_refused_not_answered_empty() {
    let traversal = searchable();
    for budget in [0, ContextRequest::MAX_BUDGET + 1] {
        let refused = heuristic().context(&traversal, &request("punycode", budget, RenderFormat::Markdown));
        match refused {
            Err(AgentError::InvalidArgument(message)) => assert!(message.contains("budget"), "{message}"),
            other => panic!("budget {budget}: {other:?}"),
        }
    }
}

#[test]
fn sub_agents_take_no_client_session_slot() {
    let mut traversal = common::traversal_with(ucpkit_sessions::GlobalLimits { max_sessions: 1, ..Default::default() });
    traversal.set_search(Arc::new(common::TempIndex::new(&common::node_excerpt())));
    let client = traversal.create_session(ucpkit_sessions::SessionConfig::default()).unwrap();
    // Every client slot is taken; the sub-agents still get sessions.
    let built = heuristic()
        .context(&traversal, &request("step out of the current function", 500, RenderFormat::Markdown))
        .unwrap();
    assert!(!built.blocks.is_empty());
    let listed: Vec<_> = traversal.list_sessions().into_iter().map(|s| s.id).collect();
    assert_eq!(listed, [client], "the sub-agents' sessions are closed");
    let refused = traversal.create_session(ucpkit_sessions::SessionConfig::default());
    assert!(matches!(refused, Err(AgentError::MaxSessionsReached(1))), "{refused:?}");
}

#[test]
fn a_context_is_one_request_to_the_rate_limit() {
    let mut traversal =
        common::traversal_with(ucpkit_sessions::GlobalLimits { max_ops_per_second: 3, ..Default::default() });
    traversal.set_search(Arc::new(common::TempIndex::new(&common::node_excerpt())));
    // A clock that stands still: the bucket never refills.
    traversal.set_clock(|| 1_000_000);
    let ask =
        || heuristic().context(&traversal, &request("step out of the current function", 2000, RenderFormat::Markdown));
    // Each context runs dozens of sub-agent commands, none of them charged.
    for _ in 0..3 {
        let built = ask().unwrap();
        assert!(!built.blocks.is_empty());
    }
    assert!(matches!(ask(), Err(AgentError::RateLimitExceeded(3))), "the fourth request is over the limit");
}

#[test]
fn without_a_search_provider_it_says_so() {
    let traversal = common::traversal();
    let failed = heuristic().context(&traversal, &request("anything", 500, RenderFormat::Markdown));
    assert!(matches!(failed, Err(AgentError::SearchNotConfigured)), "{failed:?}");
}

/// A policy that shares the first block of each section it is given and
/// stops: the orchestrator runs it like any other.
struct FirstBlockOnly {
    decided: AtomicUsize,
}

impl Policy for FirstBlockOnly {
    fn name(&self) -> &str {
        "first block only"
    }

    fn decide(&self, exploration: &Exploration<'_>) -> Decision {
        self.decided.fetch_add(1, Ordering::SeqCst);
        let Some(&(hit, _)) = exploration.task.hits.first() else {
            return Decision { done: true, ..Default::default() };
        };
        Decision {
            share: vec![NewDiscovery {
                block_ids: vec![hit],
                relevance: DiscoveryRelevance::High,
                score: 1.0,
                reason: "first hit".into(),
                metadata: BTreeMap::from([("section".to_owned(), exploration.task.root.to_string())]),
                ttl: Duration::from_secs(60),
            }],
            done: true,
            ..Default::default()
        }
    }
}

#[test]
fn any_policy_plugs_in() {
    let traversal = searchable();
    let policy = Arc::new(FirstBlockOnly { decided: AtomicUsize::new(0) });
    let orchestrator = Orchestrator::new(policy.clone(), OrchestratorConfig { agents: 3, ..Default::default() });
    let built = orchestrator.context(&traversal, &request("punycode encode", 4000, RenderFormat::Markdown)).unwrap();
    assert_eq!(policy.decided.load(Ordering::SeqCst), built.tasks, "one decision per task");
    assert!(!built.blocks.is_empty());
    assert!(built.blocks.iter().all(|b| b.relevance == 1.0), "only what the policy shared: {:?}", built.blocks);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn never_over_budget(
        budget in 1usize..2500,
        question in prop::sample::select(vec![
            "How do I enable corepack?",
            "querystring parse options maxKeys",
            "debugger breakpoints setBreakpoint",
            "stability index deprecated",
            "punycode ucs2 decode",
        ]),
        format in prop::sample::select(vec![RenderFormat::Default, RenderFormat::ShortIds, RenderFormat::Markdown]),
    ) {
        let traversal = searchable();
        let built = heuristic().context(&traversal, &request(question, budget, format)).unwrap();
        prop_assert!(built.tokens <= budget);
        prop_assert_eq!(built.tokens, BpeTokenizer::default().count(&built.text));
        let total: usize = built.blocks.iter().map(|b| b.tokens).sum();
        prop_assert!(total <= budget);
    }
}

const CACHE: &str = "# Cache\n\n## Entry limit\n\nThe in-memory cache keeps recently used entries up to a fixed limit.\n\n\
    **Default:** `512`\n\nAn entry larger than half the cache is never stored in the in-memory cache: it is read again each time.\n";

/// The context for `question` over the cache page with `neighbour_tokens`.
fn cache_context(question: &str, budget: usize, neighbour_tokens: usize) -> String {
    let doc = ucpkit_ingest::markdown_document("cache", CACHE, &ucpkit_ingest::IngestOptions::default());
    let mut traversal = SessionHost::new(Engine::new(doc.clone()));
    traversal.set_search(Arc::new(TempIndex::new(&doc)));
    let config = OrchestratorConfig { agents: 2, neighbour_tokens, ..Default::default() };
    let orchestrator = Orchestrator::new(Arc::new(HeuristicPolicy::default()), config);
    orchestrator.context(&traversal, &request(question, budget, RenderFormat::Markdown)).unwrap().text
}

#[test]
fn a_chosen_block_brings_its_short_neighbours() {
    let question = "How many entries does the in-memory cache keep?";
    // Room for the best paragraph and one more block: its short neighbour
    // comes with it, before the next paragraph the ranking prefers.
    let with = cache_context(question, 46, 40);
    assert!(with.contains("keeps recently used entries"), "{with}");
    assert!(with.contains("**Default:** `512`"), "{with}");
    assert!(!with.contains("never stored"), "{with}");
    let without = cache_context(question, 46, 0);
    assert!(without.contains("never stored") && !without.contains("`512`"), "{without}");
}

/// A short chat whose first turn ends on `mark`.
fn chat(mark: char) -> ucpkit_core::Document {
    let text = format!(
        "# Chat\n\nAna: The fair opens on Friday. Are you going to the fair{mark}\n\nBo: {REPLY}\n\n\
         Ana: The weather looks fine and the fields are dry after a long month of work on the farm, \
         and the harvest is nearly in, so the barn is full again for the winter.\n\n\
         Bo: I went to the fair last year.\n\nAna: Sounds fun.\n"
    );
    ucpkit_ingest::markdown_document("chat", &text, &ucpkit_ingest::IngestOptions::default())
}

/// The orchestrator the chat tests use: no short neighbours.
fn chat_orchestrator() -> Orchestrator {
    let config = OrchestratorConfig { agents: 2, neighbour_tokens: 0, ..Default::default() };
    Orchestrator::new(Arc::new(HeuristicPolicy::default()), config)
}

/// The context for "the fair" over [`chat`] with `mark`.
fn chat_context(mark: char, budget: usize) -> String {
    let doc = chat(mark);
    let mut traversal = SessionHost::new(Engine::new(doc.clone()));
    traversal.set_search(Arc::new(TempIndex::new(&doc)));
    chat_orchestrator().context(&traversal, &request("the fair", budget, RenderFormat::Markdown)).unwrap().text
}

const REPLY: &str = "Nope, but it is my first time going, and I have wanted to see the old castle and the \
    parade with the lights since I was small, so I saved up all year and booked the train tickets for the \
    whole family to come along with me.";

#[test]
fn a_block_that_ends_on_a_question_brings_its_answer() {
    // Room for the turns naming the fair and one long turn: the reply to
    // the question takes it; after a statement, the ranking's choice does.
    let asked = chat_context('?', 100);
    assert!(asked.contains(REPLY) && !asked.contains("harvest"), "{asked}");
    let stated = chat_context('.', 100);
    assert!(!stated.contains(REPLY) && stated.contains("harvest"), "{stated}");
}

#[test]
fn an_answer_a_part_of_the_document_lacks_is_noted_for_the_next_read() {
    // A one-shot call runs on the part of a stored document it read, ranked
    // by the whole document's layout: the answer may not be there yet.
    let whole = chat('?');
    let reply = whole.blocks().find(|b| b.plain_text().contains(REPLY)).map(|b| b.id).unwrap();
    let mut part = whole.clone();
    part.remove_block(reply, ucpkit_core::RemoveMode::Cascade).unwrap();
    let absent = part.partial();
    let mut traversal = SessionHost::new(Engine::new(part));
    traversal.set_search(Arc::new(TempIndex::new(&whole)));
    let layout = Arc::new(ucpkit_orchestrator::rank::Layout::build(&whole, None));
    traversal.provide_derived(traversal.engine().document(), layout);
    let built = chat_orchestrator().context(&traversal, &request("the fair", 100, RenderFormat::Markdown)).unwrap();
    assert!(built.text.contains("Are you going to the fair?"), "{}", built.text);
    assert!(absent.take().contains(&reply), "the reply is to be read");
}

#[test]
fn blocks_outside_any_section_are_tasks_on_top_of_the_sections_cap() {
    // Five notes under no heading, then six sections about herons that
    // rank above the notes: sections must not take the notes' turns.
    let mut text = String::new();
    for n in 0..5 {
        text.push_str(&format!("Note {n}: a heron stood in the reeds.\n\n"));
    }
    for n in 0..6 {
        text.push_str(&format!(
            "## Walk {n}: herons\n\nOn walk {n} a heron flew over the lake, then a second heron.\n\n"
        ));
    }
    let doc = ucpkit_ingest::markdown_document("walks", &text, &ucpkit_ingest::IngestOptions::default());
    let mut traversal = SessionHost::new(Engine::new(doc.clone()));
    traversal.set_search(Arc::new(TempIndex::new(&doc)));
    let config = OrchestratorConfig { agents: 2, max_tasks: 2, neighbour_tokens: 0, ..Default::default() };
    let orchestrator = Orchestrator::new(Arc::new(HeuristicPolicy::default()), config);
    let built =
        orchestrator.context(&traversal, &request("Where was the heron?", 2000, RenderFormat::Markdown)).unwrap();
    assert_eq!(built.tasks, 2 + 5, "two sections, and the five notes on top");
    for n in 0..5 {
        assert!(built.text.contains(&format!("Note {n}: a heron")), "{}", built.text);
    }
    let walks = (0..6).filter(|n| built.text.contains(&format!("On walk {n} a heron"))).count();
    assert_eq!(walks, 2, "sections stay within the cap: {}", built.text);
}
