//! The body of each screen and the panes over them.

use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::Stylize;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Gauge, ListItem, Paragraph, Wrap};
use ratatui::Frame;
use ucpkit_registry::vocabulary::{outline, Block as DocBlock, Content};

use crate::agent_pane::Entry;
use crate::app::{App, Overlay};
use crate::builder::{whence, Focus};
use crate::draw::{boxed, centered, draw_list, line_of, lines_of, selected, text_box};
use crate::input::Field;

/// Lines of a tool result shown when results are unfolded.
const RESULT_LINES: usize = 12;

/// A one-line text field in a box, the cursor shown when it has focus.
pub(crate) fn field(frame: &mut Frame, area: Rect, title: &str, field: &Field, focused: bool) {
    let width = area.width.saturating_sub(2) as usize;
    let (shown, cursor) = field.visible(width);
    let block = if focused { boxed(title).bold() } else { boxed(title) };
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(line_of(&shown, width + 1)).block(block), area);
    if focused && area.height >= 3 {
        frame.set_cursor_position(Position { x: area.x + 1 + cursor as u16, y: area.y + 1 });
    }
}

fn role_of(block: &DocBlock) -> String {
    match block.role() {
        Some(role) => role.to_string(),
        None if block.id.is_root() => "root".to_owned(),
        None => "block".to_owned(),
    }
}

/// The navigator: the documents, or the open one's tree and block.
pub(crate) fn navigator(app: &App, frame: &mut Frame, area: Rect) {
    let (main, output) = match &app.output {
        Some(_) => {
            let [main, output] = Layout::vertical([Constraint::Min(5), Constraint::Length(9)]).areas(area);
            (main, Some(output))
        }
        None => (area, None),
    };
    match &app.nav.open {
        None => documents(app, frame, main),
        Some(open) => {
            let [tree, view] = Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(main);
            let width = tree.width.saturating_sub(4) as usize;
            let items: Vec<ListItem> = open
                .rows
                .iter()
                .map(|row| {
                    let block = open.doc.get(row.id);
                    let mark = match (row.has_children, row.expanded) {
                        (false, _) => ' ',
                        (true, true) => '▾',
                        (true, false) => '▸',
                    };
                    let text = match block {
                        Some(_) if row.id.is_root() => open.doc.name().to_owned(),
                        Some(block) => block.preview(width),
                        None => String::new(),
                    };
                    ListItem::new(line_of(&format!("{}{mark} {text}", "  ".repeat(row.depth.min(12))), width))
                })
                .collect();
            let title = format!("Tree: {} ({} blocks)", line_of(open.doc.name(), 30), open.doc.len());
            draw_list(frame, tree, items, open.cursor, &title);
            block_view(app, frame, view);
        }
    }
    if let (Some(area), Some(text)) = (output, &app.output) {
        text_box(frame, area, "UCL output (J K scroll, Esc closes)", lines_of(text), app.output_scroll);
    }
}

fn documents(app: &App, frame: &mut Frame, area: Rect) {
    let width = area.width.saturating_sub(4) as usize;
    let items: Vec<ListItem> = app
        .nav
        .documents
        .iter()
        .map(|d| {
            let title = d.title.as_deref().unwrap_or_default();
            let text = format!("{:<20} {:>8} blocks {:>9} tokens  {}", line_of(&d.name, 20), d.blocks, d.tokens, title);
            ListItem::new(line_of(&text, width))
        })
        .collect();
    let title = match &app.nav.loading {
        Some(name) => format!("Documents — reading {}…", line_of(name, 30)),
        None if items.is_empty() => "Documents — none yet: ucp index <PATH>".to_owned(),
        None => "Documents (Enter opens)".to_owned(),
    };
    draw_list(frame, area, items, app.nav.doc_cursor, &title);
}

fn block_view(app: &App, frame: &mut Frame, area: Rect) {
    let Some(open) = &app.nav.open else { return };
    let id = open.current();
    let doc = &open.doc;
    let Some(block) = doc.get(id) else { return };
    let index = doc.edges();
    let (out, into) = (index.outgoing(id), index.incoming(id));
    let mut lines = vec![
        Line::from(vec![Span::raw("id     ").dim(), Span::raw(id.to_string())]),
        Line::from(vec![Span::raw("role   ").dim(), Span::raw(line_of(&role_of(block), 60))]),
        Line::from(vec![Span::raw("where  ").dim(), Span::raw(whence(doc, id))]),
        Line::from(vec![
            Span::raw("tokens ").dim(),
            Span::raw(block.metadata.tokens.map_or("-".to_owned(), |t| t.to_string())),
            Span::raw("  children ").dim(),
            Span::raw(doc.children(id).len().to_string()),
            Span::raw("  edges ").dim(),
            Span::raw(format!("{} out, {} in", out.len(), into.len())),
        ]),
    ];
    if let Some(label) = &block.metadata.label {
        lines.push(Line::from(vec![Span::raw("label  ").dim(), Span::raw(line_of(label, 60))]));
    }
    lines.push(Line::raw(""));
    let body = match block.content {
        Content::Composite => outline::title(block).unwrap_or_default(),
        _ => outline::full_body(block),
    };
    lines.extend(lines_of(&body));
    match &open.edges {
        Some((choices, at)) => {
            let [text, edges] = Layout::vertical([Constraint::Min(3), Constraint::Length(8)]).areas(area);
            text_box(frame, text, "Block", lines, app.nav.text_scroll);
            let width = edges.width.saturating_sub(4) as usize;
            let items = choices
                .iter()
                .map(|c| {
                    let other = doc.get(c.other).map(|b| b.preview(width)).unwrap_or_default();
                    ListItem::new(line_of(&format!("{} {} {other}", c.arrow, c.edge_type), width))
                })
                .collect();
            draw_list(frame, edges, items, *at, "Edges (Enter follows, Esc closes)");
        }
        None => text_box(frame, area, "Block (J K scroll)", lines, app.nav.text_scroll),
    }
}

/// The context builder: question, budget, the budget bar, the blocks and
/// the rendered context.
pub(crate) fn context(app: &App, frame: &mut Frame, area: Rect) {
    let builder = &app.builder;
    let [fields, bar, rest] =
        Layout::vertical([Constraint::Length(3), Constraint::Length(1), Constraint::Min(3)]).areas(area);
    let [question, budget] = Layout::horizontal([Constraint::Min(20), Constraint::Length(14)]).areas(fields);
    let document = app.builder_document().unwrap_or_else(|| "no document".into());
    let title = format!("Question on {} (Enter builds)", line_of(&document, 24));
    let typing = builder.save_as.is_none();
    field(frame, question, &title, &builder.question, typing && builder.focus == Focus::Question);
    field(frame, budget, "Budget", &builder.budget, typing && builder.focus == Focus::Budget);
    match &builder.view {
        Some(view) => {
            let ratio = if view.budget == 0 { 0.0 } else { (view.tokens as f64 / view.budget as f64).min(1.0) };
            let label = format!(
                "{} / {} tokens · {} blocks{}",
                view.tokens,
                view.budget,
                view.blocks.len(),
                if view.by_hand { " · edited by hand" } else { "" }
            );
            frame.render_widget(Gauge::default().ratio(ratio).label(label), bar);
            let [list, text] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(rest);
            let width = list.width.saturating_sub(4) as usize;
            let items = view
                .blocks
                .iter()
                .map(|b| {
                    ListItem::new(vec![
                        Line::raw(line_of(&format!("{} ({} tok)", b.whence, b.tokens), width)),
                        Line::raw(line_of(&format!("  {}", b.why), width)).dim(),
                    ])
                })
                .collect();
            draw_list(frame, list, items, builder.cursor, "Blocks (x removes, y copies, s saves)");
            text_box(frame, text, "Rendered (J K scroll)", lines_of(&view.text), builder.text_scroll);
        }
        None => {
            let hint = Paragraph::new("Type a question, set the budget, Enter: the context `ucp context` gives.")
                .wrap(Wrap { trim: true });
            frame.render_widget(hint, rest);
        }
    }
    if let Some(name) = &builder.save_as {
        let area = centered(rest, 50, 3);
        field(frame, area, "Save as session (Enter saves)", name, true);
    }
}

/// The agent's conversation, its message field and its model.
pub(crate) fn agent(app: &App, frame: &mut Frame, area: Rect) {
    let pane = &app.agent_pane;
    let [model, talk, input] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(3), Constraint::Length(3)]).areas(area);
    let model_line = match &app.agent_model {
        Ok(model) => format!("model {}", line_of(model, 60)),
        Err(why) => format!("no model: {}", line_of(why, 200)),
    };
    frame.render_widget(Paragraph::new(model_line).dim(), model);
    let mut lines: Vec<Line> = Vec::new();
    for entry in &pane.entries {
        match entry {
            Entry::User(text) => {
                lines.push(Line::raw("you").bold());
                lines.extend(lines_of(text));
            }
            Entry::Assistant(text) => {
                lines.push(Line::raw("agent").bold());
                lines.extend(lines_of(text));
            }
            Entry::Tool { tool, arguments, result } => {
                let state = match result {
                    None => "running…".to_owned(),
                    Some((_, tokens, failed)) => format!("{tokens} tokens{}", if *failed { ", failed" } else { "" }),
                };
                let mark = if pane.unfolded { '▾' } else { '▸' };
                lines.push(
                    Line::raw(format!("{mark} {} {} — {state}", line_of(tool, 40), line_of(arguments, 120))).dim(),
                );
                if let (true, Some((text, _, _))) = (pane.unfolded, result) {
                    lines.extend(lines_of(text).into_iter().take(RESULT_LINES).map(|l| l.dim()));
                }
            }
            Entry::Note(text) => lines.push(Line::raw(line_of(text, 400)).italic()),
        }
        lines.push(Line::raw(""));
    }
    let inner = talk.height.saturating_sub(2) as usize;
    let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
    let total = paragraph.line_count(talk.width.saturating_sub(2));
    let top = total.saturating_sub(inner).saturating_sub(pane.scroll);
    let title = if pane.running.is_some() { "Conversation (Ctrl-C cancels the turn)" } else { "Conversation" };
    frame.render_widget(paragraph.block(boxed(title)).scroll((top.min(u16::MAX as usize) as u16, 0)), talk);
    field(frame, input, "Message (Enter sends, Esc leaves)", &pane.input, pane.typing && app.permissions.is_empty());
}

/// Memories, plans, named sessions and stored conversations.
pub(crate) fn state(app: &App, frame: &mut Frame, area: Rect) {
    const SECTIONS: [&str; 4] = ["Memories", "Plans", "Sessions", "Conversations"];
    let state = &app.state;
    let [tabs, list, detail] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(3), Constraint::Percentage(40)]).areas(area);
    let spans: Vec<Span> = SECTIONS
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let name = format!(" {name} ");
            if i == state.section {
                Span::styled(name, selected())
            } else {
                Span::raw(name)
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(Line::from(spans)), tabs);
    let Some(lists) = &state.lists else {
        frame.render_widget(Paragraph::new("reading…"), list);
        return;
    };
    let width = list.width.saturating_sub(4) as usize;
    let (rows, details): (Vec<String>, Vec<String>) = match state.section {
        0 => lists
            .memories
            .iter()
            .map(|m| {
                let who = m.speaker.as_deref().map(|s| format!("{s}: ")).unwrap_or_default();
                let row = format!("[{}] {who}{}", m.kind, line_of(&m.content, width));
                let when = [m.session.as_deref(), m.time.as_deref()].into_iter().flatten().collect::<Vec<_>>();
                let detail = format!("{} · {}\ntags: {}\n{}", m.id, when.join(" · "), m.tags.join(", "), m.content);
                (row, detail)
            })
            .unzip(),
        1 => lists
            .plans
            .nodes()
            .iter()
            .map(|n| {
                (format!("[{}] {} ({})", n.status.as_str(), n.title, n.node_type), format!("{}\n{}", n.id, n.context))
            })
            .unzip(),
        2 => lists
            .sessions
            .iter()
            .map(|(doc, name, _)| (format!("{name} on {doc}"), format!("ucp shell --doc {doc} --session {name}")))
            .unzip(),
        _ => lists
            .transcripts
            .iter()
            .map(|(name, revision)| (name.clone(), format!("revision {revision}: ucp agent --session {name} \"…\"")))
            .unzip(),
    };
    let cursor = state.cursor.min(rows.len().saturating_sub(1));
    let empty = rows.is_empty();
    let items = rows.into_iter().map(|r| ListItem::new(line_of(&r, width))).collect();
    draw_list(frame, list, items, cursor, SECTIONS[state.section]);
    let text = if empty { "nothing stored".to_owned() } else { details[cursor].clone() };
    text_box(frame, detail, "Detail", lines_of(&text), state.detail_scroll);
}

/// The command palette.
pub(crate) fn palette(app: &App, frame: &mut Frame, body: Rect) {
    let Overlay::Palette(palette) = &app.overlay else { return };
    let area = centered(body, 70, 18);
    frame.render_widget(Clear, area);
    let [input, list] = Layout::vertical([Constraint::Length(3), Constraint::Min(3)]).areas(area);
    field(frame, input, "Command palette (type to filter, Enter runs)", &palette.query, true);
    let width = list.width.saturating_sub(4) as usize;
    let items = palette
        .shown()
        .map(|item| {
            let key = if item.key.is_empty() { String::new() } else { format!("  [{}]", item.key) };
            ListItem::new(line_of(&format!("{}{key}", item.label), width))
        })
        .collect();
    draw_list(frame, list, items, palette.cursor, "Actions");
}

/// The search box and its hits.
pub(crate) fn search(app: &App, frame: &mut Frame, body: Rect) {
    let Overlay::Search(search) = &app.overlay else { return };
    let area = centered(body, 90, 20);
    frame.render_widget(Clear, area);
    let [input, list] = Layout::vertical([Constraint::Length(3), Constraint::Min(3)]).areas(area);
    field(frame, input, "Search (Enter searches, then Enter jumps)", &search.query, true);
    let width = list.width.saturating_sub(4) as usize;
    let (items, title) = match &search.hits {
        Some((query, hits)) => (
            hits.iter()
                .map(|hit| {
                    let whence = match (&hit.file, hit.lines) {
                        (Some(file), Some([from, to])) => format!("{file}:{from}-{to}"),
                        _ => hit.heading_path.join(" > "),
                    };
                    ListItem::new(vec![
                        Line::raw(line_of(&format!("{:.2} {whence}", hit.score), width)),
                        Line::raw(line_of(&format!("  {}", hit.preview), width)).dim(),
                    ])
                })
                .collect(),
            format!("{} hits for {}", hits.len(), line_of(query, 40)),
        ),
        None => (Vec::new(), "Hits".to_owned()),
    };
    draw_list(frame, list, items, search.cursor, &title);
}

/// A permission request as a modal naming the exact action: the title,
/// the whole command line, the files it touches, all of it wrapped (never
/// cut), the answer keys pinned below.
pub(crate) fn permission(app: &App, frame: &mut Frame, body: Rect) {
    let Some(request) = app.permissions.front() else { return };
    let mut lines: Vec<Line> = lines_of(&request.title).into_iter().map(|l| l.bold()).collect();
    if let Some(detail) = &request.detail {
        lines.push(Line::raw(""));
        lines.extend(lines_of(detail));
    }
    if !request.touches.is_empty() {
        lines.push(Line::raw(""));
        lines.extend(request.touches.iter().map(|t| Line::raw(format!("touches {}", line_of(t, 4000)))));
    }
    let width = body.width.min(90);
    let text = Paragraph::new(lines).wrap(Wrap { trim: false });
    let wanted = text.line_count(width.saturating_sub(2)) as u16 + 4;
    let area = centered(body, width, wanted.min(body.height));
    frame.render_widget(Clear, area);
    let more = if app.permissions.len() > 1 { format!(" (1 of {})", app.permissions.len()) } else { String::new() };
    let title = format!("The agent asks to{more}");
    let block = boxed(&title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [text_area, keys] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(inner);
    frame.render_widget(text, text_area);
    let keys_line = format!("[y] allow once  [a] always: {}  [n] decline", line_of(&request.scope_words, 60));
    frame.render_widget(Paragraph::new(keys_line).bold(), keys);
}
