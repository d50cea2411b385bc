//! Which tools a server offers its clients: [`ToolOffer`], read against
//! each tool's record (what it may do, what it needs).

use std::path::PathBuf;

use ucpkit_tools::{Sandbox, Tools};

use crate::{CallError, Needs, Tool, Writes};

/// What a server offers every client.
#[derive(Debug, Clone)]
pub struct ToolOffer {
    /// Most tokens of one result.
    pub max_result_tokens: usize,
    /// Folder the coding tools are jailed to; `None` offers none of them.
    pub root: Option<PathBuf>,
    /// The tools that always write or that run programs are not offered;
    /// those that write only when allowed keep their reading part.
    pub read_only: bool,
    /// Offer only these tools (all when `None`).
    pub only: Option<Vec<String>>,
    /// Run every `bash` command in this OS sandbox.
    pub sandbox: Option<Sandbox>,
    /// The language servers of the LSP tools (offered when set).
    pub lsp: Option<crate::lsp_tools::SharedLsp>,
    /// List only the core tools and `find_tools` (every offered tool can
    /// still be called; see [`crate::discovery`]).
    pub discover: bool,
    /// Folders of skills besides the root's `skills/`, `.agents/skills/`
    /// and `.claude/skills/` (relative to the root, or absolute).
    pub skill_dirs: Vec<PathBuf>,
    /// The agent tools (`task`, `ask_user`) and the models sub-agents are
    /// built from; not offered when `None`.
    pub agents: Option<std::sync::Arc<crate::agents::AgentSetup>>,
    /// Paths the coding tools never write (the store, UCP's configuration);
    /// a sandboxed `bash` sees them read-only.
    pub protected: Vec<PathBuf>,
    /// Environment variables `bash` commands get besides
    /// [`ucpkit_tools::bash::PASSED_ENV`].
    pub passed_env: Vec<String>,
    /// Tools that are not compiled in (another MCP server's, an
    /// embedder's), offered beside UCP's own under the same rules; one
    /// that takes the name of one of UCP's is not offered.
    pub others: Vec<Tool>,
    /// An editor's buffers, which `read`, `edit` and `write` go through
    /// (an ACP client's file system).
    pub buffers: Option<SharedBuffers>,
    /// The guard every call passes, shared with sub-agents (a connection
    /// without one gets an empty guard of its own).
    pub guard: Option<crate::SharedGuard>,
}

/// An editor's buffers, shared by the connections of one client.
#[derive(Clone)]
pub struct SharedBuffers(pub std::sync::Arc<dyn ucpkit_tools::Buffers>);

impl std::fmt::Debug for SharedBuffers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedBuffers")
    }
}

impl ToolOffer {
    /// The document tools alone, results capped at `max_result_tokens`.
    pub fn documents(max_result_tokens: usize) -> Self {
        ToolOffer {
            max_result_tokens,
            root: None,
            read_only: false,
            only: None,
            sandbox: None,
            lsp: None,
            discover: false,
            skill_dirs: Vec::new(),
            agents: None,
            protected: Vec::new(),
            buffers: None,
            guard: None,
            passed_env: Vec::new(),
            others: Vec::new(),
        }
    }

    /// Whether the tool `name` is offered.
    pub fn offers(&self, name: &str) -> bool {
        crate::tools::find(self, name).is_some_and(|tool| self.offers_tool(tool))
    }

    /// Whether `tool` is offered.
    pub fn offers_tool(&self, tool: &Tool) -> bool {
        let held = match tool.needs {
            // `find_tools` searches what `only` lets through; `only` never
            // takes it away.
            Needs::Discovery => return self.discover,
            Needs::Nothing => true,
            Needs::Root => self.root.is_some(),
            // Language servers run the project's code (build scripts,
            // macros, plugins) unsandboxed: a sandboxed server offers none.
            Needs::Lsp => self.lsp.is_some() && self.sandbox.is_none(),
            Needs::Agents => self.agents.is_some(),
        };
        let refused_read_only = tool.effects.writes == Writes::Always || tool.effects.executes;
        held && !(self.read_only && refused_read_only)
            && self.only.as_ref().is_none_or(|only| only.iter().any(|o| o == tool.name()))
    }

    /// Checks that every tool `only` names exists (among those offered
    /// without `only`, and, when `writing_too`, without `read_only`);
    /// otherwise a message naming it and the tools.
    pub fn check_only(&self, writing_too: bool) -> Result<(), String> {
        let Some(only) = &self.only else { return Ok(()) };
        let read_only = self.read_only && !writing_too;
        let known = crate::tools::list(&ToolOffer { only: None, read_only, ..self.clone() });
        match only.iter().find(|name| !known.iter().any(|t| t.name == name.as_str())) {
            Some(unknown) => {
                let names: Vec<&str> = known.iter().map(|t| t.name.as_ref()).collect();
                Err(format!("no tool {unknown:?} (the tools: {})", names.join(", ")))
            }
            None => Ok(()),
        }
    }

    /// The coding tools over the root, for one client (its background
    /// jobs end with it).
    pub(crate) fn tools(&self, cap: usize) -> Result<Option<Tools>, CallError> {
        let Some(root) = &self.root else { return Ok(None) };
        let tools = Tools::new(root).map_err(|e| CallError::Arguments(e.to_string()))?;
        Ok(Some(
            tools
                .with_max_tokens(cap)
                .with_read_only(self.read_only)
                .with_sandbox(self.sandbox.clone())
                .with_protected(self.protected.iter().cloned())
                .with_passed_env(self.passed_env.clone())
                .with_buffers(self.buffers.clone().map(|shared| shared.0)),
        ))
    }
}
