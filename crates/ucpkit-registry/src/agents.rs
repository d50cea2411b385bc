//! The agent tools, offered with `ucp mcp --agents` and to `ucp agent`:
//! `task` runs a sub-agent (its own model, tool allow-list and fresh
//! connection) and `ask_user` asks the user through the connection's
//! [`Asker`] (MCP's elicitation, a terminal ...).
//! Also UCP's tools as an agent's [`ToolHost`] ([`ConnectionTools`]), which
//! `ucp agent` runs its loop over.

use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};
use ucpkit_agent::{
    ask_user_tool, task_tool, AgentSpec, AskUser, Asker, Progress, Subagent, SubagentFactory, Tasks, ToolHost,
    ToolOutcome,
};
use ucpkit_context::ExtractiveSummarizer;
use ucpkit_llm::{Config, Overrides, ToolSpec, SUBAGENT_TYPES};

use crate::{Connection, Effects, Library, Needs, Supervisor, Tool, ToolOffer, ToolOutput, Writes};

/// The model configuration sub-agents are built from.
#[derive(Debug, Clone, Default)]
pub struct AgentSetup {
    /// Providers and sub-agent types (`.ucp/config.toml`, the user's).
    pub config: Config,
    /// Settings given for this run (command-line flags).
    pub overrides: Overrides,
}

/// The tools a sub-agent type may call when its section names none:
/// explore, plan and review read; default may do what the server offers.
pub fn default_allowed_tools(kind: &str) -> Option<Vec<String>> {
    let reading = ["search", "context", "ucl", "repo_map", "grep", "glob", "read", "ast_search", "memory_search"];
    let mut tools: Vec<&str> = match kind {
        "explore" => reading.to_vec(),
        "plan" | "review" => {
            [&reading[..], &["memory_recent", "plan", "rules_for", "skills_list", "skill_load"]].concat()
        }
        _ => return None,
    };
    tools.sort_unstable();
    Some(tools.into_iter().map(str::to_owned).collect())
}

/// A connection's tools as an agent's tool host.
pub struct ConnectionTools(pub Connection);

impl ToolHost for ConnectionTools {
    fn tools(&self) -> Vec<ToolSpec> {
        crate::tools::list(self.0.offer())
            .into_iter()
            .map(|tool| ToolSpec {
                name: tool.name,
                description: tool.description,
                parameters: Value::Object((*tool.input_schema).clone()),
            })
            .collect()
    }

    fn call(&self, name: &str, arguments: &Map<String, Value>) -> ToolOutcome {
        match crate::tools::call(&self.0, name, arguments) {
            Ok(ToolOutput { text, is_error }) => ToolOutcome { text, is_error },
            Err(e) => ToolOutcome::error(crate::client_message(self.0.library(), &e)),
        }
    }

    fn finish(&self, task: &str) -> Result<(), String> {
        crate::guarded::finish(&self.0, task)
    }
}

/// Builds sub-agents over fresh connections to one library.
pub struct ConnectionSubagents {
    library: Arc<Library>,
    offer: ToolOffer,
    setup: Arc<AgentSetup>,
    asker: Option<Arc<dyn Asker>>,
    supervisor: Option<Arc<dyn Supervisor>>,
    /// Sub-agents built so far (each is named `<type>-<n>` for the guard).
    built: std::sync::atomic::AtomicUsize,
}

impl ConnectionSubagents {
    /// Sub-agents of `library` offered (at most) `offer`, asking the user
    /// through `asker` when there is one.
    pub fn new(library: Arc<Library>, offer: &ToolOffer, asker: Option<Arc<dyn Asker>>) -> Option<Self> {
        let setup = offer.agents.clone()?;
        // A sub-agent starts no sub-agents of its own.
        let offer = ToolOffer { agents: None, discover: false, ..offer.clone() };
        Some(ConnectionSubagents { library, offer, setup, asker, supervisor: None, built: Default::default() })
    }

    /// The same, each sub-agent's calls approved by `supervisor`.
    pub fn supervised(mut self, supervisor: Option<Arc<dyn Supervisor>>) -> Self {
        self.supervisor = supervisor;
        self
    }
}

/// A sub-agent's tools: its connection's, and `ask_user` when a user can be
/// asked.
struct SubagentTools {
    connection: ConnectionTools,
    ask: Option<AskUser<Arc<dyn Asker>>>,
}

impl ToolHost for SubagentTools {
    fn tools(&self) -> Vec<ToolSpec> {
        let mut tools = self.connection.tools();
        tools.extend(self.ask.iter().flat_map(ToolHost::tools));
        tools
    }

    fn call(&self, name: &str, arguments: &Map<String, Value>) -> ToolOutcome {
        match (&self.ask, name) {
            (Some(ask), "ask_user") => {
                // Not a tool of the sub-agent's connection, but past its gate all the same.
                let connection = &self.connection.0;
                let tool = crate::tools::find(connection.offer(), name).expect("ask_user is compiled in");
                match crate::guarded::gate(connection, tool, arguments) {
                    Ok(_) => ask.call(name, arguments),
                    Err(e) => ToolOutcome::error(crate::client_message(connection.library(), &e)),
                }
            }
            _ => self.connection.call(name, arguments),
        }
    }

    fn finish(&self, task: &str) -> Result<(), String> {
        self.connection.finish(task)
    }
}

impl SubagentFactory for ConnectionSubagents {
    fn types(&self) -> Vec<String> {
        SUBAGENT_TYPES.iter().map(|t| (*t).to_owned()).collect()
    }

    fn build(&self, kind: &str) -> Result<Subagent, String> {
        let settings = self.setup.config.settings(Some(kind));
        let choice = self.setup.config.choose(&settings, &self.setup.overrides).map_err(|e| e.to_string())?;
        let provider = ucpkit_llm::connect(&choice).map_err(|e| e.to_string())?;
        let ask = self.asker.clone().map(AskUser);
        let allowed = match settings.allowed_tools {
            Some(named) => Some(named),
            None => default_allowed_tools(kind).map(|mut tools| {
                if ask.is_some() {
                    tools.push("ask_user".into());
                }
                tools
            }),
        };
        // The registry holds the sub-agent to its allow-list too (within
        // what its parent was offered), not only the agent loop.
        let only = match (&self.offer.only, &allowed) {
            (Some(parent), Some(own)) => Some(own.iter().filter(|name| parent.contains(name)).cloned().collect()),
            (parent, own) => own.clone().or_else(|| parent.clone()),
        };
        let read_only = self.offer.read_only || kind != "default";
        let offer = ToolOffer { read_only, only, ..self.offer.clone() };
        let connection = Connection::new(self.library.clone(), Arc::new(offer));
        let n = self.built.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        connection.set_agent(format!("{kind}-{n}"));
        if let Some(supervisor) = &self.supervisor {
            connection.set_supervisor(supervisor.for_subagent().unwrap_or_else(|| supervisor.clone()));
        }
        let host = SubagentTools { connection: ConnectionTools(connection), ask };
        Ok(Subagent {
            provider,
            host: Box::new(host),
            allowed_tools: allowed,
            spec: AgentSpec {
                budget: settings.max_context_tokens.unwrap_or(AgentSpec::default().budget),
                max_steps: settings.max_steps.unwrap_or(AgentSpec::default().max_steps),
                ..AgentSpec::default()
            },
        })
    }
}

/// The agent tools of one connection: its background tasks and its asker.
#[derive(Default)]
pub(crate) struct AgentTools {
    tasks: OnceLock<Option<Tasks>>,
    asker: OnceLock<Arc<dyn Asker>>,
}

impl AgentTools {
    /// Sets how this connection's user is asked (once, at initialize).
    pub(crate) fn set_asker(&self, asker: Arc<dyn Asker>) {
        let _ = self.asker.set(asker);
    }

    /// Runs `task` or `ask_user` for `connection`.
    pub(crate) fn call(&self, connection: &Connection, name: &str, arguments: &Map<String, Value>) -> ToolOutput {
        let outcome = match name {
            "ask_user" => match self.asker.get() {
                Some(asker) => AskUser(asker.clone()).call(name, arguments),
                None => ToolOutcome::error("no user can be asked over this connection"),
            },
            _ => {
                let tasks = self.tasks.get_or_init(|| {
                    let supervisor = connection.supervisor().cloned();
                    let factory = ConnectionSubagents::new(
                        connection.library().clone(),
                        connection.offer(),
                        self.asker.get().cloned(),
                    )?
                    .supervised(supervisor.clone());
                    let tokenizer: Arc<dyn ucpkit_core::Tokenizer> = Arc::new(ucpkit_core::BpeTokenizer::default());
                    let cancel = supervisor.as_ref().and_then(|s| s.cancel()).unwrap_or_default();
                    let progress = supervisor.map(|s| -> Progress { Arc::new(move |line: &str| s.progress(line)) });
                    let tasks = Tasks::new(Arc::new(factory), tokenizer, Arc::new(ExtractiveSummarizer), cancel);
                    Some(tasks.with_progress(progress))
                });
                match tasks {
                    Some(tasks) => tasks.call(name, arguments),
                    None => ToolOutcome::error("sub-agents are not offered by this server (ucp mcp --agents)"),
                }
            }
        };
        ToolOutput { text: outcome.text, is_error: outcome.is_error }
    }
}

/// The agent tools, as the agent loop defines them: `task` (a sub-agent
/// does what the offer lets it, calling its model) and `ask_user`.
pub(crate) fn tools() -> Vec<Tool> {
    let types: Vec<String> = SUBAGENT_TYPES.iter().map(|t| (*t).to_owned()).collect();
    [task_tool(&types), ask_user_tool()]
        .into_iter()
        .map(|spec| {
            let Value::Object(schema) = spec.parameters else { unreachable!("tool schemas are objects") };
            let name = spec.name.clone();
            let handler: crate::tool::Handler = Arc::new(move |connection: &Connection, arguments| {
                Ok(connection.agent_tools().call(connection, &name, arguments))
            });
            let tool =
                Tool::untyped(&spec.name, &spec.description, schema, handler).needs(Needs::Agents).pages_itself();
            match spec.name.as_str() {
                "task" => tool
                    .effects(Effects { writes: Writes::WhenAllowed, executes: false, network: true })
                    .kind(crate::ActionKind::Think),
                _ => tool,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LibraryConfig;
    use serde_json::json;

    #[test]
    fn a_read_only_connection_changes_nothing_stored() {
        let dir = tempfile::tempdir().unwrap();
        let doc = dir.path().join("guide.md");
        std::fs::write(&doc, "# Guide\n\nStreams move data.\n").unwrap();
        let mut config = LibraryConfig::new(dir.path().join(".ucp"));
        config.allowed_roots = None;
        let library = Arc::new(Library::open(config).unwrap());
        library.index(std::slice::from_ref(&doc), Some("guide"), &Default::default(), &()).unwrap();
        let offer = ToolOffer { read_only: true, ..ToolOffer::documents(4000) };
        let tools = ConnectionTools(Connection::new(library.clone(), Arc::new(offer)));
        let args = |v: Value| v.as_object().unwrap().clone();
        let root = library.read_document(Some("guide")).unwrap().root();
        let edit = tools.call("ucl", &args(json!({"commands": format!("APPEND {root} text :: \"added\"")})));
        assert!(edit.is_error && edit.text.contains("may not do edits"), "{}", edit.text);
        let plan = tools.call("plan", &args(json!({"action": "add", "title": "a step"})));
        assert!(plan.is_error && plan.text.contains("read-only"), "{}", plan.text);
        let open = tools.call("open", &args(json!({"path": doc.to_str().unwrap(), "name": "copy"})));
        assert!(open.is_error && open.text.contains("read-only"), "{}", open.text);
        assert!(!library.holds("copy"));
        let read = tools.call("ucl", &args(json!({"commands": format!("GOTO {root}")})));
        assert!(!read.is_error, "{}", read.text);
        let stored = library.read_document(Some("guide")).unwrap();
        assert!(!format!("{stored:?}").contains("added"));
    }

    #[test]
    fn a_sub_agent_is_held_to_its_allow_list_by_the_registry_too() {
        let dir = tempfile::tempdir().unwrap();
        let library = Arc::new(Library::open(LibraryConfig::new(dir.path().join(".ucp"))).unwrap());
        let overrides = ucpkit_llm::Overrides {
            base_url: Some("http://127.0.0.1:9/v1".into()),
            model: Some("m".into()),
            ..Default::default()
        };
        let setup = Arc::new(AgentSetup { config: Config::default(), overrides });
        let parent = ToolOffer {
            root: Some(dir.path().to_owned()),
            agents: Some(setup),
            only: Some(vec!["grep".into(), "read".into(), "write".into(), "context".into()]),
            ..ToolOffer::documents(4000)
        };
        let listed = |offer: &ToolOffer| -> Vec<String> {
            let factory = ConnectionSubagents::new(library.clone(), offer, None).unwrap();
            factory.build("explore").unwrap().host.tools().into_iter().map(|t| t.name).collect()
        };
        let everything = ToolOffer { only: None, ..parent.clone() };
        let explores = ["ucl", "context", "search", "repo_map", "memory_search", "grep", "glob", "read", "ast_search"];
        assert_eq!(listed(&everything), explores, "explore's reading tools, not the rest the parent has");
        assert_eq!(listed(&parent), ["context", "grep", "read"], "and never more than its parent's");
        let factory = ConnectionSubagents::new(library, &parent, None).unwrap();
        let explore = factory.build("explore").unwrap();
        let args = json!({"path": "x.txt", "content": "no"}).as_object().unwrap().clone();
        let refused = explore.host.call("write", &args);
        assert!(refused.is_error && refused.text.contains("unknown tool"), "{}", refused.text);
        assert!(!dir.path().join("x.txt").exists());
    }
}
