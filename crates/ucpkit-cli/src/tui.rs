//! `ucp tui`: the terminal front end (`ucpkit-tui`) over this store, its
//! agent pane running `ucp agent`'s loop through the registry's gate.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use ucpkit_registry::agents::ConnectionTools;
use ucpkit_registry::parts::agent::{Agent, AgentSpec, Event, Tools};
use ucpkit_registry::parts::llm::{Cancel, ModelChoice};
use ucpkit_registry::{Connection, Supervisor, ToolOffer};
use ucpkit_tui::{AgentBackend, AgentNews};
use ucpkit_workspace::vocabulary::{BpeTokenizer, ExtractiveSummarizer};
use ucpkit_workspace::Library;

use crate::agent::{save_transcript, stored_transcript, AgentOffer, LlmArgs};
use crate::Cli;

#[derive(Args)]
pub(crate) struct TuiArgs {
    #[command(flatten)]
    llm: LlmArgs,
    /// Offer the agent no tool that writes (write, edit, bash,
    /// memory_store ...).
    #[arg(long)]
    read_only: bool,
    /// Write timings as JSON lines to FILE: the first frame's time after
    /// start, each key's time to its frame, the peak memory at the end.
    #[arg(long, value_name = "FILE")]
    timings: Option<PathBuf>,
}

/// The agent's turns: the model configuration read again for each turn
/// (a choice made in the palette counts from the next one), the tools of
/// `ucp agent` through one connection per turn.
struct TerminalAgent {
    library: Arc<Library>,
    store: PathBuf,
    llm: LlmArgs,
    /// Everything offered but the sub-agents' models.
    offer: ToolOffer,
}

impl TerminalAgent {
    fn choice(&self) -> anyhow::Result<(ucpkit_registry::agents::AgentSetup, ModelChoice, AgentSpec)> {
        let setup = self.llm.setup_in(&self.store)?;
        let settings = setup.config.settings(None);
        let choice = setup.config.choose(&settings, &setup.overrides)?;
        let spec = AgentSpec {
            budget: settings.max_context_tokens.unwrap_or(AgentSpec::default().budget),
            max_steps: settings.max_steps.unwrap_or(AgentSpec::default().max_steps),
            ..AgentSpec::default()
        };
        Ok((setup, choice, spec))
    }

    fn run_turn(
        &self,
        conversation: &str,
        message: &str,
        supervisor: Arc<dyn Supervisor>,
        cancel: Cancel,
        tell: &mut dyn FnMut(AgentNews),
    ) -> anyhow::Result<String> {
        let (setup, choice, spec) = self.choice()?;
        let allowed = setup.config.settings(None).allowed_tools;
        let provider = ucpkit_registry::parts::llm::connect(&choice)?;
        // Sub-agents are built from this turn's configuration, and offered
        // no more than the agent.
        let offer = ToolOffer { agents: Some(Arc::new(setup)), only: allowed.clone(), ..self.offer.clone() };
        let connection = Connection::new(self.library.clone(), Arc::new(offer));
        connection.set_supervisor(supervisor);
        let host = ConnectionTools(connection);
        let tokenizer = BpeTokenizer::default();
        let agent = Agent {
            provider: &*provider,
            tools: Tools::new(vec![&host], allowed),
            spec,
            tokenizer: &tokenizer,
            summarizer: &ExtractiveSummarizer,
            cancel,
        };
        let (mut transcript, mut revision) = stored_transcript(&self.library, conversation)?;
        let mut save = |t: &_| save_transcript(&self.library, conversation, &host, t, &mut revision);
        let mut on_event = |event: Event<'_>| match event {
            Event::Text(text) => tell(AgentNews::Text(text.to_owned())),
            Event::Calling(call) => {
                tell(AgentNews::Calling { tool: call.name.clone(), arguments: call.arguments.to_string() })
            }
            Event::Called(_, record, result) => tell(AgentNews::Called {
                tool: record.tool.clone(),
                result: result.to_owned(),
                tokens: record.result_tokens,
                failed: record.is_error,
            }),
            Event::NotFinished(reason) => tell(AgentNews::Note(format!("answer held back: {reason}"))),
            Event::Usage(_) => {}
        };
        Ok(agent.run(&mut transcript, message, &mut save, &mut on_event)?)
    }
}

impl AgentBackend for TerminalAgent {
    fn model(&self) -> Result<String, String> {
        let (_, choice, _) = self.choice().map_err(|e| e.to_string())?;
        Ok(format!("{}/{}", choice.provider_name, choice.model))
    }

    fn overrides(&self) -> ucpkit_registry::parts::llm::Overrides {
        self.llm.setup_in(&self.store).map(|setup| setup.overrides).unwrap_or_default()
    }

    fn turn(
        &self,
        conversation: &str,
        message: &str,
        supervisor: Arc<dyn Supervisor>,
        cancel: Cancel,
        tell: &mut dyn FnMut(AgentNews),
    ) -> Result<String, String> {
        self.run_turn(conversation, message, supervisor, cancel, tell).map_err(|e| format!("{e:#}"))
    }
}

pub(crate) fn run(cli: &Cli, args: &TuiArgs) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    // Progress shows in the status line: nothing may draw over the screen.
    let config = ucpkit_workspace::LibraryConfig { sync_progress: None, ..cli.library_config() };
    let library = Arc::new(Library::open(config)?);
    // The judge of the configured checks is the model of the start, when
    // one is configured; without one the agent pane says why.
    let judge = args
        .llm
        .setup(cli)
        .ok()
        .and_then(|setup| setup.config.choose(&setup.config.settings(None), &setup.overrides).ok())
        .and_then(|choice| ucpkit_registry::parts::llm::connect(&choice).ok())
        .map(|provider| {
            Arc::new(ucpkit_registry::judge::ModelJudge(provider)) as Arc<dyn ucpkit_registry::ChangeJudge>
        });
    // The agent's allow-list is checked as `ucp agent` checks it; a
    // configuration that cannot be loaded (guard rules, MCP servers)
    // leaves the rest of the program working, and the agent pane says why.
    let setup = args.llm.setup(cli).ok().map(Arc::new);
    let allowed = setup.as_ref().and_then(|s| s.config.settings(None).allowed_tools);
    let offer = AgentOffer { read_only: args.read_only, rollback: false, allowed, agents: setup };
    let agent = offer.build(cli, judge, None, "ucp tui").map_err(|e| format!("{e:#}")).map(|offer| {
        Arc::new(TerminalAgent { library: library.clone(), store: cli.store_dir(), llm: args.llm.clone(), offer })
            as Arc<dyn AgentBackend>
    });
    let mut app = ucpkit_tui::App::new(library, agent);
    if let Some(name) = cli.doc() {
        app.open_document(name.to_owned());
    }
    ucpkit_tui::run(&mut app, &ucpkit_tui::Options { timings: args.timings.clone(), started: Some(started) })?;
    Ok(())
}
