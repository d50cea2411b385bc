//! A structured event for every command, so a host can mirror a session's
//! cursor and context window elsewhere (a UI, a log, another store).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Mutex;

use serde::Serialize;
use ucm_core::BlockId;

/// What one command did, as a host sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// The session's id.
    pub session: String,
    /// The session's name, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Commands run by the session before this one.
    pub seq: u64,
    /// The command keyword (`GOTO`, `CTX ADD` ...).
    pub command: String,
    /// When it finished (ms since the Unix epoch).
    pub at_ms: i64,
    /// How long it ran, in microseconds.
    pub duration_us: u64,
    /// The error code when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'static str>,
    /// The cursor after the command.
    pub cursor: BlockId,
    /// Blocks that entered the context window.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_added: Vec<BlockId>,
    /// Blocks that left the context window.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_removed: Vec<BlockId>,
    /// Tokens in the window after the command.
    pub context_tokens: usize,
}

/// Events kept per subscriber before new ones are dropped.
const QUEUE: usize = 4096;

/// Fans events out to subscribers; costs one relaxed load when nobody listens.
#[derive(Debug, Default)]
pub struct EventBus {
    any: AtomicBool,
    subscribers: Mutex<Vec<SyncSender<Event>>>,
}

impl EventBus {
    /// A new subscription: every later event, in order (a subscriber that
    /// falls more than 4096 events behind misses the newest).
    pub fn subscribe(&self) -> Receiver<Event> {
        let (sender, receiver) = sync_channel(QUEUE);
        self.subscribers.lock().unwrap_or_else(|e| e.into_inner()).push(sender);
        self.any.store(true, Ordering::Release);
        receiver
    }

    /// Whether anyone listens.
    pub fn wanted(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }

    /// Sends an event to every live subscriber.
    pub fn emit(&self, event: Event) {
        let mut subscribers = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        subscribers.retain(|s| !matches!(s.try_send(event.clone()), Err(TrySendError::Disconnected(_))));
        self.any.store(!subscribers.is_empty(), Ordering::Release);
    }
}
