//! A run's record: the conversation, each step's calls and costs, the
//! answer. Saved after every step, so a run can be taken up again.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ucpkit_llm::{Message, Usage};

use crate::window::Fitted;

/// One tool call of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRecord {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// The result's size in tokens.
    pub result_tokens: usize,
    /// Whether it failed.
    pub is_error: bool,
    /// How long it ran.
    pub ms: u64,
}

/// One model call and the tool calls it made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// The model's tokens: reported by the API, else counted here.
    pub usage: Usage,
    /// Whether the API reported `usage` (else it was counted with o200k).
    pub usage_reported: bool,
    /// How long the model took.
    pub model_ms: u64,
    /// The conversation's tokens sent.
    pub conversation_tokens: usize,
    /// What fitting the conversation to its budget did before the call.
    pub fitted: Fitted,
    /// Whether the calls were read from the model's text.
    pub calls_from_text: bool,
    /// The tool calls.
    pub tools: Vec<ToolRecord>,
}

/// A run of the agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// The model that ran it.
    pub model: String,
    /// The conversation (the system prompt apart).
    pub messages: Vec<Message>,
    /// The steps, in order (over every task given in the session).
    pub steps: Vec<StepRecord>,
    /// The latest final answer.
    pub answer: Option<String>,
    /// The folder it worked in, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The first task, cut short: how lists name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The guard's audit trail: each call's events and what became of
    /// them (as the store holds it: front ends add to it when saving).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trace: Vec<Value>,
}

impl Transcript {
    /// The tokens all steps used.
    pub fn usage(&self) -> Usage {
        self.steps.iter().fold(Usage::default(), |sum, s| Usage {
            input_tokens: sum.input_tokens + s.usage.input_tokens,
            output_tokens: sum.output_tokens + s.usage.output_tokens,
        })
    }
}
