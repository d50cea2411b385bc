//! What an ingest run found: counts, and warnings for what it skipped.

use std::collections::BTreeMap;
use std::fmt;

/// Why something was skipped or left unresolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WarningKind {
    /// A binary file.
    Binary,
    /// A file whose bytes are not UTF-8.
    NotUtf8,
    /// A file over the size limit.
    TooLarge,
    /// A file that could not be read (permissions, I/O).
    Unreadable,
    /// A file that disappeared between listing and reading.
    Vanished,
    /// A file type UCP does not ingest.
    Unsupported,
    /// A file or folder excluded by `.gitignore`/`.ignore` rules.
    Ignored,
    /// A symlink loop or another walk error.
    Walk,
    /// A symlink or link leaving the corpus.
    OutsideCorpus,
    /// A link to a file or anchor that is not in the corpus.
    UnresolvedLink,
    /// Front matter that could not be parsed.
    FrontMatter,
    /// Source code with syntax errors (its symbols were read from the
    /// parts that parsed).
    Syntax,
}

impl WarningKind {
    /// Short name used in summaries and JSON.
    pub fn name(self) -> &'static str {
        match self {
            WarningKind::Binary => "binary",
            WarningKind::NotUtf8 => "not_utf8",
            WarningKind::TooLarge => "too_large",
            WarningKind::Unreadable => "unreadable",
            WarningKind::Vanished => "vanished",
            WarningKind::Unsupported => "unsupported",
            WarningKind::Ignored => "ignored",
            WarningKind::Walk => "walk",
            WarningKind::OutsideCorpus => "outside_corpus",
            WarningKind::UnresolvedLink => "unresolved_link",
            WarningKind::FrontMatter => "front_matter",
            WarningKind::Syntax => "syntax",
        }
    }
}

/// One skipped file or unresolved link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// What went wrong.
    pub kind: WarningKind,
    /// The file concerned, relative to the corpus.
    pub path: String,
    /// A sentence a user can act on.
    pub message: String,
}

impl Warning {
    /// A warning about `path`.
    pub fn new(kind: WarningKind, path: impl Into<String>, message: impl Into<String>) -> Self {
        Warning { kind, path: path.into(), message: message.into() }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// What the source files of a corpus define and how their names resolved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CodeReport {
    /// Files read into symbols.
    pub files: usize,
    /// Symbols (classes, functions, methods ...) found.
    pub symbols: usize,
    /// `imports`, `calls`, `extends` and `implements` edges set.
    pub edges: usize,
    /// Calls linked to their definition.
    pub calls_resolved: usize,
    /// Calls of names defined outside the corpus, or more than once.
    pub calls_unresolved: usize,
    /// Imports linked to a file of the corpus.
    pub imports_resolved: usize,
    /// Imports of modules outside the corpus.
    pub imports_unresolved: usize,
}

/// Counts of one ingest run.
#[derive(Debug, Clone, Default)]
pub struct IngestReport {
    /// Files turned into blocks.
    pub files: usize,
    /// Bytes of source text read.
    pub bytes: u64,
    /// Blocks in the document, root included.
    pub blocks: usize,
    /// Sum of the blocks' token counts.
    pub tokens: u64,
    /// Edges created from links.
    pub links: usize,
    /// Source files read as symbols, and how their names resolved.
    pub code: CodeReport,
    /// Everything skipped or unresolved.
    pub warnings: Vec<Warning>,
}

impl IngestReport {
    /// Warnings counted by kind.
    pub fn warning_counts(&self) -> BTreeMap<WarningKind, usize> {
        let mut counts = BTreeMap::new();
        for warning in &self.warnings {
            *counts.entry(warning.kind).or_insert(0) += 1;
        }
        counts
    }
}
