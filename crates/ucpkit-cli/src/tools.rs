//! `ucp grep`, `glob`, `read`, `write`, `edit`, `bash` and `ast-search`: the coding
//! tools of `ucpkit-tools` over the workspace root (`--root`), their flags
//! mirroring the MCP tools' parameters.

use std::io::Read as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use ucpkit_registry::parts::files::{
    AstRequest, BashRequest, EditRequest, GlobOrder, GlobRequest, GrepRequest, OutputMode, Paging, ReadRequest,
    Replacement, Sandbox, Tools,
};

use crate::{print, print_json, Cli};

/// Paging flags shared by grep and glob.
#[derive(clap::Args)]
pub(crate) struct PagingArgs {
    /// Most entries to show.
    #[arg(long, default_value_t = ucpkit_registry::parts::files::DEFAULT_HEAD_LIMIT, value_parser = crate::count_in(1, 100_000_000))]
    head_limit: usize,
    /// Entries to skip (the footer of a cut answer names the next offset).
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// Most tokens of the answer (it is cut between entries).
    #[arg(long, default_value_t = ucpkit_registry::parts::files::DEFAULT_MAX_TOKENS, value_parser = crate::count_in(256, usize::MAX))]
    max_tokens: usize,
}

impl PagingArgs {
    fn paging(&self) -> Paging {
        Paging { offset: self.offset, head_limit: self.head_limit }
    }
}

/// `--output-mode` of `ucp grep`.
#[derive(Clone, Copy, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub(crate) enum GrepMode {
    /// Paths of files with a match.
    FilesWithMatches,
    /// Matching lines with numbers and context.
    Content,
    /// Matching lines per file.
    Count,
}

/// Arguments of `ucp grep`.
#[derive(clap::Args)]
pub(crate) struct GrepArgs {
    /// The regex (ripgrep's syntax).
    pattern: String,
    /// File or folder to search (default: the root).
    path: Option<String>,
    /// What to list.
    #[arg(long, value_enum, default_value_t = GrepMode::FilesWithMatches)]
    output_mode: GrepMode,
    /// Only files matching this glob; `!` excludes (repeatable).
    #[arg(long)]
    glob: Vec<String>,
    /// Only files of this ripgrep type (rust, py, js, md ...).
    #[arg(long = "type", value_name = "TYPE")]
    file_type: Option<String>,
    /// Match without regard to case.
    #[arg(short = 'i', long)]
    ignore_case: bool,
    /// Context lines after each match (content mode).
    #[arg(short = 'A', value_name = "N", default_value_t = 0)]
    after: usize,
    /// Context lines before each match (content mode).
    #[arg(short = 'B', value_name = "N", default_value_t = 0)]
    before: usize,
    /// Context lines around each match (content mode).
    #[arg(short = 'C', value_name = "N")]
    context: Option<usize>,
    /// Matches may span lines; `.` matches a newline.
    #[arg(short = 'U', long)]
    multiline: bool,
    #[command(flatten)]
    paging: PagingArgs,
}

/// Arguments of `ucp glob`.
#[derive(clap::Args)]
pub(crate) struct GlobArgs {
    /// The pattern, e.g. 'src/**/*.rs'.
    pattern: String,
    /// Folder to search (default: the root).
    path: Option<String>,
    /// Order: newest first, or by path.
    #[arg(long, value_enum, default_value_t = SortArg::Modified)]
    sort: SortArg,
    #[command(flatten)]
    paging: PagingArgs,
}

/// `--sort` of `ucp glob`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum SortArg {
    /// Most recently modified first.
    Modified,
    /// By path.
    Path,
}

/// Arguments of `ucp read`.
#[derive(clap::Args)]
pub(crate) struct ReadArgs {
    /// The file.
    file: String,
    /// First line (1-based).
    #[arg(long)]
    offset: Option<usize>,
    /// Most lines.
    #[arg(long)]
    limit: Option<usize>,
}

/// Arguments of `ucp write`.
#[derive(clap::Args)]
pub(crate) struct WriteArgs {
    /// The file to write (whole).
    file: String,
    /// The content; standard input when left out.
    #[arg(long)]
    content: Option<String>,
}

/// Arguments of `ucp edit`.
#[derive(clap::Args)]
pub(crate) struct EditArgs {
    /// The file to edit.
    file: String,
    /// Exact text to replace (must occur once unless --replace-all).
    #[arg(long)]
    old: String,
    /// Text to put in its place.
    #[arg(long)]
    new: String,
    /// Replace every occurrence.
    #[arg(long)]
    replace_all: bool,
    /// Print the unified diff and write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Arguments of `ucp ast-search`.
#[derive(clap::Args)]
pub(crate) struct AstArgs {
    /// The ast-grep pattern, e.g. '$X.unwrap()' or 'def $F($$$)'.
    pattern: String,
    /// File or folder to search (default: the root).
    path: Option<String>,
    /// The language: rust, python, javascript, typescript, tsx, go, c,
    /// cpp, java (default: each file's, by extension).
    #[arg(long)]
    lang: Option<String>,
    #[command(flatten)]
    paging: PagingArgs,
}

/// Arguments of `ucp bash`.
#[derive(clap::Args)]
pub(crate) struct BashArgs {
    /// The command line, run by `bash -c`.
    command: String,
    /// Working folder (default: the root).
    #[arg(long)]
    cwd: Option<String>,
    /// Seconds before the command and its children are killed.
    #[arg(long, default_value_t = ucpkit_registry::parts::files::bash::DEFAULT_TIMEOUT.as_secs() as usize, value_parser = crate::count_in(1, 86_400))]
    timeout: usize,
    /// Run it in the OS sandbox: writes only under the root, /tmp and
    /// /dev, and no network (Landlock and a network namespace).
    #[arg(long)]
    sandbox: bool,
}

impl Cli {
    /// The tools over `--root` (default: the current folder), never
    /// writing the store or UCP's configuration.
    fn tools(&self) -> anyhow::Result<Tools> {
        Ok(Tools::new(self.tools_root()?)?
            .with_max_bash_timeout(Duration::from_secs(86_400))
            .with_protected(self.protected_paths())
            .with_passed_env(self.pass_env.clone()))
    }

    /// The coding tools' root: `--root`, else the current folder, refused
    /// when it is the filesystem's root or the home folder (the tools
    /// would reach all of it: only a `--root` naming it opens it).
    pub(crate) fn tools_root(&self) -> anyhow::Result<PathBuf> {
        if let Some(root) = &self.root {
            return Ok(root.clone());
        }
        let current = std::env::current_dir().context("the current folder")?;
        if let Some(what) = ucpkit_registry::parts::files::broad_folder(&current) {
            anyhow::bail!(
                "the current folder {} is {what}: the coding tools would reach all of it; pass --root {} \
                 to use it anyway, or run ucp in a project folder",
                current.display(),
                current.display()
            );
        }
        Ok(PathBuf::from("."))
    }

    /// The coding tools' root for a server or an agent, or why there is
    /// none: in / or the home folder, unless --root names it, it works
    /// without the coding tools, rules and skills.
    pub(crate) fn optional_root(&self) -> (Option<PathBuf>, Option<String>) {
        match self.tools_root() {
            Ok(root) => (Some(root), None),
            Err(why) => (None, Some(why.to_string())),
        }
    }

    /// Checks the tools `flag` names in `offer` (writing ones too, when
    /// `writing_too`), saying why when the root is off; then says on
    /// stderr, as `program`, that the root is off.
    pub(crate) fn checked_offer(
        offer: &ucpkit_registry::ToolOffer,
        unrooted: Option<&str>,
        flag: &str,
        writing_too: bool,
        program: &str,
    ) -> anyhow::Result<()> {
        if let Err(e) = offer.check_only(writing_too) {
            match unrooted {
                Some(why) => anyhow::bail!("{flag}: {e}: {why}"),
                None => anyhow::bail!("{flag}: {e}"),
            }
        }
        if let Some(why) = unrooted {
            eprintln!("{program}: {why}; the coding tools, rules and skills are not offered");
        }
        Ok(())
    }

    /// What the tools never write: the store, and the configuration files
    /// UCP reads (their folder).
    pub(crate) fn protected_paths(&self) -> Vec<PathBuf> {
        let store = self.store_dir();
        let mut paths = vec![store.clone()];
        let configs = ucpkit_registry::parts::llm::Config::files(Some(&store));
        paths.extend(configs.iter().filter_map(|file| file.parent()).filter(|d| *d != store).map(PathBuf::from));
        paths
    }
}

/// Prints a tool result: its text, or all of it as JSON.
fn show<T: serde::Serialize>(cli: &Cli, result: &T, text: &str) -> anyhow::Result<()> {
    if cli.json {
        print_json(result)
    } else {
        print(text)
    }
}

pub(crate) fn grep(cli: &Cli, args: &GrepArgs) -> anyhow::Result<()> {
    let request = GrepRequest {
        pattern: args.pattern.clone(),
        path: args.path.clone(),
        globs: args.glob.clone(),
        file_type: args.file_type.clone(),
        case_insensitive: args.ignore_case,
        output_mode: match args.output_mode {
            GrepMode::FilesWithMatches => OutputMode::FilesWithMatches,
            GrepMode::Content => OutputMode::Content,
            GrepMode::Count => OutputMode::Count,
        },
        before: args.context.unwrap_or(args.before),
        after: args.context.unwrap_or(args.after),
        multiline: args.multiline,
        paging: args.paging.paging(),
    };
    let result = cli.tools()?.with_max_tokens(args.paging.max_tokens).grep(&request)?;
    show(cli, &result, &result.text)
}

pub(crate) fn glob(cli: &Cli, args: &GlobArgs) -> anyhow::Result<()> {
    let request = GlobRequest {
        pattern: args.pattern.clone(),
        path: args.path.clone(),
        order: match args.sort {
            SortArg::Modified => GlobOrder::Modified,
            SortArg::Path => GlobOrder::Path,
        },
        paging: args.paging.paging(),
    };
    let result = cli.tools()?.with_max_tokens(args.paging.max_tokens).glob(&request)?;
    show(cli, &result, &result.text)
}

pub(crate) fn ast_search(cli: &Cli, args: &AstArgs) -> anyhow::Result<()> {
    let request = AstRequest {
        pattern: args.pattern.clone(),
        path: args.path.clone(),
        lang: args.lang.clone(),
        paging: args.paging.paging(),
    };
    let result = cli.tools()?.with_max_tokens(args.paging.max_tokens).ast_search(&request)?;
    show(cli, &result, &result.text)
}

pub(crate) fn read(cli: &Cli, args: &ReadArgs) -> anyhow::Result<()> {
    let request = ReadRequest { path: args.file.clone(), offset: args.offset, limit: args.limit };
    let result = cli.tools()?.read(&request)?;
    show(cli, &result, &result.text)
}

pub(crate) fn write(cli: &Cli, args: &WriteArgs) -> anyhow::Result<()> {
    let content = match &args.content {
        Some(content) => content.clone(),
        None => {
            let mut content = String::new();
            std::io::stdin().read_to_string(&mut content)?;
            content
        }
    };
    let result = cli.tools()?.write(&args.file, &content)?;
    show(cli, &result, &result.text)
}

pub(crate) fn edit(cli: &Cli, args: &EditArgs) -> anyhow::Result<()> {
    let request = EditRequest {
        path: args.file.clone(),
        edits: vec![Replacement {
            old_string: args.old.clone(),
            new_string: args.new.clone(),
            replace_all: args.replace_all,
        }],
        dry_run: args.dry_run,
    };
    let result = cli.tools()?.edit(&request)?;
    show(cli, &result, &result.text)
}

/// Runs a command; one that does not exit with 0 fails `ucp bash` too.
pub(crate) fn bash(cli: &Cli, args: &BashArgs) -> anyhow::Result<()> {
    let request = BashRequest {
        command: args.command.clone(),
        cwd: args.cwd.clone(),
        timeout: Some(Duration::from_secs(args.timeout as u64)),
        background: false,
    };
    let sandbox = args.sandbox.then_some(Sandbox { network: false, scratch: None, hidden: None });
    let result = cli.tools()?.with_sandbox(sandbox).bash(&request)?;
    show(cli, &result, &result.text)?;
    match result.status {
        ucpkit_registry::parts::files::JobStatus::Exited { code: 0 } => Ok(()),
        _ => anyhow::bail!("the command did not succeed ({})", result.text.lines().last().unwrap_or_default()),
    }
}
