//! Sub-agents: the `task` tool starts an agent of a type (its own model,
//! tool allow-list and fresh context), waits for it or lets it run in the
//! background under an id to poll, and returns its answer (summarized when
//! long) with the tokens it used and how long it took. Background tasks
//! run in parallel, each on a thread of its own.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use ucpkit_context::Summarizer;
use ucpkit_core::Tokenizer;
use ucpkit_llm::{Cancel, Provider, ToolSpec};

use crate::host::{ToolHost, ToolOutcome, Tools};
use crate::run::{Agent, AgentSpec, Event};
use crate::transcript::Transcript;

/// A sub-agent ready to run.
pub struct Subagent {
    /// Its model.
    pub provider: Box<dyn Provider>,
    /// Its tools (a fresh context of its own).
    pub host: Box<dyn ToolHost>,
    /// Its allow-list (`None`: all of the host's).
    pub allowed_tools: Option<Vec<String>>,
    /// How it runs.
    pub spec: AgentSpec,
}

/// Builds sub-agents by type.
pub trait SubagentFactory: Send + Sync {
    /// The types it knows, for the tool's schema.
    fn types(&self) -> Vec<String>;

    /// A sub-agent of type `kind`.
    fn build(&self, kind: &str) -> Result<Subagent, String>;
}

/// The most tokens of an answer returned whole; longer ones are summarized.
pub const MAX_RESULT_TOKENS: usize = 800;

/// The most background tasks of one [`Tasks`] running at once.
pub const MAX_BACKGROUND_TASKS: usize = 8;

/// What a finished task returns.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TaskResult {
    /// Its id.
    pub id: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: String,
    /// `done` or `failed`.
    pub status: &'static str,
    /// The answer (summarized past [`MAX_RESULT_TOKENS`]), or the error.
    pub result: String,
    /// Whether `result` is a summary.
    pub summarized: bool,
    /// Model calls made.
    pub steps: usize,
    /// Prompt tokens over all calls.
    pub input_tokens: u64,
    /// Reply tokens over all calls.
    pub output_tokens: u64,
    /// Wall time.
    pub duration_ms: u64,
}

/// Told a line for each step of a running task (`explore task-1: grep
/// {"pattern":"x"}`), for a front end that shows sub-agents at work.
pub type Progress = Arc<dyn Fn(&str) + Send + Sync>;

/// The `task` tool and the tasks it started.
pub struct Tasks {
    factory: Arc<dyn SubagentFactory>,
    progress: Option<Progress>,
    tokenizer: Arc<dyn Tokenizer>,
    summarizer: Arc<dyn Summarizer>,
    cancel: Cancel,
    next: AtomicU64,
    finished: Arc<Finished>,
}

/// Background tasks by id (`None` while running), and the condition their
/// ends signal.
type Finished = (Mutex<HashMap<String, Option<TaskResult>>>, Condvar);

impl Tasks {
    /// Tasks built by `factory`, cancelled with `cancel`.
    pub fn new(
        factory: Arc<dyn SubagentFactory>,
        tokenizer: Arc<dyn Tokenizer>,
        summarizer: Arc<dyn Summarizer>,
        cancel: Cancel,
    ) -> Self {
        Tasks {
            factory,
            progress: None,
            tokenizer,
            summarizer,
            cancel,
            next: AtomicU64::new(1),
            finished: Arc::default(),
        }
    }

    /// The same tasks, each step of theirs told to `progress`.
    pub fn with_progress(mut self, progress: Option<Progress>) -> Self {
        self.progress = progress;
        self
    }

    /// How one task runs: what it is built with and tells.
    fn runner(&self) -> Runner {
        Runner {
            factory: self.factory.clone(),
            progress: self.progress.clone(),
            tokenizer: self.tokenizer.clone(),
            summarizer: self.summarizer.clone(),
            cancel: self.cancel.clone(),
        }
    }

    /// Runs a task of type `kind` on `prompt` to its end.
    pub fn run(&self, kind: &str, prompt: &str) -> TaskResult {
        let id = format!("task-{}", self.next.fetch_add(1, Ordering::SeqCst));
        self.runner().run(id, kind, prompt)
    }

    /// Starts a task in the background; returns its id, or an error when
    /// [`MAX_BACKGROUND_TASKS`] are running.
    pub fn start(&self, kind: &str, prompt: &str) -> Result<String, String> {
        let id = format!("task-{}", self.next.fetch_add(1, Ordering::SeqCst));
        {
            let mut finished = self.finished.0.lock().unwrap_or_else(|e| e.into_inner());
            if finished.values().filter(|r| r.is_none()).count() >= MAX_BACKGROUND_TASKS {
                return Err(format!("{MAX_BACKGROUND_TASKS} tasks are running already; wait for one"));
            }
            finished.insert(id.clone(), None);
        }
        let (runner, finished, task_id) = (self.runner(), self.finished.clone(), id.clone());
        let (kind, prompt) = (kind.to_owned(), prompt.to_owned());
        let started = std::thread::Builder::new().name(id.clone()).spawn(move || {
            let run = || runner.run(task_id.clone(), &kind, &prompt);
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or_else(|_| TaskResult {
                id: task_id.clone(),
                kind: kind.clone(),
                status: "failed",
                result: "the sub-agent stopped on an internal error".into(),
                summarized: false,
                steps: 0,
                input_tokens: 0,
                output_tokens: 0,
                duration_ms: 0,
            });
            finished.0.lock().unwrap_or_else(|e| e.into_inner()).insert(task_id, Some(result));
            finished.1.notify_all();
        });
        if let Err(e) = started {
            self.finished.0.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
            return Err(format!("no thread can run the task: {e}"));
        }
        Ok(id)
    }

    /// The result of background task `id`, waiting up to `wait` for it
    /// (handed out once: the task is then forgotten); `Ok(None)` while it
    /// runs, an error for an unknown id.
    pub fn poll(&self, id: &str, wait: Duration) -> Result<Option<TaskResult>, String> {
        let until = Instant::now() + wait;
        let mut finished = self.finished.0.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match finished.get(id) {
                None => return Err(format!("no task {id:?} is running here (a result is handed out once)")),
                Some(Some(_)) => return Ok(finished.remove(id).flatten()),
                Some(None) if Instant::now() >= until => return Ok(None),
                Some(None) => {
                    let left = until.saturating_duration_since(Instant::now());
                    finished = self.finished.1.wait_timeout(finished, left).unwrap_or_else(|e| e.into_inner()).0;
                }
            }
        }
    }
}

impl Drop for Tasks {
    /// Background tasks stop with their owner (at their next check).
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// What one task runs with.
struct Runner {
    factory: Arc<dyn SubagentFactory>,
    progress: Option<Progress>,
    tokenizer: Arc<dyn Tokenizer>,
    summarizer: Arc<dyn Summarizer>,
    cancel: Cancel,
}

impl Runner {
    /// Runs task `id` of type `kind` on `prompt` to its end.
    fn run(&self, id: String, kind: &str, prompt: &str) -> TaskResult {
        let (tokenizer, summarizer) = (&*self.tokenizer, &*self.summarizer);
        let started = Instant::now();
        let mut transcript = Transcript::default();
        let tell = |line: String| {
            if let Some(progress) = &self.progress {
                progress(&format!("{kind} {id}: {line}"));
            }
        };
        tell("started".into());
        let mut on_event = |event: Event<'_>| match event {
            Event::Calling(call) => tell(format!("{} {}", call.name, call.arguments)),
            Event::Called(_, record, _) if record.is_error => tell(format!("{} failed", record.tool)),
            _ => {}
        };
        let outcome = self.factory.build(kind).and_then(|sub| {
            let agent = Agent {
                provider: &*sub.provider,
                tools: Tools::new(vec![&*sub.host], sub.allowed_tools.clone()),
                spec: sub.spec.clone(),
                tokenizer,
                summarizer,
                cancel: self.cancel.clone(),
            };
            agent.run(&mut transcript, prompt, &mut |_| Ok(()), &mut on_event).map_err(|e| e.to_string())
        });
        let usage = transcript.usage();
        let (status, mut result) = match outcome {
            Ok(answer) => ("done", answer),
            Err(error) => ("failed", error),
        };
        tell(format!("{status} after {} steps", transcript.steps.len()));
        let tokens = tokenizer.count(&result);
        let summarized = tokens > MAX_RESULT_TOKENS;
        if summarized {
            result = summarizer.summarize(&result, MAX_RESULT_TOKENS, tokenizer);
        }
        TaskResult {
            id,
            kind: kind.to_owned(),
            status,
            result,
            summarized,
            steps: transcript.steps.len(),
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            duration_ms: started.elapsed().as_millis() as u64,
        }
    }
}

/// The `task` tool's definition for sub-agents of `types`.
pub fn task_tool(types: &[String]) -> ToolSpec {
    ToolSpec {
        name: "task".into(),
        description: "Give a sub-agent a task: it works with its own model, tools and fresh context and returns its \
                      answer. background: true returns an id at once; call again with id to get the result."
            .into(),
        parameters: json!({
            "type": "object",
            "properties": {
                "type": {"enum": types},
                "prompt": {"type": "string"},
                "background": {"type": "boolean"},
                "id": {"type": "string", "description": "A background task's id: its result"},
                "wait_s": {"type": "integer", "minimum": 0, "maximum": 600}
            },
            "additionalProperties": false
        }),
    }
}

/// How long a poll waits for a task unless told.
const DEFAULT_WAIT: Duration = Duration::from_secs(0);

impl ToolHost for Tasks {
    fn tools(&self) -> Vec<ToolSpec> {
        vec![task_tool(&self.factory.types())]
    }

    fn call(&self, _name: &str, arguments: &Map<String, Value>) -> ToolOutcome {
        let text = |key: &str| arguments.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
        if let Some(unknown) =
            arguments.keys().find(|k| !["type", "prompt", "background", "id", "wait_s"].contains(&k.as_str()))
        {
            return ToolOutcome::error(format!("unknown argument {unknown:?}"));
        }
        if let Some(id) = text("id") {
            let wait = arguments
                .get("wait_s")
                .and_then(Value::as_u64)
                .map_or(DEFAULT_WAIT, |s| Duration::from_secs(s.min(600)));
            return match self.poll(id, wait) {
                Ok(Some(result)) => ToolOutcome::ok(json!(result).to_string()),
                Ok(None) => ToolOutcome::ok(json!({"id": id, "status": "running"}).to_string()),
                Err(e) => ToolOutcome::error(e),
            };
        }
        let kind = text("type").unwrap_or("default");
        if !self.factory.types().iter().any(|t| t == kind) {
            return ToolOutcome::error(format!(
                "unknown task type {kind:?} (known: {})",
                self.factory.types().join(", ")
            ));
        }
        let Some(prompt) = text("prompt") else { return ToolOutcome::error("prompt is required") };
        if arguments.get("background").and_then(Value::as_bool).unwrap_or(false) {
            return match self.start(kind, prompt) {
                Ok(id) => ToolOutcome::ok(json!({"id": id, "status": "running"}).to_string()),
                Err(e) => ToolOutcome::error(e),
            };
        }
        let result = self.run(kind, prompt);
        ToolOutcome { is_error: result.status != "done", text: json!(result).to_string() }
    }
}
