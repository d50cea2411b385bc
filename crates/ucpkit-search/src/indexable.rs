//! What the index holds for each block: its indexed fields, read from a
//! document in document order with the heading path above each block.

use std::borrow::Cow;
use ucpkit_core::outline;

#[cfg(feature = "index")]
use ucpkit_core::IdSet;
use ucpkit_core::{BlockId, Content, Document};

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
    #[cfg(feature = "index")]
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
    #[cfg(feature = "index")]
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

/// The text the embedding model sees of each block of `doc` worth
/// indexing, in document order: what a document's vectors are of.
#[cfg(feature = "index")]
pub fn embedding_texts(doc: &Document) -> Vec<String> {
    indexables(doc).iter().map(Indexable::embedding_text).collect()
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
#[cfg(feature = "index")]
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

/// Two headings with a paragraph under each: the tests' document.
#[cfg(test)]
pub(crate) fn sample_document() -> Document {
    use ucpkit_core::{Block, Metadata, Role};
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heading_paths_follow_the_tree() {
        let doc = sample_document();
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
}
