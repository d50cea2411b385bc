//! Asking the client's user through MCP elicitation, for the `ask_user`
//! tool and sub-agents of a connection offered the agent tools.

use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer};
use rmcp::RoleServer;
use serde_json::{json, Value};
use ucpkit_registry::parts::agent::{Asker, Question, UserAnswer};

/// Asks the client's user through MCP elicitation: a form with the
/// options as an enum and, when allowed, a free-text field. Called from a
/// blocking thread of the server's runtime.
pub struct ElicitingAsker {
    peer: Peer<RoleServer>,
    runtime: tokio::runtime::Handle,
}

impl ElicitingAsker {
    /// An asker over the client `peer`, whose requests run on `runtime`.
    pub fn new(peer: Peer<RoleServer>, runtime: tokio::runtime::Handle) -> Self {
        ElicitingAsker { peer, runtime }
    }
}

impl Asker for ElicitingAsker {
    fn ask(&self, question: &Question) -> Result<UserAnswer, String> {
        if !self.peer.supported_elicitation_modes().contains(&ElicitationMode::Form) {
            return Err("this MCP client does not support elicitation; ask your user yourself".into());
        }
        let labels: Vec<&str> = question.options.iter().map(|c| c.label.as_str()).collect();
        let described: Vec<String> = question
            .options
            .iter()
            .map(|c| if c.description.is_empty() { c.label.clone() } else { format!("{}: {}", c.label, c.description) })
            .collect();
        let mut properties =
            json!({"choice": {"type": "string", "title": "Choice", "enum": labels, "enumNames": described}});
        let mut required = vec!["choice"];
        if question.allow_free_text {
            properties["text"] = json!({"type": "string", "title": "Or your own answer"});
            required.clear();
        }
        let schema: ElicitationSchema =
            serde_json::from_value(json!({"type": "object", "properties": properties, "required": required}))
                .map_err(|e| format!("the question cannot be put as a form: {e}"))?;
        let request = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: question.question.clone(),
            requested_schema: schema,
        };
        let peer = self.peer.clone();
        let result = self
            .runtime
            .block_on(async move { peer.create_elicitation(request).await })
            .map_err(|e| format!("the client did not answer: {e}"))?;
        match result.action {
            ElicitationAction::Accept => {
                let content = result.content.unwrap_or_default();
                let text = content.get("text").and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty());
                match (text, content.get("choice").and_then(Value::as_str)) {
                    (Some(text), _) => Ok(UserAnswer::Text(text.to_owned())),
                    (None, Some(choice)) => Ok(UserAnswer::Choice(choice.to_owned())),
                    (None, None) => Err("the user accepted without answering".into()),
                }
            }
            ElicitationAction::Decline => Err("the user declined to answer".into()),
            _ => Err("the user dismissed the question".into()),
        }
    }
}
