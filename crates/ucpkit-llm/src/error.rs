//! What can go wrong talking to a model.

/// A failed model call. No variant ever holds an API key.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The API answered with an error status (after any retries).
    #[error("the model API answered {status}: {body}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The start of the answer's body.
        body: String,
    },
    /// The server could not be reached or the connection broke.
    #[error("could not reach the model API: {0}")]
    Transport(String),
    /// No answer within the time allowed.
    #[error("the model API did not answer within {0} s")]
    Timeout(u64),
    /// An answer that went on past the time a whole answer may take.
    #[error("the model API's answer did not end within {0} s (the call's deadline)")]
    Deadline(u64),
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// The answer was not what the wire format promises.
    #[error("unexpected answer from the model API: {0}")]
    Protocol(String),
    /// The configuration is incomplete or wrong.
    #[error("{0}")]
    Config(String),
}
