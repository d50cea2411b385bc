//! OpenAI-compatible chat completions (`POST {base}/chat/completions`):
//! OpenAI itself and local servers (llama.cpp, vLLM, Ollama).

use serde_json::{json, Value};

use crate::endpoint::{tool_call, Endpoint};
use crate::{Cancel, LlmError, Part, Provider, Reply, Request, Role, StopReason, ToolChoice, Transport, Usage};

/// A model behind an OpenAI-compatible API.
#[derive(Debug)]
pub struct OpenAiProvider(Endpoint);

impl OpenAiProvider {
    /// A provider for `model` at `base_url` (which ends before
    /// `/chat/completions`, e.g. `http://127.0.0.1:8080/v1`).
    pub fn new(base_url: &str, model: &str, key: Option<String>, transport: Transport) -> Self {
        OpenAiProvider(Endpoint::new(base_url, "chat/completions", model, key, transport))
    }

    fn body(&self, request: &Request, stream: bool) -> Value {
        let mut messages = Vec::new();
        if !request.system.is_empty() {
            messages.push(json!({"role": "system", "content": request.system}));
        }
        for message in &request.messages {
            let mut text = Vec::new();
            let mut calls = Vec::new();
            for part in &message.parts {
                match part {
                    Part::Text { text: t } => text.push(t.as_str()),
                    Part::ToolCall(call) => calls.push(json!({
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments.to_string()},
                    })),
                    Part::ToolResult { call_id, content, .. } => {
                        messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": content}));
                    }
                }
            }
            let role = match message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            if !text.is_empty() || !calls.is_empty() {
                let mut entry = json!({"role": role, "content": text.join("\n")});
                if !calls.is_empty() {
                    entry["tool_calls"] = Value::Array(calls);
                }
                messages.push(entry);
            }
        }
        let mut body = json!({"model": self.0.model, "messages": messages, "max_tokens": request.max_tokens});
        if let Some(t) = request.temperature {
            body["temperature"] = json!(t);
        }
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters}})
                })
                .collect();
            body["tools"] = Value::Array(tools);
            body["tool_choice"] = json!(match request.tool_choice {
                ToolChoice::Auto => "auto",
                ToolChoice::Required => "required",
                ToolChoice::None => "none",
            });
        }
        if stream {
            body["stream"] = json!(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        body
    }

    fn headers(&self) -> Vec<(&str, String)> {
        self.0.key.iter().map(|k| ("authorization", format!("Bearer {k}"))).collect()
    }
}

impl Provider for OpenAiProvider {
    fn model(&self) -> &str {
        &self.0.model
    }

    fn complete(
        &self,
        request: &Request,
        on_text: Option<&mut dyn FnMut(&str)>,
        cancel: &Cancel,
    ) -> Result<Reply, LlmError> {
        let headers = self.headers();
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let body = self.body(request, on_text.is_some());
        self.0.exchange::<StreamedReply>(&headers, &body, request, on_text, cancel, parse_reply)
    }
}

fn stop_reason(finish: Option<&str>) -> StopReason {
    match finish {
        None | Some("stop") => StopReason::EndTurn,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

fn usage(value: &Value) -> Option<Usage> {
    let usage = value.get("usage").filter(|u| u.is_object())?;
    Some(Usage {
        input_tokens: usage["prompt_tokens"].as_u64().unwrap_or(0),
        output_tokens: usage["completion_tokens"].as_u64().unwrap_or(0),
    })
}

/// A whole (not streamed) answer.
pub(crate) fn parse_reply(answer: &Value) -> Result<Reply, LlmError> {
    let choice = answer["choices"].get(0).ok_or_else(|| LlmError::Protocol("no choices in the answer".into()))?;
    let message = &choice["message"];
    let tool_calls = message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(n, call)| {
            let (id, function) = (call["id"].as_str().unwrap_or_default(), &call["function"]);
            tool_call(n, id, function["name"].as_str().unwrap_or_default(), function["arguments"].clone())
        })
        .collect();
    Ok(Reply {
        text: message["content"].as_str().unwrap_or_default().to_owned(),
        tool_calls,
        usage: usage(answer),
        stop: stop_reason(choice["finish_reason"].as_str()),
        calls_from_text: false,
    })
}

/// A streamed answer, put together piece by piece.
#[derive(Default)]
pub(crate) struct StreamedReply {
    text: String,
    /// (id, name, arguments so far) by the call's index.
    calls: Vec<(String, String, String)>,
    finish: Option<String>,
    usage: Option<Usage>,
}

impl crate::endpoint::StreamedReply for StreamedReply {
    fn add(&mut self, event: &Value, on_text: &mut dyn FnMut(&str)) -> Result<(), LlmError> {
        if let Some(error) = event.get("error") {
            return Err(LlmError::Protocol(format!("the stream reported an error: {error}")));
        }
        if let Some(u) = usage(event) {
            self.usage = Some(u);
        }
        let Some(choice) = event["choices"].get(0) else { return Ok(()) };
        let delta = &choice["delta"];
        if let Some(text) = delta["content"].as_str() {
            self.text.push_str(text);
            on_text(text);
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap_or(self.calls.len() as u64) as usize;
            if index > 1024 {
                return Err(LlmError::Protocol("a tool call index out of range".into()));
            }
            if self.calls.len() <= index {
                self.calls.resize(index + 1, Default::default());
            }
            let entry = &mut self.calls[index];
            if let Some(id) = call["id"].as_str() {
                entry.0 = id.to_owned();
            }
            if let Some(name) = call["function"]["name"].as_str() {
                entry.1.push_str(name);
            }
            if let Some(arguments) = call["function"]["arguments"].as_str() {
                entry.2.push_str(arguments);
            }
        }
        if let Some(finish) = choice["finish_reason"].as_str() {
            self.finish = Some(finish.to_owned());
        }
        Ok(())
    }

    fn finish(self) -> Reply {
        let tool_calls = self
            .calls
            .into_iter()
            .enumerate()
            .filter_map(|(n, (id, name, arguments))| tool_call(n, &id, &name, Value::String(arguments)))
            .collect();
        Reply {
            text: self.text,
            tool_calls,
            usage: self.usage,
            stop: stop_reason(self.finish.as_deref()),
            calls_from_text: false,
        }
    }
}
