//! The command palette (Ctrl-P): every action by name, filtered as you
//! type (each word typed must appear in the name), the models of the
//! agent and of each sub-agent type among them with the current one
//! checked.

use crate::input::Field;
use crate::models::ModelOption;

/// The screens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tab {
    /// Documents and their block trees.
    Navigator,
    /// The context builder.
    Context,
    /// The agent's conversation.
    Agent,
    /// Memories, plans and sessions.
    State,
}

impl Tab {
    /// Every screen, in the order the header shows them.
    pub(crate) const ALL: [Tab; 4] = [Tab::Navigator, Tab::Context, Tab::Agent, Tab::State];

    /// Its name in the header.
    pub(crate) fn title(self) -> &'static str {
        match self {
            Tab::Navigator => "Navigator",
            Tab::Context => "Context",
            Tab::Agent => "Agent",
            Tab::State => "Memory",
        }
    }
}

/// What a palette entry does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Command {
    /// Shows a screen.
    Show(Tab),
    /// Opens the search.
    Search,
    /// Opens the UCL line.
    Ucl,
    /// Shows every key.
    Help,
    /// Leaves.
    Quit,
    /// Copies the built context.
    Copy,
    /// Saves the builder's window as a named session.
    Save,
    /// Unfolds or folds the agent's tool results.
    ToggleResults,
    /// Reads the store's documents, memories and sessions again.
    Reload,
    /// Makes a model the agent's, or a sub-agent type's.
    Model(ModelOption),
}

/// One entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Item {
    /// Its name, as filtered.
    pub(crate) label: String,
    /// Its key, when it has one.
    pub(crate) key: &'static str,
    /// What it does.
    pub(crate) command: Command,
}

/// The palette's state.
pub(crate) struct Palette {
    /// What was typed.
    pub(crate) query: Field,
    items: Vec<Item>,
    /// The entries the query keeps, in order.
    pub(crate) shown: Vec<usize>,
    /// The shown entry under the cursor.
    pub(crate) cursor: usize,
}

impl Palette {
    /// A palette of the fixed actions and `models`.
    pub(crate) fn new(models: Vec<ModelOption>) -> Palette {
        let fixed = [
            ("Go to Navigator", "Tab", Command::Show(Tab::Navigator)),
            ("Go to Context builder", "Tab", Command::Show(Tab::Context)),
            ("Go to Agent", "Tab", Command::Show(Tab::Agent)),
            ("Go to Memory, plans and sessions", "Tab", Command::Show(Tab::State)),
            ("Search the document", "/", Command::Search),
            ("Run a UCL line", ":", Command::Ucl),
            ("Copy the context", "y", Command::Copy),
            ("Save the context as a session", "s", Command::Save),
            ("Unfold or fold tool results", "Ctrl-O", Command::ToggleResults),
            ("Reload the store", "Ctrl-R", Command::Reload),
            ("Help: every key", "?", Command::Help),
            ("Quit", "q", Command::Quit),
        ];
        let mut items: Vec<Item> =
            fixed.into_iter().map(|(label, key, command)| Item { label: label.to_owned(), key, command }).collect();
        items.extend(models.into_iter().map(|option| Item {
            label: format!(
                "{}: {}/{}{}",
                option.target.label(),
                option.provider,
                option.model,
                if option.current { " ✓" } else { "" }
            ),
            key: "",
            command: Command::Model(option),
        }));
        let mut palette = Palette { query: Field::default(), shown: Vec::new(), items, cursor: 0 };
        palette.filter();
        palette
    }

    /// Keeps the entries whose name holds every word typed (any case).
    pub(crate) fn filter(&mut self) {
        let query = self.query.text().to_lowercase();
        let words: Vec<&str> = query.split_whitespace().collect();
        self.shown = (0..self.items.len())
            .filter(|&i| {
                let label = self.items[i].label.to_lowercase();
                words.iter().all(|w| label.contains(w))
            })
            .collect();
        self.cursor = self.cursor.min(self.shown.len().saturating_sub(1));
    }

    /// The shown entries.
    pub(crate) fn shown(&self) -> impl Iterator<Item = &Item> {
        self.shown.iter().map(|&i| &self.items[i])
    }

    /// Moves the cursor.
    pub(crate) fn move_by(&mut self, delta: isize) {
        self.cursor = self.cursor.saturating_add_signed(delta).min(self.shown.len().saturating_sub(1));
    }

    /// The command under the cursor.
    pub(crate) fn chosen(&self) -> Option<Command> {
        self.shown.get(self.cursor).map(|&i| self.items[i].command.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::Target;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    fn option(target: Target, model: &str, current: bool) -> ModelOption {
        ModelOption { target, provider: "local".into(), model: model.into(), current }
    }

    #[test]
    fn typed_words_keep_the_entries_holding_each_of_them() {
        let mut palette = Palette::new(vec![
            option(Target::Subagent("explore"), "haiku", true),
            option(Target::Subagent("explore"), "opus", false),
            option(Target::Subagent("plan"), "haiku", false),
        ]);
        for c in "explore HAI".chars() {
            palette.query.edit(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        palette.filter();
        let labels: Vec<&str> = palette.shown().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["Subagent explore: local/haiku ✓"]);
        assert!(matches!(palette.chosen(), Some(Command::Model(o)) if o.model == "haiku"));
        palette.query.clear();
        palette.filter();
        assert_eq!(palette.shown().count(), 12 + 3);
    }
}
