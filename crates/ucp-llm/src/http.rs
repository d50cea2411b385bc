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
    retry: RetryPolicy,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transport").field("timeout", &self.timeout).field("retry", &self.retry).finish()
    }
}

/// The start of an error body kept in [`LlmError::Status`].
const ERROR_BODY_CHARS: usize = 600;

impl Transport {
    /// A transport whose calls each get `timeout` (for a streamed answer:
    /// the longest silence between two pieces).
    pub fn new(timeout: Duration, retry: RetryPolicy) -> Self {
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(timeout.min(Duration::from_secs(10)))
            .timeout_read(timeout)
            .timeout_write(timeout)
            .build();
        Transport { agent, timeout, retry }
    }

    /// Posts `body` to `url` with `headers` and returns the answer's body
    /// as a reader once the API accepted the call.
    pub(crate) fn post(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        body: &Value,
        cancel: &Cancel,
    ) -> Result<Box<dyn Read + Send>, LlmError> {
        let body = body.to_string();
        let mut attempt = 0;
        loop {
            cancel.check()?;
            let mut request = self.agent.post(url).set("content-type", "application/json");
            for (name, value) in headers {
                request = request.set(name, value);
            }
            let failure = match request.send_string(&body) {
                Ok(response) => return Ok(Box::new(response.into_reader())),
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

/// Reads a whole answer body as JSON.
pub(crate) fn read_json(mut body: Box<dyn Read + Send>, timeout: Duration) -> Result<Value, LlmError> {
    let mut text = String::new();
    body.read_to_string(&mut text).map_err(|e| io_error(&e, timeout))?;
    serde_json::from_str(&text).map_err(|e| LlmError::Protocol(format!("the answer is not JSON ({e})")))
}

pub(crate) fn io_error(error: &std::io::Error, timeout: Duration) -> LlmError {
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
