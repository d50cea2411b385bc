//! `ucp index`: ingest paths and save them to the store in one transaction
//! (only a document whose content changed is written).

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use ucpkit_workspace::vocabulary::{IngestReport, Progress};
use ucpkit_workspace::{IndexOptions, IndexProgress};

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
    #[arg(long, value_name = "BYTES", default_value_t = ucpkit_workspace::vocabulary::DEFAULT_MAX_FILE_SIZE)]
    max_file_size: u64,
    /// Index a document edited (with UCL) since it was last indexed anyway:
    /// a snapshot keeps the edited version, then the files replace it.
    #[arg(long)]
    force: bool,
}

/// Progress on a terminal: a bar over files; elsewhere, a line on stderr
/// when the write starts (`store` names where it goes).
struct Bar {
    bar: ProgressBar,
    store: Option<String>,
}

impl IndexProgress for Bar {
    fn writing(&self, name: &str, blocks: usize) {
        match &self.store {
            Some(store) => eprintln!("ucp: writing {name} ({blocks} blocks) to {store}"),
            None => self.bar.set_message(format!("writing {blocks} blocks")),
        }
    }
}

impl Progress for Bar {
    fn files_found(&self, count: usize) {
        self.bar.set_length(count as u64);
    }

    fn file_done(&self, path: &str, _bytes: u64) {
        self.bar.set_message(path.to_owned());
        self.bar.inc(1);
    }
}

pub(crate) fn run(cli: &Cli, args: &IndexArgs) -> anyhow::Result<()> {
    let existed = cli.store_dir().exists();
    let library = cli.library(true)?;
    let result = index_all(cli, args, &library);
    // A first index that failed leaves no empty store behind.
    if result.is_err() && !existed && library.documents().is_ok_and(|docs| docs.is_empty()) {
        drop(library);
        let _ = std::fs::remove_dir_all(cli.store_dir());
    } else {
        library.close_for_exit();
    }
    result
}

fn index_all(cli: &Cli, args: &IndexArgs, library: &ucpkit_workspace::Library) -> anyhow::Result<()> {
    let groups: Vec<(String, Vec<PathBuf>)> = match &args.name {
        Some(name) => vec![(name.clone(), args.paths.clone())],
        None => args.paths.iter().map(|p| (ucpkit_workspace::vocabulary::default_name(p), vec![p.clone()])).collect(),
    };
    // Every name is checked before anything is read or written.
    for (name, _) in &groups {
        ucpkit_workspace::vocabulary::check_document_name(name)?;
    }
    let interactive = std::io::stderr().is_terminal() && !cli.json;
    let announce = (!interactive && !cli.json).then(|| library.location());
    let options = IndexOptions { max_file_size: args.max_file_size, replace_edits: args.force };
    let mut reports = Vec::new();
    for (name, paths) in groups {
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
        let indexed = library
            .index(&paths, Some(&name), &options, &Bar { bar: bar.clone(), store: announce.clone() })
            .with_context(|| format!("indexing {name} into {}", library.location()))?;
        bar.finish_and_clear();
        let search = indexed.workspace.index_opened();
        if !cli.json {
            print_summary(&name, &indexed.report, indexed.seconds);
            if !indexed.changed {
                eprintln!("  unchanged since it was last indexed: nothing written");
            }
            let vectors = if indexed.workspace.index().embedder().is_some() {
                format!(", {} embedded", search.embedded)
            } else {
                String::new()
            };
            eprintln!(
                "  search index: {} blocks indexed, {} updated, {} removed{vectors} in {:.2}s ({:.1} MB/s)",
                search.added,
                search.updated,
                search.removed,
                search.seconds,
                search.bytes as f64 / 1e6 / search.seconds.max(1e-9)
            );
        }
        let mut report = report_json(&name, &indexed.report, indexed.seconds);
        report["changed"] = indexed.changed.into();
        report["search"] = serde_json::to_value(search)?;
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
    let code = &report.code;
    if code.files > 0 {
        eprintln!(
            "  code: {} files, {} symbols, {} edges; calls {} resolved, {} unresolved; imports {} resolved, {} outside",
            code.files,
            code.symbols,
            code.edges,
            code.calls_resolved,
            code.calls_unresolved,
            code.imports_resolved,
            code.imports_unresolved
        );
    }
    const SHOWN: usize = 10;
    for warning in report.warnings.iter().take(SHOWN) {
        eprintln!(
            "  warning: {}",
            ucpkit_workspace::vocabulary::printable(&warning.to_string(), 4 * crate::inspect::SHOWN_CHARS)
        );
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
        "code": {
            "files": report.code.files,
            "symbols": report.code.symbols,
            "edges": report.code.edges,
            "calls_resolved": report.code.calls_resolved,
            "calls_unresolved": report.code.calls_unresolved,
            "imports_resolved": report.code.imports_resolved,
            "imports_unresolved": report.code.imports_unresolved,
        },
        "seconds": seconds,
        "warnings": warnings,
    })
}
