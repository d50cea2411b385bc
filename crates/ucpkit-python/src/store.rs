//! `ucp.Store`: a store directory and the documents in it.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use ucpkit_workspace::{
    ContextOptions, IndexOptions, Library, LibraryConfig, MapRequest, NewSession, Scope, SearchRequest, Sources,
    Workspace, WorkspaceError, DEFAULT_BUDGET, DEFAULT_MAP_BUDGET,
};

use crate::errors::{self, OrRaise};
use crate::results::{Context, Document, IndexReport, SearchHit};
use crate::session::Session;

/// A UCP store (a `.ucp` directory: SQLite database and search indexes).
#[pyclass(module = "ucp", frozen)]
pub struct Store {
    pub(crate) library: Arc<Library>,
}

/// A path argument: a `str` or an `os.PathLike`.
#[derive(FromPyObject)]
pub(crate) enum Paths {
    One(PathBuf),
    Many(Vec<PathBuf>),
}

impl Store {
    /// Document `doc` (the store's only one when `None`) as the store has
    /// it now: a copy another process changed since it was loaded is
    /// loaded again.
    pub(crate) fn workspace(&self, doc: Option<&str>) -> Result<Arc<Workspace>, WorkspaceError> {
        let name = match doc {
            Some(name) => name.to_owned(),
            None => self.library.default_document()?,
        };
        let workspace = self.library.workspace(&name)?;
        if self.library.is_current(&workspace) {
            Ok(workspace)
        } else {
            self.library.workspace(&name)
        }
    }
}

#[pymethods]
impl Store {
    /// Opens the store at `path`; `create=False` refuses a path that holds
    /// no store. `model`: an embedding model directory, for hybrid search.
    #[new]
    #[pyo3(signature = (path = PathBuf::from(".ucp"), *, create = true, model = None))]
    fn new(py: Python<'_>, path: PathBuf, create: bool, model: Option<PathBuf>) -> PyResult<Self> {
        let mut config = LibraryConfig::new(path);
        // A library on the caller's own machine may index any path and is
        // not rate-limited (the limit guards servers), as the CLI.
        config.allowed_roots = None;
        config.limits.max_ops_per_second = u32::MAX;
        config.model = model;
        let library =
            py.detach(|| if create { Library::open(config) } else { Library::open_existing(config) }).or_raise(py)?;
        Ok(Store { library: Arc::new(library) })
    }

    /// The stored documents.
    fn documents(&self, py: Python<'_>) -> PyResult<Vec<Document>> {
        let documents = py.detach(|| self.library.documents()).or_raise(py)?;
        Ok(documents.into_iter().map(Document::from).collect())
    }

    /// Indexes a file or folder (or several) as document `name` (default:
    /// the first path's name); written only when it changed. A document
    /// edited with UCL since its last index is refused unless `force`
    /// (a snapshot keeps the edited version).
    #[pyo3(signature = (path, *, name = None, force = false))]
    fn index(&self, py: Python<'_>, path: Paths, name: Option<String>, force: bool) -> PyResult<IndexReport> {
        let paths = match path {
            Paths::One(path) => vec![path],
            Paths::Many(paths) => paths,
        };
        let options = IndexOptions { replace_edits: force, ..IndexOptions::default() };
        let indexed = py.detach(|| self.library.index(&paths, name.as_deref(), &options, &())).or_raise(py)?;
        Ok(IndexReport::from(indexed))
    }

    /// The best context for `question` within `budget` tokens (exact,
    /// o200k): `format` is `markdown`, `default` or `short_ids`; `code`
    /// keeps to source code, with the call graph walked. `docs` (with
    /// `doc`), `all` (every document) and `memory` (the memories of
    /// `namespace`, the project's by default) rank several sources
    /// together under the one budget.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (
        question, *, doc = None, budget = DEFAULT_BUDGET, format = "markdown", code = false,
        docs = None, all = false, memory = false, namespace = None
    ))]
    fn context(
        &self,
        py: Python<'_>,
        question: String,
        doc: Option<String>,
        budget: usize,
        format: &str,
        code: bool,
        docs: Option<Vec<String>>,
        all: bool,
        memory: bool,
        namespace: Option<String>,
    ) -> PyResult<Context> {
        let format = ucpkit_workspace::vocabulary::RenderFormat::from_name(format).ok_or_else(|| {
            errors::exception(py, "invalid_argument", format!("format {format:?}: use markdown, default or short_ids"))
        })?;
        let scope = if code { Scope::Code } else { Scope::All };
        let options = ContextOptions { budget, format, scope, ..ContextOptions::new(question) };
        let sources = Sources {
            documents: doc.into_iter().chain(docs.unwrap_or_default()).collect(),
            all,
            memory: (memory || namespace.is_some()).then_some(namespace),
        };
        let built = py
            .detach(|| {
                if sources.documents.len() <= 1 && !all && sources.memory.is_none() {
                    let workspace = self.workspace(sources.documents.first().map(String::as_str))?;
                    let mut built = self.library.context(&workspace, &options)?;
                    built.blocks.iter_mut().for_each(|b| b.document = Some(workspace.name().to_owned()));
                    return Ok(built);
                }
                self.library.context_across(&sources, &options)
            })
            .or_raise(py)?;
        Context::new(py, built)
    }

    /// The blocks best matching `query`, best first; `roles` keeps only
    /// blocks of those roles (`function`, `paragraph` ...).
    #[pyo3(signature = (query, *, doc = None, limit = 10, roles = None))]
    fn search(
        &self,
        py: Python<'_>,
        query: String,
        doc: Option<String>,
        limit: usize,
        roles: Option<Vec<String>>,
    ) -> PyResult<Vec<SearchHit>> {
        let request = SearchRequest { limit, roles: roles.unwrap_or_default(), ..SearchRequest::new(query) };
        let results = py
            .detach(|| {
                let workspace = self.workspace(doc.as_deref())?;
                workspace.search(&request)
            })
            .or_raise(py)?;
        Ok(results.results.into_iter().map(SearchHit::from).collect())
    }

    /// A repository map: files ranked by PageRank over the code graph
    /// (personalized to `question` and `files`), with their most used
    /// symbols' signatures, within `budget` tokens.
    #[pyo3(signature = (question = None, *, doc = None, files = None, budget = DEFAULT_MAP_BUDGET))]
    fn map(
        &self,
        py: Python<'_>,
        question: Option<String>,
        doc: Option<String>,
        files: Option<Vec<String>>,
        budget: usize,
    ) -> PyResult<String> {
        let request = MapRequest { question, files: files.unwrap_or_default(), budget };
        let map = py
            .detach(|| {
                let workspace = self.workspace(doc.as_deref())?;
                workspace.map(&request)
            })
            .or_raise(py)?;
        Ok(map.text)
    }

    /// An agent session in document `doc`: named sessions are saved after
    /// every `run` and come back as they were in a later process.
    /// `budget`: its context window's tokens; `task`: what its relevance
    /// is measured against.
    #[pyo3(signature = (name = None, *, doc = None, budget = None, task = None))]
    fn session(
        &self,
        py: Python<'_>,
        name: Option<String>,
        doc: Option<String>,
        budget: Option<usize>,
        task: Option<String>,
    ) -> PyResult<Session> {
        let options = NewSession { budget, task, ..NewSession::default() };
        py.detach(|| Session::open(Arc::clone(&self.library), self.workspace(doc.as_deref())?, name, options))
            .or_raise(py)
    }

    /// Deletes document `name` with its snapshots, sessions and search
    /// index; whether it existed.
    fn remove(&self, py: Python<'_>, name: String) -> PyResult<bool> {
        py.detach(|| self.library.remove(&name)).or_raise(py)
    }

    /// Renames document `old` to `new` (refused when `new` is taken).
    fn rename(&self, py: Python<'_>, old: String, new: String) -> PyResult<()> {
        py.detach(|| self.library.rename(&old, &new)).or_raise(py)
    }

    /// The store directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.library.store_dir().to_path_buf()
    }

    fn __repr__(&self) -> String {
        format!("Store({:?})", self.library.store_dir().display().to_string())
    }
}
