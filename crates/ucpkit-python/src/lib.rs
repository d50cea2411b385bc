//! Python bindings of UCP, imported as `ucp`: a thin adapter over
//! `ucpkit-workspace`, the layer every front end stands on. Each method
//! translates its arguments, calls the workspace with the GIL released,
//! and translates the result or the error; no logic of its own.

mod errors;
mod results;
mod session;
mod store;
mod tools;

use pyo3::prelude::*;

/// The `ucp._ucp` extension module (re-exported by the `ucp` package).
#[pymodule]
fn _ucp(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<store::Store>()?;
    m.add_class::<session::Session>()?;
    m.add_class::<tools::Tools>()?;
    results::register(m)?;
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
