//! Configuration in TOML: named providers, the agent's model, and one
//! section per sub-agent type (the `[mcp_servers.*]` sections of the
//! same files are `ucpkit-mcp-client`'s). Read from `~/.config/ucp/config.toml`
//! (or `$XDG_CONFIG_HOME/ucp/config.toml`), then the store's
//! `config.toml` (`.ucp/config.toml`), whose settings win.
//!
//! ```toml
//! [agent]
//! provider = "local"
//! max_context_tokens = 8000
//!
//! [providers.local]
//! api = "openai"                      # or "anthropic"
//! base_url = "http://127.0.0.1:8080/v1"
//! model = "qwen2.5-coder"
//! api_key_env = "LOCAL_LLM_KEY"       # optional: the variable holding the key
//!
//! [subagents.explore]
//! model = "qwen2.5-coder"
//! max_context_tokens = 4000
//! allowed_tools = ["search", "ucl", "context"]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::{LlmError, RetryPolicy};

/// The sub-agent types a `[subagents.*]` section may configure.
pub const SUBAGENT_TYPES: [&str; 4] = ["explore", "plan", "review", "default"];

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Api {
    /// OpenAI-compatible chat completions.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic Messages.
    #[serde(rename = "anthropic")]
    Anthropic,
}

impl std::str::FromStr for Api {
    type Err = LlmError;

    fn from_str(s: &str) -> Result<Self, LlmError> {
        match s {
            "openai" => Ok(Api::OpenAi),
            "anthropic" => Ok(Api::Anthropic),
            other => Err(LlmError::Config(format!("unknown API {other:?}: openai or anthropic"))),
        }
    }
}

/// A named provider.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// Its wire format.
    pub api: Api,
    /// The API's base URL (before `/chat/completions` or `/messages`).
    pub base_url: String,
    /// The environment variable holding its key (none: no key is sent).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The model used when none is named.
    #[serde(default)]
    pub model: Option<String>,
    /// Seconds a call (or a stream's silence) may take.
    #[serde(default)]
    pub timeout_s: Option<u64>,
    /// Seconds a whole answer may take, however steadily it streams.
    #[serde(default)]
    pub deadline_s: Option<u64>,
    /// Tries after a 429, a 5xx or a broken connection.
    #[serde(default)]
    pub max_retries: Option<u32>,
}

impl ProviderConfig {
    /// The time a call may take (120 s unless set).
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_s.unwrap_or(120).max(1))
    }

    /// The time a whole answer may take (600 s unless set, and never less
    /// than [`ProviderConfig::timeout`]).
    pub fn deadline(&self) -> Duration {
        Duration::from_secs(self.deadline_s.unwrap_or(600)).max(self.timeout())
    }

    /// How failed calls are tried again.
    pub fn retry_policy(&self) -> RetryPolicy {
        RetryPolicy { max_retries: self.max_retries.unwrap_or(3), ..RetryPolicy::default() }
    }

    /// The key from the environment; none when no variable is named, an
    /// error when the named one is unset.
    pub fn api_key(&self) -> Result<Option<String>, LlmError> {
        let Some(var) = &self.api_key_env else { return Ok(None) };
        match std::env::var(var) {
            Ok(key) if !key.trim().is_empty() => Ok(Some(key.trim().to_owned())),
            _ => Err(LlmError::Config(format!("the API key variable {var} is not set"))),
        }
    }

    fn builtin(name: &str) -> Option<ProviderConfig> {
        let (api, base_url, key) = match name {
            "openai" => (Api::OpenAi, "https://api.openai.com/v1", "OPENAI_API_KEY"),
            "anthropic" => (Api::Anthropic, "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"),
            _ => return None,
        };
        Some(ProviderConfig {
            api,
            base_url: base_url.into(),
            api_key_env: Some(key.into()),
            model: None,
            timeout_s: None,
            deadline_s: None,
            max_retries: None,
        })
    }
}

/// The model, budget and tools of the agent or of one sub-agent type;
/// what a section leaves out comes from `[agent]`, then the defaults.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubagentConfig {
    /// The provider's name.
    #[serde(default)]
    pub provider: Option<String>,
    /// The model's name.
    #[serde(default)]
    pub model: Option<String>,
    /// The conversation's budget in tokens.
    #[serde(default)]
    pub max_context_tokens: Option<usize>,
    /// The tools it may call (all of its type's when absent).
    #[serde(default)]
    pub allowed_tools: Option<Vec<String>>,
    /// The most model calls in one run.
    #[serde(default)]
    pub max_steps: Option<usize>,
}

impl SubagentConfig {
    /// `self`, with what it leaves out taken from `base`.
    pub fn or(&self, base: &SubagentConfig) -> SubagentConfig {
        SubagentConfig {
            provider: self.provider.clone().or_else(|| base.provider.clone()),
            model: self.model.clone().or_else(|| base.model.clone()),
            max_context_tokens: self.max_context_tokens.or(base.max_context_tokens),
            allowed_tools: self.allowed_tools.clone().or_else(|| base.allowed_tools.clone()),
            max_steps: self.max_steps.or(base.max_steps),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    agent: Option<SubagentConfig>,
    #[serde(default)]
    providers: BTreeMap<String, ProviderConfig>,
    #[serde(default)]
    subagents: BTreeMap<String, SubagentConfig>,
    /// Other MCP servers, read by `ucpkit-mcp-client`.
    #[serde(default, rename = "mcp_servers")]
    _mcp_servers: serde::de::IgnoredAny,
    /// Guard rules and checks, read by `ucpkit-guard`.
    #[serde(default, rename = "guard")]
    _guard: serde::de::IgnoredAny,
    /// The agent sandbox's settings, read by the CLI.
    #[serde(default, rename = "sandbox")]
    _sandbox: serde::de::IgnoredAny,
}

/// The merged configuration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// Named providers (`openai` and `anthropic` exist unless replaced).
    pub providers: BTreeMap<String, ProviderConfig>,
    /// The main agent's settings.
    pub agent: SubagentConfig,
    /// Each sub-agent type's settings.
    pub subagents: BTreeMap<String, SubagentConfig>,
}

/// Settings given for one run (command-line flags), over the files.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// The wire format, for `base_url` (OpenAI's when absent).
    pub api: Option<Api>,
    /// A base URL: an unnamed provider at it.
    pub base_url: Option<String>,
    /// The model's name.
    pub model: Option<String>,
    /// A named provider.
    pub provider: Option<String>,
}

/// A resolved model: where it is served and its name.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelChoice {
    /// The provider's name (`cli` for one given by flags).
    pub provider_name: String,
    /// The provider.
    pub provider: ProviderConfig,
    /// The model's name.
    pub model: String,
}

impl Config {
    /// The files [`Config::load`] reads, in order: the user's
    /// (`$XDG_CONFIG_HOME/ucp/config.toml`, else `~/.config/ucp/`), then
    /// `store`'s.
    pub fn files(store: Option<&Path>) -> Vec<PathBuf> {
        let mut paths = Vec::new();
        if let Some(dir) = user_config_dir() {
            paths.push(dir.join("ucp").join("config.toml"));
        }
        if let Some(store) = store {
            paths.push(store.join("config.toml"));
        }
        paths
    }

    /// The user's file, then `store`'s `config.toml`; files that do not
    /// exist are skipped.
    pub fn load(store: Option<&Path>) -> Result<Config, LlmError> {
        Config::load_files(&Config::files(store))
    }

    /// `files` in order, each over the ones before; files that do not
    /// exist are skipped.
    pub fn load_files(files: &[PathBuf]) -> Result<Config, LlmError> {
        let mut config = Config::default();
        for path in files {
            match std::fs::read_to_string(path) {
                Ok(text) => {
                    config.merge_toml(&text).map_err(|e| LlmError::Config(format!("{}: {e}", path.display())))?
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(LlmError::Config(format!("{}: {e}", path.display()))),
            }
        }
        Ok(config)
    }

    /// Adds the settings of one file, which win over those read before:
    /// a provider of the same name is replaced, sections merge by field.
    pub fn merge_toml(&mut self, text: &str) -> Result<(), LlmError> {
        let file: ConfigFile = toml::from_str(text).map_err(|e| {
            // One line: where, and what toml says (without its drawing).
            let line = e
                .span()
                .map(|span| text.as_bytes()[..span.start.min(text.len())].iter().filter(|b| **b == b'\n').count() + 1);
            let message = e.message().trim().replace('\n', " ");
            LlmError::Config(match line {
                Some(line) => format!("line {line}: {message}"),
                None => message,
            })
        })?;
        if let Some(unknown) = file.subagents.keys().find(|k| !SUBAGENT_TYPES.contains(&k.as_str())) {
            return Err(LlmError::Config(format!(
                "unknown sub-agent type [subagents.{unknown}] (known: {})",
                SUBAGENT_TYPES.join(", ")
            )));
        }
        self.providers.extend(file.providers);
        if let Some(agent) = file.agent {
            self.agent = agent.or(&self.agent);
        }
        for (name, section) in file.subagents {
            let merged = match self.subagents.get(&name) {
                Some(old) => section.or(old),
                None => section,
            };
            self.subagents.insert(name, merged);
        }
        Ok(())
    }

    /// The settings of sub-agent type `kind` (`None`: the main agent),
    /// each field from its section (`[subagents.default]` for a type
    /// without one), else `[agent]`.
    pub fn settings(&self, kind: Option<&str>) -> SubagentConfig {
        match kind.and_then(|k| self.subagents.get(k).or_else(|| self.subagents.get("default"))) {
            Some(section) => section.or(&self.agent),
            None => self.agent.clone(),
        }
    }

    /// The model `settings` name, with `overrides` applied.
    pub fn choose(&self, settings: &SubagentConfig, overrides: &Overrides) -> Result<ModelChoice, LlmError> {
        if overrides.base_url.is_some() && overrides.provider.is_some() {
            return Err(LlmError::Config("give --base-url or --provider, not both".into()));
        }
        let (provider_name, provider) = if let Some(base_url) = &overrides.base_url {
            let provider = ProviderConfig {
                api: overrides.api.unwrap_or(Api::OpenAi),
                base_url: base_url.clone(),
                api_key_env: None,
                model: None,
                timeout_s: None,
                deadline_s: None,
                max_retries: None,
            };
            ("cli".to_owned(), provider)
        } else {
            // A flag wins over the files: --provider, then --api's own
            // provider, then the configured one.
            let by_api = overrides.api.map(|api| match api {
                Api::OpenAi => "openai".to_owned(),
                Api::Anthropic => "anthropic".to_owned(),
            });
            let name = overrides.provider.clone().or(by_api).or_else(|| settings.provider.clone());
            let name = name.ok_or_else(|| {
                LlmError::Config(
                    "no model provider: set [agent] provider in .ucp/config.toml or ~/.config/ucp/config.toml, \
                     or pass --base-url (or --api)"
                        .into(),
                )
            })?;
            let provider = self
                .providers
                .get(&name)
                .cloned()
                .or_else(|| ProviderConfig::builtin(&name))
                .ok_or_else(|| LlmError::Config(format!("no provider named {name:?} is configured")))?;
            (name, provider)
        };
        let model =
            overrides.model.clone().or_else(|| settings.model.clone()).or_else(|| provider.model.clone()).ok_or_else(
                || LlmError::Config(format!("no model named for provider {provider_name:?}: pass --llm")),
            )?;
        Ok(ModelChoice { provider_name, provider, model })
    }
}

fn user_config_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_files_win_and_sections_fall_back_to_the_agent() {
        let mut config = Config::default();
        config
            .merge_toml(
                r#"
                [agent]
                provider = "local"
                max_context_tokens = 8000
                [providers.local]
                api = "openai"
                base_url = "http://127.0.0.1:1/v1"
                model = "small"
                [subagents.explore]
                max_context_tokens = 3000
                allowed_tools = ["search"]
                "#,
            )
            .unwrap();
        config.merge_toml("[subagents.explore]\nmodel = \"tiny\"\n").unwrap();
        config.merge_toml("[mcp_servers.files]\ncommand = \"npx\"\n").expect("another reader's section");
        let line = config.merge_toml("[agent]\nmodle = 1").unwrap_err().to_string();
        assert!(line.starts_with("line 2: "), "{line}");
        let explore = config.settings(Some("explore"));
        assert_eq!(explore.max_context_tokens, Some(3000));
        assert_eq!(explore.allowed_tools.as_deref(), Some(&["search".to_owned()][..]));
        let choice = config.choose(&explore, &Overrides::default()).unwrap();
        assert_eq!((choice.provider_name.as_str(), choice.model.as_str()), ("local", "tiny"));
        let review = config.settings(Some("review"));
        assert_eq!(review.max_context_tokens, Some(8000), "no section: the agent's");
        assert_eq!(config.choose(&review, &Overrides::default()).unwrap().model, "small");
        let flags =
            Overrides { base_url: Some("http://h:2/v1".into()), model: Some("m".into()), ..Overrides::default() };
        let choice = config.choose(&review, &flags).unwrap();
        assert_eq!(
            (choice.provider.base_url.as_str(), choice.model.as_str(), choice.provider.api),
            ("http://h:2/v1", "m", Api::OpenAi)
        );
    }

    #[test]
    fn mistakes_are_named() {
        let mut config = Config::default();
        assert!(config.merge_toml("[subagents.wizard]\nmodel = \"x\"").unwrap_err().to_string().contains("wizard"));
        assert!(config.merge_toml("[agent]\nmodle = \"x\"").unwrap_err().to_string().contains("modle"));
        assert!(config.merge_toml("[providers.x]\napi = \"gemini\"\nbase_url = \"u\"").is_err());
        let none = config.choose(&SubagentConfig::default(), &Overrides::default()).unwrap_err();
        assert!(none.to_string().contains("--base-url"), "{none}");
        let anthropic = Overrides { api: Some(Api::Anthropic), model: Some("claude".into()), ..Overrides::default() };
        let choice = config.choose(&SubagentConfig::default(), &anthropic).unwrap();
        assert_eq!(choice.provider.api_key_env.as_deref(), Some("ANTHROPIC_API_KEY"));
        let keyless = ProviderConfig { api_key_env: Some("UCP_TEST_SURELY_UNSET_KEY".into()), ..choice.provider };
        assert!(keyless.api_key().unwrap_err().to_string().contains("UCP_TEST_SURELY_UNSET_KEY"));
    }
}
