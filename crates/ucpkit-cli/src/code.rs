//! `ucp eval-code` (code localization on real issues) and `ucp map` (the
//! repository map).

use std::io::IsTerminal as _;
use std::path::PathBuf;

use ucpkit_eval::code::{load_code_tasks, run_code_eval, CodeEvalOptions, CodeOutcome};

use crate::{print, print_json, Cli};

/// Arguments of `ucp eval-code`.
#[derive(clap::Args)]
pub(crate) struct EvalCodeArgs {
    /// The task file (JSON lines: id, repo, package, version_pinned,
    /// question, gold_files, gold_functions).
    tasks: PathBuf,
    /// Folder holding the snapshots, one `<package>-<version>` folder each.
    #[arg(long, value_name = "DIR")]
    repos: PathBuf,
    /// Where each snapshot's store is kept between runs (default: the
    /// store directory, one folder per snapshot).
    #[arg(long, value_name = "DIR")]
    stores: Option<PathBuf>,
    /// The context budget (tokens).
    #[arg(long, default_value_t = 4000, value_parser = crate::count_in(ucpkit_workspace::MIN_BUDGET, crate::MAX_BUDGET))]
    budget: usize,
    /// Run only the engine, not the reference baseline.
    #[arg(long)]
    no_baselines: bool,
    /// Only the first N tasks.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Print every task's result too.
    #[arg(long)]
    per_task: bool,
}

pub(crate) fn eval_code(cli: &Cli, args: &EvalCodeArgs) -> anyhow::Result<()> {
    let mut tasks = load_code_tasks(&args.tasks)?;
    if let Some(limit) = args.limit {
        tasks.truncate(limit.max(1));
    }
    let stores = args.stores.clone().unwrap_or_else(|| cli.store_dir());
    let options = CodeEvalOptions {
        repos: args.repos.clone(),
        stores,
        budget: args.budget,
        baseline: !args.no_baselines,
        model: cli.model.clone(),
    };
    let interactive = std::io::stderr().is_terminal() && !cli.json;
    let total = tasks.len() * if args.no_baselines { 1 } else { 2 };
    let mut done = 0;
    let mut progress = |snapshot: &str, outcome: &CodeOutcome| {
        done += 1;
        if interactive {
            eprint!("\r{done}/{total} {snapshot} {} {}   ", outcome.system, outcome.task);
        }
    };
    let report = run_code_eval(&tasks, &options, &mut progress)?;
    if interactive {
        eprint!("\r{}\r", " ".repeat(70));
    }
    if cli.json {
        return print_json(&report);
    }
    let mut out = String::new();
    if args.per_task {
        for o in &report.outcomes {
            out.push_str(&format!(
                "{} {:<15} file_rank={} module={} any={} all={} ctx={} tokens={} {:.0}+{:.0} ms\n",
                o.task,
                o.system,
                o.file_rank.map_or("-".to_owned(), |r| r.to_string()),
                u8::from(o.module_at_10),
                u8::from(o.func_any_at_10),
                u8::from(o.func_all_at_10),
                u8::from(o.context_all),
                o.context_tokens,
                o.search_ms,
                o.context_ms
            ));
        }
        out.push('\n');
    }
    for s in report.snapshots.iter().filter(|s| s.built) {
        out.push_str(&format!(
            "indexed {}: {} files, {:.1} MB in {:.2}s ({:.0} files/s)\n",
            s.name,
            s.files,
            s.bytes as f64 / 1e6,
            s.seconds,
            s.files as f64 / s.seconds.max(1e-9)
        ));
    }
    out.push_str(&format!(
        "\ncode localization ({} tasks; engine budget in o200k tokens, the reference's in words x 1.3)\n\n",
        tasks.len()
    ));
    out.push_str(&report.table());
    print(&out)
}

/// Arguments of `ucp map`.
#[derive(clap::Args)]
pub(crate) struct MapArgs {
    /// A question to rank the files by (their search hits pull them up).
    question: Option<String>,
    /// Most tokens of the map.
    #[arg(long, default_value_t = ucpkit_workspace::DEFAULT_MAP_BUDGET, value_parser = crate::count_in(ucpkit_workspace::MIN_BUDGET, crate::MAX_BUDGET))]
    budget: usize,
    /// Files you are working on (corpus paths; repeat or comma-separate).
    #[arg(long = "file", value_delimiter = ',', value_name = "PATH")]
    files: Vec<String>,
}

pub(crate) fn map(cli: &Cli, args: &MapArgs) -> anyhow::Result<()> {
    let library = cli.library(false)?;
    let workspace = cli.workspace(&library)?;
    let request = ucpkit_workspace::MapRequest {
        question: args.question.clone(),
        files: args.files.clone(),
        budget: args.budget,
    };
    let map = workspace.map(&request)?;
    if cli.json {
        return print_json(&map);
    }
    if map.files.is_empty() {
        anyhow::bail!("{} holds no files to map", workspace.name());
    }
    print(&map.text)
}
