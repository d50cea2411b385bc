//! `ask_user`: a question to the person behind the agent, with 2–4
//! options (label and description) and optionally free text. How it is
//! asked belongs to the front end ([`Asker`]): a selectable prompt in a
//! terminal, the protocol's elicitation over MCP.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use ucpkit_llm::ToolSpec;

use crate::host::{ToolHost, ToolOutcome};

/// One option of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// Its short label.
    pub label: String,
    /// What choosing it means.
    #[serde(default)]
    pub description: String,
}

/// A question for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    /// The question.
    pub question: String,
    /// Its 2–4 options.
    pub options: Vec<Choice>,
    /// Whether the user may answer in their own words instead.
    #[serde(default)]
    pub allow_free_text: bool,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserAnswer {
    /// The label of the option chosen.
    Choice(String),
    /// Their own words.
    Text(String),
}

impl Question {
    /// Reads a question from a tool call's arguments, checking it.
    pub fn from_arguments(arguments: &Map<String, Value>) -> Result<Question, String> {
        let question: Question =
            serde_json::from_value(Value::Object(arguments.clone())).map_err(|e| format!("invalid question: {e}"))?;
        if question.question.trim().is_empty() {
            return Err("the question is empty".into());
        }
        if !(2..=4).contains(&question.options.len()) {
            return Err(format!("give 2 to 4 options, not {}", question.options.len()));
        }
        for (n, choice) in question.options.iter().enumerate() {
            if choice.label.trim().is_empty() {
                return Err(format!("option {} has no label", n + 1));
            }
            if question.options[..n].iter().any(|c| c.label == choice.label) {
                return Err(format!("two options are labelled {:?}", choice.label));
            }
        }
        Ok(question)
    }

    /// Whether `answer` is one this question accepts.
    pub fn accepts(&self, answer: &UserAnswer) -> bool {
        match answer {
            UserAnswer::Choice(label) => self.options.iter().any(|c| c.label == *label),
            UserAnswer::Text(text) => self.allow_free_text && !text.trim().is_empty(),
        }
    }
}

/// Puts a question to the user.
pub trait Asker: Send + Sync {
    /// The user's answer, or why there is none (no terminal, a client
    /// without elicitation, a declined question).
    fn ask(&self, question: &Question) -> Result<UserAnswer, String>;
}

impl<A: Asker + ?Sized> Asker for std::sync::Arc<A> {
    fn ask(&self, question: &Question) -> Result<UserAnswer, String> {
        (**self).ask(question)
    }
}

/// The `ask_user` tool's definition.
pub fn ask_user_tool() -> ToolSpec {
    ToolSpec {
        name: "ask_user".into(),
        description: "Ask the user a question with 2 to 4 options when the task is ambiguous.".into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "question": {"type": "string"},
                "options": {"type": "array", "minItems": 2, "maxItems": 4, "items": {
                    "type": "object",
                    "properties": {"label": {"type": "string"}, "description": {"type": "string"}},
                    "required": ["label"]
                }},
                "allow_free_text": {"type": "boolean"}
            },
            "required": ["question", "options"],
            "additionalProperties": false
        }),
    }
}

/// The `ask_user` tool over an [`Asker`].
pub struct AskUser<A: Asker>(pub A);

impl<A: Asker> ToolHost for AskUser<A> {
    fn tools(&self) -> Vec<ToolSpec> {
        vec![ask_user_tool()]
    }

    fn call(&self, _name: &str, arguments: &Map<String, Value>) -> ToolOutcome {
        let question = match Question::from_arguments(arguments) {
            Ok(q) => q,
            Err(e) => return ToolOutcome::error(e),
        };
        match self.0.ask(&question) {
            Ok(answer) if question.accepts(&answer) => ToolOutcome::ok(json!({"answer": answer}).to_string()),
            Ok(answer) => ToolOutcome::error(format!("the answer {answer:?} is not one of the options")),
            Err(e) => ToolOutcome::error(format!("the user could not be asked: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Picks(UserAnswer);

    impl Asker for Picks {
        fn ask(&self, _: &Question) -> Result<UserAnswer, String> {
            Ok(self.0.clone())
        }
    }

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn questions_are_checked_and_answers_must_fit_them() {
        let tool = AskUser(Picks(UserAnswer::Choice("Fast".into())));
        let two = args(
            json!({"question": "Which?", "options": [{"label": "Fast"}, {"label": "Safe", "description": "slower"}]}),
        );
        assert_eq!(tool.call("ask_user", &two), ToolOutcome::ok(r#"{"answer":{"choice":"Fast"}}"#));
        let one = args(json!({"question": "Which?", "options": [{"label": "Fast"}]}));
        assert!(tool.call("ask_user", &one).text.contains("2 to 4"));
        let same = args(json!({"question": "Which?", "options": [{"label": "A"}, {"label": "A"}]}));
        assert!(tool.call("ask_user", &same).is_error);
        let free = AskUser(Picks(UserAnswer::Text("my own".into())));
        assert!(free.call("ask_user", &two).is_error, "free text only when allowed");
        let mut allowed = two.clone();
        allowed.insert("allow_free_text".into(), json!(true));
        assert!(!free.call("ask_user", &allowed).is_error);
    }
}
