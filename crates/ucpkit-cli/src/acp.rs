//! `ucp acp`: UCP's agent served over the Agent Client Protocol on stdio,
//! for editors (Zed and every ACP client); the model is chosen as for
//! `ucp agent`.

use std::sync::Arc;

use clap::Args;
use ucpkit_registry::ToolOffer;

use crate::agent::{LoopArgs, Prepared};
use crate::Cli;

#[derive(Args)]
pub(crate) struct AcpArgs {
    #[command(flatten)]
    run: LoopArgs,
}

pub(crate) fn run(cli: &Cli, args: &AcpArgs) -> anyhow::Result<()> {
    let Prepared { setup, choice, allowed, spec } = args.run.prepare(cli)?;
    let inside = args.run.sandbox(cli, &setup)?;
    let provider: Arc<dyn ucpkit_registry::parts::llm::Provider> =
        Arc::from(ucpkit_registry::parts::llm::connect(&choice)?);
    let mut library = cli.library_config();
    // Nothing but the protocol on stdout, and no progress bars on stderr.
    library.sync_progress = None;
    // A model indexes no path: it reaches the session's folder through the
    // coding tools' jail, and documents already in the store.
    library.allowed_roots = Some(Vec::new());
    let library = Arc::new(ucpkit_workspace::Library::open(library)?);
    let mut offer = ToolOffer {
        read_only: args.run.read_only(),
        protected: cli.protected_paths(),
        passed_env: cli.pass_env.clone(),
        ..ToolOffer::documents(4000)
    };
    let store = cli.store_dir();
    let judge: Arc<dyn ucpkit_registry::ChangeJudge> =
        Arc::new(ucpkit_registry::judge::ModelJudge(ucpkit_registry::parts::llm::connect(&choice)?));
    let sandbox_rules = match &inside {
        Some(inside) => {
            // Sessions write only under the folder the server starts in.
            offer.root = Some(cli.tools_root()?);
            crate::sandbox::confine(inside, &mut offer)?;
            offer.root = None;
            crate::sandbox::rules(cli)?
        }
        None => Vec::new(),
    };
    let guard = crate::guard::factory(sandbox_rules, Some(judge));
    // Bad rules in the user's file stop the server now, not each session.
    guard(&std::env::current_dir()?).map_err(anyhow::Error::msg)?;
    ucpkit_acp::serve_stdio(ucpkit_acp::AcpConfig {
        guard,
        library,
        setup: Arc::new(setup),
        provider,
        spec,
        allowed,
        offer,
        servers: crate::mcp_servers::servers_config(cli)?,
        cache: store.is_dir().then_some(store),
    })?;
    Ok(())
}
