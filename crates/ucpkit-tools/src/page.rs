//! Paging and the token cap every tool result obeys: entries are taken
//! from an offset up to a count and a token cap, never cut inside an entry,
//! and the text ends with how many entries are left and how to get them.

use serde::Serialize;
use ucpkit_core::Tokenizer;

/// Default most entries of one page.
pub const DEFAULT_HEAD_LIMIT: usize = 100;

/// Default most tokens of one tool result (under the 25,000 some clients refuse).
pub const DEFAULT_MAX_TOKENS: usize = 20_000;

/// Longest line a result shows whole, in characters.
pub const MAX_LINE_CHARS: usize = 500;

/// Which entries a call asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paging {
    /// Entries to skip.
    pub offset: usize,
    /// Most entries to return (at least 1).
    pub head_limit: usize,
}

impl Default for Paging {
    fn default() -> Self {
        Paging { offset: 0, head_limit: DEFAULT_HEAD_LIMIT }
    }
}

/// One entry of a paged listing: its text, and the group (a file) it
/// belongs to, whose name heads its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Heading line shown once before a run of entries with the same group.
    pub group: Option<String>,
    /// The entry's lines.
    pub text: String,
    /// A run of lines from its file (a match with context), set apart from
    /// the run before it by `--`, as ripgrep does.
    pub hunk: bool,
}

impl Entry {
    /// An entry of its own line(s), under no heading.
    pub fn plain(text: String) -> Self {
        Entry { group: None, text, hunk: false }
    }

    /// An entry under its file's heading (the path as [`shown_path`]
    /// shows it).
    pub fn under(path: &str, text: String) -> Self {
        Entry { group: Some(shown_path(path)), text, hunk: false }
    }
}

/// A file's path as a text listing shows it: control characters escaped,
/// so a name holding a newline or an escape sequence can neither forge a
/// line of the listing nor rewrite a terminal (JSON keeps it as it is).
pub fn shown_path(path: &str) -> String {
    ucpkit_core::printable(path, usize::MAX).into_owned()
}

/// Where a page sits in the whole listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PageInfo {
    /// Entries in the whole listing.
    pub total: usize,
    /// Index of the first entry shown.
    pub offset: usize,
    /// Entries shown.
    pub shown: usize,
    /// The offset that continues the listing, when entries are left.
    pub next_offset: Option<usize>,
}

impl PageInfo {
    /// The closing line that says what is left and how to get it, if any.
    pub fn footer(&self, noun: &str) -> Option<String> {
        let next = self.next_offset?;
        let left = self.total - next;
        Some(format!("[{left} more {noun}: pass offset={next}]"))
    }
}

/// Tokens of a growing text, counted exactly only when they must be: a
/// text's length in bytes bounds its token count (every token is at least
/// one byte), so while the bytes fit the room no tokenizer is even built.
pub struct Meter<'f, 't> {
    tokenizer: &'f dyn Fn() -> &'t dyn Tokenizer,
    room: usize,
    used: usize,
    exact: bool,
}

impl<'f, 't> Meter<'f, 't> {
    /// A meter for a text of at most `room` tokens; `tokenizer` gives the
    /// exact tokenizer when it is first needed.
    pub fn new(room: usize, tokenizer: &'f dyn Fn() -> &'t dyn Tokenizer) -> Self {
        Meter { tokenizer, room, used: 0, exact: false }
    }

    /// Whether `piece` fits after `so_far` (the text admitted until now);
    /// when it does, it counts as admitted.
    pub fn admit(&mut self, so_far: &str, piece: &str) -> bool {
        if !self.exact && self.used + piece.len() > self.room {
            self.used = (self.tokenizer)().count(so_far);
            self.exact = true;
        }
        let cost = if self.exact { (self.tokenizer)().count(piece) } else { piece.len() };
        if self.used + cost > self.room {
            return false;
        }
        self.used += cost;
        true
    }

    /// The exact tokenizer (built on first use).
    pub fn tokenizer(&self) -> &'t dyn Tokenizer {
        (self.tokenizer)()
    }
}

/// The text of `entries[paging.offset..]`, as many as `paging.head_limit`
/// and `max_tokens` allow (the footer included), with its page info.
/// An entry larger than the whole cap is shown cut, with a marker. An
/// empty page past the end is not an error: it says the total.
pub fn paginate<'t>(
    entries: &[Entry],
    paging: Paging,
    max_tokens: usize,
    tokenizer: &dyn Fn() -> &'t dyn Tokenizer,
    noun: &str,
) -> (String, PageInfo) {
    let total = entries.len();
    let start = paging.offset.min(total);
    let limit = paging.head_limit.max(1);
    // Room for the footer, which is short.
    let mut meter = Meter::new(max_tokens.saturating_sub(FOOTER_TOKENS), tokenizer);
    let mut text = String::new();
    let mut shown = 0;
    let mut group: Option<&str> = None;
    for entry in &entries[start..] {
        if shown == limit {
            break;
        }
        let mut piece = String::new();
        if entry.group.is_some() && entry.group.as_deref() != group {
            piece.push_str(entry.group.as_deref().unwrap_or_default());
            piece.push('\n');
        } else if entry.hunk && shown > 0 {
            piece.push_str("--\n");
        }
        piece.push_str(&entry.text);
        piece.push('\n');
        if !meter.admit(&text, &piece) {
            if shown == 0 {
                // Larger than the whole cap: its head, marked.
                let room = max_tokens.saturating_sub(2 * FOOTER_TOKENS);
                let head = ucpkit_core::outline::bounded_head(&piece, room, meter.tokenizer());
                text.push_str(&head);
                text.push_str("\n[entry cut: it is longer than the token cap]\n");
                shown = 1;
            }
            break;
        }
        text.push_str(&piece);
        group = entry.group.as_deref();
        shown += 1;
    }
    let next = start + shown;
    let info = PageInfo { total, offset: start, shown, next_offset: (next < total).then_some(next) };
    if let Some(footer) = info.footer(noun) {
        text.push_str(&footer);
        text.push('\n');
    }
    (text, info)
}

/// Tokens kept for a page's footer.
const FOOTER_TOKENS: usize = 32;

/// `line` cut to [`MAX_LINE_CHARS`] characters with a marker saying how
/// much is left out.
pub fn cut_line(line: &str) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => line.into(),
        Some((end, _)) => {
            let left = line[end..].chars().count();
            format!("{}… [line cut: {left} more characters]", &line[..end]).into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_core::BpeTokenizer;

    fn lazy<'a>(tokenizer: &'a BpeTokenizer) -> impl (Fn() -> &'a dyn Tokenizer) + 'a {
        move || tokenizer
    }

    fn plain(texts: &[&str]) -> Vec<Entry> {
        texts.iter().map(|t| Entry::plain((*t).to_owned())).collect()
    }

    #[test]
    fn pages_say_what_is_left_and_how_to_get_it() {
        let tokenizer = BpeTokenizer::default();
        let entries = plain(&["a", "b", "c", "d", "e"]);
        let (text, info) = paginate(&entries, Paging { offset: 1, head_limit: 2 }, 1000, &lazy(&tokenizer), "files");
        assert_eq!(text, "b\nc\n[2 more files: pass offset=3]\n");
        assert_eq!(info, PageInfo { total: 5, offset: 1, shown: 2, next_offset: Some(3) });
        let (text, info) = paginate(&entries, Paging { offset: 3, head_limit: 10 }, 1000, &lazy(&tokenizer), "files");
        assert_eq!(text, "d\ne\n");
        assert_eq!(info.next_offset, None);
        let (text, info) = paginate(&entries, Paging { offset: 9, head_limit: 10 }, 1000, &lazy(&tokenizer), "files");
        assert_eq!((text.as_str(), info.shown, info.offset), ("", 0, 5));
    }

    #[test]
    fn the_token_cap_cuts_between_entries() {
        let tokenizer = BpeTokenizer::default();
        let long = "word ".repeat(30);
        let entries = plain(&[&long, &long, &long, &long]);
        let (text, info) = paginate(&entries, Paging { offset: 0, head_limit: 100 }, 100, &lazy(&tokenizer), "lines");
        assert_eq!(info.shown, 2, "{text}");
        assert!(tokenizer.count(&text) <= 100);
        assert!(text.ends_with("[2 more lines: pass offset=2]\n"));
    }

    #[test]
    fn an_entry_larger_than_the_cap_is_cut_and_a_short_page_needs_no_tokenizer() {
        let tokenizer = BpeTokenizer::default();
        let huge = "many words in a line\n".repeat(500);
        let entries = plain(&[&huge, "next"]);
        let (text, info) = paginate(&entries, Paging::default(), 300, &lazy(&tokenizer), "matches");
        assert!(tokenizer.count(&text) <= 300, "{}", tokenizer.count(&text));
        assert!(text.contains("[entry cut: it is longer than the token cap]\n[1 more matches: pass offset=1]"));
        assert_eq!(info.shown, 1);
        let never = || -> &dyn Tokenizer { panic!("a page whose bytes fit needs no count") };
        let (text, _) = paginate(&plain(&["a", "b"]), Paging::default(), 300, &never, "files");
        assert_eq!(text, "a\nb\n");
    }

    #[test]
    fn groups_head_their_entries_once() {
        let tokenizer = BpeTokenizer::default();
        let entries = vec![
            Entry::under("a.rs", "1:x".into()),
            Entry::under("a.rs", "3:x".into()),
            Entry::under("b.rs", "2:x".into()),
            Entry { hunk: true, ..Entry::under("b.rs", "5-y\n6:x".into()) },
        ];
        let (text, _) = paginate(&entries, Paging::default(), 1000, &lazy(&tokenizer), "matches");
        assert_eq!(text, "a.rs\n1:x\n3:x\nb.rs\n2:x\n--\n5-y\n6:x\n");
    }

    #[test]
    fn long_lines_are_cut_with_a_marker() {
        let line = "é".repeat(MAX_LINE_CHARS + 7);
        let cut = cut_line(&line);
        assert!(cut.ends_with("… [line cut: 7 more characters]"));
        assert_eq!(cut_line("short"), "short");
    }
}
