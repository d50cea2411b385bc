//! What a tool call can fail with: each error names the path or argument
//! at fault and, where there is one, what to do instead.

use std::path::PathBuf;

/// Why a tool call failed. Nothing was changed on disk when a call fails.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A path that resolves outside the workspace root.
    #[error("{path} is outside the workspace {root}: tools only reach files under it")]
    OutsideRoot {
        /// The path as given.
        path: String,
        /// The workspace root.
        root: PathBuf,
    },
    /// A path that does not exist.
    #[error("{0} does not exist")]
    NotFound(String),
    /// A regular file was needed.
    #[error("{0} is not a file")]
    NotAFile(String),
    /// A file that is not text (binary, an image, not UTF-8).
    #[error("{path} is {what}, not text: this tool reads and edits text files only")]
    NotText {
        /// The path as given.
        path: String,
        /// What the file is instead.
        what: &'static str,
    },
    /// Arguments that cannot be used as given.
    #[error("{0}")]
    Arguments(String),
    /// An `edit` whose old text is not in the file.
    #[error("{path}: old_string was not found{hint}")]
    EditNotFound {
        /// The path as given.
        path: String,
        /// A hint when a near form is there (other whitespace or case).
        hint: String,
    },
    /// An `edit` whose old text occurs more than once without `replace_all`.
    #[error(
        "{path}: old_string occurs {count} times (lines {lines}): add surrounding lines to make it unique, \
         or set replace_all"
    )]
    EditAmbiguous {
        /// The path as given.
        path: String,
        /// How many times it occurs.
        count: usize,
        /// The first lines it starts on, comma separated.
        lines: String,
    },
    /// A result over the token cap that cannot be cut into smaller pages.
    #[error("{0}")]
    TooLarge(String),
    /// The editor the files are read and written through failed.
    #[error("the editor could not do it: {0}")]
    Editor(String),
    /// The tool is switched off on this server.
    #[error("{0} is switched off here (the workspace is read-only)")]
    ReadOnly(&'static str),
    /// A path whose folders changed between its check and its open (a
    /// folder swapped for a link): refused, never followed.
    #[error("{0} changed while it was being opened (a link appeared on its way): nothing was read or written")]
    Changed(String),
    /// A write under a path the tools never write (the store, the
    /// configuration UCP reads).
    #[error("{path} is under {under}, which the tools never write (UCP's store and configuration)")]
    Protected {
        /// The path as given.
        path: String,
        /// The protected path it lies under.
        under: String,
    },
    /// A background shell job id that is not known.
    #[error("no background job {0}: it was never started here, or it ended and was already polled")]
    NoJob(u64),
    /// The operating system refused or failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done ("cannot read", "cannot write" ...).
        what: &'static str,
        /// The path as given.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// Characters of an argument error's message kept: a parser's message may
/// quote the whole argument, which may be megabytes.
const MESSAGE_CHARS: usize = 400;

impl ToolError {
    /// Arguments refused with `message`, cut to a few hundred characters
    /// and made safe to print.
    pub(crate) fn arguments(message: impl std::fmt::Display) -> Self {
        ToolError::Arguments(ucpkit_core::printable(&message.to_string(), MESSAGE_CHARS).into_owned())
    }

    /// An I/O failure on `path`.
    pub(crate) fn io(what: &'static str, path: impl Into<String>, source: std::io::Error) -> Self {
        ToolError::Io { what, path: path.into(), source }
    }

    /// A stable code for the error, for JSON output and bindings.
    pub fn code(&self) -> &'static str {
        match self {
            ToolError::OutsideRoot { .. } => "outside_root",
            ToolError::NotFound(_) => "not_found",
            ToolError::Editor(_) => "editor",
            ToolError::NotAFile(_) => "not_a_file",
            ToolError::NotText { .. } => "not_text",
            ToolError::Arguments(_) => "arguments",
            ToolError::EditNotFound { .. } => "edit_not_found",
            ToolError::EditAmbiguous { .. } => "edit_ambiguous",
            ToolError::TooLarge(_) => "too_large",
            ToolError::ReadOnly(_) => "read_only",
            ToolError::Changed(_) => "changed",
            ToolError::Protected { .. } => "protected",
            ToolError::NoJob(_) => "no_job",
            ToolError::Io { .. } => "io",
        }
    }
}
