//! `ucp parse` and `ucp import-ucl`, and reading UCL sources for every
//! command that takes one.

use std::io::Read as _;
use std::path::Path;

use anyhow::{anyhow, Context as _};
use ucpkit_workspace::vocabulary::{parse_script, print_document, LineIndex, Script};

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

pub(crate) fn import(cli: &Cli, file: &Path, name: Option<&str>) -> anyhow::Result<()> {
    let source = read_source(file)?;
    let script = parse_or_report(&source)?;
    let default_name = name.map(str::to_owned).unwrap_or_else(|| {
        file.file_stem().map_or_else(|| "document".to_owned(), |s| s.to_string_lossy().into_owned())
    });
    let (engine, _) = ucpkit_workspace::vocabulary::import_ucl(&script.document, &default_name)?;
    let (mut document, snapshots) = engine.into_parts();
    if let Some(name) = name {
        document.set_name(name);
    }
    let library = cli.library(true)?;
    let workspace = library.store_document(document, snapshots)?;
    let engine = workspace.traversal().engine();
    let document = engine.document();
    let message = format!(
        "imported {} ({} blocks, {} edges) into {}\n",
        document.name(),
        document.len(),
        document.edges().len(),
        library.location()
    );
    if cli.json {
        print_json(
            &serde_json::json!({ "document": document.name(), "blocks": document.len(), "edges": document.edges().len() }),
        )
    } else {
        print(&message)
    }
}
