//! The context builder: a question and a budget give the `ucp context`
//! window; blocks are then added and removed by hand in a session of the
//! document's, whose window the view shows from then on (rendered as the
//! session counts it, every block under its id, so the budget holds
//! exactly), and which can be saved under a name for `ucp shell
//! --session` (or an agent) to take up.

use ucpkit_registry::vocabulary::{outline, printable, BlockId, BuiltContext, Document, Reply};
use ucpkit_workspace::{ContextOptions, Followed, Library, NewSession, SessionHandle};

use crate::input::Field;

/// One block of the window, with where it came from and why it is in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WindowBlock {
    /// Its id.
    pub(crate) id: String,
    /// Its file and lines, else its heading path.
    pub(crate) whence: String,
    /// Why it is in: relevance and how it is shown (and the window's
    /// reason, once edited by hand).
    pub(crate) why: String,
    /// Its tokens in the window.
    pub(crate) tokens: usize,
    /// How relevant it was judged (0..1).
    pub(crate) relevance: f64,
}

/// The window the builder shows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WindowView {
    /// The document it is over.
    pub(crate) document: String,
    /// The question.
    pub(crate) question: String,
    /// The rendered context, exactly as an agent gets it.
    pub(crate) text: String,
    /// Its tokens (exact, o200k).
    pub(crate) tokens: usize,
    /// The budget.
    pub(crate) budget: usize,
    /// Its blocks in document order.
    pub(crate) blocks: Vec<WindowBlock>,
    /// It was changed by hand (it is the session's window).
    pub(crate) by_hand: bool,
}

impl WindowView {
    /// The view of a built context.
    pub(crate) fn of(document: &str, question: &str, built: &BuiltContext) -> WindowView {
        let blocks = built
            .blocks
            .iter()
            .map(|b| {
                let whence = match (&b.file, b.lines) {
                    (Some(file), Some([from, to])) => format!("{file}:{from}-{to}"),
                    (Some(file), None) => file.clone(),
                    _ => b.heading_path.join(" > "),
                };
                WindowBlock {
                    id: b.id.to_string(),
                    whence,
                    why: format!("relevance {:.2} · {}", b.relevance, b.representation.as_str()),
                    tokens: b.tokens,
                    relevance: b.relevance,
                }
            })
            .collect();
        WindowView {
            document: document.to_owned(),
            question: question.to_owned(),
            text: built.text.clone(),
            tokens: built.tokens,
            budget: built.budget,
            blocks,
            by_hand: false,
        }
    }
}

/// A change made by hand.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// Add a block (a full id).
    Add(String),
    /// Remove a block.
    Remove(String),
    /// Render again, changing nothing.
    Render,
}

/// Which field of the builder takes the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Focus {
    /// The question.
    Question,
    /// The budget.
    Budget,
    /// The window's block list.
    Blocks,
}

/// The builder's state.
pub(crate) struct Builder {
    /// The question typed.
    pub(crate) question: Field,
    /// The budget typed.
    pub(crate) budget: Field,
    /// What takes the keys.
    pub(crate) focus: Focus,
    /// The window shown.
    pub(crate) view: Option<WindowView>,
    /// The block under the list's cursor.
    pub(crate) cursor: usize,
    /// The latest job's number: an older job's answer is dropped.
    pub(crate) ticket: u64,
    /// The session holding the window once edited by hand (out with a
    /// job while one runs).
    pub(crate) session: Option<SessionHandle>,
    /// The name being typed to save the window as, when asked.
    pub(crate) save_as: Option<Field>,
    /// Lines the rendered context is scrolled down.
    pub(crate) text_scroll: u16,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            question: Field::default(),
            budget: Field::with(&ucpkit_workspace::DEFAULT_BUDGET.to_string()),
            focus: Focus::Question,
            view: None,
            cursor: 0,
            ticket: 0,
            session: None,
            save_as: None,
            text_scroll: 0,
        }
    }
}

impl Builder {
    /// The budget typed, checked.
    pub(crate) fn budget(&self) -> Result<usize, String> {
        let text = self.budget.text();
        let budget: usize = text.trim().parse().map_err(|_| format!("the budget {text:?} is not a number"))?;
        if !(ucpkit_workspace::MIN_BUDGET..=1_000_000).contains(&budget) {
            return Err(format!("the budget must lie between {} and 1000000 tokens", ucpkit_workspace::MIN_BUDGET));
        }
        Ok(budget)
    }

    /// The block under the cursor.
    pub(crate) fn current(&self) -> Option<&WindowBlock> {
        self.view.as_ref().and_then(|v| v.blocks.get(self.cursor))
    }

    /// Moves the list's cursor.
    pub(crate) fn move_by(&mut self, delta: isize) {
        let len = self.view.as_ref().map_or(0, |v| v.blocks.len());
        self.cursor = self.cursor.saturating_add_signed(delta).min(len.saturating_sub(1));
    }

    /// Takes a new view, keeping the cursor in it.
    pub(crate) fn show(&mut self, view: WindowView) {
        self.cursor = self.cursor.min(view.blocks.len().saturating_sub(1));
        self.text_scroll = 0;
        self.view = Some(view);
    }
}

/// Builds the context for `question` in `document` within `budget`: what
/// `ucp context` answers.
pub(crate) fn build(library: &Library, document: &str, question: &str, budget: usize) -> Result<WindowView, String> {
    let options = ContextOptions { budget, ..ContextOptions::new(question) };
    let built = library.context_in(Some(document), &options).map_err(|e| e.to_string())?;
    Ok(WindowView::of(document, question, &built))
}

/// Applies `change` to the window of `view` in `session` (a new one over
/// the document, holding `view`'s blocks, when `None`) and reads the
/// window back. The session is returned whatever happened.
pub(crate) fn edit(
    library: &Library,
    session: Option<SessionHandle>,
    view: &WindowView,
    change: &Change,
) -> (Option<SessionHandle>, Result<WindowView, String>) {
    let mut session = match session {
        Some(session) => session,
        None => match seeded(library, view) {
            Ok(session) => session,
            Err(e) => return (None, Err(e)),
        },
    };
    match session.current(library) {
        Ok(Followed::Same) => {}
        // Another writer changed the document, or the session was closed
        // to make room: a new one holds the window shown.
        Ok(Followed::Changed | Followed::Reopened) => {
            let _ = session.close(library);
            session = match seeded(library, view) {
                Ok(session) => session,
                Err(e) => return (None, Err(e)),
            };
        }
        Err(e) => return (Some(session), Err(e.to_string())),
    }
    let script = match change {
        Change::Add(id) => format!("CTX ADD {id} REASON=user_preference\n"),
        // A block the session's window could not hold is out already.
        Change::Remove(id) if in_window(&session, id) => format!("CTX REMOVE {id}\n"),
        Change::Remove(_) | Change::Render => String::new(),
    };
    let result = (|| {
        if !script.is_empty() {
            run(library, &session, &script)?;
        }
        window_of(library, &session, view)
    })();
    (Some(session), result)
}

/// Saves the blocks of `view` as the named session `name` of its document
/// (made, or replaced), for `ucp shell --session NAME` to take up. The
/// window is worked out in an unnamed session first, then written to the
/// named one in one script: the stored session is the old one or the new
/// one, never half of one.
pub(crate) fn save(library: &Library, view: &WindowView, name: &str) -> Result<String, String> {
    let draft = seeded(library, view)?;
    let kept = window_of(library, &draft, view);
    let _ = draft.close(library);
    let kept = kept?;
    let session = session_over(library, view, Some(name))?;
    let script = std::iter::once("CTX CLEAR\n".to_owned())
        .chain(by_relevance(&kept).into_iter().map(add_line))
        .collect::<String>();
    let written = run(library, &session, &script);
    let closed = session.close(library).map_err(|e| e.to_string());
    written.and(closed)?;
    Ok(format!("saved as session {name} of {}: ucp shell --doc {} --session {name}", view.document, view.document))
}

/// A session over `view`'s document (named `name`, or unnamed), its
/// budget and task the view's.
fn session_over(library: &Library, view: &WindowView, name: Option<&str>) -> Result<SessionHandle, String> {
    let workspace = library.workspace(&view.document).map_err(|e| e.to_string())?;
    let options = NewSession { budget: Some(view.budget), task: Some(view.question.clone()), read_only: false };
    SessionHandle::open(library, workspace, name, &options).map_err(|e| e.to_string())
}

/// The blocks of `view`, most relevant first.
fn by_relevance(view: &WindowView) -> Vec<&WindowBlock> {
    let mut blocks: Vec<&WindowBlock> = view.blocks.iter().collect();
    blocks.sort_by(|a, b| b.relevance.total_cmp(&a.relevance));
    blocks
}

/// The UCL line that adds `block` to a window with its relevance.
fn add_line(block: &WindowBlock) -> String {
    let relevance = block.relevance.clamp(0.0, 1.0);
    format!("CTX ADD {} REASON=semantic_relevance RELEVANCE={relevance:.3}\n", block.id)
}

/// An unnamed session over `view`'s document whose window holds `view`'s
/// blocks (those that fit) and nothing else.
fn seeded(library: &Library, view: &WindowView) -> Result<SessionHandle, String> {
    let session = session_over(library, view, None)?;
    // Best first: when the session counts more tokens than the context
    // did (ids are counted), the weakest blocks are the ones shown smaller
    // or left out.
    run(library, &session, "CTX CLEAR\n")?;
    for block in by_relevance(view) {
        let line = add_line(block);
        let added = library.run_script(session.workspace(), session.id(), &line).map_err(|e| e.to_string())?;
        // A block that does not fit even as a stub stays out; any other
        // failure is one.
        let full = added.report.failure().is_some_and(|(_, e)| e.code() == "context_limit");
        if let (false, Some(failure)) = (full, added.failure()) {
            return Err(failure);
        }
    }
    Ok(session)
}

/// Whether block `id` is in the window of `session`.
fn in_window(session: &SessionHandle, id: &str) -> bool {
    let Ok(id) = id.parse::<BlockId>() else { return false };
    let host = session.workspace().traversal();
    host.with_session(session.id(), |s| s.window().get(id).is_some()).unwrap_or(false)
}

/// Runs `script` in `session`; its failure as one line.
fn run(library: &Library, session: &SessionHandle, script: &str) -> Result<Vec<Reply>, String> {
    let run = library.run_script(session.workspace(), session.id(), script).map_err(|e| e.to_string())?;
    if let Some(failure) = run.failure() {
        return Err(failure);
    }
    Ok(run.report.steps.into_iter().filter_map(|s| s.result.ok()).map(|step| step.reply).collect())
}

/// The session's window as a view.
fn window_of(library: &Library, session: &SessionHandle, view: &WindowView) -> Result<WindowView, String> {
    let replies = run(library, session, "CTX RENDER\n")?;
    let Some(Reply::Rendered { text, tokens, .. }) = replies.into_iter().next() else {
        return Err("the window could not be rendered".into());
    };
    let workspace = session.workspace();
    let engine = workspace.traversal().engine();
    let doc = engine.document();
    let blocks = workspace
        .traversal()
        .with_session(session.id(), |s| {
            s.window()
                .entries()
                .iter()
                .map(|e| WindowBlock {
                    id: e.id.to_string(),
                    whence: whence(doc, e.id),
                    why: format!(
                        "{} · relevance {:.2} · {}",
                        e.reason.as_str(),
                        e.relevance,
                        e.representation.as_str()
                    ),
                    tokens: e.tokens,
                    relevance: e.relevance,
                })
                .collect::<Vec<_>>()
        })
        .map_err(|e| e.to_string())?;
    Ok(WindowView { text, tokens, blocks, by_hand: true, ..view.clone() })
}

/// Where block `id` of `doc` came from: file and lines, else its heading
/// path.
pub(crate) fn whence(doc: &Document, id: BlockId) -> String {
    let Some(block) = doc.get(id) else { return String::new() };
    match &block.metadata.source {
        Some(source) => format!("{}:{}-{}", printable(&source.file, 200), source.start_line, source.end_line),
        None => printable(&outline::path_titles(doc, id).join(" > "), 200).into_owned(),
    }
}
