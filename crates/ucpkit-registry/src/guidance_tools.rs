//! Memory, plans, rules and skills as MCP tools: `memory_store`,
//! `memory_search`, `memory_recent`, `memory_forget` (the store's memory
//! documents), `plan` (its relation graph), `rules_for`, `skills_list` and `skill_load` (the files under
//! the server's root). Nested rules also come by themselves: the first time
//! a coding tool touches a folder with its own `AGENTS.md`, that file is
//! appended to the tool's result.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use ucpkit_guidance::{rules, skills};
use ucpkit_memory::{AgentState, MemoryFilter, NewMemory};

use crate::tool::Strings;
use crate::{ActionKind, CallError, Connection, Effects, Needs, Tool, Writes};

/// Tokens of nested rules a coding tool's result may carry.
const NESTED_RULES_BUDGET: usize = 2_000;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct StoreArgs {
    content: String,
    kind: Option<String>,
    tags: Option<Strings>,
    links: Option<Strings>,
    namespace: Option<String>,
}

/// Which memories `memory_search` ranks and `memory_recent` lists: by
/// kind, tags, age; at most `limit` (default 10, at most 100). (Serde
/// cannot flatten these into arguments that refuse unknown fields, so
/// both tools name them.)
macro_rules! memory_filter_args {
    ($(#[$meta:meta])* struct $name:ident { $($field:ident: $type:ty,)* }) => {
        $(#[$meta])*
        #[derive(Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        struct $name {
            $($field: $type,)*
            #[schemars(with = "Option<String>")]
            kind: Option<Strings>,
            tags: Option<Strings>,
            since_ms: Option<u64>,
            limit: Option<NonZeroUsize>,
            namespace: Option<String>,
        }

        impl $name {
            fn filter(&self) -> (MemoryFilter, usize) {
                let filter = MemoryFilter {
                    namespace: self.namespace.clone(),
                    kinds: self.kind.clone().map(|k| k.0).unwrap_or_default(),
                    tags: self.tags.clone().map(|t| t.0).unwrap_or_default(),
                    since_ms: self.since_ms.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
                    until_ms: None,
                };
                (filter, self.limit.map_or(10, |n| n.get().min(100)))
            }
        }
    };
}

memory_filter_args!(
    /// `memory_search`'s arguments.
    struct SearchArgs {
        query: String,
    }
);
memory_filter_args!(
    /// `memory_recent`'s arguments.
    struct FilterArgs {}
);

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ForgetArgs {
    id: String,
    namespace: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PlanArgs {
    action: PlanAction,
    id: Option<String>,
    title: Option<String>,
    #[serde(rename = "type")]
    node_type: Option<String>,
    status: Option<String>,
    context: Option<String>,
    parents: Option<Strings>,
    parent: Option<String>,
    child: Option<String>,
    relation: Option<String>,
    budget: Option<NonZeroUsize>,
    namespace: Option<String>,
}

#[derive(Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum PlanAction {
    Add,
    Update,
    Link,
    Unlink,
    Remove,
    Show,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RulesArgs {
    task: Option<String>,
    paths: Option<Strings>,
    budget: Option<NonZeroUsize>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SkillArgs {
    name: String,
    task: Option<String>,
    references: Option<Strings>,
}

/// The memory, rules and skills tools.
pub(crate) fn tools() -> Vec<Tool> {
    let writes = Effects { writes: Writes::Always, ..Effects::READS };
    vec![
        Tool::typed(
            "memory_store",
            "Remember for later sessions: kind finding, decision, handoff, todo or note; links: blocks or files.",
            |connection, args: StoreArgs| {
                let memory = NewMemory {
                    content: args.content,
                    kind: args.kind,
                    tags: Strings::of(args.tags),
                    links: Strings::of(args.links),
                    namespace: args.namespace,
                    ..NewMemory::default()
                };
                let stored = AgentState::of(connection.library()).memory_store(&memory)?;
                let said = if stored.duplicate { "already remembered as" } else { "remembered as" };
                let (id, kind, document) = (&stored.memory.id, &stored.memory.kind, &stored.memory.document);
                Ok(connection.bounded_text("memory_store", format!("{said} {id} ({kind}) in document {document}")))
            },
        )
        .effects(writes),
        Tool::typed(
            "memory_search",
            "Find memories by their words (and meaning, with a model), by kind, tags, since_ms.",
            |connection, args: SearchArgs| {
                let (filter, limit) = args.filter();
                let found = AgentState::of(connection.library()).memory_search(&args.query, &filter, limit)?;
                Ok(connection.bounded_text("memory_search", ucpkit_memory::memories_text(&found)))
            },
        )
        .kind(ActionKind::Search),
        Tool::typed("memory_recent", "Latest memories, newest first.", |connection, args: FilterArgs| {
            let (filter, limit) = args.filter();
            let found = AgentState::of(connection.library()).memory_recent(&filter, limit)?;
            Ok(connection.bounded_text("memory_recent", ucpkit_memory::memories_text(&found)))
        }),
        Tool::typed("memory_forget", "Delete a memory by id.", |connection, args: ForgetArgs| {
            if AgentState::of(connection.library()).memory_forget(args.namespace.as_deref(), &args.id)? {
                Ok(connection.bounded_text("memory_forget", format!("forgot {}", args.id)))
            } else {
                Err(CallError::Arguments(format!(
                    "no memory {} (memory_recent or memory_search list the ids)",
                    args.id
                )))
            }
        })
        .effects(writes)
        .kind(ActionKind::Delete),
        Tool::typed(
            "plan",
            "Plans as a graph of nodes with statuses (pending, in_progress, done, failed): action add (title, \
             type, parents), update (id, status, context), link/unlink (parent, child), remove (id), show.",
            |connection, args: PlanArgs| Ok(connection.bounded_text("plan", plan(connection, args)?)),
        )
        .effects(Effects { writes: Writes::WhenAllowed, ..Effects::READS })
        .changes_when(|arguments| arguments.get("action").and_then(serde_json::Value::as_str) != Some("show")),
        Tool::typed(
            "rules_for",
            "Repository rules (AGENTS.md) for a task and the paths it touches.",
            |connection, args: RulesArgs| {
                let request = rules::RulesRequest {
                    task: args.task,
                    paths: Strings::of(args.paths).into_iter().map(PathBuf::from).collect(),
                    budget: Some(args.budget.map_or(rules::DEFAULT_RULES_BUDGET, NonZeroUsize::get)),
                };
                let found = rules::rules_for(root(connection)?, &request, connection.library().tokenizer())?;
                connection.note_rules_shown(&found);
                Ok(connection.bounded_text(
                    "rules_for",
                    if found.is_empty() { "no rules apply".to_owned() } else { found.text() },
                ))
            },
        )
        .needs(Needs::Root),
        Tool::typed("skills_list", "Skills you may use: name and description.", |connection, _: NoArgs| {
            let list = skills::list_skills(root(connection)?, &connection.offer().skill_dirs)?;
            let mut out: String = list.skills.iter().map(|s| format!("{}: {}\n", s.name, s.description)).collect();
            if out.is_empty() {
                out = "no skills (skills/, .agents/skills/, .claude/skills/ hold none)".to_owned();
            }
            Ok(connection.bounded_text("skills_list", out))
        })
        .needs(Needs::Root),
        Tool::typed(
            "skill_load",
            "A skill's instructions and scripts; references load when the task matches, or by path.",
            |connection, args: SkillArgs| {
                let skill = skills::load_skill(
                    root(connection)?,
                    &connection.offer().skill_dirs,
                    &args.name,
                    args.task.as_deref(),
                    &Strings::of(args.references),
                    connection.library().tokenizer(),
                )?;
                Ok(connection.bounded_text("skill_load", skill.text()))
            },
        )
        .needs(Needs::Root),
    ]
}
/// The `plan` tool: one change to the relation graph, then the graph.
fn plan(connection: &Connection, args: PlanArgs) -> Result<String, CallError> {
    use ucpkit_memory::relations::{NewNode, Status};
    let library = connection.library();
    let namespace = args.namespace.as_deref();
    let block = |key: &str, id: &Option<String>| -> Result<ucpkit_core::BlockId, CallError> {
        let id = id.as_deref().ok_or_else(|| CallError::Arguments(format!("{key} is required")))?;
        id.parse().map_err(|_| CallError::Arguments(format!("{key} {id:?} is not a node id (blk_...)")))
    };
    let status = args.status.as_deref().map(str::parse::<Status>).transpose()?;
    let relation = args.relation.as_deref();
    if args.action != PlanAction::Show && (library.config().read_only || connection.offer().read_only) {
        return Err(CallError::Arguments("this server is read-only: plan can only show".into()));
    }
    let said = match args.action {
        PlanAction::Add => {
            let parents = Strings::of(args.parents)
                .iter()
                .map(|p| p.parse().map(|id| (id, relation.map(str::to_owned))))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| CallError::Arguments("parents are node ids (blk_...)".into()))?;
            let node = NewNode {
                title: args.title.ok_or_else(|| CallError::Arguments("title is required".into()))?,
                node_type: args.node_type.unwrap_or_else(|| "step".to_owned()),
                status,
                context: args.context.unwrap_or_default(),
                parents,
            };
            format!("added {}", AgentState::of(library).relation_add(namespace, &node)?.id)
        }
        PlanAction::Update => {
            let id = block("id", &args.id)?;
            AgentState::of(library).relation_update(
                namespace,
                id,
                status,
                args.context.as_deref(),
                args.title.as_deref(),
            )?;
            format!("updated {id}")
        }
        PlanAction::Link => {
            AgentState::of(library).relation_link(
                namespace,
                block("parent", &args.parent)?,
                block("child", &args.child)?,
                relation,
            )?;
            "linked".to_owned()
        }
        // Taking away what is not there is an error, as from the command line.
        PlanAction::Unlink => {
            let (parent, child) = (block("parent", &args.parent)?, block("child", &args.child)?);
            match AgentState::of(library).relation_unlink(namespace, parent, child, relation)? {
                true => "unlinked".to_owned(),
                false => return Err(CallError::Arguments("no such relation".into())),
            }
        }
        PlanAction::Remove => match AgentState::of(library).relation_remove(namespace, block("id", &args.id)?)? {
            true => "removed".to_owned(),
            false => return Err(CallError::Arguments("no such node".into())),
        },
        PlanAction::Show => String::new(),
    };
    let budget = args.budget.map_or(2_000, NonZeroUsize::get);
    let graph = AgentState::of(library).relations(namespace)?.render(budget, library.tokenizer());
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
