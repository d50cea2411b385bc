//! What both wire formats share: where the API is, the model, the key and
//! the transport, and one exchange (post, then read the answer whole or as
//! a stream, then read tool calls written as text).

use serde_json::{json, Value};

use crate::http::read_json;
use crate::sse::for_each_event;
use crate::text_calls::read_text_calls;
use crate::{Cancel, LlmError, Reply, Request, Transport};

/// A model at an API endpoint.
pub(crate) struct Endpoint {
    pub(crate) url: String,
    pub(crate) model: String,
    pub(crate) key: Option<String>,
    pub(crate) transport: Transport,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Endpoint").field("url", &self.url).field("model", &self.model).finish()
    }
}

/// A streamed answer put together event by event.
pub(crate) trait StreamedReply: Default {
    /// Adds one event, handing its text to `on_text`.
    fn add(&mut self, event: &Value, on_text: &mut dyn FnMut(&str)) -> Result<(), LlmError>;
    /// The whole reply.
    fn finish(self) -> Reply;
}

impl Endpoint {
    /// The endpoint `path` under `base_url`.
    pub(crate) fn new(base_url: &str, path: &str, model: &str, key: Option<String>, transport: Transport) -> Self {
        let url = format!("{}/{path}", base_url.trim_end_matches('/'));
        Endpoint { url, model: model.to_owned(), key, transport }
    }

    /// Posts `body` and reads the reply: whole with `whole`, or streamed
    /// into an `S` when `on_text` is given.
    pub(crate) fn exchange<S: StreamedReply>(
        &self,
        headers: &[(&str, &str)],
        body: &Value,
        request: &Request,
        on_text: Option<&mut dyn FnMut(&str)>,
        cancel: &Cancel,
        whole: fn(&Value) -> Result<Reply, LlmError>,
    ) -> Result<Reply, LlmError> {
        let answer = self.transport.post(&self.url, headers, body, cancel)?;
        let mut reply = match on_text {
            None => whole(&read_json(answer, self.transport.timeout())?)?,
            Some(on_text) => {
                let mut stream = S::default();
                for_each_event(answer, self.transport.timeout(), cancel, |event| stream.add(&event, on_text))?;
                stream.finish()
            }
        };
        read_text_calls(&mut reply, request);
        Ok(reply)
    }
}

/// A call's arguments: the JSON they hold, or their text as a string
/// when it is not JSON (the loop answers the model that they are invalid).
pub(crate) fn arguments_of(text: &str) -> Value {
    if text.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}
