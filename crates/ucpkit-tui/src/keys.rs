//! What each key does, screen by screen (the help screen lists them:
//! `draw::HELP`).

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::app::{App, Overlay, SearchBox};
use crate::builder::{Change, Focus};
use crate::input::Field;
use crate::jobs::Answer;
use crate::palette::{Palette, Tab};

/// Lines a page key moves.
const PAGE: isize = 10;
/// How long a permission request is on the screen before a key answers
/// it: a key typed ahead (the next message) never approves what was not
/// seen.
pub(crate) const READ_FIRST: Duration = Duration::from_millis(400);

fn ctrl(key: &KeyEvent, c: char) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char(c)
}

impl App {
    /// Takes one key.
    pub fn on_key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        if !self.permissions.is_empty() {
            self.on_permission_key(key);
            return;
        }
        if ctrl(&key, 'c') {
            if self.agent_pane.cancel() {
                self.status = "cancelling the agent's turn".into();
            } else if !matches!(self.overlay, Overlay::None) {
                self.overlay = Overlay::None;
            } else {
                self.quit = true;
            }
            return;
        }
        if ctrl(&key, 'p') {
            self.overlay = Overlay::Palette(Palette::new(self.models.options()));
            return;
        }
        if matches!(self.overlay, Overlay::Search(_)) {
            self.on_search_key(key);
            return;
        }
        match &mut self.overlay {
            Overlay::None | Overlay::Search(_) => {}
            Overlay::Help(scroll) => {
                match key.code {
                    KeyCode::Up | KeyCode::Char('k') => *scroll = scroll.saturating_sub(1),
                    KeyCode::Down | KeyCode::Char('j') => *scroll = (*scroll + 1).min(crate::draw::HELP.len() as u16),
                    KeyCode::Esc | KeyCode::Char('?' | 'q') | KeyCode::Enter => self.overlay = Overlay::None,
                    _ => {}
                }
                return;
            }
            Overlay::Palette(palette) => {
                match key.code {
                    KeyCode::Esc => self.overlay = Overlay::None,
                    KeyCode::Up => palette.move_by(-1),
                    KeyCode::Down => palette.move_by(1),
                    KeyCode::Enter => match palette.chosen() {
                        Some(command) => self.command(command),
                        None => self.overlay = Overlay::None,
                    },
                    _ => {
                        if palette.query.edit(key) {
                            palette.filter();
                        }
                    }
                }
                return;
            }
            Overlay::Ucl(line) => {
                match key.code {
                    KeyCode::Esc => self.overlay = Overlay::None,
                    KeyCode::Enter => {
                        let source = line.text();
                        self.overlay = Overlay::None;
                        if !source.trim().is_empty() {
                            self.run_ucl(source);
                        }
                    }
                    _ => {
                        line.edit(key);
                    }
                }
                return;
            }
        }
        if ctrl(&key, 'r') {
            self.reload();
            return;
        }
        if ctrl(&key, 'o') {
            self.agent_pane.unfolded = !self.agent_pane.unfolded;
            return;
        }
        match key.code {
            KeyCode::Tab => return self.switch(1),
            KeyCode::BackTab => return self.switch(-1),
            _ => {}
        }
        if self.typing() {
            match self.tab {
                Tab::Context => self.on_builder_typing(key),
                Tab::Agent => self.on_agent_typing(key),
                Tab::Navigator | Tab::State => {}
            }
            return;
        }
        match key.code {
            KeyCode::Char('q') => return self.quit = true,
            KeyCode::Char('?') => return self.overlay = Overlay::Help(0),
            KeyCode::Char('/') => return self.overlay = Overlay::Search(SearchBox::default()),
            KeyCode::Char(':') => return self.overlay = Overlay::Ucl(Field::default()),
            _ => {}
        }
        match self.tab {
            Tab::Navigator => self.on_navigator_key(key),
            Tab::Context => self.on_builder_key(key),
            Tab::Agent => self.on_agent_key(key),
            Tab::State => self.on_state_key(key),
        }
    }

    /// Takes pasted text: into the field that has the keys, as one line
    /// (a paste never runs a command or answers a request).
    pub fn on_paste(&mut self, text: &str) {
        if !self.permissions.is_empty() {
            return;
        }
        let field = match &mut self.overlay {
            Overlay::Palette(palette) => {
                palette.query.paste(text);
                palette.filter();
                return;
            }
            Overlay::Search(search) => Some(&mut search.query),
            Overlay::Ucl(line) => Some(line),
            Overlay::Help(_) => None,
            Overlay::None => match self.tab {
                Tab::Context if self.builder.save_as.is_some() => self.builder.save_as.as_mut(),
                Tab::Context if self.builder.focus == Focus::Question => Some(&mut self.builder.question),
                Tab::Context if self.builder.focus == Focus::Budget => Some(&mut self.builder.budget),
                Tab::Agent if self.agent_pane.typing => Some(&mut self.agent_pane.input),
                _ => None,
            },
        };
        if let Some(field) = field {
            field.paste(text);
        }
    }

    /// Whether a text field of the screen takes the keys.
    pub(crate) fn typing(&self) -> bool {
        match self.tab {
            Tab::Context => self.builder.focus != Focus::Blocks || self.builder.save_as.is_some(),
            Tab::Agent => self.agent_pane.typing,
            Tab::Navigator | Tab::State => false,
        }
    }

    fn switch(&mut self, step: isize) {
        let at = Tab::ALL.iter().position(|t| *t == self.tab).unwrap_or(0) as isize;
        self.tab = Tab::ALL[(at + step).rem_euclid(Tab::ALL.len() as isize) as usize];
    }

    fn on_permission_key(&mut self, key: KeyEvent) {
        let cancel = ctrl(&key, 'c');
        let shown = *self.permission_since.get_or_insert_with(Instant::now);
        if !cancel && shown.elapsed() < READ_FIRST {
            return;
        }
        let answer = match key.code {
            KeyCode::Char('y') => Answer::Once,
            KeyCode::Char('a') => Answer::Always,
            KeyCode::Char('n') | KeyCode::Esc => Answer::Deny,
            _ if cancel => Answer::Deny,
            _ => return,
        };
        if let Some(request) = self.permissions.pop_front() {
            let heard = request.reply.send(answer).is_ok();
            self.status = match (heard, answer) {
                (false, _) => format!("too late: the request to {} was withdrawn", request.title),
                (true, Answer::Once) => format!("allowed: {}", request.title),
                (true, Answer::Always) => format!("allowed, and {} from now on", request.scope_words),
                (true, Answer::Deny) => format!("declined: {}", request.title),
            };
        }
        // The next request, if any, is read before it can be answered.
        self.permission_since = (!self.permissions.is_empty()).then(Instant::now);
        if cancel {
            for request in self.permissions.drain(..) {
                let _ = request.reply.send(Answer::Deny);
            }
            self.agent_pane.cancel();
        }
    }

    fn on_search_key(&mut self, key: KeyEvent) {
        let Overlay::Search(search) = &mut self.overlay else { return };
        match key.code {
            KeyCode::Esc => self.overlay = Overlay::None,
            KeyCode::Up => search.cursor = search.cursor.saturating_sub(1),
            KeyCode::Down => {
                let len = search.hits.as_ref().map_or(0, |(_, h)| h.len());
                search.cursor = (search.cursor + 1).min(len.saturating_sub(1));
            }
            KeyCode::Enter => {
                let query = search.query.text();
                let answered = search.hits.as_ref().is_some_and(|(q, hits)| *q == query && !hits.is_empty());
                if answered {
                    let hit = search.hits.as_ref().and_then(|(_, hits)| hits.get(search.cursor)).map(|h| h.id.clone());
                    self.overlay = Overlay::None;
                    self.tab = Tab::Navigator;
                    let jumped = hit
                        .and_then(|id| id.parse().ok())
                        .zip(self.nav.open.as_mut())
                        .is_some_and(|(id, open)| open.jump(id));
                    if !jumped {
                        self.status = "that block is not in the document shown".into();
                    }
                } else if !query.trim().is_empty() {
                    self.search(query);
                }
            }
            _ => {
                search.query.edit(key);
            }
        }
    }

    fn on_navigator_key(&mut self, key: KeyEvent) {
        let Some(open) = self.nav.open.as_mut() else {
            match key.code {
                KeyCode::Up | KeyCode::Char('k') => self.nav.move_doc(-1),
                KeyCode::Down | KeyCode::Char('j') => self.nav.move_doc(1),
                KeyCode::Enter | KeyCode::Right | KeyCode::Char('l') => {
                    if let Some(name) = self.nav.chosen().map(str::to_owned) {
                        self.open_document(name);
                    }
                }
                _ => {}
            }
            return;
        };
        if open.edges.is_some() {
            match key.code {
                KeyCode::Esc => open.edges = None,
                KeyCode::Up | KeyCode::Char('k') => open.move_edge(-1),
                KeyCode::Down | KeyCode::Char('j') => open.move_edge(1),
                KeyCode::Enter => {
                    open.follow();
                }
                _ => {}
            }
            return;
        }
        let was = open.current();
        match key.code {
            KeyCode::Char('J') if self.output.is_some() => self.output_scroll += PAGE as u16,
            KeyCode::Char('K') if self.output.is_some() => {
                self.output_scroll = self.output_scroll.saturating_sub(PAGE as u16)
            }
            KeyCode::Char('J') => self.nav.text_scroll += PAGE as u16,
            KeyCode::Char('K') => self.nav.text_scroll = self.nav.text_scroll.saturating_sub(PAGE as u16),
            KeyCode::Up | KeyCode::Char('k') => open.move_by(-1),
            KeyCode::Down | KeyCode::Char('j') => open.move_by(1),
            KeyCode::PageUp => open.move_by(-PAGE),
            KeyCode::PageDown => open.move_by(PAGE),
            KeyCode::Home | KeyCode::Char('g') => open.move_to_end(false),
            KeyCode::End | KeyCode::Char('G') => open.move_to_end(true),
            KeyCode::Right | KeyCode::Char('l') | KeyCode::Enter => open.expand(),
            KeyCode::Left | KeyCode::Char('h') => open.collapse(),
            KeyCode::Char('p') => open.parent(),
            KeyCode::Char('b') | KeyCode::Backspace => {
                let went = open.go_back();
                if !went {
                    self.status = "nothing to go back to".into();
                }
            }
            KeyCode::Char('f') => {
                let listed = open.open_edges();
                if !listed {
                    self.status = "this block has no edge to follow".into();
                }
            }
            KeyCode::Char('a') => {
                let id = open.current().to_string();
                let same =
                    self.builder.view.as_ref().is_some_and(|v| Some(v.document.as_str()) == self.nav.document_name());
                if same {
                    if self.edit_window(Change::Add(id)) {
                        self.status = "adding the block to the context window".into();
                    }
                } else {
                    self.status = "build a context on this document first (Context screen)".into();
                }
            }
            KeyCode::Esc | KeyCode::Char('d') => {
                // The UCL output closes first, then the document.
                let had_output = self.output.take().is_some();
                if !had_output {
                    self.nav.open = None;
                }
            }
            _ => {}
        }
        if self.nav.open.as_ref().is_none_or(|o| o.current() != was) {
            self.nav.text_scroll = 0;
        }
    }

    fn on_builder_typing(&mut self, key: KeyEvent) {
        if let Some(name) = &mut self.builder.save_as {
            match key.code {
                KeyCode::Esc => self.builder.save_as = None,
                KeyCode::Enter => {
                    let name = name.text();
                    self.builder.save_as = None;
                    if !name.trim().is_empty() {
                        self.save_window(name.trim().to_owned());
                    }
                }
                _ => {
                    name.edit(key);
                }
            }
            return;
        }
        match key.code {
            KeyCode::Esc => self.builder.focus = Focus::Blocks,
            KeyCode::Enter => self.build_context(),
            KeyCode::Up | KeyCode::Down => {
                self.builder.focus = if self.builder.focus == Focus::Question { Focus::Budget } else { Focus::Question }
            }
            _ => {
                let field = if self.builder.focus == Focus::Budget {
                    &mut self.builder.budget
                } else {
                    &mut self.builder.question
                };
                field.edit(key);
            }
        }
    }

    fn on_builder_key(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.builder.move_by(-1),
            KeyCode::Down | KeyCode::Char('j') => self.builder.move_by(1),
            KeyCode::PageUp => self.builder.move_by(-PAGE),
            KeyCode::PageDown => self.builder.move_by(PAGE),
            KeyCode::Char('K') => self.builder.text_scroll = self.builder.text_scroll.saturating_sub(PAGE as u16),
            KeyCode::Char('J') => self.builder.text_scroll = self.builder.text_scroll.saturating_add(PAGE as u16),
            KeyCode::Char('x') | KeyCode::Delete => {
                if let Some(id) = self.builder.current().map(|b| b.id.clone()) {
                    self.edit_window(Change::Remove(id));
                }
            }
            KeyCode::Char('r') => {
                self.edit_window(Change::Render);
            }
            KeyCode::Char('y') => self.copy_context(),
            KeyCode::Char('s') => {
                if self.builder.view.is_some() {
                    self.builder.save_as = Some(Field::default());
                } else {
                    self.status = "build a context first".into();
                }
            }
            KeyCode::Char('e') | KeyCode::Char('i') | KeyCode::Enter => self.builder.focus = Focus::Question,
            KeyCode::Char('B') => self.builder.focus = Focus::Budget,
            _ => {}
        }
    }

    fn on_agent_typing(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Esc => self.agent_pane.typing = false,
            KeyCode::Enter => self.send_message(),
            KeyCode::PageUp => self.agent_pane.scroll += PAGE as usize,
            KeyCode::PageDown => self.agent_pane.scroll = self.agent_pane.scroll.saturating_sub(PAGE as usize),
            _ => {
                self.agent_pane.input.edit(key);
            }
        }
    }

    fn on_agent_key(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Enter | KeyCode::Char('i') => self.agent_pane.typing = true,
            KeyCode::Up | KeyCode::Char('k') => self.agent_pane.scroll += 1,
            KeyCode::Down | KeyCode::Char('j') => self.agent_pane.scroll = self.agent_pane.scroll.saturating_sub(1),
            KeyCode::PageUp => self.agent_pane.scroll += PAGE as usize,
            KeyCode::PageDown => self.agent_pane.scroll = self.agent_pane.scroll.saturating_sub(PAGE as usize),
            _ => {}
        }
    }

    fn on_state_key(&mut self, key: KeyEvent) {
        let state = &mut self.state;
        match key.code {
            KeyCode::Left | KeyCode::Char('h') => {
                state.section = (state.section + 3) % 4;
                state.cursor = 0;
            }
            KeyCode::Right | KeyCode::Char('l') => {
                state.section = (state.section + 1) % 4;
                state.cursor = 0;
            }
            KeyCode::Up | KeyCode::Char('k') => {
                state.cursor = state.cursor.saturating_sub(1);
                state.detail_scroll = 0;
            }
            KeyCode::Down | KeyCode::Char('j') => {
                let len = state.lists.as_ref().map_or(0, |l| match state.section {
                    0 => l.memories.len(),
                    1 => l.plans.nodes().len(),
                    2 => l.sessions.len(),
                    _ => l.transcripts.len(),
                });
                state.cursor = (state.cursor + 1).min(len.saturating_sub(1));
                state.detail_scroll = 0;
            }
            KeyCode::Char('J') => state.detail_scroll = state.detail_scroll.saturating_add(PAGE as u16),
            KeyCode::Char('K') => state.detail_scroll = state.detail_scroll.saturating_sub(PAGE as u16),
            _ => {}
        }
    }
}
