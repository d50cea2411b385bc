//! The tools: few, with short descriptions and tight schemas (the whole
//! list is a few hundred tokens), and the dispatch of a call to its
//! [`Connection`] method.

use std::path::Path;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};

use crate::{Connection, McpError, ToolOutput};

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("tool schemas are JSON objects"),
    }
}

fn tool(name: &'static str, description: &'static str, input: Value, read_only: bool) -> Tool {
    let mut annotations = ToolAnnotations::new();
    annotations.read_only_hint = Some(read_only);
    annotations.open_world_hint = Some(false);
    Tool::new(name, description, schema(input)).with_annotations(annotations)
}

/// The tool list.
pub fn list() -> Vec<Tool> {
    vec![
        tool(
            "ucl",
            "Run UCL commands (one per line) in your session over the open document: GOTO, EXPAND, FOLLOW, \
             PATH, SEARCH, FIND, VIEW, CTX ADD/REMOVE/EXPAND/COMPRESS/PRUNE/RENDER/STATS/FOCUS, and edits \
             (EDIT, APPEND, MOVE, DELETE, LINK ...). See the ucl prompt. Stops at the first failing command.",
            json!({
                "type": "object",
                "properties": {
                    "commands": {"type": "string", "description": "UCL lines"},
                    "page": {"type": "integer", "minimum": 1, "description": "Page of the last cut result, instead of commands"},
                    "session": {"type": "string", "description": "Session name to run in; kept across connections"}
                },
                "additionalProperties": false
            }),
            false,
        ),
        tool(
            "context",
            "Answer-ready context for a question within a token budget: search, parallel exploration, \
             the best blocks under their heading paths.",
            json!({
                "type": "object",
                "properties": {
                    "question": {"type": "string"},
                    "budget": {"type": "integer", "minimum": 1, "description": "Most tokens (default 4000)"},
                    "format": {"enum": ["markdown", "default", "short_ids"]}
                },
                "required": ["question"],
                "additionalProperties": false
            }),
            true,
        ),
        tool(
            "search",
            "Search the open document (BM25, hybrid with a model). Hits become your last results: \
             `CTX ADD RESULTS` takes them.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            true,
        ),
        tool(
            "open",
            "No arguments: list documents. document: switch to a stored one. path: index a file or \
             folder the server may read, then switch. Switching starts a new session.",
            json!({
                "type": "object",
                "properties": {
                    "document": {"type": "string"},
                    "path": {"type": "string"},
                    "name": {"type": "string", "description": "Document name for path"}
                },
                "additionalProperties": false
            }),
            false,
        ),
    ]
}

/// Arguments of one call, read with clear errors.
struct Arguments<'a>(&'a JsonObject);

impl<'a> Arguments<'a> {
    fn check(&self, known: &[&str]) -> Result<(), McpError> {
        match self.0.keys().find(|k| !known.contains(&k.as_str())) {
            Some(key) => Err(McpError::Arguments(format!("unknown argument {key:?} (known: {})", known.join(", ")))),
            None => Ok(()),
        }
    }

    fn string(&self, key: &str) -> Result<Option<&'a str>, McpError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(McpError::Arguments(format!("{key} must be a string, not {other}"))),
        }
    }

    fn required(&self, key: &str) -> Result<&'a str, McpError> {
        self.string(key)?.ok_or_else(|| McpError::Arguments(format!("{key} is required")))
    }

    fn count(&self, key: &str) -> Result<Option<u64>, McpError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => match value.as_u64() {
                Some(n) if n >= 1 => Ok(Some(n)),
                _ => Err(McpError::Arguments(format!("{key} must be a whole number of at least 1, not {value}"))),
            },
        }
    }
}

/// Runs the tool `name` for `connection` (a blocking call: engine work).
pub fn call(connection: &Connection, name: &str, arguments: &JsonObject) -> Result<ToolOutput, McpError> {
    let args = Arguments(arguments);
    let usize_of = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    match name {
        "ucl" => {
            args.check(&["commands", "page", "session"])?;
            connection.ucl(args.string("commands")?, args.count("page")?.map(usize_of), args.string("session")?)
        }
        "context" => {
            args.check(&["question", "budget", "format"])?;
            connection.context(args.required("question")?, args.count("budget")?.map(usize_of), args.string("format")?)
        }
        "search" => {
            args.check(&["query", "limit"])?;
            let limit = args.count("limit")?.map(|n| u32::try_from(n.min(100)).unwrap_or(100));
            connection.search(args.required("query")?, limit)
        }
        "open" => {
            args.check(&["document", "path", "name"])?;
            connection.open(args.string("document")?, args.string("path")?.map(Path::new), args.string("name")?)
        }
        other => Err(McpError::UnknownTool(other.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucm_core::{BpeTokenizer, Tokenizer as _};

    #[test]
    fn the_tool_list_is_lean() {
        let listed = serde_json::to_string(&json!({ "tools": list() })).unwrap();
        let tokens = BpeTokenizer::default().count(&listed);
        // The README states the figure; it must stay true.
        let readme = include_str!("../../../README.md");
        let claimed = readme
            .split(" tokens for the whole list")
            .next()
            .and_then(|before| before.rsplit(' ').next())
            .and_then(|n| n.parse::<usize>().ok())
            .expect("the README states what the tool list costs");
        assert_eq!(tokens, claimed, "the tool list costs {tokens} tokens; the README says {claimed}");
        let store = tempfile::tempdir().unwrap();
        let library = crate::Library::open(crate::LibraryConfig::new(store.path())).unwrap();
        let connection = crate::Connection::new(std::sync::Arc::new(library), 8000);
        for tool in list() {
            // Every listed tool is dispatched (the empty object fails on its arguments, if at all).
            let result = call(&connection, &tool.name, &JsonObject::new());
            assert!(!matches!(result, Err(McpError::UnknownTool(_))), "{}", tool.name);
        }
        assert!(matches!(call(&connection, "nope", &JsonObject::new()), Err(McpError::UnknownTool(_))));
    }

    #[test]
    fn arguments_are_checked() {
        let object = |v: Value| v.as_object().unwrap().clone();
        let args = object(json!({"query": 3, "limit": 0, "extra": true}));
        let args = Arguments(&args);
        assert!(args.check(&["query", "limit"]).unwrap_err().to_string().contains("\"extra\""));
        assert!(args.string("query").unwrap_err().to_string().contains("must be a string"));
        assert!(args.count("limit").unwrap_err().to_string().contains("at least 1"));
        assert!(args.required("missing").unwrap_err().to_string().contains("required"));
    }
}
