//! `ucp search`, and how the command line shows a search index being built
//! or caught up (a progress bar on a terminal, a line on stderr).

use std::time::Duration;

use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressStyle};
use ucpkit_workspace::vocabulary::{Mode, SyncProgress};
use ucpkit_workspace::{SearchRequest, Workspace};

use crate::{print, print_json, Cli};

/// Arguments of `ucp search`.
#[derive(clap::Args)]
pub(crate) struct SearchArgs {
    /// What to look for.
    query: String,
    /// Most results.
    #[arg(long, default_value_t = 10, value_parser = crate::count_in(1, ucpkit_workspace::vocabulary::MAX_HITS))]
    limit: usize,
    /// Only blocks with one of these roles (comma-separated: paragraph,code ...).
    #[arg(long, value_delimiter = ',', value_name = "ROLES")]
    roles: Vec<String>,
    /// Only blocks with one of these tags (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "TAGS")]
    tags: Vec<String>,
    /// Lowest normalized score (0..1) shown.
    #[arg(long, default_value_t = 0.0, value_name = "SCORE")]
    min_similarity: f64,
    /// How to rank: hybrid when a model is configured, bm25 otherwise.
    #[arg(long, value_enum)]
    mode: Option<SearchMode>,
    /// List files instead of blocks: each ranked by its best hit and, a
    /// little, by its other good ones (--limit files).
    #[arg(long)]
    files: bool,
}

/// `--mode` of `ucp search`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SearchMode {
    /// BM25 full-text.
    Bm25,
    /// Nearest embeddings (needs --model).
    Vector,
    /// Rank fusion of both (needs --model).
    Hybrid,
}

impl From<SearchMode> for Mode {
    fn from(mode: SearchMode) -> Mode {
        match mode {
            SearchMode::Bm25 => Mode::Bm25,
            SearchMode::Vector => Mode::Vector,
            SearchMode::Hybrid => Mode::Hybrid,
        }
    }
}

/// A progress bar over search index phases, on a terminal; it clears
/// itself when a phase is done.
pub(crate) struct Bar(ProgressBar);

impl Bar {
    pub(crate) fn new() -> Bar {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template("{spinner} search index [{bar:30}] {pos}/{len} {wide_msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        Bar(bar)
    }
}

impl SyncProgress for Bar {
    fn phase(&self, name: &str, total: usize) {
        self.0.reset();
        self.0.set_message(name.to_owned());
        self.0.set_length(total as u64);
        if total == 0 {
            self.0.finish_and_clear();
        } else {
            self.0.enable_steady_tick(Duration::from_millis(100));
        }
    }

    fn advance(&self, done: usize) {
        self.0.inc(done as u64);
        if self.0.position() >= self.0.length().unwrap_or(0) {
            self.0.finish_and_clear();
        }
    }
}

/// Says on stderr when opening `workspace` had to build its search index or
/// catch it up with the document (commands that change the document update
/// it silently: that is expected).
pub(crate) fn announce(workspace: &Workspace) {
    let report = workspace.index_opened();
    let name = workspace.name();
    match &report.rebuilt {
        Some(reason) => eprintln!(
            "ucp: rebuilt the search index of {name} because {reason}: {} blocks in {:.2}s",
            report.added, report.seconds
        ),
        None if report.added + report.updated + report.removed > 0 => eprintln!(
            "ucp: the search index of {name} was behind the document; updated {} blocks, removed {}",
            report.added + report.updated,
            report.removed
        ),
        None if report.embedded > 0 => eprintln!(
            "ucp: embedded {} blocks of {name} that had no vector from this model ({:.2}s)",
            report.embedded, report.seconds
        ),
        _ => {}
    }
}

pub(crate) fn run(cli: &Cli, args: &SearchArgs) -> anyhow::Result<()> {
    let library = cli.library(false)?;
    // Files are ranked from many hits: each file's next ones count too.
    let hits = if args.files { (args.limit * 20).min(ucpkit_workspace::vocabulary::MAX_HITS) } else { args.limit };
    let request = SearchRequest {
        limit: hits,
        min_similarity: args.min_similarity,
        roles: args.roles.clone(),
        tags: args.tags.clone(),
        mode: args.mode.map(Mode::from),
        ..SearchRequest::new(args.query.clone())
    };
    let results = match library.search_stored(None, &request)? {
        Some(results) => results,
        None => cli.workspace(&library)?.search(&request)?,
    };
    if args.files {
        if cli.json {
            let files: Vec<_> = results.files().into_iter().take(args.limit).collect();
            return print_json(&serde_json::json!({
                "document": results.document, "query": results.query, "mode": results.mode, "files": files
            }));
        }
        return print(&results.files_text(args.limit));
    }
    if cli.json {
        return print_json(&results);
    }
    if results.results.is_empty() {
        eprint!("{}", results.text());
        return Ok(());
    }
    print(&results.text())
}
