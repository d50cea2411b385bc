//! The providers against a real local model (Qwen2.5-Coder-0.5B on
//! llama.cpp, `scripts/setup-llm`): both wire formats, whole and streamed,
//! with a tool offered. A 0.5B model's words vary between runs, so these
//! assert structure: the reply parses, a call names the offered tool with
//! an object of arguments, usage is reported, streaming hands out the text.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use ucpkit_llm::{
    AnthropicProvider, Cancel, LocalServer, Message, OpenAiProvider, Provider, Request, RetryPolicy, ToolChoice,
    ToolSpec, Transport,
};

/// The local server, from what `scripts/setup-llm` installed.
pub fn server() -> LocalServer {
    let python =
        std::env::var_os("UCP_TEST_LLM_PYTHON").expect("UCP_TEST_LLM_PYTHON is not set (scripts/test sets it)");
    let model = std::env::var_os("UCP_TEST_LLM_MODEL").expect("UCP_TEST_LLM_MODEL is not set (scripts/test sets it)");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/llm-server");
    LocalServer::start(&PathBuf::from(python), &script, &PathBuf::from(model), 1, 4096).unwrap()
}

fn transport() -> Transport {
    Transport::new(Duration::from_secs(120), RetryPolicy::default())
}

fn tool_request() -> Request {
    Request {
        system: "You answer by calling tools.".into(),
        messages: vec![Message::user("Search the docs for stream backpressure.")],
        tools: vec![ToolSpec {
            name: "search".into(),
            description: "Search the documents".into(),
            parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
        }],
        tool_choice: ToolChoice::Required,
        max_tokens: 60,
        temperature: Some(0.0),
    }
}

fn plain_request() -> Request {
    // Long enough that a sampled reply is never a single piece.
    Request {
        messages: vec![Message::user("Count from one to ten in words, separated by commas.")],
        max_tokens: 24,
        ..Request::default()
    }
}

#[test]
#[ignore = "needs UCP_TEST_LLM_PYTHON and UCP_TEST_LLM_MODEL: scripts/test installs the local model and runs this"]
fn both_wire_formats_talk_to_a_real_local_model() {
    let server = server();
    let providers: Vec<(&str, Box<dyn Provider>)> = vec![
        ("openai", Box::new(OpenAiProvider::new(&server.base_url(), "qwen", None, transport()))),
        ("anthropic", Box::new(AnthropicProvider::new(&server.base_url(), "qwen", None, transport()))),
    ];
    for (name, provider) in &providers {
        let reply = provider.complete(&tool_request(), None, &Cancel::new()).unwrap();
        let call = reply.tool_calls.first().unwrap_or_else(|| panic!("{name}: no tool call in {reply:?}"));
        assert_eq!(call.name, "search", "{name}");
        assert!(call.arguments.is_object(), "{name}: {call:?}");
        let usage = reply.usage.unwrap_or_else(|| panic!("{name}: usage not reported"));
        assert!(usage.input_tokens > 10 && usage.output_tokens > 0, "{name}: {usage:?}");

        let mut pieces = Vec::new();
        let streamed = provider
            .complete(&plain_request(), Some(&mut |t: &str| pieces.push(t.to_owned())), &Cancel::new())
            .unwrap();
        assert!(pieces.len() > 1, "{name}: the text came in pieces");
        assert_eq!(pieces.concat(), streamed.text, "{name}");
        assert!(streamed.usage.is_some_and(|u| u.output_tokens > 0), "{name}: {streamed:?}");

        let mut streamed_call = provider.complete(&tool_request(), Some(&mut |_| {}), &Cancel::new()).unwrap();
        let call = streamed_call.tool_calls.pop().unwrap_or_else(|| panic!("{name}: no streamed call"));
        assert_eq!(call.name, "search", "{name}");
    }
    let cancelled = Cancel::new();
    cancelled.cancel();
    assert!(providers[0].1.complete(&plain_request(), None, &cancelled).is_err());
}
