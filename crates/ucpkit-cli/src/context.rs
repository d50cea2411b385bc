//! `ucp context` (the main job) and `ucp eval` (its evaluation harness).

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::Arc;

use clap::ValueEnum;
use ucpkit_eval::{FlatChunks, Orchestrated, Outcome, Ranking};
use ucpkit_workspace::vocabulary::RenderFormat;
use ucpkit_workspace::vocabulary::Tokenizer as _;
use ucpkit_workspace::vocabulary::{load_embedder, Mode};
use ucpkit_workspace::{ContextOptions, IndexOptions, Scope, SharedPolicy, Sources, DEFAULT_BUDGET, MIN_BUDGET};

use crate::{print, print_json, Cli};

/// How `ucp context` renders.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ContextFormat {
    /// Markdown under `§ file > heading` lines: every token goes to text.
    Markdown,
    /// Every block under its full id.
    Default,
    /// Every block under a short id (`1`, `2` ...).
    #[value(name = "short_ids")]
    ShortIds,
}

impl From<ContextFormat> for RenderFormat {
    fn from(format: ContextFormat) -> RenderFormat {
        match format {
            ContextFormat::Markdown => RenderFormat::Markdown,
            ContextFormat::Default => RenderFormat::Default,
            ContextFormat::ShortIds => RenderFormat::ShortIds,
        }
    }
}

/// The most sub-agents a command line may ask for.
const MAX_AGENTS: usize = 256;

/// Arguments of `ucp context`.
#[derive(clap::Args)]
pub(crate) struct ContextArgs {
    /// The question.
    question: String,
    /// Index this file or folder first (into the store, under --doc or the
    /// folder's name; an unchanged corpus is not indexed again).
    #[arg(long, value_name = "PATH")]
    corpus: Option<PathBuf>,
    /// Most tokens of the context (counted exactly, o200k).
    #[arg(long, default_value_t = DEFAULT_BUDGET, value_name = "TOKENS", value_parser = crate::count_in(MIN_BUDGET, crate::MAX_BUDGET))]
    budget: usize,
    /// How the context is rendered.
    #[arg(long, value_enum, default_value_t = ContextFormat::Markdown)]
    format: ContextFormat,
    /// Sub-agents exploring at once (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = crate::count_in(1, MAX_AGENTS))]
    agents: Option<usize>,
    /// Only source code (read as symbols), with the code graph walked from
    /// the best hits: for a question that is an issue about the code.
    #[arg(long)]
    code: bool,
    /// Every document of the store (memories and plans excepted): one
    /// ranking and one budget across them, with --doc's too.
    #[arg(long)]
    all: bool,
    /// Memories too (the project's, or with --memory=NAMESPACE that
    /// namespace's), ranked with the documents' blocks.
    #[arg(long, value_name = "NAMESPACE", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    memory: Option<String>,
    #[command(flatten)]
    policy: PolicyArgs,
}

/// The traversal policy of `ucp context` and `ucp eval`.
#[derive(clap::Args)]
pub(crate) struct PolicyArgs {
    /// A model judges each explored section's blocks (in UCL) instead of
    /// the heuristic alone; the model comes from the configuration or the
    /// flags (--base-url, --llm ...).
    #[arg(long)]
    llm_policy: bool,
    #[command(flatten)]
    llm: crate::agent::LlmArgs,
}

impl PolicyArgs {
    /// The LLM policy when asked for.
    fn policy(&self, cli: &Cli) -> anyhow::Result<Option<Arc<ucpkit_workspace::vocabulary::LlmPolicy>>> {
        if !self.llm_policy {
            if self.llm.given() {
                anyhow::bail!("the model flags (--api, --base-url, --llm, --provider) need --llm-policy");
            }
            return Ok(None);
        }
        let setup = self.llm.setup(cli)?;
        let choice = setup.config.choose(&setup.config.settings(None), &setup.overrides)?;
        Ok(Some(Arc::new(ucpkit_workspace::vocabulary::LlmPolicy::new(ucpkit_registry::parts::llm::connect(&choice)?))))
    }
}

/// Says on stderr how a model's judgements went.
fn report_policy(policy: Option<&ucpkit_workspace::vocabulary::LlmPolicy>) {
    use std::sync::atomic::Ordering::Relaxed;
    if let Some(policy) = policy {
        let stats = policy.stats();
        eprintln!(
            "llm policy: {} model calls, {} invalid replies, {} sections left to the heuristic, {} blocks added",
            stats.calls.load(Relaxed),
            stats.invalid.load(Relaxed),
            stats.fallbacks.load(Relaxed),
            stats.added.load(Relaxed)
        );
    }
}

/// Arguments of `ucp eval`.
#[derive(clap::Args)]
pub(crate) struct EvalArgs {
    /// The question file (JSON lines: id, question, answers, gold, kind).
    questions: PathBuf,
    /// Budgets to evaluate at (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1000,2000,4000",
        value_name = "TOKENS",
        value_parser = crate::count_in(MIN_BUDGET, crate::MAX_BUDGET)
    )]
    budget: Vec<usize>,
    /// How contexts are rendered (and counted).
    #[arg(long, value_enum, default_value_t = ContextFormat::Markdown)]
    format: ContextFormat,
    /// Sub-agents exploring at once (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = crate::count_in(1, MAX_AGENTS))]
    agents: Option<usize>,
    /// Run only the engine, not the baselines.
    #[arg(long)]
    no_baselines: bool,
    /// Print every question's result too.
    #[arg(long)]
    per_question: bool,
    /// Only the first N questions.
    #[arg(long, value_name = "N", value_parser = crate::count_in(1, usize::MAX))]
    first: Option<usize>,
    /// Ask every document of the store at once (as `ucp context --all`);
    /// several --doc, --all or --memory run the engine alone, no baselines.
    #[arg(long)]
    all: bool,
    /// Memories too (the project's, or --memory=NAMESPACE's), as `ucp context --memory`.
    #[arg(long, value_name = "NAMESPACE", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    memory: Option<String>,
    #[command(flatten)]
    policy: PolicyArgs,
}

/// The sources --doc, --all and --memory name.
fn sources(cli: &Cli, all: bool, memory: Option<&String>) -> Sources {
    Sources { documents: cli.docs.clone(), all, memory: memory.map(|ns| Some(ns.clone()).filter(|ns| !ns.is_empty())) }
}

pub(crate) fn context(cli: &Cli, args: &ContextArgs) -> anyhow::Result<()> {
    let library = cli.library(args.corpus.is_some())?;
    let policy = args.policy.policy(cli)?;
    let options = ContextOptions {
        budget: args.budget,
        format: args.format.into(),
        agents: args.agents,
        scope: if args.code { Scope::Code } else { Scope::All },
        policy: policy.clone().map(|p| SharedPolicy(p as Arc<dyn ucpkit_workspace::vocabulary::Policy>)),
        ..ContextOptions::new(args.question.clone())
    };
    let mut sources = sources(cli, args.all, args.memory.as_ref());
    if let Some(path) = &args.corpus {
        if cli.docs.len() > 1 {
            anyhow::bail!("--corpus is indexed under one --doc name, not {}", cli.docs.len());
        }
        let indexed = library.index_stored(std::slice::from_ref(path), cli.doc(), &IndexOptions::default(), &())?;
        if indexed.changed && !cli.json {
            eprintln!(
                "ucp: indexed {} as {} ({} files, {} blocks)",
                path.display(),
                indexed.name,
                indexed.report.files,
                indexed.report.blocks
            );
        }
        sources.documents = vec![indexed.name];
    }
    // Only what the question reaches is read, when the store allows.
    let built = library.context_across(&sources, &options)?;
    report_policy(policy.as_deref());
    let names = library.source_names(&sources)?;
    let name = names.join(", ");
    if cli.json {
        let document = match names.as_slice() {
            [one] => serde_json::json!(one),
            many => serde_json::json!(many),
        };
        return print_json(&serde_json::json!({
            "document": document,
            "question": args.question,
            "context": built,
        }));
    }
    if built.blocks.is_empty() {
        eprintln!("ucp: nothing in {name} matches {:?}", args.question);
        return Ok(());
    }
    let mut text = built.text;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    print(&text)?;
    eprintln!(
        "ucp: {} blocks, {} of {} tokens, from {} sections explored by {} sub-agents in {:.0} ms",
        built.blocks.len(),
        built.tokens,
        built.budget,
        built.tasks,
        built.agents,
        built.timings.total_ms
    );
    Ok(())
}

pub(crate) fn eval(cli: &Cli, args: &EvalArgs) -> anyhow::Result<()> {
    if args.budget.is_empty() || args.budget.contains(&0) {
        anyhow::bail!("--budget needs one or more budgets above 0");
    }
    let mut questions = ucpkit_eval::load_questions(&args.questions)?;
    if let Some(first) = args.first {
        questions.truncate(first);
    }
    let library = cli.library(false)?;
    if args.all || args.memory.is_some() || cli.docs.len() > 1 {
        return eval_across(cli, args, &library, questions);
    }
    let workspace = cli.workspace(&library)?;
    let name = workspace.name();
    let tokenizer = ucpkit_workspace::vocabulary::BpeTokenizer::default();
    let chunks = if args.no_baselines {
        None
    } else {
        let embedder = cli.model.as_deref().map(load_embedder).transpose()?;
        if embedder.is_some() && !cli.json {
            eprintln!("ucp: indexing the baseline's chunks (embedding them once; later runs reuse them)");
        }
        let dir = ucpkit_workspace::vocabulary::index_dir(
            library.store_dir(),
            &format!("{name}#chunks{}", ucpkit_eval::CHUNK_TOKENS),
        );
        let engine = workspace.traversal().engine();
        Some(FlatChunks::open(engine.document(), &dir, embedder, Box::new(tokenizer), &())?)
    };
    let policy = args.policy.policy(cli)?;
    let orchestrator = ContextOptions {
        agents: args.agents,
        policy: policy.clone().map(|p| SharedPolicy(p as Arc<dyn ucpkit_workspace::vocabulary::Policy>)),
        ..ContextOptions::new("")
    }
    .orchestrator();
    let ours =
        Orchestrated { traversal: workspace.traversal(), orchestrator: &orchestrator, format: args.format.into() };
    let mut systems: Vec<Box<dyn ucpkit_eval::ContextSystem + '_>> = vec![Box::new(ours)];
    if let Some(chunks) = &chunks {
        systems.push(Box::new(chunks.system(Ranking::Reference)));
        systems.push(Box::new(chunks.system(Ranking::Engine(Mode::Bm25))));
        if chunks.has_vectors() {
            systems.push(Box::new(chunks.system(Ranking::Engine(Mode::Vector))));
        }
    }
    let systems: Vec<&dyn ucpkit_eval::ContextSystem> = systems.iter().map(|s| s.as_ref()).collect();
    let total = systems.len() * args.budget.len() * questions.len();
    let interactive = std::io::stderr().is_terminal() && !cli.json;
    let mut done = 0;
    let mut progress = |outcome: &Outcome| {
        done += 1;
        if interactive {
            eprint!("\r{done}/{total} {} at {} tokens   ", outcome.system, outcome.budget);
        }
    };
    let report = ucpkit_eval::evaluate(&systems, &questions, &args.budget, tokenizer.name(), &mut progress)?;
    report_policy(policy.as_deref());
    if interactive {
        eprint!("\r{}\r", " ".repeat(60));
    }
    print_report(cli, args, name, &report)
}

/// `ucp eval --all` / `--memory`: the engine alone, over several sources.
fn eval_across(
    cli: &Cli,
    args: &EvalArgs,
    library: &ucpkit_workspace::Library,
    questions: Vec<ucpkit_eval::Question>,
) -> anyhow::Result<()> {
    let sources = sources(cli, args.all, args.memory.as_ref());
    let names = library.source_names(&sources)?.join(", ");
    let policy = args.policy.policy(cli)?;
    let options = ContextOptions {
        agents: args.agents,
        format: args.format.into(),
        policy: policy.clone().map(|p| SharedPolicy(p as Arc<dyn ucpkit_workspace::vocabulary::Policy>)),
        ..ContextOptions::new("")
    };
    let system = ucpkit_eval::Across { library, sources, options };
    let tokenizer = ucpkit_workspace::vocabulary::BpeTokenizer::default();
    let report = ucpkit_eval::evaluate(&[&system], &questions, &args.budget, tokenizer.name(), &mut |_| {})?;
    report_policy(policy.as_deref());
    print_report(cli, args, &names, &report)
}

/// Prints an evaluation's report (with every question's result when asked).
fn print_report(cli: &Cli, args: &EvalArgs, name: &str, report: &ucpkit_eval::Report) -> anyhow::Result<()> {
    if cli.json {
        return print_json(report);
    }
    let mut out = String::new();
    if args.per_question {
        for outcome in &report.outcomes {
            out.push_str(&format!(
                "{} {:<8} {:>5} {:<22} all={} any={} tokens={} {:.1} ms\n",
                outcome.question,
                outcome.kind,
                outcome.budget,
                outcome.system,
                u8::from(outcome.all),
                u8::from(outcome.any),
                outcome.tokens,
                outcome.ms
            ));
        }
        out.push('\n');
    }
    out.push_str(&format!("{name}: answer recall under token budgets\n\n"));
    out.push_str(&report.table());
    print(&out)
}
