//! Anthropic Messages (`POST {base}/messages`).

use serde_json::{json, Value};

use crate::endpoint::{tool_call, Endpoint};
use crate::{Cancel, LlmError, Part, Provider, Reply, Request, Role, StopReason, ToolChoice, Transport, Usage};

/// The API version this provider speaks.
const API_VERSION: &str = "2023-06-01";

/// A model behind the Anthropic Messages API.
#[derive(Debug)]
pub struct AnthropicProvider(Endpoint);

impl AnthropicProvider {
    /// A provider for `model` at `base_url` (which ends before `/messages`,
    /// e.g. `https://api.anthropic.com/v1`).
    pub fn new(base_url: &str, model: &str, key: Option<String>, transport: Transport) -> Self {
        AnthropicProvider(Endpoint::new(base_url, "messages", model, key, transport))
    }

    fn body(&self, request: &Request, stream: bool) -> Value {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .filter(|message| !message.parts.is_empty())
            .map(|message| {
                let content: Vec<Value> = message
                    .parts
                    .iter()
                    .map(|part| match part {
                        Part::Text { text } => json!({"type": "text", "text": text}),
                        Part::ToolCall(call) => {
                            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
                        }
                        Part::ToolResult { call_id, content, is_error, .. } => json!({
                            "type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}),
                    })
                    .collect();
                let role = match message.role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                json!({"role": role, "content": content})
            })
            .collect();
        let mut body = json!({"model": self.0.model, "messages": messages, "max_tokens": request.max_tokens});
        if !request.system.is_empty() {
            body["system"] = json!(request.system);
        }
        if let Some(t) = request.temperature {
            body["temperature"] = json!(t);
        }
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
                .collect();
            body["tools"] = Value::Array(tools);
            body["tool_choice"] = match request.tool_choice {
                ToolChoice::Auto => json!({"type": "auto"}),
                ToolChoice::Required => json!({"type": "any"}),
                ToolChoice::None => json!({"type": "none"}),
            };
        }
        if stream {
            body["stream"] = json!(true);
        }
        body
    }
}

impl Provider for AnthropicProvider {
    fn model(&self) -> &str {
        &self.0.model
    }

    fn complete(
        &self,
        request: &Request,
        on_text: Option<&mut dyn FnMut(&str)>,
        cancel: &Cancel,
    ) -> Result<Reply, LlmError> {
        let mut headers = vec![("anthropic-version", API_VERSION)];
        if let Some(key) = &self.0.key {
            headers.push(("x-api-key", key.as_str()));
        }
        let body = self.body(request, on_text.is_some());
        self.0.exchange::<StreamedReply>(&headers, &body, request, on_text, cancel, parse_reply)
    }
}

fn stop_reason(reason: Option<&str>) -> StopReason {
    match reason {
        None | Some("end_turn" | "stop_sequence") => StopReason::EndTurn,
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens") => StopReason::MaxTokens,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

/// Input tokens with the cached ones (a server reports those apart).
fn input_tokens(usage: &Value) -> u64 {
    ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"]
        .iter()
        .filter_map(|k| usage[*k].as_u64())
        .sum()
}

pub(crate) fn parse_reply(answer: &Value) -> Result<Reply, LlmError> {
    let content = answer["content"].as_array().ok_or_else(|| LlmError::Protocol("no content in the answer".into()))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in content {
        match block["type"].as_str() {
            Some("text") => text.push_str(block["text"].as_str().unwrap_or_default()),
            Some("tool_use") => {
                let (id, name) = (block["id"].as_str().unwrap_or_default(), block["name"].as_str().unwrap_or_default());
                tool_calls.extend(tool_call(tool_calls.len(), id, name, block["input"].clone()));
            }
            _ => {}
        }
    }
    let usage = answer
        .get("usage")
        .filter(|u| u.is_object())
        .map(|u| Usage { input_tokens: input_tokens(u), output_tokens: u["output_tokens"].as_u64().unwrap_or(0) });
    Ok(Reply { text, tool_calls, usage, stop: stop_reason(answer["stop_reason"].as_str()), calls_from_text: false })
}

/// The pieces of a streamed answer.
enum Block {
    Text,
    Tool { id: String, name: String, input: String },
    Other,
}

#[derive(Default)]
pub(crate) struct StreamedReply {
    text: String,
    blocks: Vec<Block>,
    stop: Option<String>,
    usage: Option<Usage>,
}

impl crate::endpoint::StreamedReply for StreamedReply {
    fn add(&mut self, event: &Value, on_text: &mut dyn FnMut(&str)) -> Result<(), LlmError> {
        match event["type"].as_str() {
            Some("message_start") => {
                let usage = &event["message"]["usage"];
                self.usage = Some(Usage {
                    input_tokens: input_tokens(usage),
                    output_tokens: usage["output_tokens"].as_u64().unwrap_or(0),
                });
            }
            Some("content_block_start") => {
                let block = &event["content_block"];
                self.blocks.push(match block["type"].as_str() {
                    Some("text") => Block::Text,
                    Some("tool_use") => Block::Tool {
                        id: block["id"].as_str().unwrap_or_default().to_owned(),
                        name: block["name"].as_str().unwrap_or_default().to_owned(),
                        input: String::new(),
                    },
                    _ => Block::Other,
                });
            }
            Some("content_block_delta") => {
                let delta = &event["delta"];
                if let Some(text) = delta["text"].as_str() {
                    self.text.push_str(text);
                    on_text(text);
                } else if let (Some(partial), Some(Block::Tool { input, .. })) =
                    (delta["partial_json"].as_str(), self.blocks.last_mut())
                {
                    input.push_str(partial);
                }
            }
            Some("message_delta") => {
                if let Some(reason) = event["delta"]["stop_reason"].as_str() {
                    self.stop = Some(reason.to_owned());
                }
                if let (Some(out), Some(usage)) = (event["usage"]["output_tokens"].as_u64(), self.usage.as_mut()) {
                    usage.output_tokens = out;
                }
            }
            Some("error") => {
                return Err(LlmError::Protocol(format!("the stream reported an error: {}", event["error"])))
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(self) -> Reply {
        let tool_calls = self
            .blocks
            .into_iter()
            .filter_map(|block| match block {
                Block::Tool { id, name, input } => Some((id, name, input)),
                _ => None,
            })
            .enumerate()
            .filter_map(|(n, (id, name, input))| tool_call(n, &id, &name, Value::String(input)))
            .collect();
        Reply {
            text: self.text,
            tool_calls,
            usage: self.usage,
            stop: stop_reason(self.stop.as_deref()),
            calls_from_text: false,
        }
    }
}
