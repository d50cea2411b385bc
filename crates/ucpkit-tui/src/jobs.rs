//! Work that may take long (reading a document, a search, a context, a
//! UCL script, an agent's turn) runs on a thread of its own and reports
//! back as a [`Done`] message; the interface never waits on it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ucpkit_registry::parts::memory::relations::RelationGraph;
use ucpkit_registry::parts::memory::Memory;
use ucpkit_registry::vocabulary::Document;
use ucpkit_registry::Approval;
use ucpkit_workspace::{SearchHit, SessionHandle};

use crate::agent_pane::AgentNews;
use crate::builder::WindowView;

/// What a finished (or talking) job reports.
pub(crate) enum Done {
    /// The store's documents, listed.
    Documents(Result<Vec<ucpkit_registry::vocabulary::DocumentSummary>, String>),
    /// A document, read whole for the navigator.
    Document(String, Result<Arc<Document>, String>),
    /// Search hits for a query.
    Search(String, Result<Vec<SearchHit>, String>),
    /// A UCL script ran: the session back, and the transcript with
    /// whether the document was written (or why not).
    Ucl(Option<SessionHandle>, Result<(String, bool), String>),
    /// A context was built for ticket `.0`.
    Context(u64, Result<WindowView, String>),
    /// The builder's window after a change by hand, and its session back.
    Window(u64, Option<SessionHandle>, Result<WindowView, String>),
    /// The builder's window was saved as a named session.
    Saved(Result<String, String>),
    /// Memories, plans and sessions, read.
    State(Result<Box<StateLists>, String>),
    /// News of the agent's turn.
    Agent(AgentNews),
    /// The agent asks to do something that needs approval.
    Permission(PermissionRequest),
    /// A job of this kind panicked: why.
    Failed(&'static str, String),
    /// A session was closed (nothing to show).
    Closed,
}

/// What the memory screen lists.
pub(crate) struct StateLists {
    /// The latest memories.
    pub(crate) memories: Vec<Memory>,
    /// The plan graph.
    pub(crate) plans: RelationGraph,
    /// Named sessions: (document, session, last saved in ms).
    pub(crate) sessions: Vec<(String, String, i64)>,
    /// Stored agent conversations: (name, revision).
    pub(crate) transcripts: Vec<(String, u64)>,
}

/// A question to the person at the terminal, answered once.
pub(crate) struct PermissionRequest {
    /// What the call is about to do, exactly.
    pub(crate) title: String,
    /// What "always" would approve, in words.
    pub(crate) scope_words: String,
    /// The whole command line, when the title is cut.
    pub(crate) detail: Option<String>,
    /// The files it touches (`path` or `path:line`).
    pub(crate) touches: Vec<String>,
    /// Where the answer goes.
    pub(crate) reply: Sender<Answer>,
}

/// The person's answer to a permission request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// This call only.
    Once,
    /// This call and every later one of its scope, in this run.
    Always,
    /// Not this call.
    Deny,
}

impl Answer {
    /// As the gate hears it.
    pub(crate) fn approval(self) -> Approval {
        match self {
            Answer::Once | Answer::Always => Approval::Allow,
            Answer::Deny => Approval::Deny("the user declined".into()),
        }
    }
}

/// Starts jobs and collects what they report.
pub(crate) struct Jobs {
    tx: Sender<Done>,
    rx: Receiver<Done>,
    running: Arc<AtomicUsize>,
}

impl Jobs {
    /// No job yet.
    pub(crate) fn new() -> Jobs {
        let (tx, rx) = channel();
        Jobs { tx, rx, running: Arc::new(AtomicUsize::new(0)) }
    }

    /// Runs `work`, a job of kind `kind`, on a thread of its own; what it
    /// returns comes back through [`Jobs::next`] — a panic as
    /// [`Done::Failed`], so the screen never waits for a job that died.
    pub(crate) fn spawn(&self, kind: &'static str, work: impl FnOnce(&Sender<Done>) -> Done + Send + 'static) {
        let tx = self.tx.clone();
        let running = self.running.clone();
        running.fetch_add(1, Ordering::SeqCst);
        let started = std::thread::Builder::new().spawn(move || {
            let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&tx))).unwrap_or_else(|panic| {
                let why = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "it panicked".to_owned());
                Done::Failed(kind, why)
            });
            // Counted down after its message is sent: no job running means
            // every message is in.
            let _ = tx.send(done);
            running.fetch_sub(1, Ordering::SeqCst);
        });
        if let Err(e) = started {
            // At the process limit: the job fails as a panic would.
            let _ = self.tx.send(Done::Failed(kind, format!("no thread could run it: {e}")));
            self.running.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// How many jobs are running.
    pub(crate) fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// A message, if one comes within `wait`.
    pub(crate) fn next(&self, wait: Duration) -> Option<Done> {
        self.rx.recv_timeout(wait).ok()
    }

    /// Every message waiting now.
    pub(crate) fn ready(&self) -> Vec<Done> {
        self.rx.try_iter().collect()
    }

    /// Waits until every job has ended and its message is in, or
    /// `timeout` passed (tests and the end-to-end drive use this).
    pub(crate) fn settle(&self, timeout: Duration) -> Vec<Done> {
        let deadline = Instant::now() + timeout;
        let mut out = Vec::new();
        while Instant::now() < deadline {
            out.extend(self.ready());
            if self.running() == 0 {
                out.extend(self.ready());
                break;
            }
            if let Some(done) = self.next(Duration::from_millis(10)) {
                out.push(done);
            }
        }
        out
    }
}
