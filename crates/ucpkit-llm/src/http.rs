//! HTTP for the providers: JSON posts with retries on 429 and 5xx answers
//! (backoff, `Retry-After` honoured), timeouts and cancellation.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::LlmError;

/// A flag that cancels the calls it is handed to, from any thread.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A flag not yet raised.
    pub fn new() -> Self {
        Self::default()
    }

    /// Raises the flag: calls stop at their next check (before a try,
    /// while waiting to retry, between streamed pieces).
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Lowers the flag for the next run of whoever shares it (a session's
    /// next turn).
    pub fn reset(&self) {
        self.0.store(false, Ordering::SeqCst);
    }

    /// Whether the flag is raised.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    pub(crate) fn check(&self) -> Result<(), LlmError> {
        if self.is_cancelled() {
            Err(LlmError::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// How failed calls are tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries after the first.
    pub max_retries: u32,
    /// The wait before the first retry; each retry doubles it.
    pub base_delay: Duration,
    /// The longest wait, `Retry-After` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_retries: 3, base_delay: Duration::from_millis(500), max_delay: Duration::from_secs(30) }
    }
}

/// Posts JSON to a model API.
#[derive(Clone)]
pub struct Transport {
    agent: ureq::Agent,
    timeout: Duration,
    deadline: Duration,
    retry: RetryPolicy,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport")
            .field("timeout", &self.timeout)
            .field("deadline", &self.deadline)
            .field("retry", &self.retry)
            .finish()
    }
}

/// The start of an error body kept in [`LlmError::Status`].
const ERROR_BODY_CHARS: usize = 600;

/// Most bytes of one answer read: a model's reply is rarely a megabyte.
pub const MAX_ANSWER_BYTES: u64 = 16 << 20;

/// The deadline of a call when none is set, unless its timeout is longer.
const DEFAULT_DEADLINE: Duration = Duration::from_secs(600);

impl Transport {
    /// A transport whose calls each get `timeout` (for a streamed answer:
    /// the longest silence between two pieces), and 600 s for a whole
    /// answer (see [`Transport::with_deadline`]).
    pub fn new(timeout: Duration, retry: RetryPolicy) -> Self {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(timeout.min(Duration::from_secs(10)))
            .timeout_read(timeout)
            .timeout_write(timeout)
            .build();
        Transport { agent, timeout, deadline: DEFAULT_DEADLINE.max(timeout), retry }
    }

    /// The same transport, a whole answer (however steadily it streams,
    /// keep-alive comments included) given at most `deadline`.
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// Posts `body` to `url` with `headers` and returns the answer's body
    /// once the API accepted the call: read until the call's deadline and
    /// up to [`MAX_ANSWER_BYTES`].
    pub(crate) fn post(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        body: &Value,
        cancel: &Cancel,
    ) -> Result<Answer, LlmError> {
        let body = body.to_string();
        let mut attempt = 0;
        loop {
            cancel.check()?;
            let mut request = self.agent.post(url).set("content-type", "application/json");
            for (name, value) in headers {
                request = request.set(name, value);
            }
            let deadline = Instant::now() + self.deadline;
            let failure = match request.send_string(&body) {
                Ok(response) => {
                    let content_type = response.content_type().to_ascii_lowercase();
                    let reader = Box::new(response.into_reader());
                    return Ok(Answer { reader, content_type, deadline, limit: self.deadline, read: 0 });
                }
                Err(ureq::Error::Status(status, response)) => {
                    let retry_after = response.header("retry-after").and_then(|s| s.trim().parse::<u64>().ok());
                    let mut text = String::new();
                    let _ = response.into_reader().take(64 * 1024).read_to_string(&mut text);
                    let text: String = text.chars().take(ERROR_BODY_CHARS).collect();
                    let retryable = status == 429 || status >= 500;
                    (LlmError::Status { status, body: text }, retryable, retry_after)
                }
                Err(ureq::Error::Transport(transport)) => {
                    let error = transport_error(&transport, self.timeout);
                    // A broken or refused connection may mend; a call that
                    // timed out already took its whole time, and a bad URL
                    // stays bad.
                    let retryable = matches!(
                        transport.kind(),
                        ureq::ErrorKind::ConnectionFailed | ureq::ErrorKind::Io | ureq::ErrorKind::Dns
                    ) && !matches!(error, LlmError::Timeout(_));
                    (error, retryable, None)
                }
            };
            let (error, retryable, retry_after) = failure;
            if !retryable || attempt >= self.retry.max_retries {
                return Err(error);
            }
            let backoff = self.retry.base_delay.saturating_mul(1 << attempt.min(16));
            let wait = retry_after.map_or(backoff, Duration::from_secs).min(self.retry.max_delay);
            tracing::debug!(%error, ?wait, attempt, "retrying a model call");
            sleep_unless_cancelled(wait, cancel)?;
            attempt += 1;
        }
    }
}

fn transport_error(transport: &ureq::Transport, timeout: Duration) -> LlmError {
    let timed_out = std::error::Error::source(transport)
        .and_then(|e| e.downcast_ref::<std::io::Error>())
        .is_some_and(|e| matches!(e.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock));
    if timed_out {
        return LlmError::Timeout(timeout.as_secs().max(1));
    }
    // The host and the failure, never the URL's user, password, path or
    // query (where some APIs take a key) nor any header.
    let host =
        transport.url().and_then(|u| u.host_str().map(|h| format!("{h}:{}", u.port_or_known_default().unwrap_or(0))));
    let what = match transport.message() {
        Some(message) => format!("{}: {message}", transport.kind()),
        None => transport.kind().to_string(),
    };
    let cause = std::error::Error::source(transport).map(|e| format!(" ({e})")).unwrap_or_default();
    LlmError::Transport(match host {
        Some(host) => format!("{host}: {what}{cause}"),
        None => format!("{what}{cause}"),
    })
}

/// An accepted call's answer: its media type, and its body, which fails
/// a read past the call's deadline or past [`MAX_ANSWER_BYTES`].
pub(crate) struct Answer {
    reader: Box<dyn Read + Send>,
    /// The media type (`application/json`, `text/event-stream` ...), lower case.
    pub(crate) content_type: String,
    deadline: Instant,
    limit: Duration,
    read: u64,
}

/// Why an answer stopped being read.
#[derive(Debug)]
enum AnswerLimit {
    Deadline(Duration),
    Size,
}

impl std::fmt::Display for AnswerLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnswerLimit::Deadline(limit) => write!(f, "past the deadline of {} s", limit.as_secs()),
            AnswerLimit::Size => write!(f, "over {} MiB", MAX_ANSWER_BYTES >> 20),
        }
    }
}

impl std::error::Error for AnswerLimit {}

impl Read for Answer {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        if Instant::now() >= self.deadline {
            return Err(std::io::Error::other(AnswerLimit::Deadline(self.limit)));
        }
        let room = usize::try_from(MAX_ANSWER_BYTES + 1 - self.read.min(MAX_ANSWER_BYTES)).unwrap_or(usize::MAX);
        let wanted = buffer.len().min(room);
        let n = self.reader.read(&mut buffer[..wanted])?;
        self.read += n as u64;
        if self.read > MAX_ANSWER_BYTES {
            return Err(std::io::Error::other(AnswerLimit::Size));
        }
        Ok(n)
    }
}

impl Answer {
    /// An answer already received whole (`body`, of media type
    /// `content_type`), read under the same caps.
    pub(crate) fn recorded(body: Vec<u8>, content_type: &str) -> Self {
        let limit = DEFAULT_DEADLINE;
        let reader = Box::new(std::io::Cursor::new(body));
        Answer { reader, content_type: content_type.to_owned(), deadline: Instant::now() + limit, limit, read: 0 }
    }

    /// Refuses an answer that is a web page (a base URL that names a site,
    /// not an API), saying what came back.
    pub(crate) fn check_kind(&mut self) -> Result<(), LlmError> {
        if !self.content_type.starts_with("text/html") {
            return Ok(());
        }
        let mut head = String::new();
        let _ = self.take(4096).read_to_string(&mut head);
        Err(LlmError::Protocol(format!(
            "the server answered with a web page ({}), not the API's JSON: check the base URL (it begins: {})",
            self.content_type,
            received(&head)
        )))
    }
}

/// The start of a text received, shown on one line.
pub(crate) fn received(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut shown: String = flat.chars().take(200).collect();
    if flat.chars().count() > 200 {
        shown.push('…');
    }
    format!("{:?}", shown)
}

/// Reads a whole answer body as JSON.
pub(crate) fn read_json(mut body: Answer, timeout: Duration) -> Result<Value, LlmError> {
    body.check_kind()?;
    let mut text = String::new();
    body.read_to_string(&mut text).map_err(|e| io_error(&e, timeout))?;
    serde_json::from_str(&text)
        .map_err(|e| LlmError::Protocol(format!("the answer is not JSON ({e}); it begins: {}", received(&text))))
}

pub(crate) fn io_error(error: &std::io::Error, timeout: Duration) -> LlmError {
    if let Some(limit) = error.get_ref().and_then(|e| e.downcast_ref::<AnswerLimit>()) {
        return match limit {
            AnswerLimit::Deadline(limit) => LlmError::Deadline(limit.as_secs().max(1)),
            AnswerLimit::Size => LlmError::Protocol(format!("the answer is {limit}: not read further")),
        };
    }
    match error.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => LlmError::Timeout(timeout.as_secs().max(1)),
        _ => LlmError::Transport(error.to_string()),
    }
}

impl Transport {
    /// The time one call, or one silence of a stream, may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }
}

fn sleep_unless_cancelled(wait: Duration, cancel: &Cancel) -> Result<(), LlmError> {
    let until = Instant::now() + wait;
    while Instant::now() < until {
        cancel.check()?;
        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(50)));
    }
    cancel.check()
}
