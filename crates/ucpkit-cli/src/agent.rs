//! `ucp agent`: the agent loop over UCP's own tools with a model from the
//! configuration or the flags, its transcript saved in the store.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use clap::Args;
use serde_json::json;
use ucpkit_registry::agents::{AgentSetup, ConnectionTools};
use ucpkit_registry::parts::agent::{
    Agent, AgentSpec, Asker, Event, Question, RunError, Tools, Transcript, UserAnswer,
};
use ucpkit_registry::parts::llm::{Api, Cancel, Config, LlmError, Overrides};
use ucpkit_registry::{Connection, ToolOffer};
use ucpkit_workspace::vocabulary::ExtractiveSummarizer;
use ucpkit_workspace::vocabulary::{printable, terminal_text};

use crate::{count_in, print, print_json, Cli, MAX_BUDGET};

/// Which model to use, over the configuration files.
#[derive(Args, Clone, Default)]
pub(crate) struct LlmArgs {
    /// The wire format of --base-url (or the built-in provider of that
    /// name): openai (chat completions; local servers too) or anthropic.
    #[arg(long, value_name = "API", value_parser = ["openai", "anthropic"])]
    pub(crate) api: Option<String>,
    /// The model API's base URL, e.g. http://127.0.0.1:8080/v1 (no key).
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// The model's name.
    #[arg(long, value_name = "MODEL")]
    pub(crate) llm: Option<String>,
    /// A provider named in the configuration.
    #[arg(long, value_name = "NAME")]
    pub(crate) provider: Option<String>,
}

impl LlmArgs {
    /// Whether any model flag was given.
    pub(crate) fn given(&self) -> bool {
        self.api.is_some() || self.base_url.is_some() || self.llm.is_some() || self.provider.is_some()
    }

    /// The configuration files (the user's, then the store's) and these
    /// flags over them.
    pub(crate) fn setup(&self, cli: &Cli) -> anyhow::Result<AgentSetup> {
        self.setup_in(&cli.store_dir())
    }

    /// [`LlmArgs::setup`] with the store's folder given (read again for
    /// every turn of `ucp tui`).
    pub(crate) fn setup_in(&self, store: &std::path::Path) -> anyhow::Result<AgentSetup> {
        let config = Config::load(Some(store))?;
        let overrides = Overrides {
            api: self.api.as_deref().map(str::parse::<Api>).transpose()?,
            base_url: self.base_url.clone(),
            model: self.llm.clone(),
            provider: self.provider.clone(),
        };
        Ok(AgentSetup { config, overrides })
    }
}

/// How the agent loop runs: the model, the sub-agent type's settings,
/// budget, steps and tools (`ucp agent` and `ucp acp`).
#[derive(Args)]
pub(crate) struct LoopArgs {
    #[command(flatten)]
    llm: LlmArgs,
    /// The settings of this sub-agent type's section (explore, plan,
    /// review, default) instead of `[agent]`.
    #[arg(long = "type", value_name = "TYPE", value_parser = ucpkit_registry::parts::llm::SUBAGENT_TYPES)]
    kind: Option<String>,
    /// The conversation's budget in tokens (default: the configuration's,
    /// else 8000).
    #[arg(long, value_name = "TOKENS", value_parser = count_in(256, MAX_BUDGET))]
    budget: Option<usize>,
    /// The most model calls before an answer is asked for (default 8).
    #[arg(long, value_name = "N", value_parser = count_in(1, 200))]
    max_steps: Option<usize>,
    /// The tools it may call, comma-separated (default: the
    /// configuration's, else all offered).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    tools: Option<Vec<String>>,
    /// Offer no tool that writes (write, edit, bash, memory_store ...).
    #[arg(long)]
    read_only: bool,
    /// Run inside the agent sandbox (see docs/guard.md): secrets unread,
    /// no network but the model's and `[sandbox]` allow_hosts, memory,
    /// process and time limits; commands and MCP servers write only
    /// under --root and a scratch folder.
    #[arg(long)]
    sandbox: bool,
}

/// What the loop runs with, from the configuration and the flags.
pub(crate) struct Prepared {
    /// The model configuration (sub-agents are built from it).
    pub(crate) setup: AgentSetup,
    /// The chosen model.
    pub(crate) choice: ucpkit_registry::parts::llm::ModelChoice,
    /// The tools it may call.
    pub(crate) allowed: Option<Vec<String>>,
    /// How it runs.
    pub(crate) spec: AgentSpec,
}

impl LoopArgs {
    /// The model, allow-list and spec these flags and the configuration
    /// choose.
    pub(crate) fn prepare(&self, cli: &Cli) -> anyhow::Result<Prepared> {
        let setup = self.llm.setup(cli)?;
        let settings = setup.config.settings(self.kind.as_deref());
        let choice = setup.config.choose(&settings, &setup.overrides)?;
        let allowed = self.tools.clone().or(settings.allowed_tools.clone());
        let spec = AgentSpec {
            budget: self.budget.or(settings.max_context_tokens).unwrap_or(AgentSpec::default().budget),
            max_steps: self.max_steps.or(settings.max_steps).unwrap_or(AgentSpec::default().max_steps),
            ..AgentSpec::default()
        };
        Ok(Prepared { setup, choice, allowed, spec })
    }

    /// Whether no tool that writes is offered.
    pub(crate) fn read_only(&self) -> bool {
        self.read_only
    }

    /// Enters the agent sandbox when asked (the command runs again
    /// inside; see [`crate::sandbox::enter`]): what it runs in, or `None`.
    pub(crate) fn sandbox(
        &self,
        cli: &Cli,
        setup: &AgentSetup,
    ) -> anyhow::Result<Option<ucpkit_registry::parts::files::confine::Inside>> {
        if !self.sandbox {
            return Ok(None);
        }
        Ok(Some(crate::sandbox::enter(cli, &crate::sandbox::endpoints(cli, Some(setup))?)?))
    }
}

#[derive(Args)]
pub(crate) struct AgentArgs {
    /// The task.
    task: String,
    #[command(flatten)]
    run: LoopArgs,
    /// Save the transcript under this name, and take it up again when it
    /// exists (the task is the next message).
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
    /// The model also writes the summaries of `CTX COMPRESS
    /// METHOD=SUMMARIZE` in the agent's UCL sessions (else extractive).
    #[arg(long)]
    llm_summaries: bool,
    /// When the run ends without its answer accepted (a check still
    /// failing, a rule blocking `finish`, an error), put the files the
    /// tools changed back as they were at the last accepted state.
    #[arg(long)]
    rollback: bool,
}

/// What an agent front end offers its agent besides the model: the
/// coding tools over --root, the configured guard and MCP servers' tools.
pub(crate) struct AgentOffer {
    /// Offer no tool that writes.
    pub(crate) read_only: bool,
    /// Journal the changed files for a rollback.
    pub(crate) rollback: bool,
    /// The tools it may call (sub-agents get no more).
    pub(crate) allowed: Option<Vec<String>>,
    /// The model configuration its sub-agents are built from.
    pub(crate) agents: Option<Arc<ucpkit_registry::agents::AgentSetup>>,
}

impl AgentOffer {
    /// The offer, its guard judging with `judge`, confined to `inside`
    /// when in the sandbox; refused when it offers nothing usable.
    pub(crate) fn build(
        self,
        cli: &Cli,
        judge: Option<Arc<dyn ucpkit_registry::ChangeJudge>>,
        inside: Option<&ucpkit_registry::parts::files::confine::Inside>,
        command: &str,
    ) -> anyhow::Result<ToolOffer> {
        // As `ucp mcp`: in / or the home folder (unless --root names it)
        // the agent works without the coding tools, rules and skills.
        let (root, unrooted) = cli.optional_root();
        let sandbox_rules = if inside.is_some() { crate::sandbox::rules(cli)? } else { Vec::new() };
        let mut offer = ToolOffer {
            root,
            guard: Some(crate::guard::setup(cli, sandbox_rules, judge, self.rollback)?),
            read_only: self.read_only,
            protected: cli.protected_paths(),
            passed_env: cli.pass_env.clone(),
            only: self.allowed,
            agents: self.agents,
            ..ToolOffer::documents(4000)
        };
        if let Some(inside) = inside {
            // Before any MCP server starts (listing one starts it).
            crate::sandbox::confine(inside, &mut offer)?;
        }
        // The tools of the configured MCP servers (from their cached
        // lists), each server started by the first call to one of its tools.
        offer.others = crate::mcp_servers::external_tools(&crate::mcp_servers::servers(cli)?);
        Cli::checked_offer(&offer, unrooted.as_deref(), "allowed tools", false, command)?;
        Ok(offer)
    }
}

/// The stored conversation `name` and the revision it was read at (a new
/// one, at revision 0, when there is none).
pub(crate) fn stored_transcript(library: &ucpkit_workspace::Library, name: &str) -> anyhow::Result<(Transcript, u64)> {
    let (mut transcript, revision) = match library.load_transcript(name)? {
        Some(stored) => {
            let transcript: Transcript = serde_json::from_str(&stored.body)
                .with_context(|| format!("the stored transcript {name:?} cannot be read"))?;
            (transcript, stored.revision)
        }
        None => (Transcript::default(), 0),
    };
    if let Ok(cwd) = std::env::current_dir() {
        transcript.cwd.get_or_insert_with(|| cwd.display().to_string());
    }
    Ok((transcript, revision))
}

/// Saves `transcript` (with the guard's trace) as `name`, checked against
/// `revision`, which moves on.
pub(crate) fn save_transcript(
    library: &ucpkit_workspace::Library,
    name: &str,
    host: &ConnectionTools,
    transcript: &Transcript,
    revision: &mut u64,
) -> Result<(), String> {
    let body = ucpkit_registry::guarded::with_trace(transcript, &host.0).map_err(|e| e.to_string())?;
    *revision = library.save_transcript(name, &body, *revision).map_err(|e| e.to_string())?;
    Ok(())
}

/// Asks on the terminal: the options numbered, a number or (when allowed)
/// free text typed back.
struct TerminalAsker;

/// Held for a whole question: sub-agents asking at once take turns.
static ASKING: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Asker for TerminalAsker {
    fn ask(&self, question: &Question) -> Result<UserAnswer, String> {
        if !std::io::stdin().is_terminal() {
            return Err("there is no terminal to ask on".into());
        }
        let _turn = ASKING.lock().unwrap_or_else(|e| e.into_inner());
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "\n? {}", terminal_text(&question.question));
        for (n, choice) in question.options.iter().enumerate() {
            let (label, description) = (printable(&choice.label, 200), terminal_text(&choice.description));
            let _ = writeln!(err, "  {}) {label}  {description}", n + 1);
        }
        loop {
            let hint = if question.allow_free_text { "number or your own answer" } else { "number" };
            let _ = write!(err, "> ({hint}) ");
            let _ = err.flush();
            let mut line = String::new();
            if std::io::stdin().lock().read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                return Err("the terminal closed".into());
            }
            let line = line.trim();
            if let Some(choice) = line.parse::<usize>().ok().and_then(|n| question.options.get(n.wrapping_sub(1))) {
                return Ok(UserAnswer::Choice(choice.label.clone()));
            }
            if question.allow_free_text && !line.is_empty() {
                return Ok(UserAnswer::Text(line.to_owned()));
            }
        }
    }
}

/// A flag the first Ctrl-C raises (the run stops at its next check, its
/// transcript saved up to its last step); a second Ctrl-C exits at once.
fn cancel_on_interrupt() -> Cancel {
    let cancel = Cancel::new();
    let raised = cancel.clone();
    // Without a thread (the process limit is reached), Ctrl-C just exits.
    let _ = std::thread::Builder::new().name("interrupt".into()).spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
        runtime.block_on(async {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\nucp: stopping after the current call (Ctrl-C again to quit now)");
                raised.cancel();
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            }
        });
    });
    cancel
}

pub(crate) fn run(cli: &Cli, args: &AgentArgs) -> anyhow::Result<()> {
    // Bad input is refused before anything runs.
    if args.task.trim().is_empty() {
        anyhow::bail!("the task is empty");
    }
    if args.session.as_ref().is_some_and(|s| s.trim().is_empty()) {
        anyhow::bail!("--session needs a name");
    }
    let Prepared { setup, choice, allowed, spec } = args.run.prepare(cli)?;
    let inside = args.run.sandbox(cli, &setup)?;
    let provider = ucpkit_registry::parts::llm::connect(&choice)?;
    let mut library = cli.library_config();
    if args.llm_summaries {
        library.summarizer = Some(Arc::new(ucpkit_registry::parts::agent::LlmSummarizer::new(
            ucpkit_registry::parts::llm::connect(&choice)?,
        )));
    }
    if inside.is_some() {
        // In the sandbox a model indexes nothing outside the workspace.
        library.allowed_roots = Some(vec![cli.tools_root()?]);
    }
    let library = Arc::new(ucpkit_workspace::Library::open(library)?);
    let judge: Arc<dyn ucpkit_registry::ChangeJudge> =
        Arc::new(ucpkit_registry::judge::ModelJudge(ucpkit_registry::parts::llm::connect(&choice)?));
    let offer = AgentOffer {
        read_only: args.run.read_only,
        rollback: args.rollback,
        allowed: allowed.clone(),
        agents: Some(Arc::new(setup)),
    };
    let offer = offer.build(cli, Some(judge), inside.as_ref(), "ucp agent")?;
    let connection = Connection::new(library.clone(), Arc::new(offer));
    connection.set_asker(Arc::new(TerminalAsker));
    let host = ConnectionTools(connection);
    let tokenizer = ucpkit_workspace::vocabulary::BpeTokenizer::default();
    let agent = Agent {
        provider: &*provider,
        tools: Tools::new(vec![&host], allowed),
        spec,
        tokenizer: &tokenizer,
        summarizer: &ExtractiveSummarizer,
        cancel: cancel_on_interrupt(),
    };
    let name = args.session.clone().unwrap_or_else(|| format!("agent-{}", ucpkit_workspace::vocabulary::now_ms()));
    let (mut transcript, mut revision) = stored_transcript(&library, &name)?;
    let first_step = transcript.steps.len();
    let mut save = |transcript: &Transcript| save_transcript(&library, &name, &host, transcript, &mut revision);
    let streaming = !cli.json;
    // The model's text reaches a terminal with its control characters
    // escaped (it may hold sequences that clear the screen or write the
    // clipboard); piped elsewhere it stays as written.
    let on_terminal = std::io::stdout().is_terminal();
    let mut on_event = |event: Event<'_>| match event {
        Event::Text(text) if streaming => {
            let _ = print(&if on_terminal { terminal_text(text) } else { text.into() });
        }
        Event::Calling(call) if streaming => eprintln!("\n→ {}", printable(&call.name, 200)),
        Event::Called(_, record, _) if streaming => eprintln!(
            "  {} {} ({} tokens{})",
            printable(&record.tool, 200),
            printable(&record.arguments.to_string(), 2000),
            record.result_tokens,
            if record.is_error { ", failed" } else { "" }
        ),
        Event::NotFinished(reason) if streaming => {
            eprintln!("\n✗ answer held back: {}", terminal_text(reason));
        }
        _ => {}
    };
    let started = Instant::now();
    let outcome = agent.run(&mut transcript, &args.task, &mut save, &mut on_event);
    if outcome.is_err() && args.rollback {
        match ucpkit_registry::guarded::rollback(&host.0) {
            Ok(restored) if !restored.is_empty() => eprintln!("ucp: rolled back {}", restored.join(", ")),
            Ok(_) => {}
            Err(e) => eprintln!("ucp: the rollback failed: {e}"),
        }
    }
    let answer = match outcome {
        Err(RunError::Llm(LlmError::Cancelled)) => {
            anyhow::bail!("interrupted; session {name} keeps the steps that finished")
        }
        other => other?,
    };
    let usage = transcript.usage();
    if cli.json {
        return print_json(&json!({
            "session": name,
            "model": transcript.model,
            "steps": &transcript.steps[first_step..],
            "total_steps": transcript.steps.len(),
            "answer": answer,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "ms": started.elapsed().as_millis() as u64,
        }));
    }
    eprintln!(
        "\n[{} steps, {} + {} tokens, {:.1} s; session {name}]",
        transcript.steps.len() - first_step,
        usage.input_tokens,
        usage.output_tokens,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
