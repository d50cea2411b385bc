//! The agent loop: the model is called with the conversation (fitted to
//! its budget) and the allowed tools; its tool calls are run and their
//! results added; it ends when the model answers without calling a tool,
//! or, after the last allowed step, with an answer asked for without tools.

use std::time::Instant;

use ucpkit_context::Summarizer;
use ucpkit_core::Tokenizer;
use ucpkit_llm::{Cancel, LlmError, Message, Part, Provider, Reply, Request, Role, ToolCall, ToolChoice, Usage};

use crate::host::Tools;
use crate::transcript::{StepRecord, ToolRecord, Transcript};
use crate::window::{conversation_tokens, fit};

/// How an agent runs.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentSpec {
    /// The system prompt.
    pub system: String,
    /// The conversation's budget in tokens (the system prompt and tool
    /// list apart).
    pub budget: usize,
    /// The most model calls before an answer is asked for.
    pub max_steps: usize,
    /// The most tokens of one reply.
    pub max_reply_tokens: u32,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// The first step of a task must call a tool: the answer rests on what
    /// the tools found, not on what the model remembers.
    pub ground_first: bool,
}

impl Default for AgentSpec {
    fn default() -> Self {
        AgentSpec {
            system: SYSTEM_PROMPT.to_owned(),
            budget: 8000,
            max_steps: 8,
            max_reply_tokens: 512,
            temperature: Some(0.0),
            ground_first: true,
        }
    }
}

/// The default system prompt: short, as small models read it every step.
pub const SYSTEM_PROMPT: &str = "You work by calling tools: search the documents, read what the hits point \
     to, then answer in plain text quoting what you found.";

/// How a task is put to the model.
fn task_message(task: &str) -> Message {
    Message::user(format!("Task: {}{TASK_SUFFIX}", task.trim()))
}

/// What a model that answered without the tool call it owed is told, once,
/// in place of its answer: the tools with their required arguments, e.g.
/// `"search" (arguments: query)`.
fn call_nudge(specs: &[ucpkit_llm::ToolSpec]) -> Message {
    let tools: Vec<String> = specs
        .iter()
        .map(|spec| {
            let required: Vec<&str> = spec.parameters["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(serde_json::Value::as_str)
                .collect();
            match required.is_empty() {
                true => format!("\"{}\"", spec.name),
                false => format!("\"{}\" (arguments: {})", spec.name, required.join(", ")),
            }
        })
        .collect();
    Message::user(format!(
        "You have not called a tool. Call one now: reply with only a JSON object {{\"name\": ..., \"arguments\": \
         {{...}}}} naming one of these tools: {}.",
        tools.join(", ")
    ))
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The model could not be called.
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The transcript could not be saved.
    #[error("the transcript could not be saved: {0}")]
    Save(String),
    /// The run used its steps without its answer being let through (a
    /// check still failing, a rule still blocking `finish`).
    #[error("the answer was not accepted: {0}")]
    NotAccepted(String),
}

/// An event of a run, for a front end that shows progress.
#[derive(Debug)]
pub enum Event<'a> {
    /// A piece of the model's text as it streams.
    Text(&'a str),
    /// A tool call is about to run.
    Calling(&'a ToolCall),
    /// A tool call ended: the call, its record and the result the model
    /// is shown.
    Called(&'a ToolCall, &'a ToolRecord, &'a str),
    /// A model call ended, with the tokens it used.
    Usage(&'a Usage),
    /// The model answered, and the answer was held back: why (it goes
    /// back to the model).
    NotFinished(&'a str),
}

/// An agent: a model, its tools, its spec.
pub struct Agent<'a> {
    /// The model.
    pub provider: &'a dyn Provider,
    /// The tools it may call.
    pub tools: Tools<'a>,
    /// How it runs.
    pub spec: AgentSpec,
    /// Counts the conversation.
    pub tokenizer: &'a dyn Tokenizer,
    /// Compresses what falls out of the budget.
    pub summarizer: &'a dyn Summarizer,
    /// Stops the run.
    pub cancel: Cancel,
}

impl Agent<'_> {
    /// Runs `task` in `transcript` (new or taken up again) to an answer,
    /// calling `save` after every step and `on_event` as it goes.
    pub fn run(
        &self,
        transcript: &mut Transcript,
        task: &str,
        save: &mut dyn FnMut(&Transcript) -> Result<(), String>,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Result<String, RunError> {
        transcript.model = self.provider.model().to_owned();
        let task_at = transcript.messages.len();
        transcript.messages.push(task_message(task));
        if transcript.title.is_none() {
            transcript.title = Some(title_of(task));
        }
        transcript.answer = None;
        let specs = self.tools.specs();
        for step in 0..=self.spec.max_steps {
            let last = step == self.spec.max_steps;
            let mut messages = transcript.messages.clone();
            if last {
                messages.push(Message::user(
                    "You have used all your steps. Answer the task now from what you found, without tools.",
                ));
            }
            let fitted = fit(&mut messages, task_at, self.spec.budget, self.tokenizer, self.summarizer);
            if !last {
                // What was compressed stays compressed in the record.
                transcript.messages.clone_from(&messages);
            }
            let request = Request {
                system: self.spec.system.clone(),
                messages,
                tools: if last { Vec::new() } else { specs.clone() },
                tool_choice: match (last, step) {
                    (true, _) => ToolChoice::None,
                    (false, 0) if self.spec.ground_first && !specs.is_empty() => ToolChoice::Required,
                    _ => ToolChoice::Auto,
                },
                max_tokens: self.spec.max_reply_tokens,
                temperature: self.spec.temperature,
            };
            let started = Instant::now();
            let mut reply = self.provider.complete(&request, Some(&mut |t| on_event(Event::Text(t))), &self.cancel)?;
            if request.tool_choice == ToolChoice::Required && reply.tool_calls.is_empty() {
                // A model that ignores `tool_choice` is asked once more; its
                // answer is left out (small models would copy it).
                let mut again = request.clone();
                again.messages.push(call_nudge(&specs));
                let second = self.provider.complete(&again, Some(&mut |t| on_event(Event::Text(t))), &self.cancel)?;
                reply = Reply { usage: sum_usage(reply.usage, second.usage), ..second };
            }
            let model_ms = started.elapsed().as_millis() as u64;
            let conversation = conversation_tokens(&request.messages, self.tokenizer);
            let (usage, usage_reported) = match reply.usage {
                Some(usage) => (usage, true),
                None => (
                    Usage {
                        input_tokens: (conversation + self.tokenizer.count(&request.system)) as u64,
                        output_tokens: self.tokenizer.count(&reply.text) as u64,
                    },
                    false,
                ),
            };
            on_event(Event::Usage(&usage));
            if last {
                // No tool runs on the last step: a call left in the record
                // without its result would be an invalid conversation.
                reply.tool_calls.clear();
            }
            dedupe_calls(&mut reply, &transcript.messages);
            let mut record = StepRecord {
                usage,
                usage_reported,
                model_ms,
                conversation_tokens: conversation,
                fitted,
                calls_from_text: reply.calls_from_text,
                tools: Vec::new(),
            };
            if reply.text.trim().is_empty() && reply.tool_calls.is_empty() {
                // An empty message is invalid for some APIs.
                reply.text = "(no answer)".into();
            }
            transcript.messages.push(reply.message());
            if reply.tool_calls.is_empty() {
                transcript.steps.push(record);
                let answer = reply.text.trim().to_owned();
                if let Err(reason) = self.tools.finish(task) {
                    on_event(Event::NotFinished(&reason));
                    transcript.messages.push(Message::user(format!(
                        "Your answer was not accepted: {reason}\nDeal with this (with the tools), then answer again."
                    )));
                    save(transcript).map_err(RunError::Save)?;
                    if last {
                        return Err(RunError::NotAccepted(reason));
                    }
                    continue;
                }
                transcript.answer = Some(answer.clone());
                save(transcript).map_err(RunError::Save)?;
                return Ok(answer);
            }
            let mut results = Vec::new();
            for call in &reply.tool_calls {
                if self.cancel.is_cancelled() {
                    return Err(RunError::Llm(LlmError::Cancelled));
                }
                on_event(Event::Calling(call));
                let started = Instant::now();
                let mut outcome = self.tools.call(&call.name, &call.arguments);
                if let Some(earlier) = same_result(&transcript.messages, call, &outcome.text) {
                    // Run again (the world may have changed), but a result
                    // still shown whole above is not shown twice.
                    outcome.text = format!(
                        "[the same result as the identical call {earlier} above; try something else, or answer]"
                    );
                }
                let tool = ToolRecord {
                    tool: call.name.clone(),
                    arguments: call.arguments.clone(),
                    result_tokens: self.tokenizer.count(&outcome.text),
                    is_error: outcome.is_error,
                    ms: started.elapsed().as_millis() as u64,
                };
                on_event(Event::Called(call, &tool, &outcome.text));
                record.tools.push(tool);
                results.push(Part::ToolResult {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    content: outcome.text,
                    is_error: outcome.is_error,
                });
            }
            transcript.messages.push(Message { role: Role::User, parts: results });
            transcript.steps.push(record);
            save(transcript).map_err(RunError::Save)?;
        }
        unreachable!("the last step always answers")
    }
}

/// The most characters of a transcript's title.
const TITLE_CHARS: usize = 80;

/// A task's first line, cut at [`TITLE_CHARS`].
fn title_of(task: &str) -> String {
    let line = task.trim().lines().next().unwrap_or_default();
    match line.char_indices().nth(TITLE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

/// The task given in a message the loop wrote (`task_message`), for a
/// front end that replays a conversation.
pub fn task_of(message: &Message) -> Option<&str> {
    let [Part::Text { text }] = message.parts.as_slice() else { return None };
    let task = text.strip_prefix("Task: ")?;
    Some(task.strip_suffix(TASK_SUFFIX).unwrap_or(task))
}

/// What follows the task in its message.
const TASK_SUFFIX: &str = "\nCall a tool to find what the task needs.";

/// The most tool calls of one reply that run.
const MAX_CALLS_PER_STEP: usize = 8;

/// Keeps each distinct call of a reply once (small models repeat one call
/// many times), at most [`MAX_CALLS_PER_STEP`], each with an id no earlier
/// call of the conversation has.
fn dedupe_calls(reply: &mut Reply, messages: &[Message]) {
    let mut kept: Vec<ToolCall> = Vec::new();
    for call in reply.tool_calls.drain(..) {
        if kept.len() < MAX_CALLS_PER_STEP && !kept.iter().any(|k| k.name == call.name && k.arguments == call.arguments)
        {
            kept.push(call);
        }
    }
    let earlier: std::collections::HashSet<&str> = messages
        .iter()
        .flat_map(|m| &m.parts)
        .filter_map(|p| match p {
            Part::ToolCall(call) => Some(call.id.as_str()),
            _ => None,
        })
        .collect();
    let mut next = earlier.len();
    for n in 0..kept.len() {
        let taken = |id: &str| earlier.contains(id) || kept[..n].iter().any(|k| k.id == id);
        if kept[n].id.is_empty() || taken(&kept[n].id) {
            while taken(&format!("call_{next}")) {
                next += 1;
            }
            kept[n].id = format!("call_{next}");
        }
    }
    reply.tool_calls = kept;
}

/// The usage of two calls together (unknown when either is).
fn sum_usage(a: Option<Usage>, b: Option<Usage>) -> Option<Usage> {
    Some(Usage { input_tokens: a?.input_tokens + b?.input_tokens, output_tokens: a?.output_tokens + b?.output_tokens })
}

/// The id of an earlier call identical to `call` whose result, still
/// whole in the conversation, is `result` (the latest message is the reply
/// that holds `call` itself).
fn same_result<'a>(messages: &'a [Message], call: &ToolCall, result: &str) -> Option<&'a str> {
    let earlier = &messages[..messages.len().saturating_sub(1)];
    let parts = || earlier.iter().flat_map(|m| &m.parts);
    parts().find_map(|part| match part {
        Part::ToolCall(old) if old.name == call.name && old.arguments == call.arguments => {
            let whole = parts().any(
                |p| matches!(p, Part::ToolResult { call_id, content, .. } if *call_id == old.id && content == result),
            );
            whole.then_some(old.id.as_str())
        }
        _ => None,
    })
}
