//! The tools: few, with short descriptions and tight schemas (the whole
//! list is a few hundred tokens), and the dispatch of a call to its
//! [`Connection`] method.

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::coding::{self, ToolOffer};
use crate::{CallError, Connection, JsonObject, ToolDef as Tool, ToolOutput};

/// A tool whose schema is the JSON object `input`.
pub(crate) fn tool(name: &'static str, description: &'static str, input: Value, read_only: bool) -> Tool {
    let Value::Object(input) = input else { unreachable!("tool schemas are JSON objects") };
    Tool::new(name, description, input, read_only)
}

/// The tools `offer` serves: the document tools, memory, rules and
/// skills, the coding tools, the LSP tools.
pub fn list(offer: &ToolOffer) -> Vec<Tool> {
    let mut all = documents();
    all.extend(crate::guidance_tools::list());
    all.extend(coding::list());
    all.extend(crate::lsp_tools::list());
    all.extend(crate::agents::list());
    all.retain(|t| offer.offers(&t.name));
    // Where `ucl` (which pages every cut result) is not offered, the next
    // page of a cut result is asked of the tool that gave it: they take
    // `page`, alone or with their usual arguments.
    if !offer.offers("ucl") {
        for tool in all.iter_mut().filter(|t| pages_its_results(&t.name)) {
            let mut schema = (*tool.input_schema).clone();
            if let Some(Value::Object(properties)) = schema.get_mut("properties") {
                let page =
                    json!({"type": "integer", "minimum": 1, "description": "Page of this tool's last cut result"});
                properties.insert("page".into(), page);
            }
            if let Some(required) = schema.remove("required") {
                schema.insert("anyOf".into(), json!([{"required": required}, {"required": ["page"]}]));
            }
            tool.input_schema = Arc::new(schema);
        }
    }
    all
}

/// Whether a tool's long results are cut into pages kept for `page`
/// (every tool but `ucl`, which takes `page` itself, the coding tools,
/// which page by offset, and the agent tools).
pub(crate) fn pages_its_results(name: &str) -> bool {
    name != "ucl" && !coding::CODING_TOOLS.contains(&name) && !crate::agents::AGENT_TOOLS.contains(&name)
}

/// The tools a client is shown: all of [`list`], or with discovery the
/// core ones and `find_tools`.
pub fn listed(offer: &ToolOffer) -> Vec<Tool> {
    if !offer.discover {
        return list(offer);
    }
    let mut core = list(offer);
    core.retain(|t| crate::discovery::CORE_TOOLS.contains(&t.name.as_ref()));
    core.push(crate::discovery::find_tools_tool());
    core
}

/// The document tools.
fn documents() -> Vec<Tool> {
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
                    "format": {"enum": ["markdown", "default", "short_ids"]},
                    "code": {"type": "boolean", "description": "Source code only, with its call graph"}
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
            "repo_map",
            "Ranked outline of an indexed repository: files by PageRank over calls and imports, \
             personalized to a question or files, with their key signatures.",
            json!({
                "type": "object",
                "properties": {
                    "question": {"type": "string"},
                    "files": {"type": "array", "items": {"type": "string"}, "description": "Paths you work on"},
                    "budget": {"type": "integer", "minimum": 1, "description": "Most tokens (default 1024)"}
                },
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
pub(crate) struct Arguments<'a>(pub(crate) &'a JsonObject);

impl<'a> Arguments<'a> {
    pub(crate) fn check(&self, known: &[&str]) -> Result<(), CallError> {
        match self.0.keys().find(|k| !known.contains(&k.as_str())) {
            Some(key) => Err(CallError::Arguments(format!("unknown argument {key:?} (known: {})", known.join(", ")))),
            None => Ok(()),
        }
    }

    pub(crate) fn string(&self, key: &str) -> Result<Option<&'a str>, CallError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(CallError::Arguments(format!("{key} must be a string, not {other}"))),
        }
    }

    pub(crate) fn required(&self, key: &str) -> Result<&'a str, CallError> {
        self.string(key)?.ok_or_else(|| CallError::Arguments(format!("{key} is required")))
    }

    pub(crate) fn count(&self, key: &str) -> Result<Option<u64>, CallError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => match value.as_u64() {
                Some(n) if n >= 1 => Ok(Some(n)),
                _ => Err(CallError::Arguments(format!("{key} must be a whole number of at least 1, not {value}"))),
            },
        }
    }

    /// A whole number, 0 allowed.
    pub(crate) fn number(&self, key: &str) -> Result<Option<usize>, CallError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => match value.as_u64() {
                Some(n) => Ok(Some(usize::try_from(n).unwrap_or(usize::MAX))),
                None => Err(CallError::Arguments(format!("{key} must be a whole number, not {value}"))),
            },
        }
    }

    /// A boolean, false when absent.
    pub(crate) fn flag(&self, key: &str) -> Result<bool, CallError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(CallError::Arguments(format!("{key} must be true or false, not {other}"))),
        }
    }

    /// An array, empty when absent.
    pub(crate) fn list(&self, key: &str) -> Result<&'a [Value], CallError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(CallError::Arguments(format!("{key} must be an array, not {other}"))),
        }
    }

    /// A string or an array of strings, empty when absent.
    pub(crate) fn strings(&self, key: &str) -> Result<Vec<String>, CallError> {
        if let Some(one) = self.0.get(key).and_then(Value::as_str) {
            return Ok(vec![one.to_owned()]);
        }
        self.list(key)?
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| CallError::Arguments(format!("{key} must be a string or an array of strings")))
    }
}

/// Runs the tool `name` for `connection` (a blocking call: engine work).
pub fn call(connection: &Connection, name: &str, arguments: &JsonObject) -> Result<ToolOutput, CallError> {
    let args = Arguments(arguments);
    let usize_of = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    if !connection.offer().offers(name) {
        return Err(CallError::UnknownTool(name.to_owned()));
    }
    // The next page of a cut result, from the tool that gave it (where
    // `ucl`, which pages every result, is not offered).
    if let (Some(page), 1) = (arguments.get("page").and_then(Value::as_u64), arguments.len()) {
        if pages_its_results(name) {
            return connection.page_of(name, usize_of(page));
        }
    }
    match name {
        "ucl" => {
            args.check(&["commands", "page", "session"])?;
            connection.ucl(args.string("commands")?, args.count("page")?.map(usize_of), args.string("session")?)
        }
        "context" => {
            args.check(&["question", "budget", "format", "code"])?;
            let budget = args.count("budget")?.map(usize_of);
            connection.context(args.required("question")?, budget, args.string("format")?, args.flag("code")?)
        }
        "search" => {
            args.check(&["query", "limit"])?;
            let limit = args.count("limit")?.map(|n| u32::try_from(n.min(100)).unwrap_or(100));
            connection.search(args.required("query")?, limit)
        }
        "repo_map" => {
            args.check(&["question", "files", "budget"])?;
            let budget = args.count("budget")?.map(usize_of);
            connection.map(args.string("question")?, args.strings("files")?, budget)
        }
        "open" => {
            args.check(&["document", "path", "name"])?;
            connection.open(args.string("document")?, args.string("path")?.map(Path::new), args.string("name")?)
        }
        "find_tools" => {
            args.check(&["intent", "limit"])?;
            let limit = args.count("limit")?.map(usize_of);
            connection.find_tools(args.required("intent")?, limit)
        }
        lsp if crate::lsp_tools::LSP_TOOLS.contains(&lsp) => connection.lsp(lsp, &args),
        agent if crate::agents::AGENT_TOOLS.contains(&agent) => {
            Ok(connection.agent_tools().call(connection, agent, arguments))
        }
        guidance
            if crate::guidance_tools::MEMORY_TOOLS.contains(&guidance)
                || crate::guidance_tools::FILE_GUIDANCE_TOOLS.contains(&guidance) =>
        {
            match crate::guidance_tools::call(connection, guidance, &args) {
                Some(Ok(text)) => Ok(connection.bounded_text(guidance, text)),
                Some(Err(e)) => Err(e),
                None => Err(CallError::UnknownTool(guidance.to_owned())),
            }
        }
        other => match connection.coding_tools()? {
            Some(tools) => match coding::call(tools, other, &args) {
                Some(Ok(mut text)) => {
                    // The rules of the folders a file operation touches come with its result, once.
                    let paths: Vec<String> =
                        args.string("path").ok().flatten().map(str::to_owned).into_iter().collect();
                    if coding::TOUCHING_TOOLS.contains(&other) {
                        text.extend(crate::guidance_tools::nested_rules(connection, &paths));
                    }
                    Ok(ToolOutput { text, is_error: false })
                }
                Some(Err(e)) => Err(e),
                None => Err(CallError::UnknownTool(other.to_owned())),
            },
            None => Err(CallError::UnknownTool(other.to_owned())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucm_core::{BpeTokenizer, Tokenizer as _};

    /// The number the README puts right before `words`.
    fn readme_figure(words: &str) -> usize {
        let readme = include_str!("../../../README.md");
        readme
            .split(words)
            .next()
            .and_then(|before| before.rsplit([' ', '(']).next())
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or_else(|| panic!("the README states what the tool list costs ({words})"))
    }

    #[test]
    fn the_tool_list_is_lean() {
        let root = tempfile::tempdir().unwrap();
        let documents = ToolOffer::documents(8000);
        let lsp = ucp_lsp::Lsp::new(root.path(), ucp_lsp::LspConfig::default()).unwrap();
        let everything = ToolOffer {
            root: Some(root.path().to_owned()),
            lsp: Some(crate::lsp_tools::SharedLsp(std::sync::Arc::new(lsp))),
            ..ToolOffer::documents(8000)
        };
        let cost = |offer: &ToolOffer| {
            let listed = serde_json::to_string(&json!({ "tools": list(offer) })).unwrap();
            BpeTokenizer::default().count(&listed)
        };
        // The README states both figures; they must stay true.
        let claimed = readme_figure(" tokens for the document and memory tools");
        assert_eq!(
            cost(&documents),
            claimed,
            "the document and memory tools cost {}; the README says {claimed}",
            cost(&documents)
        );
        let claimed = readme_figure(" tokens for the whole list");
        assert_eq!(cost(&everything), claimed, "the whole list costs {}; the README says {claimed}", cost(&everything));
        let store = tempfile::tempdir().unwrap();
        let library = std::sync::Arc::new(crate::Library::open(crate::LibraryConfig::new(store.path())).unwrap());
        let connection = crate::Connection::new(library.clone(), std::sync::Arc::new(everything.clone()));
        assert_eq!(list(&everything).len(), 24);
        for tool in list(&everything) {
            // Every listed tool is dispatched (the empty object fails on its arguments, if at all).
            let result = call(&connection, &tool.name, &JsonObject::new());
            assert!(!matches!(result, Err(CallError::UnknownTool(_))), "{}", tool.name);
        }
        assert!(matches!(call(&connection, "nope", &JsonObject::new()), Err(CallError::UnknownTool(_))));
        // Read-only: the writing tools are neither listed nor served; `only` narrows the list.
        let read_only = ToolOffer { read_only: true, ..everything.clone() };
        let names: Vec<_> = list(&read_only).into_iter().map(|t| t.name.to_string()).collect();
        assert_eq!(
            names,
            [
                "ucl",
                "context",
                "search",
                "repo_map",
                "open",
                "memory_search",
                "memory_recent",
                "plan",
                "rules_for",
                "skills_list",
                "skill_load",
                "grep",
                "glob",
                "read",
                "ast_search"
            ]
        );
        let connection = crate::Connection::new(library.clone(), std::sync::Arc::new(read_only));
        let args = json!({"path": "a.txt", "content": "x"}).as_object().unwrap().clone();
        assert!(matches!(call(&connection, "write", &args), Err(CallError::UnknownTool(_))));
        assert!(!root.path().join("a.txt").exists());
        let only = ToolOffer { only: Some(vec!["grep".into(), "context".into()]), ..everything.clone() };
        let names: Vec<_> = list(&only).into_iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names, ["context", "grep"]);

        // Discovery lists the core tools and find_tools; every tool is still served.
        let discovering = ToolOffer { discover: true, ..everything };
        let names: Vec<_> = listed(&discovering).into_iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names, ["ucl", "context", "search", "find_tools"]);
        let claimed = readme_figure(" tokens with --discover-tools");
        let listed_cost =
            BpeTokenizer::default().count(&serde_json::to_string(&json!({ "tools": listed(&discovering) })).unwrap());
        assert_eq!(listed_cost, claimed, "the discovering list costs {listed_cost}; the README says {claimed}");
        let connection = crate::Connection::new(library, std::sync::Arc::new(discovering));
        let args = json!({"intent": "store a finding for the next session"}).as_object().unwrap().clone();
        let found = call(&connection, "find_tools", &args).unwrap().text;
        assert!(found.contains("\"memory_store\""), "{found}");
        let args = json!({"pattern": "x"}).as_object().unwrap().clone();
        assert!(!matches!(call(&connection, "glob", &args), Err(CallError::UnknownTool(_))), "unlisted but served");
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
