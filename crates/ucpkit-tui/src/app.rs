//! The application's state and what changes it: messages from finished
//! jobs, and the jobs it starts. Keys are read in `keys`, frames drawn in
//! `draw`; nothing here touches the terminal.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ucpkit_registry::parts::llm::Cancel;
use ucpkit_registry::parts::memory::{AgentState, MemoryFilter};
use ucpkit_workspace::{Library, NewSession, SearchHit, SearchRequest, SessionHandle};

use crate::agent_pane::{AgentBackend, AgentNews, AgentPane, Approver, Entry};
use crate::builder::{self, Builder, Change};
use crate::input::Field;
use crate::jobs::{Done, Jobs, PermissionRequest, StateLists};
use crate::models::Models;
use crate::navigator::{Navigator, OpenDocument};
use crate::palette::{Command, Palette, Tab};

/// Most memories the memory screen lists.
const MEMORIES_SHOWN: usize = 200;
/// Most search hits listed.
const HITS_SHOWN: usize = 50;

/// What the search box holds.
#[derive(Default)]
pub(crate) struct SearchBox {
    /// The query typed.
    pub(crate) query: Field,
    /// The hits of the last search, and the query they answer.
    pub(crate) hits: Option<(String, Vec<SearchHit>)>,
    /// The hit under the cursor.
    pub(crate) cursor: usize,
}

/// What covers the screen, when something does.
pub(crate) enum Overlay {
    /// Nothing.
    None,
    /// The help screen, scrolled this many lines.
    Help(u16),
    /// The command palette.
    Palette(Palette),
    /// The search box and its hits.
    Search(SearchBox),
    /// The UCL line.
    Ucl(Field),
}

/// The memory screen's lists.
#[derive(Default)]
pub(crate) struct StatePane {
    /// What was read, when it was.
    pub(crate) lists: Option<Box<StateLists>>,
    /// Which list: memories, plans, sessions, conversations.
    pub(crate) section: usize,
    /// The entry under the cursor.
    pub(crate) cursor: usize,
    /// Lines the entry's detail is scrolled down.
    pub(crate) detail_scroll: u16,
}

/// The application.
pub struct App {
    pub(crate) library: Arc<Library>,
    agent: Result<Arc<dyn AgentBackend>, String>,
    /// The agent's model as last asked, or why there is none.
    pub(crate) agent_model: Result<String, String>,
    pub(crate) models: Models,
    /// The screen shown.
    pub(crate) tab: Tab,
    /// What covers it.
    pub(crate) overlay: Overlay,
    pub(crate) nav: Navigator,
    pub(crate) builder: Builder,
    pub(crate) agent_pane: AgentPane,
    pub(crate) state: StatePane,
    /// The last UCL output, shown under the navigator.
    pub(crate) output: Option<String>,
    /// Lines the UCL output is scrolled down.
    pub(crate) output_scroll: u16,
    /// The last message for the person.
    pub(crate) status: String,
    /// Jobs running, by kind, with when they started.
    pub(crate) busy: HashMap<&'static str, Instant>,
    /// The permission requests waiting for an answer, the first shown,
    /// with when it was first drawn.
    pub(crate) permissions: VecDeque<PermissionRequest>,
    /// When the request shown was put on the screen (keys come through
    /// only a moment later, so a key typed ahead never answers it).
    pub(crate) permission_since: Option<Instant>,
    jobs: Jobs,
    /// The navigator's UCL session (out with a job while one runs).
    ucl: Option<SessionHandle>,
    always: Arc<Mutex<HashSet<String>>>,
    /// Where a copied context is written.
    copy_file: PathBuf,
    /// The frame is live on a terminal: copies also go to it (OSC 52),
    /// and the spinner shows how long a job has run.
    pub(crate) live: bool,
    /// The person asked to leave.
    pub(crate) quit: bool,
}

impl App {
    /// An application over `library`; `agent` runs the agent's turns
    /// (or says why there is no agent: the agent pane shows it).
    pub fn new(library: Arc<Library>, agent: Result<Arc<dyn AgentBackend>, String>) -> App {
        let store = library.store_dir().to_owned();
        let overrides = agent.as_ref().map(|a| a.overrides()).unwrap_or_default();
        let (models, problem) = Models::load(&store, overrides);
        App::with_models(library, agent, models, problem)
    }

    /// [`App::new`] with the model configuration given (tests leave the
    /// user's own files out).
    pub(crate) fn with_models(
        library: Arc<Library>,
        agent: Result<Arc<dyn AgentBackend>, String>,
        models: Models,
        problem: Option<String>,
    ) -> App {
        let agent_model = agent.as_ref().map_err(Clone::clone).and_then(|a| a.model());
        let copy_file = library.store_dir().join("tui-context.md");
        let mut app = App {
            library,
            agent,
            agent_model,
            models,
            tab: Tab::Navigator,
            overlay: Overlay::None,
            nav: Navigator::default(),
            builder: Builder::default(),
            agent_pane: AgentPane { typing: true, ..AgentPane::default() },
            state: StatePane::default(),
            output: None,
            output_scroll: 0,
            status: problem.unwrap_or_else(|| "? for help · Ctrl-P for every action".to_owned()),
            busy: HashMap::new(),
            permissions: VecDeque::new(),
            permission_since: None,
            jobs: Jobs::new(),
            ucl: None,
            always: Arc::new(Mutex::new(HashSet::new())),
            copy_file,
            live: false,
            quit: false,
        };
        app.reload();
        app
    }

    fn start(
        &mut self,
        kind: &'static str,
        work: impl FnOnce(&std::sync::mpsc::Sender<Done>) -> Done + Send + 'static,
    ) {
        self.busy.insert(kind, Instant::now());
        self.jobs.spawn(kind, work);
    }

    /// Reads the store's documents, memories, plans and sessions again,
    /// and the open document.
    pub(crate) fn reload(&mut self) {
        if let Some(name) = self.nav.document_name().map(str::to_owned) {
            self.open_document(name);
        }
        self.reload_lists();
    }

    /// Reads the documents, memories, plans and sessions again.
    fn reload_lists(&mut self) {
        let library = self.library.clone();
        self.start("listing", move |_| Done::Documents(library.documents().map_err(|e| e.to_string())));
        let library = self.library.clone();
        self.start("state", move |_| Done::State(read_state(&library).map(Box::new)));
    }

    /// Opens document `name` in the navigator (read on a job).
    pub fn open_document(&mut self, name: String) {
        if self.nav.document_name() != Some(name.as_str()) {
            // Another document: the last one's UCL session and output go.
            self.output = None;
            if let Some(session) = self.ucl.take() {
                self.close_later(session);
            }
        }
        self.nav.loading = Some(name.clone());
        let library = self.library.clone();
        self.start("reading", move |_| {
            let doc = library.read_document(Some(&name)).map(Arc::new).map_err(|e| e.to_string());
            Done::Document(name, doc)
        });
    }

    /// Searches the open document for `query`.
    pub(crate) fn search(&mut self, query: String) {
        let Some(name) = self.nav.document_name().map(str::to_owned) else {
            self.status = "open a document first (Enter on its name)".into();
            return;
        };
        let library = self.library.clone();
        self.start("search", move |_| {
            let request = SearchRequest { limit: HITS_SHOWN, ..SearchRequest::new(query.clone()) };
            let hits = match library.search_stored(Some(&name), &request) {
                Ok(Some(results)) => Ok(results.results),
                Ok(None) => library.workspace(&name).and_then(|w| w.search(&request)).map(|r| r.results),
                Err(e) => Err(e),
            };
            Done::Search(query, hits.map_err(|e| e.to_string()))
        });
    }

    /// Runs UCL `source` in the open document's session.
    pub(crate) fn run_ucl(&mut self, source: String) {
        let Some(name) = self.nav.document_name().map(str::to_owned) else {
            self.status = "open a document first: UCL runs in a session of it".into();
            return;
        };
        if self.busy.contains_key("ucl") {
            self.status = "a UCL script is running".into();
            return;
        }
        let library = self.library.clone();
        let session = self.ucl.take().filter(|s| s.workspace().name() == name);
        self.start("ucl", move |_| {
            let session = match session {
                Some(session) => Ok(session),
                None => library
                    .workspace(&name)
                    .and_then(|w| SessionHandle::open(&library, w, None, &NewSession::default())),
            };
            let mut session = match session {
                Ok(session) => session,
                Err(e) => return Done::Ucl(None, Err(e.to_string())),
            };
            let ran =
                session.current(&library).and_then(|_| library.run_script(session.workspace(), session.id(), &source));
            let result = match ran {
                Ok(run) => {
                    let mut text = run.transcript();
                    if let Some(failure) = run.failure() {
                        text.push_str(&format!("error: {failure}\n"));
                    }
                    Ok((text, run.written))
                }
                Err(e) => Err(e.to_string()),
            };
            Done::Ucl(Some(session), result)
        });
    }

    /// The document the builder works on: the open one, else the one
    /// under the list's cursor.
    pub(crate) fn builder_document(&self) -> Option<String> {
        self.nav.document_name().or_else(|| self.nav.chosen()).map(str::to_owned)
    }

    /// Builds the context for the builder's question and budget.
    pub(crate) fn build_context(&mut self) {
        let Some(document) = self.builder_document() else {
            self.status = "the store holds no document: ucp index <PATH> first".into();
            return;
        };
        if self.builder.question.is_blank() {
            self.status = "type a question first".into();
            return;
        }
        let budget = match self.builder.budget() {
            Ok(budget) => budget,
            Err(why) => {
                self.status = why;
                return;
            }
        };
        self.builder.ticket += 1;
        self.close_builder_session();
        let (ticket, question, library) = (self.builder.ticket, self.builder.question.text(), self.library.clone());
        self.start("context", move |_| Done::Context(ticket, builder::build(&library, &document, &question, budget)));
    }

    /// Closes the session of the builder's last window, if it has one.
    fn close_builder_session(&mut self) {
        if let Some(session) = self.builder.session.take() {
            self.close_later(session);
        }
    }

    /// Closes `session` on a job (a named one is saved first).
    fn close_later(&self, session: SessionHandle) {
        let library = self.library.clone();
        self.jobs.spawn("closing", move |_| {
            let _ = session.close(&library);
            Done::Closed
        });
    }

    /// Changes the builder's window by hand; false (and why in the
    /// status line) when it cannot now.
    pub(crate) fn edit_window(&mut self, change: Change) -> bool {
        let Some(view) = self.builder.view.clone() else {
            self.status = "build a context first (Context screen, a question, Enter)".into();
            return false;
        };
        if self.busy.contains_key("context") {
            self.status = "the context is being built".into();
            return false;
        }
        let (ticket, session, library) = (self.builder.ticket, self.builder.session.take(), self.library.clone());
        self.start("context", move |_| {
            let (session, view) = builder::edit(&library, session, &view, &change);
            Done::Window(ticket, session, view)
        });
        true
    }

    /// Saves the builder's window as the named session `name`.
    pub(crate) fn save_window(&mut self, name: String) {
        let Some(view) = self.builder.view.clone() else {
            self.status = "build a context first".into();
            return;
        };
        let library = self.library.clone();
        self.start("saving", move |_| Done::Saved(builder::save(&library, &view, &name)));
    }

    /// Copies the builder's context.
    pub(crate) fn copy_context(&mut self) {
        let Some(view) = &self.builder.view else {
            self.status = "build a context first".into();
            return;
        };
        let mut stdout = std::io::stdout();
        let terminal: Option<&mut dyn std::io::Write> = if self.live { Some(&mut stdout) } else { None };
        self.status = match crate::clipboard::copy(&view.text, terminal, &self.copy_file) {
            Ok(said) => said,
            Err(why) => why,
        };
    }

    /// Sends the agent pane's message as a new turn.
    pub(crate) fn send_message(&mut self) {
        if self.agent_pane.running.is_some() {
            self.status = "a turn is running: Ctrl-C cancels it".into();
            return;
        }
        let agent = match &self.agent {
            Ok(agent) => agent.clone(),
            Err(why) => {
                self.status = format!("no agent: {why}");
                return;
            }
        };
        if self.agent_pane.input.is_blank() {
            return;
        }
        let message = self.agent_pane.input.text();
        self.agent_pane.input.clear();
        self.agent_pane.entries.push(Entry::User(message.clone()));
        let conversation = self
            .agent_pane
            .conversation
            .get_or_insert_with(|| format!("tui-{}", ucpkit_registry::vocabulary::now_ms()))
            .clone();
        let cancel = Cancel::new();
        self.agent_pane.running = Some(cancel.clone());
        let always = self.always.clone();
        self.start("agent", move |tx| {
            let supervisor = Arc::new(Approver::new(tx.clone(), always, cancel.clone()));
            let mut tell = |news: AgentNews| {
                let _ = tx.send(Done::Agent(news));
            };
            let outcome = agent.turn(&conversation, &message, supervisor, cancel, &mut tell);
            Done::Agent(AgentNews::Finished(outcome))
        });
    }

    /// Runs a palette command.
    pub(crate) fn command(&mut self, command: Command) {
        self.overlay = Overlay::None;
        match command {
            Command::Show(tab) => self.tab = tab,
            Command::Search => self.overlay = Overlay::Search(SearchBox::default()),
            Command::Ucl => self.overlay = Overlay::Ucl(Field::default()),
            Command::Help => self.overlay = Overlay::Help(0),
            Command::Quit => self.quit = true,
            Command::Copy => self.copy_context(),
            Command::Save => {
                self.tab = Tab::Context;
                self.builder.save_as = Some(Field::default());
            }
            Command::ToggleResults => self.agent_pane.unfolded = !self.agent_pane.unfolded,
            Command::Reload => self.reload(),
            Command::Model(option) => {
                self.status = match self.models.choose(&option) {
                    Ok(None) => format!(
                        "{} now uses {}/{} from the next turn (written to the store's config.toml)",
                        option.target.label(),
                        option.provider,
                        option.model
                    ),
                    Ok(Some(current)) => {
                        format!("written to the store's config.toml, but the flags given to ucp tui choose {current}")
                    }
                    Err(why) => why,
                };
                self.refresh_model();
            }
        }
    }

    /// Asks the agent again which model it will use.
    fn refresh_model(&mut self) {
        self.agent_model = self.agent.as_ref().map_err(Clone::clone).and_then(|a| a.model());
    }

    /// Takes in every message waiting now; true when one came.
    pub fn absorb(&mut self) -> bool {
        let ready = self.jobs.ready();
        let any = !ready.is_empty();
        for done in ready {
            self.on_done(done);
        }
        any
    }

    /// Waits up to `wait` for a message and takes it in with every other
    /// waiting; true when one came.
    pub fn absorb_within(&mut self, wait: Duration) -> bool {
        match self.jobs.next(wait) {
            Some(done) => {
                self.on_done(done);
                self.absorb();
                true
            }
            None => false,
        }
    }

    /// Waits until every job has ended (at most `timeout`) and takes in
    /// what they said.
    pub fn settle(&mut self, timeout: Duration) {
        for done in self.jobs.settle(timeout) {
            self.on_done(done);
        }
    }

    fn on_done(&mut self, done: Done) {
        match done {
            Done::Documents(result) => {
                self.busy.remove("listing");
                match result {
                    Ok(documents) => {
                        self.nav.documents = documents;
                        self.nav.move_doc(0);
                    }
                    Err(why) => self.status = format!("cannot list the documents: {why}"),
                }
            }
            Done::Document(name, result) => {
                self.busy.remove("reading");
                if self.nav.loading.as_deref() == Some(name.as_str()) {
                    self.nav.loading = None;
                    match result {
                        Ok(doc) => match self.nav.open.as_mut().filter(|o| o.doc.name() == name) {
                            // The same document read again: its tree keeps
                            // what was unfolded, the cursor and the way back.
                            Some(open) => open.replace(doc),
                            None => self.nav.open = Some(OpenDocument::new(doc)),
                        },
                        Err(why) => self.status = format!("cannot read {name}: {why}"),
                    }
                }
            }
            Done::Search(query, result) => {
                self.busy.remove("search");
                match result {
                    Ok(hits) => {
                        self.status = format!("{} hits for {query:?}", hits.len());
                        if let Overlay::Search(search) = &mut self.overlay {
                            search.hits = Some((query, hits));
                            search.cursor = 0;
                        }
                    }
                    Err(why) => self.status = format!("search failed: {why}"),
                }
            }
            Done::Ucl(session, result) => {
                self.busy.remove("ucl");
                self.ucl = session;
                self.tab = Tab::Navigator;
                match result {
                    Ok((text, written)) => {
                        self.output = Some(if text.is_empty() { "(no output)".into() } else { text });
                        self.output_scroll = 0;
                        if written {
                            if let Some(name) = self.nav.document_name().map(str::to_owned) {
                                self.open_document(name);
                            }
                        }
                    }
                    Err(why) => self.output = Some(format!("error: {why}")),
                }
            }
            Done::Context(ticket, result) => {
                if ticket == self.builder.ticket {
                    self.busy.remove("context");
                    match result {
                        Ok(view) => {
                            self.status =
                                format!("{} blocks, {} of {} tokens", view.blocks.len(), view.tokens, view.budget);
                            self.builder.show(view);
                            self.builder.focus = crate::builder::Focus::Blocks;
                        }
                        Err(why) => self.status = format!("no context: {why}"),
                    }
                }
            }
            Done::Window(ticket, session, result) => {
                if ticket != self.builder.ticket {
                    // A newer context replaced the window this edit was on.
                    if let Some(session) = session {
                        self.close_later(session);
                    }
                } else {
                    self.busy.remove("context");
                    self.builder.session = session;
                    match result {
                        Ok(view) => {
                            self.status =
                                format!("{} blocks, {} of {} tokens", view.blocks.len(), view.tokens, view.budget);
                            self.builder.show(view);
                        }
                        Err(why) => self.status = why,
                    }
                }
            }
            Done::Saved(result) => {
                self.busy.remove("saving");
                self.status = result.unwrap_or_else(|why| format!("not saved: {why}"));
                self.reload_lists();
            }
            Done::State(result) => {
                self.busy.remove("state");
                match result {
                    Ok(lists) => self.state.lists = Some(lists),
                    Err(why) => self.status = format!("cannot read memories and sessions: {why}"),
                }
            }
            Done::Agent(news) => {
                let finished = matches!(news, AgentNews::Finished(_));
                self.agent_pane.apply(news);
                if finished {
                    self.busy.remove("agent");
                    // Questions of the ended turn have no one to answer.
                    self.permissions.clear();
                    self.permission_since = None;
                    // The turn may have stored memories, plans, a transcript.
                    self.reload_lists();
                    self.refresh_model();
                }
            }
            Done::Permission(request) => {
                self.tab = Tab::Agent;
                if self.permissions.is_empty() {
                    self.permission_since = Some(Instant::now());
                }
                self.permissions.push_back(request);
            }
            Done::Failed(kind, why) => {
                self.busy.remove(kind);
                self.status = format!("{kind} failed: {why}");
                match kind {
                    "agent" => self.on_done(Done::Agent(AgentNews::Finished(Err(why)))),
                    "reading" => self.nav.loading = None,
                    _ => {}
                }
            }
            Done::Closed => {}
        }
    }
}

/// Memories, plans, named sessions and stored conversations of `library`.
fn read_state(library: &Library) -> Result<StateLists, String> {
    let state = AgentState::of(library);
    let text = |e: ucpkit_workspace::WorkspaceError| e.to_string();
    Ok(StateLists {
        memories: state.memory_recent(&MemoryFilter::default(), MEMORIES_SHOWN).map_err(text)?,
        plans: state.relations(None).map_err(text)?,
        sessions: library.named_sessions().map_err(text)?,
        transcripts: library.transcripts().map_err(text)?,
    })
}
