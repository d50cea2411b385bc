//! Tool calls written as text. Small local models often answer a tool
//! request with the call as JSON in their text (bare, fenced, or inside
//! `<tool_call>` tags) instead of the API's tool calls: a JSON object
//! naming an offered tool, with its arguments, is read as a call.

use serde_json::Value;

use crate::{Reply, Request, StopReason, ToolCall, ToolChoice, ToolSpec};

/// Reads the calls written in a reply's text when it made none the API's
/// way and tools were offered.
pub(crate) fn read_text_calls(reply: &mut Reply, request: &Request) {
    if !reply.tool_calls.is_empty() || request.tools.is_empty() || request.tool_choice == ToolChoice::None {
        return;
    }
    let (calls, rest) = read_calls(&reply.text, &request.tools, 0);
    if !calls.is_empty() {
        reply.tool_calls = calls;
        reply.text = rest;
        reply.calls_from_text = true;
        reply.stop = StopReason::ToolUse;
    }
}

/// The calls written in `text`, and the text without them; no calls when
/// none names an offered tool.
fn read_calls(text: &str, tools: &[ToolSpec], first_id: usize) -> (Vec<ToolCall>, String) {
    let mut calls = Vec::new();
    let mut rest = String::new();
    let mut kept_from = 0;
    let mut at = 0;
    while let Some(offset) = text[at..].find('{') {
        let start = at + offset;
        let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(value)) => {
                let end = start + values.byte_offset();
                if let Some(call) = as_call(&value, tools, first_id + calls.len()) {
                    rest.push_str(&text[kept_from..start]);
                    kept_from = end;
                    calls.push(call);
                }
                at = end;
            }
            _ => at = start + 1,
        }
    }
    rest.push_str(&text[kept_from..]);
    if calls.is_empty() {
        return (calls, text.to_owned());
    }
    (calls, strip_wrappers(&rest))
}

fn as_call(value: &Value, tools: &[ToolSpec], n: usize) -> Option<ToolCall> {
    let object = value.as_object()?;
    // `{"name": ..., "arguments": {...}}`, or OpenAI's own shape inside text.
    let (name, arguments) = match object.get("function").and_then(Value::as_object) {
        Some(function) => (function.get("name")?, function.get("arguments")),
        None => (object.get("name")?, ["arguments", "parameters", "input", "args"].iter().find_map(|k| object.get(*k))),
    };
    let name = name.as_str()?;
    if !tools.iter().any(|t| t.name == name) {
        return None;
    }
    let arguments = match arguments {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(Value::String(s)) => serde_json::from_str(s).ok().filter(Value::is_object)?,
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return None,
    };
    Some(ToolCall { id: format!("call_{n}"), name: name.to_owned(), arguments })
}

/// The text left once calls are taken out, without the fences and tags
/// that held them.
fn strip_wrappers(rest: &str) -> String {
    let mut out = rest.to_owned();
    for wrapper in ["```json", "```", "<tool_call>", "</tool_call>"] {
        out = out.replace(wrapper, "");
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<ToolSpec> {
        vec![ToolSpec { name: "search".into(), description: String::new(), parameters: json!({}) }]
    }

    #[test]
    fn fenced_bare_and_tagged_calls_are_read() {
        let fenced =
            "```json\n{\n  \"name\": \"search\",\n  \"arguments\": {\"query\": \"streams\"}\n}\n```\nThis searches.";
        let (calls, rest) = read_calls(fenced, &tools(), 0);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].arguments, json!({"query": "streams"}));
        assert_eq!(rest, "This searches.");
        let tagged = "<tool_call>{\"name\":\"search\",\"arguments\":\"{\\\"query\\\":\\\"a\\\"}\"}</tool_call>";
        let (calls, rest) = read_calls(tagged, &tools(), 3);
        assert_eq!((calls[0].id.as_str(), &calls[0].arguments), ("call_3", &json!({"query": "a"})));
        assert_eq!(rest, "");
        let two = r#"{"name":"search","parameters":{"query":"a"}} {"name":"search","arguments":{"query":"b"}}"#;
        assert_eq!(read_calls(two, &tools(), 0).0.len(), 2);
    }

    #[test]
    fn other_json_is_left_as_text() {
        for text in [
            r#"Use {"name": "grep", "arguments": {}} maybe"#,
            r#"{"name": "search", "arguments": [1]}"#,
            "{ not json",
            "plain answer",
        ] {
            let (calls, rest) = read_calls(text, &tools(), 0);
            assert!(calls.is_empty(), "{text}");
            assert_eq!(rest, text);
        }
    }
}
