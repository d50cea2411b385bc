//! Edits chosen by numbers, for property tests of what follows a
//! document's changes (a ranking layout, a search index caught up from the
//! blocks written): each applied as a writer would, then the blocks the
//! journal says were written, as a store logs them. Behind the
//! `test-support` feature.

use crate::{Block, BlockId, Document, RemoveMode};

/// `doc` after `edits`, with the blocks written (changed, added or
/// removed). Each edit is `(what, pick, other, kind)`: `pick` and `other`
/// choose blocks by their place in document order (wrapping around), and
/// `new_block(kind, n)` makes the block of the `n`th edit. What 0 gives
/// the picked block that block's content and metadata, 1 appends that
/// block under `other`, 2 removes the picked block's subtree, 3 removes
/// the picked block and hands its children up, 4 moves it under `other`,
/// 5 removes it and leaves its children cut off from the root, 6 inserts
/// the new block as the first child of `other`. An edit the document
/// refuses (a cycle, the root) changes nothing.
pub fn edited(
    doc: &Document,
    edits: &[(u8, usize, usize, u8)],
    new_block: &dyn Fn(u8, usize) -> Block,
) -> (Document, Vec<BlockId>) {
    let mut doc = doc.clone();
    doc.mark_saved();
    for (n, &(what, pick, other, kind)) in edits.iter().enumerate() {
        let ids: Vec<BlockId> = doc.document_order().collect();
        let (id, target) = (ids[pick % ids.len()], ids[other % ids.len()]);
        let _ = match what {
            0 if !id.is_root() => {
                let new = new_block(kind, n);
                if let Some(edited) = doc.get_mut(id) {
                    (edited.content, edited.metadata) = (new.content, new.metadata);
                }
                Ok(())
            }
            1 => doc.append_child(target, new_block(kind, n)).map(drop),
            2 if !id.is_root() => doc.remove_block(id, RemoveMode::Cascade).map(drop),
            3 if !id.is_root() => doc.remove_block(id, RemoveMode::PreserveChildren).map(drop),
            4 if !id.is_root() => doc.move_block(id, target, None),
            5 if !id.is_root() => doc.remove_block(id, RemoveMode::OrphanChildren).map(drop),
            6 => doc.insert_child(target, 0, new_block(kind, n)).map(drop),
            _ => Ok(()),
        };
    }
    let changed = doc.unsaved_changes().expect("a journal since the save").blocks;
    (doc, changed)
}
