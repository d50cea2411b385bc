//! `grep`: a regex over the workspace's files with ripgrep's own crates
//! (`ignore` walks in parallel honouring `.gitignore`/`.ignore`, skipping
//! hidden files; `grep-searcher` reads and matches, skipping binary
//! files), in three output modes, sorted by path and paged.

use std::path::{Path, PathBuf};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use ignore::WalkBuilder;
use serde::Serialize;

use crate::page::{cut_line, paginate, shown_path, Entry, PageInfo, Paging};
use crate::walk::search_files;
use crate::{ToolError, Tools};

/// What a grep answer lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// The paths of files with a match (the cheapest answer).
    #[default]
    FilesWithMatches,
    /// Matching lines with their numbers and context.
    Content,
    /// Matching lines per file.
    Count,
}

impl std::str::FromStr for OutputMode {
    type Err = ToolError;

    fn from_str(s: &str) -> Result<Self, ToolError> {
        match s {
            "files_with_matches" => Ok(OutputMode::FilesWithMatches),
            "content" => Ok(OutputMode::Content),
            "count" => Ok(OutputMode::Count),
            other => Err(ToolError::Arguments(format!(
                "output_mode {other:?} is not one of files_with_matches, content, count"
            ))),
        }
    }
}

/// A grep call.
#[derive(Debug, Clone, Default)]
pub struct GrepRequest {
    /// The regex (Rust `regex` syntax, as ripgrep).
    pub pattern: String,
    /// File or folder to search, relative to the root (default: the root).
    pub path: Option<String>,
    /// Globs that pick files, `!` to exclude (ripgrep's `-g`).
    pub globs: Vec<String>,
    /// A ripgrep file type (`rust`, `py`, `js` ...).
    pub file_type: Option<String>,
    /// Match without regard to case.
    pub case_insensitive: bool,
    /// What to list.
    pub output_mode: OutputMode,
    /// Context lines before each match (content mode).
    pub before: usize,
    /// Context lines after each match (content mode).
    pub after: usize,
    /// Matches may span lines and `.` matches a newline.
    pub multiline: bool,
    /// Which entries to return.
    pub paging: Paging,
}

/// One line of a content answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GrepLine {
    /// 1-based line number.
    pub line: u64,
    /// The line, cut when very long.
    pub text: String,
    /// A matching line (else context).
    pub is_match: bool,
}

/// One entry of a grep answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GrepEntry {
    /// A file with a match.
    File {
        /// Path relative to the root.
        path: String,
    },
    /// Matching lines in a file.
    Count {
        /// Path relative to the root.
        path: String,
        /// How many lines match.
        count: u64,
    },
    /// A match, or a run of matches and their context.
    Lines {
        /// Path relative to the root.
        path: String,
        /// The lines in order.
        lines: Vec<GrepLine>,
    },
}

/// A grep answer: one page of entries and its text form.
#[derive(Debug, Clone, Serialize)]
pub struct GrepResult {
    /// The entries of this page.
    pub entries: Vec<GrepEntry>,
    /// Where the page sits.
    pub page: PageInfo,
    /// Files searched.
    pub files_searched: usize,
    /// The compact text form.
    pub text: String,
}

/// What one file gave.
struct FileHits {
    path: PathBuf,
    entries: Vec<GrepEntry>,
}

impl Tools {
    /// Runs a grep.
    pub fn grep(&self, request: &GrepRequest) -> Result<GrepResult, ToolError> {
        let base = self.jail.resolve(request.path.as_deref().unwrap_or("."))?;
        if self.jail.kind(&base).is_none() {
            return Err(ToolError::NotFound(request.path.clone().unwrap_or_default()));
        }
        let matcher = matcher(request)?;
        let walker = walker(&base, request)?;
        let mut searcher = SearcherBuilder::new();
        searcher.binary_detection(BinaryDetection::quit(0)).line_number(true).multi_line(request.multiline);
        if request.output_mode == OutputMode::Content {
            searcher.before_context(request.before).after_context(request.after);
        }
        let (mut found, searched) = search_files(&walker, || {
            let mut searcher = searcher.build();
            let matcher = matcher.clone();
            move |path: &Path| Some(search_file(&mut searcher, &matcher, path, request, self).into_iter().collect())
        });
        found.sort_by(|a, b| a.path.cmp(&b.path));
        let entries: Vec<GrepEntry> = found.into_iter().flat_map(|f| f.entries).collect();
        let texts: Vec<Entry> = entries.iter().map(entry_text).collect();
        let noun = match request.output_mode {
            OutputMode::FilesWithMatches | OutputMode::Count => "files",
            OutputMode::Content => "matches",
        };
        let (mut text, page) = paginate(&texts, request.paging, self.max_tokens, &|| self.tokenizer(), noun);
        if page.total == 0 {
            text = format!("no matches ({searched} files searched)\n");
        }
        let entries = entries.into_iter().skip(page.offset).take(page.shown).collect();
        Ok(GrepResult { entries, page, files_searched: searched, text })
    }
}

fn matcher(request: &GrepRequest) -> Result<RegexMatcher, ToolError> {
    let mut builder = RegexMatcherBuilder::new();
    builder.case_insensitive(request.case_insensitive);
    if request.multiline {
        builder.multi_line(true).dot_matches_new_line(true);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    builder.build(&request.pattern).map_err(|e| ToolError::arguments(format!("pattern: {e}")))
}

fn walker(base: &Path, request: &GrepRequest) -> Result<WalkBuilder, ToolError> {
    let mut walker = crate::walk::walker(base);
    if !request.globs.is_empty() {
        let mut overrides = OverrideBuilder::new(base);
        for glob in &request.globs {
            overrides.add(glob).map_err(|e| ToolError::arguments(format!("glob {glob:?}: {e}")))?;
        }
        walker.overrides(overrides.build().map_err(|e| ToolError::arguments(format!("glob: {e}")))?);
    }
    if let Some(name) = &request.file_type {
        let mut types = TypesBuilder::new();
        types.add_defaults();
        types.select(name);
        let types = types.build().map_err(|e| ToolError::arguments(format!("type {name:?}: {e}")))?;
        walker.types(types);
    }
    Ok(walker)
}

/// Searches one file; `None` when it has no match or is binary.
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    path: &Path,
    request: &GrepRequest,
    tools: &Tools,
) -> Option<FileHits> {
    let mut sink = Collect { mode: request.output_mode, ..Collect::default() };
    // Opened through the jail: a folder on the way swapped for a link
    // since the walk listed the file makes it unreadable, not elsewhere.
    let file = tools.jail.open_listed(path)?;
    searcher.search_file(matcher, &file, &mut sink).ok()?;
    if sink.binary || (sink.count == 0) {
        return None;
    }
    sink.close_hunk();
    // Named only once it matched: most files do not.
    let shown = tools.jail.display(path);
    let entries = match request.output_mode {
        OutputMode::FilesWithMatches => vec![GrepEntry::File { path: shown }],
        OutputMode::Count => vec![GrepEntry::Count { path: shown, count: sink.count }],
        OutputMode::Content => {
            sink.hunks.into_iter().map(|lines| GrepEntry::Lines { path: shown.clone(), lines }).collect()
        }
    };
    Some(FileHits { path: path.to_owned(), entries })
}

/// The sink gathering one file's matches.
#[derive(Default)]
struct Collect {
    mode: OutputMode,
    count: u64,
    binary: bool,
    /// Closed runs of lines: a match, or matches with their context.
    hunks: Vec<Vec<GrepLine>>,
    hunk: Vec<GrepLine>,
}

impl Collect {
    fn push_lines(&mut self, first: Option<u64>, bytes: &[u8], is_match: bool) {
        let text = String::from_utf8_lossy(bytes);
        for (number, line) in (first.unwrap_or(0)..).zip(text.lines()) {
            self.hunk.push(GrepLine { line: number, text: cut_line(line).into_owned(), is_match });
        }
    }

    fn close_hunk(&mut self) {
        if !self.hunk.is_empty() {
            self.hunks.push(std::mem::take(&mut self.hunk));
        }
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, searcher: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.count += 1;
        match self.mode {
            OutputMode::FilesWithMatches => Ok(false),
            OutputMode::Count => Ok(true),
            OutputMode::Content => {
                self.push_lines(found.line_number(), found.bytes(), true);
                let has_context = searcher.before_context() > 0 || searcher.after_context() > 0;
                if !has_context {
                    self.close_hunk();
                }
                Ok(true)
            }
        }
    }

    fn context(&mut self, _searcher: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.push_lines(context.line_number(), context.bytes(), false);
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, Self::Error> {
        self.close_hunk();
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// The text of one entry: `N:line` for a match, `N-line` for context (as
/// ripgrep), under its file's name.
fn entry_text(entry: &GrepEntry) -> Entry {
    match entry {
        GrepEntry::File { path } => Entry::plain(shown_path(path)),
        GrepEntry::Count { path, count } => Entry::plain(format!("{}:{count}", shown_path(path))),
        GrepEntry::Lines { path, lines } => {
            let text = lines
                .iter()
                .map(|l| format!("{}{}{}", l.line, if l.is_match { ':' } else { '-' }, l.text))
                .collect::<Vec<_>>()
                .join("\n");
            // A match alone is one line; a run with context is set apart.
            Entry { hunk: lines.len() > 1, ..Entry::under(path, text) }
        }
    }
}
