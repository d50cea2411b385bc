//! Any bytes a model server sends back, read as either wire format, whole
//! or streamed, give a reply or an error: never a panic, whatever the
//! JSON, the events or the calls written as text hold.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ucp_llm::{Api, Message, Request, ToolChoice, ToolSpec};

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
    if let Ok(reply) = ucp_llm::read_answer(api, body, flags & 2 != 0, &request) {
        assert!(reply.tool_calls.iter().all(|call| !call.name.is_empty() || call.arguments.is_object()
            || call.arguments.is_string()));
    }
});
