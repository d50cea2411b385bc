//! `ucp`: the command line. It parses arguments, calls `ucpkit-workspace`
//! (the one API under every front end), and prints; nothing here is needed
//! to use UCP from Rust.

mod acp;
mod agent;
mod code;
mod context;
mod guard;
mod guidance;
mod index;
mod inspect;
mod lsp;
mod mcp;
mod mcp_servers;
mod sandbox;
mod search;
mod session;
mod tools;
mod tui;
mod ucl;

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand, ValueEnum};
use ucpkit_workspace::{Library, LibraryConfig, Workspace, WorkspaceError};

/// UCP: navigate a knowledge graph of documents and code, and build the best
/// context for an LLM under a token budget.
#[derive(Parser)]
#[command(name = "ucp", version, about, propagate_version = true)]
pub(crate) struct Cli {
    /// Store directory (default: ./.ucp), or a PostgreSQL database's URL
    /// (`postgres://user@host:port/db`) shared by many nodes, each keeping
    /// its caches of it under ~/.cache/ucp/stores ($UCP_CACHE_DIR/stores).
    #[arg(long, global = true, env = "UCP_STORE", value_name = "DIR|URL")]
    store: Option<PathBuf>,
    /// Document to work on; may be left out when the store holds one
    /// (`ucp context` takes it more than once: one context over them all).
    #[arg(long = "doc", global = true, value_name = "NAME", action = clap::ArgAction::Append)]
    docs: Vec<String>,
    /// Embedding model directory (model.safetensors, tokenizer.json,
    /// config.json of a model2vec model; `scripts/fetch-model` gets one).
    /// Search becomes hybrid (BM25 + vectors).
    #[arg(long, global = true, env = "UCP_MODEL", value_name = "DIR")]
    model: Option<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// Workspace folder the coding tools (grep, glob, read, write, edit,
    /// bash, and those of `ucp mcp` and `ucp agent`) are jailed to
    /// (default: the current folder, unless it is / or your home folder:
    /// those only when named here).
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Environment variables `bash` commands get besides PATH, HOME, USER,
    /// LOGNAME, SHELL, LANG, LANGUAGE, LC_*, TERM, TZ and TMPDIR
    /// (comma-separated names; nothing else of UCP's environment, such as
    /// tokens and API keys, reaches a command).
    #[arg(long, global = true, env = "UCP_PASS_ENV", value_delimiter = ',', value_name = "NAMES")]
    pass_env: Vec<String>,
    /// Another TOML file of `[mcp_servers.NAME]` sections, for this run
    /// (repeatable; over those of the configuration files).
    #[arg(long, global = true, value_name = "FILE")]
    mcp_config: Vec<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run an agent on a task: a model (from .ucp/config.toml,
    /// ~/.config/ucp/config.toml or the flags) with UCP's own tools,
    /// sub-agents (`task`) and `ask_user`, within a token budget; the
    /// transcript is saved in the store.
    #[command(after_help = "Examples:
  ucp agent \"How do streams handle backpressure?\" --base-url http://127.0.0.1:8080/v1 --llm qwen
  ucp agent \"Now the writable side\" --session research --json
  ucp agent \"Review src/lib.rs\" --type review --api anthropic --llm claude-sonnet-4-5")]
    Agent(agent::AgentArgs),
    /// Serve the agent over the Agent Client Protocol on stdio, for
    /// editors such as Zed: sessions over the editor's folder, its MCP
    /// servers, permission asked before edits and commands.
    #[command(after_help = "Examples:
  ucp acp --base-url http://127.0.0.1:8080/v1 --llm qwen
  ucp acp --api anthropic --llm claude-sonnet-4-5 --read-only
See docs/acp.md for the Zed settings.")]
    Acp(acp::AcpArgs),
    /// Index markdown, HTML, text and source files or folders into the store.
    #[command(after_help = "Examples:
  ucp index docs/                      one document named docs
  ucp index guide.md api/ --name all   both in one document
  ucp index docs/                      again: reads only changed files")]
    Index(index::IndexArgs),
    /// The best context for a question within a token budget: search, then
    /// sub-agents exploring the sections around the hits, then one window.
    #[command(after_help = "Examples:
  ucp context \"How do I read a file line by line?\" --budget 2000
  ucp context \"What does --inspect do?\" --corpus docs/   index first (only what changed)
  ucp --doc api context \"retry policy\" --format short_ids --json")]
    Context(context::ContextArgs),
    /// Answer recall of `ucp context` on a question file, next to flat
    /// chunk baselines, at several budgets.
    #[command(after_help = "Example:
  ucp --doc node eval questions.jsonl --budget 1000,2000,4000")]
    Eval(context::EvalArgs),
    /// Code localization on real issues (SWE-bench style tasks): File@k,
    /// Module@10, Func@10 and whole gold functions in a context, next to a
    /// reference BM25 baseline.
    #[command(after_help = "Example:
  ucp eval-code eval/swe-lite/tasks.jsonl --repos ~/.cache/ucp-eval/swe-lite/repos")]
    EvalCode(code::EvalCodeArgs),
    /// A ranked outline of an indexed repository within a token budget:
    /// files by PageRank over the code graph (personalized to a question or
    /// to files you name), each with its most used symbols' signatures.
    #[command(after_help = "Examples:
  ucp map --budget 2000
  ucp map \"why does save() skip validation\" --budget 1000
  ucp map --file src/db/models.py --json")]
    Map(code::MapArgs),
    /// Ask a language server (started for the file's language) where a
    /// symbol is defined, where it is used, what it is, or a file's outline.
    #[command(after_help = "Examples:
  ucp lsp definition src/app.py 12 8
  ucp lsp references src/lib.rs 40 12 --json
  ucp lsp hover src/app.py 12 8
  ucp lsp symbols src/app.py
  ucp lsp symbols --query Handler src/main.go
  ucp lsp --lsp-config lsp.toml symbols src/app.py   servers named in a TOML file")]
    Lsp(lsp::LspArgs),
    /// Guard rules: check the configured rules (or a rules file) and their
    /// examples, as `ucp agent`, `ucp acp` and `ucp mcp` load them.
    Guard(guard::GuardArgs),
    /// Memory that lasts across sessions: add, search, recent, forget.
    Memory(guidance::MemoryArgs),
    /// The rules (AGENTS.md, CLAUDE.md) under --root that apply to a task
    /// and the paths it touches.
    Rules(guidance::RulesArgs),
    /// The skills (SKILL.md folders) under --root: list them, show one.
    Skills(guidance::SkillsArgs),
    /// Plans, steps and agents as a graph with statuses: add, update,
    /// link, rm, show.
    Plan(guidance::PlanArgs),
    /// Search a document: BM25, or hybrid BM25 + embeddings with --model.
    #[command(after_help = "Examples:
  ucp search \"socket timeout\" --limit 5
  ucp search \"open a file\" --roles paragraph,code --json")]
    Search(search::SearchArgs),
    /// Serve the store to MCP clients (Claude Code, Cursor, Zed ...): over
    /// stdio, or streamable HTTP at /mcp with --http.
    #[command(after_help = "Examples:
  ucp --store ~/notes/.ucp mcp                   stdio, for a client that starts it
  ucp mcp --http localhost:8848 --allow ~/docs   HTTP on loopback; clients may index ~/docs")]
    Mcp(mcp::McpArgs),
    /// The other MCP servers of the configuration (`[mcp_servers.NAME]`):
    /// list them, list their tools, call one.
    #[command(after_help = "Examples:
  ucp mcp-servers list
  ucp mcp-servers tools files --refresh
  ucp mcp-servers call files read_text_file --args '{\"path\": \"/tmp/notes.txt\"}'")]
    McpServers(mcp_servers::McpServersArgs),
    /// Search file contents with a regex (ripgrep's engine), gitignore-aware.
    #[command(after_help = "Examples:
  ucp grep 'fn main'                          files with a match (the cheapest answer)
  ucp grep -i todo src --output-mode content -C 2
  ucp grep unwrap --type rust --output-mode count --head-limit 20 --offset 20")]
    Grep(tools::GrepArgs),
    /// List files matching a glob, newest first.
    #[command(after_help = "Examples:\n  ucp glob 'src/**/*.rs'\n  ucp glob '**/*.md' docs --sort path")]
    Glob(tools::GlobArgs),
    /// Print a text file's lines, numbered.
    #[command(after_help = "Example:\n  ucp read src/main.rs --offset 40 --limit 20")]
    Read(tools::ReadArgs),
    /// Write a whole file atomically (content from --content or stdin).
    #[command(after_help = "Example:\n  echo 'hello' | ucp write notes/hello.txt")]
    Write(tools::WriteArgs),
    /// Replace exact text in a file (unique unless --replace-all).
    #[command(after_help = "Example:\n  ucp edit src/lib.rs --old 'let x = 1;' --new 'let x = 2;' --dry-run")]
    Edit(tools::EditArgs),
    /// Run a shell command in the workspace with a timeout.
    #[command(after_help = "Example:\n  ucp bash 'cargo test -q' --cwd crates/core --timeout 300")]
    Bash(tools::BashArgs),
    /// Structural code search with an ast-grep pattern.
    #[command(after_help = "Examples:
  ucp ast-search '$X.unwrap()' src --lang rust
  ucp ast-search 'def $F($$$)' --lang python --head-limit 20 --json")]
    AstSearch(tools::AstArgs),
    /// List the documents in the store.
    Docs,
    /// Delete a document, with its snapshots, sessions and search index.
    #[command(after_help = "Example:\n  ucp rm old-docs")]
    Rm {
        /// The document.
        name: String,
    },
    /// Rename a document (its snapshots, sessions and search index follow).
    #[command(after_help = "Example:\n  ucp rename docs handbook")]
    Rename {
        /// Its name now.
        old: String,
        /// The name it gets.
        new: String,
    },
    /// Move a store to another backend: every document with its
    /// snapshots, sessions and index records, and every agent transcript,
    /// copied from one store (SQLite folder or PostgreSQL URL) into another.
    #[command(after_help = "Examples:
  ucp store migrate --from .ucp --to postgres://ucp@db.internal/team
  ucp store migrate --from postgres://ucp@db.internal/team --to backup/.ucp")]
    Store {
        #[command(subcommand)]
        action: StoreAction,
    },
    /// Show counts for a document: blocks by role, tokens, edges, depth.
    Stats,
    /// Print the block tree of a document (or of one block).
    #[command(after_help = "Examples:\n  ucp tree --depth 2\n  ucp tree @guide/intro.md --depth 1")]
    Tree {
        /// Block to start from (an id or @label); the root by default.
        id: Option<String>,
        /// How many levels to show below the start (at most 256).
        #[arg(long, default_value_t = 3, value_parser = count_in(0, inspect::MAX_TREE_DEPTH))]
        depth: usize,
    },
    /// Show one block.
    #[command(after_help = "Examples:\n  ucp view blk_0123456789abcdef01234567\n  ucp view @fs.md --mode metadata")]
    View {
        /// The block: a full id (blk_...) or @label.
        id: String,
        /// How much to show.
        #[arg(long, value_enum, default_value_t = ViewMode::Full)]
        mode: ViewMode,
    },
    /// Parse UCL and print its syntax tree as JSON (or as canonical UCL).
    #[command(after_help = "Example:\n  echo 'EDIT @intro SET text = \"Hi\"' | ucp parse --canonical")]
    Parse {
        /// The script; `-` reads standard input.
        #[arg(default_value = "-")]
        file: PathBuf,
        /// Print canonical UCL instead of JSON.
        #[arg(long)]
        canonical: bool,
    },
    /// Run a UCL script against a stored document, in an agent session
    /// (traversal and CTX commands too). Its edits are saved only if the
    /// whole script succeeds, or up to its last COMMIT. With --session, the
    /// session is named and persists, so the next run continues where this
    /// one stopped.
    #[command(after_help = "Examples:
  ucp run edits.ucl
  echo 'SEARCH \"timeouts\"' | ucp run - --session research
  ucp run next.ucl --session research --budget 8000")]
    Run {
        /// The script; `-` reads standard input.
        script: PathBuf,
        /// Run in this named session (created on first use).
        #[arg(long, value_name = "NAME")]
        session: Option<String>,
        /// Context window budget in tokens (sets it for a new session,
        /// changes it for an existing one).
        #[arg(long, value_name = "TOKENS", requires = "session", value_parser = count_in(1, MAX_BUDGET))]
        budget: Option<usize>,
        /// The task the session's relevance is measured against.
        #[arg(long, value_name = "TEXT", requires = "session")]
        task: Option<String>,
    },
    /// A terminal home: the documents' block trees, search, UCL, a context
    /// built by hand within a budget, the agent, memories and sessions,
    /// and a command palette (Ctrl-P) with the model pickers.
    #[command(after_help = "Keys: ? lists them all. Example:\n  ucp tui --doc guide")]
    Tui(tui::TuiArgs),
    /// An interactive UCL prompt in a named session, with history and line
    /// editing.
    #[command(after_help = "Example:\n  ucp shell --session research --task \"how are timers ordered?\"")]
    Shell {
        /// The session (created on first use).
        #[arg(long, value_name = "NAME", default_value = "shell")]
        session: String,
        /// Context window budget in tokens.
        #[arg(long, value_name = "TOKENS", value_parser = count_in(1, MAX_BUDGET))]
        budget: Option<usize>,
        /// The task the session's relevance is measured against.
        #[arg(long, value_name = "TEXT")]
        task: Option<String>,
    },
    /// Import a document written in the UCL document form.
    #[command(after_help = "Example:\n  ucp export --format ucl > doc.ucl && ucp import-ucl doc.ucl --name copy")]
    ImportUcl {
        /// The UCL file; `-` reads standard input.
        file: PathBuf,
        /// Store it under this name (default: the name it carries, or the
        /// file name).
        #[arg(long)]
        name: Option<String>,
    },
    /// Write a document out as markdown, JSON or the UCL document form.
    #[command(
        after_help = "Examples:\n  ucp export --out docs.md\n  ucp export --json > docs.json   (same as --format json)"
    )]
    Export {
        /// Output format (--json means json).
        #[arg(long, value_enum)]
        format: Option<ExportFormat>,
        /// Write to this file instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Print a shell completion script.
    #[command(after_help = "Example:\n  ucp completions bash > ~/.local/share/bash-completion/completions/ucp")]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// A clap parser for a count in `min..=max`: a value out of range gets
/// clap's own error before anything runs, instead of reaching a library
/// that sizes buffers by it.
pub(crate) fn count_in(min: usize, max: usize) -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(min as u64..=max as u64)
}

/// The largest context budget any command accepts.
pub(crate) const MAX_BUDGET: usize = ucpkit_workspace::vocabulary::ContextRequest::MAX_BUDGET;

/// How much of a block `ucp view` shows.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ViewMode {
    /// Id and role.
    Ids,
    /// Id, role, label, tags, tokens, child and edge counts, source.
    Metadata,
    /// Metadata and the first 100 characters.
    Preview,
    /// Metadata and the whole content.
    Full,
    /// Metadata, then the block and everything below it, in order (up to
    /// 8,000 tokens, whole blocks).
    Section,
}

/// What `ucp store` does.
#[derive(Subcommand)]
pub(crate) enum StoreAction {
    /// Copy everything into another store, replacing what it holds under
    /// the same names; run it while no one writes to the source.
    Migrate {
        /// The store to copy (default: --store).
        #[arg(long, value_name = "DIR|URL")]
        from: Option<PathBuf>,
        /// The store to copy into (created when missing).
        #[arg(long, value_name = "DIR|URL")]
        to: PathBuf,
        /// Replace the documents and transcripts the target holds under
        /// the same names (refused otherwise, copying nothing).
        #[arg(long)]
        replace: bool,
    },
}

/// Formats of `ucp export`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ExportFormat {
    /// Markdown text.
    Markdown,
    /// The stable JSON form, every block with its id.
    Json,
    /// The UCL document form (STRUCTURE / BLOCKS / COMMANDS).
    Ucl,
}

impl Cli {
    /// The store's directory; for a store on a database server, this
    /// node's folder for its caches and settings.
    pub(crate) fn store_dir(&self) -> PathBuf {
        LibraryConfig::new(self.store_location()).store_dir
    }

    /// Where the store is: its directory, or its database's URL.
    pub(crate) fn store_location(&self) -> PathBuf {
        self.store.clone().unwrap_or_else(|| PathBuf::from(ucpkit_workspace::vocabulary::DEFAULT_STORE_DIR))
    }

    /// The library over the store as a command line uses it: no rate
    /// limit (a batch, not a server), a progress bar on a terminal.
    /// Without `create`, the store must exist.
    pub(crate) fn library(&self, create: bool) -> anyhow::Result<Library> {
        let config = self.library_config();
        Ok(if create { Library::open(config)? } else { Library::open_existing(config)? })
    }

    /// The one document --doc names (commands other than `ucp context`
    /// refuse more than one before they run).
    pub(crate) fn doc(&self) -> Option<&str> {
        self.docs.first().map(String::as_str)
    }

    /// The configuration [`Cli::library`] opens.
    pub(crate) fn library_config(&self) -> LibraryConfig {
        let mut config = LibraryConfig::new(self.store_location());
        config.document = self.doc().map(str::to_owned);
        config.model = self.model.clone();
        config.limits.max_ops_per_second = u32::MAX;
        // The user's own command line may index any path they name.
        config.allowed_roots = None;
        if std::io::stderr().is_terminal() && !self.json {
            config.sync_progress = Some(Arc::new(search::Bar::new()));
        }
        config
    }

    /// The document --doc names (or the store's only one), loaded, saying
    /// on stderr when its search index had to be built or caught up.
    pub(crate) fn workspace(&self, library: &Library) -> anyhow::Result<Arc<Workspace>> {
        let workspace = library.workspace(&library.default_document()?)?;
        search::announce(&workspace);
        Ok(workspace)
    }
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    if cli.docs.len() > 1 && !matches!(cli.command, Command::Context(_) | Command::Eval(_)) {
        anyhow::bail!("--doc is given {} times: only `ucp context` and `ucp eval` work on several", cli.docs.len());
    }
    match &cli.command {
        Command::Agent(args) => agent::run(cli, args),
        Command::Acp(args) => acp::run(cli, args),
        Command::Index(args) => index::run(cli, args),
        Command::Context(args) => context::context(cli, args),
        Command::Eval(args) => context::eval(cli, args),
        Command::EvalCode(args) => code::eval_code(cli, args),
        Command::Map(args) => code::map(cli, args),
        Command::Lsp(args) => lsp::lsp(cli, args),
        Command::Guard(args) => guard::run(cli, args),
        Command::Memory(args) => guidance::memory(cli, args),
        Command::Rules(args) => guidance::rules(cli, args),
        Command::Skills(args) => guidance::skills(cli, args),
        Command::Plan(args) => guidance::plan(cli, args),
        Command::Search(args) => search::run(cli, args),
        Command::Mcp(args) => mcp::run(cli, args),
        Command::McpServers(args) => mcp_servers::run(cli, args),
        Command::Grep(args) => tools::grep(cli, args),
        Command::Glob(args) => tools::glob(cli, args),
        Command::Read(args) => tools::read(cli, args),
        Command::Write(args) => tools::write(cli, args),
        Command::Edit(args) => tools::edit(cli, args),
        Command::Bash(args) => tools::bash(cli, args),
        Command::AstSearch(args) => tools::ast_search(cli, args),
        Command::Docs => inspect::docs(cli),
        Command::Stats => inspect::stats(cli),
        Command::Tree { id, depth } => inspect::tree(cli, id.as_deref(), *depth),
        Command::View { id, mode } => inspect::view(cli, id, *mode),
        Command::Export { format, out } => {
            let json = cli.json.then_some(ExportFormat::Json);
            inspect::export(cli, format.or(json).unwrap_or(ExportFormat::Markdown), out.as_deref())
        }
        Command::Rm { name } => inspect::remove(cli, name),
        Command::Store { action: StoreAction::Migrate { from, to, replace } } => {
            inspect::migrate(cli, from.as_deref(), to, *replace)
        }
        Command::Rename { old, new } => inspect::rename(cli, old, new),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(*shell, &mut command, "ucp", &mut std::io::stdout());
            Ok(())
        }
        Command::Parse { file, canonical } => ucl::parse(file, *canonical),
        Command::Run { script, session, budget, task } => session::run(
            cli,
            script,
            &session::SessionArgs { name: session.as_deref(), budget: *budget, task: task.as_deref() },
        ),
        Command::Tui(args) => tui::run(cli, args),
        Command::Shell { session, budget, task } => {
            session::shell(cli, &session::SessionArgs { name: Some(session), budget: *budget, task: task.as_deref() })
        }
        Command::ImportUcl { file, name } => ucl::import(cli, file, name.as_deref()),
    }
}

/// With `UCP_LOG` set (`info`, `ucpkit_registry=info`, ... as
/// `tracing_subscriber::EnvFilter` reads it), the log goes to stderr:
/// every tool call the registry ran or refused, with its time, at
/// `info`. Without it nothing is logged.
fn log_to_stderr() {
    let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("UCP_LOG") else { return };
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).init();
}

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("ucp: internal error: {info}; please report this");
    }));
    log_to_stderr();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            use clap::error::ErrorKind;
            if matches!(err.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = err.print();
                return ExitCode::SUCCESS;
            }
            // clap's whole message: which argument, the possible values, a
            // "did you mean", and the subcommand's help to read.
            let rendered = err.render();
            let text = if std::io::stderr().is_terminal() { rendered.ansi().to_string() } else { rendered.to_string() };
            let help = match subcommand_named() {
                Some(name) => format!("'ucp {name} --help'"),
                None => "'ucp --help'".to_owned(),
            };
            eprint!("{}", text.replace("'--help'", &help));
            return ExitCode::from(USAGE_ERROR);
        }
    };
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", error_text(&err));
            match err.downcast_ref::<WorkspaceError>() {
                Some(WorkspaceError::NothingFits { .. }) => ExitCode::from(NOTHING_FITS),
                _ => ExitCode::FAILURE,
            }
        }
    }
}

/// The subcommand the command line names, if any (the first argument
/// that is one).
fn subcommand_named() -> Option<String> {
    let command = <Cli as clap::CommandFactory>::command();
    let names: Vec<&str> = command.get_subcommands().map(clap::Command::get_name).collect();
    std::env::args().skip(1).find(|arg| names.contains(&arg.as_str()))
}

/// The exit code of a command line that does not parse (clap's).
const USAGE_ERROR: u8 = 2;

/// The exit code of `ucp context` when blocks match but none fits the
/// budget.
const NOTHING_FITS: u8 = 3;

/// An error and its causes on one line, each cause once: a cause whose
/// text the message already holds (many errors print their source) is not
/// repeated.
fn error_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let cause = cause.to_string();
        if text.contains(&cause) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&cause);
    }
    text
}

/// Writes `text` to stdout, treating a closed pipe (`ucp ... | head`) as success.
pub(crate) fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// Prints a value as pretty JSON.
pub(crate) fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    print(&text)
}
