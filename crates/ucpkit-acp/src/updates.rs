//! What a session tells its client, as `session/update` notifications:
//! message chunks, tool calls with their kind, locations, diffs and
//! status, the plan, token use, the slash commands, and a stored
//! conversation replayed.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, ContentBlock, ContentChunk, Diff, Plan,
    PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionId, SessionNotification, SessionUpdate, ToolCall,
    ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
    UnstructuredCommandInput, UsageUpdate,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use ucpkit_registry::parts::agent::{task_of, Transcript};
use ucpkit_registry::parts::llm::{Part, Role};
use ucpkit_registry::parts::memory::relations::Status;
use ucpkit_registry::{describe, tools, Action, ActionKind, FileChange, JsonObject, ToolOffer};

use crate::turn::SlashCommand;

/// A session's line to its client.
#[derive(Clone)]
pub(crate) struct Updates {
    client: ConnectionTo<Client>,
    session: SessionId,
    runtime: tokio::runtime::Handle,
}

impl Updates {
    /// Updates of session `id` to `client` (made on the runtime's threads).
    pub(crate) fn new(client: ConnectionTo<Client>, id: &str) -> Self {
        Updates { client, session: SessionId::new(id), runtime: tokio::runtime::Handle::current() }
    }

    /// The client.
    pub(crate) fn client(&self) -> &ConnectionTo<Client> {
        &self.client
    }

    /// The session's id.
    pub(crate) fn session_id(&self) -> SessionId {
        self.session.clone()
    }

    /// The runtime the connection runs on (timers for blocking waits).
    pub(crate) fn runtime(&self) -> &tokio::runtime::Handle {
        &self.runtime
    }

    fn send(&self, update: SessionUpdate) {
        // A client that went away ends the connection; nothing to tell.
        let _ = self.client.send_notification(SessionNotification::new(self.session.clone(), update));
    }

    /// A piece of the agent's answer.
    pub(crate) fn message(&self, text: &str) {
        self.send(SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text))));
    }

    /// A piece of the user's message (a replayed conversation).
    fn user_message(&self, text: &str) {
        self.send(SessionUpdate::UserMessageChunk(ContentChunk::new(ContentBlock::from(text))));
    }

    /// The slash commands the session takes.
    pub(crate) fn commands(&self, commands: &[SlashCommand]) {
        let commands = commands
            .iter()
            .map(|command| {
                AvailableCommand::new(command.name, command.description)
                    .input(AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(command.hint)))
            })
            .collect();
        self.send(SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands)));
    }

    /// The fields that show `action` as call `id`, for a permission
    /// request: title, kind, locations, the diff of its change or the
    /// whole command line.
    pub(crate) fn call_fields(&self, id: &str, action: &Action) -> ToolCallUpdate {
        let fields = ToolCallUpdateFields::new()
            .title(action.title.clone())
            .kind(kind(action.kind))
            .locations(locations(action))
            .content(content(action));
        ToolCallUpdate::new(id.to_owned(), fields)
    }

    /// Call `id` starts: `action` with `status`.
    pub(crate) fn tool_call(&self, id: &str, action: &Action, status: ToolCallStatus) {
        self.send(SessionUpdate::ToolCall(call(id, action, status)));
    }

    /// Call `id` with `arguments` starts: pending while it waits for
    /// approval, else in progress.
    pub(crate) fn started(&self, id: &str, action: &Action, arguments: &serde_json::Value) {
        let status = if action.needs_approval { ToolCallStatus::Pending } else { ToolCallStatus::InProgress };
        self.send(SessionUpdate::ToolCall(call(id, action, status).raw_input(arguments.clone())));
    }

    /// Call `id` ended: its result text, and the diff of what it changed.
    pub(crate) fn finished(&self, id: &str, failed: bool, text: &str, change: Option<&FileChange>) {
        let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
        let mut content = vec![ToolCallContent::from(ContentBlock::from(text))];
        content.extend(change.filter(|_| !failed).map(diff));
        let fields = ToolCallUpdateFields::new().status(status).content(content);
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_owned(), fields)));
    }

    /// Call `id` is now `status`.
    pub(crate) fn status(&self, id: &str, status: ToolCallStatus) {
        let fields = ToolCallUpdateFields::new().status(status);
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_owned(), fields)));
    }

    /// Call `id` is still running: what it has done so far.
    pub(crate) fn progress(&self, id: &str, text: &str) {
        let fields = ToolCallUpdateFields::new().content(vec![ToolCallContent::from(ContentBlock::from(text))]);
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_owned(), fields)));
    }

    /// Tokens of the conversation sent, out of the budget.
    pub(crate) fn usage(&self, used: u64, size: u64) {
        self.send(SessionUpdate::UsageUpdate(UsageUpdate::new(used, size)));
    }

    /// The plan: every node of the plan store with its status.
    pub(crate) fn plan(&self, library: &ucpkit_registry::Library) {
        let Ok(graph) = ucpkit_registry::parts::memory::AgentState::of(library).relations(None) else { return };
        let entries = graph
            .nodes()
            .iter()
            .filter(|node| node.node_type != "plan" || graph.parents(node.id).is_empty())
            .map(|node| {
                let status = match node.status {
                    Status::Done | Status::Failed => PlanEntryStatus::Completed,
                    Status::InProgress => PlanEntryStatus::InProgress,
                    _ => PlanEntryStatus::Pending,
                };
                PlanEntry::new(node.title.clone(), PlanEntryPriority::Medium, status)
            })
            .collect();
        self.send(SessionUpdate::Plan(Plan::new(entries)));
    }

    /// A stored conversation as the client would have seen it: the tasks,
    /// the answers, each tool call and its result.
    pub(crate) fn replay(&self, transcript: &Transcript, offer: &ToolOffer) {
        for message in &transcript.messages {
            if message.role == Role::User {
                if let Some(task) = task_of(message) {
                    self.user_message(task);
                }
            }
            for part in &message.parts {
                match (message.role, part) {
                    (Role::Assistant, Part::Text { text }) if !text.trim().is_empty() => self.message(text),
                    (_, Part::ToolCall(call)) => {
                        let arguments = call.arguments.as_object().cloned().unwrap_or_default();
                        self.tool_call(&call.id, &action_of(offer, &call.name, &arguments), ToolCallStatus::Pending);
                    }
                    (_, Part::ToolResult { call_id, content, is_error, .. }) => {
                        self.finished(call_id, *is_error, content, None)
                    }
                    _ => {}
                }
            }
        }
    }
}

/// What a call of tool `name` with `arguments` does; a tool not offered
/// (a model's invention, or one no longer there) is shown by its name.
pub(crate) fn action_of(offer: &ToolOffer, name: &str, arguments: &JsonObject) -> Action {
    match tools::find(offer, name) {
        Some(tool) => describe(offer, tool, arguments),
        None => Action {
            tool: name.to_owned(),
            kind: ActionKind::Other,
            title: ucpkit_registry::vocabulary::printable(name, 200).into_owned(),
            scope: name.to_owned(),
            scope_words: format!("{name} calls"),
            detail: None,
            locations: Vec::new(),
            change: None,
            needs_approval: false,
        },
    }
}

/// `action` as a tool call `id` with `status`.
fn call(id: &str, action: &Action, status: ToolCallStatus) -> ToolCall {
    ToolCall::new(id.to_owned(), action.title.clone())
        .kind(kind(action.kind))
        .status(status)
        .locations(locations(action))
        .content(content(action))
}

/// What shows `action` beside its title: the diff of its change, the
/// whole command line when the title cut it.
fn content(action: &Action) -> Vec<ToolCallContent> {
    let detail = action.detail.as_deref().map(|text| ToolCallContent::from(ContentBlock::from(text)));
    action.change.as_ref().map(diff).into_iter().chain(detail).collect()
}

/// ACP's kind for UCP's.
fn kind(kind: ActionKind) -> ToolKind {
    match kind {
        ActionKind::Read => ToolKind::Read,
        ActionKind::Edit => ToolKind::Edit,
        ActionKind::Delete => ToolKind::Delete,
        ActionKind::Search => ToolKind::Search,
        ActionKind::Execute => ToolKind::Execute,
        ActionKind::Think => ToolKind::Think,
        ActionKind::Fetch => ToolKind::Fetch,
        ActionKind::Other => ToolKind::Other,
    }
}

fn locations(action: &Action) -> Vec<ToolCallLocation> {
    action.locations.iter().map(|l| ToolCallLocation::new(l.path.clone()).line(l.line)).collect()
}

fn diff(change: &FileChange) -> ToolCallContent {
    ToolCallContent::Diff(Diff::new(change.path.clone(), change.new_text.clone()).old_text(change.old_text.clone()))
}
