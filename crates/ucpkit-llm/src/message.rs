//! The provider-neutral conversation: what is sent and what comes back.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who said a message (the system prompt travels apart, in [`Request`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user, or the loop speaking for tools.
    User,
    /// The model.
    Assistant,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call the model made.
    ToolCall(ToolCall),
    /// The result of a tool call, sent back to the model.
    ToolResult {
        /// The id of the call it answers.
        call_id: String,
        /// The tool's name.
        name: String,
        /// What the tool returned.
        content: String,
        /// Whether the call failed.
        is_error: bool,
    },
}

/// A message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Its author.
    pub role: Role,
    /// Its pieces, in order.
    pub parts: Vec<Part>,
}

impl Message {
    /// A user message of plain text.
    pub fn user(text: impl Into<String>) -> Self {
        Message { role: Role::User, parts: vec![Part::Text { text: text.into() }] }
    }

    /// An assistant message of plain text.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message { role: Role::Assistant, parts: vec![Part::Text { text: text.into() }] }
    }

    /// The message's text pieces joined.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }
}

/// A tool call: which tool, with which arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id, echoed by its result.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, a JSON object.
    pub arguments: Value,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Its name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The JSON schema of its arguments.
    pub parameters: Value,
}

/// Whether the model must, may or must not call a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must call some tool.
    Required,
    /// The model must answer in text.
    None,
}

/// One call of a model.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The system prompt.
    pub system: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools offered.
    pub tools: Vec<ToolSpec>,
    /// Whether a tool call is required.
    pub tool_choice: ToolChoice,
    /// The most tokens the reply may have.
    pub max_tokens: u32,
    /// Sampling temperature (the API's default when absent).
    pub temperature: Option<f32>,
}

/// Tokens a call used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens (cached ones included).
    pub input_tokens: u64,
    /// Reply tokens.
    pub output_tokens: u64,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its turn.
    EndTurn,
    /// It called tools and waits for their results.
    ToolUse,
    /// It ran out of `max_tokens`.
    MaxTokens,
    /// Something else the API reported.
    Other(String),
}

/// A model's reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// Its text (without any tool call read from it).
    pub text: String,
    /// The tools it called, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Tokens used, when the API reported them.
    pub usage: Option<Usage>,
    /// Why it stopped.
    pub stop: StopReason,
    /// Whether the tool calls were read from the text (a model that writes
    /// calls as JSON instead of using the API's tool calls).
    pub calls_from_text: bool,
}

impl Reply {
    /// The reply as a message of the conversation.
    pub fn message(&self) -> Message {
        let mut parts = Vec::new();
        if !self.text.is_empty() {
            parts.push(Part::Text { text: self.text.clone() });
        }
        parts.extend(self.tool_calls.iter().cloned().map(Part::ToolCall));
        Message { role: Role::Assistant, parts }
    }
}
