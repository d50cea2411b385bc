//! The registry: every tool record compiled in, the list an offer
//! shows, and [`call`], the one place a call is checked (offered,
//! arguments of the right shape, past the guard) and run.

use std::sync::{Arc, OnceLock};

use serde_json::{json, Value};

use crate::{CallError, Connection, JsonObject, Needs, Pages, Tool, ToolDef, ToolOffer, ToolOutput};

/// Every tool, in the order lists show them.
fn all() -> &'static [Tool] {
    static ALL: OnceLock<Vec<Tool>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all = crate::documents::tools();
        all.extend(crate::guidance_tools::tools());
        all.extend(crate::coding::tools());
        all.extend(crate::lsp_tools::tools());
        all.extend(crate::agents::tools());
        all.push(crate::discovery::find_tools());
        all
    })
}

/// The tool named `name` among UCP's own and the offer's others, offered
/// or not (UCP's own come first: another tool cannot take a name of
/// theirs).
pub fn find<'a>(offer: &'a ToolOffer, name: &str) -> Option<&'a Tool> {
    known(offer).find(|tool| tool.name() == name)
}

/// UCP's own tools, then the offer's others.
fn known(offer: &ToolOffer) -> impl Iterator<Item = &Tool> {
    all().iter().chain(offer.others.iter().filter(|other| !all().iter().any(|own| own.name() == other.name())))
}

/// The tools `offer` serves (`find_tools` is listed by [`listed`]).
pub fn list(offer: &ToolOffer) -> Vec<ToolDef> {
    let mut listed: Vec<ToolDef> = known(offer)
        .filter(|tool| tool.needs != Needs::Discovery && offer.offers_tool(tool))
        .map(|tool| tool.def.clone())
        .collect();
    // Where `ucl` (which pages every cut result) is not offered, the next
    // page of a cut result is asked of the tool that gave it: they take
    // `page`, alone or with their usual arguments.
    if !offer.offers("ucl") {
        for def in listed.iter_mut().filter(|def| find(offer, &def.name).is_some_and(pages_kept_by_page)) {
            let mut schema = (*def.input_schema).clone();
            if let Some(Value::Object(properties)) = schema.get_mut("properties") {
                let page =
                    json!({"type": "integer", "minimum": 1, "description": "Page of this tool's last cut result"});
                properties.insert("page".into(), page);
            }
            if let Some(required) = schema.remove("required") {
                schema.insert("anyOf".into(), json!([{"required": required}, {"required": ["page"]}]));
            }
            let mut schema = Value::Object(schema);
            crate::tool::sorted(&mut schema);
            let Value::Object(schema) = schema else { unreachable!("an object stays an object") };
            def.input_schema = Arc::new(schema);
        }
    }
    listed
}

/// The tools a client is shown: all of [`list`], or with discovery the
/// core ones and `find_tools`.
pub fn listed(offer: &ToolOffer) -> Vec<ToolDef> {
    if !offer.discover {
        return list(offer);
    }
    let mut core = list(offer);
    core.retain(|t| crate::discovery::CORE_TOOLS.contains(&t.name.as_ref()));
    core.extend(find(offer, "find_tools").map(|tool| tool.def.clone()));
    core
}

/// Runs the tool `name` for `connection` (a blocking call: engine work),
/// and records the call (its tool, outcome and time) in the log.
pub fn call(connection: &Connection, name: &str, arguments: &JsonObject) -> Result<ToolOutput, CallError> {
    let started = std::time::Instant::now();
    let result = checked_call(connection, name, arguments);
    let ms = started.elapsed().as_millis();
    match &result {
        Ok(output) => tracing::info!(tool = name, ms, failed = output.is_error, "tool call"),
        Err(error) => tracing::info!(tool = name, ms, code = error.code(), "tool call refused or failed"),
    }
    result
}

/// Whether a call of `tool` with `page` alone asks for a page of its
/// last cut result: the connection keeps its pages, and `page` is not an
/// argument of its own (another server's paginated tool keeps its own).
fn pages_kept_by_page(tool: &Tool) -> bool {
    tool.pages == Pages::Kept
        && !tool.def.input_schema.get("properties").and_then(Value::as_object).is_some_and(|p| p.contains_key("page"))
}

/// [`call`]'s check and run.
fn checked_call(connection: &Connection, name: &str, arguments: &JsonObject) -> Result<ToolOutput, CallError> {
    let tool = find(connection.offer(), name)
        .filter(|tool| connection.offer().offers_tool(tool))
        .ok_or_else(|| CallError::UnknownTool(name.to_owned()))?;
    // The next page of a cut result, from the tool that gave it (where
    // `ucl`, which pages every result, is not offered).
    if let (Some(page), 1) = (arguments.get("page").and_then(Value::as_u64), arguments.len()) {
        if pages_kept_by_page(tool) {
            return connection.page_of(name, usize::try_from(page).unwrap_or(usize::MAX));
        }
    }
    let approved = crate::guarded::gate(connection, tool, arguments)?;
    let result = tool.call(connection, arguments);
    if let (Some(action), Some(supervisor)) = (approved, connection.supervisor()) {
        match &result {
            Ok(output) => supervisor.done(&action, output.is_error, &output.text),
            Err(error) => supervisor.done(&action, true, &error.to_string()),
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_core::{BpeTokenizer, Tokenizer as _};

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
        let lsp = ucpkit_lsp::Lsp::new(root.path(), ucpkit_lsp::LspConfig::default()).unwrap();
        let everything = ToolOffer {
            root: Some(root.path().to_owned()),
            lsp: Some(crate::lsp_tools::SharedLsp(std::sync::Arc::new(lsp))),
            ..ToolOffer::documents(8000)
        };
        // Counted with the keys in order, as a build's JSON maps may not
        // keep them.
        let cost_of = |tools: Vec<ToolDef>| {
            let mut listed = json!({ "tools": tools });
            crate::tool::sorted(&mut listed);
            BpeTokenizer::default().count(&listed.to_string())
        };
        let cost = |offer: &ToolOffer| cost_of(list(offer));
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
        let listed_cost = cost_of(listed(&discovering));
        assert_eq!(listed_cost, claimed, "the discovering list costs {listed_cost}; the README says {claimed}");
        let connection = crate::Connection::new(library, std::sync::Arc::new(discovering));
        let args = json!({"intent": "store a finding for the next session"}).as_object().unwrap().clone();
        let found = call(&connection, "find_tools", &args).unwrap().text;
        assert!(found.contains("\"memory_store\""), "{found}");
        let args = json!({"pattern": "x"}).as_object().unwrap().clone();
        assert!(!matches!(call(&connection, "glob", &args), Err(CallError::UnknownTool(_))), "unlisted but served");
    }

    #[test]
    fn the_schemas_are_derived_unchanged() {
        // The lists as they were when each schema was written by hand
        // (89cae6e), but for ask_user's readOnlyHint, true since it changes
        // nothing; a change here changes what every client is shown.
        let golden: Value = serde_json::from_str(include_str!("../tests/data/tool-list.json")).unwrap();
        let root = tempfile::tempdir().unwrap();
        let lsp = ucpkit_lsp::Lsp::new(root.path(), ucpkit_lsp::LspConfig::default()).unwrap();
        let everything = ToolOffer {
            root: Some(root.path().to_owned()),
            lsp: Some(crate::lsp_tools::SharedLsp(Arc::new(lsp))),
            agents: Some(Default::default()),
            ..ToolOffer::documents(8000)
        };
        let all = list(&everything);
        let names: Vec<String> = all.iter().map(|t| t.name.clone()).filter(|n| n != "ucl").collect();
        let without_ucl = list(&ToolOffer { only: Some(names), ..everything.clone() });
        let discovering = listed(&ToolOffer { discover: true, ..everything });
        for (key, now) in [("all", all), ("without_ucl", without_ucl), ("discovering", discovering)] {
            let then = golden[key].as_array().unwrap();
            assert_eq!(now.len(), then.len(), "{key}");
            for (now, then) in now.iter().zip(then) {
                assert_eq!(&serde_json::to_value(now).unwrap(), then, "{key}: {}", now.name);
            }
        }
    }

    #[test]
    fn arguments_are_checked() {
        let store = tempfile::tempdir().unwrap();
        let library = std::sync::Arc::new(crate::Library::open(crate::LibraryConfig::new(store.path())).unwrap());
        let connection = crate::Connection::new(library, Arc::new(ToolOffer::documents(8000)));
        let error = |args: Value| {
            let args = args.as_object().unwrap().clone();
            call(&connection, "search", &args).unwrap_err().to_string()
        };
        assert!(error(json!({"query": "x", "extra": true})).contains("`extra`"));
        assert!(error(json!({"query": 3})).starts_with("query: invalid type: integer `3`, expected a string"));
        assert!(error(json!({"query": "x", "limit": 0})).starts_with("limit: invalid value: integer `0`"));
        assert!(error(json!({})).contains("missing field `query`"));
    }

    #[test]
    fn a_tool_not_compiled_in_is_one_record_under_the_same_rules() {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
        let Value::Object(schema) = schema else { unreachable!() };
        let handler: crate::tool::Handler = Arc::new(|_, arguments: &JsonObject| {
            let text = arguments.get("text").and_then(Value::as_str).unwrap_or_default();
            Ok(ToolOutput { text: format!("echo: {text}"), is_error: false })
        });
        let echo = Tool::untyped("echo", "Says the text again.", schema.clone(), handler.clone());
        let note = Tool::untyped("note", "Writes the text down.", schema.clone(), handler.clone())
            .effects(crate::Effects { writes: crate::Writes::Always, ..crate::Effects::READS });
        let impostor = Tool::untyped("search", "Not UCP's search.", schema, handler);
        let offer = ToolOffer { others: vec![echo, note, impostor], ..ToolOffer::documents(8000) };
        let names: Vec<String> = list(&offer).into_iter().map(|t| t.name).collect();
        assert_eq!(names.iter().filter(|n| *n == "search").count(), 1, "UCP's own keeps its name: {names:?}");
        assert!(names.ends_with(&["echo".to_owned(), "note".to_owned()]), "{names:?}");
        assert!(find(&offer, "search").unwrap().def.description.starts_with("Search the open document"));

        let store = tempfile::tempdir().unwrap();
        let library = Arc::new(crate::Library::open(crate::LibraryConfig::new(store.path())).unwrap());
        let connection = crate::Connection::new(library.clone(), Arc::new(offer.clone()));
        let args = json!({"text": "hi"}).as_object().unwrap().clone();
        assert_eq!(call(&connection, "echo", &args).unwrap().text, "echo: hi");
        assert_eq!(call(&connection, "note", &args).unwrap().text, "echo: hi");

        // A tool with a `page` of its own gets it: the registry's paging stays out.
        let paged = json!({"type": "object", "properties": {"page": {"type": "integer"}}});
        let Value::Object(paged) = paged else { unreachable!() };
        let own_page: crate::tool::Handler = Arc::new(|_, arguments: &JsonObject| {
            Ok(ToolOutput { text: format!("my page {}", arguments["page"]), is_error: false })
        });
        let lister = Tool::untyped("lister", "Lists in pages.", paged.clone(), own_page);
        let with_lister = ToolOffer { others: vec![lister], only: Some(vec!["lister".into()]), ..offer.clone() };
        assert_eq!(list(&with_lister)[0].input_schema.as_ref(), &paged, "its schema unchanged");
        let paging = crate::Connection::new(library.clone(), Arc::new(with_lister));
        let page = json!({"page": 2}).as_object().unwrap().clone();
        assert_eq!(call(&paging, "lister", &page).unwrap().text, "my page 2");

        // Read-only drops the one that writes; `only` narrows them like UCP's own.
        let read_only = crate::Connection::new(library, Arc::new(ToolOffer { read_only: true, ..offer.clone() }));
        assert!(matches!(call(&read_only, "note", &args), Err(CallError::UnknownTool(_))));
        assert_eq!(call(&read_only, "echo", &args).unwrap().text, "echo: hi");
        assert!(ToolOffer { only: Some(vec!["echo".into()]), ..offer.clone() }.check_only(false).is_ok());
        assert!(ToolOffer { only: Some(vec!["nope".into()]), ..offer }.check_only(false).is_err());
    }

    #[test]
    fn discovery_lists_the_same_few_tools_however_many_others() {
        // A gateway of other servers' tools costs what --discover-tools
        // costs (the README's figure), with 120 of them as with none.
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        let Value::Object(schema) = schema else { unreachable!() };
        let handler: crate::tool::Handler =
            Arc::new(|_, _: &JsonObject| Ok(ToolOutput { text: String::new(), is_error: false }));
        let others = (0..120)
            .map(|n| {
                Tool::untyped(&format!("mcp__s__tool{n}"), "A tool of another server.", schema.clone(), handler.clone())
            })
            .collect();
        let discovering = ToolOffer { discover: true, ..ToolOffer::documents(8000) };
        let gateway = ToolOffer { others, ..discovering.clone() };
        assert_eq!(listed(&gateway), listed(&discovering));
        assert_eq!(list(&gateway).len(), list(&discovering).len() + 120);
    }
}
