//! The LSP tools (`lsp_definition`, `lsp_references`, `lsp_hover`,
//! `lsp_symbols`) over the language servers of `ucp-lsp`: their schemas,
//! and a call's arguments turned into a request. Positions are 1-based.

use std::sync::Arc;

use crate::ToolDef as Tool;
use serde_json::json;
use ucp_lsp::{format_places, format_symbols, Lsp};

use crate::tools::{tool, Arguments};
use crate::CallError;

/// The LSP tools' names.
pub const LSP_TOOLS: [&str; 4] = ["lsp_definition", "lsp_references", "lsp_hover", "lsp_symbols"];

/// The language servers a server's clients share (started on first use,
/// kept across calls and clients).
#[derive(Clone)]
pub struct SharedLsp(pub Arc<Lsp>);

impl std::fmt::Debug for SharedLsp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedLsp")
    }
}

/// The LSP tools' definitions.
pub fn list() -> Vec<Tool> {
    let position = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "line": {"type": "integer", "minimum": 1},
            "column": {"type": "integer", "minimum": 1}
        },
        "required": ["path", "line", "column"],
        "additionalProperties": false
    });
    vec![
        tool(
            "lsp_definition",
            "Where the symbol at path:line:column is defined (language server).",
            position.clone(),
            true,
        ),
        tool(
            "lsp_references",
            "Every use of the symbol at path:line:column (language server).",
            position.clone(),
            true,
        ),
        tool("lsp_hover", "Signature and docs of the symbol at path:line:column (language server).", position, true),
        tool(
            "lsp_symbols",
            "A file's symbol outline (path), or symbols matching query across the workspace.",
            json!({
                "type": "object",
                "properties": {"path": {"type": "string"}, "query": {"type": "string"}},
                "additionalProperties": false
            }),
            true,
        ),
    ]
}

/// Runs LSP tool `name`; `None` when it is not one.
pub(crate) fn call(lsp: &Lsp, name: &str, args: &Arguments<'_>) -> Option<Result<String, CallError>> {
    let at = |args: &Arguments<'_>| -> Result<(String, u32, u32), CallError> {
        args.check(&["path", "line", "column"])?;
        let number = |key: &str| -> Result<u32, CallError> {
            let n = args.count(key)?.ok_or_else(|| CallError::Arguments(format!("{key} is required")))?;
            u32::try_from(n).map_err(|_| CallError::Arguments(format!("{key} is too large")))
        };
        Ok((args.required("path")?.to_owned(), number("line")?, number("column")?))
    };
    let result = match name {
        "lsp_definition" | "lsp_references" => at(args).and_then(|(path, line, column)| {
            let places = if name == "lsp_definition" {
                lsp.definition(&path, line, column)
            } else {
                lsp.references(&path, line, column)
            };
            let places = places?;
            Ok(if places.is_empty() { "no result".to_owned() } else { format_places(&places) })
        }),
        "lsp_hover" => at(args).and_then(|(path, line, column)| {
            Ok(lsp.hover(&path, line, column)?.unwrap_or_else(|| "no information".to_owned()))
        }),
        "lsp_symbols" => (|| {
            args.check(&["path", "query"])?;
            let symbols = match (args.string("path")?, args.string("query")?) {
                (path, Some(query)) => lsp.workspace_symbols(query, path),
                (Some(path), None) => lsp.document_symbols(path),
                (None, None) => return Err(CallError::Arguments("give a path, a query, or both".into())),
            };
            let symbols = symbols?;
            Ok(if symbols.is_empty() { "no symbols".to_owned() } else { format_symbols(&symbols) })
        })(),
        _ => return None,
    };
    Some(result)
}
