//! The loop's rules with a scripted model (exact replies, so the rules can
//! be asserted exactly; tests/local_model.rs runs a real one): tools run
//! only when allowed, repeated calls are refused, the conversation stays in
//! its budget, the transcript is saved every step, the last step answers
//! without tools, and sub-agents run in the foreground and in parallel in
//! the background.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Map, Value};
use ucpkit_agent::{
    window, Agent, AgentSpec, Subagent, SubagentFactory, Tasks, ToolHost, ToolOutcome, Tools, Transcript,
};
use ucpkit_context::ExtractiveSummarizer;
use ucpkit_core::{BpeTokenizer, Tokenizer};
use ucpkit_llm::{Cancel, LlmError, Provider, Reply, Request, StopReason, ToolCall, ToolChoice, ToolSpec};

/// Each request's tool names, conversation tokens and tool choice.
type Seen = Arc<Mutex<Vec<(Vec<String>, usize, ToolChoice)>>>;

/// Replies in order; records what each request held.
struct Scripted {
    replies: Mutex<Vec<Reply>>,
    seen: Seen,
    delay: Duration,
}

fn call(name: &str, arguments: Value) -> Reply {
    Reply {
        text: String::new(),
        tool_calls: vec![ToolCall { id: format!("c-{name}"), name: name.into(), arguments }],
        usage: None,
        stop: StopReason::ToolUse,
        calls_from_text: false,
    }
}

fn answer(text: &str) -> Reply {
    Reply { text: text.into(), tool_calls: Vec::new(), usage: None, stop: StopReason::EndTurn, calls_from_text: false }
}

impl Scripted {
    fn new(mut replies: Vec<Reply>) -> Self {
        replies.reverse();
        Scripted { replies: Mutex::new(replies), seen: Arc::default(), delay: Duration::ZERO }
    }
}

impl Provider for Scripted {
    fn model(&self) -> &str {
        "scripted"
    }

    fn complete(&self, request: &Request, _: Option<&mut dyn FnMut(&str)>, _: &Cancel) -> Result<Reply, LlmError> {
        std::thread::sleep(self.delay);
        let tokens = window::conversation_tokens(&request.messages, &BpeTokenizer::default());
        let names = request.tools.iter().map(|t| t.name.clone()).collect();
        self.seen.lock().unwrap().push((names, tokens, request.tool_choice));
        if request.tool_choice == ToolChoice::None {
            return Ok(answer("Forced answer."));
        }
        Ok(self.replies.lock().unwrap().pop().unwrap_or_else(|| answer("out of script")))
    }
}

/// `search` returns a long text; `write` must never run.
struct Docs {
    writes: Mutex<usize>,
}

impl ToolHost for Docs {
    fn tools(&self) -> Vec<ToolSpec> {
        ["search", "write"]
            .map(|name| ToolSpec { name: name.into(), description: name.into(), parameters: json!({"type": "object"}) })
            .to_vec()
    }

    fn call(&self, name: &str, arguments: &Map<String, Value>) -> ToolOutcome {
        if name == "write" {
            *self.writes.lock().unwrap() += 1;
        }
        let query = arguments.get("query").and_then(Value::as_str).unwrap_or("");
        ToolOutcome::ok((0..80).map(|i| format!("Line {i} about {query}.")).collect::<Vec<_>>().join(" "))
    }
}

fn agent<'a>(provider: &'a dyn Provider, tools: Tools<'a>, budget: usize, max_steps: usize) -> Agent<'a> {
    static TOKENIZER: std::sync::OnceLock<BpeTokenizer> = std::sync::OnceLock::new();
    Agent {
        provider,
        tools,
        spec: AgentSpec { budget, max_steps, ..AgentSpec::default() },
        tokenizer: TOKENIZER.get_or_init(BpeTokenizer::default),
        summarizer: &ExtractiveSummarizer,
        cancel: Cancel::new(),
    }
}

#[test]
fn the_loop_keeps_its_rules() {
    let docs = Docs { writes: Mutex::new(0) };
    let model = Scripted::new(vec![
        call("search", json!({"query": "streams"})),
        call("write", json!({"path": "x"})),
        call("search", json!({"query": "streams"})),
        call("search", json!({"query": "buffers"})),
        call("search", json!({"query": "pipes"})),
        answer("Streams move data."),
    ]);
    let seen = model.seen.clone();
    let tools = Tools::new(vec![&docs], Some(vec!["search".into()]));
    let budget = 900;
    let agent = agent(&model, tools, budget, 8);
    let mut transcript = Transcript::default();
    let mut saves = 0;
    let answer = agent
        .run(
            &mut transcript,
            "What are streams?",
            &mut |_| {
                saves += 1;
                Ok(())
            },
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(answer, "Streams move data.");
    assert_eq!(*docs.writes.lock().unwrap(), 0, "a tool outside the allow-list never runs");
    let steps = &transcript.steps;
    assert_eq!(steps.len(), 6);
    assert_eq!(saves, 6, "saved after every step");
    assert!(steps[1].tools[0].is_error, "write is refused");
    assert!(!steps[2].tools[0].is_error, "a repeated call runs again");
    assert!(!steps[3].tools[0].is_error && steps[3].tools[0].result_tokens > 300);
    let seen = seen.lock().unwrap();
    assert!(seen.iter().all(|(names, _, _)| names == &["search"]), "only allowed tools are offered");
    for (n, (_, tokens, _)) in seen.iter().enumerate() {
        assert!(*tokens <= budget, "step {n} sent {tokens} tokens, over {budget}");
    }
    assert!(steps.iter().any(|s| s.fitted.compressed + s.fitted.stubbed > 0), "older results were reduced");
    assert_eq!(transcript.answer.as_deref(), Some("Streams move data."));
    assert!(steps.iter().all(|s| !s.usage_reported && s.usage.input_tokens > 0), "usage is counted when unreported");
}

#[test]
fn a_repeated_call_with_the_same_result_is_not_shown_twice() {
    let docs = Docs { writes: Mutex::new(0) };
    let model = Scripted::new(vec![
        call("search", json!({"query": "streams"})),
        call("search", json!({"query": "streams"})),
        answer("Done."),
    ]);
    let agent = agent(&model, Tools::new(vec![&docs], None), 8000, 8);
    let mut transcript = Transcript::default();
    agent.run(&mut transcript, "What are streams?", &mut |_| Ok(()), &mut |_| {}).unwrap();
    let (first, again) = (&transcript.steps[0].tools[0], &transcript.steps[1].tools[0]);
    assert!(first.result_tokens > 300 && again.result_tokens < 40, "{first:?} {again:?}");
    assert!(!again.is_error);
}

#[test]
fn the_last_step_answers_without_tools() {
    let docs = Docs { writes: Mutex::new(0) };
    let model = Scripted::new(
        (0..5).map(|n| call("search", json!({"query": format!("q{n}")}))).chain([answer("Done.")]).collect(),
    );
    let seen = model.seen.clone();
    let agent = agent(&model, Tools::new(vec![&docs], None), 4000, 2);
    let mut transcript = Transcript::default();
    let answer = agent.run(&mut transcript, "Loop forever", &mut |_| Ok(()), &mut |_| {}).unwrap();
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 3);
        assert_eq!(seen[2].2, ToolChoice::None);
        assert!(seen[2].0.is_empty(), "no tools on the last step");
    }
    assert_eq!(answer, "Forced answer.");
    let failed = agent.run(&mut transcript, "Again", &mut |_| Err("disk full".into()), &mut |_| {});
    assert!(failed.unwrap_err().to_string().contains("disk full"));
}

struct Factory;

impl SubagentFactory for Factory {
    fn types(&self) -> Vec<String> {
        vec!["explore".into(), "default".into()]
    }

    fn build(&self, kind: &str) -> Result<Subagent, String> {
        let mut model =
            Scripted::new(vec![call("search", json!({"query": kind})), answer(&format!("{kind} found streams"))]);
        model.delay = Duration::from_millis(300);
        Ok(Subagent {
            provider: Box::new(model),
            host: Box::new(Docs { writes: Mutex::new(0) }),
            allowed_tools: Some(vec!["search".into()]),
            spec: AgentSpec { budget: 2000, max_steps: 4, ..AgentSpec::default() },
        })
    }
}

#[test]
fn sub_agents_run_in_the_foreground_and_in_parallel_in_the_background() {
    let tokenizer: Arc<dyn Tokenizer> = Arc::new(BpeTokenizer::default());
    let tasks = Tasks::new(Arc::new(Factory), tokenizer, Arc::new(ExtractiveSummarizer), Cancel::new());
    let args = |v: Value| v.as_object().unwrap().clone();
    let done = tasks.call("task", &args(json!({"type": "explore", "prompt": "find streams"})));
    let result: Value = serde_json::from_str(&done.text).unwrap();
    assert_eq!((result["status"].as_str(), result["result"].as_str()), (Some("done"), Some("explore found streams")));
    assert_eq!(result["steps"], 2);
    assert!(result["input_tokens"].as_u64().unwrap() > 0 && result["duration_ms"].as_u64().unwrap() >= 600);

    let started = std::time::Instant::now();
    let ids: Vec<String> = (0..3)
        .map(|_| {
            let out = tasks.call("task", &args(json!({"type": "explore", "prompt": "p", "background": true})));
            serde_json::from_str::<Value>(&out.text).unwrap()["id"].as_str().unwrap().to_owned()
        })
        .collect();
    for id in &ids {
        let out = tasks.call("task", &args(json!({"id": id, "wait_s": 10})));
        assert!(out.text.contains("\"done\""), "{}", out.text);
    }
    assert!(started.elapsed() < Duration::from_millis(1700), "three 600 ms tasks ran side by side");
    assert!(tasks.call("task", &args(json!({"id": "task-99"}))).is_error);
    assert!(tasks.call("task", &args(json!({"type": "wizard", "prompt": "p"}))).is_error);
    assert!(tasks.call("task", &args(json!({"type": "explore"}))).text.contains("prompt"));
}
