//! `ucp guard check`: the guard rules of the configuration files (or of
//! one rules file) loaded as `ucp agent` loads them — every rule compiled
//! and its `match` / `not_match` examples checked — and the guard the
//! agent front ends (`ucp agent`, `ucp acp`, `ucp mcp`) pass every call
//! through.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Subcommand};
use serde_json::json;
use ucpkit_registry::parts::guard::{Decision, GuardConfig, Rule};
use ucpkit_registry::parts::llm::Config;
use ucpkit_registry::{ChangeJudge, GuardSetup, SharedGuard};

use crate::{print, print_json, Cli};

#[derive(Args)]
pub(crate) struct GuardArgs {
    #[command(subcommand)]
    command: GuardCommand,
}

#[derive(Subcommand)]
enum GuardCommand {
    /// Check the guard rules and their examples: those of FILE (a TOML
    /// file with `[[guard.rules]]`), else of the configuration files.
    /// Exits non-zero on the first rule that fails.
    #[command(after_help = "Examples:
  ucp guard check
  ucp guard check team-rules.toml --json")]
    Check {
        /// A rules file instead of the configuration files.
        file: Option<PathBuf>,
    },
}

/// The configuration files guard rules are read from, in order.
pub(crate) fn files(cli: &Cli) -> Vec<PathBuf> {
    Config::files(Some(&cli.store_dir()))
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// The rules and checks of `files`, compiled. Those of `project` (a
/// folder's own `.ucp/config.toml`, which comes with the code) may only
/// tighten: an `allow` there is refused.
fn load(files: &[PathBuf], project: Option<&Path>) -> anyhow::Result<(GuardConfig, Vec<Rule>)> {
    let mut config = GuardConfig::default();
    for file in files {
        let one = GuardConfig::load(std::slice::from_ref(file))?;
        if Some(file.as_path()) == project {
            if let Some(loose) = one.rules.iter().find(|r| r.decision == Some(Decision::Allow)) {
                anyhow::bail!(
                    "{}: the allow rule {:?} belongs in the user's file (~/.config/ucp/config.toml): \
                     a project's rules only tighten",
                    file.display(),
                    loose.reason
                );
            }
        }
        config.merge(one);
    }
    let rules = config.compile(home().as_deref()).map_err(|e| anyhow::anyhow!("guard rules: {e}"))?;
    Ok((config, rules))
}

/// The project's file among the configuration files of `store`.
fn project_file(store: &Path) -> PathBuf {
    store.join("config.toml")
}

/// The guard of an agent front end: the configured rules, then `extra`
/// (the sandbox's), the configured checks, and `judge` for them; the
/// files the tools change are journaled for `rollback` (and the judge).
pub(crate) fn setup(
    cli: &Cli,
    extra: Vec<Rule>,
    judge: Option<Arc<dyn ChangeJudge>>,
    rollback: bool,
) -> anyhow::Result<SharedGuard> {
    let (config, mut rules) = load(&files(cli), Some(&project_file(&cli.store_dir())))?;
    rules.extend(extra);
    Ok(guard_of(config, rules, judge, rollback))
}

fn guard_of(config: GuardConfig, rules: Vec<Rule>, judge: Option<Arc<dyn ChangeJudge>>, rollback: bool) -> SharedGuard {
    let checks = config.checks.unwrap_or_default();
    let journaled = rollback || checks.judge;
    GuardSetup::new(&rules, checks).with_judge(judge).journaled(journaled).shared()
}

/// The guards of ACP sessions: for a session's folder, the user's rules
/// and the folder's `.ucp/config.toml`'s, then `extra`.
pub(crate) fn factory(extra: Vec<Rule>, judge: Option<Arc<dyn ChangeJudge>>) -> ucpkit_acp::GuardFactory {
    Arc::new(move |folder: &Path| {
        let store = folder.join(ucpkit_registry::vocabulary::DEFAULT_STORE_DIR);
        let (config, mut rules) =
            load(&Config::files(Some(&store)), Some(&project_file(&store))).map_err(|e| e.to_string())?;
        rules.extend(extra.iter().cloned());
        Ok(guard_of(config, rules, judge.clone(), false))
    })
}

pub(crate) fn run(cli: &Cli, args: &GuardArgs) -> anyhow::Result<()> {
    match &args.command {
        GuardCommand::Check { file } => check(cli, file.as_deref()),
    }
}

fn check(cli: &Cli, file: Option<&Path>) -> anyhow::Result<()> {
    let files = match file {
        Some(file) => {
            if !file.is_file() {
                anyhow::bail!("{}: no such file", file.display());
            }
            vec![file.to_owned()]
        }
        None => files(cli),
    };
    // A file named on the command line is checked as the user's would be.
    let project = file.is_none().then(|| project_file(&cli.store_dir()));
    let (config, rules) = load(&files, project.as_deref())?;
    let read: Vec<String> = files.iter().filter(|f| f.is_file()).map(|f| f.display().to_string()).collect();
    let examples: usize = config.rules.iter().map(|r| r.matches.len() + r.not_match.len()).sum();
    if cli.json {
        return print_json(&json!({
            "files": read,
            "rules": rules.iter().map(Rule::name).collect::<Vec<_>>(),
            "examples_checked": examples,
            "checks": config.checks,
        }));
    }
    let mut out = String::new();
    for spec in &config.rules {
        let what = spec.decision.map(|d| format!("{d:?}").to_lowercase()).or(spec.kind.clone()).unwrap_or_default();
        let name = spec.name.clone().unwrap_or_default();
        out.push_str(&format!("  {what:<12} {name} {}\n", spec.reason));
    }
    let from = if read.is_empty() { "no configuration file".to_owned() } else { read.join(", ") };
    out.push_str(&format!("{} rules, {examples} examples checked ({from})\n", rules.len()));
    print(&out)
}
