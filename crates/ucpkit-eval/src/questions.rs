//! Question files: one JSON object per line, each with an `id`, the
//! `question`, the `answers` a context must quote, the `gold` files and
//! sections they are in, and a `kind` (fact, deep, multi).

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::EvalError;

/// Where a question was written from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gold {
    /// Path relative to the corpus folder.
    pub file: String,
    /// The nearest heading above the answer.
    #[serde(default)]
    pub heading: String,
}

/// One question with the strings that answer it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    /// Unique within the file.
    pub id: String,
    /// The question as a developer would ask it.
    pub question: String,
    /// Strings that must appear verbatim (modulo whitespace) in the context.
    pub answers: Vec<String>,
    /// Where the answers are.
    #[serde(default)]
    pub gold: Vec<Gold>,
    /// The kind of question (`fact`, `multi`, `deep` ...), for per-kind recall.
    #[serde(default = "default_kind")]
    pub kind: String,
}

fn default_kind() -> String {
    "fact".to_owned()
}

/// Reads the questions of `path`.
pub fn load_questions(path: &Path) -> Result<Vec<Question>, EvalError> {
    let text = std::fs::read_to_string(path).map_err(|e| EvalError::Io(path.display().to_string(), e))?;
    parse_questions(&text)
}

/// Parses question lines; blank lines are skipped. Fails on the first bad
/// line, naming it.
pub fn parse_questions(text: &str) -> Result<Vec<Question>, EvalError> {
    let mut questions = Vec::new();
    let mut ids = HashSet::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| EvalError::BadQuestion { line: line_no, message };
        let question: Question = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        if question.question.trim().is_empty() {
            return Err(bad("the question is empty".into()));
        }
        if question.answers.is_empty() || question.answers.iter().any(|a| a.trim().is_empty()) {
            return Err(bad("every question needs at least one non-empty answer".into()));
        }
        if !ids.insert(question.id.clone()) {
            return Err(bad(format!("id {:?} is used twice", question.id)));
        }
        questions.push(question);
    }
    if questions.is_empty() {
        return Err(EvalError::NoQuestions);
    }
    Ok(questions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lines_and_names_the_bad_one() {
        let good = r#"{"id":"a","question":"Why?","answers":["because"],"gold":[{"file":"x.md","heading":"H"}],"kind":"multi"}

{"id":"b","question":"How?","answers":["so"]}"#;
        let questions = parse_questions(good).unwrap();
        assert_eq!(questions.len(), 2);
        assert_eq!(questions[0].kind, "multi");
        assert_eq!(questions[1].kind, "fact");
        assert_eq!(questions[0].gold[0].file, "x.md");

        let cases = [
            (r#"{"id":"a","question":"Why?","answers":[]}"#, 1, "answer"),
            ("{\"id\":\"a\",\"question\":\"Why?\",\"answers\":[\"x\"]}\nnot json", 2, "expected"),
            (r#"{"id":"a","question":"  ","answers":["x"]}"#, 1, "empty"),
            ("{\"id\":\"a\",\"question\":\"Q\",\"answers\":[\"x\"]}\n{\"id\":\"a\",\"question\":\"Q\",\"answers\":[\"x\"]}", 2, "twice"),
        ];
        for (text, line, says) in cases {
            match parse_questions(text) {
                Err(EvalError::BadQuestion { line: got, message }) => {
                    assert_eq!(got, line, "{text}");
                    assert!(message.contains(says), "{message}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        assert!(matches!(parse_questions("\n\n"), Err(EvalError::NoQuestions)));
    }
}
