//! Tool results bounded by a token cap: a long result is cut into pages at
//! block boundaries (blank lines), each page with a note saying how to get
//! the rest.

use ucpkit_core::outline;
use ucpkit_core::Tokenizer;

/// Tokens kept free on every cut page for the note that ends it.
const NOTE_RESERVE: usize = 80;

/// A result cut to the cap: the pages, the first one to show now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pages {
    /// Page texts, each at most the cap in tokens once its note is added.
    pub pages: Vec<String>,
    /// Tokens of the whole result.
    pub total_tokens: usize,
}

impl Pages {
    /// Page `n` (1-based) with its note, when the result had to be cut.
    pub fn page(&self, n: usize, next_hint: &str) -> Option<String> {
        let text = self.pages.get(n.checked_sub(1)?)?;
        if self.pages.len() == 1 {
            return Some(text.clone());
        }
        let mut page = text.trim_end().to_owned();
        page.push_str(&format!(
            "\n\n[cut at a block boundary: page {n} of {} ({} tokens in all)",
            self.pages.len(),
            self.total_tokens
        ));
        if n < self.pages.len() {
            page.push_str(&format!("; next: {next_hint} page={}", n + 1));
        }
        page.push_str("; or narrow the request, e.g. VIEW <id> or EXPAND with TOKENS=n]");
        Some(page)
    }
}

/// Cuts `text` into pages of at most `cap` tokens (notes included): whole
/// blocks (paragraphs between blank lines) while they fit, a block longer
/// than a page by lines, a line longer than a page by words.
pub fn paginate(text: &str, cap: usize, tokenizer: &dyn Tokenizer) -> Pages {
    let total_tokens = tokenizer.count(text);
    if total_tokens <= cap {
        return Pages { pages: vec![text.to_owned()], total_tokens };
    }
    let room = cap.saturating_sub(NOTE_RESERVE).max(1);
    let pieces = pieces(text, room, tokenizer);
    let mut pages = Vec::new();
    let mut start = 0;
    while start < pieces.len() {
        // A page takes at least one piece (pieces are cut to fit a page).
        let (page, taken) = match fitting(&pieces[start..], room, tokenizer) {
            (_, 0) => (pieces[start].clone(), 1),
            fit => fit,
        };
        if !page.trim().is_empty() {
            pages.push(page);
        }
        start += taken;
    }
    Pages { pages, total_tokens }
}

/// The longest run of `pieces` from the first whose text has at most
/// `room` tokens, and its length. Each piece is counted once and the
/// joined text once more (rarely again: a join can cost a token more than
/// its parts), so cutting a long text into pages stays linear.
pub fn fitting(pieces: &[String], room: usize, tokenizer: &dyn Tokenizer) -> (String, usize) {
    let mut estimate = 0;
    let mut taken = 0;
    for piece in pieces {
        estimate += tokenizer.count(piece);
        if estimate > room {
            break;
        }
        taken += 1;
    }
    let mut text = pieces[..taken].concat();
    while taken > 0 && tokenizer.count(&text) > room {
        taken -= 1;
        text = pieces[..taken].concat();
    }
    (text, taken)
}

/// The blocks of `text` (each with its trailing blank line), a block longer
/// than `room` split by lines, a line longer than `room` by words.
fn pieces(text: &str, room: usize, tokenizer: &dyn Tokenizer) -> Vec<String> {
    let mut out = Vec::new();
    for block in text.split_inclusive("\n\n") {
        if fits(block, room, tokenizer) {
            out.push(block.to_owned());
            continue;
        }
        for line in block.split_inclusive('\n') {
            line_pieces(line, room, tokenizer, &mut out);
        }
    }
    out
}

/// `line` in pieces of at most `room` tokens, cut at word ends where it
/// has them. The line is counted once, for its bytes per token; each piece
/// is then cut from a window of about a piece and a half of the bytes
/// after the last one, never from the whole rest, so the work stays linear
/// in the line's length (a line of one 4 MB word included).
fn line_pieces(line: &str, room: usize, tokenizer: &dyn Tokenizer, out: &mut Vec<String>) {
    let tokens = if line.len() <= room { 0 } else { tokenizer.count(line) };
    if tokens <= room {
        out.push(line.to_owned());
        return;
    }
    let window = (room * line.len().div_ceil(tokens) * 3 / 2).max(room);
    let mut rest = line;
    while !rest.is_empty() {
        if rest.len() <= window && (rest.len() <= room || tokenizer.count(rest) <= room) {
            out.push(rest.to_owned());
            return;
        }
        let head = outline::head(outline::prefix(rest, window), room, tokenizer);
        if head.is_empty() {
            // Nothing fits (a room under one character's tokens): as it is.
            out.push(rest.to_owned());
            return;
        }
        rest = rest[head.len()..].trim_start();
        out.push(format!("{head}\n"));
    }
}

/// Whether `text` has at most `room` tokens, counted only when its bytes
/// do not settle it; a text over a window's bytes is taken as too long (a
/// page cut from it is then shorter than it could be, never longer).
fn fits(text: &str, room: usize, tokenizer: &dyn Tokenizer) -> bool {
    text.len() <= room || (text.len() <= room * outline::WINDOW_BYTES_PER_TOKEN && tokenizer.count(text) <= room)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_core::BpeTokenizer;

    #[test]
    fn short_results_are_one_page_without_a_note() {
        let tokenizer = BpeTokenizer::default();
        let pages = paginate("one\n\ntwo", 100, &tokenizer);
        assert_eq!(pages.pages, vec!["one\n\ntwo".to_owned()]);
        assert_eq!(pages.page(1, "x").unwrap(), "one\n\ntwo");
        assert_eq!(pages.page(2, "x"), None);
    }

    #[test]
    fn long_results_are_cut_between_blocks_and_every_page_fits() {
        let tokenizer = BpeTokenizer::default();
        let blocks: Vec<String> = (0..200).map(|i| format!("block {i}: {}", "word ".repeat(i % 37 + 3))).collect();
        let text = blocks.join("\n\n");
        let cap = 300;
        let pages = paginate(&text, cap, &tokenizer);
        assert!(pages.pages.len() > 1);
        for n in 1..=pages.pages.len() {
            let page = pages.page(n, "call ucl with").unwrap();
            assert!(tokenizer.count(&page) <= cap, "page {n} has {} tokens", tokenizer.count(&page));
            assert!(page.contains(&format!("page {n} of {}", pages.pages.len())));
        }
        // Nothing lost, nothing cut inside a block.
        let joined: String = pages.pages.concat();
        assert_eq!(joined, text);
        for page in &pages.pages {
            assert!(page.starts_with("block "), "page starts mid-block: {:?}", &page[..20]);
        }
        assert!(pages.page(1, "call ucl with").unwrap().contains("next: call ucl with page=2"));
    }

    #[test]
    fn one_word_longer_than_many_pages_is_cut_whole() {
        let tokenizer = BpeTokenizer::default();
        let word: String = (0..200_000).map(|i| char::from(b'a' + (i * 7 % 26) as u8)).collect();
        let cap = 1000;
        let pages = paginate(&word, cap, &tokenizer);
        assert!(pages.pages.len() > 10);
        for n in 1..=pages.pages.len() {
            assert!(tokenizer.count(&pages.page(n, "x").unwrap()) <= cap);
        }
        let joined: String = pages.pages.iter().map(|p| p.trim_end_matches('\n')).collect();
        assert_eq!(joined, word, "nothing lost");
    }

    #[test]
    fn a_block_longer_than_a_page_is_split_and_still_fits() {
        let tokenizer = BpeTokenizer::default();
        let text = format!("{}\n\nshort", "lorem ipsum ".repeat(2000));
        let cap = 200;
        let pages = paginate(&text, cap, &tokenizer);
        for n in 1..=pages.pages.len() {
            assert!(tokenizer.count(&pages.page(n, "x").unwrap()) <= cap);
        }
        assert!(pages.pages.last().unwrap().contains("short"));
    }
}
