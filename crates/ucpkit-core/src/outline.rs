//! Structural facts about a block in its document, which every listing,
//! index and context needs alike: its title, its heading path (the titled
//! sections above it), its place in document order, its text as written,
//! and token sizes.

use crate::{Block, BlockId, Content, Document, Role, Tokenizer};

/// Longest title kept in a heading path, in characters.
const TITLE_CHARS: usize = 80;

/// The title a block gives its descendants' heading path: heading text,
/// the label of a file or folder, or the name of a code symbol.
pub fn title(block: &Block) -> Option<String> {
    let text = match (&block.content, block.role()) {
        (Content::Text { text, .. }, Some(role)) if role.heading_level().is_some() || *role == Role::Title => text,
        (Content::Composite, _) => block.metadata.label.as_ref()?,
        (Content::Code { .. }, Some(role)) if role.is_code_symbol() => block.metadata.label.as_ref()?,
        _ => return None,
    };
    let line = text.lines().next().unwrap_or("").trim();
    Some(match line.char_indices().nth(TITLE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    })
}

/// When and where a block happened, for blocks that record it (a
/// conversation's turns kept as memories): its metadata's `session` and
/// `time`, joined by ` · `. Shown next to its heading path, never inside
/// its text.
pub fn occasion(block: &Block) -> Option<String> {
    let parts: Vec<String> = ["session", "time"].into_iter().filter_map(|key| label(block, key)).collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// The session (a conversation's sitting) a block records, for blocks
/// that record one: its metadata's `session`, trimmed.
pub fn session(block: &Block) -> Option<String> {
    label(block, "session")
}

/// The kind of a memory that is a turn of a conversation.
pub const TURN_KIND: &str = "message";

/// Whether a block is a memory kept on its own: one with a kind (a
/// finding, a decision, a note: metadata `kind`) that is no turn of a
/// conversation: it records no session, names no speaker and is not of
/// [`TURN_KIND`]. The memories stored next to it were stored at other
/// times, not said with it, so a ranking reads it alone.
pub fn stands_alone(block: &Block) -> bool {
    session(block).is_none()
        && label(block, "speaker").is_none()
        && label(block, "kind").is_some_and(|kind| kind != TURN_KIND)
}

/// Metadata `key` of `block` as a label: a string that is not blank
/// (trimmed), or a number.
fn label(block: &Block, key: &str) -> Option<String> {
    match block.metadata.custom.get(key)? {
        serde_json::Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The titled ancestors of a block, outermost first. A folder whose path
/// the label of a file or folder below it (the block itself included)
/// already starts with is left out: `library > library/csv.html` reads
/// `library/csv.html`.
pub fn titled_path(doc: &Document, id: BlockId) -> Vec<BlockId> {
    let label = |b: BlockId, roles: &[Role]| {
        doc.get(b).filter(|b| b.role().is_some_and(|r| roles.contains(r))).and_then(|b| b.metadata.label.as_deref())
    };
    let mut path: Vec<BlockId> = Vec::new();
    let mut below = label(id, &[Role::Directory, Role::File]);
    for ancestor in doc.ancestors(id).filter(|a| !a.is_root() && doc.get(*a).and_then(title).is_some()) {
        let named = match (label(ancestor, &[Role::Directory]), below) {
            (Some(folder), Some(below)) => below.strip_prefix(folder).is_some_and(|rest| rest.starts_with('/')),
            _ => false,
        };
        if !named {
            path.push(ancestor);
            below = label(ancestor, &[Role::Directory, Role::File]);
        }
    }
    path.reverse();
    path
}

/// The qualified name of a code symbol's block (`Class.method`), as code
/// ingest records it.
pub fn symbol(block: &Block) -> Option<&str> {
    block.metadata.custom.get("symbol")?.as_str()
}

/// Whether a block is part of a source file read as code (its file block
/// names the file's `language`), rather than prose or a code sample.
pub fn in_source_file(doc: &Document, id: BlockId) -> bool {
    std::iter::once(id)
        .chain(doc.ancestors(id))
        .filter_map(|a| doc.get(a))
        .find(|b| b.role() == Some(&Role::File))
        .is_some_and(|file| file.metadata.custom.contains_key("language"))
}

/// How much a block of test code counts in a ranking next to other
/// blocks: half. Asked where behaviour lives, the code that has it is the
/// answer more often than the tests that check it, which repeat its names.
pub const TEST_CODE_PRIOR: f32 = 0.5;

/// How much a block counts in a ranking before its text is matched:
/// [`TEST_CODE_PRIOR`] for code in a test file, else 1.
pub fn rank_prior(block: &Block) -> f32 {
    let code = matches!(block.content, Content::Code { .. }) || block.role().is_some_and(Role::is_code);
    match &block.metadata.source {
        Some(source) if code && is_test_path(&source.file) => TEST_CODE_PRIOR,
        _ => 1.0,
    }
}

/// Whether a corpus path is test code by the conventions of common
/// languages: a folder named `test`, `tests`, `testing`, `__tests__` or
/// `spec`, or a file named `test_*`, `*_test.*`, `*_tests.*`, `*.test.*`,
/// `*.spec.*`, `*Test.java`, `*Tests.*` or `conftest.py`.
pub fn is_test_path(path: &str) -> bool {
    let mut parts = path.split('/').rev();
    let name = parts.next().unwrap_or("");
    if parts.any(|dir| matches!(dir, "test" | "tests" | "testing" | "__tests__" | "spec" | "specs")) {
        return true;
    }
    let stem = name.split('.').next().unwrap_or(name);
    stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.ends_with("Test")
        || stem.ends_with("Tests")
        || name.contains(".test.")
        || name.contains(".spec.")
        || name == "conftest.py"
}

/// Titles of the titled ancestors of a block, outermost first.
pub fn path_titles(doc: &Document, id: BlockId) -> Vec<String> {
    titled_path(doc, id).into_iter().filter_map(|a| doc.get(a).and_then(title)).collect()
}

/// Document-order key: the child index at every level from the root.
pub fn order_key(doc: &Document, id: BlockId) -> Vec<u32> {
    let mut key: Vec<u32> = std::iter::once(id)
        .chain(doc.ancestors(id))
        .filter_map(|a| doc.index_in_parent(a))
        .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
        .collect();
    key.reverse();
    key
}

/// The block's text as the source wrote it (markdown stays markdown).
pub fn full_body(block: &Block) -> String {
    let text = block.to_markdown();
    let text = text.trim_end();
    if text.is_empty() {
        title(block).unwrap_or_else(|| block.role().map_or("block", Role::as_str).to_owned())
    } else {
        text.to_owned()
    }
}

/// Token count of a block in full, from its cached count when present.
pub fn block_tokens(block: &Block, tokenizer: &dyn Tokenizer) -> usize {
    match block.metadata.tokens {
        Some(n) => n as usize,
        None => tokenizer.count(&block.to_markdown()),
    }
}

/// Number of descendants and their total tokens.
pub fn subtree(doc: &Document, id: BlockId, tokenizer: &dyn Tokenizer) -> (usize, usize) {
    doc.descendants(id)
        .filter_map(|d| doc.get(d))
        .fold((0, 0), |(n, tokens), b| (n + 1, tokens + block_tokens(b, tokenizer)))
}

/// The longest head of `text` with at most `max_tokens` tokens, cut at a
/// word boundary (binary search over word ends).
pub fn head(text: &str, max_tokens: usize, tokenizer: &dyn Tokenizer) -> String {
    if tokenizer.count(text) <= max_tokens {
        return text.to_owned();
    }
    let ends: Vec<usize> =
        text.char_indices().filter(|(_, c)| c.is_whitespace()).map(|(i, _)| i).chain([text.len()]).collect();
    let (mut low, mut high) = (0usize, ends.len());
    while low < high {
        let mid = (low + high).div_ceil(2);
        if tokenizer.count(&text[..ends[mid - 1]]) <= max_tokens {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    if low == 0 {
        // A single word longer than the budget: cut by characters.
        let chars: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        let keep = chars.partition_point(|&i| tokenizer.count(&text[..i]) <= max_tokens);
        return text[..chars[keep.saturating_sub(1)]].to_owned();
    }
    text[..ends[low - 1]].trim_end().to_owned()
}

/// Bytes per token of the window [`bounded_head`] searches: a budget's
/// worth of any natural text (tokens average about four bytes).
pub const WINDOW_BYTES_PER_TOKEN: usize = 16;

/// The first `max_tokens * WINDOW_BYTES_PER_TOKEN` bytes of `text` (cut
/// at a character boundary): where a head of `max_tokens` tokens is
/// looked for in a text of any length.
pub fn window(text: &str, max_tokens: usize) -> &str {
    prefix(text, max_tokens.saturating_mul(WINDOW_BYTES_PER_TOKEN))
}

/// The first `bytes` of `text` at most, cut at a character boundary.
pub fn prefix(text: &str, bytes: usize) -> &str {
    let mut end = text.len().min(bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// [`head`] of the [`window`] of `text`: the same head for natural text,
/// in time bounded by the budget rather than the text's length (a head of
/// tokens longer than the window's average is cut shorter).
pub fn bounded_head(text: &str, max_tokens: usize, tokenizer: &dyn Tokenizer) -> String {
    head(window(text, max_tokens), max_tokens, tokenizer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_heads_look_at_a_window() {
        let tokenizer = crate::BpeTokenizer::default();
        let text = "word ".repeat(10_000);
        assert_eq!(bounded_head(&text, 50, &tokenizer), head(&text, 50, &tokenizer));
        assert_eq!(window("ééé", 0), "");
        assert_eq!(window("aé", 1).len(), 3);
        let accents = "é".repeat(100);
        assert_eq!(window(&accents, 1).len(), WINDOW_BYTES_PER_TOKEN);
    }

    #[test]
    fn test_paths_follow_common_conventions() {
        for path in [
            "tests/a.py",
            "pkg/tests/test_x.py",
            "src/foo_test.go",
            "web/app.test.ts",
            "web/app.spec.js",
            "src/test/java/FooTest.java",
            "conftest.py",
            "lib/__tests__/x.js",
        ] {
            assert!(is_test_path(path), "{path}");
        }
        for path in ["src/lib.rs", "app/test_utils_extra/x.py", "pkg/contest.py", "attestation.py", "latest/x.py"] {
            assert!(!is_test_path(path), "{path}");
        }
    }
}
