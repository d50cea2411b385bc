//! Ingest: markdown, HTML, plain text, source files and whole folders into
//! UCM documents, and documents back into markdown.
//!
//! The pipeline reads in order: list sources (gitignore-aware walk) → read
//! and check each file → parse it into a block tree (headings open
//! sections) → count tokens → assemble one [`Document`] in which folders and
//! files are blocks too → resolve links between files into `links_to` edges.
//! Problems with single files of a folder become counted [`Warning`]s, never
//! a failed run.
//!
//! ```
//! let doc = ucpkit_ingest::markdown_document("notes", "# Title\n\nHello.\n", &Default::default());
//! assert_eq!(doc.len(), 3); // root, heading, paragraph
//! ```

mod code;
mod code_links;
mod export;
mod html;
mod html_lines;
mod links;
mod markdown;
mod pipeline;
mod reingest;
mod report;
mod section;
mod source;

use std::path::PathBuf;
use std::sync::Arc;

use ucpkit_core::{BpeTokenizer, Document, Tokenizer};

pub use export::to_markdown;
pub use reingest::{update, Changes, SourceBytes, Sources, Update};
pub use report::{CodeReport, IngestReport, Warning, WarningKind};

/// Settings of an ingest run.
#[derive(Clone)]
pub struct IngestOptions {
    /// Counts every block's tokens (exact BPE by default).
    pub tokenizer: Arc<dyn Tokenizer>,
    /// Files larger than this many bytes are skipped with a warning.
    pub max_file_size: u64,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions { tokenizer: Arc::new(BpeTokenizer::default()), max_file_size: DEFAULT_MAX_FILE_SIZE }
    }
}

/// Default for [`IngestOptions::max_file_size`]: 100 MiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 100 << 20;

/// Receives progress from an ingest run (called from worker threads).
pub trait Progress: Sync {
    /// The number of files found to read.
    fn files_found(&self, _count: usize) {}
    /// One file was read and parsed.
    fn file_done(&self, _path: &str, _bytes: u64) {}
}

/// Ignores progress.
impl Progress for () {}

/// The result of an ingest run.
#[derive(Debug)]
pub struct Ingested {
    /// The new document.
    pub document: Document,
    /// Counts and warnings.
    pub report: IngestReport,
    /// What each file was, for indexing the same paths again
    /// ([`update`]).
    pub sources: Sources,
}

/// Why an ingest run failed as a whole.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// No path was given.
    #[error("nothing to index: give at least one file or folder")]
    NoInput,
    /// A path given on the command line cannot be used.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A single file given directly cannot be ingested.
    #[error("cannot index {}: {reason}", path.display())]
    Unusable {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Two inputs would get the same name inside the document.
    #[error("{} and {} have the same name; index them separately or rename one", first.display(), second.display())]
    NameClash {
        /// The first input.
        first: PathBuf,
        /// The second input.
        second: PathBuf,
    },
}

impl IngestError {
    /// A stable code for programs.
    pub fn code(&self) -> &'static str {
        match self {
            IngestError::NoInput => "no_input",
            IngestError::Io { .. } => "ingest_io",
            IngestError::Unusable { .. } => "unusable_input",
            IngestError::NameClash { .. } => "name_clash",
        }
    }
}

/// Ingests files and folders into one document named `name`.
///
/// One file gives a document whose blocks hang under the root; a folder (or
/// several paths) gives directory and file blocks with content under them.
pub fn ingest(
    paths: &[PathBuf],
    name: &str,
    options: &IngestOptions,
    progress: &dyn Progress,
) -> Result<Ingested, IngestError> {
    pipeline::ingest(paths, name, options, progress)
}

/// Ingests files held in memory, `(path, bytes)`, into one document named
/// `name`, as [`ingest`] reads them from disk: one file's blocks hang under
/// the root, several files are file blocks under folder blocks named by
/// their `/`-separated paths. Bytes must be UTF-8 text (a file that is not
/// is skipped with a warning among several, refused alone).
pub fn ingest_texts(files: &[(String, Vec<u8>)], name: &str, options: &IngestOptions) -> Result<Ingested, IngestError> {
    pipeline::ingest_texts(files, name, options)
}

/// A document from one markdown text held in memory.
pub fn markdown_document(name: &str, text: &str, options: &IngestOptions) -> Document {
    pipeline::text_document(source::SourceKind::Markdown, name, text, options)
}

/// A document from one HTML page held in memory.
pub fn html_document(name: &str, text: &str, options: &IngestOptions) -> Document {
    pipeline::text_document(source::SourceKind::Html, name, text, options)
}

/// Whether a file at `path` is read as prose (markdown, HTML, plain
/// text), so a code block in it (markdown's and HTML's; plain text holds
/// none) is a sample the prose explains, not a program's own code.
pub fn reads_as_prose(path: &std::path::Path) -> bool {
    matches!(
        source::SourceKind::of(path),
        Some(source::SourceKind::Markdown | source::SourceKind::Html | source::SourceKind::Text)
    )
}

/// The default document name for a path: its last component, without the
/// extension for files.
pub fn default_name(path: &std::path::Path) -> String {
    let name = pipeline::display_name(path).unwrap_or_else(|| "document".to_owned());
    match (path.is_file(), name.rsplit_once('.')) {
        (true, Some((stem, _))) if !stem.is_empty() => stem.to_owned(),
        _ => name,
    }
}
