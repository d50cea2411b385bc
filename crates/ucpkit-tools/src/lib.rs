//! Coding-agent tools over one workspace folder: `grep`, `glob`, `read`,
//! `write`, `edit`, `bash` and `ast_search`.
//!
//! Each tool is a method of [`Tools`] taking a typed request and giving a
//! typed result with a compact text form (`.text`) meant for a model's
//! context: every result is paged at entry boundaries and capped in
//! tokens ([`page`]), and says how many entries are left and how to get
//! them. Every path goes through the [`Jail`]: nothing outside the
//! workspace root is read, written or run in. Front ends (`ucp grep ...`,
//! the MCP server's tools) only translate arguments to these requests.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("a.rs"), "fn main() {}\n").unwrap();
//! let tools = ucpkit_tools::Tools::new(dir.path()).unwrap();
//! let found = tools.grep(&ucpkit_tools::GrepRequest { pattern: "main".into(), ..Default::default() }).unwrap();
//! assert_eq!(found.text, "a.rs\n");
//! ```

mod ast;
pub mod bash;
mod beneath;
mod buffers;
pub mod confine;
mod edit;
mod error;
mod forward;
mod glob;
mod grep;
mod jail;
mod keeper;
pub mod page;
mod pids;
mod read;
mod sandbox;
mod sys;
mod text;
mod walk;
mod write;

use std::path::Path;
use std::sync::OnceLock;

use ucpkit_core::{BpeTokenizer, Tokenizer};

pub use ast::{AstMatch, AstRequest, AstResult};
pub use bash::{BashRequest, BashResult, JobStatus};
pub use buffers::Buffers;
pub use edit::{EditRequest, EditResult, Replacement};
pub use error::ToolError;
pub use glob::{GlobOrder, GlobRequest, GlobResult};
pub use grep::{GrepEntry, GrepLine, GrepRequest, GrepResult, OutputMode};
pub use jail::{broad_folder, Jail, Kind};
pub use page::{PageInfo, Paging, DEFAULT_HEAD_LIMIT, DEFAULT_MAX_TOKENS};
pub use read::{ReadRequest, ReadResult};
pub use sandbox::Sandbox;
pub use write::WriteResult;

/// The tools over one workspace root.
pub struct Tools {
    jail: Jail,
    max_tokens: usize,
    read_only: bool,
    bash: bash::BashConfig,
    jobs: bash::Jobs,
    tokenizer: OnceLock<BpeTokenizer>,
    buffers: Option<std::sync::Arc<dyn Buffers>>,
}

impl Tools {
    /// Tools over the folder `root`, with the default cap and writes allowed.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, ToolError> {
        Ok(Tools {
            jail: Jail::new(root)?,
            max_tokens: DEFAULT_MAX_TOKENS,
            read_only: false,
            bash: bash::BashConfig::default(),
            jobs: bash::Jobs::default(),
            tokenizer: OnceLock::new(),
            buffers: None,
        })
    }

    /// Reads and writes the files of `read`, `edit` and `write` through an
    /// editor's `buffers` (what the user sees, unsaved changes included).
    pub fn with_buffers(mut self, buffers: Option<std::sync::Arc<dyn Buffers>>) -> Self {
        self.buffers = buffers;
        self
    }

    /// Caps every result at `max_tokens` tokens (at least 256).
    pub fn with_max_tokens(mut self, max_tokens: usize) -> Self {
        self.max_tokens = max_tokens.max(256);
        self
    }

    /// Refuses `write`, `edit` and `bash` when `read_only`.
    pub fn with_read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Sets the longest timeout a `bash` call may ask for.
    pub fn with_max_bash_timeout(mut self, max: std::time::Duration) -> Self {
        self.bash.max_timeout = max;
        self
    }

    /// Runs every `bash` command in `sandbox` (writes only under the
    /// root, `/tmp` and `/dev`; no signal to a process outside; no network
    /// unless it keeps it).
    pub fn with_sandbox(mut self, sandbox: Option<Sandbox>) -> Self {
        self.bash.sandbox = sandbox;
        self
    }

    /// Never writes under `paths` (the store, configuration UCP reads):
    /// `write` and `edit` refuse them, and a sandboxed `bash` sees them
    /// read-only.
    pub fn with_protected(mut self, paths: impl IntoIterator<Item = std::path::PathBuf>) -> Self {
        self.jail = self.jail.with_protected(paths);
        self
    }

    /// Gives `bash` commands these environment variables of the server's
    /// too, besides [`bash::PASSED_ENV`].
    pub fn with_passed_env(mut self, names: Vec<String>) -> Self {
        self.bash.passed_env = names;
        self
    }

    /// The jail every path goes through.
    pub fn jail(&self) -> &Jail {
        &self.jail
    }

    /// Whether the tools that change files or run commands are off.
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// The most tokens of one result.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    fn tokenizer(&self) -> &dyn Tokenizer {
        self.tokenizer.get_or_init(BpeTokenizer::default)
    }

    fn check_writable(&self, tool: &'static str) -> Result<(), ToolError> {
        if self.read_only {
            Err(ToolError::ReadOnly(tool))
        } else {
            Ok(())
        }
    }
}
