//! The coding-agent tools (`ucp-tools`) over one folder: grep, glob, read,
//! write and edit, each answering the compact text the CLI and MCP give.

use pyo3::prelude::*;
use ucp_tools::{EditRequest, GlobRequest, GrepRequest, OutputMode, Paging, ReadRequest, Replacement};

use crate::errors::OrRaise;

/// The coding tools, jailed to `root`: no path outside it is read or
/// written.
#[pyclass(module = "ucp", frozen)]
pub struct Tools {
    tools: ucp_tools::Tools,
}

#[pymethods]
impl Tools {
    /// Tools over folder `root`; `read_only` drops `write` and `edit`.
    #[new]
    #[pyo3(signature = (root, *, read_only = false))]
    fn new(py: Python<'_>, root: std::path::PathBuf, read_only: bool) -> PyResult<Self> {
        let tools = ucp_tools::Tools::new(&root).or_raise(py)?.with_read_only(read_only);
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
}
