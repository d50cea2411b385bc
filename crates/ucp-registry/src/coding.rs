//! The coding tools (`grep`, `glob`, `read`, `write`, `edit`, `bash`,
//! `ast_search`) of
//! `ucp-tools` as MCP tools: their schemas, and the translation of a
//! call's arguments into a request. Which tools a server offers is its
//! [`ToolOffer`].

use std::path::PathBuf;
use std::time::Duration;

use crate::ToolDef as Tool;
use serde_json::{json, Value};
use ucp_tools::{
    AstRequest, BashRequest, EditRequest, GlobOrder, GlobRequest, GrepRequest, OutputMode, Paging, ReadRequest,
    Replacement, Sandbox, Tools,
};

use crate::tools::{tool, Arguments};
use crate::CallError;

/// The coding tools' names.
pub const CODING_TOOLS: [&str; 7] = ["grep", "glob", "read", "write", "edit", "bash", "ast_search"];

/// The coding tools that change files or run commands.
pub const WRITING_TOOLS: [&str; 3] = ["write", "edit", "bash"];

/// The coding tools that read or change the files at a path: the rules of
/// that path's folders come with their result.
pub const TOUCHING_TOOLS: [&str; 5] = ["read", "edit", "write", "grep", "glob"];

/// What a server offers every client.
#[derive(Debug, Clone)]
pub struct ToolOffer {
    /// Most tokens of one result.
    pub max_result_tokens: usize,
    /// Folder the coding tools are jailed to; `None` offers none of them.
    pub root: Option<PathBuf>,
    /// The coding tools that write (write, edit, bash) are not offered.
    pub read_only: bool,
    /// Offer only these tools (all when `None`).
    pub only: Option<Vec<String>>,
    /// Run every `bash` command in this OS sandbox.
    pub sandbox: Option<Sandbox>,
    /// The language servers of the LSP tools (offered when set).
    pub lsp: Option<crate::lsp_tools::SharedLsp>,
    /// List only the core tools and `find_tools` (every offered tool can
    /// still be called; see [`crate::discovery`]).
    pub discover: bool,
    /// Folders of skills besides the root's `skills/`, `.agents/skills/`
    /// and `.claude/skills/` (relative to the root, or absolute).
    pub skill_dirs: Vec<PathBuf>,
    /// The agent tools (`task`, `ask_user`) and the models sub-agents are
    /// built from; not offered when `None`.
    pub agents: Option<std::sync::Arc<crate::agents::AgentSetup>>,
    /// Paths the coding tools never write (the store, UCP's configuration);
    /// a sandboxed `bash` sees them read-only.
    pub protected: Vec<PathBuf>,
    /// Environment variables `bash` commands get besides
    /// [`ucp_tools::bash::PASSED_ENV`].
    pub passed_env: Vec<String>,
}

impl ToolOffer {
    /// The document tools alone, results capped at `max_result_tokens`.
    pub fn documents(max_result_tokens: usize) -> Self {
        ToolOffer {
            max_result_tokens,
            root: None,
            read_only: false,
            only: None,
            sandbox: None,
            lsp: None,
            discover: false,
            skill_dirs: Vec::new(),
            agents: None,
            protected: Vec::new(),
            passed_env: Vec::new(),
        }
    }

    /// Whether the tool `name` is offered.
    pub fn offers(&self, name: &str) -> bool {
        if name == "find_tools" {
            return self.discover;
        }
        if crate::agents::AGENT_TOOLS.contains(&name) && self.agents.is_none() {
            return false;
        }
        let on_files = CODING_TOOLS.contains(&name) || crate::guidance_tools::FILE_GUIDANCE_TOOLS.contains(&name);
        if on_files && self.root.is_none() {
            return false;
        }
        let writes = WRITING_TOOLS.contains(&name) || crate::guidance_tools::MEMORY_WRITING_TOOLS.contains(&name);
        if writes && self.read_only {
            return false;
        }
        // Language servers run the project's code (build scripts, macros,
        // plugins) unsandboxed: a read-only or sandboxed server offers none.
        if crate::lsp_tools::LSP_TOOLS.contains(&name)
            && (self.lsp.is_none() || self.read_only || self.sandbox.is_some())
        {
            return false;
        }
        self.only.as_ref().is_none_or(|only| only.iter().any(|o| o == name))
    }

    /// Checks that every tool `only` names exists (among those offered
    /// without `only`, and, when `writing_too`, without `read_only`);
    /// otherwise a message naming it and the tools.
    pub fn check_only(&self, writing_too: bool) -> Result<(), String> {
        let Some(only) = &self.only else { return Ok(()) };
        let read_only = self.read_only && !writing_too;
        let known = crate::tools::list(&ToolOffer { only: None, read_only, ..self.clone() });
        match only.iter().find(|name| !known.iter().any(|t| t.name == name.as_str())) {
            Some(unknown) => {
                let names: Vec<&str> = known.iter().map(|t| t.name.as_ref()).collect();
                Err(format!("no tool {unknown:?} (the tools: {})", names.join(", ")))
            }
            None => Ok(()),
        }
    }

    /// The coding tools over the root, for one client (its background
    /// jobs end with it).
    pub(crate) fn tools(&self, cap: usize) -> Result<Option<Tools>, CallError> {
        let Some(root) = &self.root else { return Ok(None) };
        let tools = Tools::new(root).map_err(|e| CallError::Arguments(e.to_string()))?;
        Ok(Some(
            tools
                .with_max_tokens(cap)
                .with_read_only(self.read_only)
                .with_sandbox(self.sandbox)
                .with_protected(self.protected.iter().cloned())
                .with_passed_env(self.passed_env.clone()),
        ))
    }
}

/// The coding tools' definitions.
pub fn list() -> Vec<Tool> {
    let paging = |mut properties: Value| {
        properties["head_limit"] =
            json!({"type": "integer", "minimum": 1, "description": "Most entries (default 100)"});
        properties["offset"] = json!({"type": "integer", "description": "Entries to skip"});
        properties
    };
    let object = |properties: Value, required: &[&str]| {
        let mut schema = json!({"type": "object", "properties": properties, "additionalProperties": false});
        if !required.is_empty() {
            schema["required"] = json!(required);
        }
        schema
    };
    let text = json!({"type": "string"});
    let flag = json!({"type": "boolean"});
    let lines = json!({"type": "integer"});
    let replacement = json!({"type": "object", "properties": {"old_string": text, "new_string": text, "replace_all": flag},
        "required": ["old_string", "new_string"], "additionalProperties": false});
    vec![
        tool(
            "grep",
            "Regex search of the workspace's files (ripgrep; .gitignore honoured). Paths of matching files by \
             default; content for lines, count per file.",
            object(
                paging(json!({
                    "pattern": text, "path": text,
                    "glob": {"type": ["string", "array"], "items": text, "description": "e.g. *.rs or [\"*.rs\", \"!*.md\"]"},
                    "type": {"type": "string", "description": "ripgrep file type: rust, py, js ..."},
                    "output_mode": {"enum": ["files_with_matches", "content", "count"]},
                    "-i": flag, "-A": lines, "-B": lines, "-C": lines,
                    "multiline": flag
                })),
                &["pattern"],
            ),
            true,
        ),
        tool(
            "glob",
            "Files whose path matches a glob (src/**/*.rs), newest first.",
            object(
                paging(json!({"pattern": text, "path": text, "sort": {"enum": ["modified", "path"]}})),
                &["pattern"],
            ),
            true,
        ),
        tool(
            "read",
            "A text file's lines, numbered; offset is the first line (1-based).",
            object(
                json!({"path": text, "offset": {"type": "integer", "minimum": 1}, "limit": {"type": "integer", "minimum": 1}}),
                &["path"],
            ),
            true,
        ),
        tool(
            "write",
            "Write a whole file (atomic).",
            object(json!({"path": text, "content": text}), &["path", "content"]),
            false,
        ),
        tool(
            "edit",
            "Replace exact text in a file; old_string must be unique unless replace_all. edits: several, all or \
             none. dry_run returns the diff.",
            object(
                json!({"path": text, "old_string": text, "new_string": text, "replace_all": flag,
                       "edits": {"type": "array", "items": replacement}, "dry_run": flag}),
                &["path"],
            ),
            false,
        ),
        tool(
            "bash",
            "Run a shell command in the workspace (timeout in seconds, default 120). background: returns a job \
             id; job: poll it (new output), with kill: stop it.",
            object(
                json!({"command": text, "cwd": text, "timeout": {"type": "integer", "minimum": 1},
                       "background": flag, "job": {"type": "integer", "minimum": 1}, "kill": flag}),
                &[],
            ),
            false,
        ),
        tool(
            "ast_search",
            "Structural code search with an ast-grep pattern ($X.unwrap(), def $F($$$)): matches with lines \
             and captures. lang: rust, python, javascript, typescript, tsx, go, c, cpp, java.",
            object(paging(json!({"pattern": text, "path": text, "lang": text})), &["pattern"]),
            true,
        ),
    ]
}

/// Runs the coding tool `name`; `None` when it is not one.
pub(crate) fn call(tools: &Tools, name: &str, args: &Arguments<'_>) -> Option<Result<String, CallError>> {
    let result = match name {
        "grep" => grep(tools, args),
        "glob" => glob(tools, args),
        "read" => read(tools, args),
        "write" => write(tools, args),
        "edit" => edit(tools, args),
        "bash" => bash(tools, args),
        "ast_search" => ast_search(tools, args),
        _ => return None,
    };
    Some(result)
}

fn paging(args: &Arguments<'_>) -> Result<Paging, CallError> {
    let mut paging = Paging::default();
    if let Some(limit) = args.count("head_limit")? {
        paging.head_limit = usize::try_from(limit).unwrap_or(usize::MAX);
    }
    paging.offset = args.number("offset")?.unwrap_or(0);
    Ok(paging)
}

fn grep(tools: &Tools, args: &Arguments<'_>) -> Result<String, CallError> {
    args.check(&[
        "pattern",
        "path",
        "glob",
        "type",
        "output_mode",
        "-i",
        "-A",
        "-B",
        "-C",
        "multiline",
        "head_limit",
        "offset",
    ])?;
    let context = args.number("-C")?;
    let request = GrepRequest {
        pattern: args.required("pattern")?.to_owned(),
        path: args.string("path")?.map(str::to_owned),
        globs: args.strings("glob")?,
        file_type: args.string("type")?.map(str::to_owned),
        case_insensitive: args.flag("-i")?,
        output_mode: args.string("output_mode")?.map(str::parse::<OutputMode>).transpose()?.unwrap_or_default(),
        before: args.number("-B")?.or(context).unwrap_or(0),
        after: args.number("-A")?.or(context).unwrap_or(0),
        multiline: args.flag("multiline")?,
        paging: paging(args)?,
    };
    Ok(tools.grep(&request)?.text)
}

fn glob(tools: &Tools, args: &Arguments<'_>) -> Result<String, CallError> {
    args.check(&["pattern", "path", "sort", "head_limit", "offset"])?;
    let request = GlobRequest {
        pattern: args.required("pattern")?.to_owned(),
        path: args.string("path")?.map(str::to_owned),
        order: args.string("sort")?.map(str::parse::<GlobOrder>).transpose()?.unwrap_or_default(),
        paging: paging(args)?,
    };
    Ok(tools.glob(&request)?.text)
}

fn read(tools: &Tools, args: &Arguments<'_>) -> Result<String, CallError> {
    args.check(&["path", "offset", "limit"])?;
    let to_usize = |n: Option<u64>| n.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let request = ReadRequest {
        path: args.required("path")?.to_owned(),
        offset: to_usize(args.count("offset")?),
        limit: to_usize(args.count("limit")?),
    };
    Ok(tools.read(&request)?.text)
}

fn write(tools: &Tools, args: &Arguments<'_>) -> Result<String, CallError> {
    args.check(&["path", "content"])?;
    Ok(tools.write(args.required("path")?, args.required("content")?)?.text)
}

fn edit(tools: &Tools, args: &Arguments<'_>) -> Result<String, CallError> {
    args.check(&["path", "old_string", "new_string", "replace_all", "edits", "dry_run"])?;
    let mut edits = Vec::new();
    if let Some(old) = args.string("old_string")? {
        let new = args.required("new_string")?;
        edits.push(Replacement {
            old_string: old.to_owned(),
            new_string: new.to_owned(),
            replace_all: args.flag("replace_all")?,
        });
    }
    for item in args.list("edits")? {
        let item = item.as_object().ok_or_else(|| CallError::Arguments("each of edits is an object".into()))?;
        let item = Arguments(item);
        item.check(&["old_string", "new_string", "replace_all"])?;
        edits.push(Replacement {
            old_string: item.required("old_string")?.to_owned(),
            new_string: item.required("new_string")?.to_owned(),
            replace_all: item.flag("replace_all")?,
        });
    }
    let request = EditRequest { path: args.required("path")?.to_owned(), edits, dry_run: args.flag("dry_run")? };
    Ok(tools.edit(&request)?.text)
}

fn bash(tools: &Tools, args: &Arguments<'_>) -> Result<String, CallError> {
    args.check(&["command", "cwd", "timeout", "background", "job", "kill"])?;
    if let Some(job) = args.count("job")? {
        return Ok(tools.bash_job(job, args.flag("kill")?)?.text);
    }
    let request = BashRequest {
        command: args.required("command")?.to_owned(),
        cwd: args.string("cwd")?.map(str::to_owned),
        timeout: args.count("timeout")?.map(Duration::from_secs),
        background: args.flag("background")?,
    };
    Ok(tools.bash(&request)?.text)
}

fn ast_search(tools: &Tools, args: &Arguments<'_>) -> Result<String, CallError> {
    args.check(&["pattern", "path", "lang", "head_limit", "offset"])?;
    let request = AstRequest {
        pattern: args.required("pattern")?.to_owned(),
        path: args.string("path")?.map(str::to_owned),
        lang: args.string("lang")?.map(str::to_owned),
        paging: paging(args)?,
    };
    Ok(tools.ast_search(&request)?.text)
}
