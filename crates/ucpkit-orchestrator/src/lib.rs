//! The orchestrator: the best context for a question within a token budget.
//!
//! 1. **Rank** the document's blocks for the question at three
//!    granularities (block, window, section; [`crate::rank`]) from the
//!    search index's postings; a provider without postings is searched
//!    instead (hybrid with a model, BM25 without).
//! 2. **Plan**: group the best ranked blocks by the section they lie in;
//!    each section is an [`ExplorationTask`] whose priority is its best
//!    block.
//! 3. **Explore**: sub-agents on as many threads as there are cores take
//!    tasks from the coordinator's work queue, each in a session of its own:
//!    it claims the section, runs the [`Policy`]'s commands, shares what it
//!    finds in the discovery pool and queues further sections (subsections,
//!    link targets) for any agent.
//! 4. **Assemble** one window from the pool within the budget
//!    (`assemble`) and render it.
//!
//! It drives sessions of a [`ucpkit_sessions::SessionHost`] like any client: this
//! crate is the host's first user, not part of it. The policy is the
//! heuristic's, or [`LlmPolicy`], where a model judges each section.

mod assemble;
mod code;
pub mod coordination;
mod heuristic;
#[cfg(feature = "llm")]
mod llm_policy;
pub mod policy;
pub mod rank;
mod subagent;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use ucpkit_core::outline;
use web_time::Instant;

use serde::Serialize;
use ucpkit_context::{RenderedPart, Representation};
use ucpkit_core::{BlockId, Document, IdMap, IdSet};
use ucpkit_search::{RagProvider, SearchOptions};
use ucpkit_ucl::RenderFormat;

use crate::coordination::AgentCoordinator;
#[cfg(feature = "llm")]
pub use crate::llm_policy::{LlmPolicy, PolicyStats, JUDGED_SECTIONS};
use crate::policy::{ExplorationTask, Policy, QueryTerms, TaskOrigin};
use ucpkit_sessions::AgentError;
use ucpkit_sessions::SessionHost;
use ucpkit_sessions::SessionId;

/// The model's nearest blocks fused into the ranking (with a model).
const SEMANTIC_HITS: usize = 50;

/// `provider`'s best `limit` hits for `question`, scores relative to the best.
fn search_hits(provider: &dyn RagProvider, question: &str, limit: usize) -> Result<Vec<(BlockId, f64)>, AgentError> {
    let options = SearchOptions { limit, ..SearchOptions::default() };
    let hits = provider.search(question, &options).map_err(|e| AgentError::SearchFailed(e.to_string()))?;
    let best = hits.iter().map(|h| h.score).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    Ok(hits.into_iter().map(|h| (h.id, h.score / best)).collect())
}

/// The content blocks of `layout` closest to `question` by meaning that a
/// ranking with a model fuses in ([`rank::rank_question`]), from 1 for
/// the nearest down to 0 for the last of the `SEMANTIC_HITS` (50) nearest;
/// blocks the layout does not rank (headings, titles and files) are left
/// out first. This is what a host that ranks before the job runs
/// ([`rank::QuestionRanking`]) passes on. A provider with a model but no
/// search by meaning alone gives the content blocks among its own
/// search's best hits instead, relative to the best of them.
///
/// Cosine similarities sit on a high floor (unrelated texts still score
/// 0.1 to 0.3), so taken relative to the best, as the lexical parts of
/// the ranking are, every hit would get most of a point; measured from
/// the last hit up they spread as the lexical parts do.
pub fn semantic_hits(
    provider: &dyn RagProvider,
    question: &str,
    layout: &rank::Layout,
) -> Result<Vec<(BlockId, f64)>, AgentError> {
    let ranked = |id: &BlockId| layout.section_root(*id).is_some();
    // Room for the headings among the nearest, which are left out.
    let options = SearchOptions { limit: 4 * SEMANTIC_HITS, ..SearchOptions::default() };
    let Some(hits) = provider.semantic_search(question, &options) else {
        let mut hits = search_hits(provider, question, 4 * SEMANTIC_HITS)?;
        hits.retain(|(id, _)| ranked(id));
        hits.truncate(SEMANTIC_HITS);
        let best = hits.first().map_or(1.0, |(_, score)| *score).max(f64::MIN_POSITIVE);
        return Ok(hits.into_iter().map(|(id, score)| (id, score / best)).collect());
    };
    let hits = hits.map_err(|e| AgentError::SearchFailed(e.to_string()))?;
    let nearest = hits.into_iter().map(|h| (h.id, h.score)).filter(|(id, _)| ranked(id)).take(SEMANTIC_HITS);
    Ok(spread_from_last(nearest.collect()))
}

/// Every candidate block of `traversal`'s document for `question`, best
/// first at 1, as the context job ranks them ([`rank::rank_question`]: the
/// index's postings at three granularities, with the model's nearest
/// blocks when the search provider has a model); `None` when the provider
/// gives no postings, an error when the host has no search provider.
pub fn question_ranking(traversal: &SessionHost, question: &str) -> Result<Option<rank::QuestionRanking>, AgentError> {
    let provider = traversal.search_provider().ok_or(AgentError::SearchNotConfigured)?;
    let engine = traversal.engine();
    let doc = engine.document();
    provider.sync(doc).map_err(|e| AgentError::SearchFailed(e.to_string()))?;
    rank_in(traversal, doc, provider.as_ref(), question)
}

/// [`question_ranking`] over `doc`, the search index already in step with it.
fn rank_in(
    traversal: &SessionHost,
    doc: &Document,
    provider: &dyn RagProvider,
    question: &str,
) -> Result<Option<rank::QuestionRanking>, AgentError> {
    let semantic = provider.capabilities().semantic;
    ranking_over(&rank::layout(traversal, doc), provider, question, semantic)
}

/// The ranking of `question` over the blocks `layout` lays out, from
/// `provider`'s postings, with its nearest blocks by meaning when
/// `semantic`: what [`question_ranking`] makes of a loaded document, and a
/// one-shot call of a stored layout. `None` when the provider gives no
/// postings.
pub fn ranking_over(
    layout: &rank::Layout,
    provider: &dyn RagProvider,
    question: &str,
    semantic: bool,
) -> Result<Option<rank::QuestionRanking>, AgentError> {
    let Some(postings) = provider.term_postings(question) else { return Ok(None) };
    let nearest = if semantic { Some(semantic_hits(provider, question, layout)?) } else { None };
    Ok(Some(rank::QuestionRanking::new(layout, question, postings, nearest.as_deref())))
}

/// `hits` (best first) rescaled from 0 for the last to 1 for the best;
/// all at 1 when they score alike.
fn spread_from_last(mut hits: Vec<(BlockId, f64)>) -> Vec<(BlockId, f64)> {
    let (Some(&(_, best)), Some(&(_, last))) = (hits.first(), hits.last()) else { return hits };
    let spread = best - last;
    for (_, score) in &mut hits {
        *score = if spread > f64::EPSILON { (*score - last) / spread } else { 1.0 };
    }
    hits
}

/// Tuning of the orchestrator.
#[derive(Debug, Clone, PartialEq)]
pub struct OrchestratorConfig {
    /// Sub-agents running at once (default: the number of cores; never
    /// more than `max_tasks`).
    pub agents: usize,
    /// Ranked blocks (or search hits) planned from.
    pub search_limit: usize,
    /// Sections explored at most, spawned ones included. The planned
    /// blocks outside any section (memories side by side), each a task
    /// of its own, come on top: they are [`Self::search_limit`] at most.
    pub max_tasks: usize,
    /// Spawned tasks below this priority are not queued.
    pub min_priority: f64,
    /// Blocks need at least this score (relative to the best) to go in;
    /// 0 fills the budget.
    pub min_block_score: f64,
    /// A block's neighbours in its section up to this many tokens go in
    /// with it: the short lines around a paragraph (a default, a type, a
    /// version note) are often what answers.
    pub neighbour_tokens: usize,
    /// Share of the budget that stubs of unopened sections may use (in the
    /// formats with ids; a markdown context has no stubs).
    pub stub_share: f64,
    /// How long a sub-agent's claim on its section lasts.
    pub claim_ttl: Duration,
}

impl Default for OrchestratorConfig {
    fn default() -> Self {
        OrchestratorConfig {
            agents: std::thread::available_parallelism().map_or(2, |n| n.get()),
            search_limit: 100,
            max_tasks: 32,
            min_priority: 0.05,
            min_block_score: 0.0,
            neighbour_tokens: 40,
            stub_share: 0.05,
            claim_ttl: Duration::from_secs(60),
        }
    }
}

/// What to build a context for.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextRequest {
    /// The question.
    pub question: String,
    /// The most tokens the rendered context may hold (exact tokenizer).
    pub budget: usize,
    /// How it is rendered (and counted).
    pub format: RenderFormat,
    /// What the context may hold.
    pub scope: Scope,
}

/// What a context may hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Scope {
    /// Every block.
    #[default]
    All,
    /// Only the blocks of source files (code read as symbols), with the
    /// code graph walked from the best of them: the functions they call
    /// and that call them, and the class of a method.
    Code,
}

impl ContextRequest {
    /// The largest budget a request may ask for (tokens).
    pub const MAX_BUDGET: usize = 10_000_000;

    /// The smallest budget a front end lets a user ask for: room for a
    /// heading line and a short block; anything less could hold nothing
    /// useful.
    pub const MIN_BUDGET: usize = 32;

    /// The budget of a context when none is asked for, in tokens.
    pub const DEFAULT_BUDGET: usize = 4000;

    /// A request for `question` within `budget` tokens, markdown, over
    /// every block; or, worded for a person, why a user's question and
    /// budget make none: an empty question, a budget outside
    /// [`Self::MIN_BUDGET`]..=[`Self::MAX_BUDGET`].
    pub fn asked(question: &str, budget: usize) -> Result<ContextRequest, String> {
        if question.trim().is_empty() {
            return Err("the question is empty".into());
        }
        if !(Self::MIN_BUDGET..=Self::MAX_BUDGET).contains(&budget) {
            return Err(format!(
                "the budget must be {} to {} tokens, not {budget}",
                Self::MIN_BUDGET,
                Self::MAX_BUDGET
            ));
        }
        Ok(ContextRequest { question: question.to_owned(), budget, format: RenderFormat::Markdown, scope: Scope::All })
    }

    /// Refuses a budget no context can meet (zero) or beyond
    /// [`Self::MAX_BUDGET`].
    pub fn check(&self) -> Result<(), AgentError> {
        if (1..=Self::MAX_BUDGET).contains(&self.budget) {
            Ok(())
        } else {
            Err(AgentError::InvalidArgument(format!(
                "budget {} is outside 1..={} tokens",
                self.budget,
                Self::MAX_BUDGET
            )))
        }
    }
}

/// One block of a built context.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextBlock {
    /// The block.
    pub id: BlockId,
    /// The stored document it is a block of (set by the library, which
    /// knows the name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
    /// Its role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The source file (its path inside the indexed corpus).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// First and last source line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<[u32; 2]>,
    /// Titles of the headings (and file) above it, outermost first.
    pub heading_path: Vec<String>,
    /// When and where it happened (session, time), for a block that
    /// records it: a conversation's turn kept as a memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occasion: Option<String>,
    /// The code symbol it defines (`Class.method`), for code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// How relevant the agents judged it (0..1).
    pub relevance: f64,
    /// How it is shown.
    pub representation: Representation,
    /// Tokens of its segment in the rendering.
    pub tokens: usize,
}

/// Where the time went, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Timings {
    /// Searching and planning.
    pub search_ms: f64,
    /// Sub-agents exploring.
    pub explore_ms: f64,
    /// Assembling and rendering.
    pub assemble_ms: f64,
    /// All of it.
    pub total_ms: f64,
}

/// A context built for a question.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BuiltContext {
    /// The rendered context.
    pub text: String,
    /// Its parts in order (group headers and blocks): joined, they are
    /// `text`. A context over several documents is merged from them.
    #[serde(skip)]
    pub parts: Vec<RenderedPart>,
    /// Its tokens (exact; never more than the budget).
    pub tokens: usize,
    /// The budget asked for.
    pub budget: usize,
    /// The blocks in it, in document order.
    pub blocks: Vec<ContextBlock>,
    /// Search hits planned from.
    pub hits: usize,
    /// Sections explored.
    pub tasks: usize,
    /// Sub-agents that ran at once (each explores one section at a time,
    /// in a session of its own).
    pub agents: usize,
    /// Discoveries the agents shared.
    pub discoveries: usize,
    /// Where the time went.
    pub timings: Timings,
}

/// Builds contexts for questions with sub-agents running a policy.
pub struct Orchestrator {
    policy: Arc<dyn Policy>,
    config: OrchestratorConfig,
}

fn millis(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

impl Orchestrator {
    /// An orchestrator running `policy` in its sub-agents.
    pub fn new(policy: Arc<dyn Policy>, config: OrchestratorConfig) -> Self {
        Orchestrator { policy, config }
    }

    /// Its settings.
    pub fn config(&self) -> &OrchestratorConfig {
        &self.config
    }

    /// The best context for `request` from `traversal`'s document. Needs a
    /// search provider; fails only when searching fails.
    pub fn context(&self, traversal: &SessionHost, request: &ContextRequest) -> Result<BuiltContext, AgentError> {
        request.check()?;
        traversal.admit()?;
        let started = Instant::now();
        let provider = traversal.search_provider().ok_or(AgentError::SearchNotConfigured)?;
        let (tasks, lone, hits, terms) = {
            let engine = traversal.engine();
            let doc = engine.document();
            let failed = |e: ucpkit_search::SearchError| AgentError::SearchFailed(e.to_string());
            provider.sync(doc).map_err(failed)?;
            let search = |limit: usize| search_hits(provider.as_ref(), &request.question, limit);
            let semantic = provider.capabilities().semantic;
            let kept = traversal
                .derived_kept::<rank::QuestionRanking>(doc)
                .filter(|kept| kept.semantic == semantic && kept.question == request.question);
            let (ranked, terms) = match kept {
                // This question's ranking, made before this job ran.
                Some(kept) => (kept.ranked.clone(), QueryTerms::from_postings(&request.question, &kept.postings)),
                None => match rank_in(traversal, doc, provider.as_ref(), &request.question)? {
                    // Every candidate keeps its score (so blocks past the
                    // planned ones are judged on the same scale).
                    Some(ranking) => (ranking.ranked, QueryTerms::from_postings(&request.question, &ranking.postings)),
                    // A provider without postings: its own search's hits.
                    None => (
                        search(self.config.search_limit)?,
                        QueryTerms::new(&request.question, provider.term_weights(&request.question)),
                    ),
                },
            };
            let ranked = match request.scope {
                Scope::All => ranked,
                Scope::Code => code::code_ranking(doc, ranked),
            };
            let terms = terms.with_ranking(&ranked);
            let planned = &ranked[..ranked.len().min(self.config.search_limit)];
            let (tasks, lone) = plan(doc, planned);
            (tasks, lone, planned.len(), terms)
        };
        let search_ms = millis(started);

        let explored = Instant::now();
        let run = Exploration::new(traversal, self, request, terms, lone);
        let tasks_run = run.explore(tasks);
        let explore_ms = millis(explored);

        let assembled = Instant::now();
        let Exploration { coordinator, sessions, refused, .. } = run;
        let sessions = sessions.into_inner().unwrap_or_else(|e| e.into_inner());
        if let (true, Some(refused)) = (sessions.is_empty(), refused.into_inner().unwrap_or_else(|e| e.into_inner())) {
            // Not one sub-agent could start: say why rather than return an empty context.
            return Err(refused);
        }
        // The job's coordinator (pool, claims, queue) goes with the job.
        let discoveries = coordinator.take_discoveries(&sessions);
        let mut built = assemble::assemble(traversal, &self.config, request, &discoveries)?;
        built.hits = hits;
        built.tasks = tasks_run;
        built.agents = agent_threads(&self.config).min(tasks_run);
        built.discoveries = discoveries.len();
        built.timings = Timings { search_ms, explore_ms, assemble_ms: millis(assembled), total_ms: millis(started) };
        Ok(built)
    }
}

/// The section a block belongs to: itself when it is a heading or a file,
/// else its nearest such ancestor (the block itself when it has none).
pub(crate) fn section_of(doc: &Document, id: BlockId) -> BlockId {
    let is_section = |b: BlockId| doc.get(b).is_some_and(crate::rank::is_section_root);
    std::iter::once(id).chain(doc.ancestors(id)).find(|b| !b.is_root() && is_section(*b)).unwrap_or(id)
}

/// Titles of a section and the headings above it, outermost first.
fn heading_path(doc: &Document, root: BlockId) -> Vec<String> {
    let mut titles = outline::path_titles(doc, root);
    titles.extend(doc.get(root).and_then(outline::title));
    titles
}

/// The sub-agent threads a job runs: no more than tasks can ever keep
/// busy, whatever was asked, and one at least.
fn agent_threads(config: &OrchestratorConfig) -> usize {
    config.agents.clamp(1, config.max_tasks.max(1))
}

/// One exploration task per section the hits fall in, best first; hit
/// scores are made relative to the best hit. A hit outside any section
/// is a task of its own: the roots of those come second
/// ([`Exploration::is_lone`]).
fn plan(doc: &Document, hits: &[(BlockId, f64)]) -> (Vec<ExplorationTask>, IdSet) {
    let best = hits.iter().map(|(_, s)| *s).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let mut tasks: Vec<ExplorationTask> = Vec::new();
    let mut index: IdMap<usize> = IdMap::default();
    for (id, score) in hits {
        if !doc.contains(*id) {
            continue;
        }
        let root = section_of(doc, *id);
        let relative = score / best;
        let at = *index.entry(root).or_insert_with(|| {
            tasks.push(ExplorationTask {
                root,
                heading_path: heading_path(doc, root),
                hits: Vec::new(),
                priority: 0.0,
                origin: TaskOrigin::Search,
            });
            tasks.len() - 1
        });
        let task = &mut tasks[at];
        task.hits.push((*id, relative));
        task.priority = task.priority.max(relative);
    }
    tasks.sort_by(|a, b| b.priority.total_cmp(&a.priority));
    let lone = tasks
        .iter()
        .filter(|task| doc.get(task.root).is_some_and(|b| !crate::rank::is_section_root(b)))
        .map(|task| task.root)
        .collect();
    (tasks, lone)
}

/// Marks a taken task done in its queue when dropped.
struct TaskDone<'a> {
    queue: &'a crate::coordination::WorkQueue<ExplorationTask>,
    job: crate::coordination::JobId,
}

impl Drop for TaskDone<'_> {
    fn drop(&mut self) {
        self.queue.done(self.job);
    }
}

/// The shared state of one orchestration's sub-agents.
struct Exploration<'a> {
    traversal: &'a SessionHost,
    /// What the job's sub-agents share: discoveries, claims, the work queue.
    coordinator: AgentCoordinator,
    orchestrator: &'a Orchestrator,
    request: &'a ContextRequest,
    terms: QueryTerms,
    /// Sections queued so far (never twice).
    queued: Mutex<IdSet>,
    /// The sub-agents' sessions.
    sessions: Mutex<Vec<SessionId>>,
    /// Why a sub-agent could not open its session (the engine was full).
    refused: Mutex<Option<AgentError>>,
    /// Section tasks taken so far (run while within the cap).
    started: AtomicUsize,
    /// The roots of the planned blocks outside any section ([`plan`]).
    lone_roots: IdSet,
    /// Lone tasks ([`Exploration::is_lone`]) run.
    lone: AtomicUsize,
}

impl<'a> Exploration<'a> {
    fn new(
        traversal: &'a SessionHost,
        orchestrator: &'a Orchestrator,
        request: &'a ContextRequest,
        terms: QueryTerms,
        lone_roots: IdSet,
    ) -> Self {
        Exploration {
            traversal,
            coordinator: AgentCoordinator::new(traversal.clock()),
            orchestrator,
            request,
            terms,
            queued: Mutex::new(IdSet::default()),
            sessions: Mutex::new(Vec::new()),
            refused: Mutex::new(None),
            started: AtomicUsize::new(0),
            lone_roots,
            lone: AtomicUsize::new(0),
        }
    }

    /// Whether `task` is a planned block outside any section (a memory
    /// among others side by side). Such a task is little work, and it does
    /// not count among [`OrchestratorConfig::max_tasks`]: counted, 32 of
    /// them left about a quarter of a context over memories empty. Tasks
    /// a policy spawns (links, subsections) count among the sections.
    fn is_lone(&self, task: &ExplorationTask) -> bool {
        task.origin == TaskOrigin::Search && self.lone_roots.contains(&task.root)
    }

    /// Queues `task` unless its section was queued already or it is too
    /// weak to bother.
    fn offer(&self, job: crate::coordination::JobId, task: ExplorationTask) {
        if task.priority < self.orchestrator.config.min_priority {
            return;
        }
        if !self.queued.lock().unwrap_or_else(|e| e.into_inner()).insert(task.root) {
            return;
        }
        let priority = task.priority;
        self.coordinator.queue.push(job, task, priority);
    }

    /// Runs the sub-agents until no task is left; returns how many ran.
    fn explore(&self, tasks: Vec<ExplorationTask>) -> usize {
        let queue = &self.coordinator.queue;
        let job = queue.open_job();
        let max_tasks = self.orchestrator.config.max_tasks;
        let mut sections = 0;
        for task in tasks {
            if self.is_lone(&task) {
                self.offer(job, task);
            } else if sections < max_tasks {
                sections += 1;
                self.offer(job, task);
            }
        }
        let agents = agent_threads(&self.orchestrator.config);
        let agent = || {
            while let Some(task) = queue.take(job) {
                // Done even when the sub-agent panics, so the other agents
                // stop waiting for its work (the panic then reaches the
                // caller when the scope ends).
                let _done = TaskDone { queue, job };
                let run = if self.is_lone(&task) {
                    self.lone.fetch_add(1, Ordering::SeqCst);
                    true
                } else {
                    self.started.fetch_add(1, Ordering::SeqCst) < max_tasks
                };
                if run {
                    for spawned in subagent::run(self, &task) {
                        self.offer(job, spawned);
                    }
                }
            }
        };
        if agents == 1 {
            // One agent runs on the caller's thread (hosts without threads
            // ask for one).
            agent();
        } else {
            std::thread::scope(|scope| {
                let started = (0..agents)
                    .map_while(|n| {
                        std::thread::Builder::new().name(format!("agent-{n}")).spawn_scoped(scope, agent).ok()
                    })
                    .count();
                // No thread could start (the process limit is reached):
                // the caller's thread explores alone.
                if started == 0 {
                    agent();
                }
            });
        }
        queue.remove(job);
        self.started.load(Ordering::SeqCst).min(max_tasks) + self.lone.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_search::{RagCapabilities, SearchError, SearchHit};

    /// A provider with a model whose `hits` come from its search by
    /// meaning alone, or, when it has none (`by_meaning` false), from its
    /// own search.
    struct WithModel {
        hits: Vec<SearchHit>,
        by_meaning: bool,
    }

    impl RagProvider for WithModel {
        fn name(&self) -> &str {
            "hybrid"
        }

        fn capabilities(&self) -> RagCapabilities {
            RagCapabilities { lexical: true, semantic: true }
        }

        fn search(&self, _query: &str, _options: &SearchOptions) -> Result<Vec<SearchHit>, SearchError> {
            Ok(if self.by_meaning { Vec::new() } else { self.hits.clone() })
        }

        fn semantic_search(
            &self,
            _query: &str,
            options: &SearchOptions,
        ) -> Option<Result<Vec<SearchHit>, SearchError>> {
            self.by_meaning.then(|| Ok(self.hits.iter().take(options.limit).cloned().collect()))
        }
    }

    /// A section heading and its two paragraphs, with the layout ranking them.
    fn streams() -> (rank::Layout, [BlockId; 3]) {
        let doc = ucpkit_ingest::markdown_document(
            "guide",
            "# Streams\n\nData flows in chunks.\n\nA buffer holds them.\n",
            &ucpkit_ingest::IngestOptions::default(),
        );
        let heading = doc.children(doc.root())[0];
        let blocks = [heading, doc.children(heading)[0], doc.children(heading)[1]];
        (rank::Layout::build(&doc, None), blocks)
    }

    #[test]
    fn the_nearest_content_blocks_spread_from_the_last_and_headings_take_no_place() {
        let (layout, [heading, chunks, buffer]) = streams();
        let hit = |id, score| SearchHit { id, score };
        let hits = vec![hit(heading, 0.9), hit(buffer, 0.6), hit(chunks, 0.3), hit(heading, 0.1)];
        let provider = WithModel { hits, by_meaning: true };
        assert_eq!(semantic_hits(&provider, "buffer", &layout).unwrap(), vec![(buffer, 1.0), (chunks, 0.0)]);
    }

    #[test]
    fn a_provider_without_search_by_meaning_alone_gives_its_searchs_content_blocks() {
        let (layout, [heading, chunks, buffer]) = streams();
        let hit = |id, score| SearchHit { id, score };
        let provider =
            WithModel { hits: vec![hit(heading, 0.9), hit(buffer, 0.6), hit(chunks, 0.3)], by_meaning: false };
        assert_eq!(semantic_hits(&provider, "buffer", &layout).unwrap(), vec![(buffer, 1.0), (chunks, 0.5)]);
    }

    fn id(n: u8) -> BlockId {
        BlockId::from_bytes([n; 12])
    }

    #[test]
    fn nearest_blocks_spread_from_the_last_to_the_best() {
        let spread = spread_from_last(vec![(id(1), 0.62), (id(2), 0.5), (id(3), 0.32)]);
        let scores: Vec<f64> = spread.iter().map(|(_, s)| *s).collect();
        assert_eq!(spread.iter().map(|(b, _)| *b).collect::<Vec<_>>(), vec![id(1), id(2), id(3)]);
        assert!(
            (scores[0] - 1.0).abs() < 1e-9 && (scores[1] - 0.6).abs() < 1e-9 && scores[2].abs() < 1e-9,
            "{scores:?}"
        );
    }

    #[test]
    fn nearest_blocks_that_score_alike_all_count_in_full() {
        assert_eq!(spread_from_last(vec![(id(1), 0.4)]), vec![(id(1), 1.0)]);
        assert_eq!(spread_from_last(vec![(id(1), 0.4), (id(2), 0.4)]), vec![(id(1), 1.0), (id(2), 1.0)]);
        assert!(spread_from_last(Vec::new()).is_empty());
    }
}
