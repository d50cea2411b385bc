//! `ucp.Session`: an agent session that runs UCL.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use ucpkit_workspace::vocabulary::SessionId;
use ucpkit_workspace::{Library, NewSession, SessionHandle, Workspace, WorkspaceError};

use crate::errors::{self, OrRaise};
use crate::results::Reply;

/// An agent session: a cursor, a context window under a token budget, and
/// the UCL commands to move, look, search, curate and edit. A script's
/// edits stand together: when a command fails, its edits are undone back
/// to the script's last COMMIT (or to before it) and the error is raised.
#[pyclass(module = "ucp", frozen)]
pub struct Session {
    library: Arc<Library>,
    name: Option<String>,
    /// The session, following the store (taken up again when another
    /// process changed the document); `None` once closed.
    held: Mutex<Option<SessionHandle>>,
}

impl Session {
    /// Opens the named session (as stored) or a new one in `workspace`.
    pub(crate) fn open(
        library: Arc<Library>,
        workspace: Arc<Workspace>,
        name: Option<String>,
        options: NewSession,
    ) -> Result<Session, WorkspaceError> {
        let handle = SessionHandle::open(&library, workspace, name.as_deref(), &options)?;
        Ok(Session { library, name, held: Mutex::new(Some(handle)) })
    }

    /// The session, on the document as the store has it now.
    fn current(&self) -> Result<(Arc<Workspace>, SessionId), WorkspaceError> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let handle = held.as_mut().ok_or_else(|| WorkspaceError::Invalid("the session is closed".into()))?;
        handle.current(&self.library)?;
        Ok((Arc::clone(handle.workspace()), handle.id()))
    }

    /// Runs `source` and returns what its commands answered, or raises the
    /// first failure (with `.line`, `.column` and the `.replies` before it).
    fn run_script(&self, py: Python<'_>, source: &str) -> PyResult<Vec<Py<Reply>>> {
        let run = py
            .detach(|| {
                let (workspace, id) = self.current()?;
                self.library.run_script(&workspace, id, source)
            })
            .or_raise(py)?;
        let replies = Reply::all(py, &run.report)?;
        if let Some(failure) = run.failure() {
            let code = run.report.failure().map_or("script_failed", |(_, error)| error.code());
            let error = errors::exception(py, code, failure);
            if let Some((step, _)) = run.report.failure() {
                errors::set(py, &error, "line", step.line);
                errors::set(py, &error, "column", step.column);
            }
            errors::set(py, &error, "replies", replies);
            return Err(error);
        }
        Ok(replies)
    }
}

#[pymethods]
impl Session {
    /// Runs a UCL script (one command or many, one per line); returns a
    /// `Reply` per command.
    fn run(&self, py: Python<'_>, ucl: &str) -> PyResult<Vec<Py<Reply>>> {
        self.run_script(py, ucl)
    }

    /// The context window as `CTX RENDER` writes it: `markdown`,
    /// `default` (every block under its id) or `short_ids`.
    #[pyo3(signature = (format = "markdown"))]
    fn render(&self, py: Python<'_>, format: &str) -> PyResult<String> {
        if ucpkit_workspace::vocabulary::RenderFormat::from_name(format).is_none() {
            let message = format!("format {format:?}: use markdown, default or short_ids");
            return Err(errors::exception(py, "invalid_argument", message));
        }
        let replies = self.run_script(py, &format!("CTX RENDER FORMAT={}", format.to_uppercase()))?;
        Ok(replies.first().map(|reply| reply.get().text.clone()).unwrap_or_default())
    }

    /// The context window's statistics (`CTX STATS`) as a dict: blocks,
    /// tokens, budget, by reason and representation ...
    fn stats(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let replies = self.run_script(py, "CTX STATS")?;
        let Some(reply) = replies.first() else { return Ok(py.None()) };
        Ok(reply.get().data.bind(py).get_item("stats")?.unbind())
    }

    /// The session's name, or `None` for an unnamed one.
    #[getter]
    fn name(&self) -> Option<String> {
        self.name.clone()
    }

    /// Saves a named session and closes it (an unnamed one is closed).
    /// Closing twice does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner()).take();
        match held {
            Some(handle) => py.detach(|| handle.close(&self.library)).or_raise(py),
            None => Ok(()),
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(
        &self,
        py: Python<'_>,
        _kind: Option<Py<PyAny>>,
        _value: Option<Py<PyAny>>,
        _traceback: Option<Py<PyAny>>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        match &self.name {
            Some(name) => format!("Session(name={name:?})"),
            None => "Session(name=None)".to_owned(),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(handle) = self.held.get_mut().unwrap_or_else(|e| e.into_inner()).take() {
            // Dropped unclosed: the session is saved (if named) and closed;
            // an error here has no caller to go to.
            let _ = handle.close(&self.library);
        }
    }
}
