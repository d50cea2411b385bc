//! `ucp lsp definition|references|hover|symbols`: one question to the
//! language server of a file's language, over the workspace root
//! (`--root`), with 1-based lines and columns.

use std::path::PathBuf;

use ucpkit_registry::parts::lsp::{format_places, format_symbols, Lsp, LspConfig};

use crate::{print, print_json, Cli};

/// Arguments of `ucp lsp`.
#[derive(clap::Args)]
pub(crate) struct LspArgs {
    #[command(subcommand)]
    request: LspRequest,
    /// A TOML file naming the language servers (default: built-in
    /// pylsp, rust-analyzer, typescript-language-server, gopls).
    #[arg(long, global = true, env = "UCP_LSP_CONFIG", value_name = "FILE")]
    lsp_config: Option<PathBuf>,
}

/// A file and a 1-based position in it.
#[derive(clap::Args)]
pub(crate) struct At {
    /// The file (relative to the root).
    file: String,
    /// Line (1-based).
    line: u32,
    /// Column (1-based, in characters).
    column: u32,
}

#[derive(clap::Subcommand)]
pub(crate) enum LspRequest {
    /// Where the symbol at FILE LINE COLUMN is defined.
    Definition(At),
    /// Every use of the symbol at FILE LINE COLUMN.
    References(At),
    /// Signature and docs of the symbol at FILE LINE COLUMN.
    Hover(At),
    /// A file's symbol outline, or with --query symbols across the workspace.
    Symbols {
        /// The file (for its outline, or to pick the server of --query).
        file: Option<String>,
        /// Symbols matching this across the workspace.
        #[arg(long)]
        query: Option<String>,
    },
}

/// The LSP configuration `args` name, or the defaults.
pub(crate) fn config(path: Option<&PathBuf>) -> anyhow::Result<LspConfig> {
    Ok(match path {
        Some(path) => LspConfig::load(path)?,
        None => LspConfig::default(),
    })
}

pub(crate) fn lsp(cli: &Cli, args: &LspArgs) -> anyhow::Result<()> {
    let root = cli.root.clone().unwrap_or_else(|| PathBuf::from("."));
    let lsp = Lsp::new(&root, config(args.lsp_config.as_ref())?)?;
    match &args.request {
        LspRequest::Definition(at) | LspRequest::References(at) => {
            let places = match &args.request {
                LspRequest::Definition(_) => lsp.definition(&at.file, at.line, at.column)?,
                _ => lsp.references(&at.file, at.line, at.column)?,
            };
            if cli.json {
                return print_json(&places);
            }
            print(&if places.is_empty() { "no result\n".to_owned() } else { format_places(&places) })
        }
        LspRequest::Hover(at) => {
            let hover = lsp.hover(&at.file, at.line, at.column)?;
            if cli.json {
                return print_json(&serde_json::json!({ "hover": hover }));
            }
            print(&format!("{}\n", hover.as_deref().unwrap_or("no information")))
        }
        LspRequest::Symbols { file, query } => {
            let symbols = match (file, query) {
                (file, Some(query)) => lsp.workspace_symbols(query, file.as_deref())?,
                (Some(file), None) => lsp.document_symbols(file)?,
                (None, None) => anyhow::bail!("give a FILE, a --query, or both"),
            };
            if cli.json {
                return print_json(&symbols);
            }
            print(&if symbols.is_empty() { "no symbols\n".to_owned() } else { format_symbols(&symbols) })
        }
    }
}
