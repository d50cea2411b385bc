//! Every screen drawn into ratatui's `TestBackend` at 80×24 and 120×40
//! and compared with its snapshot (`src/snapshots/`), key sequences
//! driving the state between them: navigate, search, run UCL, build a
//! context and change it by hand, filter the palette and choose a model,
//! answer an agent's permission request.

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use ucpkit_registry::parts::llm::Cancel;
use ucpkit_registry::parts::memory::{AgentState, NewMemory};
use ucpkit_registry::{Action, ActionKind, Approval, Supervisor};

use crate::agent_pane::{AgentBackend, AgentNews};
use crate::app::App;
use crate::models::Models;
use crate::palette::Tab;

/// The sizes every screen is checked at.
const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];
/// Longest a job may take in a test.
const SETTLE: Duration = Duration::from_secs(60);

/// An agent whose turns follow a script: some text, one tool call that
/// asks for approval through the real supervisor, the call's result.
struct ScriptedAgent;

impl AgentBackend for ScriptedAgent {
    fn model(&self) -> Result<String, String> {
        Ok("local/scripted".into())
    }

    fn turn(
        &self,
        _conversation: &str,
        message: &str,
        supervisor: Arc<dyn Supervisor>,
        cancel: Cancel,
        tell: &mut dyn FnMut(AgentNews),
    ) -> Result<String, String> {
        tell(AgentNews::Text(format!("I will look into \"{message}\".")));
        tell(AgentNews::Calling { tool: "bash".into(), arguments: r#"{"command":"cargo test"}"#.into() });
        let action = Action {
            tool: "bash".into(),
            kind: ActionKind::Execute,
            title: "Run `cargo test` in /work/app".into(),
            scope: "cargo".into(),
            scope_words: "`cargo` commands".into(),
            detail: None,
            locations: Vec::new(),
            change: None,
            needs_approval: true,
        };
        let (result, failed) = match supervisor.approve(&action) {
            Approval::Allow => ("test result: ok. 3 passed".to_owned(), false),
            Approval::Deny(why) => (why, true),
        };
        tell(AgentNews::Called { tool: "bash".into(), result, tokens: 9, failed });
        if cancel.is_cancelled() {
            return Err("cancelled".into());
        }
        tell(AgentNews::Text("All tests pass.".into()));
        Ok("All tests pass.".into())
    }
}

fn app() -> (tempfile::TempDir, App) {
    let (dir, library) = crate::testing::library();
    let store = library.store_dir().to_owned();
    let config = "[agent]\nprovider = \"local\"\n\n[providers.local]\napi = \"openai\"\n\
                  base_url = \"http://127.0.0.1:1/v1\"\nmodel = \"big\"\n\n[subagents.explore]\nmodel = \"small\"\n";
    std::fs::write(store.join("config.toml"), config).unwrap();
    // The user's own configuration stays out of the tests.
    let (models, problem) = Models::from_files(&store, vec![store.join("config.toml")], Default::default());
    let mut app = App::with_models(library, Ok(Arc::new(ScriptedAgent)), models, problem);
    app.settle(SETTLE);
    (dir, app)
}

fn press(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
}

fn ctrl(app: &mut App, c: char) {
    app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// The frame of `app` at `width` × `height`, as text.
fn frame(app: &App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| crate::draw(app, f)).unwrap();
    terminal.backend().to_string()
}

/// Checks the screen at every size against its snapshot.
fn snapshot(app: &App, name: &str) {
    for (width, height) in SIZES {
        insta::assert_snapshot!(format!("{name}_{width}x{height}"), frame(app, width, height));
    }
}

#[test]
fn the_navigator_lists_documents_opens_one_and_walks_its_tree() {
    let (_dir, mut app) = app();
    snapshot(&app, "documents");
    press(&mut app, KeyCode::Enter);
    app.settle(SETTLE);
    let open = app.nav.open.as_ref().expect("the document opens");
    assert_eq!(open.doc.name(), "node");
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Right);
    press(&mut app, KeyCode::Right);
    press(&mut app, KeyCode::Down);
    snapshot(&app, "tree");
    let at = app.nav.open.as_ref().unwrap().current();
    press(&mut app, KeyCode::Char('p'));
    assert_ne!(app.nav.open.as_ref().unwrap().current(), at, "p jumps to the parent");
    press(&mut app, KeyCode::Char('b'));
    assert_eq!(app.nav.open.as_ref().unwrap().current(), at, "b comes back");
    press(&mut app, KeyCode::Char('?'));
    snapshot(&app, "help");
    assert!(!frame(&app, 80, 24).contains("memories, plans"), "the end is below at 80×24");
    for _ in 0..10 {
        press(&mut app, KeyCode::Down);
    }
    assert!(frame(&app, 80, 24).contains("memories, plans"), "and scrolls into sight");
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('q'));
    assert!(app.quit);
}

#[test]
fn a_search_lists_hits_and_enter_jumps_to_the_block() {
    let (_dir, mut app) = app();
    press(&mut app, KeyCode::Enter);
    app.settle(SETTLE);
    press(&mut app, KeyCode::Char('/'));
    type_text(&mut app, "punycode encoding");
    press(&mut app, KeyCode::Enter);
    app.settle(SETTLE);
    snapshot(&app, "search");
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    let crate::app::Overlay::None = app.overlay else { panic!("the search closes on a jump") };
    let open = app.nav.open.as_ref().unwrap();
    let text = open.doc.get(open.current()).unwrap().plain_text().to_lowercase();
    let path = ucpkit_registry::vocabulary::outline::path_titles(&open.doc, open.current()).join(" ").to_lowercase();
    assert!(text.contains("punycode") || path.contains("punycode"), "the cursor is on a hit: {text}");
}

#[test]
fn a_ucl_line_runs_in_the_document_s_session_and_its_output_shows() {
    let (_dir, mut app) = app();
    press(&mut app, KeyCode::Enter);
    app.settle(SETTLE);
    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, "FIND PATTERN=\"querystring\"");
    snapshot(&app, "ucl_line");
    press(&mut app, KeyCode::Enter);
    app.settle(SETTLE);
    let output = app.output.clone().expect("the output shows");
    assert!(!output.starts_with("error"), "{output}");
    snapshot(&app, "ucl_output");
    press(&mut app, KeyCode::Char(':'));
    type_text(&mut app, "GOTO nowhere(");
    press(&mut app, KeyCode::Enter);
    app.settle(SETTLE);
    assert!(app.output.as_deref().unwrap().contains("error"), "a bad line says why");
}

#[test]
fn a_context_is_built_within_its_budget_then_changed_copied_and_saved() {
    let (dir, mut app) = app();
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.tab, Tab::Context);
    type_text(&mut app, "How do I parse a query string?");
    press(&mut app, KeyCode::Down);
    for _ in 0..4 {
        press(&mut app, KeyCode::Backspace);
    }
    type_text(&mut app, "600");
    press(&mut app, KeyCode::Enter);
    app.settle(SETTLE);
    let view = app.builder.view.clone().expect("a context");
    assert!(view.tokens <= 600 && !view.blocks.is_empty(), "{} tokens", view.tokens);
    let library = app.library.clone();
    let options = ucpkit_workspace::ContextOptions {
        budget: 600,
        ..ucpkit_workspace::ContextOptions::new("How do I parse a query string?")
    };
    assert_eq!(view.text, library.context_in(Some("node"), &options).unwrap().text, "what `ucp context` gives");
    snapshot(&app, "context");
    let first = view.blocks[0].id.clone();
    press(&mut app, KeyCode::Char('x'));
    app.settle(SETTLE);
    let edited = app.builder.view.clone().unwrap();
    assert!(edited.by_hand, "{}", app.status);
    assert!(edited.blocks.iter().all(|b| b.id != first), "the block left the window");
    assert!(edited.tokens <= 600);
    snapshot(&app, "context_edited");
    press(&mut app, KeyCode::Char('y'));
    let copied = std::fs::read_to_string(library.store_dir().join("tui-context.md")).unwrap();
    assert_eq!(copied, edited.text, "the copy is the rendered window");
    press(&mut app, KeyCode::Char('s'));
    type_text(&mut app, "by-hand");
    press(&mut app, KeyCode::Enter);
    app.settle(SETTLE);
    assert!(app.status.starts_with("saved as session by-hand"), "{}", app.status);
    let sessions = library.named_sessions().unwrap();
    assert!(sessions.iter().any(|(doc, name, _)| doc == "node" && name == "by-hand"), "{sessions:?}");
    drop(dir);
}

#[test]
fn the_palette_filters_as_you_type_and_a_model_choice_is_written() {
    let (_dir, mut app) = app();
    ctrl(&mut app, 'p');
    snapshot(&app, "palette");
    type_text(&mut app, "subagent review");
    snapshot(&app, "palette_filtered");
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Enter);
    assert!(app.status.starts_with("Subagent review now uses local/small"), "{}", app.status);
    let written = std::fs::read_to_string(app.library.store_dir().join("config.toml")).unwrap();
    assert!(written.contains("[subagents.review]"), "{written}");
    ctrl(&mut app, 'p');
    type_text(&mut app, "review");
    let labels: Vec<String> = match &app.overlay {
        crate::app::Overlay::Palette(p) => p.shown().map(|i| i.label.clone()).collect(),
        _ => panic!("the palette is open"),
    };
    assert_eq!(labels, ["Subagent review: local/big", "Subagent review: local/small ✓"]);
    press(&mut app, KeyCode::Esc);
    type_text(&mut app, "Go to Agent");
    assert_eq!(app.tab, Tab::Navigator, "closed: typing no longer goes to the palette");
}

#[test]
fn the_agent_streams_asks_permission_in_a_modal_and_folds_tool_calls() {
    let (_dir, mut app) = app();
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.tab, Tab::Agent);
    type_text(&mut app, "run the tests");
    press(&mut app, KeyCode::Enter);
    while app.permissions.is_empty() {
        assert!(app.absorb_within(SETTLE), "the request comes");
    }
    snapshot(&app, "agent_permission");
    press(&mut app, KeyCode::Char('y'));
    assert_eq!(app.permissions.len(), 1, "a key typed ahead answers nothing");
    std::thread::sleep(crate::keys::READ_FIRST);
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.permissions.len(), 1, "Enter allows nothing");
    press(&mut app, KeyCode::Char('y'));
    app.settle(SETTLE);
    assert!(app.agent_pane.running.is_none(), "the turn ended");
    snapshot(&app, "agent_done");
    ctrl(&mut app, 'o');
    assert!(frame(&app, 80, 24).contains("test result: ok. 3 passed"), "unfolded results show");
    type_text(&mut app, "again");
    press(&mut app, KeyCode::Enter);
    while app.permissions.is_empty() {
        assert!(app.absorb_within(SETTLE), "the request comes");
    }
    ctrl(&mut app, 'c');
    app.settle(SETTLE);
    assert!(app.permissions.is_empty() && app.agent_pane.running.is_none(), "Ctrl-C declines and cancels");
    assert!(!app.quit, "Ctrl-C during a turn does not quit");
}

#[test]
fn memories_plans_and_sessions_are_browsable() {
    let (_dir, mut app) = app();
    let memory = NewMemory {
        content: "The team prefers small commits.".into(),
        kind: Some("preference".into()),
        tags: vec!["git".into()],
        ..NewMemory::default()
    };
    AgentState::of(&app.library).memory_store(&memory).unwrap();
    ctrl(&mut app, 'r');
    app.settle(SETTLE);
    press(&mut app, KeyCode::BackTab);
    assert_eq!(app.tab, Tab::State);
    let frame_text = frame(&app, 80, 24);
    assert!(frame_text.contains("The team prefers small commits."), "{frame_text}");
    press(&mut app, KeyCode::Right);
    press(&mut app, KeyCode::Right);
    snapshot(&app, "sessions_empty");
}
