//! The agent pane: a conversation with the agent loop, its text streamed,
//! its tool calls folded with their results, a permission request as a
//! modal naming the exact action, Ctrl-C cancelling the turn. How a turn
//! runs is the front end's ([`AgentBackend`]): the CLI runs `ucp agent`'s
//! loop, with the registry's gate.

use std::collections::HashSet;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ucpkit_registry::parts::llm::{Cancel, Overrides};
use ucpkit_registry::{Action, Approval, Supervisor};

use crate::input::Field;
use crate::jobs::{Answer, Done, PermissionRequest};

/// What a running turn tells the pane.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentNews {
    /// A piece of the model's text.
    Text(String),
    /// A tool call starts.
    Calling {
        /// The tool.
        tool: String,
        /// Its arguments, as JSON.
        arguments: String,
    },
    /// A tool call ended.
    Called {
        /// The tool.
        tool: String,
        /// The result the model is shown.
        result: String,
        /// The result's tokens.
        tokens: usize,
        /// It failed.
        failed: bool,
    },
    /// A line of progress (a sub-agent's step), or why an answer was
    /// held back.
    Note(String),
    /// The turn ended: the answer, or why not.
    Finished(Result<String, String>),
}

/// Runs the agent's turns for the pane.
pub trait AgentBackend: Send + Sync {
    /// The model the next turn will use (`provider/model`), or why there
    /// is none.
    fn model(&self) -> Result<String, String>;

    /// The model flags the program was given, which win over the
    /// configuration files (none by default).
    fn overrides(&self) -> Overrides {
        Overrides::default()
    }

    /// Runs one turn of the stored conversation `conversation` (made
    /// when new) with `message`: every piece of news goes to `tell`, every
    /// call that needs approval to `supervisor`; `cancel` stops it.
    fn turn(
        &self,
        conversation: &str,
        message: &str,
        supervisor: Arc<dyn Supervisor>,
        cancel: Cancel,
        tell: &mut dyn FnMut(AgentNews),
    ) -> Result<String, String>;
}

/// One entry of the conversation as shown.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
    /// What the person wrote.
    User(String),
    /// What the model wrote.
    Assistant(String),
    /// A tool call, with its result once it ended.
    Tool {
        /// The tool.
        tool: String,
        /// Its arguments.
        arguments: String,
        /// Its result, tokens and failure, once ended.
        result: Option<(String, usize, bool)>,
    },
    /// A note (progress, an answer held back, an error).
    Note(String),
}

/// The pane's state.
#[derive(Default)]
pub(crate) struct AgentPane {
    /// The conversation.
    pub(crate) entries: Vec<Entry>,
    /// The message being written.
    pub(crate) input: Field,
    /// Tool results are shown (else folded to one line each).
    pub(crate) unfolded: bool,
    /// The running turn's flag, while one runs.
    pub(crate) running: Option<Cancel>,
    /// The stored conversation's name (set by the first turn).
    pub(crate) conversation: Option<String>,
    /// Lines scrolled up from the bottom.
    pub(crate) scroll: usize,
    /// The message field takes the keys.
    pub(crate) typing: bool,
}

impl AgentPane {
    /// Takes news of the running turn.
    pub(crate) fn apply(&mut self, news: AgentNews) {
        match news {
            AgentNews::Text(text) => match self.entries.last_mut() {
                Some(Entry::Assistant(so_far)) => so_far.push_str(&text),
                _ => self.entries.push(Entry::Assistant(text)),
            },
            AgentNews::Calling { tool, arguments } => self.entries.push(Entry::Tool { tool, arguments, result: None }),
            AgentNews::Called { tool, result, tokens, failed } => {
                let open = self.entries.iter_mut().rev().find_map(|e| match e {
                    Entry::Tool { tool: t, result: r @ None, .. } if *t == tool => Some(r),
                    _ => None,
                });
                match open {
                    Some(slot) => *slot = Some((result, tokens, failed)),
                    None => self.entries.push(Entry::Tool {
                        tool,
                        arguments: String::new(),
                        result: Some((result, tokens, failed)),
                    }),
                }
            }
            AgentNews::Note(line) => self.entries.push(Entry::Note(line)),
            AgentNews::Finished(outcome) => {
                self.running = None;
                if let Err(why) = outcome {
                    self.entries.push(Entry::Note(format!("the turn ended: {why}")));
                }
            }
        }
        self.scroll = 0;
    }

    /// Cancels the running turn; false when none runs.
    pub(crate) fn cancel(&mut self) -> bool {
        match &self.running {
            Some(cancel) => {
                cancel.cancel();
                self.entries.push(Entry::Note("cancelling the turn…".into()));
                true
            }
            None => false,
        }
    }
}

/// The supervisor of a turn: every call that needs approval becomes a
/// permission request on the screen, and waits for the answer (or for the
/// turn to be cancelled). "Always" holds for the rest of the run.
pub(crate) struct Approver {
    to_screen: Mutex<Sender<Done>>,
    always: Arc<Mutex<HashSet<String>>>,
    cancel: Cancel,
}

impl Approver {
    /// A supervisor asking on the screen `to_screen` feeds; `always` is
    /// shared by the run's turns.
    pub(crate) fn new(to_screen: Sender<Done>, always: Arc<Mutex<HashSet<String>>>, cancel: Cancel) -> Approver {
        Approver { to_screen: Mutex::new(to_screen), always, cancel }
    }

    fn send(&self, done: Done) -> bool {
        self.to_screen.lock().unwrap_or_else(|e| e.into_inner()).send(done).is_ok()
    }
}

impl Supervisor for Approver {
    fn approve(&self, action: &Action) -> Approval {
        if self.always.lock().unwrap_or_else(|e| e.into_inner()).contains(&action.scope) {
            return Approval::Allow;
        }
        let (reply, answer) = channel();
        let request = PermissionRequest {
            title: action.title.clone(),
            scope_words: action.scope_words.clone(),
            detail: action.detail.clone(),
            touches: action
                .locations
                .iter()
                .map(|l| match l.line {
                    Some(line) => format!("{}:{line}", l.path.display()),
                    None => l.path.display().to_string(),
                })
                .collect(),
            reply,
        };
        if !self.send(Done::Permission(request)) {
            return Approval::Deny("the terminal closed".into());
        }
        loop {
            match answer.recv_timeout(Duration::from_millis(100)) {
                Ok(answer) => {
                    if answer == Answer::Always {
                        self.always.lock().unwrap_or_else(|e| e.into_inner()).insert(action.scope.clone());
                    }
                    return answer.approval();
                }
                Err(RecvTimeoutError::Timeout) if self.cancel.is_cancelled() => {
                    return Approval::Deny("the turn was cancelled".into())
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Approval::Deny("the question was closed".into()),
            }
        }
    }

    fn progress(&self, line: &str) {
        self.send(Done::Agent(AgentNews::Note(line.to_owned())));
    }

    fn cancel(&self) -> Option<Cancel> {
        Some(self.cancel.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_text_joins_and_a_result_finds_its_call() {
        let mut pane = AgentPane::default();
        pane.apply(AgentNews::Text("Look".into()));
        pane.apply(AgentNews::Text("ing.".into()));
        pane.apply(AgentNews::Calling { tool: "grep".into(), arguments: "{}".into() });
        pane.apply(AgentNews::Called { tool: "grep".into(), result: "a.rs".into(), tokens: 3, failed: false });
        assert_eq!(pane.entries[0], Entry::Assistant("Looking.".into()));
        assert_eq!(
            pane.entries[1],
            Entry::Tool { tool: "grep".into(), arguments: "{}".into(), result: Some(("a.rs".into(), 3, false)) }
        );
        pane.running = Some(Cancel::new());
        assert!(pane.cancel());
        pane.apply(AgentNews::Finished(Err("cancelled".into())));
        assert!(pane.running.is_none());
        assert!(!pane.cancel(), "nothing runs");
    }

    #[test]
    fn an_approval_waits_for_the_answer_and_always_is_remembered() {
        let (tx, rx) = channel();
        let always = Arc::new(Mutex::new(HashSet::new()));
        let approver = Arc::new(Approver::new(tx, always, Cancel::new()));
        let action = Action {
            tool: "bash".into(),
            kind: ucpkit_registry::ActionKind::Execute,
            title: "Run `cargo test` in /work".into(),
            scope: "cargo".into(),
            scope_words: "`cargo` commands".into(),
            detail: None,
            locations: Vec::new(),
            change: None,
            needs_approval: true,
        };
        let asking = {
            let (approver, action) = (approver.clone(), action.clone());
            std::thread::spawn(move || approver.approve(&action))
        };
        let Ok(Done::Permission(request)) = rx.recv_timeout(Duration::from_secs(10)) else { panic!("no request") };
        assert_eq!(request.title, "Run `cargo test` in /work");
        request.reply.send(Answer::Always).unwrap();
        assert_eq!(asking.join().unwrap(), Approval::Allow);
        assert_eq!(approver.approve(&action), Approval::Allow, "always: not asked again");
        assert!(rx.try_recv().is_err());
        let other = Action { scope: "rm".into(), ..action };
        let cancel = approver.cancel.clone();
        let asking = std::thread::spawn(move || approver.approve(&other));
        let Ok(Done::Permission(_)) = rx.recv_timeout(Duration::from_secs(10)) else { panic!("no request") };
        cancel.cancel();
        assert!(matches!(asking.join().unwrap(), Approval::Deny(_)), "a cancelled turn is denied");
    }
}
