//! A model API that plays a script: each request is answered with the
//! next reply (an assistant message: text, tool calls), streamed when the
//! request asks for a stream; `{"slow": N}` streams N words 50 ms apart.

use std::io::Write as _;
use std::sync::mpsc::{channel, Receiver};

use serde_json::{json, Value};

#[path = "../../../../tests/support/http.rs"]
mod http;

/// The base URL of a model playing `replies`.
pub fn scripted_model(replies: Vec<Value>) -> String {
    scripted_model_seen(replies).0
}

/// The base URL of a model playing `replies`, and the requests it got.
pub fn scripted_model_seen(replies: Vec<Value>) -> (String, Receiver<Value>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (seen, requests) = channel();
    std::thread::spawn(move || {
        for reply in replies {
            let Ok((mut stream, _)) = listener.accept() else { return };
            let (_, body) = http::read_request(&stream);
            let request: Value = serde_json::from_slice(&body).unwrap();
            let streamed = request["stream"] == true;
            let _ = seen.send(request);
            if let Some(words) = reply.get("slow").and_then(Value::as_u64) {
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n");
                for _ in 0..words {
                    let event = r#"data: {"choices":[{"index":0,"delta":{"content":"word "}}]}"#;
                    if stream.write_all(format!("{event}\n\n").as_bytes()).is_err() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                continue;
            }
            let finish = if reply.get("tool_calls").is_some() { "tool_calls" } else { "stop" };
            let (kind, body) = if streamed {
                let mut delta = reply.clone();
                if let Some(calls) = delta.get_mut("tool_calls").and_then(Value::as_array_mut) {
                    for (i, call) in calls.iter_mut().enumerate() {
                        call["index"] = json!(i);
                    }
                }
                let chunk = json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
                ("text/event-stream", format!("data: {chunk}\n\ndata: [DONE]\n\n"))
            } else {
                let whole = json!({"choices": [{"index": 0, "finish_reason": finish, "message": reply}]});
                ("application/json", whole.to_string())
            };
            let head = format!("HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n", body.len());
            let _ = stream.write_all(format!("{head}{body}").as_bytes());
        }
    });
    (url, requests)
}

/// A model's call of `tool` with `arguments`, as its id `id`.
pub fn tool_call(id: &str, tool: &str, arguments: Value) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": id, "type": "function", "function": {"name": tool, "arguments": arguments.to_string()}}
    ]})
}

/// A model's answer `text`.
pub fn answer(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

/// The local model server, from what `scripts/setup-llm` installed.
pub fn local_model() -> ucpkit_registry::parts::llm::LocalServer {
    let python =
        std::env::var_os("UCP_TEST_LLM_PYTHON").expect("UCP_TEST_LLM_PYTHON is not set (scripts/test sets it)");
    let model = std::env::var_os("UCP_TEST_LLM_MODEL").expect("UCP_TEST_LLM_MODEL is not set (scripts/test sets it)");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/llm-server");
    let (python, model) = (std::path::PathBuf::from(python), std::path::PathBuf::from(model));
    ucpkit_registry::parts::llm::LocalServer::start(&python, &script, &model, 1, 4096).unwrap()
}
