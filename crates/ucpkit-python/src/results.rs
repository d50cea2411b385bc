//! What the workspace answers, as read-only Python objects.

use pyo3::prelude::*;
use pyo3::types::PyAnyMethods;
use ucpkit_workspace::WorkspaceError;

/// `value` as Python writes it (`None` or a quoted string).
fn py_repr(value: Option<&str>) -> String {
    value.map_or_else(|| "None".to_owned(), |v| format!("{v:?}"))
}

/// Registers the result classes in the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Document>()?;
    m.add_class::<IndexReport>()?;
    m.add_class::<Context>()?;
    m.add_class::<ContextBlock>()?;
    m.add_class::<SearchHit>()?;
    m.add_class::<Reply>()?;
    Ok(())
}

/// A stored document.
#[pyclass(module = "ucp", frozen, get_all)]
pub struct Document {
    /// Its name.
    pub name: String,
    /// Its title, if any.
    pub title: Option<String>,
    /// Blocks, root included.
    pub blocks: u64,
    /// Tokens of all its blocks (o200k).
    pub tokens: u64,
    /// Edges (links, calls, imports ...).
    pub edges: u64,
}

#[pymethods]
impl Document {
    fn __repr__(&self) -> String {
        format!("Document(name={:?}, blocks={}, tokens={}, edges={})", self.name, self.blocks, self.tokens, self.edges)
    }
}

impl From<ucpkit_workspace::vocabulary::DocumentSummary> for Document {
    fn from(summary: ucpkit_workspace::vocabulary::DocumentSummary) -> Self {
        Document {
            name: summary.name,
            title: summary.title,
            blocks: summary.blocks,
            tokens: summary.tokens,
            edges: summary.edges,
        }
    }
}

/// What `Store.index` did.
#[pyclass(module = "ucp", frozen, get_all)]
pub struct IndexReport {
    /// The document's name.
    pub name: String,
    /// Files read.
    pub files: usize,
    /// Blocks in the document.
    pub blocks: usize,
    /// Tokens of its blocks.
    pub tokens: u64,
    /// Links resolved between blocks.
    pub links: usize,
    /// Whether the document changed (and was written).
    pub changed: bool,
    /// Seconds to ingest and write.
    pub seconds: f64,
    /// Warnings (files skipped, syntax errors ...), one line each.
    pub warnings: Vec<String>,
}

#[pymethods]
impl IndexReport {
    fn __repr__(&self) -> String {
        format!(
            "IndexReport(name={:?}, files={}, blocks={}, changed={})",
            self.name, self.files, self.blocks, self.changed
        )
    }
}

impl From<ucpkit_workspace::Indexed> for IndexReport {
    fn from(indexed: ucpkit_workspace::Indexed) -> Self {
        let report = &indexed.report;
        IndexReport {
            name: indexed.workspace.name().to_owned(),
            files: report.files,
            blocks: report.blocks,
            tokens: report.tokens,
            links: report.links,
            changed: indexed.changed,
            seconds: indexed.seconds,
            warnings: report.warnings.iter().map(ToString::to_string).collect(),
        }
    }
}

/// One block of a context.
#[pyclass(module = "ucp", frozen, get_all)]
pub struct ContextBlock {
    /// The block's id.
    pub id: String,
    /// The stored document it is a block of.
    pub document: Option<String>,
    /// Its role (`paragraph`, `code`, `function` ...).
    pub role: Option<String>,
    /// The source file (its path inside the indexed corpus).
    pub file: Option<String>,
    /// First and last source line.
    pub lines: Option<(u32, u32)>,
    /// Titles of the headings (and file) above it, outermost first.
    pub heading_path: Vec<String>,
    /// When and where it happened (session, time), for a memory that
    /// records it.
    pub occasion: Option<String>,
    /// The code symbol it defines (`Class.method`), for code.
    pub symbol: Option<String>,
    /// How relevant the agents judged it (0..1).
    pub relevance: f64,
    /// How it is shown: `full`, `truncated`, `summary` or `structure_only`.
    pub representation: String,
    /// Tokens of its segment in the rendering.
    pub tokens: usize,
}

#[pymethods]
impl ContextBlock {
    fn __repr__(&self) -> String {
        format!("ContextBlock(id={:?}, file={}, tokens={})", self.id, py_repr(self.file.as_deref()), self.tokens)
    }
}

/// A context built for a question.
#[pyclass(module = "ucp", frozen, get_all)]
pub struct Context {
    /// The rendered context.
    pub text: String,
    /// Its tokens (exact, o200k; never more than the budget).
    pub tokens: usize,
    /// The budget asked for.
    pub budget: usize,
    /// Its blocks, in document order.
    pub blocks: Vec<Py<ContextBlock>>,
    /// Sections the sub-agents explored.
    pub sections: usize,
    /// Milliseconds the engine took.
    pub millis: f64,
}

#[pymethods]
impl Context {
    fn __repr__(&self) -> String {
        format!("Context(tokens={}, budget={}, blocks={})", self.tokens, self.budget, self.blocks.len())
    }

    fn __str__(&self) -> &str {
        &self.text
    }
}

impl Context {
    /// The built context as Python objects.
    pub(crate) fn new(py: Python<'_>, built: ucpkit_workspace::vocabulary::BuiltContext) -> PyResult<Self> {
        let blocks = built
            .blocks
            .into_iter()
            .map(|block| {
                let representation = serde_json::to_value(block.representation)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                Py::new(
                    py,
                    ContextBlock {
                        id: block.id.to_string(),
                        document: block.document,
                        role: block.role,
                        file: block.file,
                        lines: block.lines.map(|[first, last]| (first, last)),
                        heading_path: block.heading_path,
                        occasion: block.occasion,
                        symbol: block.symbol,
                        relevance: block.relevance,
                        representation,
                        tokens: block.tokens,
                    },
                )
            })
            .collect::<PyResult<_>>()?;
        Ok(Context {
            text: built.text,
            tokens: built.tokens,
            budget: built.budget,
            blocks,
            sections: built.tasks,
            millis: built.timings.total_ms,
        })
    }
}

/// One search hit.
#[pyclass(module = "ucp", frozen, get_all)]
pub struct SearchHit {
    /// The block's id.
    pub id: String,
    /// Its score in the ranking (0..1): its own match for prose; for code,
    /// its own with a share of the other matches in its file and class.
    pub score: f64,
    /// Its own match (text, heading path and label), as the index scored
    /// it (0..1; for a long report, its whole and headline matches fused).
    pub match_score: f64,
    /// Its role.
    pub role: Option<String>,
    /// The file it came from.
    pub file: Option<String>,
    /// Its first and last line in that file.
    pub lines: Option<(u32, u32)>,
    /// Titles of the sections above it.
    pub heading_path: Vec<String>,
    /// When and where it happened, for a memory that records it.
    pub occasion: Option<String>,
    /// The code symbol it defines, for code.
    pub symbol: Option<String>,
    /// Its first characters on one line.
    pub preview: String,
    /// Its tokens (o200k).
    pub tokens: usize,
}

#[pymethods]
impl SearchHit {
    fn __repr__(&self) -> String {
        format!("SearchHit(id={:?}, score={:.3}, file={})", self.id, self.score, py_repr(self.file.as_deref()))
    }
}

impl From<ucpkit_workspace::SearchHit> for SearchHit {
    fn from(hit: ucpkit_workspace::SearchHit) -> Self {
        SearchHit {
            id: hit.id,
            score: hit.score,
            match_score: hit.match_score,
            role: hit.role,
            file: hit.file,
            lines: hit.lines.map(|[first, last]| (first, last)),
            heading_path: hit.heading_path,
            occasion: hit.occasion,
            symbol: hit.symbol,
            preview: hit.preview,
            tokens: hit.tokens,
        }
    }
}

/// What one UCL command answered.
#[pyclass(module = "ucp", frozen, get_all)]
pub struct Reply {
    /// Its line in the script (1-based).
    pub line: usize,
    /// The command keyword (`GOTO`, `CTX ADD` ...).
    pub command: String,
    /// The reply as the shell prints it.
    pub text: String,
    /// The reply as data (what `ucp run --json` gives for the command).
    pub data: Py<PyAny>,
    /// Warnings: budgets nearly spent, blocks deleted from under the session.
    pub warnings: Vec<String>,
}

#[pymethods]
impl Reply {
    fn __repr__(&self) -> String {
        format!("Reply(line={}, command={:?})", self.line, self.command)
    }

    fn __str__(&self) -> &str {
        &self.text
    }
}

impl Reply {
    /// The replies of the commands of `report` that succeeded.
    pub(crate) fn all(py: Python<'_>, report: &ucpkit_workspace::vocabulary::ScriptReport) -> PyResult<Vec<Py<Reply>>> {
        let json = py.import("json")?;
        let mut out = Vec::new();
        for step in &report.steps {
            let Ok(done) = &step.result else { continue };
            let encoded = serde_json::to_string(&done.reply)
                .map_err(|e| crate::errors::workspace(py, WorkspaceError::Damaged(e.to_string())))?;
            let data = json.call_method1("loads", (encoded,))?.unbind();
            let reply = Reply {
                line: step.line,
                command: done.command.to_owned(),
                text: done.reply.to_string(),
                data,
                warnings: done.warnings.clone(),
            };
            out.push(Py::new(py, reply)?);
        }
        Ok(out)
    }
}
