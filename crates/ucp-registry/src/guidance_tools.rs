//! Memory, plans, rules and skills as MCP tools: `memory_store`,
//! `memory_search`, `memory_recent`, `memory_forget` (the store's memory
//! documents), `plan` (its relation graph), `rules_for`, `skills_list` and `skill_load` (the files under
//! the server's root). Nested rules also come by themselves: the first time
//! a coding tool touches a folder with its own `AGENTS.md`, that file is
//! appended to the tool's result.

use std::path::PathBuf;

use crate::ToolDef as Tool;
use serde_json::json;
use ucp_guidance::{rules, skills};
use ucp_workspace::{MemoryFilter, NewMemory};

use crate::tools::{tool, Arguments};
use crate::{CallError, Connection};

/// The memory tools' names (with `plan`, the relation store).
pub const MEMORY_TOOLS: [&str; 5] = ["memory_store", "memory_search", "memory_recent", "memory_forget", "plan"];

/// The memory tools that write (`plan` writes unless it only shows).
pub const MEMORY_WRITING_TOOLS: [&str; 2] = ["memory_store", "memory_forget"];

/// The tools over the root's rules and skills files.
pub const FILE_GUIDANCE_TOOLS: [&str; 3] = ["rules_for", "skills_list", "skill_load"];

/// Tokens of nested rules a coding tool's result may carry.
const NESTED_RULES_BUDGET: usize = 2_000;

/// The memory, rules and skills tools' definitions.
pub fn list() -> Vec<Tool> {
    let text = json!({"type": "string"});
    let texts = json!({"type": "array", "items": {"type": "string"}});
    let filters = |mut properties: serde_json::Value| {
        properties["kind"] = text.clone();
        properties["tags"] = texts.clone();
        properties["since_ms"] = json!({"type": "integer"});
        properties["limit"] = json!({"type": "integer", "minimum": 1});
        properties["namespace"] = text.clone();
        properties
    };
    let object = |properties: serde_json::Value, required: &[&str]| {
        let mut schema = json!({"type": "object", "properties": properties, "additionalProperties": false});
        if !required.is_empty() {
            schema["required"] = json!(required);
        }
        schema
    };
    vec![
        tool(
            "memory_store",
            "Remember for later sessions: kind finding, decision, handoff, todo or note; links: blocks or files.",
            object(
                json!({"content": text, "kind": text, "tags": texts, "links": texts, "namespace": text}),
                &["content"],
            ),
            false,
        ),
        tool(
            "memory_search",
            "Find memories by meaning (hybrid search), by kind, tags, since_ms.",
            object(filters(json!({"query": text})), &["query"]),
            true,
        ),
        tool("memory_recent", "Latest memories, newest first.", object(filters(json!({})), &[]), true),
        tool("memory_forget", "Delete a memory by id.", object(json!({"id": text, "namespace": text}), &["id"]), false),
        tool(
            "plan",
            "Plans as a graph of nodes with statuses (pending, in_progress, done, failed): action add (title, \
             type, parents), update (id, status, context), link/unlink (parent, child), remove (id), show.",
            object(
                json!({
                    "action": {"enum": ["add", "update", "link", "unlink", "remove", "show"]},
                    "id": text, "title": text, "type": text, "status": text, "context": text,
                    "parents": texts, "parent": text, "child": text, "relation": text,
                    "budget": {"type": "integer", "minimum": 1}, "namespace": text
                }),
                &["action"],
            ),
            false,
        ),
        tool(
            "rules_for",
            "Repository rules (AGENTS.md) for a task and the paths it touches.",
            object(json!({"task": text, "paths": texts, "budget": {"type": "integer", "minimum": 1}}), &[]),
            true,
        ),
        tool("skills_list", "Skills you may use: name and description.", object(json!({}), &[]), true),
        tool(
            "skill_load",
            "A skill's instructions and scripts; references load when the task matches, or by path.",
            object(json!({"name": text, "task": text, "references": texts}), &["name"]),
            true,
        ),
    ]
}

/// Runs memory, rules or skills tool `name`; `None` when it is not one.
pub(crate) fn call(connection: &Connection, name: &str, args: &Arguments<'_>) -> Option<Result<String, CallError>> {
    let library = connection.library();
    let usize_of = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let filter = |args: &Arguments<'_>| -> Result<(MemoryFilter, usize), CallError> {
        let filter = MemoryFilter {
            namespace: args.string("namespace")?.map(str::to_owned),
            kinds: args.strings("kind")?,
            tags: args.strings("tags")?,
            since_ms: args.number("since_ms")?.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
            until_ms: None,
        };
        Ok((filter, args.count("limit")?.map_or(10, |n| usize_of(n).min(100))))
    };
    let result = match name {
        "memory_store" => (|| {
            args.check(&["content", "kind", "tags", "links", "namespace"])?;
            let memory = NewMemory {
                content: args.required("content")?.to_owned(),
                kind: args.string("kind")?.map(str::to_owned),
                tags: args.strings("tags")?,
                links: args.strings("links")?,
                namespace: args.string("namespace")?.map(str::to_owned),
            };
            let stored = library.memory_store(&memory)?;
            let said = if stored.duplicate { "already remembered as" } else { "remembered as" };
            Ok(format!("{said} {} ({}) in document {}", stored.memory.id, stored.memory.kind, stored.memory.document))
        })(),
        "memory_search" => (|| {
            args.check(&["query", "kind", "tags", "since_ms", "limit", "namespace"])?;
            let (filter, limit) = filter(args)?;
            Ok(ucp_workspace::memories_text(&library.memory_search(args.required("query")?, &filter, limit)?))
        })(),
        "memory_recent" => (|| {
            args.check(&["kind", "tags", "since_ms", "limit", "namespace"])?;
            let (filter, limit) = filter(args)?;
            Ok(ucp_workspace::memories_text(&library.memory_recent(&filter, limit)?))
        })(),
        "memory_forget" => (|| {
            args.check(&["id", "namespace"])?;
            let id = args.required("id")?;
            if library.memory_forget(args.string("namespace")?, id)? {
                Ok(format!("forgot {id}"))
            } else {
                Err(CallError::Arguments(format!("no memory {id} (memory_recent or memory_search list the ids)")))
            }
        })(),
        "plan" => plan(connection, args),
        "rules_for" => (|| {
            args.check(&["task", "paths", "budget"])?;
            let request = rules::RulesRequest {
                task: args.string("task")?.map(str::to_owned),
                paths: args.strings("paths")?.into_iter().map(PathBuf::from).collect(),
                budget: Some(args.count("budget")?.map_or(rules::DEFAULT_RULES_BUDGET, usize_of)),
            };
            let found = rules::rules_for(root(connection)?, &request, library.tokenizer())?;
            connection.note_rules_shown(&found);
            Ok(if found.is_empty() { "no rules apply".to_owned() } else { found.text() })
        })(),
        "skills_list" => (|| {
            args.check(&[])?;
            let list = skills::list_skills(root(connection)?, &connection.offer().skill_dirs)?;
            let mut out: String =
                list.skills.iter().map(|s| format!("{}: {}\n", s.name, s.description)).collect::<String>();
            if out.is_empty() {
                out = "no skills (skills/, .agents/skills/, .claude/skills/ hold none)".to_owned();
            }
            Ok(out)
        })(),
        "skill_load" => (|| {
            args.check(&["name", "task", "references"])?;
            let skill = skills::load_skill(
                root(connection)?,
                &connection.offer().skill_dirs,
                args.required("name")?,
                args.string("task")?,
                &args.strings("references")?,
                library.tokenizer(),
            )?;
            Ok(skill.text())
        })(),
        _ => return None,
    };
    Some(result)
}

/// The `plan` tool: one change to the relation graph, then the graph.
fn plan(connection: &Connection, args: &Arguments<'_>) -> Result<String, CallError> {
    use ucp_workspace::relations::{NewNode, Status};
    args.check(&[
        "action",
        "id",
        "title",
        "type",
        "status",
        "context",
        "parents",
        "parent",
        "child",
        "relation",
        "budget",
        "namespace",
    ])?;
    let library = connection.library();
    let namespace = args.string("namespace")?;
    let block = |key: &str| -> Result<ucm_core::BlockId, CallError> {
        let id = args.required(key)?;
        id.parse().map_err(|_| CallError::Arguments(format!("{key} {id:?} is not a node id (blk_...)")))
    };
    let status = args.string("status")?.map(str::parse::<Status>).transpose()?;
    let relation = args.string("relation")?;
    let action = args.required("action")?;
    if action != "show" && (library.config().read_only || connection.offer().read_only) {
        return Err(CallError::Arguments("this server is read-only: plan can only show".into()));
    }
    let said = match action {
        "add" => {
            let parents = args
                .strings("parents")?
                .iter()
                .map(|p| p.parse().map(|id| (id, relation.map(str::to_owned))))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| CallError::Arguments("parents are node ids (blk_...)".into()))?;
            let node = NewNode {
                title: args.required("title")?.to_owned(),
                node_type: args.string("type")?.unwrap_or("step").to_owned(),
                status,
                context: args.string("context")?.unwrap_or("").to_owned(),
                parents,
            };
            format!("added {}", library.relation_add(namespace, &node)?.id)
        }
        "update" => {
            let id = block("id")?;
            library.relation_update(namespace, id, status, args.string("context")?, args.string("title")?)?;
            format!("updated {id}")
        }
        "link" => {
            library.relation_link(namespace, block("parent")?, block("child")?, relation)?;
            "linked".to_owned()
        }
        // Taking away what is not there is an error, as from the command line.
        "unlink" => match library.relation_unlink(namespace, block("parent")?, block("child")?, relation)? {
            true => "unlinked".to_owned(),
            false => return Err(CallError::Arguments("no such relation".into())),
        },
        "remove" => match library.relation_remove(namespace, block("id")?)? {
            true => "removed".to_owned(),
            false => return Err(CallError::Arguments("no such node".into())),
        },
        "show" => String::new(),
        other => {
            return Err(CallError::Arguments(format!("action {other:?}: add, update, link, unlink, remove or show")))
        }
    };
    let budget = args.count("budget")?.map_or(2_000, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let graph = library.relations(namespace)?.render(budget, library.tokenizer());
    let graph = if graph.is_empty() { "(no nodes)\n".to_owned() } else { graph };
    Ok(if said.is_empty() { graph } else { format!("{said}\n{graph}") })
}

/// The folder the server's file tools work in.
fn root(connection: &Connection) -> Result<&std::path::Path, CallError> {
    connection
        .offer()
        .root
        .as_deref()
        .ok_or_else(|| CallError::Arguments("this server has no workspace folder (start it with --root)".into()))
}

/// The nested rules the paths of a coding tool call fall under that this
/// connection has not been shown yet, as text to append to its result.
pub(crate) fn nested_rules(connection: &Connection, paths: &[String]) -> Option<String> {
    let root = connection.offer().root.as_deref()?;
    if paths.is_empty() {
        return None;
    }
    let mut found = rules::nested_rules(
        root,
        &paths.iter().map(PathBuf::from).collect::<Vec<_>>(),
        connection.library().tokenizer(),
    )
    .ok()?;
    connection.take_unseen_rules(&mut found);
    let mut used = 0;
    let (fit, over): (Vec<_>, Vec<_>) = found.rules.into_iter().partition(|rule| {
        used += rule.tokens;
        used <= NESTED_RULES_BUDGET
    });
    found.rules = fit;
    found.left_out = over.into_iter().map(|rule| format!("{} (ask rules_for with its path)", rule.source)).collect();
    found.tokens = found.rules.iter().map(|rule| rule.tokens).sum();
    (!found.is_empty()).then(|| format!("\n\nRules for these files:\n{}", found.text()))
}
