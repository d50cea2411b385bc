//! One running language server: its process, a reader thread that hands
//! each response to the request waiting for it and answers the server's
//! own requests, the documents it has open, and an orderly shutdown.

use std::collections::{HashMap, VecDeque};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};

use crate::transport::{read_message, write_message};
use crate::uri::file_uri;
use crate::LspError;

/// Lines of the server's stderr kept for error messages.
const STDERR_LINES: usize = 20;
/// Bytes kept of one stderr line.
const STDERR_LINE_BYTES: usize = 1024;
/// How long a server gets to shut down before it is killed.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);

/// A server's error answer: its code and message.
type Refusal = (i64, String);

type Pending = Arc<Mutex<HashMap<i64, Sender<Result<Value, Refusal>>>>>;

/// LSP's "content modified" and "server cancelled": the server was busy
/// (still loading the project); asking again is what the protocol wants.
const RETRIED_CODES: [i64; 2] = [-32801, -32802];
/// Times a request is asked again after such an answer.
const RETRIES: usize = 5;
/// Pause before asking again.
const RETRY_PAUSE: Duration = Duration::from_millis(200);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A started, initialized language server.
pub(crate) struct Server {
    /// Its name in the configuration.
    pub(crate) name: String,
    child: Mutex<Child>,
    /// Messages to the server, written by a thread of their own: a server
    /// that stops reading never blocks a caller, nor the reader thread.
    outbox: Mutex<Option<Sender<Value>>>,
    pending: Pending,
    next_id: AtomicI64,
    alive: Arc<AtomicBool>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Open documents: version and the text the server has.
    opened: Mutex<HashMap<PathBuf, (i32, String)>>,
}

impl Server {
    /// Starts `command` in `root` and initializes it.
    pub(crate) fn start(name: &str, command: &[String], root: &Path, timeout: Duration) -> Result<Server, LspError> {
        let (program, args) =
            command.split_first().ok_or_else(|| LspError::Config(format!("{name}: empty command")))?;
        let mut child = Command::new(program)
            .args(args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| LspError::Start { server: name.to_owned(), command: command.join(" "), source })?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            return Err(LspError::Protocol(format!("{name}: no pipes to the server")));
        };
        let alive = Arc::new(AtomicBool::new(true));
        let threads = |source| LspError::Threads { server: name.to_owned(), source };
        let outbox = match write_stdin(stdin, Arc::clone(&alive)) {
            Ok(outbox) => outbox,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(threads(e));
            }
        };
        let server = Server {
            name: name.to_owned(),
            child: Mutex::new(child),
            outbox: Mutex::new(Some(outbox)),
            pending: Arc::default(),
            next_id: AtomicI64::new(1),
            alive,
            stderr: Arc::default(),
            opened: Mutex::default(),
        };
        // A server dropped here is shut down.
        // Nothing would read its answer to `shutdown` when a thread is missing.
        let given_up = |e| {
            server.alive.store(false, Ordering::SeqCst);
            threads(e)
        };
        server.read_stderr(stderr).map_err(given_up)?;
        server.read_stdout(stdout).map_err(given_up)?;
        let root_uri = file_uri(root);
        let folder_name = root.file_name().map_or("root".into(), |n| n.to_string_lossy().into_owned());
        let params = json!({
            "processId": std::process::id(),
            "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": folder_name}],
            "capabilities": {
                "textDocument": {
                    "synchronization": {"didSave": false},
                    "definition": {"linkSupport": true},
                    "references": {},
                    "hover": {"contentFormat": ["plaintext", "markdown"]},
                    "documentSymbol": {"hierarchicalDocumentSymbolSupport": true}
                },
                "workspace": {"symbol": {}, "workspaceFolders": true, "configuration": true}
            },
            "clientInfo": {"name": "ucp", "version": env!("CARGO_PKG_VERSION")}
        });
        server.request("initialize", params, timeout)?;
        server.notify("initialized", json!({}))?;
        Ok(server)
    }

    /// Drains the server's stderr to its end (so the server never blocks
    /// on it), keeping the last lines, each cut at [`STDERR_LINE_BYTES`].
    fn read_stderr(&self, stderr: impl Read + Send + 'static) -> std::io::Result<()> {
        let tail = Arc::clone(&self.stderr);
        std::thread::Builder::new().name("lsp-stderr".into()).spawn(move || {
            use std::io::BufRead;
            let mut input = BufReader::new(stderr);
            let mut line = Vec::new();
            loop {
                line.clear();
                // A line is read whole but only its head is kept.
                match (&mut input).take(STDERR_LINE_BYTES as u64).read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if !line.ends_with(b"\n") && line.len() == STDERR_LINE_BYTES {
                    let mut rest = Vec::new();
                    while matches!((&mut input).take(64 * 1024).read_until(b'\n', &mut rest), Ok(n) if n > 0)
                        && !rest.ends_with(b"\n")
                    {
                        rest.clear();
                    }
                }
                let text = String::from_utf8_lossy(&line).trim_end().to_owned();
                let mut tail = lock(&tail);
                if tail.len() == STDERR_LINES {
                    tail.pop_front();
                }
                tail.push_back(text);
            }
        })?;
        Ok(())
    }

    fn read_stdout(&self, stdout: impl Read + Send + 'static) -> std::io::Result<()> {
        let (pending, alive) = (Arc::clone(&self.pending), Arc::clone(&self.alive));
        let outbox = lock(&self.outbox).clone();
        std::thread::Builder::new().name("lsp-stdout".into()).spawn(move || {
            let mut input = BufReader::new(stdout);
            while let Ok(Some(message)) = read_message(&mut input) {
                let id = message.get("id").cloned();
                match (message.get("method").and_then(Value::as_str), id) {
                    // The server asks something of the client.
                    (Some(method), Some(id)) => {
                        let result = match method {
                            "workspace/configuration" => {
                                let items = message["params"]["items"].as_array().map_or(0, Vec::len);
                                Value::Array(vec![Value::Null; items])
                            }
                            _ => Value::Null,
                        };
                        if let Some(outbox) = &outbox {
                            let _ = outbox.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
                        }
                    }
                    // A notification (diagnostics, progress, logs).
                    (Some(_), None) => {}
                    (None, Some(id)) => {
                        let Some(sender) = id.as_i64().and_then(|id| lock(&pending).remove(&id)) else { continue };
                        let answer = match message.get("error") {
                            Some(error) => Err((
                                error["code"].as_i64().unwrap_or(0),
                                error["message"].as_str().unwrap_or("error").to_owned(),
                            )),
                            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                        };
                        let _ = sender.send(answer);
                    }
                    (None, None) => {}
                }
            }
            alive.store(false, Ordering::SeqCst);
            // Waiting requests learn that the server is gone.
            lock(&pending).clear();
        })?;
        Ok(())
    }

    /// Whether the server is still running.
    pub(crate) fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst) && matches!(lock(&self.child).try_wait(), Ok(None))
    }

    /// Sends a request and waits for its answer, asking again a few times
    /// while the server answers that it was busy.
    pub(crate) fn request(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, LspError> {
        let mut tries = 0;
        loop {
            match self.request_once(method, params.clone(), timeout) {
                Err(Ok((code, _))) if RETRIED_CODES.contains(&code) && tries < RETRIES => {
                    tries += 1;
                    std::thread::sleep(RETRY_PAUSE);
                }
                Err(Ok((_, message))) => {
                    return Err(LspError::Server { server: self.name.clone(), method: method.to_owned(), message })
                }
                Err(Err(error)) => return Err(error),
                Ok(value) => return Ok(value),
            }
        }
    }

    /// One request: its answer, the server's refusal, or why none came.
    fn request_once(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, Result<Refusal, LspError>> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (sender, receiver) = mpsc::channel();
        lock(&self.pending).insert(id, sender);
        // The reader clears the waiting requests when the server goes; one
        // registered after that would wait for nothing.
        if !self.alive.load(Ordering::SeqCst) {
            lock(&self.pending).remove(&id);
            return Err(Err(self.exited()));
        }
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if self.send(message).is_err() {
            lock(&self.pending).remove(&id);
            return Err(Err(self.exited()));
        }
        match receiver.recv_timeout(timeout) {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(refusal)) => Err(Ok(refusal)),
            Err(RecvTimeoutError::Timeout) => {
                lock(&self.pending).remove(&id);
                let _ = self.notify("$/cancelRequest", json!({"id": id}));
                Err(Err(LspError::Timeout { server: self.name.clone(), method: method.to_owned(), after: timeout }))
            }
            Err(RecvTimeoutError::Disconnected) => Err(Err(self.exited())),
        }
    }

    /// Sends a notification.
    pub(crate) fn notify(&self, method: &str, params: Value) -> Result<(), LspError> {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send(message).map_err(|_| self.exited())
    }

    /// Queues a message for the writer thread.
    fn send(&self, message: Value) -> Result<(), ()> {
        match lock(&self.outbox).as_ref() {
            Some(outbox) if self.alive.load(Ordering::SeqCst) => outbox.send(message).map_err(|_| ()),
            _ => Err(()),
        }
    }

    fn exited(&self) -> LspError {
        let stderr: Vec<String> = lock(&self.stderr).iter().cloned().collect();
        LspError::Exited { server: self.name.clone(), stderr: stderr.join("\n") }
    }

    /// Makes sure the server has `path` open with `text` (opened, or its
    /// text replaced when it changed since).
    pub(crate) fn sync(&self, path: &Path, language_id: &str, text: &str) -> Result<(), LspError> {
        let mut opened = lock(&self.opened);
        let uri = file_uri(path);
        match opened.get_mut(path) {
            Some((_, known)) if known == text => Ok(()),
            Some((version, known)) => {
                *version += 1;
                known.clear();
                known.push_str(text);
                let params =
                    json!({"textDocument": {"uri": uri, "version": *version}, "contentChanges": [{"text": text}]});
                self.notify("textDocument/didChange", params)
            }
            None => {
                opened.insert(path.to_owned(), (1, text.to_owned()));
                let document = json!({"uri": uri, "languageId": language_id, "version": 1, "text": text});
                self.notify("textDocument/didOpen", json!({ "textDocument": document }))
            }
        }
    }

    /// Asks the server to shut down and exit; kills it if it does not.
    pub(crate) fn shutdown(&self) {
        if self.is_alive() {
            let _ = self.request("shutdown", Value::Null, SHUTDOWN_WAIT);
            let _ = self.notify("exit", Value::Null);
        }
        // Closing the queue ends the writer thread, which closes stdin.
        lock(&self.outbox).take();
        let mut child = lock(&self.child);
        let deadline = std::time::Instant::now() + SHUTDOWN_WAIT;
        while matches!(child.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The thread that writes queued messages to the server's stdin, until
/// the queue closes or a write fails (the server is then taken for gone).
fn write_stdin(mut stdin: ChildStdin, alive: Arc<AtomicBool>) -> std::io::Result<Sender<Value>> {
    let (sender, receiver) = mpsc::channel::<Value>();
    std::thread::Builder::new().name("lsp-stdin".into()).spawn(move || {
        for message in receiver {
            if write_message(&mut stdin, &message).is_err() {
                alive.store(false, Ordering::SeqCst);
                break;
            }
        }
    })?;
    Ok(sender)
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown();
    }
}
