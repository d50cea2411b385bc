//! Resolving links between files of a corpus into `links_to` edges.
//!
//! Relative paths resolve against the linking file; `#anchors` resolve to
//! heading blocks (GitHub slugs, HTML ids); a link to `x.html` finds `x.md`
//! when only the markdown is in the corpus. Paths that climb out of the
//! corpus are refused.

use std::collections::HashMap;

use ucpkit_core::{BlockId, Document, EdgeType, IdMap};

use crate::report::{Warning, WarningKind};

/// The links of one file: `(block, destination as written)` in order.
pub(crate) struct FileLinks<'a> {
    /// The file's corpus path, as warnings name it.
    pub(crate) path: &'a str,
    /// What its links resolve against: its corpus path, empty for a
    /// single-file document.
    pub(crate) scope: &'a str,
    pub(crate) links: &'a [(BlockId, String)],
    /// Its blocks were just placed: links to URLs are noted on them too
    /// (a file read before keeps the notes it has).
    pub(crate) fresh: bool,
}

/// Makes the `links_to` edges of every linking block what its links
/// resolve to against `targets` (in link order, each target once; a block
/// whose edges are those already is left untouched), and
/// warns of links that resolve to nothing. Returns the number of edges.
pub(crate) fn link_files(
    document: &mut Document,
    targets: &LinkTargets,
    files: &[FileLinks<'_>],
    warnings: &mut Vec<Warning>,
) -> usize {
    let mut edges = 0;
    for file in files {
        let mut wanted: Vec<(BlockId, Vec<BlockId>)> = Vec::new();
        let mut slot: IdMap<usize> = IdMap::default();
        for (source, dest) in file.links {
            let at = *slot.entry(*source).or_insert_with(|| {
                wanted.push((*source, Vec::new()));
                wanted.len() - 1
            });
            match targets.resolve(file.scope, dest) {
                Resolved::Block { id, anchor_missing } => {
                    if anchor_missing {
                        let message = format!("link {dest:?}: anchor not found, linked to the file");
                        warnings.push(Warning::new(WarningKind::UnresolvedLink, file.path, message));
                    }
                    if id != *source {
                        wanted[at].1.push(id);
                    }
                }
                Resolved::External if file.fresh => note_external(document, *source, dest),
                Resolved::External => {}
                Resolved::Outside => {
                    let message = format!("link {dest:?} leaves the corpus; ignored");
                    warnings.push(Warning::new(WarningKind::OutsideCorpus, file.path, message));
                }
                Resolved::Missing => {
                    let message = format!("link {dest:?} points to nothing in the corpus");
                    warnings.push(Warning::new(WarningKind::UnresolvedLink, file.path, message));
                }
            }
        }
        for (source, to) in wanted {
            // Links resolve to blocks of the document: this cannot fail.
            let _ = document.set_edges(source, &EdgeType::LinksTo, &to);
            edges += document.edges().outgoing(source).iter().filter(|e| e.edge_type == EdgeType::LinksTo).count();
        }
    }
    edges
}

/// Notes a link to a URL in the block's `external_links` (once each).
fn note_external(document: &mut Document, source: BlockId, dest: &str) {
    let noted = |document: &Document| {
        document.get(source).is_some_and(|block| {
            block
                .metadata
                .custom
                .get("external_links")
                .and_then(|l| l.as_array())
                .is_some_and(|l| l.iter().any(|v| v == dest))
        })
    };
    if noted(document) {
        return;
    }
    if let Some(block) = document.get_mut(source) {
        let list = block.metadata.custom.entry("external_links".to_owned()).or_insert_with(|| serde_json::json!([]));
        if let Some(list) = list.as_array_mut() {
            list.push(dest.into());
        }
    }
}

/// What a link destination turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// A block of the corpus; `anchor_missing` when the file was found but
    /// not the `#anchor`, so the link points at the file.
    Block { id: BlockId, anchor_missing: bool },
    /// A URL with a scheme (`https:`, `mailto:` ...).
    External,
    /// A relative path that leaves the corpus.
    Outside,
    /// A relative path to nothing in the corpus.
    Missing,
}

/// Files and anchors of a corpus, by relative path.
#[derive(Debug, Default)]
pub(crate) struct LinkTargets {
    files: HashMap<String, BlockId>,
    anchors: HashMap<(String, String), BlockId>,
}

impl LinkTargets {
    /// Registers a file (by its corpus path) and its block.
    pub(crate) fn add_file(&mut self, path: &str, id: BlockId) {
        self.files.insert(path.to_owned(), id);
    }

    /// Registers an anchor of a file.
    pub(crate) fn add_anchor(&mut self, path: &str, anchor: &str, id: BlockId) {
        self.anchors.entry((path.to_owned(), anchor.to_owned())).or_insert(id);
    }

    /// Resolves `dest` as written in the file at corpus path `from`.
    pub(crate) fn resolve(&self, from: &str, dest: &str) -> Resolved {
        let dest = dest.trim();
        if is_external(dest) {
            return Resolved::External;
        }
        let (path, anchor) = dest.split_once('#').map_or((dest, None), |(p, a)| (p, Some(a)));
        let path = path.split('?').next().unwrap_or_default();
        let file = if path.is_empty() {
            from.to_owned()
        } else {
            match join(from, &percent_decode(path)) {
                Some(file) => file,
                None => return Resolved::Outside,
            }
        };
        let Some((file, file_id)) = self.find_file(&file) else { return Resolved::Missing };
        match anchor.filter(|a| !a.is_empty()) {
            None => Resolved::Block { id: file_id, anchor_missing: false },
            Some(anchor) => {
                let anchor = percent_decode(anchor);
                // Node's tooling numbers duplicate anchors `_1`, GitHub `-1`.
                let dashed = anchor
                    .rsplit_once('_')
                    .filter(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                    .map(|(stem, n)| format!("{stem}-{n}"));
                let candidates = [Some(anchor.clone()), Some(anchor.to_lowercase()), dashed];
                let found = candidates.into_iter().flatten().find_map(|a| self.anchors.get(&(file.clone(), a)));
                match found {
                    Some(id) => Resolved::Block { id: *id, anchor_missing: false },
                    None => Resolved::Block { id: file_id, anchor_missing: true },
                }
            }
        }
    }

    fn find_file(&self, path: &str) -> Option<(String, BlockId)> {
        let stem = path.strip_suffix(".html").or_else(|| path.strip_suffix(".htm"));
        let dir = path.trim_end_matches('/');
        let candidates = [
            Some(path.to_owned()),
            stem.map(|s| format!("{s}.md")),
            Some(format!("{dir}/README.md")).filter(|_| !dir.is_empty()),
            Some(format!("{dir}/index.md")).filter(|_| !dir.is_empty()),
        ];
        candidates.into_iter().flatten().find_map(|c| self.files.get(&c).map(|id| (c, *id)))
    }
}

/// Whether `dest` has a URL scheme or is protocol-relative.
pub(crate) fn is_external(dest: &str) -> bool {
    if dest.starts_with("//") {
        return true;
    }
    match dest.find(':') {
        Some(colon) => {
            let scheme = &dest[..colon];
            !scheme.is_empty()
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// Joins a relative link onto the directory of `from`; `None` when the
/// result climbs above the corpus root.
fn join(from: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = if path.starts_with('/') {
        Vec::new()
    } else {
        let mut dir: Vec<&str> = from.split('/').filter(|p| !p.is_empty()).collect();
        dir.pop();
        dir
    };
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_core::IdHasher;

    fn id(n: u8) -> BlockId {
        IdHasher::new("t").field(&[n]).finish()
    }

    fn targets() -> LinkTargets {
        let mut t = LinkTargets::default();
        t.add_file("fs.md", id(1));
        t.add_file("guide/intro.md", id(2));
        t.add_file("guide/README.md", id(4));
        t.add_anchor("fs.md", "fsopenpath", id(3));
        t.add_anchor("fs.md", "event-error-1", id(5));
        t
    }

    #[test]
    fn resolves_relative_paths_and_anchors() {
        let t = targets();
        assert_eq!(
            t.resolve("guide/intro.md", "../fs.md#fsopenpath"),
            Resolved::Block { id: id(3), anchor_missing: false }
        );
        assert_eq!(t.resolve("fs.md", "#fsopenpath"), Resolved::Block { id: id(3), anchor_missing: false });
        assert_eq!(t.resolve("fs.md", "fs.html#nope"), Resolved::Block { id: id(1), anchor_missing: true });
        assert_eq!(t.resolve("fs.md", "#event-error_1"), Resolved::Block { id: id(5), anchor_missing: false });
        assert_eq!(t.resolve("fs.md", "guide/"), Resolved::Block { id: id(4), anchor_missing: false });
        assert_eq!(t.resolve("guide/intro.md", "intro%2Emd"), Resolved::Block { id: id(2), anchor_missing: false });
    }

    #[test]
    fn classifies_external_outside_and_missing() {
        let t = targets();
        assert_eq!(t.resolve("fs.md", "https://nodejs.org/"), Resolved::External);
        assert_eq!(t.resolve("fs.md", "mailto:a@b.c"), Resolved::External);
        assert_eq!(t.resolve("fs.md", "../../etc/passwd"), Resolved::Outside);
        assert_eq!(t.resolve("fs.md", "nothing.md"), Resolved::Missing);
    }
}
