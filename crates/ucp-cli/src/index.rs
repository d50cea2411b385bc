//! `ucp index`: ingest paths and save them to the store in one transaction.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use ucp_ingest::{IngestOptions, IngestReport, Progress};

use crate::Cli;

/// Arguments of `ucp index`.
#[derive(clap::Args)]
pub(crate) struct IndexArgs {
    /// Files or folders to index. Each becomes its own document unless
    /// --name puts them all into one.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Name of the document (default: the file or folder name).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Skip files larger than this many bytes (with a warning).
    #[arg(long, value_name = "BYTES", default_value_t = ucp_ingest::DEFAULT_MAX_FILE_SIZE)]
    max_file_size: u64,
}

/// Progress on a terminal: a bar over files.
struct Bar(ProgressBar);

impl Progress for Bar {
    fn files_found(&self, count: usize) {
        self.0.set_length(count as u64);
    }

    fn file_done(&self, path: &str, _bytes: u64) {
        self.0.set_message(path.to_owned());
        self.0.inc(1);
    }
}

pub(crate) fn run(cli: &Cli, args: &IndexArgs) -> anyhow::Result<()> {
    let store_dir = cli.store_dir();
    let mut store = ucp_store::Store::open(&store_dir)?;
    let options = IngestOptions { max_file_size: args.max_file_size, ..IngestOptions::default() };
    let groups: Vec<(String, Vec<PathBuf>)> = match &args.name {
        Some(name) => vec![(name.clone(), args.paths.clone())],
        None => args.paths.iter().map(|p| (ucp_ingest::default_name(p), vec![p.clone()])).collect(),
    };
    // Every name is checked before anything is read or written.
    for (name, _) in &groups {
        ucp_store::check_document_name(name)?;
    }
    let interactive = std::io::stderr().is_terminal() && !cli.json;
    let mut reports = Vec::new();
    for (name, paths) in groups {
        let started = Instant::now();
        let bar = ProgressBar::new(0);
        if interactive {
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix} [{bar:30}] {pos}/{len} {wide_msg}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            bar.set_prefix(name.clone());
            bar.enable_steady_tick(Duration::from_millis(100));
        } else {
            bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        }
        let ingested = ucp_ingest::ingest(&paths, &name, &options, &Bar(bar.clone()))?;
        let blocks = ingested.document.len();
        if interactive {
            bar.set_message(format!("writing {blocks} blocks"));
        } else if !cli.json {
            eprintln!("ucp: writing {name} ({blocks} blocks) to {}", store_dir.display());
        }
        store.save_document(&ingested.document).with_context(|| format!("saving {name} to {}", store_dir.display()))?;
        bar.finish_and_clear();
        let seconds = started.elapsed().as_secs_f64();
        if !cli.json {
            print_summary(&name, &ingested.report, seconds);
        }
        let (index, search) = crate::search::open_index(cli, &store_dir, &ingested.document, false)?;
        if !cli.json {
            let vectors =
                if index.embedder().is_some() { format!(", {} embedded", search.embedded) } else { String::new() };
            eprintln!(
                "  search index: {} blocks indexed, {} updated, {} removed{vectors} in {:.2}s ({:.1} MB/s)",
                search.added,
                search.updated,
                search.removed,
                search.seconds,
                search.bytes as f64 / 1e6 / search.seconds.max(1e-9)
            );
        }
        let mut report = report_json(&name, &ingested.report, seconds);
        report["search"] = serde_json::to_value(&search)?;
        reports.push(report);
    }
    if cli.json {
        crate::print_json(&reports)?;
    }
    Ok(())
}

fn print_summary(name: &str, report: &IngestReport, seconds: f64) {
    let mb = report.bytes as f64 / 1e6;
    eprintln!(
        "indexed {name}: {} files, {} blocks, {} tokens, {} links in {seconds:.2}s ({mb:.1} MB, {:.1} MB/s)",
        report.files,
        report.blocks,
        report.tokens,
        report.links,
        mb / seconds.max(1e-9)
    );
    const SHOWN: usize = 10;
    for warning in report.warnings.iter().take(SHOWN) {
        eprintln!("  warning: {}", ucm_core::printable(&warning.to_string(), 4 * crate::inspect::SHOWN_CHARS));
    }
    if !report.warnings.is_empty() {
        let counts: Vec<String> =
            report.warning_counts().iter().map(|(kind, n)| format!("{n} {}", kind.name())).collect();
        let more = report.warnings.len().saturating_sub(SHOWN);
        let more = if more > 0 { format!(" ({more} not shown; --json lists all)") } else { String::new() };
        eprintln!("  {} warnings: {}{more}", report.warnings.len(), counts.join(", "));
    }
}

fn report_json(name: &str, report: &IngestReport, seconds: f64) -> serde_json::Value {
    let warnings: Vec<serde_json::Value> = report
        .warnings
        .iter()
        .map(|w| serde_json::json!({"kind": w.kind.name(), "path": w.path, "message": w.message}))
        .collect();
    serde_json::json!({
        "document": name,
        "files": report.files,
        "bytes": report.bytes,
        "blocks": report.blocks,
        "tokens": report.tokens,
        "links": report.links,
        "seconds": seconds,
        "warnings": warnings,
    })
}
