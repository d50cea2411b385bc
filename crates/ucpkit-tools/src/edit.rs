//! `edit`: exact string replacements in a text file, all or nothing.
//!
//! An old string must occur exactly once unless `replace_all`; when it is
//! missing or ambiguous the error says how often and on which lines. A
//! file with CRLF line ends keeps them, and an old string written with LF
//! still matches. The file is written atomically with its permissions; a
//! dry run writes nothing and returns the unified diff.

use serde::Serialize;

use crate::{ToolError, Tools};

/// The time spent looking for the smallest diff of an edit.
const DIFF_TIME: std::time::Duration = std::time::Duration::from_millis(500);

/// One replacement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replacement {
    /// Exact text to replace.
    pub old_string: String,
    /// Text to put in its place.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    pub replace_all: bool,
}

/// An edit call: replacements applied in order, all or nothing.
#[derive(Debug, Clone, Default)]
pub struct EditRequest {
    /// The file, relative to the root.
    pub path: String,
    /// The replacements, in order (each sees the text the previous left).
    pub edits: Vec<Replacement>,
    /// Return the diff and write nothing.
    pub dry_run: bool,
}

/// What an edit did (or would do).
#[derive(Debug, Clone, Serialize)]
pub struct EditResult {
    /// Path relative to the root.
    pub path: String,
    /// Occurrences replaced, over all replacements.
    pub replacements: usize,
    /// 1-based lines where replacements start, in the new text.
    pub lines: Vec<usize>,
    /// Nothing was written.
    pub dry_run: bool,
    /// The unified diff of the change.
    pub diff: String,
    /// The compact text form (the diff for a dry run).
    pub text: String,
    /// The file's whole text before the edit.
    #[serde(skip)]
    pub before: String,
    /// Its whole text after.
    #[serde(skip)]
    pub after: String,
}

impl Tools {
    /// Applies an edit.
    pub fn edit(&self, request: &EditRequest) -> Result<EditResult, ToolError> {
        if !request.dry_run {
            self.check_writable("edit")?;
        }
        if request.edits.is_empty() {
            return Err(ToolError::Arguments("no replacement given".into()));
        }
        let real = self.jail.resolve(&request.path)?;
        let shown = self.jail.display(&real);
        if !request.dry_run {
            self.jail.check_writable(&real, &shown)?;
        }
        let before = self.whole_text(&real, &shown)?;
        let crlf = uses_crlf(&before);
        let mut after = before.clone();
        let mut replacements = 0;
        let mut starts = Vec::new();
        for replacement in &request.edits {
            let (count, found, at) = replace(&mut after, replacement, crlf, &shown)?;
            // Where earlier replacements start, in the text this one left.
            let (old, new) =
                (with_line_ends(&replacement.old_string, crlf), with_line_ends(&replacement.new_string, crlf));
            for start in &mut starts {
                *start = shifted(*start, &found, old.len(), new.len());
            }
            replacements += count;
            starts.extend(at);
        }
        let lines = lines_of(&after, &starts);
        // A minimal diff of thousands of changed lines is quadratic to find:
        // past its time the rest is shown as whole hunks (still exact).
        let diff = similar::TextDiff::configure()
            .timeout(DIFF_TIME)
            .diff_lines(&before, &after)
            .unified_diff()
            .context_radius(2)
            .header(&shown, &shown)
            .to_string();
        let text = if request.dry_run {
            let head = format!("dry run, nothing written: {replacements} replacement(s) in {shown}\n");
            let room = self.max_tokens.saturating_sub(64);
            if diff.len() > room && self.tokenizer().count(&diff) > room {
                let cut = ucpkit_core::outline::bounded_head(&diff, room, self.tokenizer());
                format!("{head}{cut}\n[diff cut at the token cap: {} of its lines shown]\n", cut.lines().count())
            } else {
                format!("{head}{diff}")
            }
        } else {
            self.put_text(&real, &shown, &after)?;
            let listed = lines.iter().take(20).map(usize::to_string).collect::<Vec<_>>().join(", ");
            format!("edited {shown}: {replacements} replacement(s) at line {listed}\n")
        };
        Ok(EditResult { path: shown, replacements, lines, dry_run: request.dry_run, diff, text, before, after })
    }
}

/// Whether a text's lines end with CRLF (most of them).
fn uses_crlf(text: &str) -> bool {
    let crlf = text.matches("\r\n").count();
    crlf > 0 && crlf * 2 >= text.matches('\n').count()
}

/// `text` with its line ends as the file's.
fn with_line_ends(text: &str, crlf: bool) -> String {
    if crlf {
        text.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        text.to_owned()
    }
}

/// Where the byte offset `at` of a text lands once the `old_len` bytes at
/// each offset of `found` (ascending, not overlapping) became `new_len`
/// bytes; an offset inside a replaced span lands at the start of its
/// replacement. A binary search: many replacements stay fast.
fn shifted(at: usize, found: &[usize], old_len: usize, new_len: usize) -> usize {
    let before = found.partition_point(|&p| p + old_len <= at);
    match found.get(before) {
        Some(&p) if p < at => p + before * new_len - before * old_len,
        _ => at + before * new_len - before * old_len,
    }
}

/// Applies one replacement to `text`; returns how many, the byte offsets
/// (in the old text) it replaced, and where they start in the new text.
fn replace(
    text: &mut String,
    replacement: &Replacement,
    crlf: bool,
    shown: &str,
) -> Result<(usize, Vec<usize>, Vec<usize>), ToolError> {
    if replacement.old_string.is_empty() {
        return Err(ToolError::Arguments("old_string is empty: give the exact text to replace".into()));
    }
    if replacement.old_string == replacement.new_string {
        return Err(ToolError::Arguments("old_string and new_string are the same".into()));
    }
    let old = with_line_ends(&replacement.old_string, crlf);
    let new = with_line_ends(&replacement.new_string, crlf);
    let found: Vec<usize> = text.match_indices(&old).map(|(at, _)| at).collect();
    match found.len() {
        0 => Err(ToolError::EditNotFound { path: shown.to_owned(), hint: near_miss(text, &old) }),
        n if n > 1 && !replacement.replace_all => {
            let lines = lines_of(text, &found[..n.min(10)]).iter().map(usize::to_string).collect::<Vec<_>>();
            let more = if n > 10 { ", ..." } else { "" };
            Err(ToolError::EditAmbiguous { path: shown.to_owned(), count: n, lines: lines.join(", ") + more })
        }
        _ => {
            let mut out = String::with_capacity(text.len() + found.len() * new.len());
            let mut starts = Vec::with_capacity(found.len());
            let mut last = 0;
            for &at in &found {
                out.push_str(&text[last..at]);
                starts.push(out.len());
                out.push_str(&new);
                last = at + old.len();
            }
            out.push_str(&text[last..]);
            *text = out;
            Ok((found.len(), found, starts))
        }
    }
}

/// A hint for an old string that is not found: where a form differing
/// only in case or in leading/trailing whitespace per line is.
fn near_miss(text: &str, old: &str) -> String {
    if let Some(at) = text.to_lowercase().find(&old.to_lowercase()) {
        // Lowercasing keeps byte offsets for ASCII; count lines up to there.
        let line = text.get(..at).map_or(1, |head| head.matches('\n').count() + 1);
        return format!(" (it occurs with other letter case at line {line})");
    }
    let first = old.lines().map(str::trim).find(|l| !l.is_empty());
    if let Some(first) = first {
        if let Some(line) = text.lines().position(|l| l.trim() == first) {
            return format!(
                " (its first line occurs with other indentation or spacing at line {}: copy the text exactly)",
                line + 1
            );
        }
    }
    String::new()
}

/// 1-based lines of byte offsets (in any order), in one pass over `text`.
fn lines_of(text: &str, offsets: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..offsets.len()).collect();
    order.sort_by_key(|&i| offsets[i]);
    let mut lines = vec![0; offsets.len()];
    let (mut line, mut counted) = (1, 0);
    for i in order {
        let at = offsets[i];
        line += text.as_bytes()[counted..at].iter().filter(|&&b| b == b'\n').count();
        counted = at;
        lines[i] = line;
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line_of(text: &str, at: usize) -> usize {
        text[..at].matches('\n').count() + 1
    }

    fn one(old: &str, new: &str) -> Replacement {
        Replacement { old_string: old.into(), new_string: new.into(), replace_all: false }
    }

    #[test]
    fn crlf_text_matches_lf_strings_and_stays_crlf() {
        let mut text = "a\r\nb\r\nc\r\n".to_owned();
        let crlf = uses_crlf(&text);
        assert!(crlf);
        let (n, _, at) = replace(&mut text, &one("a\nb", "x\ny\nz"), crlf, "f").unwrap();
        assert_eq!((n, at), (1, vec![0]));
        assert_eq!(text, "x\r\ny\r\nz\r\nc\r\n");
    }

    #[test]
    fn lines_of_offsets_in_any_order() {
        let text = "a\nbb\n\nc";
        let offsets = [7, 0, 3, 2, 5];
        let lines = lines_of(text, &offsets);
        assert_eq!(lines, offsets.iter().map(|&at| line_of(text, at)).collect::<Vec<_>>());
        assert_eq!(lines, [4, 1, 2, 2, 3]);
    }

    proptest::proptest! {
        #[test]
        fn shifted_offsets_match_a_replacement_done_by_hand(
            text in "[ab\n]{0,60}",
            at in 0usize..61,
            new in "[xyz]{0,4}",
        ) {
            let at = at.min(text.len());
            let found: Vec<usize> = text.match_indices("ab").map(|(i, _)| i).collect();
            // By hand: walk the text, tracking where `at` goes.
            let (mut out, mut mapped, mut last) = (String::new(), None, 0);
            for &p in &found {
                if mapped.is_none() && at < p + 2 {
                    mapped = Some(if at <= p { out.len() + at - last } else { out.len() + p - last });
                }
                out.push_str(&text[last..p]);
                out.push_str(&new);
                last = p + 2;
            }
            let mapped = mapped.unwrap_or_else(|| out.len() + at - last);
            proptest::prop_assert_eq!(shifted(at, &found, 2, new.len()), mapped);
            let lines = lines_of(&text, &[at]);
            proptest::prop_assert_eq!(lines[0], line_of(&text, at));
        }
    }

    #[test]
    fn earlier_starts_follow_later_replacements() {
        // "0123456789\nfoo\n": foo -> bar at 11, then the first line removed.
        assert_eq!(shifted(11, &[0], 11, 0), 0);
        assert_eq!(shifted(11, &[2, 20], 3, 5), 13);
        assert_eq!(shifted(4, &[2], 5, 1), 2, "inside a replaced span: its start");
    }

    #[test]
    fn missing_and_ambiguous_strings_say_where() {
        let mut text = "let a = 1;\nlet b = 1;\n    Let c;\n".to_owned();
        let error = replace(&mut text, &one(" = 1;", " = 2;"), false, "f").unwrap_err();
        assert_eq!(
            error.to_string(),
            "f: old_string occurs 2 times (lines 1, 2): add surrounding lines to make it unique, or set replace_all"
        );
        let error = replace(&mut text, &one("let c;", "x"), false, "f").unwrap_err();
        assert!(error.to_string().contains("other letter case at line 3"), "{error}");
        let error = replace(&mut text, &one("let b = 1;  \n", "x"), false, "f").unwrap_err();
        assert!(error.to_string().contains("spacing at line 2"), "{error}");
        assert_eq!(text, "let a = 1;\nlet b = 1;\n    Let c;\n", "a failed replacement changes nothing");
        let all = Replacement { replace_all: true, ..one(" = 1;", " = 2;") };
        assert_eq!(replace(&mut text, &all, false, "f").unwrap().0, 2);
        assert_eq!(text, "let a = 2;\nlet b = 2;\n    Let c;\n");
    }
}
