//! LLM providers for UCP's agents.
//!
//! One provider-neutral conversation ([`Request`], [`Message`], [`Reply`])
//! and two wire formats behind the [`Provider`] trait: OpenAI-compatible
//! chat completions ([`OpenAiProvider`]: OpenAI and local servers such as
//! llama.cpp, vLLM and Ollama) and Anthropic Messages
//! ([`AnthropicProvider`]). Both call tools, stream text as it comes,
//! report usage (exact where the API reports it), retry 429 and 5xx answers
//! with backoff, time out and can be cancelled. [`Config`] reads named
//! providers and the sub-agent types from TOML.

mod anthropic;
mod config;
mod endpoint;
mod error;
mod http;
mod local;
mod message;
mod openai;
mod sse;
mod text_calls;

pub use anthropic::AnthropicProvider;
pub use config::{Api, Config, ModelChoice, Overrides, ProviderConfig, SubagentConfig, SUBAGENT_TYPES};
pub use endpoint::read_answer;
pub use error::LlmError;
pub use http::{Cancel, RetryPolicy, Transport};
pub use local::LocalServer;
pub use message::{Message, Part, Reply, Request, Role, StopReason, ToolCall, ToolChoice, ToolSpec, Usage};
pub use openai::OpenAiProvider;

/// Something that answers a conversation: a model behind an API.
pub trait Provider: Send + Sync {
    /// The model's name as the API knows it.
    fn model(&self) -> &str;

    /// The model's reply to `request`. With `on_text`, the reply is
    /// streamed and each piece of text is handed to it as it arrives.
    fn complete(
        &self,
        request: &Request,
        on_text: Option<&mut dyn FnMut(&str)>,
        cancel: &Cancel,
    ) -> Result<Reply, LlmError>;
}

/// The provider `choice` names, built from its configuration.
pub fn connect(choice: &ModelChoice) -> Result<Box<dyn Provider>, LlmError> {
    let transport = Transport::new(choice.provider.timeout(), choice.provider.retry_policy())
        .with_deadline(choice.provider.deadline());
    let key = choice.provider.api_key()?;
    Ok(match choice.provider.api {
        Api::OpenAi => Box::new(OpenAiProvider::new(&choice.provider.base_url, &choice.model, key, transport)),
        Api::Anthropic => Box::new(AnthropicProvider::new(&choice.provider.base_url, &choice.model, key, transport)),
    })
}
