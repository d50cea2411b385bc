//! The coding tools (`grep`, `glob`, `read`, `write`, `edit`, `bash`,
//! `ast_search`) of `ucpkit-tools` as records: their argument types, and the
//! translation of those into a request. The rules of the folders a file
//! operation touches come with its result, once per connection.

use std::num::{NonZeroU64, NonZeroUsize};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use ucpkit_tools::{
    AstRequest, BashRequest, EditRequest, GlobOrder, GlobRequest, GrepRequest, OutputMode, Paging, ReadRequest,
    Replacement, Tools,
};

use crate::tool::{StringOrArray, Strings};
use crate::{ActionKind, CallError, Connection, Effects, FileChange, JsonObject, Needs, Tool, ToolOutput, Writes};

/// The paging of a list of entries: at most `head_limit` (default 100),
/// after skipping `offset`. (Serde cannot flatten a struct of these into
/// arguments that refuse unknown fields, so each listing tool names them.)
fn paging(head_limit: Option<NonZeroUsize>, offset: Option<usize>) -> Paging {
    let mut paging = Paging::default();
    if let Some(limit) = head_limit {
        paging.head_limit = limit.get();
    }
    paging.offset = offset.unwrap_or(0);
    paging
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GrepArgs {
    pattern: String,
    path: Option<String>,
    /// e.g. *.rs or ["*.rs", "!*.md"]
    #[schemars(with = "Option<StringOrArray>")]
    glob: Option<Strings>,
    /// ripgrep file type: rust, py, js ...
    #[serde(rename = "type")]
    file_type: Option<String>,
    output_mode: Option<GrepMode>,
    #[serde(rename = "-i")]
    case_insensitive: Option<bool>,
    #[serde(rename = "-A")]
    after: Option<usize>,
    #[serde(rename = "-B")]
    before: Option<usize>,
    #[serde(rename = "-C")]
    context: Option<usize>,
    multiline: Option<bool>,
    /// Most entries (default 100)
    head_limit: Option<NonZeroUsize>,
    /// Entries to skip
    offset: Option<usize>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum GrepMode {
    FilesWithMatches,
    Content,
    Count,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GlobArgs {
    pattern: String,
    path: Option<String>,
    sort: Option<GlobSort>,
    /// Most entries (default 100)
    head_limit: Option<NonZeroUsize>,
    /// Entries to skip
    offset: Option<usize>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum GlobSort {
    #[serde(alias = "mtime")]
    Modified,
    Path,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    path: String,
    offset: Option<NonZeroUsize>,
    limit: Option<NonZeroUsize>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    path: String,
    old_string: Option<String>,
    new_string: Option<String>,
    replace_all: Option<bool>,
    edits: Option<Vec<ReplacementArgs>>,
    dry_run: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReplacementArgs {
    old_string: String,
    new_string: String,
    replace_all: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BashArgs {
    command: Option<String>,
    cwd: Option<String>,
    timeout: Option<NonZeroU64>,
    background: Option<bool>,
    job: Option<NonZeroU64>,
    kill: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AstArgs {
    pattern: String,
    path: Option<String>,
    lang: Option<String>,
    /// Most entries (default 100)
    head_limit: Option<NonZeroUsize>,
    /// Entries to skip
    offset: Option<usize>,
}

/// The coding tools.
pub(crate) fn tools() -> Vec<Tool> {
    let writes = Effects { writes: Writes::Always, ..Effects::READS };
    let runs = Effects { writes: Writes::Always, executes: true, network: false };
    vec![
        coding(Tool::typed(
            "grep",
            "Regex search of the workspace's files (ripgrep; .gitignore honoured). Paths of matching files by \
             default; content for lines, count per file.",
            |connection, args: GrepArgs| {
                touching(connection, args.path.clone(), |tools| {
                    let context = args.context;
                    let request = GrepRequest {
                        pattern: args.pattern,
                        path: args.path,
                        globs: Strings::of(args.glob),
                        file_type: args.file_type,
                        case_insensitive: args.case_insensitive.unwrap_or(false),
                        output_mode: match args.output_mode {
                            None | Some(GrepMode::FilesWithMatches) => OutputMode::FilesWithMatches,
                            Some(GrepMode::Content) => OutputMode::Content,
                            Some(GrepMode::Count) => OutputMode::Count,
                        },
                        before: args.before.or(context).unwrap_or(0),
                        after: args.after.or(context).unwrap_or(0),
                        multiline: args.multiline.unwrap_or(false),
                        paging: paging(args.head_limit, args.offset),
                    };
                    Ok(tools.grep(&request)?.text)
                })
            },
        ))
        .kind(ActionKind::Search),
        coding(Tool::typed(
            "glob",
            "Files whose path matches a glob (src/**/*.rs), newest first.",
            |connection, args: GlobArgs| {
                touching(connection, args.path.clone(), |tools| {
                    let request = GlobRequest {
                        pattern: args.pattern,
                        path: args.path,
                        order: match args.sort {
                            None | Some(GlobSort::Modified) => GlobOrder::Modified,
                            Some(GlobSort::Path) => GlobOrder::Path,
                        },
                        paging: paging(args.head_limit, args.offset),
                    };
                    Ok(tools.glob(&request)?.text)
                })
            },
        ))
        .kind(ActionKind::Search),
        coding(Tool::typed(
            "read",
            "A text file's lines, numbered; offset is the first line (1-based).",
            |connection, args: ReadArgs| {
                touching(connection, Some(args.path.clone()), |tools| {
                    let request = ReadRequest {
                        path: args.path,
                        offset: args.offset.map(NonZeroUsize::get),
                        limit: args.limit.map(NonZeroUsize::get),
                    };
                    Ok(tools.read(&request)?.text)
                })
            },
        )),
        coding(Tool::typed("write", "Write a whole file (atomic).", |connection, args: WriteArgs| {
            touching(connection, Some(args.path.clone()), |tools| Ok(tools.write(&args.path, &args.content)?.text))
        }))
        .effects(writes),
        coding(Tool::typed(
            "edit",
            "Replace exact text in a file; old_string must be unique unless replace_all. edits: several, all or \
             none. dry_run returns the diff.",
            |connection, args: EditArgs| {
                touching(connection, Some(args.path.clone()), |tools| Ok(tools.edit(&edit_request(args)?)?.text))
            },
        ))
        .effects(writes),
        coding(Tool::typed(
            "bash",
            "Run a shell command in the workspace (timeout in seconds, default 120). background: returns a job \
             id; job: poll it (new output), with kill: stop it.",
            |connection, args: BashArgs| {
                let tools = coding_tools(connection)?;
                let text = match args.job {
                    Some(job) => tools.bash_job(job.get(), args.kill.unwrap_or(false))?.text,
                    None => {
                        let request = BashRequest {
                            command: args.command.ok_or_else(|| CallError::Arguments("command is required".into()))?,
                            cwd: args.cwd,
                            timeout: args.timeout.map(|secs| Duration::from_secs(secs.get())),
                            background: args.background.unwrap_or(false),
                        };
                        tools.bash(&request)?.text
                    }
                };
                Ok(ToolOutput { text, is_error: false })
            },
        ))
        .effects(runs),
        coding(Tool::typed(
            "ast_search",
            "Structural code search with an ast-grep pattern ($X.unwrap(), def $F($$$)): matches with lines \
             and captures. lang: rust, python, javascript, typescript, tsx, go, c, cpp, java.",
            |connection, args: AstArgs| {
                let tools = coding_tools(connection)?;
                let request = AstRequest {
                    pattern: args.pattern,
                    path: args.path,
                    lang: args.lang,
                    paging: paging(args.head_limit, args.offset),
                };
                Ok(ToolOutput { text: tools.ast_search(&request)?.text, is_error: false })
            },
        ))
        .kind(ActionKind::Search),
    ]
}

/// The edit `args` ask for.
fn edit_request(args: EditArgs) -> Result<EditRequest, CallError> {
    let mut edits = Vec::new();
    if let Some(old_string) = args.old_string {
        let new_string = args.new_string.ok_or_else(|| CallError::Arguments("new_string is required".into()))?;
        edits.push(Replacement { old_string, new_string, replace_all: args.replace_all.unwrap_or(false) });
    }
    edits.extend(args.edits.into_iter().flatten().map(|edit| Replacement {
        old_string: edit.old_string,
        new_string: edit.new_string,
        replace_all: edit.replace_all.unwrap_or(false),
    }));
    Ok(EditRequest { path: args.path, edits, dry_run: args.dry_run.unwrap_or(false) })
}

/// The change a `write` or `edit` call would make, worked out without
/// writing; `None` for another tool, arguments that do not parse, or an
/// edit that would fail (the call itself then says why).
pub(crate) fn preview(connection: &Connection, tool: &str, arguments: &JsonObject) -> Option<FileChange> {
    let tools = coding_tools(connection).ok()?;
    let value = serde_json::Value::Object(arguments.clone());
    match tool {
        "write" => {
            let args: WriteArgs = serde_json::from_value(value).ok()?;
            let (path, old_text) = tools.text_of(&args.path).ok()?;
            Some(FileChange { path, old_text, new_text: args.content })
        }
        "edit" => {
            let args: EditArgs = serde_json::from_value(value).ok()?;
            let request = EditRequest { dry_run: true, ..edit_request(args).ok()? };
            let path = tools.jail().resolve(&request.path).ok()?;
            let edited = tools.edit(&request).ok()?;
            Some(FileChange { path, old_text: Some(edited.before), new_text: edited.after })
        }
        _ => None,
    }
}

/// A coding tool: it needs the root and bounds its results itself (by
/// offset and limit).
fn coding(tool: Tool) -> Tool {
    tool.needs(Needs::Root).pages_itself()
}

/// The connection's coding tools.
fn coding_tools(connection: &Connection) -> Result<&Tools, CallError> {
    connection.coding_tools()?.ok_or_else(|| CallError::Arguments("this server has no workspace folder".into()))
}

/// Runs `operation` on the file or folder `path`, then adds the rules of
/// its folders this connection was not shown yet.
fn touching(
    connection: &Connection,
    path: Option<String>,
    operation: impl FnOnce(&Tools) -> Result<String, CallError>,
) -> Result<ToolOutput, CallError> {
    let mut text = operation(coding_tools(connection)?)?;
    text.extend(crate::guidance_tools::nested_rules(connection, &Vec::from_iter(path)));
    Ok(ToolOutput { text, is_error: false })
}
