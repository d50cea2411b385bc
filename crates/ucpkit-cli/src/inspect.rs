//! Read-only commands: `docs`, `stats`, `tree`, `view`, `export`.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use serde_json::{json, Value};
use ucpkit_workspace::vocabulary::{printable, Block, BlockId, Document};
use ucpkit_workspace::{find_block, Library, LibraryConfig};

use crate::{print, print_json, Cli, ExportFormat, ViewMode};

/// Characters shown by previews.
const PREVIEW_CHARS: usize = 100;

fn load(cli: &Cli) -> anyhow::Result<Document> {
    Ok(cli.library(false)?.read_document(None)?)
}

/// Most characters of a name, title or field shown on one line (escaped
/// with [`printable`], since file names may hold control characters).
pub(crate) const SHOWN_CHARS: usize = 200;

pub(crate) fn docs(cli: &Cli) -> anyhow::Result<()> {
    let docs = cli.library(false)?.documents()?;
    if cli.json {
        return print_json(&docs);
    }
    if docs.is_empty() {
        return print("no documents; run `ucp index <PATH>`\n");
    }
    let mut out = format!("{:<24} {:>9} {:>11} {:>7}  title\n", "name", "blocks", "tokens", "edges");
    for d in docs {
        let _ = writeln!(
            out,
            "{:<24} {:>9} {:>11} {:>7}  {}",
            printable(&d.name, SHOWN_CHARS),
            d.blocks,
            d.tokens,
            d.edges,
            printable(d.title.as_deref().unwrap_or_default(), SHOWN_CHARS)
        );
    }
    print(&out)
}

pub(crate) fn stats(cli: &Cli) -> anyhow::Result<()> {
    let stats = ucpkit_workspace::stats(&load(cli)?);
    if cli.json {
        return print_json(&stats);
    }
    let mut out = String::new();
    let issues = stats.validation_issues;
    let _ = writeln!(out, "document   {}", printable(&stats.name, SHOWN_CHARS));
    let _ = writeln!(out, "title      {}", printable(stats.title.as_deref().unwrap_or("-"), SHOWN_CHARS));
    let _ = writeln!(out, "blocks     {}", stats.blocks);
    let _ = writeln!(out, "tokens     {} ({})", stats.tokens, stats.tokenizer.as_deref().unwrap_or("not counted"));
    let _ = writeln!(out, "edges      {}", stats.edges);
    let _ = writeln!(out, "max depth  {}", stats.max_depth);
    let _ =
        writeln!(out, "valid      {}", if issues == 0 { "yes".to_owned() } else { format!("no ({issues} issues)") });
    let _ = writeln!(out, "by role:");
    for (role, n) in &stats.blocks_by_role {
        let _ = writeln!(out, "  {role:<14} {n:>8} blocks {:>10} tokens", stats.tokens_by_role[role]);
    }
    if !stats.edges_by_type.is_empty() {
        let _ = writeln!(out, "edges by type:");
        for (edge_type, n) in &stats.edges_by_type {
            let _ = writeln!(out, "  {edge_type:<14} {n:>8}");
        }
    }
    print(&out)
}

/// A one-line preview of a block, safe for a terminal.
fn preview(block: &Block, chars: usize) -> String {
    printable(&block.preview(chars), chars + 1).into_owned()
}

fn role_name(block: &Block) -> String {
    match block.role() {
        Some(role) => role.to_string(),
        None if block.id.is_root() => "root".to_owned(),
        None => "block".to_owned(),
    }
}

/// The most levels `ucp tree` shows: the printers recurse once per level.
pub(crate) const MAX_TREE_DEPTH: usize = 256;

pub(crate) fn tree(cli: &Cli, start: Option<&str>, depth: usize) -> anyhow::Result<()> {
    let doc = load(cli)?;
    let start = match start {
        Some(reference) => find_block(&doc, reference)?,
        None => doc.root(),
    };
    if cli.json {
        return print_json(&tree_json(&doc, start, depth));
    }
    let mut out = String::new();
    tree_text(&doc, start, depth, "", &mut out);
    print(&out)
}

fn tree_line(doc: &Document, id: BlockId) -> String {
    let block = doc.get(id).expect("listed blocks exist");
    let text = if id.is_root() { printable(doc.name(), SHOWN_CHARS).into_owned() } else { preview(block, 60) };
    let tokens = match (&block.content, block.metadata.tokens) {
        (ucpkit_workspace::vocabulary::Content::Composite, _) | (_, None) => String::new(),
        (_, Some(t)) => format!(" ({t} tok)"),
    };
    format!("{id} {} {text}{tokens}", role_name(block))
}

fn tree_text(doc: &Document, id: BlockId, depth: usize, indent: &str, out: &mut String) {
    if indent.is_empty() {
        let _ = writeln!(out, "{}", tree_line(doc, id));
    }
    let children = doc.children(id);
    let folded = doc.get(id).is_some_and(|b| b.metadata.custom.contains_key(ucpkit_workspace::vocabulary::FOLDED_KEY));
    if (depth == 0 || folded) && !children.is_empty() {
        let below = doc.descendants(id).count();
        let why = if folded { "folded (FOLD)" } else { "--depth to show" };
        let blocks = if below == 1 { "block" } else { "blocks" };
        let _ = writeln!(out, "{indent}└─ … {below} {blocks} below ({why})");
        return;
    }
    for (i, child) in children.iter().enumerate() {
        let last = i + 1 == children.len();
        let _ = writeln!(out, "{indent}{}{}", if last { "└─ " } else { "├─ " }, tree_line(doc, *child));
        let next = format!("{indent}{}", if last { "   " } else { "│  " });
        tree_text(doc, *child, depth - 1, &next, out);
    }
}

fn tree_json(doc: &Document, id: BlockId, depth: usize) -> Value {
    let block = doc.get(id).expect("listed blocks exist");
    let mut node = json!({
        "id": id,
        "role": role_name(block),
        "label": block.metadata.label,
        "tokens": block.metadata.tokens,
        "preview": preview(block, PREVIEW_CHARS),
    });
    let folded = block.metadata.custom.contains_key(ucpkit_workspace::vocabulary::FOLDED_KEY);
    if folded {
        node["folded"] = true.into();
    }
    if depth > 0 && !folded {
        node["children"] = doc.children(id).iter().map(|c| tree_json(doc, *c, depth - 1)).collect();
    } else {
        node["child_count"] = doc.children(id).len().into();
    }
    node
}

/// Most tokens of a section view.
const SECTION_TOKENS: usize = 8000;

pub(crate) fn view(cli: &Cli, reference: &str, mode: ViewMode) -> anyhow::Result<()> {
    let library = cli.library(false)?;
    let section = match mode {
        ViewMode::Section => Some(library.view_section(None, reference, SECTION_TOKENS)?),
        _ => None,
    };
    let view = match &section {
        Some(section) => section.view.clone(),
        None => library.view(None, reference)?,
    };
    let block = &view.block;
    let id = block.id;
    let mut value = json!({ "id": id, "role": role_name(block) });
    if mode != ViewMode::Ids {
        let source = block
            .metadata
            .source
            .as_ref()
            .map(|s| json!({"file": s.file, "start_line": s.start_line, "end_line": s.end_line}));
        value["label"] = json!(block.metadata.label);
        value["tags"] = json!(block.metadata.tags);
        value["tokens"] = json!(block.metadata.tokens);
        value["parent"] = json!(view.parent);
        value["children"] = json!(view.children);
        value["edges_out"] = json!(view.edges_out);
        value["edges_in"] = json!(view.edges_in);
        value["source"] = json!(source);
    }
    match mode {
        ViewMode::Preview => value["preview"] = json!(preview(block, PREVIEW_CHARS)),
        ViewMode::Full => value["content"] = json!(block.to_markdown()),
        ViewMode::Section => {
            if let Some(section) = &section {
                value["section"] = json!(section.text);
                value["section_blocks"] = json!(section.blocks);
                value["section_complete"] = json!(section.complete);
            }
        }
        ViewMode::Ids | ViewMode::Metadata => {}
    }
    if cli.json {
        return print_json(&value);
    }
    let mut out = format!("{id} {}\n", role_name(block));
    if mode != ViewMode::Ids {
        let m = &block.metadata;
        let fields = [
            ("label", m.label.clone()),
            ("tags", (!m.tags.is_empty()).then(|| m.tags.join(", "))),
            ("tokens", m.tokens.map(|t| t.to_string())),
            ("parent", view.parent.map(|p| p.to_string())),
            ("children", Some(view.children.to_string())),
            ("edges", Some(format!("{} out, {} in", view.edges_out, view.edges_in))),
            ("source", m.source.as_ref().map(|s| format!("{}:{}-{}", s.file, s.start_line, s.end_line))),
        ];
        for (name, value) in fields {
            if let Some(value) = value {
                let _ = writeln!(out, "{name:<9} {}", printable(&value, SHOWN_CHARS));
            }
        }
    }
    match mode {
        ViewMode::Preview => {
            let _ = writeln!(out, "\n{}", preview(block, PREVIEW_CHARS));
        }
        ViewMode::Full => {
            let _ = writeln!(out, "\n{}", block.to_markdown());
        }
        ViewMode::Section => {
            if let Some(section) = &section {
                let _ = writeln!(out, "\n{}", section.text);
                if !section.complete {
                    let _ =
                        writeln!(out, "\n[{} blocks shown; the rest is over {SECTION_TOKENS} tokens]", section.blocks);
                }
            }
        }
        ViewMode::Ids | ViewMode::Metadata => {}
    }
    print(&out)
}

pub(crate) fn remove(cli: &Cli, name: &str) -> anyhow::Result<()> {
    if !cli.library(false)?.remove(name)? {
        anyhow::bail!("no document named {name:?} (`ucp docs` lists them)");
    }
    eprintln!("ucp: deleted {name}");
    Ok(())
}

pub(crate) fn rename(cli: &Cli, old: &str, new: &str) -> anyhow::Result<()> {
    cli.library(false)?.rename(old, new)?;
    eprintln!("ucp: renamed {old} to {new}");
    Ok(())
}

/// `ucp store migrate`: the store at `from` (or --store) copied into `to`.
pub(crate) fn migrate(cli: &Cli, from: Option<&Path>, to: &Path, replace: bool) -> anyhow::Result<()> {
    let source_config = LibraryConfig::new(from.map_or_else(|| cli.store_location(), Path::to_path_buf));
    let target_config = LibraryConfig::new(to);
    let folder = |dir: &Path| dir.canonicalize().unwrap_or_else(|_| std::path::absolute(dir).unwrap_or(dir.to_owned()));
    if folder(&source_config.store_dir) == folder(&target_config.store_dir)
        && source_config.store_url == target_config.store_url
    {
        anyhow::bail!("--from and --to name the same store");
    }
    let source = Library::open_existing(LibraryConfig { warm_tokenizer: false, ..source_config })?;
    let target = Library::open(LibraryConfig { warm_tokenizer: false, ..target_config })?;
    let copied = source.copy_into(&target, replace)?;
    if cli.json {
        return print_json(&copied);
    }
    eprintln!(
        "ucp: copied {} documents ({} blocks), {} snapshots, {} sessions, {} vectors and {} transcripts from {} to {}",
        copied.documents,
        copied.blocks,
        copied.snapshots,
        copied.sessions,
        copied.vectors,
        copied.transcripts,
        source.location(),
        target.location()
    );
    Ok(())
}

pub(crate) fn export(cli: &Cli, format: ExportFormat, out: Option<&Path>) -> anyhow::Result<()> {
    let doc = load(cli)?;
    let text = match format {
        ExportFormat::Markdown => ucpkit_workspace::vocabulary::to_markdown(&doc),
        ExportFormat::Json => doc.to_json(true) + "\n",
        ExportFormat::Ucl => ucpkit_workspace::vocabulary::export_ucl(&doc),
    };
    match out {
        Some(path) => std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display())),
        None => print(&text),
    }
}
