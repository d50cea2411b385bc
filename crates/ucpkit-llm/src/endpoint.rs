//! What both wire formats share: where the API is, the model, the key and
//! the transport, and one exchange (post, then read the answer whole or as
//! a stream, then read tool calls written as text).

use serde_json::{json, Value};

use crate::http::{read_json, Answer};
use crate::sse::for_each_event;
use crate::text_calls::read_text_calls;
use crate::{Api, Cancel, LlmError, Reply, Request, Transport};

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
        read_reply::<S>(answer, self.transport.timeout(), request, on_text, cancel, whole)
    }
}

/// Reads an accepted answer: whole, or streamed into an `S` when
/// `on_text` is given; then the calls it wrote as text.
fn read_reply<S: StreamedReply>(
    mut answer: Answer,
    timeout: std::time::Duration,
    request: &Request,
    on_text: Option<&mut dyn FnMut(&str)>,
    cancel: &Cancel,
    whole: fn(&Value) -> Result<Reply, LlmError>,
) -> Result<Reply, LlmError> {
    let mut reply = match on_text {
        None => whole(&read_json(answer, timeout)?)?,
        Some(on_text) => {
            answer.check_kind()?;
            let mut stream = S::default();
            for_each_event(answer, timeout, cancel, |event| stream.add(&event, on_text))?;
            stream.finish()
        }
    };
    read_text_calls(&mut reply, request);
    Ok(reply)
}

/// Reads a recorded answer `body` of `api`'s wire format as a call would
/// read it off the wire (a JSON body, or with `streamed` a stream of
/// server-sent events), for `request`: the same reply, or the same error,
/// whatever the bytes.
pub fn read_answer(api: Api, body: &[u8], streamed: bool, request: &Request) -> Result<Reply, LlmError> {
    let content_type = if streamed { "text/event-stream" } else { "application/json" };
    let answer = Answer::recorded(body.to_vec(), content_type);
    let (timeout, cancel, mut ignore) = (std::time::Duration::from_secs(1), Cancel::new(), |_: &str| {});
    let on_text: Option<&mut dyn FnMut(&str)> = if streamed { Some(&mut ignore) } else { None };
    match api {
        Api::OpenAi => read_reply::<crate::openai::StreamedReply>(
            answer,
            timeout,
            request,
            on_text,
            &cancel,
            crate::openai::parse_reply,
        ),
        Api::Anthropic => read_reply::<crate::anthropic::StreamedReply>(
            answer,
            timeout,
            request,
            on_text,
            &cancel,
            crate::anthropic::parse_reply,
        ),
    }
}

/// The `n`th tool call of a reply as both wire formats read it, whole or
/// streamed: `None` without a name; an id made up when it has none; its
/// arguments an object, or the text they were when they are not one (the
/// loop answers the model that they are invalid); none at all is `{}`.
pub(crate) fn tool_call(n: usize, id: &str, name: &str, arguments: Value) -> Option<crate::ToolCall> {
    if name.is_empty() {
        return None;
    }
    let arguments = match arguments {
        Value::Null => json!({}),
        Value::String(text) => arguments_of(&text),
        object @ Value::Object(_) => object,
        other => Value::String(other.to_string()),
    };
    let id = if id.is_empty() { format!("call_{n}") } else { id.to_owned() };
    Some(crate::ToolCall { id, name: name.to_owned(), arguments })
}

/// A call's arguments: the JSON object they hold, or their text as a
/// string when it is not one (the loop answers the model that they are
/// invalid).
fn arguments_of(text: &str) -> Value {
    if text.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(text).ok().filter(Value::is_object).unwrap_or_else(|| Value::String(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Message, ToolChoice, ToolSpec};

    fn request() -> Request {
        Request {
            system: String::new(),
            messages: vec![Message::user("Find it.")],
            tools: vec![ToolSpec { name: "search".into(), description: String::new(), parameters: json!({}) }],
            tool_choice: ToolChoice::Auto,
            max_tokens: 10,
            temperature: None,
        }
    }

    #[test]
    fn calls_read_whole_or_streamed_are_the_same_calls() {
        // A call without a name is dropped; arguments that are no object are
        // kept as their text; a call without an id gets one.
        let whole = r#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"tool_calls":[
            {"id":"c1","type":"function","function":{"arguments":[1]}},
            {"type":"function","function":{"name":"search","arguments":7}}]}}]}"#;
        let reply = read_answer(Api::OpenAi, whole.as_bytes(), false, &request()).unwrap();
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(
            (reply.tool_calls[0].id.as_str(), &reply.tool_calls[0].arguments),
            ("call_1", &Value::String("7".into()))
        );
        let streamed = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\
            \"function\":{\"arguments\":\"7\"}},{\"index\":1,\"function\":{\"name\":\"search\",\
            \"arguments\":\"7\"}}]}}]}\n\n";
        let reply = read_answer(Api::OpenAi, streamed.as_bytes(), true, &request()).unwrap();
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!(reply.tool_calls[0].arguments, Value::String("7".into()), "the same as whole");
        let anthropic = r#"{"content":[{"type":"tool_use","id":"t1","input":{}},
            {"type":"tool_use","name":"search","input":null}]}"#;
        let reply = read_answer(Api::Anthropic, anthropic.as_bytes(), false, &request()).unwrap();
        assert_eq!(reply.tool_calls.len(), 1);
        assert_eq!((reply.tool_calls[0].id.as_str(), &reply.tool_calls[0].arguments), ("call_0", &json!({})));
    }
}
