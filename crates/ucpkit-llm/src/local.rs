//! A local model server as a child process: `scripts/llm-server` (llama.cpp
//! through the `xllamacpp` wheel that `scripts/setup-llm` installs), for
//! tests and offline use. It serves until this handle is dropped, or until
//! this process exits (its standard input closes).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::LlmError;

/// A running local model server.
pub struct LocalServer {
    child: Child,
    /// Held open: the server stops when it closes.
    _stdin: Option<ChildStdin>,
    address: String,
}

impl LocalServer {
    /// Starts `script` with `python` serving `model` on a free port with
    /// `threads` threads and a context of `context_tokens`, and waits (up
    /// to two minutes) until it listens.
    pub fn start(
        python: &Path,
        script: &Path,
        model: &Path,
        threads: usize,
        context_tokens: usize,
    ) -> Result<LocalServer, LlmError> {
        let mut child = Command::new(python)
            .arg(script)
            .arg(model)
            .args(["--threads", &threads.to_string(), "--ctx", &context_tokens.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| LlmError::Config(format!("cannot start {}: {e}", script.display())))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(address) = line.strip_prefix("listening ") {
                    let _ = sender.send(address.trim().to_owned());
                }
            }
        });
        match receiver.recv_timeout(Duration::from_secs(120)) {
            Ok(address) => Ok(LocalServer { child, _stdin: stdin, address }),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(LlmError::Config(format!("{} did not start listening", script.display())))
            }
        }
    }

    /// The OpenAI-style base URL (`http://127.0.0.1:PORT/v1`), which also
    /// serves Anthropic's `/v1/messages`.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.address.trim_end_matches('/'))
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
