//! The client as the registry's supervisor: before a call that changes
//! something or runs a command, `session/request_permission` names the
//! exact path or command line (with the diff of an edit, the whole command
//! when the title cuts it) and offers allow once, allow always, reject
//! once, reject always; "always" holds for the rest of the session, for
//! what [`Action::scope`] says. A cancelled turn answers its pending
//! request `cancelled`; a client that never answers is taken as a
//! rejection after [`ANSWER_TIME`]. A sub-agent's calls are asked through
//! a [`SubagentSupervisor`], shown as calls of their own under its task's.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest, ToolCallStatus,
};
use ucpkit_registry::parts::llm::Cancel;
use ucpkit_registry::vocabulary::printable;
use ucpkit_registry::{Action, Approval, FileChange, Supervisor};

use crate::updates::Updates;

/// How long a permission request waits for its answer.
pub(crate) const ANSWER_TIME: Duration = Duration::from_secs(600);

/// The most characters of one line of a sub-agent's progress.
const PROGRESS_CHARS: usize = 300;

/// The tool call running now: its id and tool.
#[derive(Clone)]
pub(crate) struct Current {
    pub(crate) id: String,
    pub(crate) tool: String,
}

/// Asks the client; remembers its "always" answers.
pub(crate) struct ClientSupervisor {
    updates: Updates,
    /// Itself, for the sub-agents' supervisors.
    this: Weak<ClientSupervisor>,
    /// Scope → allowed (`true`) or rejected for the rest of the session.
    always: Mutex<HashMap<String, bool>>,
    current: Mutex<Option<Current>>,
    /// The change each call made, by call id, for its diff.
    changes: Mutex<HashMap<String, FileChange>>,
    /// A running `task` call's progress so far.
    progress: Mutex<Vec<String>>,
    /// A turn is running (nobody is asked between turns).
    in_turn: AtomicBool,
    cancel: Cancel,
    /// Raised with `cancel`, to wake a pending request.
    wake: tokio::sync::watch::Sender<u64>,
}

impl ClientSupervisor {
    /// Asking through `updates`' client.
    pub(crate) fn new(updates: Updates) -> Arc<Self> {
        Arc::new_cyclic(|this| ClientSupervisor {
            updates,
            this: this.clone(),
            always: Mutex::new(HashMap::new()),
            current: Mutex::new(None),
            changes: Mutex::new(HashMap::new()),
            progress: Mutex::new(Vec::new()),
            in_turn: AtomicBool::new(false),
            cancel: Cancel::new(),
            wake: tokio::sync::watch::channel(0).0,
        })
    }

    /// A turn starts: not cancelled (called under the session's lock, as
    /// [`ClientSupervisor::cancel_turn`] is).
    pub(crate) fn start_turn(&self) {
        self.cancel.reset();
        self.in_turn.store(true, Ordering::SeqCst);
    }

    /// The turn ended.
    pub(crate) fn end_turn(&self) {
        self.in_turn.store(false, Ordering::SeqCst);
    }

    /// Cancels the turn and wakes a pending request.
    pub(crate) fn cancel_turn(&self) {
        self.cancel.cancel();
        self.wake.send_modify(|n| *n += 1);
    }

    /// Whether the turn was cancelled.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// The turn's flag.
    pub(crate) fn turn_cancel(&self) -> Cancel {
        self.cancel.clone()
    }

    /// The call now running (`None` between calls: its progress is
    /// forgotten).
    pub(crate) fn set_current(&self, current: Option<Current>) {
        if current.is_none() {
            lock(&self.progress).clear();
        }
        *lock(&self.current) = current;
    }

    /// The change call `id` made, taken.
    pub(crate) fn take_change(&self, id: &str) -> Option<FileChange> {
        lock(&self.changes).remove(id)
    }

    /// Whether nobody may be asked now: the turn was cancelled or is over.
    fn closed(&self) -> bool {
        self.cancel.is_cancelled() || !self.in_turn.load(Ordering::SeqCst)
    }

    /// Asks about `action`, shown as call `id`, unless "always" answered
    /// it already.
    fn decide(&self, id: &str, action: &Action) -> Approval {
        if self.closed() {
            return Approval::Deny("the turn was cancelled or has ended: nobody can approve it now".into());
        }
        if let Some(change) = &action.change {
            lock(&self.changes).insert(id.to_owned(), change.clone());
        }
        let remembered = lock(&self.always).get(&action.scope).copied();
        let approval = match remembered {
            Some(true) => Approval::Allow,
            Some(false) => Approval::Deny(format!("the user rejected {} for this session", action.scope_words)),
            None => self.ask(id, action),
        };
        // An answer that came with (or after) a cancel does not count.
        if approval == Approval::Allow && self.closed() {
            return Approval::Deny("the user cancelled the turn".into());
        }
        if approval == Approval::Allow {
            self.updates.status(id, ToolCallStatus::InProgress);
        }
        approval
    }

    /// Asks the client about `action`, shown as call `id`.
    fn ask(&self, id: &str, action: &Action) -> Approval {
        let what = &action.scope_words;
        let options = vec![
            PermissionOption::new("allow_once", "Allow once", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                "allow_always",
                format!("Always allow {what} in this session"),
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new("reject_once", "Reject", PermissionOptionKind::RejectOnce),
            PermissionOption::new(
                "reject_always",
                format!("Always reject {what} in this session"),
                PermissionOptionKind::RejectAlways,
            ),
        ];
        let request =
            RequestPermissionRequest::new(self.updates.session_id(), self.updates.call_fields(id, action), options);
        let sent = self.updates.client().send_request(request);
        let mut woken = self.wake.subscribe();
        let cancel = self.cancel.clone();
        let answer = self.updates.runtime().block_on(async move {
            if cancel.is_cancelled() {
                return None;
            }
            let answered = sent.block_task();
            let cancelled = async {
                while woken.changed().await.is_ok() {
                    if cancel.is_cancelled() {
                        return;
                    }
                }
                std::future::pending::<()>().await;
            };
            let late = tokio::time::sleep(ANSWER_TIME);
            futures::pin_mut!(answered, cancelled, late);
            // A cancel is looked at before an answer that came with it;
            // dropping the request when cancelled sends `$/cancel_request`.
            match futures::future::select(cancelled, futures::future::select(answered, late)).await {
                futures::future::Either::Left(_) => None,
                futures::future::Either::Right((futures::future::Either::Left((answer, _)), _)) => Some(answer),
                futures::future::Either::Right((futures::future::Either::Right(_), _)) => {
                    Some(Err(agent_client_protocol::Error::internal_error().data("no answer in 10 minutes")))
                }
            }
        });
        let chosen = match answer {
            None => return Approval::Deny("the user cancelled the turn".into()),
            Some(Err(e)) => return Approval::Deny(format!("the permission request failed: {}", e.message)),
            Some(Ok(response)) => match response.outcome {
                RequestPermissionOutcome::Selected(selected) => selected.option_id.0.to_string(),
                _ => return Approval::Deny("the user cancelled the turn".into()),
            },
        };
        let remember = |allowed: bool| lock(&self.always).insert(action.scope.clone(), allowed);
        match chosen.as_str() {
            "allow_once" => Approval::Allow,
            "allow_always" => {
                remember(true);
                Approval::Allow
            }
            "reject_always" => {
                remember(false);
                Approval::Deny(format!("the user rejected {what} for this session"))
            }
            _ => Approval::Deny("the user rejected this call".into()),
        }
    }
}

impl Supervisor for ClientSupervisor {
    fn approve(&self, action: &Action) -> Approval {
        let current = lock(&self.current).clone();
        match current {
            Some(current) => self.decide(&current.id, action),
            None => Approval::Deny("no tool call of this session is running".into()),
        }
    }

    fn progress(&self, line: &str) {
        let current = lock(&self.current).clone();
        // Only a task running in the turn is shown at work (a background
        // one says its result when asked for it).
        let Some(current) = current.filter(|c| c.tool == "task" && !self.closed()) else { return };
        let lines = {
            let mut progress = lock(&self.progress);
            progress.push(printable(line, PROGRESS_CHARS).into_owned());
            progress.join("\n")
        };
        self.updates.progress(&current.id, &lines);
    }

    fn for_subagent(&self) -> Option<Arc<dyn Supervisor>> {
        let parent = self.this.upgrade()?;
        let task = lock(&self.current).as_ref().map_or_else(|| "task".to_owned(), |c| c.id.clone());
        Some(Arc::new(SubagentSupervisor { parent, task, next: AtomicU64::new(1), running: Mutex::new(None) }))
    }

    fn cancel(&self) -> Option<Cancel> {
        Some(self.cancel.clone())
    }
}

/// A sub-agent's supervisor: each call that needs approval is shown as a
/// call of its own (`<task call>.<n>`), asked like the agent's own (the
/// same "always" answers), and marked done with its result.
struct SubagentSupervisor {
    parent: Arc<ClientSupervisor>,
    /// The id of the `task` call that started the sub-agent.
    task: String,
    next: AtomicU64,
    /// The id of its approved call now running.
    running: Mutex<Option<String>>,
}

impl Supervisor for SubagentSupervisor {
    fn approve(&self, action: &Action) -> Approval {
        if self.parent.closed() {
            return Approval::Deny("the turn was cancelled or has ended: nobody can approve it now".into());
        }
        let id = format!("{}.{}", self.task, self.next.fetch_add(1, Ordering::SeqCst));
        self.parent.updates.tool_call(&id, action, ToolCallStatus::Pending);
        let approval = self.parent.decide(&id, action);
        match approval {
            Approval::Allow => *lock(&self.running) = Some(id),
            Approval::Deny(_) => self.parent.updates.status(&id, ToolCallStatus::Failed),
        }
        approval
    }

    fn done(&self, _action: &Action, failed: bool, text: &str) {
        let Some(id) = lock(&self.running).take() else { return };
        if !self.parent.closed() {
            let change = self.parent.take_change(&id);
            self.parent.updates.finished(&id, failed, text, change.as_ref());
        }
    }

    fn cancel(&self) -> Option<Cancel> {
        Some(self.parent.cancel.clone())
    }
}

/// `mutex` locked, even after a panic elsewhere.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
