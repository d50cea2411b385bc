//! Text made safe to print on a terminal. Documents and inputs may hold
//! escape sequences, NULs and carriage returns (in file names too); shown
//! raw they rewrite the user's screen. Human-facing listings show them as
//! escapes (`\x1b`, `\0`, `\r`) and cut long lines. Block text returned as
//! content stays verbatim: this is for lines about it, not the text itself.

use std::borrow::Cow;

/// A character as it is safe to show on a terminal: control characters and
/// invisible formatting characters (zero-width, bidirectional overrides,
/// byte-order mark) become escapes; a tab stays a tab.
pub fn escape_char(c: char) -> Cow<'static, str> {
    match c {
        '\t' => "\t".into(),
        '\0' => "\\0".into(),
        '\r' => "\\r".into(),
        '\n' => "\\n".into(),
        c if (c as u32) < 0x80 && c.is_control() => format!("\\x{:02x}", c as u32).into(),
        c if c.is_control() || invisible(c) => format!("\\u{{{:x}}}", c as u32).into(),
        c => String::from(c).into(),
    }
}

/// Zero-width and bidirectional formatting characters and the byte-order
/// mark: invisible, yet they change what a terminal shows.
fn invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// Whether [`escape_char`] would change `c`.
fn needs_escape(c: char) -> bool {
    c != '\t' && (c.is_control() || invisible(c))
}

/// `text` safe to print on one line: characters escaped as [`escape_char`]
/// does (a tab as `\t` too), and cut after `max_chars` characters with `…`.
/// Borrows when nothing changes.
pub fn printable(text: &str, max_chars: usize) -> Cow<'_, str> {
    let short = text.len() <= max_chars || text.chars().nth(max_chars).is_none();
    if short && !text.chars().any(|c| c == '\t' || needs_escape(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max_chars {
            out.push('…');
            break;
        }
        match c {
            '\t' => out.push_str("\\t"),
            c => out.push_str(&escape_char(c)),
        }
    }
    Cow::Owned(out)
}

/// Text of many lines safe to print on a terminal: lines and tabs stay,
/// every other character [`escape_char`] changes is escaped (a model's
/// answer or a tool's output can hold escape sequences that clear the
/// screen or write the clipboard). Borrows when nothing changes.
pub fn terminal_text(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && needs_escape(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push('\n'),
            c => out.push_str(&escape_char(c)),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_escapes_and_long_text_is_cut() {
        assert!(matches!(printable("plain text", 80), Cow::Borrowed(_)));
        assert_eq!(printable("a\x1b[2Jb\0c\rd\te\u{202e}f", 80), "a\\x1b[2Jb\\0c\\rd\\te\\u{202e}f");
        assert_eq!(printable("héllo wörld", 5), "héllo…");
        assert_eq!(escape_char('\t'), "\t");
        assert_eq!(escape_char('\u{7f}'), "\\x7f");
        assert_eq!(escape_char('\u{85}'), "\\u{85}");
    }

    #[test]
    fn terminal_text_keeps_lines_and_tabs() {
        assert!(matches!(terminal_text("two\nlines\tand a tab"), Cow::Borrowed(_)));
        assert_eq!(terminal_text("a\x1b]52;c;AAAA\x07\nb\r\n"), "a\\x1b]52;c;AAAA\\x07\nb\\r\n");
    }

    proptest::proptest! {
        #[test]
        fn terminal_text_has_no_control_characters_but_lines_and_tabs(text in ".*") {
            let shown = terminal_text(&text);
            proptest::prop_assert!(!shown.chars().any(|c| c.is_control() && c != '\n' && c != '\t'));
        }

        #[test]
        fn printable_text_has_no_control_characters(text in ".*", max in 0usize..64) {
            let shown = printable(&text, max);
            proptest::prop_assert!(!shown.chars().any(|c| c.is_control()));
            if text.chars().count() <= max && !text.chars().any(|c| c.is_control() || needs_escape(c)) {
                proptest::prop_assert_eq!(shown.as_ref(), text.as_str());
            }
        }
    }
}
