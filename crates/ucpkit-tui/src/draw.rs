//! Frames: the header with the screens, the screen's body (`screens`),
//! the status line, and what covers them (help, palette, search, the UCL
//! line, a permission request). Every text from a document, a model or a
//! tool is made safe for the terminal before it is drawn.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, List, ListItem, ListState, Paragraph, Wrap};
use ratatui::Frame;
use ucpkit_registry::vocabulary::{printable, terminal_text};

use crate::app::{App, Overlay};
use crate::palette::Tab;

/// Every key, as the help screen lists them.
pub(crate) const HELP: &[(&str, &str)] = &[
    ("Everywhere (outside a text field: Esc leaves one)", ""),
    ("Tab / Shift-Tab", "next / previous screen"),
    ("Ctrl-P", "command palette: every action, models"),
    ("/", "search the open document"),
    (":", "run a UCL line in the document's session"),
    ("?", "this help"),
    ("Esc", "close a pane or leave a field"),
    ("Ctrl-R", "reload the store"),
    ("q", "quit (Ctrl-C too, when no turn runs)"),
    ("Navigator", ""),
    ("↑↓ j k, PgUp PgDn, g G", "move"),
    ("→ l Enter / ← h", "unfold (open) / fold, to the parent"),
    ("p / b", "jump to the parent / go back"),
    ("f", "edges of the block: Enter follows one"),
    ("J / K", "scroll the block's text or UCL output"),
    ("a", "add the block to the context window"),
    ("d", "close the output, then the document"),
    ("Context", ""),
    ("Enter, ↑↓ in the fields", "build / question or budget"),
    ("e or i, B", "back to the question, to the budget"),
    ("x / r", "remove the block / render again"),
    ("J / K", "scroll the rendered context"),
    ("y / s", "copy the context / save it as a session"),
    ("Agent", ""),
    ("Enter / Esc", "send / leave the message field"),
    ("Ctrl-C / Ctrl-O", "cancel the turn / unfold tool results"),
    ("y a n", "allow once / always / decline a request"),
    ("i / PgUp PgDn", "back to the message field / scroll"),
    ("Memory", ""),
    ("← → / ↑↓", "memories, plans, sessions, conversations"),
    ("J / K", "scroll the detail"),
];

/// The style of the line under a cursor.
pub(crate) fn selected() -> Style {
    Style::new().add_modifier(Modifier::REVERSED)
}

/// A bordered block titled `title`.
pub(crate) fn boxed(title: &str) -> Block<'_> {
    Block::new().borders(Borders::ALL).title(title)
}

/// `text` on one line, safe, cut to `max` characters.
pub(crate) fn line_of(text: &str, max: usize) -> String {
    printable(&text.replace(['\n', '\r'], " "), max).into_owned()
}

/// `text` in lines, safe (tabs as four spaces).
pub(crate) fn lines_of(text: &str) -> Vec<Line<'static>> {
    terminal_text(&text.replace('\t', "    ")).lines().map(|l| Line::raw(l.to_owned())).collect()
}

/// A list drawn with the cursor's line in sight.
pub(crate) fn draw_list(frame: &mut Frame, area: Rect, items: Vec<ListItem<'static>>, cursor: usize, title: &str) {
    let mut state = ListState::default().with_selected((!items.is_empty()).then_some(cursor));
    let list = List::new(items).block(boxed(title)).highlight_style(selected());
    frame.render_stateful_widget(list, area, &mut state);
}

/// A rectangle `width` × `height` (at most the area's) in the middle.
pub(crate) fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let (width, height) = (width.min(area.width), height.min(area.height));
    Rect { x: area.x + (area.width - width) / 2, y: area.y + (area.height - height) / 2, width, height }
}

/// Draws the whole frame.
pub fn draw(app: &App, frame: &mut Frame) {
    let [header, body, footer] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(3), Constraint::Length(1)]).areas(frame.area());
    draw_header(app, frame, header);
    match app.tab {
        Tab::Navigator => crate::screens::navigator(app, frame, body),
        Tab::Context => crate::screens::context(app, frame, body),
        Tab::Agent => crate::screens::agent(app, frame, body),
        Tab::State => crate::screens::state(app, frame, body),
    }
    draw_footer(app, frame, footer);
    match &app.overlay {
        Overlay::None => {}
        Overlay::Help(scroll) => draw_help(frame, body, *scroll),
        Overlay::Palette(_) => crate::screens::palette(app, frame, body),
        Overlay::Search(_) => crate::screens::search(app, frame, body),
        Overlay::Ucl(line) => {
            let area = Rect { y: body.bottom().saturating_sub(3), height: 3.min(body.height), ..body };
            crate::screens::field(frame, area, "UCL (Enter runs, Esc closes)", line, true);
        }
    }
    if !app.permissions.is_empty() {
        crate::screens::permission(app, frame, body);
    }
}

fn draw_header(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = vec![Span::raw(" ucp ").bold()];
    for tab in Tab::ALL {
        let title = format!(" {} ", tab.title());
        spans.push(if tab == app.tab { Span::styled(title, selected()) } else { Span::raw(title) });
    }
    let document = app.nav.document_name().map(|n| format!("  {}", line_of(n, 40))).unwrap_or_default();
    spans.push(Span::raw(document).italic());
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// Spinner frames, one per tenth of a second.
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

fn draw_footer(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = Vec::new();
    if let Some((kind, since)) = app.busy.iter().min_by_key(|(_, since)| **since) {
        // Drawn for a test, the line holds no time.
        let running = if app.live {
            let elapsed = since.elapsed();
            let spin = SPINNER[(elapsed.as_millis() / 100) as usize % SPINNER.len()];
            format!("{spin} {kind} {:.1}s · ", elapsed.as_secs_f64())
        } else {
            format!("… {kind} · ")
        };
        spans.push(Span::raw(running).bold());
    }
    spans.push(Span::raw(line_of(&app.status, area.width as usize)));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_help(frame: &mut Frame, body: Rect, scroll: u16) {
    let area = centered(body, 72, HELP.len() as u16 + 2);
    let lines: Vec<Line> = HELP
        .iter()
        .map(|(keys, what)| {
            if what.is_empty() {
                Line::raw(*keys).bold()
            } else {
                Line::from(vec![Span::raw(format!("  {keys:<24}")), Span::raw(*what)])
            }
        })
        .collect();
    frame.render_widget(Clear, area);
    let title =
        if area.height < HELP.len() as u16 + 2 { "Keys (↑↓ scroll, Esc closes)" } else { "Keys (Esc closes)" };
    frame.render_widget(Paragraph::new(lines).block(boxed(title)).scroll((scroll, 0)), area);
}

/// A paragraph of `lines` in a box, wrapped, scrolled to `scroll`.
pub(crate) fn text_box(frame: &mut Frame, area: Rect, title: &str, lines: Vec<Line<'static>>, scroll: u16) {
    let paragraph = Paragraph::new(lines).block(boxed(title)).wrap(Wrap { trim: false }).scroll((scroll, 0));
    frame.render_widget(paragraph, area);
}
