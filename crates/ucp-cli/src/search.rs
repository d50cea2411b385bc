//! `ucp search`, and the search index every command that changes a document
//! keeps up to date (`<store>/search/<document>/`).

use std::io::IsTerminal as _;
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use ucm_core::{printable, Document, Tokenizer as _};
use ucp_context::segment;
use ucp_search::{
    index_dir, load_embedder, Embedder, Mode, SearchConfig, SearchIndex, SearchOptions, SyncProgress, SyncReport,
};
use ucp_store::Store;

use crate::inspect::SHOWN_CHARS;
use crate::{print, print_json, Cli};

/// Arguments of `ucp search`.
#[derive(clap::Args)]
pub(crate) struct SearchArgs {
    /// What to look for.
    query: String,
    /// Most results.
    #[arg(long, default_value_t = 10, value_parser = crate::count_in(1, ucp_search::MAX_HITS))]
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

/// The embedding model `--model` / `UCP_MODEL` names, loaded.
fn embedder(cli: &Cli) -> anyhow::Result<Option<Box<dyn Embedder>>> {
    match &cli.model {
        None => Ok(None),
        Some(dir) => Ok(Some(load_embedder(dir)?)),
    }
}

/// A progress bar over sync phases, on a terminal.
struct Bar(ProgressBar);

impl SyncProgress for Bar {
    fn phase(&self, name: &str, total: usize) {
        self.0.set_message(name.to_owned());
        self.0.set_position(0);
        self.0.set_length(total as u64);
    }

    fn advance(&self, done: usize) {
        self.0.inc(done as u64);
    }
}

/// Opens `document`'s index and brings it up to date. With `announce`, says
/// on stderr when it had to be built or caught up with the document (the
/// commands that change the document update it silently: that is expected).
pub(crate) fn open_index(
    cli: &Cli,
    store_dir: &Path,
    document: &Document,
    announce: bool,
) -> anyhow::Result<(SearchIndex, SyncReport)> {
    let bar = ProgressBar::new(0);
    if std::io::stderr().is_terminal() && !cli.json {
        bar.set_style(
            ProgressStyle::with_template("{spinner} search index [{bar:30}] {pos}/{len} {wide_msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(100));
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let dir = index_dir(store_dir, document.name());
    let opened = SearchIndex::open(&dir, document, embedder(cli)?, SearchConfig::default(), &Bar(bar.clone()))
        .with_context(|| format!("search index of {}", document.name()));
    bar.finish_and_clear();
    let (index, report) = opened?;
    if !announce {
        return Ok((index, report));
    }
    match &report.rebuilt {
        Some(reason) => eprintln!(
            "ucp: rebuilt the search index of {} because {reason}: {} blocks in {:.2}s",
            document.name(),
            report.added,
            report.seconds
        ),
        None if report.added + report.updated + report.removed > 0 => eprintln!(
            "ucp: the search index of {} was behind the document; updated {} blocks, removed {}",
            document.name(),
            report.added + report.updated,
            report.removed
        ),
        None if report.embedded > 0 => eprintln!(
            "ucp: embedded {} blocks of {} that had no vector from this model ({:.2}s)",
            report.embedded,
            document.name(),
            report.seconds
        ),
        _ => {}
    }
    Ok((index, report))
}

/// After a command saved `document`: updates its index when it has one
/// (a missing index is built by the next search).
pub(crate) fn after_save(cli: &Cli, store_dir: &Path, document: &Document) -> anyhow::Result<()> {
    if index_dir(store_dir, document.name()).exists() {
        open_index(cli, store_dir, document, false)?;
    }
    Ok(())
}

/// One result of `ucp search`.
#[derive(Serialize)]
struct Hit {
    id: String,
    score: f64,
    role: Option<String>,
    file: Option<String>,
    lines: Option<[u32; 2]>,
    heading_path: Vec<String>,
    preview: String,
    tokens: usize,
}

const PREVIEW_CHARS: usize = 160;

pub(crate) fn run(cli: &Cli, args: &SearchArgs) -> anyhow::Result<()> {
    let store_dir = cli.store_dir();
    let store = Store::open_existing(&store_dir)?;
    let name = store.resolve_name(cli.doc.as_deref())?;
    let document = store.load_document(&name)?;
    let (index, _) = open_index(cli, &store_dir, &document, true)?;
    let mode = args.mode.map_or(index.default_mode(), Mode::from);
    let options = SearchOptions {
        limit: args.limit,
        min_similarity: args.min_similarity,
        roles: args.roles.clone(),
        tags: args.tags.clone(),
    };
    let hits = index.search_mode(&args.query, &options, mode)?;
    let tokenizer = ucm_core::BpeTokenizer::default();
    let results: Vec<Hit> = hits
        .iter()
        .filter_map(|hit| {
            let block = document.get(hit.id)?;
            let text = block.plain_text();
            let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let preview = printable(&flat, PREVIEW_CHARS).into_owned();
            let source = block.metadata.source.as_ref();
            Some(Hit {
                id: hit.id.to_string(),
                score: hit.score,
                role: block.role().map(|r| r.as_str().to_owned()),
                file: source.map(|s| s.file.to_string()),
                lines: source.map(|s| [s.start_line, s.end_line]),
                heading_path: segment::path_titles(&document, hit.id),
                preview,
                tokens: tokenizer.count(&block.to_markdown()),
            })
        })
        .collect();
    if cli.json {
        return print_json(&serde_json::json!({
            "document": name,
            "query": args.query,
            "mode": mode.as_str(),
            "results": results,
        }));
    }
    if results.is_empty() {
        eprintln!("no results for {:?} ({} search of {name})", args.query, mode.as_str());
        return Ok(());
    }
    let mut out = String::new();
    for (rank, hit) in results.iter().enumerate() {
        let place = match (&hit.file, hit.lines) {
            (Some(file), Some([a, b])) => format!("{file}:{a}-{b}"),
            (Some(file), None) => file.clone(),
            _ => String::new(),
        };
        let place = printable(&place, SHOWN_CHARS);
        out.push_str(&format!("{:>2}. {} {:.3} {place}\n", rank + 1, hit.id, hit.score));
        if !hit.heading_path.is_empty() {
            out.push_str(&format!("    § {}\n", printable(&hit.heading_path.join(" > "), SHOWN_CHARS)));
        }
        out.push_str(&format!("    {}\n", hit.preview));
    }
    print(&out)
}
