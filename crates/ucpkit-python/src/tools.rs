//! The agents' tools from Python, through the tool registry: the coding
//! tools (grep, glob, read, write, edit, bash, ast_search) over one folder
//! and, over a store, the document, memory, rules and skills tools too,
//! each answering the text an MCP client gets. Every call passes the
//! registry's one gate (`ucpkit_registry::tools::call`), as MCP's and
//! `ucp agent`'s do; the methods only name the arguments.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{json, Value};
use ucpkit_registry::parts::files::{Sandbox, DEFAULT_MAX_TOKENS};
use ucpkit_registry::{tools, CallError, Connection, JsonObject, ToolOffer, Writes};
use ucpkit_workspace::{Library, LibraryConfig};

use crate::errors::{exception, OrRaise};
use crate::store::Store;

/// The coding tools' names: all a folder without a store is offered.
const CODING_TOOLS: [&str; 7] = ["grep", "glob", "read", "write", "edit", "bash", "ast_search"];

/// UCP's tools for agents, jailed to `root`: no path outside it is read or
/// written. Without a store, the coding tools; with `store`, every tool an
/// MCP client of that store is offered (its folder is never written by
/// them).
#[pyclass(module = "ucp", frozen)]
pub struct Tools {
    connection: Connection,
    /// The private store of tools without one (removed with them).
    _scratch: Option<tempfile::TempDir>,
}

#[pymethods]
impl Tools {
    /// Tools over folder `root`; `read_only` drops those that write or run
    /// commands, `sandbox` runs every `bash` command in an OS sandbox
    /// without network, `pass_env` names the environment variables `bash`
    /// commands get besides the basic ones.
    #[new]
    #[pyo3(signature = (root, *, read_only = false, sandbox = false, pass_env = Vec::new(), store = None))]
    fn new(
        py: Python<'_>,
        root: std::path::PathBuf,
        read_only: bool,
        sandbox: bool,
        pass_env: Vec<String>,
        store: Option<PyRef<'_, Store>>,
    ) -> PyResult<Self> {
        let (library, scratch, only) = match store {
            Some(store) => (Arc::clone(&store.library), None, None),
            None => {
                let scratch = tempfile::tempdir().map_err(|e| exception(py, "io", e.to_string()))?;
                let library = py.detach(|| Library::open(LibraryConfig::new(scratch.path()))).or_raise(py)?;
                (Arc::new(library), Some(scratch), Some(CODING_TOOLS.map(str::to_owned).to_vec()))
            }
        };
        let offer = ToolOffer {
            root: Some(root),
            read_only,
            only,
            sandbox: sandbox.then_some(Sandbox { network: false, scratch: None, hidden: None }),
            protected: vec![library.store_dir().to_owned()],
            passed_env: pass_env,
            ..ToolOffer::documents(DEFAULT_MAX_TOKENS)
        };
        Ok(Tools { connection: Connection::new(library, Arc::new(offer)), _scratch: scratch })
    }

    /// The offered tools' definitions (name, description, inputSchema,
    /// annotations), as an MCP client lists them: for a model's function
    /// calling.
    fn definitions(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let listed = serde_json::to_string(&tools::list(self.connection.offer()))
            .map_err(|e| exception(py, "invalid_argument", e.to_string()))?;
        let json = py.import("json")?;
        Ok(json.call_method1("loads", (listed,))?.unbind())
    }

    /// Runs tool `name` with `arguments` (a dict, as a model would send
    /// them) and returns its text; a refused or failed call raises.
    #[pyo3(signature = (name, arguments = None))]
    fn call(&self, py: Python<'_>, name: &str, arguments: Option<&Bound<'_, PyDict>>) -> PyResult<String> {
        let arguments = match arguments {
            Some(dict) => {
                let text: String = py.import("json")?.call_method1("dumps", (dict,))?.extract()?;
                match serde_json::from_str(&text) {
                    Ok(Value::Object(object)) => object,
                    _ => return Err(exception(py, "invalid_argument", "arguments must be a JSON object".into())),
                }
            }
            None => JsonObject::new(),
        };
        self.run(py, name, arguments)
    }

    /// Lines matching regex `pattern` (ripgrep's engine, gitignore-aware).
    /// `output_mode`: `files_with_matches` (default), `content` or `count`.
    #[pyo3(signature = (pattern, path = None, *, glob = None, case_insensitive = false,
        output_mode = "files_with_matches", context = 0, multiline = false, head_limit = 100, offset = 0))]
    #[allow(clippy::too_many_arguments)]
    fn grep(
        &self,
        py: Python<'_>,
        pattern: String,
        path: Option<String>,
        glob: Option<Vec<String>>,
        case_insensitive: bool,
        output_mode: &str,
        context: usize,
        multiline: bool,
        head_limit: usize,
        offset: usize,
    ) -> PyResult<String> {
        let arguments = json!({
            "pattern": pattern, "path": path, "glob": glob, "-i": case_insensitive, "output_mode": output_mode,
            "-C": context, "multiline": multiline, "head_limit": head_limit.max(1), "offset": offset,
        });
        self.run_json(py, "grep", arguments)
    }

    /// Files matching a `src/**/*.rs`-style pattern, newest first.
    #[pyo3(signature = (pattern, path = None, *, head_limit = 100, offset = 0))]
    fn glob(
        &self,
        py: Python<'_>,
        pattern: String,
        path: Option<String>,
        head_limit: usize,
        offset: usize,
    ) -> PyResult<String> {
        let arguments = json!({"pattern": pattern, "path": path, "head_limit": head_limit.max(1), "offset": offset});
        self.run_json(py, "glob", arguments)
    }

    /// A text file's lines, numbered, from line `offset` (1-based), at
    /// most `limit` of them.
    #[pyo3(signature = (path, offset = None, limit = None))]
    fn read(&self, py: Python<'_>, path: String, offset: Option<usize>, limit: Option<usize>) -> PyResult<String> {
        let (offset, limit) = (offset.map(|n| n.max(1)), limit.map(|n| n.max(1)));
        self.run_json(py, "read", json!({"path": path, "offset": offset, "limit": limit}))
    }

    /// Writes the whole file atomically.
    fn write(&self, py: Python<'_>, path: String, content: String) -> PyResult<String> {
        self.run_json(py, "write", json!({"path": path, "content": content}))
    }

    /// Replaces `old_string` by `new_string` in the file: the match must be
    /// unique unless `replace_all`.
    #[pyo3(signature = (path, old_string, new_string, *, replace_all = false))]
    fn edit(
        &self,
        py: Python<'_>,
        path: String,
        old_string: String,
        new_string: String,
        replace_all: bool,
    ) -> PyResult<String> {
        let arguments =
            json!({"path": path, "old_string": old_string, "new_string": new_string, "replace_all": replace_all});
        self.run_json(py, "edit", arguments)
    }

    /// Runs a shell command in the root (or `cwd` inside it) within
    /// `timeout` seconds (rounded up; default 120); `background` returns a
    /// job id at once (`bash_job` reads or kills it).
    #[pyo3(signature = (command, *, cwd = None, timeout = None, background = false))]
    fn bash(
        &self,
        py: Python<'_>,
        command: String,
        cwd: Option<String>,
        timeout: Option<f64>,
        background: bool,
    ) -> PyResult<String> {
        let timeout = timeout.map(|seconds| seconds.clamp(1.0, 86_400.0).ceil() as u64);
        self.run_json(py, "bash", json!({"command": command, "cwd": cwd, "timeout": timeout, "background": background}))
    }

    /// A background job's output so far (and its end); `kill` stops it.
    #[pyo3(signature = (job, *, kill = false))]
    fn bash_job(&self, py: Python<'_>, job: u64, kill: bool) -> PyResult<String> {
        self.run_json(py, "bash", json!({"job": job, "kill": kill}))
    }

    /// Structural code search with an ast-grep pattern (`def $F($$$):`).
    #[pyo3(signature = (pattern, path = None, *, lang = None, head_limit = 100, offset = 0))]
    fn ast_search(
        &self,
        py: Python<'_>,
        pattern: String,
        path: Option<String>,
        lang: Option<String>,
        head_limit: usize,
        offset: usize,
    ) -> PyResult<String> {
        let arguments =
            json!({"pattern": pattern, "path": path, "lang": lang, "head_limit": head_limit.max(1), "offset": offset});
        self.run_json(py, "ast_search", arguments)
    }
}

impl Tools {
    /// Runs `name` with `arguments` (a JSON object; `null` values are left
    /// out, as a model leaves out what it does not give).
    fn run_json(&self, py: Python<'_>, name: &str, arguments: Value) -> PyResult<String> {
        let Value::Object(mut arguments) = arguments else { unreachable!("the methods build objects") };
        arguments.retain(|_, value| !value.is_null());
        self.run(py, name, arguments)
    }

    /// Runs `name` through the registry with the GIL released; a tool
    /// left out because these tools are read-only says so.
    fn run(&self, py: Python<'_>, name: &str, arguments: JsonObject) -> PyResult<String> {
        let offer = self.connection.offer();
        if let Some(tool) = tools::find(offer, name).filter(|tool| offer.read_only && !offer.offers_tool(tool)) {
            if tool.effects.writes == Writes::Always || tool.effects.executes {
                return Err(exception(py, "read_only", format!("these tools are read-only: {name} is not offered")));
            }
        }
        let output = py.detach(|| tools::call(&self.connection, name, &arguments)).or_raise(py)?;
        if output.is_error {
            return Err(exception(py, "tool_failed", output.text));
        }
        Ok(output.text)
    }
}

impl<T> OrRaise<T> for Result<T, CallError> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|error| match error {
            CallError::Workspace(error) => crate::errors::workspace(py, error),
            other => exception(py, other.code(), other.to_string()),
        })
    }
}
