//! `ucp memory`, `ucp rules` and `ucp skills`: what an agent learned
//! before, the rules of the repository it works in, and the skills it may
//! use, each loaded when relevant.

use std::path::PathBuf;

use anyhow::Context as _;

use ucpkit_registry::parts::guidance::{rules, skills};
use ucpkit_registry::parts::memory::{AgentState, MemoryFilter, NewMemory};

use crate::{count_in, print, print_json, Cli};

/// Arguments of `ucp memory`.
#[derive(clap::Args)]
pub(crate) struct MemoryArgs {
    #[command(subcommand)]
    action: MemoryAction,
    /// Whose memories (an agent's or a user's); the project's by default.
    #[arg(long, global = true, value_name = "NAME")]
    namespace: Option<String>,
}

/// Filters of a memory search or listing.
#[derive(clap::Args)]
pub(crate) struct Filters {
    /// Only this kind (repeatable).
    #[arg(long = "kind", value_name = "KIND")]
    kinds: Vec<String>,
    /// Only memories with this tag (repeatable: any of them).
    #[arg(long = "tag", value_name = "TAG")]
    tags: Vec<String>,
    /// Only memories stored within this long (30m, 12h, 7d) or since this
    /// time (ms since the epoch).
    #[arg(long, value_name = "WHEN", value_parser = since)]
    since: Option<i64>,
    /// Most memories shown.
    #[arg(long, default_value_t = 10, value_parser = count_in(1, 1_000))]
    limit: usize,
}

#[derive(clap::Subcommand)]
pub(crate) enum MemoryAction {
    /// Store a memory (a memory saying the same is not stored twice).
    #[command(after_help = "Example:\n  ucp memory add \"The retry loop has no backoff\" --kind finding --tag tests")]
    Add {
        /// What to remember; `-` reads standard input.
        content: String,
        /// finding, decision, handoff, todo, note ...
        #[arg(long, default_value = ucpkit_registry::parts::memory::DEFAULT_KIND)]
        kind: String,
        /// A tag (repeatable).
        #[arg(long = "tag", value_name = "TAG")]
        tags: Vec<String>,
        /// A block id or file it is about (repeatable).
        #[arg(long = "link", value_name = "ID|PATH")]
        links: Vec<String>,
    },
    /// Memories matching a query, by meaning with a model (else BM25).
    #[command(after_help = "Example:\n  ucp memory search \"why do the tests flake\" --kind finding")]
    Search {
        /// What to look for.
        query: String,
        #[command(flatten)]
        filters: Filters,
    },
    /// The latest memories.
    Recent {
        #[command(flatten)]
        filters: Filters,
    },
    /// Store the memories of a file at once; ones already there are
    /// skipped. JSON lines ({"content", "kind", "tags", "links", "speaker",
    /// "session", "time"} per line), or a conversation in markdown (a
    /// heading per session, a paragraph per turn `Speaker: text`): one
    /// memory per turn, with its speaker and its session.
    #[command(after_help = "Examples:\n  ucp memory import notes.jsonl\n  ucp memory import chat.md")]
    Import {
        /// The file; `-` reads standard input.
        file: PathBuf,
        /// How the file is written (default: `conversation` for .md and
        /// .markdown files, else `jsonl`).
        #[arg(long, value_enum)]
        format: Option<ImportFormat>,
    },
    /// Delete a memory.
    Forget {
        /// Its id (blk_...).
        id: String,
    },
}

/// How a memory import's file is written.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ImportFormat {
    /// One memory as JSON per line.
    Jsonl,
    /// A conversation in markdown: a heading per session, a paragraph per turn.
    Conversation,
}

/// `30m`, `12h`, `7d` before now, or a time in ms since the epoch.
fn since(value: &str) -> Result<i64, String> {
    let unit = |suffix: char, ms: i64| {
        value.strip_suffix(suffix).and_then(|n| n.parse::<i64>().ok()).and_then(|n| n.checked_mul(ms))
    };
    let back = unit('m', 60_000).or_else(|| unit('h', 3_600_000)).or_else(|| unit('d', 86_400_000));
    match back {
        Some(back) if back >= 0 => Ok(ucpkit_workspace::vocabulary::now_ms().saturating_sub(back)),
        _ => value.parse::<i64>().map_err(|_| format!("{value:?}: a duration (30m, 12h, 7d) or ms since the epoch")),
    }
}

pub(crate) fn memory(cli: &Cli, args: &MemoryArgs) -> anyhow::Result<()> {
    let library = cli.library(true)?;
    let namespace = args.namespace.clone();
    let filter = |filters: &Filters| MemoryFilter {
        namespace: namespace.clone(),
        kinds: filters.kinds.clone(),
        tags: filters.tags.clone(),
        since_ms: filters.since,
        until_ms: None,
    };
    match &args.action {
        MemoryAction::Add { content, kind, tags, links } => {
            let content = if content == "-" { std::io::read_to_string(std::io::stdin())? } else { content.clone() };
            let memory = NewMemory {
                content,
                kind: Some(kind.clone()),
                tags: tags.clone(),
                links: links.clone(),
                namespace: args.namespace.clone(),
                ..NewMemory::default()
            };
            let stored = AgentState::of(&library).memory_store(&memory)?;
            if cli.json {
                return print_json(&stored);
            }
            let said = if stored.duplicate { "already remembered as" } else { "remembered as" };
            print(&format!("{said} {} in {}\n", stored.memory.id, stored.memory.document))
        }
        MemoryAction::Search { query, filters } => {
            let found = AgentState::of(&library).memory_search(query, &filter(filters), filters.limit)?;
            if cli.json {
                return print_json(&found);
            }
            print(&ucpkit_registry::parts::memory::memories_text(&found))
        }
        MemoryAction::Recent { filters } => {
            let recent = AgentState::of(&library).memory_recent(&filter(filters), filters.limit)?;
            if cli.json {
                return print_json(&recent);
            }
            print(&ucpkit_registry::parts::memory::memories_text(&recent))
        }
        MemoryAction::Import { file, format } => {
            let text = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?
            };
            let markdown =
                file.extension().is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"));
            let format = format.unwrap_or(if markdown { ImportFormat::Conversation } else { ImportFormat::Jsonl });
            let memories = match format {
                ImportFormat::Conversation => ucpkit_registry::parts::memory::conversation_turns(&text),
                ImportFormat::Jsonl => text
                    .lines()
                    .enumerate()
                    .filter(|(_, line)| !line.trim().is_empty())
                    .map(|(n, line)| serde_json::from_str::<NewMemory>(line).with_context(|| format!("line {}", n + 1)))
                    .collect::<anyhow::Result<Vec<_>>>()?,
            };
            let (stored, skipped) = AgentState::of(&library).memory_import(args.namespace.as_deref(), &memories)?;
            if cli.json {
                return print_json(&serde_json::json!({ "stored": stored, "skipped": skipped }));
            }
            print(&format!("stored {stored} memories, skipped {skipped} already there\n"))
        }
        MemoryAction::Forget { id } => {
            let forgotten = AgentState::of(&library).memory_forget(args.namespace.as_deref(), id)?;
            if cli.json {
                return print_json(&serde_json::json!({ "id": id, "forgotten": forgotten }));
            }
            anyhow::ensure!(forgotten, "no memory {id}");
            print(&format!("forgot {id}\n"))
        }
    }
}

/// Arguments of `ucp rules`.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  ucp rules --root .
  ucp rules --task \"add a migration\" crates/store/src/lib.rs --json")]
pub(crate) struct RulesArgs {
    /// Paths the task touches: the rules of their folders apply.
    paths: Vec<PathBuf>,
    /// The task: linked rule files it matches are loaded.
    #[arg(long)]
    task: Option<String>,
    /// Most tokens of rules (a longer root file is cut to it).
    #[arg(long, value_parser = count_in(1, crate::MAX_BUDGET))]
    budget: Option<usize>,
}

pub(crate) fn rules(cli: &Cli, args: &RulesArgs) -> anyhow::Result<()> {
    let root = cli.root.clone().unwrap_or_else(|| PathBuf::from("."));
    let request = rules::RulesRequest { task: args.task.clone(), paths: args.paths.clone(), budget: args.budget };
    let found = rules::rules_for(&root, &request, &ucpkit_workspace::vocabulary::BpeTokenizer::default())?;
    if cli.json {
        return print_json(&found);
    }
    if found.is_empty() {
        return print("no rules apply (no AGENTS.md or CLAUDE.md at the root or above the paths)\n");
    }
    print(&found.text())
}

/// Arguments of `ucp skills`.
#[derive(clap::Args)]
pub(crate) struct SkillsArgs {
    #[command(subcommand)]
    action: SkillsAction,
    /// Another folder of skills (repeatable), besides skills/,
    /// .agents/skills/ and .claude/skills/ under the root.
    #[arg(long = "skills", global = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
}

#[derive(clap::Subcommand)]
pub(crate) enum SkillsAction {
    /// Every skill's name and description.
    List,
    /// A skill's body, scripts and references (loaded when the task matches).
    #[command(after_help = "Example:\n  ucp skills show pdf-forms --task \"tick the checkboxes\"")]
    Show {
        /// The skill's name.
        name: String,
        /// The task: reference files it matches are loaded.
        #[arg(long)]
        task: Option<String>,
        /// A reference file to load by its path or title (repeatable).
        #[arg(long = "reference", value_name = "PATH")]
        references: Vec<String>,
    },
}

pub(crate) fn skills(cli: &Cli, args: &SkillsArgs) -> anyhow::Result<()> {
    let root = cli.root.clone().unwrap_or_else(|| PathBuf::from("."));
    match &args.action {
        SkillsAction::List => {
            let list = skills::list_skills(&root, &args.dirs)?;
            if cli.json {
                return print_json(&list);
            }
            let mut out = String::new();
            for skill in &list.skills {
                out.push_str(&format!("{}: {} ({})\n", skill.name, skill.description, skill.path));
            }
            for problem in &list.problems {
                out.push_str(&format!("not a skill: {problem}\n"));
            }
            print(if out.is_empty() { "no skills\n" } else { &out })
        }
        SkillsAction::Show { name, task, references } => {
            let tokenizer = ucpkit_workspace::vocabulary::BpeTokenizer::default();
            let skill = skills::load_skill(&root, &args.dirs, name, task.as_deref(), references, &tokenizer)?;
            if cli.json {
                return print_json(&skill);
            }
            print(&skill.text())
        }
    }
}

/// Arguments of `ucp plan`.
#[derive(clap::Args)]
pub(crate) struct PlanArgs {
    #[command(subcommand)]
    action: PlanAction,
    /// Whose plans (an agent's or a user's); the project's by default.
    #[arg(long, global = true, value_name = "NAME")]
    namespace: Option<String>,
}

#[derive(clap::Subcommand)]
pub(crate) enum PlanAction {
    /// Add a node (a plan, a step, a file, an agent ...).
    #[command(
        after_help = "Example:\n  ucp plan add \"Test recall\" --type step --parent blk_0123456789abcdef01234567"
    )]
    Add {
        /// Its title.
        title: String,
        /// Its type.
        #[arg(long = "type", default_value = "step")]
        node_type: String,
        /// A parent node (repeatable).
        #[arg(long = "parent", value_name = "ID")]
        parents: Vec<String>,
        /// The relation to the parents.
        #[arg(long)]
        relation: Option<String>,
        /// Free context.
        #[arg(long, default_value = "")]
        context: String,
    },
    /// Set a node's status, context or title.
    Update {
        /// The node.
        id: String,
        /// pending, in_progress, done or failed.
        #[arg(long)]
        status: Option<String>,
        /// Free context.
        #[arg(long)]
        context: Option<String>,
        /// A new title.
        #[arg(long)]
        title: Option<String>,
    },
    /// Put CHILD under PARENT (refused when it would close a cycle).
    Link {
        /// The parent node.
        parent: String,
        /// The child node.
        child: String,
        /// The relation (contains by default).
        #[arg(long)]
        relation: Option<String>,
    },
    /// Take CHILD from under PARENT (the relation given, else any).
    Unlink {
        /// The parent node.
        parent: String,
        /// The child node.
        child: String,
        /// The relation (any by default).
        #[arg(long)]
        relation: Option<String>,
    },
    /// Remove a node with its relations.
    Rm {
        /// The node.
        id: String,
    },
    /// The graph as an indented tree with statuses.
    Show {
        /// Most tokens shown.
        #[arg(long, default_value_t = 4_000, value_parser = count_in(1, crate::MAX_BUDGET))]
        budget: usize,
    },
}

fn node_id(id: &str) -> anyhow::Result<ucpkit_workspace::vocabulary::BlockId> {
    id.parse().map_err(|_| anyhow::anyhow!("{id:?} is not a node id (blk_...)"))
}

pub(crate) fn plan(cli: &Cli, args: &PlanArgs) -> anyhow::Result<()> {
    use ucpkit_registry::parts::memory::relations::{NewNode, Status};
    let library = cli.library(true)?;
    let namespace = args.namespace.as_deref();
    let said = match &args.action {
        PlanAction::Add { title, node_type, parents, relation, context } => {
            let parents = parents.iter().map(|p| Ok((node_id(p)?, relation.clone()))).collect::<anyhow::Result<_>>()?;
            let node = NewNode {
                title: title.clone(),
                node_type: node_type.clone(),
                status: None,
                context: context.clone(),
                parents,
            };
            let node = AgentState::of(&library).relation_add(namespace, &node)?;
            if cli.json {
                return print_json(&node);
            }
            format!("added {}", node.id)
        }
        PlanAction::Update { id, status, context, title } => {
            let status = status.as_deref().map(str::parse::<Status>).transpose()?;
            let node = AgentState::of(&library).relation_update(
                namespace,
                node_id(id)?,
                status,
                context.as_deref(),
                title.as_deref(),
            )?;
            if cli.json {
                return print_json(&node);
            }
            format!("updated {}", node.id)
        }
        PlanAction::Link { parent, child, relation } => {
            AgentState::of(&library).relation_link(
                namespace,
                node_id(parent)?,
                node_id(child)?,
                relation.as_deref(),
            )?;
            "linked".to_owned()
        }
        PlanAction::Unlink { parent, child, relation } => {
            let unlinked = AgentState::of(&library).relation_unlink(
                namespace,
                node_id(parent)?,
                node_id(child)?,
                relation.as_deref(),
            )?;
            anyhow::ensure!(unlinked, "no relation from {parent} to {child}");
            "unlinked".to_owned()
        }
        PlanAction::Rm { id } => {
            anyhow::ensure!(AgentState::of(&library).relation_remove(namespace, node_id(id)?)?, "no node {id}");
            format!("removed {id}")
        }
        PlanAction::Show { budget } => {
            let graph = AgentState::of(&library).relations(namespace)?;
            if cli.json {
                return print_json(&serde_json::json!({ "nodes": graph.nodes(), "relations": graph.relations() }));
            }
            let text = graph.render(*budget, library.tokenizer());
            return print(if text.is_empty() { "no nodes\n" } else { &text });
        }
    };
    if cli.json {
        return print_json(&serde_json::json!({ "done": said }));
    }
    print(&format!("{said}\n"))
}
