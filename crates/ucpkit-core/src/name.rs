//! The rules a document name must follow, shared by every store (the
//! embedded one and the in-page one) so a name one accepts the other
//! accepts too.
//!
//! A name becomes a database key, a `ucp://<document>` URI and part of
//! the search index's folder name (`search/<name>-<digest>/`), so it must
//! be short enough for every file system's 255-byte file names and hold
//! nothing that changes a path or a URI.

/// Most characters in a document name.
pub const MAX_DOCUMENT_NAME_CHARS: usize = 128;

/// The rule `name` breaks, worded for a person, or `None` when it is a
/// good document name.
///
/// ```
/// assert!(ucpkit_core::document_name_rule("node-docs").is_none());
/// assert!(ucpkit_core::document_name_rule("a/b").is_some());
/// ```
pub fn document_name_rule(name: &str) -> Option<String> {
    let chars = name.chars().count();
    if name.trim().is_empty() {
        return Some("a document name cannot be empty".into());
    }
    if chars > MAX_DOCUMENT_NAME_CHARS {
        return Some(format!("a document name has at most {MAX_DOCUMENT_NAME_CHARS} characters; this one has {chars}"));
    }
    if name.chars().any(char::is_control) {
        return Some("a document name cannot hold control characters (newlines, tabs, ...)".into());
    }
    if name.contains(['/', '\\']) {
        return Some("a document name cannot hold `/` or `\\` (it is part of ucp:// URIs and folder names)".into());
    }
    if name.trim() != name {
        return Some("a document name cannot start or end with whitespace".into());
    }
    None
}
