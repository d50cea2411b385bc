//! The coding-agent tools (`ucpkit-tools`) over one folder: grep, glob, read,
//! write, edit, bash and ast_search, each answering the compact text the
//! CLI and MCP give.

use pyo3::prelude::*;
use ucpkit_registry::parts::files::{
    AstRequest, BashRequest, EditRequest, GlobRequest, GrepRequest, OutputMode, Paging, ReadRequest, Replacement,
};

use crate::errors::OrRaise;

/// The coding tools, jailed to `root`: no path outside it is read or
/// written.
#[pyclass(module = "ucp", frozen)]
pub struct Tools {
    tools: ucpkit_registry::parts::files::Tools,
}

#[pymethods]
impl Tools {
    /// Tools over folder `root`; `read_only` drops `write` and `edit`.
    #[new]
    #[pyo3(signature = (root, *, read_only = false))]
    fn new(py: Python<'_>, root: std::path::PathBuf, read_only: bool) -> PyResult<Self> {
        let tools = ucpkit_registry::parts::files::Tools::new(&root).or_raise(py)?.with_read_only(read_only);
        Ok(Tools { tools })
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
        let output_mode = output_mode.parse::<OutputMode>().or_raise(py)?;
        let request = GrepRequest {
            pattern,
            path,
            globs: glob.unwrap_or_default(),
            case_insensitive,
            output_mode,
            before: context,
            after: context,
            multiline,
            paging: Paging { offset, head_limit },
            ..GrepRequest::default()
        };
        let result = py.detach(|| self.tools.grep(&request)).or_raise(py)?;
        Ok(result.text)
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
        let request = GlobRequest { pattern, path, paging: Paging { offset, head_limit }, ..GlobRequest::default() };
        let result = py.detach(|| self.tools.glob(&request)).or_raise(py)?;
        Ok(result.text)
    }

    /// A text file's lines, numbered, from line `offset` (1-based), at
    /// most `limit` of them.
    #[pyo3(signature = (path, offset = None, limit = None))]
    fn read(&self, py: Python<'_>, path: String, offset: Option<usize>, limit: Option<usize>) -> PyResult<String> {
        let request = ReadRequest { path, offset, limit };
        let result = py.detach(|| self.tools.read(&request)).or_raise(py)?;
        Ok(result.text)
    }

    /// Writes the whole file atomically.
    fn write(&self, py: Python<'_>, path: String, content: String) -> PyResult<String> {
        let result = py.detach(|| self.tools.write(&path, &content)).or_raise(py)?;
        Ok(result.text)
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
        let request = EditRequest {
            path,
            edits: vec![Replacement { old_string, new_string, replace_all }],
            ..EditRequest::default()
        };
        let result = py.detach(|| self.tools.edit(&request)).or_raise(py)?;
        Ok(result.text)
    }

    /// Runs a shell command in the root (or `cwd` inside it) within
    /// `timeout` seconds; `background` returns a job id at once
    /// (`bash_job` reads or kills it).
    #[pyo3(signature = (command, *, cwd = None, timeout = None, background = false))]
    fn bash(
        &self,
        py: Python<'_>,
        command: String,
        cwd: Option<String>,
        timeout: Option<f64>,
        background: bool,
    ) -> PyResult<String> {
        let timeout = timeout.map(|seconds| std::time::Duration::from_secs_f64(seconds.clamp(0.0, 86_400.0)));
        let request = BashRequest { command, cwd, timeout, background };
        let result = py.detach(|| self.tools.bash(&request)).or_raise(py)?;
        Ok(result.text)
    }

    /// A background job's output so far (and its end); `kill` stops it.
    #[pyo3(signature = (job, *, kill = false))]
    fn bash_job(&self, py: Python<'_>, job: u64, kill: bool) -> PyResult<String> {
        let result = py.detach(|| self.tools.bash_job(job, kill)).or_raise(py)?;
        Ok(result.text)
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
        let request = AstRequest { pattern, path, lang, paging: Paging { offset, head_limit } };
        let result = py.detach(|| self.tools.ast_search(&request)).or_raise(py)?;
        Ok(result.text)
    }
}
