//! UCP's LLM agents. Until these, every decision in UCP is made by
//! heuristics; here models decide, through the same sessions, budgets and
//! tools:
//! - [`Agent`]: the agent loop over UCP's own tools ([`ToolHost`]), an
//!   allow-list, a conversation fitted to a token budget by the context
//!   window's rules ([`window`]), a [`Transcript`] saved after each step;
//! - [`Tasks`]: the `task` tool, sub-agents of a type with their own model,
//!   tools and fresh context, waited for or run in the background;
//! - [`AskUser`]: the `ask_user` tool, 2–4 options, asked by a front end's
//!   [`Asker`];
//! - [`LlmSummarizer`]: `CTX COMPRESS METHOD=SUMMARIZE` by a model.

mod ask;
mod host;
mod run;
mod summarizer;
mod task;
mod transcript;
pub mod window;

pub use ask::{ask_user_tool, AskUser, Asker, Choice, Question, UserAnswer};
pub use host::{ToolHost, ToolOutcome, Tools};
pub use run::{task_of, Agent, AgentSpec, Event, RunError, SYSTEM_PROMPT};
pub use summarizer::LlmSummarizer;
pub use task::{
    task_tool, Progress, Subagent, SubagentFactory, TaskResult, Tasks, MAX_BACKGROUND_TASKS, MAX_RESULT_TOKENS,
};
pub use transcript::{StepRecord, ToolRecord, Transcript};
