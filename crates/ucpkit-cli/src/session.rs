//! `ucp run` and `ucp shell`: UCL in an agent session of a stored document;
//! a named session's cursor, history, window and short ids persist in the
//! store, so the next run continues where this one stopped.

use std::path::Path;

use anyhow::{anyhow, Context as _};
use ucpkit_workspace::vocabulary::AgentError;
use ucpkit_workspace::{Followed, Library, LibraryConfig, NewSession, SessionHandle, WorkspaceError};

use crate::{print, print_json, Cli};

/// Options of `run` and `shell`.
pub(crate) struct SessionArgs<'a> {
    /// The session's name; an unnamed one lasts for the run.
    pub name: Option<&'a str>,
    /// New token budget.
    pub budget: Option<usize>,
    /// New task.
    pub task: Option<&'a str>,
}

/// Times `ucp run` runs a script when other writers keep changing the
/// document under it.
const REPLAYS: usize = 16;

/// The library and the session a shell works in (it follows the store).
fn open(cli: &Cli, args: &SessionArgs) -> anyhow::Result<(Library, SessionHandle)> {
    let library = cli.library(false)?;
    let workspace = cli.workspace(&library)?;
    let options = NewSession { budget: args.budget, task: args.task.map(str::to_owned), ..NewSession::default() };
    let handle = SessionHandle::open(&library, workspace, args.name, &options).map_err(|e| match e {
        WorkspaceError::Damaged(why) => anyhow!("session {:?} is damaged: {why}", args.name.unwrap_or("")),
        other => other.into(),
    })?;
    Ok((library, handle))
}

pub(crate) fn run(cli: &Cli, script: &Path, args: &SessionArgs) -> anyhow::Result<()> {
    let source = crate::ucl::read_source(script)?;
    crate::ucl::parse_or_report(&source)?;
    // An edit by id counts no token: the tables are built only if needed.
    let library = Library::open_existing(LibraryConfig { warm_tokenizer: false, ..cli.library_config() })?;
    let name = library.default_document()?;
    let options = NewSession { budget: args.budget, task: args.task.map(str::to_owned), ..NewSession::default() };
    // Another writer in between: the script runs again on the document as
    // it is then (scripts replay), a few times before giving up.
    let (workspace, _, run) =
        library.run_script_replayed(&name, args.name, &options, &source, REPLAYS).map_err(|e| match e {
            WorkspaceError::Damaged(why) => {
                anyhow!("session {:?} of {name} is damaged: {why}", args.name.unwrap_or(""))
            }
            other => other.into(),
        })?;
    crate::search::announce(&workspace);
    if cli.json {
        let mut report = run.to_json();
        report["document"] = workspace.name().into();
        if let Some(name) = args.name {
            report["session"] = name.into();
        }
        print_json(&report)?;
    } else {
        print(&run.transcript())?;
    }
    match run.failure() {
        Some(failure) => Err(anyhow!("{failure}")),
        None => {
            if !cli.json {
                let saved = if run.written { "saved" } else { "unchanged" };
                eprintln!("ucp: {} command(s) run on {}; {saved}", run.report.steps.len(), workspace.name());
            }
            Ok(())
        }
    }
}

pub(crate) fn shell(cli: &Cli, args: &SessionArgs) -> anyhow::Result<()> {
    use rustyline::error::ReadlineError;

    let (library, mut session) = open(cli, args)?;
    let mut editor = rustyline::DefaultEditor::new().context("cannot start the line editor")?;
    let history = cli.store_dir().join("shell_history");
    let _ = editor.load_history(&history);
    eprintln!(
        "ucp shell on {} (session {}): UCL commands, `.help`, `.quit`; Ctrl-D leaves",
        session.workspace().name(),
        args.name.unwrap_or("unnamed")
    );
    let mut pending = String::new();
    loop {
        let prompt = if pending.is_empty() { "ucl> " } else { "...> " };
        let line = match editor.readline(prompt) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                pending.clear();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        };
        match line.trim() {
            ".quit" | ".exit" if pending.is_empty() => break,
            ".help" if pending.is_empty() => {
                eprintln!("{}", HELP);
                continue;
            }
            _ => {}
        }
        pending.push_str(&line);
        pending.push('\n');
        if !balanced(&pending) {
            continue;
        }
        let source = std::mem::take(&mut pending);
        if source.trim().is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(source.trim_end());
        if session.current(&library)? == Followed::Changed {
            // Another process wrote the document: the session goes on with
            // it as it is now (a named one as last saved).
            let name = session.workspace().name();
            eprintln!("ucp: {name} was changed by another writer; continuing with it as it is now");
        }
        match library.run_script(session.workspace(), session.id(), &source) {
            Err(WorkspaceError::Agent(AgentError::Parse { rendered, .. })) => eprint!("{rendered}"),
            Err(e) => eprintln!("error: {e}"),
            Ok(run) => {
                print(&run.transcript())?;
                if let Some(failure) = run.failure() {
                    eprintln!("error: {failure}");
                }
            }
        }
    }
    let _ = editor.save_history(&history);
    library.save_session(session.workspace(), session.id())?;
    Ok(())
}

/// Whether brackets and quotes are closed, so the input can be run.
fn balanced(text: &str) -> bool {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '{' | '[' | '(' => depth += 1,
                '}' | ']' | ')' => depth -= 1,
                _ => {}
            },
        }
    }
    depth <= 0 && quote.is_none()
}

const HELP: &str = "Traversal: GOTO id | BACK [n] | EXPAND id DOWN|UP|BOTH|SEMANTIC [DEPTH=n] [MODE=m] [TOKENS=n]
           FOLLOW id type[,type] [target] | PATH a TO b [MAX=n] | FIND [ROLE=r] [TAG=t] [LABEL=l] [PATTERN=\"re\"]
           VIEW id [MODE=full|preview|metadata|ids|adaptive] | VIEW NEIGHBORHOOD [DEPTH=n] | SEARCH \"query\"
Context:   CTX ADD id [REASON=r] [RELEVANCE=x] | CTX ADD RESULTS | CTX ADD CHILDREN id | CTX ADD PATH a TO b
           CTX REMOVE id | CTX CLEAR | CTX EXPAND UP|DOWN|SEMANTIC|AUTO [DEPTH=n] [TOKENS=n]
           CTX COMPRESS METHOD=TRUNCATE|SUMMARIZE|STRUCTURE_ONLY | CTX PRUNE [MIN_RELEVANCE=x] [MAX_AGE=s]
           CTX RENDER [FORMAT=DEFAULT|SHORT_IDS|MARKDOWN] | CTX STATS | CTX FOCUS id|CLEAR
Edits:     EDIT, APPEND, MOVE, DELETE, LINK, UNLINK, PRUNE, FOLD, SNAPSHOT, ATOMIC { ... } (see docs/ucl.md)
Ids:       blk_..., @label, or the short numbers CTX RENDER FORMAT=SHORT_IDS printed";

#[cfg(test)]
mod tests {
    use super::balanced;

    #[test]
    fn input_continues_until_brackets_and_quotes_close() {
        assert!(balanced("GOTO blk_1\n"));
        assert!(!balanced("ATOMIC {\n"));
        assert!(balanced("ATOMIC {\n EDIT @a SET text = \"}\"\n}\n"));
        assert!(!balanced("APPEND @a text :: \"open\n"));
    }
}
