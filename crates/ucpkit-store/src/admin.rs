//! Deleting and renaming stored documents: everything kept under a
//! document's name (snapshots, sessions, the record of its sources, its
//! vectors, its revision) goes or follows in the same transaction.

use crate::codec::bump_revision;
use crate::sql::{args, Tx};
use crate::{check_document_name, document_number, revision_in, Store, StoreError};

impl Store {
    /// Deletes a document and its snapshots; false when there was none of
    /// that name.
    pub fn delete_document(&mut self, name: &str) -> Result<bool, StoreError> {
        self.db.write(|tx| {
            let n = tx.run("deleting", "DELETE FROM documents WHERE name = ?1", args![name])?;
            tx.run("deleting snapshots", "DELETE FROM snapshots WHERE document = ?1", args![name])?;
            tx.run("deleting sessions", "DELETE FROM sessions WHERE document = ?1", args![name])?;
            tx.run("deleting sources", "DELETE FROM sources WHERE document = ?1", args![name])?;
            crate::vectors::delete_vectors(tx, name)?;
            bump_revision(tx, name, None)?;
            Ok(n > 0)
        })
    }

    /// Renames document `old` to `new` with its snapshots, sessions and
    /// record of sources. Both names' revisions move past any either had, so
    /// a copy loaded under either name is stale.
    pub fn rename_document(&mut self, old: &str, new: &str) -> Result<(), StoreError> {
        check_document_name(new)?;
        self.db.write(|tx| {
            // An error naming the stored documents when there is none.
            document_number(tx, old)?;
            if exists(tx, new)? {
                return Err(StoreError::NameTaken(new.to_owned()));
            }
            // Vectors left under the new name (saved after a delete) would
            // clash with the ones moving there.
            crate::vectors::delete_vectors(tx, new)?;
            let current = revision_in(tx, old)?;
            let revision = current.max(revision_in(tx, new)?) + 1;
            for (table, column) in [
                ("documents", "name"),
                ("snapshots", "document"),
                ("sessions", "document"),
                ("sources", "document"),
                ("vectors", "document"),
            ] {
                let sql = format!("UPDATE {table} SET {column} = ?2 WHERE {column} = ?1");
                tx.run("renaming", &sql, args![old, new])?;
            }
            tx.run(
                "renaming the sources",
                "UPDATE sources SET revision = ?2 WHERE document = ?1 AND revision = ?3",
                args![new, revision as i64, current as i64],
            )?;
            for name in [old, new] {
                // The revision jumps: a copy under either name is read whole.
                tx.run("renaming", "DELETE FROM block_changes WHERE document = ?1", args![name])?;
                tx.run(
                    "counting the revisions",
                    "INSERT INTO revisions (document, revision) VALUES (?1, ?2)
                     ON CONFLICT (document) DO UPDATE SET revision = ?2",
                    args![name, revision as i64],
                )?;
                tx.notify(name)?;
            }
            Ok(())
        })
    }
}

/// Whether `tx` sees a document named `name`.
fn exists(tx: &Tx<'_>, name: &str) -> Result<bool, StoreError> {
    Ok(tx.first("finding the document", "SELECT 1 FROM documents WHERE name = ?1", args![name], |_| Ok(()))?.is_some())
}

#[cfg(test)]
mod tests {
    use ucpkit_core::{Block, BlockId, Content, Document, Metadata};

    use crate::{IndexedFrom, StoreError};

    #[test]
    fn a_renamed_document_takes_its_snapshots_sessions_and_sources_along() {
        for place in crate::testing::places() {
            let mut store = place.open();
            let mut doc = Document::new("old");
            let content = Content::plain("hi");
            doc.append_child(
                BlockId::ROOT,
                Block::new(Block::derive_id(&content, None, "", 0), content, Metadata::default()),
            )
            .unwrap();
            let sources = IndexedFrom { files: b"files", links: b"links" };
            let first = store.save_indexed(&doc, 0, sources).unwrap();
            store.save_with_snapshots(&doc, &[]).unwrap();
            let written = store.save_indexed(&doc, first + 1, sources).unwrap();
            let other = Document::new("other");
            store.save_document(&other).unwrap();

            assert!(matches!(store.rename_document("old", "other"), Err(StoreError::NameTaken(_))));
            assert!(matches!(store.rename_document("nope", "x"), Err(StoreError::NoSuchDocument { .. })));
            assert!(store.rename_document("old", "bad/name").is_err());
            store.rename_document("old", "new").unwrap();
            let names: Vec<String> = store.documents().unwrap().into_iter().map(|d| d.name).collect();
            assert_eq!(names, ["new", "other"]);
            assert_eq!(store.load_document("new").unwrap().len(), 2);
            assert!(store.revision("new").unwrap() > written && store.revision("old").unwrap() > written);
            let (files, at) = store.index_sources("new").unwrap().expect("the record follows");
            assert_eq!((files.as_slice(), at), (&b"files"[..], store.revision("new").unwrap()));
            // A stale record (an edit since the index) stays stale.
            store.save_document(&store.load_document("new").unwrap()).unwrap();
            assert!(store.edited_since_index("new").unwrap());
            store.rename_document("new", "newer").unwrap();
            assert!(store.edited_since_index("newer").unwrap());
            assert_eq!(store.index_sources("newer").unwrap(), None);
            store.rename_document("newer", "new").unwrap();
            assert!(store.delete_document("new").unwrap());
            assert!(!store.delete_document("new").unwrap());
        }
    }
}
