//! What the index holds for each block: its indexed fields, read from a
//! document in document order with the heading path above each block.

use std::borrow::Cow;
use ucpkit_core::outline;

#[cfg(feature = "index")]
use crate::catalog::Catalog;
#[cfg(feature = "index")]
use ucpkit_core::IdSet;
#[cfg(feature = "index")]
use ucpkit_core::Role;
use ucpkit_core::{Block, BlockId, Content, Document};

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
        push_subtree(doc, child, Vec::new(), &mut out, &mut |_| true, &mut |_| {});
    }
    out
}

/// Block `id`'s indexed fields under heading path `headings`, when it is
/// worth indexing (it has text). A block that records when it happened
/// (a memory's session and time, [`outline::occasion`]) has that at the
/// end of its heading path, where a transcript's session heading would
/// be: "what did we decide in May?" finds it by its date.
fn indexable(block: &Block, id: BlockId, headings: String) -> Option<Indexable<'_>> {
    let text = block.plain_text();
    let headings = match outline::occasion(block) {
        Some(occasion) if headings.is_empty() => occasion,
        Some(occasion) => format!("{headings} > {occasion}"),
        None => headings,
    };
    (!matches!(block.content, Content::Composite) && !text.trim().is_empty()).then(|| Indexable {
        id,
        text,
        headings,
        label: block.metadata.label.as_deref().unwrap_or(""),
        role: block.role().map_or("", |r| r.as_str()),
        tags: &block.metadata.tags,
        prior: outline::rank_prior(block),
    })
}

/// The titles above block `id` (the root's left out), outermost first.
#[cfg(feature = "index")]
fn titles_above(doc: &Document, id: BlockId) -> Vec<String> {
    let mut titles: Vec<String> =
        doc.ancestors(id).filter(|&a| a != doc.root()).filter_map(|a| doc.get(a).and_then(outline::title)).collect();
    titles.reverse();
    titles
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
        // Cut off from the root (its parent deleted, its children left):
        // looked at, so it goes from the index, and never indexed.
        let cut_off = id != doc.root() && doc.ancestors(id).last() != Some(doc.root());
        let mut scratch = Vec::new();
        let out = if cut_off { &mut scratch } else { &mut out };
        push_subtree(doc, id, titles_above(doc, id), out, &mut |id| walked.insert(id), &mut |_| {});
    }
    seen.extend(walked);
    (out, seen)
}

/// [`indexables_within`] for an index whose `catalog` is of the revision
/// `changed` were written since, over `doc`, which may be part of the
/// document holding each changed block the store still holds with its
/// ancestors and children. A changed block whose path down to its
/// children is as it was is looked at alone, not with its subtree (only a
/// new title, its own or one above it, changes the heading paths below it;
/// a block moved or added below it was written too): an unwritten child
/// with text shows that path, its fingerprint in the catalog being the
/// same; without one, the block's own fingerprint does, when its title
/// cannot hang on the kind of its content (not a heading, title or code
/// symbol). A changed block cut off from the root (its parent deleted, its
/// children left) goes from the index with its subtree, as from a whole
/// sync. `Err` with the blocks below a changed one that `doc` lacks, when
/// it lacks any: their subtrees are needed.
#[cfg(feature = "index")]
pub(crate) fn indexables_caught_up<'a>(
    doc: &'a Document,
    changed: &[BlockId],
    catalog: &Catalog,
) -> Result<(Vec<Indexable<'a>>, IdSet), Vec<BlockId>> {
    let written: IdSet = changed.iter().copied().collect();
    let unchanged =
        |item: &Indexable<'_>| catalog.entries.get(&item.id).is_some_and(|e| e.fingerprint == item.fingerprint());
    // Deleted blocks are not held: only what a sync removes.
    let held: Vec<(BlockId, &Block)> = changed.iter().filter_map(|&id| Some((id, doc.holding(id)?))).collect();
    let (mut alone, mut deep, mut cut_off) = (Vec::new(), Vec::new(), Vec::new());
    for (id, block) in held {
        if id == doc.root() {
            continue; // its children and edges change no heading path
        }
        if doc.ancestors(id).last() != Some(doc.root()) {
            cut_off.push(id);
            continue;
        }
        let titles = titles_above(doc, id);
        let below = titles.iter().cloned().chain(outline::title(block)).collect::<Vec<_>>().join(" > ");
        let child = doc
            .children(id)
            .iter()
            .filter(|c| !written.contains(c))
            .find_map(|&c| doc.holding(c).and_then(|child| indexable(child, c, below.clone())));
        let same_paths_below = match child {
            Some(child) => unchanged(&child),
            None => {
                let titled = block
                    .role()
                    .is_some_and(|r| r.heading_level().is_some() || *r == Role::Title || r.is_code_symbol());
                !titled && indexable(block, id, titles.join(" > ")).is_some_and(|item| unchanged(&item))
            }
        };
        if same_paths_below || doc.children(id).is_empty() {
            alone.push((id, block, titles));
        } else {
            deep.push((id, titles));
        }
    }
    let mut out = Vec::new();
    let mut walked = IdSet::default();
    let mut needed = Vec::new();
    // The subtrees first: a block alone inside one is in it already.
    for (id, titles) in deep {
        push_subtree(doc, id, titles, &mut out, &mut |id| walked.insert(id), &mut |id| needed.push(id));
    }
    // Cut off: looked at (so removed), never indexed.
    for id in cut_off {
        push_subtree(doc, id, Vec::new(), &mut Vec::new(), &mut |id| walked.insert(id), &mut |id| needed.push(id));
    }
    if !needed.is_empty() {
        return Err(needed);
    }
    for (id, block, titles) in alone {
        if walked.insert(id) {
            out.extend(indexable(block, id, titles.join(" > ")));
        }
    }
    walked.extend(written);
    Ok((out, walked))
}

/// Adds the indexable blocks of the subtree under `top` (included) to
/// `out`, in document order, with `titles` the heading path above `top`;
/// `enter` says whether to take a block (false: already taken), and
/// `missing` hears of each block `doc` does not hold.
fn push_subtree<'a>(
    doc: &'a Document,
    top: BlockId,
    mut titles: Vec<String>,
    out: &mut Vec<Indexable<'a>>,
    enter: &mut dyn FnMut(BlockId) -> bool,
    missing: &mut dyn FnMut(BlockId),
) {
    let base = titles.len();
    // (block, depth of the titles stack when it was entered)
    let mut stack: Vec<(BlockId, usize)> = vec![(top, base)];
    while let Some((id, depth)) = stack.pop() {
        titles.truncate(depth);
        let Some(block) = doc.get(id) else {
            missing(id);
            continue;
        };
        if !enter(id) {
            continue;
        }
        out.extend(indexable(block, id, titles.join(" > ")));
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

    #[cfg(feature = "index")]
    mod caught_up {
        use proptest::prelude::*;
        use ucpkit_core::edits::edited;
        use ucpkit_core::{Block, IdMap, Metadata, Role};

        use super::super::*;

        /// Block `n` of `kind`: 0 a file, 1 a heading, else a paragraph.
        fn block(kind: u8, n: usize, title: &str) -> Block {
            let (role, content, label) = match kind {
                0 => (Role::File, Content::Composite, Some(format!("{title}{n}.md"))),
                1 => (Role::heading(2), Content::markdown(format!("## {title} {n}")), None),
                _ => (Role::Paragraph, Content::markdown(format!("{title} words {n}")), None),
            };
            let mut metadata = Metadata::with_role(role.clone());
            metadata.label = label;
            Block::new(Block::derive_id(&content, Some(&role), title, n as u32), content, metadata)
        }

        fn catalog_of(doc: &Document) -> IdMap<u64> {
            indexables(doc).iter().map(|item| (item.id, item.fingerprint())).collect()
        }

        proptest! {
            /// The catalog of a revision, updated with what a catch-up
            /// selects (its items indexed, the rest of its scope removed),
            /// is the catalog of the later revision.
            #[test]
            fn a_catch_up_indexes_what_a_whole_sync_would(
                shape in prop::collection::vec((0u8..3, 0usize..64), 1..50),
                edits in prop::collection::vec((0u8..7, 0usize..64, 0usize..64, 0u8..3), 1..5),
            ) {
                let mut before = Document::new("d");
                let mut ids = vec![BlockId::ROOT];
                for (n, &(kind, pick)) in shape.iter().enumerate() {
                    ids.push(before.append_child(ids[pick % ids.len()], block(kind, n, "first")).unwrap());
                }
                let (after, changed) = edited(&before, &edits, &|kind, n| block(kind, n, "edited"));
                let mut catalog = Catalog::default();
                for item in indexables(&before) {
                    catalog.insert(&item, item.fingerprint());
                }
                let (items, scope) = indexables_caught_up(&after, &changed, &catalog).expect("a whole document");
                let mut caught_up = catalog_of(&before);
                for id in scope {
                    caught_up.remove(&id);
                }
                caught_up.extend(items.iter().map(|item| (item.id, item.fingerprint())));
                prop_assert_eq!(caught_up, catalog_of(&after));
            }
        }

        #[test]
        fn a_heading_that_kept_its_title_is_looked_at_alone() {
            let mut before = Document::new("d");
            let file = before.append_child(BlockId::ROOT, block(0, 0, "f")).unwrap();
            let heading = before.append_child(file, block(1, 1, "h")).unwrap();
            let paragraph = before.append_child(heading, block(2, 2, "p")).unwrap();
            let mut catalog = Catalog::default();
            for item in indexables(&before) {
                catalog.insert(&item, item.fingerprint());
            }
            let mut after = before.clone();
            after.mark_saved();
            let added = after.append_child(heading, block(2, 3, "p")).unwrap();
            let changed = after.unsaved_changes().unwrap().blocks;
            let (items, _) = indexables_caught_up(&after, &changed, &catalog).unwrap();
            let mut looked_at: Vec<BlockId> = items.iter().map(|i| i.id).collect();
            looked_at.sort();
            let mut expected = vec![heading, added];
            expected.sort();
            assert_eq!(looked_at, expected, "not the paragraph already there");
            // Renamed, its paragraphs' heading paths change: all are looked at.
            after.mark_saved();
            after.get_mut(heading).unwrap().content = Content::markdown("## Another title");
            let changed = after.unsaved_changes().unwrap().blocks;
            let (items, _) = indexables_caught_up(&after, &changed, &catalog).unwrap();
            assert_eq!(items.iter().map(|i| i.id).collect::<Vec<_>>(), [heading, paragraph, added]);
            // A file added to: its heading, unwritten, shows the path as it was.
            let mut again = before.clone();
            again.mark_saved();
            let second = again.append_child(file, block(2, 4, "p")).unwrap();
            let changed = again.unsaved_changes().unwrap().blocks;
            let (items, _) = indexables_caught_up(&again, &changed, &catalog).unwrap();
            assert_eq!(items.iter().map(|i| i.id).collect::<Vec<_>>(), [second]);
        }
    }
}
