//! Any bytes a model server sends back, read as either wire format, whole
//! or streamed, give a reply or an error: never a panic, whatever the
//! JSON, the events or the calls written as text hold; and every call of a
//! reply has a name, an id and arguments that are an object or text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ucpkit_llm::{Api, Message, Request, ToolChoice, ToolSpec};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, body)) = data.split_first() else { return };
    let api = if flags & 1 == 0 { Api::OpenAi } else { Api::Anthropic };
    let request = Request {
        system: "Be brief.".into(),
        messages: vec![Message::user("Find it.")],
        tools: vec![ToolSpec {
            name: "search".into(),
            description: "Search".into(),
            parameters: serde_json::json!({"type": "object", "properties": {"query": {"type": "string"}}}),
        }],
        tool_choice: ToolChoice::Auto,
        max_tokens: 50,
        temperature: None,
    };
    if let Ok(reply) = ucpkit_llm::read_answer(api, body, flags & 2 != 0, &request) {
        // Every call has a name, and arguments that are an object or the
        // text they were, whichever way the answer came.
        for call in &reply.tool_calls {
            assert!(!call.name.is_empty() && !call.id.is_empty());
            assert!(call.arguments.is_object() || call.arguments.is_string());
        }
    }
});
