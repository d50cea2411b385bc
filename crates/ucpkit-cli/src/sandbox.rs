//! `--sandbox` for the agent front ends (`ucp agent`, `ucp acp`, `ucp
//! mcp`): the command runs again inside the agent sandbox
//! ([`ucpkit_registry::parts::files::confine`]), set by the `[sandbox]`
//! section of the configuration files and the model endpoints; inside,
//! its commands and MCP servers run in the nested sandbox, and the guard
//! refuses the file tools the denied paths.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use ucpkit_registry::agents::AgentSetup;
use ucpkit_registry::parts::files::confine::{AgentSandbox, Endpoint, Inside};
use ucpkit_registry::parts::files::Jail;
use ucpkit_registry::parts::guard::{Rule, RuleSpec};
use ucpkit_registry::parts::llm::{Config, SUBAGENT_TYPES};
use ucpkit_registry::ToolOffer;

use crate::Cli;

/// Default most memory (data) of each process inside.
const DEFAULT_MEMORY_MB: u64 = 8192;

/// Default most processes and threads inside.
const DEFAULT_MAX_PROCESSES: u64 = 1024;

/// The `[sandbox]` section.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SandboxConfig {
    /// Hosts (`host:port`) it may reach besides the models'.
    #[serde(default)]
    allow_hosts: Vec<String>,
    /// Paths it may not read besides the defaults (`~/` is the home folder).
    #[serde(default)]
    deny_read: Vec<String>,
    /// Most memory, in MiB.
    #[serde(default)]
    memory_mb: Option<u64>,
    /// Most processes and threads.
    #[serde(default)]
    max_processes: Option<u64>,
    /// Most wall-clock seconds.
    #[serde(default)]
    time_limit_seconds: Option<u64>,
}

#[derive(Deserialize)]
struct SandboxFile {
    #[serde(default)]
    sandbox: Option<SandboxConfig>,
}

/// The `[sandbox]` sections of the configuration files: lists add up, a
/// later file's limits win.
fn config(cli: &Cli) -> anyhow::Result<SandboxConfig> {
    let mut merged = SandboxConfig::default();
    let project = cli.store_dir().join("config.toml");
    for path in Config::files(Some(&cli.store_dir())) {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => anyhow::bail!("{}: {e}", path.display()),
        };
        let file: SandboxFile =
            toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.message()))?;
        let Some(section) = file.sandbox else { continue };
        // A project's file (it comes with the code) may only tighten.
        let tighten_only = path == project;
        if tighten_only && !section.allow_hosts.is_empty() {
            anyhow::bail!(
                "{}: [sandbox] allow_hosts belongs in the user's file: a project's file only tightens",
                path.display()
            );
        }
        merged.allow_hosts.extend(section.allow_hosts);
        merged.deny_read.extend(section.deny_read);
        // `unset`: the limit when none was given so far (none: no limit).
        let limit = |given: Option<u64>, before: Option<u64>, unset: Option<u64>| match (tighten_only, given) {
            (true, Some(given)) => Some(before.or(unset).map_or(given, |b| given.min(b))),
            (_, given) => given.or(before),
        };
        merged.memory_mb = limit(section.memory_mb, merged.memory_mb, Some(DEFAULT_MEMORY_MB));
        merged.max_processes = limit(section.max_processes, merged.max_processes, Some(DEFAULT_MAX_PROCESSES));
        merged.time_limit_seconds = limit(section.time_limit_seconds, merged.time_limit_seconds, None);
    }
    Ok(merged)
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// The host and port of a URL.
fn endpoint(url: &str) -> anyhow::Result<Endpoint> {
    let parsed = url::Url::parse(url).map_err(|e| anyhow::anyhow!("{url:?} is not a URL: {e}"))?;
    let host = parsed.host_str().ok_or_else(|| anyhow::anyhow!("{url:?} names no host"))?;
    let port = parsed.port_or_known_default().ok_or_else(|| anyhow::anyhow!("{url:?} names no port"))?;
    Ok(Endpoint { host: host.trim_start_matches('[').trim_end_matches(']').to_owned(), port })
}

/// Runs this command again inside the agent sandbox and exits as it did
/// (never returning), or, when this is the command inside, starts its
/// forwarders and returns the sandbox it runs in. `urls` are the model
/// endpoints (and other servers) it must reach.
pub(crate) fn enter(cli: &Cli, urls: &[String]) -> anyhow::Result<Inside> {
    if let Some(inside) = Inside::current()? {
        inside.start_forwarders()?;
        return Ok(inside);
    }
    let config = config(cli)?;
    let workspace = match &cli.root {
        Some(root) => root.clone(),
        None => std::env::current_dir()?,
    };
    let workspace = workspace.canonicalize().map_err(|e| anyhow::anyhow!("{}: {e}", workspace.display()))?;
    let home = home();
    let mut deny_read = AgentSandbox::default_denied(home.as_deref(), &workspace);
    deny_read.extend(config.deny_read.iter().map(|p| expand(p, home.as_deref())));
    let mut hosts = Vec::new();
    for url in urls {
        hosts.push(endpoint(url)?);
    }
    for host in &config.allow_hosts {
        hosts.push(host.parse().map_err(|e: String| anyhow::anyhow!("[sandbox] allow_hosts: {e}"))?);
    }
    let mut unique: Vec<Endpoint> = Vec::new();
    for host in hosts {
        if !unique.contains(&host) {
            unique.push(host);
        }
    }
    let hosts = unique;
    let sandbox = AgentSandbox {
        workspace,
        deny_read,
        hosts,
        memory_bytes: Some(config.memory_mb.unwrap_or(DEFAULT_MEMORY_MB).saturating_mul(1 << 20)),
        max_processes: config.max_processes.unwrap_or(DEFAULT_MAX_PROCESSES),
        time_limit: config.time_limit_seconds.map(Duration::from_secs),
    };
    let mut command = std::process::Command::new(std::env::current_exe()?);
    command.args(std::env::args_os().skip(1));
    let code = sandbox.run(command)?;
    std::process::exit(code)
}

/// The URLs the sandboxed agent must reach: each model `setup` can
/// choose (the main agent's and each sub-agent type's), the configured
/// MCP servers served over HTTP, and the database servers of a store on
/// one.
pub(crate) fn endpoints(cli: &Cli, setup: Option<&AgentSetup>) -> anyhow::Result<Vec<String>> {
    let mut urls = Vec::new();
    let location = cli.store_location();
    if let Some(url) = ucpkit_workspace::LibraryConfig::new(&location).store_url {
        for (host, port) in ucpkit_workspace::vocabulary::store_hosts(&url)? {
            let host = if host.contains(':') { format!("[{host}]") } else { host };
            urls.push(format!("postgres://{host}:{port}"));
        }
    }
    if let Some(setup) = setup {
        let kinds = std::iter::once(None).chain(SUBAGENT_TYPES.iter().map(|k| Some(*k)));
        for kind in kinds {
            if let Ok(choice) = setup.config.choose(&setup.config.settings(kind), &setup.overrides) {
                urls.push(choice.provider.base_url);
            }
        }
    }
    urls.extend(crate::mcp_servers::servers_config(cli)?.servers.into_values().filter_map(|server| server.url));
    urls.sort();
    urls.dedup();
    Ok(urls)
}

/// Inside the sandbox: `offer`'s commands run in the nested sandbox (no
/// network), and so do the MCP servers this process starts (with the
/// forwarders' network), both writing only under its root and the
/// scratch folder.
pub(crate) fn confine(inside: &Inside, offer: &mut ToolOffer) -> anyhow::Result<()> {
    offer.sandbox = Some(inside.child_sandbox(false));
    if let Some(root) = &offer.root {
        let jail = Jail::new(root)?.with_protected(offer.protected.iter().cloned());
        inside.child_sandbox(false).check(&jail)?;
        ucpkit_mcp_client::confine_servers(inside.child_sandbox(true), jail);
    }
    Ok(())
}

fn expand(path: &str, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

/// The guard rules of the sandbox: the file tools refuse the denied
/// paths (`.env` files made later included) with a reason, rather than
/// meeting an empty file.
pub(crate) fn rules(cli: &Cli) -> anyhow::Result<Vec<Rule>> {
    let config = config(cli)?;
    let home = home();
    let mut globs: Vec<String> = vec!["**/.env".into(), "**/.env.*".into()];
    let mut denied: Vec<PathBuf> = home
        .iter()
        .flat_map(|h| ucpkit_registry::parts::files::confine::DENIED_IN_HOME.iter().map(move |p| h.join(p)))
        .collect();
    denied.extend(config.deny_read.iter().map(|p| expand(p, home.as_deref())));
    for path in denied {
        let escaped = globset::escape(&path.display().to_string());
        globs.push(format!("{escaped}/**"));
        globs.push(escaped);
    }
    let specs = globs.into_iter().enumerate().map(|(n, glob)| RuleSpec {
        name: Some(format!("sandbox: denied read {}", n + 1)),
        decision: Some(ucpkit_registry::parts::guard::Decision::Deny),
        pattern: ucpkit_registry::parts::guard::PatternSpec { path: Some(glob), ..Default::default() },
        reason: "the sandbox keeps this path unread".into(),
        ..RuleSpec::default()
    });
    specs.enumerate().map(|(n, spec)| Rule::new(&spec, n + 1, None).map_err(anyhow::Error::from)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_come_from_urls_with_their_default_ports() {
        assert_eq!(
            endpoint("https://api.anthropic.com/v1").unwrap(),
            Endpoint { host: "api.anthropic.com".into(), port: 443 }
        );
        assert_eq!(endpoint("http://127.0.0.1:8080/v1").unwrap(), Endpoint { host: "127.0.0.1".into(), port: 8080 });
        assert_eq!(endpoint("http://[::1]:9/v1").unwrap(), Endpoint { host: "::1".into(), port: 9 });
        assert_eq!(
            endpoint("postgres://db.internal:5433").unwrap(),
            Endpoint { host: "db.internal".into(), port: 5433 }
        );
        assert!(endpoint("not a url").is_err());
    }
}
