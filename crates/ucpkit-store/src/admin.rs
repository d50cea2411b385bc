//! Deleting and renaming stored documents: everything kept under a
//! document's name (snapshots, sessions, the record of its sources, its
//! revision) goes or follows in the same transaction.

use rusqlite::{params, OptionalExtension};

use crate::{check_document_name, db, list, revision_in, Store, StoreError};

impl Store {
    /// Deletes a document and its snapshots; false when there was none of
    /// that name.
    pub fn delete_document(&mut self, name: &str) -> Result<bool, StoreError> {
        let tx = self.conn.transaction().map_err(db("starting a transaction"))?;
        let n = tx.execute("DELETE FROM documents WHERE name = ?1", params![name]).map_err(db("deleting"))?;
        tx.execute("DELETE FROM snapshots WHERE document = ?1", params![name]).map_err(db("deleting snapshots"))?;
        tx.execute("DELETE FROM sessions WHERE document = ?1", params![name]).map_err(db("deleting sessions"))?;
        tx.execute("DELETE FROM sources WHERE document = ?1", params![name]).map_err(db("deleting sources"))?;
        // A deletion is a write too: a copy loaded before it is stale.
        tx.execute(
            "INSERT INTO revisions (document, revision) VALUES (?1, 1)
             ON CONFLICT (document) DO UPDATE SET revision = revision + 1",
            params![name],
        )
        .map_err(db("counting the document's revision"))?;
        tx.commit().map_err(db("committing the deletion"))?;
        Ok(n > 0)
    }

    /// Renames document `old` to `new` with its snapshots, sessions and
    /// record of sources. Both names' revisions move past any either had, so
    /// a copy loaded under either name is stale.
    pub fn rename_document(&mut self, old: &str, new: &str) -> Result<(), StoreError> {
        check_document_name(new)?;
        let tx = self.conn.transaction().map_err(db("starting a transaction"))?;
        let exists = |name: &str| -> Result<bool, StoreError> {
            tx.query_row("SELECT 1 FROM documents WHERE name = ?1", params![name], |_| Ok(()))
                .optional()
                .map(|row| row.is_some())
                .map_err(db("finding the document"))
        };
        if !exists(old)? {
            drop(tx);
            let names: Vec<String> = self.documents()?.into_iter().map(|d| d.name).collect();
            return Err(StoreError::NoSuchDocument { name: old.to_owned(), available: list(&names) });
        }
        if exists(new)? {
            return Err(StoreError::NameTaken(new.to_owned()));
        }
        let current = revision_in(&tx, old)?;
        let revision = current.max(revision_in(&tx, new)?) + 1;

        for (table, column) in
            [("documents", "name"), ("snapshots", "document"), ("sessions", "document"), ("sources", "document")]
        {
            tx.execute(&format!("UPDATE {table} SET {column} = ?2 WHERE {column} = ?1"), params![old, new])
                .map_err(db("renaming"))?;
        }
        // A record of sources that described the document still does; one
        // that was stale (an edit since the index) stays stale, so the next
        // index still asks before replacing the edits.
        tx.execute(
            "UPDATE sources SET revision = ?2 WHERE document = ?1 AND revision = ?3",
            params![new, revision as i64, current as i64],
        )
        .map_err(db("renaming the sources"))?;
        for name in [old, new] {
            tx.execute(
                "INSERT INTO revisions (document, revision) VALUES (?1, ?2)
                 ON CONFLICT (document) DO UPDATE SET revision = ?2",
                params![name, revision as i64],
            )
            .map_err(db("counting the revisions"))?;
        }
        tx.commit().map_err(db("committing the rename"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use ucpkit_core::{Block, BlockId, Content, Document, Metadata};

    use crate::{IndexedFrom, Store, StoreError};

    #[test]
    fn a_renamed_document_takes_its_snapshots_sessions_and_sources_along() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(dir.path()).unwrap();
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
