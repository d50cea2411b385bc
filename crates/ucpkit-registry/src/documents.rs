//! The document tools: `ucl` (the agent's session in the open document),
//! `context`, `search`, `repo_map` and `open`, their argument types and
//! the [`Connection`](crate::Connection) method each one runs.

use std::num::{NonZeroU64, NonZeroUsize};
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::tool::Strings;
use crate::{ActionKind, Effects, Tool, Writes};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UclArgs {
    /// UCL lines
    commands: Option<String>,
    /// Page of the last cut result, instead of commands
    page: Option<NonZeroUsize>,
    /// Session name to run in; kept across connections
    session: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ContextArgs {
    question: String,
    /// Most tokens (default 4000)
    budget: Option<NonZeroUsize>,
    format: Option<ContextFormat>,
    /// Source code only, with its call graph
    code: Option<bool>,
    /// Documents ranked together (default: the open one)
    docs: Option<Strings>,
    /// Every document
    all: Option<bool>,
    /// Memories too
    memory: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ContextFormat {
    Markdown,
    Default,
    ShortIds,
}

impl ContextFormat {
    fn name(&self) -> &'static str {
        match self {
            ContextFormat::Markdown => "markdown",
            ContextFormat::Default => "default",
            ContextFormat::ShortIds => "short_ids",
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
    #[schemars(range(max = 100))]
    limit: Option<NonZeroU64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MapArgs {
    question: Option<String>,
    /// Paths you work on
    files: Option<Strings>,
    /// Most tokens (default 1024)
    budget: Option<NonZeroUsize>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OpenArgs {
    document: Option<String>,
    path: Option<String>,
    /// Document name for path
    name: Option<String>,
}

/// Whether the `commands` of a `ucl` call edit the document (a script
/// that does not parse runs nothing).
fn ucl_edits(arguments: &crate::JsonObject) -> bool {
    let Some(commands) = arguments.get("commands").and_then(serde_json::Value::as_str) else { return false };
    let Ok(script) = ucpkit_ucl::parse_script(commands) else { return false };
    let document = &script.document;
    !document.structure.is_empty()
        || !document.blocks.is_empty()
        || document.commands.iter().any(|c| c.is_edit() || matches!(c, ucpkit_ucl::Command::Atomic(_)))
}

/// The document tools.
pub(crate) fn tools() -> Vec<Tool> {
    let edits = Effects { writes: Writes::WhenAllowed, ..Effects::READS };
    vec![
        Tool::typed(
            "ucl",
            "Run UCL commands (one per line) in your session over the open document: GOTO, EXPAND, FOLLOW, \
             PATH, SEARCH, FIND, VIEW, CTX ADD/REMOVE/EXPAND/COMPRESS/PRUNE/RENDER/STATS/FOCUS, and edits \
             (EDIT, APPEND, MOVE, DELETE, LINK ...). See the ucl prompt. Stops at the first failing command.",
            |connection, args: UclArgs| {
                connection.ucl(args.commands.as_deref(), args.page.map(NonZeroUsize::get), args.session.as_deref())
            },
        )
        .effects(edits)
        .changes_when(ucl_edits)
        .pages_itself(),
        Tool::typed(
            "context",
            "Answer-ready context for a question within a token budget: search, parallel exploration, \
             the best blocks under their heading paths.",
            |connection, args: ContextArgs| {
                let format = args.format.as_ref().map(ContextFormat::name);
                let sources = ucpkit_workspace::Sources {
                    documents: Strings::of(args.docs),
                    all: args.all.unwrap_or(false),
                    memory: args.memory.unwrap_or(false).then_some(None),
                };
                connection.context(
                    &args.question,
                    args.budget.map(NonZeroUsize::get),
                    format,
                    args.code.unwrap_or(false),
                    &sources,
                )
            },
        )
        .kind(ActionKind::Search),
        Tool::typed(
            "search",
            "Search the open document (BM25, hybrid with a model). Hits become your last results: \
             `CTX ADD RESULTS` takes them.",
            |connection, args: SearchArgs| connection.search(&args.query, args.limit.map(|n| n.get().min(100) as u32)),
        )
        .kind(ActionKind::Search),
        Tool::typed(
            "repo_map",
            "Ranked outline of an indexed repository: files by PageRank over calls and imports, \
             personalized to a question or files, with their key signatures.",
            |connection, args: MapArgs| {
                connection.map(args.question.as_deref(), Strings::of(args.files), args.budget.map(NonZeroUsize::get))
            },
        )
        .kind(ActionKind::Search),
        Tool::typed(
            "open",
            "No arguments: list documents. document: switch to a stored one. path: index a file or \
             folder the server may read, then switch. Switching starts a new session.",
            |connection, args: OpenArgs| {
                connection.open(args.document.as_deref(), args.path.as_deref().map(Path::new), args.name.as_deref())
            },
        )
        .effects(edits)
        // Indexing a path writes a document; switching writes nothing.
        .changes_when(|arguments| arguments.get("path").is_some_and(|path| !path.is_null())),
    ]
}
