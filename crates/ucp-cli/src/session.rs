//! `ucp run --session NAME` and `ucp shell`: UCL in a named agent session
//! whose cursor, history, window and short ids persist in the store.

use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, Context as _};
use serde::Serialize;
use ucm_engine::Engine;
use ucp_agent::{AgentTraversal, GlobalLimits, SessionConfig, SessionId, SessionLimits, Step};
use ucp_search::SearchIndex;
use ucp_store::Store;

use crate::{print, print_json, Cli};

/// A session opened from the store, with what is needed to save it back.
struct Opened {
    store: Store,
    document: String,
    name: String,
    traversal: AgentTraversal,
    session: SessionId,
    version: u64,
    snapshots: Vec<ucm_engine::Snapshot>,
    index: Arc<SearchIndex>,
}

/// Options shared by `run --session` and `shell`.
pub(crate) struct SessionArgs<'a> {
    /// The session's name.
    pub name: &'a str,
    /// New token budget.
    pub budget: Option<usize>,
    /// New task.
    pub task: Option<&'a str>,
}

fn open(cli: &Cli, args: &SessionArgs) -> anyhow::Result<Opened> {
    let store = Store::open_existing(cli.store_dir())?;
    let document = store.resolve_name(cli.doc.as_deref())?;
    let doc = store.load_document(&document)?;
    let snapshots = store.load_snapshots(&document)?;
    let version = doc.version();
    // A command-line run is a batch, not a server: no rate limit.
    let limits = GlobalLimits { max_ops_per_second: u32::MAX, ..GlobalLimits::default() };
    let (index, _) = crate::search::open_index(cli, store.dir(), &doc, true)?;
    let index = Arc::new(index);
    let mut traversal = AgentTraversal::with_limits(Engine::with_snapshots(doc, snapshots.clone()), limits);
    traversal.set_search(index.clone());
    let session = match store.load_session(&document, args.name)? {
        Some(json) => {
            let record = serde_json::from_str(&json)
                .with_context(|| format!("session {:?} of {document} is damaged", args.name))?;
            let id = traversal.restore_session(record)?;
            if let Some(budget) = args.budget {
                traversal.set_budget(id, budget)?;
            }
            id
        }
        None => {
            let mut limits = SessionLimits::default();
            if let Some(budget) = args.budget {
                limits.max_context_tokens = budget;
            }
            traversal.create_session(SessionConfig {
                name: Some(args.name.to_owned()),
                task: args.task.map(str::to_owned),
                limits,
                ..SessionConfig::default()
            })?
        }
    };
    if let Some(task) = args.task {
        traversal.set_task(session, Some(task))?;
    }
    Ok(Opened { store, document, name: args.name.to_owned(), traversal, session, version, snapshots, index })
}

impl Opened {
    /// Saves the session, and the document when an edit changed it, in one
    /// transaction.
    fn save(&mut self) -> anyhow::Result<()> {
        let record = self.traversal.with_session(self.session, |s| s.record())?;
        let json = serde_json::to_string(&record)?;
        let engine = self.traversal.engine();
        let snapshots: Vec<_> = engine.snapshots().cloned().collect();
        let changed = engine.document().version() != self.version || snapshots != self.snapshots;
        let document = changed.then(|| (engine.document(), snapshots.as_slice()));
        self.store.save_session(&self.document, &self.name, &json, document)?;
        if changed {
            self.index.sync(engine.document())?;
            self.version = engine.document().version();
            self.snapshots.clone_from(&snapshots);
        }
        Ok(())
    }
}

/// One command's report in `--json` output.
#[derive(Serialize)]
struct JsonStep<'a> {
    line: usize,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Step>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'static str>,
}

pub(crate) fn run(cli: &Cli, script: &Path, args: &SessionArgs) -> anyhow::Result<()> {
    let source = crate::ucl::read_source(script)?;
    crate::ucl::parse_or_report(&source)?;
    let mut opened = open(cli, args)?;
    let report = opened.traversal.run_script(opened.session, &source)?;
    opened.save()?;
    if cli.json {
        let steps: Vec<JsonStep> = report
            .steps
            .iter()
            .map(|s| JsonStep {
                line: s.line,
                text: &s.text,
                result: s.result.as_ref().ok(),
                error: s.result.as_ref().err().map(ToString::to_string),
                code: s.result.as_ref().err().map(ucp_agent::AgentError::code),
            })
            .collect();
        print_json(&serde_json::json!({
            "document": opened.document,
            "session": opened.name,
            "ok": report.ok(),
            "steps": steps,
        }))?;
    } else {
        let mut out = String::new();
        for step in &report.steps {
            if let Ok(done) = &step.result {
                out.push_str(&format!("{}: {done}\n", step.line));
            }
        }
        print(&out)?;
    }
    match report.steps.iter().find_map(|s| s.result.as_ref().err().map(|e| (s, e))) {
        None => Ok(()),
        Some((step, error)) => Err(anyhow!(
            "line {}, column {}: {} failed [{}]: {error}; the commands before it took effect and the session was saved",
            step.line,
            step.column,
            step.text,
            error.code()
        )),
    }
}

pub(crate) fn shell(cli: &Cli, args: &SessionArgs) -> anyhow::Result<()> {
    use rustyline::error::ReadlineError;

    let mut opened = open(cli, args)?;
    let mut editor = rustyline::DefaultEditor::new().context("cannot start the line editor")?;
    let history = cli.store_dir().join("shell_history");
    let _ = editor.load_history(&history);
    eprintln!(
        "ucp shell on {} (session {}): UCL commands, `.help`, `.quit`; Ctrl-D leaves",
        opened.document, opened.name
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
        match opened.traversal.run_script(opened.session, &source) {
            Err(ucp_agent::AgentError::Parse(rendered)) => eprint!("{rendered}"),
            Err(e) => eprintln!("error [{}]: {e}", e.code()),
            Ok(report) => {
                for step in &report.steps {
                    match &step.result {
                        Ok(done) => println!("{done}"),
                        Err(e) => eprintln!("error [{}]: {e}", e.code()),
                    }
                }
                opened.save()?;
            }
        }
    }
    let _ = editor.save_history(&history);
    opened.save()
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
