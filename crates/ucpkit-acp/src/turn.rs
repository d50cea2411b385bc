//! One turn of a session: the prompt's text (resource links and embedded
//! resources included), run through `ucpkit-agent`'s loop over the
//! session's registry connection, each event sent as it happens; or a
//! slash command run as its one tool call. The transcript is saved after
//! every step under the session's id.

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource, StopReason};
use agent_client_protocol::Error;
use serde_json::{json, Value};
use ucpkit_registry::parts::agent::{Agent, Event, RunError, ToolHost as _, Tools, Transcript};
use ucpkit_registry::parts::llm::LlmError;
use ucpkit_registry::vocabulary::ExtractiveSummarizer;
use ucpkit_registry::{describe, tools};

use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::PromptResponse;
use agent_client_protocol::v1::Responder;

use crate::permission::Current;
use crate::session::{internal, take, Answer, Session};
use crate::updates::action_of;

/// A slash command: its name, what it does, what it takes, and the tool
/// and argument it runs the rest of the line as.
pub(crate) struct SlashCommand {
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    pub(crate) hint: &'static str,
    tool: &'static str,
    argument: &'static str,
}

/// The slash commands: each runs one tool on the rest of the line.
pub(crate) const COMMANDS: [SlashCommand; 3] = [
    SlashCommand {
        name: "context",
        description: "The best context for a question from the indexed documents",
        hint: "question",
        tool: "context",
        argument: "question",
    },
    SlashCommand {
        name: "search",
        description: "Search the indexed documents",
        hint: "query",
        tool: "search",
        argument: "query",
    },
    SlashCommand {
        name: "memory",
        description: "Search the memories kept across sessions",
        hint: "query",
        tool: "memory_search",
        argument: "query",
    },
];

/// The prompt as one text: text blocks as they are, a resource link as
/// its name and URI, an embedded text resource under its URI; what the
/// session cannot read is refused.
fn prompt_text(prompt: &[ContentBlock]) -> Result<String, Error> {
    let mut text = String::new();
    for block in prompt {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::ResourceLink(link) => text.push_str(&format!("\n[{}]({})\n", link.name, link.uri)),
            ContentBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(resource) => {
                    text.push_str(&format!("\n<resource uri=\"{}\">\n{}\n</resource>\n", resource.uri, resource.text))
                }
                _ => return Err(Error::invalid_params().data("binary resources are not read by this agent")),
            },
            _ => return Err(Error::invalid_params().data("this agent reads text, resource links and text resources")),
        }
    }
    if text.trim().is_empty() {
        return Err(Error::invalid_params().data("the prompt is empty"));
    }
    Ok(text)
}

/// Runs one turn of `session` on `prompt` to its stop reason.
pub(crate) fn run(session: &Session, prompt: &[ContentBlock]) -> Result<StopReason, Error> {
    let text = prompt_text(prompt)?;
    if let Some(rest) = text.trim_start().strip_prefix('/') {
        let (name, argument) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        if let Some(command) = COMMANDS.iter().find(|c| c.name == name) {
            return Ok(slash_command(session, command.tool, command.argument, argument.trim()));
        }
    }
    let config = session.config();
    let agent = Agent {
        provider: &*config.provider,
        tools: Tools::new(vec![&session.host], config.allowed.clone()),
        spec: config.spec.clone(),
        tokenizer: session.tokenizer(),
        summarizer: &ExtractiveSummarizer,
        cancel: session.supervisor.turn_cancel(),
    };
    let library = session.host.0.library().clone();
    let (mut transcript, mut revision) = {
        let state = session.state();
        (state.transcript.clone(), state.revision)
    };
    let id = session.id();
    let mut save = |transcript: &Transcript| -> Result<(), String> {
        let body = ucpkit_registry::guarded::with_trace(transcript, &session.host.0).map_err(|e| e.to_string())?;
        revision = library.save_transcript(&id, &body, revision).map_err(|e| e.to_string())?;
        Ok(())
    };
    let budget = config.spec.budget as u64;
    let updates = &session.updates;
    let supervisor = &session.supervisor;
    let offer = session.host.0.offer();
    let mut on_event = |event: Event<'_>| {
        if supervisor.is_cancelled() {
            // The turn was answered `cancelled`: nothing more is shown.
            return;
        }
        match event {
            Event::Text(text) => updates.message(text),
            Event::Calling(call) => {
                let arguments = call.arguments.as_object().cloned().unwrap_or_default();
                updates.started(&call.id, &action_of(offer, &call.name, &arguments), &call.arguments);
                supervisor.set_current(Some(Current { id: call.id.clone(), tool: call.name.clone() }));
            }
            Event::Called(call, record, text) => {
                supervisor.set_current(None);
                let change = supervisor.take_change(&call.id);
                updates.finished(&call.id, record.is_error, text, change.as_ref());
                if call.name == "plan" && !record.is_error {
                    updates.plan(session.host.0.library());
                }
            }
            Event::Usage(usage) => updates.usage(usage.input_tokens, budget.max(usage.input_tokens)),
            Event::NotFinished(reason) => updates.message(&format!("\n\n(This answer was held back: {reason})\n\n")),
        }
    };
    let outcome = agent.run(&mut transcript, &text, &mut save, &mut on_event);
    {
        let mut state = session.state();
        state.transcript = transcript;
        state.revision = revision;
    }
    match outcome {
        Ok(_) => Ok(StopReason::EndTurn),
        Err(RunError::Llm(LlmError::Cancelled)) => Ok(StopReason::Cancelled),
        Err(RunError::NotAccepted(reason)) => {
            updates.message(&format!("\n\n(The work was not accepted: {reason})\n"));
            Ok(StopReason::EndTurn)
        }
        Err(e) if supervisor.is_cancelled() => {
            tracing::info!("a cancelled turn ended with: {e}");
            Ok(StopReason::Cancelled)
        }
        Err(e) => Err(internal(e)),
    }
}

/// Runs slash command `tool` with `key` = `argument`, shown as one tool
/// call and its result as the answer.
fn slash_command(session: &Session, tool: &str, key: &str, argument: &str) -> StopReason {
    let updates = &session.updates;
    let id = format!("command-{}", ucpkit_registry::vocabulary::now_ms());
    let arguments = json!({ key: argument });
    if argument.is_empty() {
        updates.message(&format!("/{tool} needs a {key}\n"));
        return StopReason::EndTurn;
    }
    let offer = session.host.0.offer();
    let Some(record) = tools::find(offer, tool) else {
        updates.message(&format!("{tool} is not offered in this session\n"));
        return StopReason::EndTurn;
    };
    let Value::Object(map) = &arguments else { return StopReason::EndTurn };
    updates.started(&id, &describe(offer, record, map), &arguments);
    let outcome = session.host.call(tool, map);
    updates.finished(&id, outcome.is_error, &outcome.text, None);
    updates.message(&outcome.text);
    StopReason::EndTurn
}

impl Session {
    /// Starts a turn on `prompt`; `responder` is answered when it ends.
    /// A prompt while another waits for its answer is refused; one right
    /// after a cancel starts when the cancelled turn's thread has ended
    /// (at its next check: a streamed piece, the end of a tool call).
    pub(crate) fn prompt(
        self: &Arc<Self>,
        prompt: Vec<ContentBlock>,
        responder: Responder<PromptResponse>,
    ) -> Result<(), Error> {
        if self.is_answering() {
            let busy = Error::invalid_request().data("a turn is running in this session: cancel it first");
            return responder.respond_with_error(busy);
        }
        let answer: Answer = Arc::new(Mutex::new(Some(responder)));
        self.state().turn = Some(answer.clone());
        let session = self.clone();
        let turn = answer.clone();
        let started = std::thread::Builder::new().name("acp-turn".into()).spawn(move || {
            if !session.wait_for_turn(&answer) {
                return;
            }
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&session, &prompt)))
                .unwrap_or_else(|_| Err(internal("the turn stopped on an internal error")));
            session.supervisor.end_turn();
            session.state().running = false;
            if let Some(responder) = take(&answer) {
                let _ = match outcome {
                    Ok(stop) => responder.respond(PromptResponse::new(stop)),
                    Err(e) => responder.respond_with_error(e),
                };
            }
        });
        match started {
            Ok(_) => Ok(()),
            Err(e) => match take(&turn) {
                Some(responder) => responder.respond_with_error(internal(format!("no thread can run the turn: {e}"))),
                None => Ok(()),
            },
        }
    }

    /// Waits for the last turn's thread to end, then holds the session for
    /// the turn of `answer` (not cancelled); false when that prompt was
    /// cancelled meanwhile. Under the session's lock, as [`Session::cancel`]
    /// is, so a cancel is never lost between the two.
    fn wait_for_turn(&self, answer: &Answer) -> bool {
        loop {
            {
                let mut state = self.state();
                if answer.lock().unwrap_or_else(|e| e.into_inner()).is_none() {
                    return false;
                }
                if !state.running {
                    state.running = true;
                    self.supervisor.start_turn();
                    return true;
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// Stops the running turn: pending permission requests are answered
    /// `cancelled`, the model call and sub-agents stop at their next
    /// check, and the turn is answered `cancelled` at once (nothing more
    /// of it is shown).
    pub(crate) fn cancel(&self) {
        let state = self.state();
        self.supervisor.cancel_turn();
        if let Some(responder) = state.turn.as_ref().and_then(take) {
            let _ = responder.respond(PromptResponse::new(StopReason::Cancelled));
        }
    }
}
