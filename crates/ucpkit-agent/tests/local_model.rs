//! The LLM summarizer against a real local model (Qwen2.5-Coder-0.5B on
//! llama.cpp, `scripts/setup-llm`): a summary comes back within its token
//! budget, and a model that cannot be reached falls back to extraction.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ucpkit_agent::LlmSummarizer;
use ucpkit_context::Summarizer;
use ucpkit_core::{BpeTokenizer, Tokenizer};
use ucpkit_llm::{LocalServer, OpenAiProvider, RetryPolicy, Transport};

const TEXT: &str = "Streams buffer data internally. When the buffer of a writable stream exceeds its \
    highWaterMark, write() returns false and the producer should stop until the 'drain' event. \
    Readable streams pause reading from the source when their buffer is full; pipe() handles \
    backpressure automatically. Object mode streams count objects instead of bytes. \
    Custom streams implement _read() and _write().";

fn summarizer(base_url: &str) -> LlmSummarizer {
    let transport = Transport::new(Duration::from_secs(120), RetryPolicy { max_retries: 0, ..RetryPolicy::default() });
    LlmSummarizer::new(Box::new(OpenAiProvider::new(base_url, "qwen", None, transport)))
}

#[test]
#[ignore = "needs UCP_TEST_LLM_PYTHON and UCP_TEST_LLM_MODEL: scripts/test installs the local model and runs this"]
fn a_real_model_summarizes_within_the_budget() {
    let python =
        std::env::var_os("UCP_TEST_LLM_PYTHON").expect("UCP_TEST_LLM_PYTHON is not set (scripts/test sets it)");
    let model = std::env::var_os("UCP_TEST_LLM_MODEL").expect("UCP_TEST_LLM_MODEL is not set (scripts/test sets it)");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/llm-server");
    let server = LocalServer::start(&PathBuf::from(python), &script, &PathBuf::from(model), 1, 4096).unwrap();
    let tokenizer = BpeTokenizer::default();
    let summary = summarizer(&server.base_url()).summarize(TEXT, 40, &tokenizer);
    assert!(!summary.trim().is_empty());
    assert!(tokenizer.count(&summary) <= 40, "{summary}");
    assert_ne!(summary, TEXT);
}

#[test]
fn an_unreachable_model_falls_back_to_extraction() {
    let tokenizer = BpeTokenizer::default();
    let summary = summarizer("http://127.0.0.1:9/v1").summarize(TEXT, 40, &tokenizer);
    assert!(!summary.is_empty() && tokenizer.count(&summary) <= 40, "{summary}");
    assert!(TEXT.contains(summary.split(". ").next().unwrap()), "extracted, so quoted: {summary}");
}
