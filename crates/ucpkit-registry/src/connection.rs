//! One client's connection: its agent session in a loaded document, the
//! pages of its last cut result, and what each tool does in it.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use ucpkit_sessions::{AgentError, SessionId};
use ucpkit_ucl::RenderFormat;
use ucpkit_workspace::{
    ContextOptions, IndexOptions, NewSession, SearchRequest, SessionHandle, Sources, WorkspaceError, DEFAULT_BUDGET,
};

use ucpkit_tools::Tools;

use crate::bound::{paginate, Pages};
use crate::{CallError, Library, ToolOffer, Workspace};

/// Tokens a `context` result keeps for its closing summary line.
const CONTEXT_FOOTER_TOKENS: usize = 40;

/// What a tool returns: text, and whether it reports a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The result, at most the cap in tokens.
    pub text: String,
    /// A command failed (MCP `isError`).
    pub is_error: bool,
}

#[derive(Default)]
struct State {
    /// The client's session, following the store; a named one is saved,
    /// not dropped, when the client goes.
    session: Option<SessionHandle>,
    /// The last result that had to be cut, and the tool that gave it.
    pages: Option<(Pages, String)>,
}

/// One client: created when it connects, its session closed (or, when
/// named, saved) when it goes.
pub struct Connection {
    library: Arc<Library>,
    offer: Arc<ToolOffer>,
    cap: usize,
    state: Mutex<State>,
    /// The coding tools, made on first use (their background jobs end
    /// with the connection).
    coding: OnceLock<Result<Option<Tools>, String>>,
    /// Rules files this client was shown (each comes once).
    rules_shown: Mutex<HashSet<String>>,
    /// The offered tools, searchable (built on the first `find_tools`).
    catalog: OnceLock<Result<crate::discovery::ToolCatalog, String>>,
    /// Its sub-agents and how its user is asked.
    agents: crate::agents::AgentTools,
    /// Who approves its calls that change or run something.
    supervisor: OnceLock<Arc<dyn crate::Supervisor>>,
    /// The agent it serves, as guard rules name it (`main` unless set).
    agent: OnceLock<String>,
    /// Its guard, when its offer brings none.
    own_guard: OnceLock<crate::SharedGuard>,
}

impl Connection {
    /// A connection offered `offer`; its results hold at most
    /// `offer.max_result_tokens` tokens (at least [`crate::MIN_RESULT_TOKENS`]).
    pub fn new(library: Arc<Library>, offer: Arc<ToolOffer>) -> Self {
        let cap = offer.max_result_tokens.max(crate::MIN_RESULT_TOKENS);
        Connection {
            library,
            offer,
            cap,
            state: Mutex::new(State::default()),
            coding: OnceLock::new(),
            rules_shown: Mutex::new(HashSet::new()),
            catalog: OnceLock::new(),
            agents: crate::agents::AgentTools::default(),
            supervisor: OnceLock::new(),
            agent: OnceLock::new(),
            own_guard: OnceLock::new(),
        }
    }

    /// Names the agent this connection serves (set once, before the first
    /// call: a sub-agent's connection).
    pub fn set_agent(&self, name: String) {
        let _ = self.agent.set(name);
    }

    /// The agent it serves: `main`, or a sub-agent's name.
    pub fn agent(&self) -> &str {
        self.agent.get().map_or(ucpkit_guard::MAIN_AGENT, String::as_str)
    }

    /// The guard its calls pass: its offer's, else one of its own with no rules.
    pub fn guard(&self) -> &crate::GuardSetup {
        match &self.offer.guard {
            Some(shared) => &shared.0,
            None => {
                &self
                    .own_guard
                    .get_or_init(|| crate::GuardSetup::new(&[], ucpkit_guard::ChecksConfig::default()).shared())
                    .0
            }
        }
    }

    /// Who approves this connection's calls that change files, memory or
    /// documents for good or run a command, and hears its progress (set
    /// once, before the first call; its sub-agents get the same).
    pub fn set_supervisor(&self, supervisor: Arc<dyn crate::Supervisor>) {
        let _ = self.supervisor.set(supervisor);
    }

    /// Its supervisor, when one was set.
    pub fn supervisor(&self) -> Option<&Arc<dyn crate::Supervisor>> {
        self.supervisor.get()
    }

    /// How its sessions are opened: read-only when its offer is.
    fn new_session(&self) -> NewSession {
        NewSession { read_only: self.offer.read_only, ..NewSession::default() }
    }

    /// Its agent tools (`task`, `ask_user`).
    pub(crate) fn agent_tools(&self) -> &crate::agents::AgentTools {
        &self.agents
    }

    /// How `ask_user` reaches this connection's user (set once; an MCP
    /// client is asked by elicitation, set when it connects).
    pub fn set_asker(&self, asker: Arc<dyn ucpkit_agent::Asker>) {
        self.agents.set_asker(asker);
    }

    /// What this connection is offered.
    pub fn offer(&self) -> &ToolOffer {
        &self.offer
    }

    /// The coding tools, when the server offers them.
    pub fn coding_tools(&self) -> Result<Option<&Tools>, CallError> {
        match self.coding.get_or_init(|| self.offer.tools(self.cap).map_err(|e| e.to_string())) {
            Ok(tools) => Ok(tools.as_ref()),
            Err(e) => Err(CallError::Arguments(e.clone())),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens the client's session in the default document (on initialize).
    pub fn start(&self) -> Result<(), CallError> {
        self.ensure(&mut self.state()).map(|_| ())
    }

    /// The client's workspace and session, opened in the default document
    /// when it has none yet; taken up again when another writer changed
    /// the document, or when it was closed to make room for another
    /// client's while this one was idle (a named one as it was saved).
    fn ensure(&self, state: &mut State) -> Result<(Arc<Workspace>, SessionId), CallError> {
        if let Some(session) = &mut state.session {
            session.current(&self.library)?;
            return Ok((Arc::clone(session.workspace()), session.id()));
        }
        let workspace = self.workspace(state)?;
        let session = SessionHandle::open(&self.library, workspace, None, &self.new_session())?;
        let opened = (Arc::clone(session.workspace()), session.id());
        state.session = Some(session);
        Ok(opened)
    }

    /// The client's workspace: the one it chose, else the default document's.
    fn workspace(&self, state: &State) -> Result<Arc<Workspace>, CallError> {
        match &state.session {
            Some(session) => Ok(Arc::clone(session.workspace())),
            None => Ok(self.library.workspace(&self.default_document()?)?),
        }
    }

    /// Ends the current session: a named one is saved, then closed.
    fn leave(&self, state: &mut State) {
        if let Some(session) = state.session.take() {
            let id = session.id();
            if let Err(e) = session.close(&self.library) {
                tracing::warn!("saving session {id} failed: {e}");
            }
        }
    }

    /// `text`, the result of tool `tool`, within the cap; a cut result's
    /// pages are kept for a call with `page` (see [`Connection::page`]).
    pub(crate) fn bounded_text(&self, tool: &str, text: String) -> ToolOutput {
        self.bounded(&mut self.state(), tool, text, false)
    }

    /// `output` of tool `tool` (one not compiled in) within the cap, as
    /// UCP's own results are: a cut one's pages are kept for `page`.
    pub fn bounded_output(&self, tool: &str, output: ToolOutput) -> ToolOutput {
        self.bounded(&mut self.state(), tool, output.text, output.is_error)
    }

    fn bounded(&self, state: &mut State, tool: &str, text: String, is_error: bool) -> ToolOutput {
        let pages = paginate(&text, self.cap, self.library.tokenizer());
        if pages.pages.len() == 1 {
            return ToolOutput { text, is_error };
        }
        let text = pages.page(1, &self.page_hint(tool)).unwrap_or_default();
        state.pages = Some((pages, tool.to_owned()));
        ToolOutput { text, is_error }
    }

    /// How a cut result's next page is asked for: `ucl` with `page` where
    /// `ucl` is offered, else the tool that gave it, with `page`.
    fn page_hint(&self, tool: &str) -> String {
        let by = if self.offer.offers("ucl") { "ucl" } else { tool };
        format!("call {by} with")
    }

    /// Page `n` (1-based) of the last result that had to be cut.
    pub fn page(&self, n: usize) -> Result<ToolOutput, CallError> {
        self.page_from(None, n)
    }

    /// Page `n` of the last cut result, which tool `tool` must have given.
    pub(crate) fn page_of(&self, tool: &str, n: usize) -> Result<ToolOutput, CallError> {
        self.page_from(Some(tool), n)
    }

    fn page_from(&self, asker: Option<&str>, n: usize) -> Result<ToolOutput, CallError> {
        let state = self.state();
        let (pages, tool) =
            state.pages.as_ref().ok_or_else(|| CallError::NoPage("no earlier result was cut".into()))?;
        if asker.is_some_and(|asker| asker != tool) {
            return Err(CallError::NoPage(format!("the last cut result came from {tool}: ask {tool} for its pages")));
        }
        let count = pages.pages.len();
        let text = pages
            .page(n, &self.page_hint(tool))
            .ok_or_else(|| CallError::NoPage(format!("page {n} does not exist; the last cut result has {count}")))?;
        Ok(ToolOutput { text, is_error: false })
    }

    /// Runs UCL lines in the client's session; or returns page `page` of
    /// the last cut result; `session` names the session to run in (kept
    /// across connections).
    pub fn ucl(
        &self,
        commands: Option<&str>,
        page: Option<usize>,
        session: Option<&str>,
    ) -> Result<ToolOutput, CallError> {
        if let Some(n) = page {
            if commands.is_some_and(|c| !c.trim().is_empty()) {
                return Err(CallError::Arguments("give commands or page, not both".into()));
            }
            return self.page(n);
        }
        let mut state = self.state();
        let Some(commands) = commands.filter(|c| !c.trim().is_empty()) else {
            return Err(CallError::Arguments("commands is missing: give UCL lines (or page)".into()));
        };
        if let Some(name) = session {
            self.use_named(&mut state, name)?;
        }
        let (workspace, session) = self.ensure(&mut state)?;
        let (text, failed) = match self.library.run_script(&workspace, session, commands) {
            Err(WorkspaceError::Agent(AgentError::Parse { rendered, .. })) => {
                (format!("nothing ran: {}", rendered.trim_end()), true)
            }
            Err(e) => return Err(e.into()),
            Ok(run) => {
                let mut text = run.transcript();
                if let Some(failure) = run.failure() {
                    text.push_str(&failure);
                    text.push('\n');
                }
                (text, !run.ok())
            }
        };
        Ok(self.bounded(&mut state, "ucl", text, failed))
    }

    /// Switches to the named session, opening it as it was last saved.
    fn use_named(&self, state: &mut State, name: &str) -> Result<(), CallError> {
        if state.session.as_ref().and_then(SessionHandle::name) == Some(name) {
            // Already in it (`ensure` takes it up again if it was closed).
            return Ok(());
        }
        let workspace = self.workspace(state)?;
        let opened = SessionHandle::open(&self.library, workspace, Some(name), &self.new_session())?;
        self.leave(state);
        state.session = Some(opened);
        Ok(())
    }

    /// Builds a context for `question` within `budget` tokens (the
    /// one-shot `ucp context`), in the client's document.
    pub fn context(
        &self,
        question: &str,
        budget: Option<usize>,
        format: Option<&str>,
        code: bool,
        sources: &Sources,
    ) -> Result<ToolOutput, CallError> {
        let name = format.unwrap_or("markdown");
        let format = RenderFormat::from_name(name)
            .ok_or_else(|| CallError::Arguments(format!("format {name:?}: use markdown, default or short_ids")))?;
        let most = self.cap.saturating_sub(CONTEXT_FOOTER_TOKENS).max(1);
        let asked = budget.unwrap_or(DEFAULT_BUDGET);
        if asked == 0 {
            return Err(CallError::Arguments("budget must be above 0".into()));
        }
        let budget = asked.min(most);
        let mut state = self.state();
        let scope = if code { ucpkit_workspace::Scope::Code } else { ucpkit_workspace::Scope::All };
        let options = ContextOptions { budget, format, scope, ..ContextOptions::new(question) };
        let (built, name) = if sources.is_empty() {
            let (workspace, _) = self.ensure(&mut state)?;
            (self.library.context(&workspace, &options)?, workspace.name().to_owned())
        } else {
            let mut sources = sources.clone();
            if sources.documents.is_empty() && !sources.all {
                // Memories next to the document the client has open.
                let (workspace, _) = self.ensure(&mut state)?;
                sources.documents.push(workspace.name().to_owned());
            }
            let names = self.library.source_names(&sources)?;
            (self.library.context_across(&sources, &options)?, names.join(", "))
        };
        if built.blocks.is_empty() {
            return Ok(ToolOutput { text: format!("nothing in {name} matches {question:?}"), is_error: false });
        }
        let mut text = built.text;
        text.push_str(&format!(
            "\n\n[{} blocks, {} of {} tokens, from {} sections of {}{}]",
            built.blocks.len(),
            built.tokens,
            built.budget,
            built.tasks,
            name,
            if budget < asked {
                format!("; budget lowered from {asked} to this server's result cap")
            } else {
                String::new()
            }
        ));
        Ok(self.bounded(&mut state, "context", text, false))
    }

    /// Searches the client's document: the hits (with file, lines, heading
    /// path and preview, as `ucp search` prints them) become its session's
    /// last results, so `CTX ADD RESULTS` takes them.
    pub fn search(&self, query: &str, limit: Option<u32>) -> Result<ToolOutput, CallError> {
        let mut state = self.state();
        let (workspace, session) = self.ensure(&mut state)?;
        let request = SearchRequest { limit: limit.unwrap_or(10).clamp(1, 100) as usize, ..SearchRequest::new(query) };
        let results = workspace.search(&request)?;
        let ids: Vec<_> = results.results.iter().filter_map(|hit| hit.id.parse().ok()).collect();
        workspace.traversal().record_search(session, query, &ids)?;
        Ok(self.bounded(&mut state, "search", results.text(), false))
    }

    /// The repository map of the client's document, personalized to
    /// `question` and `files`, within `budget` tokens (default
    /// [`ucpkit_workspace::DEFAULT_MAP_BUDGET`], at most the result cap).
    pub fn map(
        &self,
        question: Option<&str>,
        files: Vec<String>,
        budget: Option<usize>,
    ) -> Result<ToolOutput, CallError> {
        let mut state = self.state();
        let (workspace, _) = self.ensure(&mut state)?;
        let budget = budget.unwrap_or(ucpkit_workspace::DEFAULT_MAP_BUDGET).min(self.offer().max_result_tokens);
        let request = ucpkit_workspace::MapRequest { question: question.map(str::to_owned), files, budget };
        let map = workspace.map(&request)?;
        let text = if map.files.is_empty() {
            format!("{} holds no source files to map", workspace.name())
        } else {
            format!("{}\n[{} files, {} of {budget} tokens]", map.text, map.files.len(), map.tokens)
        };
        Ok(self.bounded(&mut state, "repo_map", text, false))
    }

    /// The definitions of the offered tools that best fit `intent`.
    pub fn find_tools(&self, intent: &str, limit: Option<usize>) -> Result<ToolOutput, CallError> {
        let catalog = self.catalog.get_or_init(|| {
            let tools = crate::tools::list(&self.offer);
            crate::discovery::ToolCatalog::build(tools, self.library.config().model.as_deref())
                .map_err(|e| e.to_string())
        });
        let catalog = catalog.as_ref().map_err(|e| CallError::Arguments(e.clone()))?;
        Ok(self.bounded_text("find_tools", crate::discovery::found_text(&catalog.find(intent, limit)?)))
    }

    /// Records that this client was shown the rules of `rules`.
    pub(crate) fn note_rules_shown(&self, rules: &ucpkit_guidance::rules::Rules) {
        let mut shown = self.rules_shown.lock().unwrap_or_else(|e| e.into_inner());
        shown.extend(rules.rules.iter().map(|rule| rule.source.clone()));
    }

    /// Keeps in `rules` those this client was not shown yet, and records
    /// them as shown.
    pub(crate) fn take_unseen_rules(&self, rules: &mut ucpkit_guidance::rules::Rules) {
        let mut shown = self.rules_shown.lock().unwrap_or_else(|e| e.into_inner());
        rules.rules.retain(|rule| shown.insert(rule.source.clone()));
        rules.unread.retain(|note| shown.insert(note.clone()));
        rules.tokens = rules.rules.iter().map(|rule| rule.tokens).sum();
    }

    /// Lists the documents; or moves the client to the stored `document`;
    /// or indexes `path` (under an allowed root) as `name` and moves there.
    pub fn open(
        &self,
        document: Option<&str>,
        path: Option<&Path>,
        name: Option<&str>,
    ) -> Result<ToolOutput, CallError> {
        let mut state = self.state();
        let (workspace, note) = match (document, path) {
            (Some(_), Some(_)) => return Err(CallError::Arguments("give document or path, not both".into())),
            (None, None) => {
                let current = state.session.as_ref().map(|s| s.workspace().name().to_owned());
                let mut text = String::new();
                for doc in self.library.documents()? {
                    let mark = if current.as_deref() == Some(doc.name.as_str()) { " (open)" } else { "" };
                    text.push_str(&format!("{}: {} blocks, {} tokens{mark}\n", doc.name, doc.blocks, doc.tokens));
                }
                if text.is_empty() {
                    text.push_str("the store is empty: open a path to index it\n");
                }
                return Ok(self.bounded(&mut state, "open", text, false));
            }
            (Some(document), None) => (self.library.workspace(document)?, "opened"),
            // A read-only library refuses what would write itself (and
            // opens what is unchanged); a read-only connection over a
            // writable one (a read-only agent) indexes nothing.
            (None, Some(_)) if self.offer.read_only && !self.library.config().read_only => {
                return Err(CallError::Arguments("this connection is read-only: open a stored document instead".into()))
            }
            (None, Some(path)) => {
                let indexed = self.library.index(&[path.to_path_buf()], name, &IndexOptions::default(), &())?;
                let note = if indexed.changed { "indexed and opened" } else { "unchanged since last indexed; opened" };
                (indexed.workspace, note)
            }
        };
        self.leave(&mut state);
        let blocks = workspace.traversal().engine().document().len();
        let name = workspace.name().to_owned();
        state.session = Some(SessionHandle::open(&self.library, workspace, None, &self.new_session())?);
        state.pages = None;
        Ok(ToolOutput {
            text: format!("{note} {name}: {blocks} blocks; new session, cursor at the root"),
            is_error: false,
        })
    }

    /// The document this client is in (the default one before it chose).
    pub fn current_document(&self) -> Result<String, CallError> {
        match &self.state().session {
            Some(session) => Ok(session.workspace().name().to_owned()),
            None => self.default_document(),
        }
    }

    /// The document a client that chose none works in: the server's
    /// `--doc`, or the store's only one. When there is none, or several,
    /// the error tells an agent what it can do (flags are not its to set).
    fn default_document(&self) -> Result<String, CallError> {
        match self.library.default_document() {
            Err(WorkspaceError::Store(ucpkit_store::StoreError::DocumentNotChosen(_))) => {
                let names: Vec<String> = self.library.documents()?.into_iter().map(|d| d.name).collect();
                Err(CallError::Arguments(match names.as_slice() {
                    [] => "the store holds no documents yet: call the `open` tool with a `path` to index \
                           (a file or folder the server may read)"
                        .to_owned(),
                    _ => format!(
                        "the store holds several documents ({}): call the `open` tool with `document` set to one",
                        names.join(", ")
                    ),
                }))
            }
            other => Ok(other?),
        }
    }

    /// The library this connection serves from.
    pub fn library(&self) -> &Arc<Library> {
        &self.library
    }

    /// The token cap of every result.
    pub fn cap(&self) -> usize {
        self.cap
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        let mut state = std::mem::take(&mut *self.state());
        // Leaving saves sessions through the store: blocking work, done on
        // a thread of its own, since the last holder may be a thread
        // running an async runtime's tasks (a server closing a client),
        // where a database server's client may not block at all.
        let this = &*self;
        std::thread::scope(|scope| {
            scope.spawn(move || this.leave(&mut state));
        });
    }
}
