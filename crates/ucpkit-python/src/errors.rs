//! UCP's errors as Python exceptions: every one a subclass of
//! `ucp.UcpError`, carrying the workspace's stable `.code`.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use ucpkit_workspace::vocabulary::AgentError;
use ucpkit_workspace::WorkspaceError;

create_exception!(_ucp, UcpError, PyException, "Any UCP error; `.code` is its stable, machine-readable code.");
create_exception!(_ucp, BlockNotFound, UcpError, "A block id or label that the document does not hold.");
create_exception!(_ucp, ParseError, UcpError, "UCL that does not parse; `.line` and `.column` (1-based) place it.");
create_exception!(_ucp, NoDocument, UcpError, "No store, or no document of that name, or none chosen among several.");
create_exception!(_ucp, NothingFits, UcpError, "Blocks match the question, but none fits in the budget.");
create_exception!(
    _ucp,
    Conflict,
    UcpError,
    "Another writer changed the document or session first; nothing was written."
);
create_exception!(_ucp, InvalidArgument, UcpError, "An argument out of its range or of the wrong form.");
create_exception!(
    _ucp,
    NotPermitted,
    UcpError,
    "A change refused (read-only, outside the allowed folders, a tool's jail)."
);
create_exception!(_ucp, Edited, UcpError, "Indexing would replace edits made since the last index (pass force=True).");

/// Registers the exception classes in the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("UcpError", py.get_type::<UcpError>())?;
    m.add("BlockNotFound", py.get_type::<BlockNotFound>())?;
    m.add("ParseError", py.get_type::<ParseError>())?;
    m.add("NoDocument", py.get_type::<NoDocument>())?;
    m.add("NothingFits", py.get_type::<NothingFits>())?;
    m.add("Conflict", py.get_type::<Conflict>())?;
    m.add("InvalidArgument", py.get_type::<InvalidArgument>())?;
    m.add("NotPermitted", py.get_type::<NotPermitted>())?;
    m.add("Edited", py.get_type::<Edited>())?;
    Ok(())
}

/// The exception for a stable error `code`, with `message` and `.code` set.
pub(crate) fn exception(py: Python<'_>, code: &str, message: String) -> PyErr {
    let error = match code {
        "block_not_found" | "unknown_label" | "unknown_short_id" => BlockNotFound::new_err(message),
        "parse" => ParseError::new_err(message),
        "no_document" | "document_not_chosen" | "no_store" => NoDocument::new_err(message),
        "nothing_fits" => NothingFits::new_err(message),
        "conflict" | "session_conflict" | "session_in_use" => Conflict::new_err(message),
        "invalid_argument" | "invalid_name" | "invalid_value" | "invalid_path" | "bad_reference" | "no_input"
        | "invalid_pattern" | "invalid_regex" => InvalidArgument::new_err(message),
        "not_permitted" | "read_only" | "not_allowed" | "outside_root" => NotPermitted::new_err(message),
        "edited" => Edited::new_err(message),
        _ => UcpError::new_err(message),
    };
    set(py, &error, "code", code);
    error
}

/// Sets attribute `name` of the exception `error` raises.
pub(crate) fn set<'py, V: IntoPyObject<'py>>(py: Python<'py>, error: &PyErr, name: &str, value: V) {
    // Setting an attribute of a fresh exception object cannot fail.
    let _ = error.value(py).setattr(name, value);
}

/// A workspace error as the Python exception of its code (a parse error
/// with its line and column).
pub(crate) fn workspace(py: Python<'_>, error: WorkspaceError) -> PyErr {
    let raised = exception(py, error.code(), error.to_string());
    if let WorkspaceError::Agent(AgentError::Parse { line, column, .. }) = &error {
        set(py, &raised, "line", *line);
        set(py, &raised, "column", *column);
    }
    raised
}

/// Converts results of workspace calls, holding the GIL again.
pub(crate) trait OrRaise<T> {
    /// The value, or the error as its Python exception.
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, WorkspaceError> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|error| workspace(py, error))
    }
}
