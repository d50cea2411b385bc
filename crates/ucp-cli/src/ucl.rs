//! `ucp parse`, `ucp run` and `ucp import-ucl`: UCL scripts against stored
//! documents.

use std::io::Read as _;
use std::path::Path;

use anyhow::{anyhow, Context as _};
use serde::Serialize;
use ucl_parser::{parse_script, print_document, LineIndex, Script};
use ucm_engine::{Engine, Outcome};
use ucp_store::Store;

use crate::{print, print_json, Cli};

/// Reads a script from a file, or standard input for `-`; text that is
/// not UTF-8 is refused with the place of its first bad byte.
pub(crate) fn read_source(path: &Path) -> anyhow::Result<String> {
    let (bytes, name) = if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes).context("cannot read standard input")?;
        (bytes, "standard input".to_owned())
    } else {
        let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        (bytes, path.display().to_string())
    };
    String::from_utf8(bytes).map_err(|error| {
        let bytes = error.as_bytes();
        let at = error.utf8_error().valid_up_to();
        let valid = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
        let (line, column) = LineIndex::new(valid).line_column(valid, at);
        anyhow!(
            "{name} is not UTF-8 text: byte 0x{:02x} at byte offset {at} (line {line}, column {column}) is invalid",
            bytes[at]
        )
    })
}

/// Parses, printing every diagnostic with its caret snippet on stderr.
pub(crate) fn parse_or_report(source: &str) -> anyhow::Result<Script> {
    parse_script(source).map_err(|errors| {
        eprint!("{}", errors.render(source));
        anyhow!("{} parse error{}", errors.0.len(), if errors.0.len() == 1 { "" } else { "s" })
    })
}

pub(crate) fn parse(source: &Path, canonical: bool) -> anyhow::Result<()> {
    let text = read_source(source)?;
    let script = parse_or_report(&text)?;
    if canonical {
        print(&print_document(&script.document))
    } else {
        print_json(&script.document)
    }
}

/// One executed command, as `ucp run --json` reports it.
#[derive(Serialize)]
struct Step<'a> {
    line: usize,
    column: usize,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    outcome: Option<Outcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'static str>,
}

pub(crate) fn run(cli: &Cli, script_path: &Path) -> anyhow::Result<()> {
    let source = read_source(script_path)?;
    let script = parse_or_report(&source)?;
    let mut store = Store::open_existing(cli.store_dir())?;
    let name = store.resolve_name(cli.doc.as_deref())?;
    let document = store.load_document(&name)?;
    let snapshots = store.load_snapshots(&name)?;
    let before = (document.version(), snapshots.clone());
    let mut engine = Engine::with_snapshots(document, snapshots);

    let mut steps = Vec::new();
    let mut failure = None;
    let lines = LineIndex::new(&source);
    for (command, span) in script.document.commands.iter().zip(&script.spans) {
        let (line, column) = lines.line_column(&source, span.start);
        let text = &source[span.clone()];
        let step = match engine.execute(command) {
            Ok(outcome) => Step { line, column, text, outcome: Some(outcome), error: None, code: None },
            Err(error) => {
                let step = Step {
                    line,
                    column,
                    text,
                    outcome: None,
                    error: Some(error.to_string()),
                    code: Some(error.code()),
                };
                failure = Some(format!("line {line}, column {column}: {} failed: {error}", command.name()));
                steps.push(step);
                break;
            }
        };
        steps.push(step);
    }
    if failure.is_none() && engine.in_transaction() {
        failure = Some("the script ended with a transaction still open; it was rolled back".to_owned());
    }

    let saved = match &failure {
        None => {
            let changed =
                engine.document().version() != before.0 || engine.snapshots().cloned().collect::<Vec<_>>() != before.1;
            let (document, snapshots) = engine.into_parts();
            if changed {
                store.save_with_snapshots(&document, &snapshots)?;
                crate::search::after_save(cli, store.dir(), &document)?;
            }
            if changed {
                "saved"
            } else {
                "unchanged"
            }
        }
        Some(_) => match engine.last_commit() {
            Some((document, snapshots)) => {
                let snapshots: Vec<_> = snapshots.cloned().collect();
                store.save_with_snapshots(document, &snapshots)?;
                crate::search::after_save(cli, store.dir(), document)?;
                "kept the state of the last COMMIT"
            }
            None => "nothing saved",
        },
    };

    let count = steps.len();
    if cli.json {
        #[derive(Serialize)]
        struct Report<'a> {
            document: &'a str,
            ok: bool,
            result: &'a str,
            steps: Vec<Step<'a>>,
        }
        print_json(&Report { document: &name, ok: failure.is_none(), result: saved, steps })?;
    } else {
        let mut out = String::new();
        for step in &steps {
            if let Some(outcome) = &step.outcome {
                out.push_str(&format!("{}: {outcome}\n", step.line));
            }
        }
        print(&out)?;
    }
    match failure {
        None => {
            if !cli.json {
                eprintln!("ucp: {} command(s) run on {name}; {saved}", count);
            }
            Ok(())
        }
        Some(message) => Err(anyhow!("{message}; {saved}")),
    }
}

pub(crate) fn import(cli: &Cli, file: &Path, name: Option<&str>) -> anyhow::Result<()> {
    let source = read_source(file)?;
    let script = parse_or_report(&source)?;
    let default_name = name.map(str::to_owned).unwrap_or_else(|| {
        file.file_stem().map_or_else(|| "document".to_owned(), |s| s.to_string_lossy().into_owned())
    });
    let (engine, _) = ucm_engine::import_ucl(&script.document, &default_name)?;
    let (mut document, snapshots) = engine.into_parts();
    if let Some(name) = name {
        document.set_name(name);
    }
    let mut store = Store::open(cli.store_dir())?;
    store.save_with_snapshots(&document, &snapshots)?;
    crate::search::after_save(cli, store.dir(), &document)?;
    let message = format!(
        "imported {} ({} blocks, {} edges) into {}\n",
        document.name(),
        document.len(),
        document.edges().len(),
        store.dir().display()
    );
    if cli.json {
        print_json(
            &serde_json::json!({ "document": document.name(), "blocks": document.len(), "edges": document.edges().len() }),
        )
    } else {
        print(&message)
    }
}
