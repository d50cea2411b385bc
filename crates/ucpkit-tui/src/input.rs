//! A one-line text field: characters, a cursor, and the keys that edit it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Most characters a field holds (a question, a UCL line, a message).
pub(crate) const MAX_CHARS: usize = 4000;

/// The text of a field and where its cursor stands (in characters).
#[derive(Debug, Default, Clone)]
pub(crate) struct Field {
    chars: Vec<char>,
    cursor: usize,
}

impl Field {
    /// A field holding `text`, the cursor at its end.
    pub(crate) fn with(text: &str) -> Field {
        let chars: Vec<char> = text.chars().take(MAX_CHARS).collect();
        Field { cursor: chars.len(), chars }
    }

    /// Its text.
    pub(crate) fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// Whether it holds nothing but blanks.
    pub(crate) fn is_blank(&self) -> bool {
        self.chars.iter().all(|c| c.is_whitespace())
    }

    /// Empties it.
    pub(crate) fn clear(&mut self) {
        self.chars.clear();
        self.cursor = 0;
    }

    /// Inserts pasted `text` at the cursor, a line break as a space and
    /// other control characters left out.
    pub(crate) fn paste(&mut self, text: &str) {
        for c in text.chars() {
            let c = if c == '\n' || c == '\t' { ' ' } else { c };
            if c.is_control() || self.chars.len() >= MAX_CHARS {
                continue;
            }
            self.chars.insert(self.cursor, c);
            self.cursor += 1;
        }
    }

    /// Applies an editing key; false when the key is not one.
    pub(crate) fn edit(&mut self, key: KeyEvent) -> bool {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('u') if ctrl => {
                self.chars.drain(..self.cursor);
                self.cursor = 0;
            }
            KeyCode::Char('a') if ctrl => self.cursor = 0,
            KeyCode::Char('e') if ctrl => self.cursor = self.chars.len(),
            KeyCode::Char('w') if ctrl => {
                let mut start = self.cursor;
                while start > 0 && self.chars[start - 1] == ' ' {
                    start -= 1;
                }
                while start > 0 && self.chars[start - 1] != ' ' {
                    start -= 1;
                }
                self.chars.drain(start..self.cursor);
                self.cursor = start;
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() => {
                if self.chars.len() < MAX_CHARS {
                    self.chars.insert(self.cursor, c);
                    self.cursor += 1;
                }
            }
            KeyCode::Backspace if self.cursor > 0 => {
                self.cursor -= 1;
                self.chars.remove(self.cursor);
            }
            KeyCode::Delete if self.cursor < self.chars.len() => {
                self.chars.remove(self.cursor);
            }
            KeyCode::Left => self.cursor = self.cursor.saturating_sub(1),
            KeyCode::Right => self.cursor = (self.cursor + 1).min(self.chars.len()),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = self.chars.len(),
            KeyCode::Backspace | KeyCode::Delete => {}
            _ => return false,
        }
        true
    }

    /// The part of the text a field `width` columns wide shows (the
    /// cursor kept in sight), and the cursor's column in it.
    pub(crate) fn visible(&self, width: usize) -> (String, usize) {
        let width = width.max(1);
        let start = (self.cursor + 1).saturating_sub(width);
        let shown: String = self.chars[start..].iter().take(width).collect();
        (shown, self.cursor - start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn typing_moving_and_deleting_edit_at_the_cursor() {
        let mut field = Field::default();
        for c in "read file".chars() {
            assert!(field.edit(key(KeyCode::Char(c))));
        }
        field.edit(key(KeyCode::Home));
        field.edit(key(KeyCode::Char('>')));
        field.edit(key(KeyCode::End));
        field.edit(key(KeyCode::Backspace));
        assert_eq!(field.text(), ">read fil");
        field.edit(KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL));
        assert_eq!(field.text(), ">read ");
        assert!(!field.edit(key(KeyCode::Enter)), "Enter is not an edit");
        assert!(!field.edit(key(KeyCode::Char('\u{1b}'))), "no control characters");
        assert_eq!(field.text(), ">read ");
    }

    #[test]
    fn a_paste_is_one_line_of_text() {
        let mut field = Field::with("ab");
        field.edit(key(KeyCode::Left));
        field.paste("x\ny\r\u{1b}[2Jz");
        assert_eq!(field.text(), "ax y[2Jzb");
    }

    #[test]
    fn a_long_text_scrolls_to_keep_the_cursor_in_sight() {
        let field = Field::with("abcdefghij");
        assert_eq!(field.visible(4), ("hij".to_owned(), 3));
        assert_eq!(Field::with("ab").visible(10), ("ab".to_owned(), 2));
    }
}
