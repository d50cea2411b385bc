//! The `[mcp_servers.NAME]` sections of UCP's TOML configuration: one
//! server each, started as a child process (`command`, `args`, `env`) or
//! reached over streamable HTTP (`url`, a bearer token from a named
//! environment variable).
//!
//! ```toml
//! [mcp_servers.files]
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"]
//! env = { LOG_LEVEL = "warn" }      # set for the server
//! env_vars = ["GITHUB_TOKEN"]       # passed on from UCP's environment
//! disabled_tools = ["write_file"]
//! tool_timeout_secs = 30
//!
//! [mcp_servers.tracker]
//! url = "https://mcp.example.com/mcp"
//! bearer_token_env_var = "TRACKER_TOKEN"
//! enabled_tools = ["search_issues", "get_issue"]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::McpClientError;

/// One configured server.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The program to start (a stdio server).
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for it. It sees only these, those `env_vars` names
    /// and a few that programs need to run (`PATH`, `HOME`, `LANG` ...),
    /// never the rest of UCP's environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables of UCP's environment passed on to it.
    #[serde(default)]
    pub env_vars: Vec<String>,
    /// The folder it starts in (UCP's own when absent).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The endpoint of a streamable-HTTP server.
    #[serde(default)]
    pub url: Option<String>,
    /// The variable holding the bearer token sent to `url`.
    #[serde(default)]
    pub bearer_token_env_var: Option<String>,
    /// Headers sent to `url` with every request (an ACP client's).
    #[serde(default)]
    pub http_headers: BTreeMap<String, String>,
    /// Whether it is used at all.
    #[serde(default = "enabled")]
    pub enabled: bool,
    /// Offer only these of its tools (all when absent).
    #[serde(default)]
    pub enabled_tools: Option<Vec<String>>,
    /// Never offer these of its tools.
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    /// Seconds it may take to start and answer `initialize` (30).
    #[serde(default)]
    pub startup_timeout_secs: Option<f64>,
    /// Seconds one call may take (120).
    #[serde(default)]
    pub tool_timeout_secs: Option<f64>,
    /// Seconds unused before it is disconnected (300).
    #[serde(default)]
    pub idle_timeout_secs: Option<f64>,
}

fn enabled() -> bool {
    true
}

/// How a server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking over its stdin and stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
}

impl ServerConfig {
    /// A stdio server: `command` with `args`.
    pub fn stdio(command: impl Into<String>, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        ServerConfig {
            command: Some(command.into()),
            args: args.into_iter().map(Into::into).collect(),
            ..ServerConfig::empty()
        }
    }

    /// A streamable-HTTP server at `url`.
    pub fn http(url: impl Into<String>) -> Self {
        ServerConfig { url: Some(url.into()), ..ServerConfig::empty() }
    }

    fn empty() -> Self {
        ServerConfig {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            env_vars: Vec::new(),
            cwd: None,
            url: None,
            bearer_token_env_var: None,
            http_headers: BTreeMap::new(),
            enabled: true,
            enabled_tools: None,
            disabled_tools: Vec::new(),
            startup_timeout_secs: None,
            tool_timeout_secs: None,
            idle_timeout_secs: None,
        }
    }

    /// How it is reached; an error naming `name` when the section gives
    /// neither or both of `command` and `url`, or a URL that is not HTTP.
    pub fn transport(&self, name: &str) -> Result<Transport, McpClientError> {
        let wrong = |why: &str| McpClientError::Config(format!("[mcp_servers.{name}]: {why}"));
        match (&self.command, &self.url) {
            (Some(command), None) if !command.trim().is_empty() => Ok(Transport::Stdio),
            (None, Some(url))
                if url.starts_with("http://")
                    && (self.bearer_token_env_var.is_some() || !self.http_headers.is_empty())
                    && !loopback(url) =>
            {
                Err(wrong(&format!("its token or headers would cross the network unencrypted to {url}: use https://")))
            }
            (None, Some(url)) if url.starts_with("http://") || url.starts_with("https://") => Ok(Transport::Http),
            (None, Some(url)) => Err(wrong(&format!("url {url:?} is not an http:// or https:// address"))),
            (Some(_), Some(_)) => Err(wrong("give command or url, not both")),
            _ => Err(wrong("give a command (a stdio server) or a url (a streamable-HTTP server)")),
        }
    }

    /// Whether its tool `tool` is offered.
    pub fn offers_tool(&self, tool: &str) -> bool {
        self.enabled_tools.as_ref().is_none_or(|only| only.iter().any(|t| t == tool))
            && !self.disabled_tools.iter().any(|t| t == tool)
    }

    /// The time it may take to start.
    pub fn startup_timeout(&self) -> Duration {
        seconds(self.startup_timeout_secs, 30.0)
    }

    /// The time one call may take.
    pub fn tool_timeout(&self) -> Duration {
        seconds(self.tool_timeout_secs, 120.0)
    }

    /// The time it stays connected unused.
    pub fn idle_timeout(&self) -> Duration {
        seconds(self.idle_timeout_secs, 300.0)
    }

    /// What identifies the server's lists in the cache: how it is started
    /// or reached (a changed command, argument, variable or URL lists it
    /// again), hashed so no value is written down.
    pub fn cache_key(&self) -> String {
        let identity = serde_json::json!([
            self.command,
            self.args,
            self.env,
            self.env_vars,
            self.cwd,
            self.url,
            self.http_headers
        ]);
        blake3::hash(identity.to_string().as_bytes()).to_hex()[..32].to_owned()
    }
}

/// Whether an `http://` URL names this machine.
fn loopback(url: &str) -> bool {
    let authority = url.trim_start_matches("http://").split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn seconds(set: Option<f64>, default: f64) -> Duration {
    Duration::from_secs_f64(set.filter(|s| s.is_finite() && *s > 0.0).unwrap_or(default).min(86_400.0))
}

#[derive(Deserialize)]
struct ConfigFile {
    #[serde(default)]
    mcp_servers: BTreeMap<String, toml::Value>,
}

/// The servers of the configuration files, in name order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServersConfig {
    /// Each server's section by name.
    pub servers: BTreeMap<String, ServerConfig>,
}

impl ServersConfig {
    /// The `[mcp_servers]` sections of `files`, read in order (a later
    /// file's server replaces one of the same name); files that do not
    /// exist are skipped.
    pub fn load(files: &[PathBuf]) -> Result<Self, McpClientError> {
        let mut config = ServersConfig::default();
        for path in files {
            match std::fs::read_to_string(path) {
                Ok(text) => config.merge_toml(&text).map_err(|e| in_file(path, e))?,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(McpClientError::Config(format!("{}: {e}", path.display()))),
            }
        }
        Ok(config)
    }

    /// Adds the servers of one TOML text (other sections are left to
    /// their readers).
    pub fn merge_toml(&mut self, text: &str) -> Result<(), McpClientError> {
        let file: ConfigFile = toml::from_str(text).map_err(|e| McpClientError::Config(toml_message(text, &e)))?;
        for (name, section) in file.mcp_servers {
            let server: ServerConfig = section.try_into().map_err(|e: toml::de::Error| {
                McpClientError::Config(format!("[mcp_servers.{name}]: {}", e.message()))
            })?;
            self.add(&name, server)?;
        }
        Ok(())
    }

    /// Adds (or replaces) the server `name` for this run.
    pub fn add(&mut self, name: &str, server: ServerConfig) -> Result<(), McpClientError> {
        crate::names::check_server_name(name)?;
        server.transport(name)?;
        self.servers.insert(name.to_owned(), server);
        Ok(())
    }

    /// The servers in use (`enabled`).
    pub fn enabled(&self) -> impl Iterator<Item = (&String, &ServerConfig)> {
        self.servers.iter().filter(|(_, server)| server.enabled)
    }
}

fn in_file(path: &Path, error: McpClientError) -> McpClientError {
    McpClientError::Config(format!("{}: {error}", path.display()))
}

/// One line: where, and what toml says (without its drawing).
fn toml_message(text: &str, error: &toml::de::Error) -> String {
    let line = error
        .span()
        .map(|span| text.as_bytes()[..span.start.min(text.len())].iter().filter(|b| **b == b'\n').count() + 1);
    let message = error.message().trim().replace('\n', " ");
    match line {
        Some(line) => format!("line {line}: {message}"),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_are_read_and_checked() {
        let mut config = ServersConfig::default();
        config
            .merge_toml(
                r#"
                [agent]
                provider = "local"
                [mcp_servers.files]
                command = "npx"
                args = ["-y", "server"]
                env = { A = "1" }
                disabled_tools = ["write_file"]
                tool_timeout_secs = 2.5
                [mcp_servers.remote]
                url = "https://example.com/mcp"
                bearer_token_env_var = "TOKEN"
                enabled = false
                "#,
            )
            .unwrap();
        let files = &config.servers["files"];
        assert_eq!(files.transport("files").unwrap(), Transport::Stdio);
        assert_eq!(files.tool_timeout(), Duration::from_millis(2500));
        assert!(files.offers_tool("read_file") && !files.offers_tool("write_file"));
        assert_eq!(config.enabled().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["files"]);
        assert_eq!(config.servers["remote"].transport("remote").unwrap(), Transport::Http);

        let error = |text: &str| ServersConfig::default().merge_toml(text).unwrap_err().to_string();
        assert!(
            error("[mcp_servers.x]\ncomand = \"a\"").contains("comand"),
            "{}",
            error("[mcp_servers.x]\ncomand = \"a\"")
        );
        assert!(error("[mcp_servers.x]\nargs = []").contains("give a command"));
        assert!(error("[mcp_servers.x]\ncommand = \"a\"\nurl = \"http://h\"").contains("not both"));
        assert!(error("[mcp_servers.x]\nurl = \"file:///etc\"").contains("not an http"));
        assert!(error("[mcp_servers.\"a b\"]\ncommand = \"a\"").contains("a b"));
        let plain = "[mcp_servers.x]\nurl = \"http://example.com/mcp\"\nbearer_token_env_var = \"T\"";
        assert!(error(plain).contains("unencrypted"));
        for local in ["http://127.0.0.1:8/mcp", "http://localhost/mcp", "http://[::1]:9/mcp"] {
            let text = format!("[mcp_servers.x]\nurl = \"{local}\"\nbearer_token_env_var = \"T\"");
            assert!(ServersConfig::default().merge_toml(&text).is_ok(), "{local}");
        }
    }

    #[test]
    fn the_cache_key_follows_how_it_is_started() {
        let a = ServerConfig::stdio("npx", ["server"]);
        let mut b = a.clone();
        b.tool_timeout_secs = Some(3.0);
        assert_eq!(a.cache_key(), b.cache_key(), "a timeout does not change the tools");
        b.args.push("--other".into());
        assert_ne!(a.cache_key(), b.cache_key());
    }
}
