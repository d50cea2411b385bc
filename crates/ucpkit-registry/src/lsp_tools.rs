//! The LSP tools (`lsp_definition`, `lsp_references`, `lsp_hover`,
//! `lsp_symbols`) over the language servers of `ucpkit-lsp`: their argument
//! types, and a call turned into a request. Positions are 1-based.

use std::num::NonZeroU32;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use ucpkit_lsp::{format_places, format_symbols, Lsp};

use crate::{CallError, Connection, Effects, Needs, Tool};

/// The language servers a server's clients share (started on first use,
/// kept across calls and clients).
#[derive(Clone)]
pub struct SharedLsp(pub Arc<Lsp>);

impl std::fmt::Debug for SharedLsp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedLsp")
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Position {
    path: String,
    line: NonZeroU32,
    column: NonZeroU32,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SymbolsArgs {
    path: Option<String>,
    query: Option<String>,
}

/// The LSP tools.
pub(crate) fn tools() -> Vec<Tool> {
    vec![
        lsp_tool(Tool::typed(
            "lsp_definition",
            "Where the symbol at path:line:column is defined (language server).",
            |connection, at: Position| {
                let places = lsp(connection)?.definition(&at.path, at.line.get(), at.column.get())?;
                Ok(connection.bounded_text("lsp_definition", places_text(&places)))
            },
        )),
        lsp_tool(Tool::typed(
            "lsp_references",
            "Every use of the symbol at path:line:column (language server).",
            |connection, at: Position| {
                let places = lsp(connection)?.references(&at.path, at.line.get(), at.column.get())?;
                Ok(connection.bounded_text("lsp_references", places_text(&places)))
            },
        )),
        lsp_tool(Tool::typed(
            "lsp_hover",
            "Signature and docs of the symbol at path:line:column (language server).",
            |connection, at: Position| {
                let hover = lsp(connection)?.hover(&at.path, at.line.get(), at.column.get())?;
                Ok(connection.bounded_text("lsp_hover", hover.unwrap_or_else(|| "no information".to_owned())))
            },
        )),
        lsp_tool(Tool::typed(
            "lsp_symbols",
            "A file's symbol outline (path), or symbols matching query across the workspace.",
            |connection, args: SymbolsArgs| {
                let lsp = lsp(connection)?;
                let symbols = match (args.path.as_deref(), args.query.as_deref()) {
                    (path, Some(query)) => lsp.workspace_symbols(query, path),
                    (Some(path), None) => lsp.document_symbols(path),
                    (None, None) => return Err(CallError::Arguments("give a path, a query, or both".into())),
                }?;
                Ok(connection.bounded_text(
                    "lsp_symbols",
                    if symbols.is_empty() { "no symbols".into() } else { format_symbols(&symbols) },
                ))
            },
        )),
    ]
}

/// An LSP tool: it needs language servers, which run the project's code.
fn lsp_tool(tool: Tool) -> Tool {
    tool.needs(Needs::Lsp).effects(Effects { executes: true, ..Effects::READS })
}

/// Where an answer's places are, or that there is none.
fn places_text(places: &[ucpkit_lsp::Place]) -> String {
    if places.is_empty() {
        "no result".to_owned()
    } else {
        format_places(places)
    }
}

/// The server's language servers.
fn lsp(connection: &Connection) -> Result<&Lsp, CallError> {
    match &connection.offer().lsp {
        Some(shared) => Ok(&shared.0),
        None => Err(CallError::Arguments("this server has no language servers".into())),
    }
}
