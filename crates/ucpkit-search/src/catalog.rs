//! What the index holds for each block, and the catalog on disk that says
//! which version of every block it indexed, so a sync re-indexes only the
//! blocks whose indexed fields changed.

use std::borrow::Cow;
use ucpkit_core::outline;

use ucpkit_core::{BlockId, Content, Document, IdMap, IdSet};

use crate::SearchOptions;

/// The indexed fields of one block.
#[derive(Debug, Clone)]
pub(crate) struct Indexable<'a> {
    pub id: BlockId,
    pub text: Cow<'a, str>,
    /// Titles of the headings (and file) above the block, outermost first.
    pub headings: String,
    pub label: &'a str,
    pub role: &'a str,
    pub tags: &'a [String],
    /// How much it counts in a ranking before its text is matched
    /// ([`outline::rank_prior`]).
    pub prior: f32,
}

impl Indexable<'_> {
    /// A digest of every indexed field.
    pub fn fingerprint(&self) -> u64 {
        let mut hasher = blake3::Hasher::new();
        for part in [self.text.as_ref(), &self.headings, self.label, self.role] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        for tag in self.tags {
            hasher.update(&(tag.len() as u64).to_le_bytes());
            hasher.update(tag.as_bytes());
        }
        hasher.update(&self.prior.to_le_bytes());
        let bytes = hasher.finalize();
        u64::from_le_bytes(bytes.as_bytes()[..8].try_into().expect("8 bytes"))
    }

    /// The text an embedding model sees: the heading path, then the body.
    pub fn embedding_text(&self) -> String {
        const MAX_CHARS: usize = 2000;
        let body = match self.text.char_indices().nth(MAX_CHARS) {
            Some((at, _)) => &self.text[..at],
            None => &self.text,
        };
        if self.headings.is_empty() {
            body.to_owned()
        } else {
            format!("{}\n{body}", self.headings)
        }
    }
}

/// Every block worth indexing, in document order: blocks with text (files
/// and folders only lend their names to the heading paths below them).
pub(crate) fn indexables(doc: &Document) -> Vec<Indexable<'_>> {
    let mut out = Vec::with_capacity(doc.len());
    for &child in doc.children(doc.root()) {
        push_subtree(doc, child, Vec::new(), &mut out, &mut |_| true);
    }
    out
}

/// The blocks worth indexing among `changed` and the blocks below them
/// (whose heading paths a change above may have changed), with every block
/// looked at, present or not: what a sync after those changes re-reads.
/// The root's own changes (its children list, its edges) change no
/// heading path, so its subtree is not walked for them.
pub(crate) fn indexables_within<'a>(doc: &'a Document, changed: &[BlockId]) -> (Vec<Indexable<'a>>, IdSet) {
    let mut out = Vec::new();
    let mut seen: IdSet = changed.iter().copied().collect();
    let mut walked = IdSet::default();
    for &id in changed {
        let Some(block) = doc.get(id) else { continue };
        if walked.contains(&id) {
            continue;
        }
        if id == doc.root() && outline::title(block).is_none() {
            continue;
        }
        let mut titles: Vec<String> = doc
            .ancestors(id)
            .filter(|&a| a != doc.root())
            .filter_map(|a| doc.get(a).and_then(outline::title))
            .collect();
        titles.reverse();
        push_subtree(doc, id, titles, &mut out, &mut |id| walked.insert(id));
    }
    seen.extend(walked);
    (out, seen)
}

/// Adds the indexable blocks of the subtree under `top` (included) to
/// `out`, in document order, with `titles` the heading path above `top`;
/// `enter` says whether to take a block (false: already taken).
fn push_subtree<'a>(
    doc: &'a Document,
    top: BlockId,
    mut titles: Vec<String>,
    out: &mut Vec<Indexable<'a>>,
    enter: &mut dyn FnMut(BlockId) -> bool,
) {
    let base = titles.len();
    // (block, depth of the titles stack when it was entered)
    let mut stack: Vec<(BlockId, usize)> = vec![(top, base)];
    while let Some((id, depth)) = stack.pop() {
        titles.truncate(depth);
        let Some(block) = doc.get(id) else { continue };
        if !enter(id) {
            continue;
        }
        let text = block.plain_text();
        if !matches!(block.content, Content::Composite) && !text.trim().is_empty() {
            out.push(Indexable {
                id,
                text,
                headings: titles.join(" > "),
                label: block.metadata.label.as_deref().unwrap_or(""),
                role: block.role().map_or("", |r| r.as_str()),
                tags: &block.metadata.tags,
                prior: outline::rank_prior(block),
            });
        }
        let children = doc.children(id);
        if children.is_empty() {
            continue;
        }
        let below = match outline::title(block) {
            Some(title) => {
                titles.push(title);
                depth + 1
            }
            None => depth,
        };
        stack.extend(children.iter().rev().map(|&c| (c, below)));
    }
}

/// What the catalog remembers of an indexed block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub fingerprint: u64,
    /// Index into the catalog's strings (`u16::MAX`: none).
    pub role: u16,
    pub tags: Box<[u16]>,
}

/// The indexed blocks, their fingerprints, roles and tags.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Catalog {
    pub(crate) strings: Vec<String>,
    lookup: std::collections::HashMap<String, u16>,
    pub entries: IdMap<Entry>,
}

/// The index of no string.
pub(crate) const NONE: u16 = u16::MAX;

impl Catalog {
    /// The number of `s` among the catalog's strings (added when new).
    pub(crate) fn intern(&mut self, s: &str) -> u16 {
        if s.is_empty() {
            return NONE;
        }
        if let Some(&i) = self.lookup.get(s) {
            return i;
        }
        let i = u16::try_from(self.strings.len()).ok().filter(|&i| i < NONE).unwrap_or(NONE);
        if i != NONE {
            self.strings.push(s.to_owned());
            self.lookup.insert(s.to_owned(), i);
        }
        i
    }

    /// Records that `item` is indexed as it is now.
    pub fn insert(&mut self, item: &Indexable, fingerprint: u64) {
        let role = self.intern(item.role);
        let tags = item.tags.iter().map(|t| self.intern(t)).collect();
        self.entries.insert(item.id, Entry { fingerprint, role, tags });
    }

    /// Whether `id` passes the role and tag filters of `options`.
    pub fn accepts(&self, id: BlockId, options: &SearchOptions) -> bool {
        let Some(entry) = self.entries.get(&id) else { return false };
        let name = |i: u16| self.strings.get(usize::from(i)).map_or("", String::as_str);
        (options.roles.is_empty() || options.roles.iter().any(|r| r == name(entry.role)))
            && (options.tags.is_empty() || entry.tags.iter().any(|&t| options.tags.iter().any(|w| w == name(t))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_core::{Block, Metadata, Role};

    fn doc() -> Document {
        let mut doc = Document::new("d");
        let mut add = |parent: BlockId, role: Role, text: &str, n: u32| {
            let content = Content::markdown(text);
            let id = Block::derive_id(&content, Some(&role), "d", n);
            doc.append_child(parent, Block::new(id, content, Metadata::with_role(role))).unwrap()
        };
        let h = add(BlockId::ROOT, Role::heading(1), "Streams", 0);
        let p = add(h, Role::Paragraph, "Readable streams.", 1);
        let h2 = add(h, Role::heading(2), "Writable", 2);
        let q = add(h2, Role::Paragraph, "Writable streams.", 3);
        let _ = (p, q);
        doc
    }

    #[test]
    fn heading_paths_follow_the_tree() {
        let doc = doc();
        let items = indexables(&doc);
        let paths: Vec<(&str, &str)> = items.iter().map(|i| (i.text.as_ref(), i.headings.as_str())).collect();
        assert_eq!(
            paths,
            [
                ("Streams", ""),
                ("Readable streams.", "Streams"),
                ("Writable", "Streams"),
                ("Writable streams.", "Streams > Writable")
            ]
        );
    }

    #[test]
    fn filters_read_roles_and_tags() {
        let doc = doc();
        let mut catalog = Catalog::default();
        let items = indexables(&doc);
        for item in &items {
            catalog.insert(item, 0);
        }
        let roles = SearchOptions { roles: vec!["paragraph".into()], ..SearchOptions::default() };
        let kept: Vec<_> = items.iter().filter(|i| catalog.accepts(i.id, &roles)).map(|i| i.text.as_ref()).collect();
        assert_eq!(kept, ["Readable streams.", "Writable streams."]);
        let tags = SearchOptions { tags: vec!["x".into()], ..SearchOptions::default() };
        assert!(items.iter().all(|i| !catalog.accepts(i.id, &tags)));
    }
}
