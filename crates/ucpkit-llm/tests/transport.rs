//! The providers against a local HTTP server that answers from a script:
//! retries on 429 and 500 (with `Retry-After`), no retry on 400, timeouts
//! on a slow server, cancellation while waiting, both wire formats whole
//! and streamed, and the key sent only in its header.

#[path = "../../../tests/support/http.rs"]
mod http;

use std::io::Write;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use ucpkit_llm::{
    AnthropicProvider, Cancel, LlmError, Message, OpenAiProvider, Provider, Request, RetryPolicy, StopReason,
    ToolChoice, ToolSpec, Transport,
};

/// One scripted answer: status, extra headers, body, delay before it;
/// or, with `drip`, a body that never ends: a piece again and again.
struct Answer {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
    delay: Duration,
    drip: Option<(&'static str, Duration)>,
}

fn answer(status: u16, body: impl Into<String>) -> Answer {
    Answer { status, headers: Vec::new(), body: body.into(), delay: Duration::ZERO, drip: None }
}

/// The requests a server saw: headers (lowercased), then the body.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

/// Serves `answers` in order, one per connection; returns its base URL
/// and the requests it saw (headers lowercased, then the body).
fn serve(answers: Vec<Answer>) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for answer in answers {
            let Ok((mut stream, _)) = listener.accept() else { return };
            let (head, body) = http::read_request(&stream);
            log.lock().unwrap().push((head, String::from_utf8(body).unwrap()));
            std::thread::sleep(answer.delay);
            if let Some((piece, every)) = answer.drip {
                let head = "HTTP/1.1 200 X\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                let _ = stream.write_all(head.as_bytes());
                while stream.write_all(piece.as_bytes()).is_ok() {
                    std::thread::sleep(every);
                }
                continue;
            }
            let mut out = format!(
                "HTTP/1.1 {} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                answer.status,
                answer.body.len()
            );
            for (k, v) in &answer.headers {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
            out.push_str("\r\n");
            out.push_str(&answer.body);
            let _ = stream.write_all(out.as_bytes());
        }
    });
    (url, seen)
}

fn transport(timeout_ms: u64, retries: u32) -> Transport {
    Transport::new(
        Duration::from_millis(timeout_ms),
        RetryPolicy { max_retries: retries, base_delay: Duration::from_millis(20), max_delay: Duration::from_secs(2) },
    )
}

fn search_tool() -> ToolSpec {
    ToolSpec {
        name: "search".into(),
        description: "Search".into(),
        parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}}),
    }
}

fn request() -> Request {
    Request {
        system: "Be brief.".into(),
        messages: vec![Message::user("Find streams.")],
        tools: vec![search_tool()],
        tool_choice: ToolChoice::Auto,
        max_tokens: 50,
        temperature: Some(0.0),
    }
}

const OPENAI_CALL: &str = r#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
  "tool_calls":[{"id":"c1","type":"function","function":{"name":"search","arguments":"{\"query\":\"streams\"}"}}]}}],
  "usage":{"prompt_tokens":31,"completion_tokens":9}}"#;

#[test]
fn rate_limits_and_server_errors_are_retried() {
    let mut limited = answer(429, "slow down");
    limited.headers.push(("retry-after", "1".into()));
    let (url, seen) = serve(vec![limited, answer(500, "oops"), answer(200, OPENAI_CALL)]);
    let provider = OpenAiProvider::new(&url, "m", Some("sk-secret".into()), transport(5000, 3));
    let started = Instant::now();
    let reply = provider.complete(&request(), None, &Cancel::new()).unwrap();
    assert!(started.elapsed() >= Duration::from_secs(1), "Retry-After is honoured");
    assert_eq!(reply.tool_calls[0].name, "search");
    assert_eq!(reply.tool_calls[0].arguments, json!({"query": "streams"}));
    assert_eq!(reply.stop, StopReason::ToolUse);
    assert_eq!(reply.usage.map(|u| (u.input_tokens, u.output_tokens)), Some((31, 9)));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    assert!(seen[0].0.contains("authorization: bearer sk-secret"));
    let body: Value = serde_json::from_str(&seen[0].1).unwrap();
    assert_eq!(body["tools"][0]["function"]["name"], "search");
    assert_eq!(body["messages"][0], json!({"role": "system", "content": "Be brief."}));
    assert!(!format!("{provider:?}").contains("sk-secret"), "the key is never printed");
}

#[test]
fn client_errors_are_not_retried_and_retries_end() {
    let (url, seen) = serve(vec![answer(400, "bad request: max_tokens"), answer(200, OPENAI_CALL)]);
    let provider = OpenAiProvider::new(&url, "m", None, transport(5000, 3));
    let error = provider.complete(&request(), None, &Cancel::new()).unwrap_err();
    assert!(matches!(&error, LlmError::Status { status: 400, body } if body.contains("max_tokens")), "{error}");
    assert_eq!(seen.lock().unwrap().len(), 1);

    let (url, seen) = serve(vec![answer(503, "a"), answer(502, "b"), answer(500, "c")]);
    let provider = OpenAiProvider::new(&url, "m", None, transport(5000, 2));
    let error = provider.complete(&request(), None, &Cancel::new()).unwrap_err();
    assert!(matches!(error, LlmError::Status { status: 500, .. }), "{error}");
    assert_eq!(seen.lock().unwrap().len(), 3);
}

#[test]
fn slow_servers_time_out_and_calls_can_be_cancelled() {
    let mut slow = answer(200, OPENAI_CALL);
    slow.delay = Duration::from_millis(1500);
    let (url, _) = serve(vec![slow]);
    let provider = OpenAiProvider::new(&url, "m", None, transport(300, 0));
    let started = Instant::now();
    let error = provider.complete(&request(), None, &Cancel::new()).unwrap_err();
    assert!(matches!(error, LlmError::Timeout(_)), "{error}");
    assert!(started.elapsed() < Duration::from_millis(1400));

    let mut limited = answer(429, "");
    limited.headers.push(("retry-after", "30".into()));
    let (url, _) = serve(vec![limited]);
    let provider = OpenAiProvider::new(&url, "m", None, transport(5000, 3));
    let cancel = Cancel::new();
    let raiser = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        raiser.cancel();
    });
    let started = Instant::now();
    let error = provider.complete(&request(), None, &cancel).unwrap_err();
    assert!(matches!(error, LlmError::Cancelled), "{error}");
    assert!(started.elapsed() < Duration::from_secs(2), "cancelled while waiting to retry");

    let unreachable =
        OpenAiProvider::new("http://user:sekret1@127.0.0.1:9/v1?key=sekret2", "m", None, transport(1000, 0));
    let error = unreachable.complete(&request(), None, &Cancel::new()).unwrap_err();
    assert!(matches!(error, LlmError::Transport(_)), "{error}");
    assert!(!error.to_string().contains("sekret") && error.to_string().contains("127.0.0.1:9"), "{error}");
}

#[test]
fn endless_streams_meet_the_deadline_and_answers_are_bounded() {
    let mut endless = answer(200, "");
    endless.drip = Some((": keep-alive\n\n", Duration::from_millis(50)));
    let (url, _) = serve(vec![endless]);
    let patient = transport(500, 0).with_deadline(Duration::from_secs(1));
    let provider = OpenAiProvider::new(&url, "m", None, patient);
    let error = provider.complete(&request(), Some(&mut |_: &str| {}), &Cancel::new()).unwrap_err();
    assert!(matches!(error, LlmError::Deadline(1)), "{error}");

    // A wrong base URL that serves a web page: said, not an empty answer.
    for streamed in [false, true] {
        let mut page = answer(200, "<!doctype html><html><title>Welcome to nginx!</title></html>");
        page.headers.push(("content-type", "text/html; charset=utf-8".into()));
        let (url, _) = serve(vec![page]);
        let provider = OpenAiProvider::new(&url, "m", None, transport(2000, 0));
        let mut on_text = |_: &str| {};
        let on_text: Option<&mut dyn FnMut(&str)> = if streamed { Some(&mut on_text) } else { None };
        let error = provider.complete(&request(), on_text, &Cancel::new()).unwrap_err().to_string();
        assert!(error.contains("web page") && error.contains("Welcome to nginx"), "{error}");
    }
    // Text that is no stream at all, without a media type to say so.
    let (url, _) = serve(vec![answer(200, "Not Found\n")]);
    let provider = OpenAiProvider::new(&url, "m", None, transport(2000, 0));
    let error = provider.complete(&request(), Some(&mut |_: &str| {}), &Cancel::new()).unwrap_err().to_string();
    assert!(error.contains("no event") && error.contains("Not Found"), "{error}");

    // An answer past the size cap is not read further.
    let huge = format!(r#"{{"choices":[{{"message":{{"content":"{}"}}}}]}}"#, "a".repeat(20 << 20));
    let (url, _) = serve(vec![answer(200, huge)]);
    let provider = OpenAiProvider::new(&url, "m", None, transport(5000, 0));
    let error = provider.complete(&request(), None, &Cancel::new()).unwrap_err().to_string();
    assert!(error.contains("over 16 MiB"), "{error}");
}

#[test]
fn streamed_openai_answers_are_put_together() {
    let stream = [
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Look"}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"ing."}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c9","function":{"name":"search","arguments":"{\"que"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ry\":\"x\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7}}"#,
    ];
    let body: String = stream.iter().map(|e| format!("data: {e}\n\n")).collect::<String>() + "data: [DONE]\n\n";
    let (url, seen) = serve(vec![answer(200, body)]);
    let provider = OpenAiProvider::new(&url, "m", None, transport(5000, 0));
    let mut pieces = Vec::new();
    let reply = provider.complete(&request(), Some(&mut |t: &str| pieces.push(t.to_owned())), &Cancel::new()).unwrap();
    assert_eq!(pieces, ["Look", "ing."]);
    assert_eq!(reply.text, "Looking.");
    assert_eq!((reply.tool_calls[0].id.as_str(), &reply.tool_calls[0].arguments), ("c9", &json!({"query": "x"})));
    assert_eq!(reply.usage.map(|u| u.output_tokens), Some(7));
    let sent: Value = serde_json::from_str(&seen.lock().unwrap()[0].1).unwrap();
    assert_eq!(sent["stream"], true);
}

#[test]
fn anthropic_answers_whole_and_streamed() {
    let whole = r#"{"content":[{"type":"text","text":"Searching."},{"type":"tool_use","id":"t1","name":"search","input":{"query":"s"}}],
        "stop_reason":"tool_use","usage":{"input_tokens":20,"cache_read_input_tokens":5,"output_tokens":4}}"#;
    let events = [
        r#"{"type":"message_start","message":{"usage":{"input_tokens":11,"output_tokens":0}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t2","name":"search","input":{}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\":"}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"y\"}"}}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":6}}"#,
        r#"{"type":"message_stop"}"#,
    ];
    let streamed: String = events.iter().map(|e| format!("event: x\ndata: {e}\n\n")).collect();
    let (url, seen) = serve(vec![answer(200, whole), answer(200, streamed)]);
    let provider = AnthropicProvider::new(&url, "claude", Some("ak-secret".into()), transport(5000, 0));
    let reply = provider.complete(&request(), None, &Cancel::new()).unwrap();
    assert_eq!(reply.text, "Searching.");
    assert_eq!(reply.tool_calls[0].arguments, json!({"query": "s"}));
    assert_eq!(reply.usage.map(|u| u.input_tokens), Some(25));
    let mut text = String::new();
    let reply = provider.complete(&request(), Some(&mut |t: &str| text.push_str(t)), &Cancel::new()).unwrap();
    assert_eq!((text.as_str(), reply.stop), ("Hi", StopReason::ToolUse));
    assert_eq!(reply.tool_calls[0].arguments, json!({"query": "y"}));
    assert_eq!(reply.usage.map(|u| (u.input_tokens, u.output_tokens)), Some((11, 6)));
    let seen = seen.lock().unwrap();
    assert!(seen[0].0.contains("x-api-key: ak-secret") && seen[0].0.contains("anthropic-version: "));
    let body: Value = serde_json::from_str(&seen[0].1).unwrap();
    assert_eq!(body["system"], "Be brief.");
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
}
