//! What a document was indexed from: ingest's record of its source files,
//! written with the document and valid while the document stays at the
//! revision written, so indexing the same folder again reads only the
//! files that changed (an edit in between makes the record stale).

use ucpkit_core::Document;

use crate::sql::{args, Tx};
use crate::{check_document_name, check_revision, codec, db, revision_in, revision_of, Store, StoreError};

/// Ingest's record of the files a document was indexed from, in two parts:
/// what every index of the same paths reads, and what only one that found
/// changed files needs.
#[derive(Debug, Clone, Copy)]
pub struct IndexedFrom<'a> {
    /// Each file's path, hash and stamp.
    pub files: &'a [u8],
    /// Each file's anchors and links.
    pub links: &'a [u8],
}

impl Store {
    /// Writes `document` as indexed from files, with ingest's record of
    /// them (see [`Store::index_sources`]), in one transaction, only when
    /// the stored document is still at revision `expected` (0: none
    /// stored), else [`StoreError::Conflict`]; what its journal says
    /// changed, or the whole document. Returns the revision it now has.
    pub fn save_indexed(
        &mut self,
        document: &Document,
        expected: u64,
        sources: IndexedFrom<'_>,
    ) -> Result<u64, StoreError> {
        check_document_name(document.name())?;
        let name = document.name();
        self.db.write(|tx| {
            check_revision(tx, name, expected)?;
            codec::write_since_saved(tx, document)?;
            let revision = revision_in(tx, name)?;
            write_sources(tx, name, revision, sources)?;
            Ok(revision)
        })
    }

    /// Records `sources` as what document `name` was indexed from, when
    /// the stored document is still at `revision` (an unchanged corpus
    /// indexed again by a build that kept no record). Returns whether it
    /// was recorded.
    pub fn record_sources(&mut self, name: &str, revision: u64, sources: IndexedFrom<'_>) -> Result<bool, StoreError> {
        self.db.write(|tx| {
            if revision_in(tx, name)? != revision {
                return Ok(false);
            }
            write_sources(tx, name, revision, sources)?;
            Ok(true)
        })
    }

    /// Replaces the files part of document `name`'s record (new stamps of
    /// files found unchanged), when it is still the record of `revision`.
    /// Returns whether it was replaced.
    pub fn restamp_sources(&mut self, name: &str, revision: u64, files: &[u8]) -> Result<bool, StoreError> {
        self.db.write(|tx| {
            let n = tx.run(
                "writing the sources",
                "UPDATE sources SET body = ?3 WHERE document = ?1 AND revision = ?2",
                args![name, revision as i64, files],
            )?;
            Ok(n > 0)
        })
    }

    /// What document `name` was indexed from ([`IndexedFrom::files`], as
    /// [`Store::save_indexed`] wrote it), with the revision it describes —
    /// `None` when the document was not indexed, or was written since by
    /// anything else (an edit), so the record no longer describes it.
    pub fn index_sources(&self, name: &str) -> Result<Option<(Vec<u8>, u64)>, StoreError> {
        self.db.read(|tx| {
            let revision = revision_in(tx, name)?;
            let body =
                read_bytes(tx, "SELECT body FROM sources WHERE document = ?1 AND revision = ?2", name, revision)?;
            Ok(body.map(|body| (body, revision)))
        })
    }

    /// Whether document `name` was written since it was last indexed (an
    /// edit), so indexing it again would replace what the edits made.
    /// False for a document never indexed with a record.
    pub fn edited_since_index(&self, name: &str) -> Result<bool, StoreError> {
        self.db.read(|tx| {
            let recorded = tx.first(
                "reading the sources",
                "SELECT revision FROM sources WHERE document = ?1",
                args![name],
                |r| revision_of(r, 0),
            )?;
            Ok(recorded.is_some_and(|recorded| recorded != revision_in(tx, name).unwrap_or(0)))
        })
    }

    /// The files' anchors and links ([`IndexedFrom::links`]) of the record
    /// of document `name` at `revision`; `None` when the record is not of
    /// that revision.
    pub fn index_links(&self, name: &str, revision: u64) -> Result<Option<Vec<u8>>, StoreError> {
        self.db.read(|tx| {
            read_bytes(tx, "SELECT links FROM sources WHERE document = ?1 AND revision = ?2", name, revision)
        })
    }
}

pub(crate) fn write_sources(
    tx: &Tx<'_>,
    name: &str,
    revision: u64,
    sources: IndexedFrom<'_>,
) -> Result<(), StoreError> {
    tx.run(
        "writing the sources",
        "INSERT INTO sources (document, revision, body, links) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (document) DO UPDATE SET revision = ?2, body = ?3, links = ?4",
        args![name, revision as i64, sources.files, sources.links],
    )?;
    Ok(())
}

/// The bytes `sql` reads from the sources row of document `name` at
/// `revision`, if there is one.
fn read_bytes(tx: &Tx<'_>, sql: &str, name: &str, revision: u64) -> Result<Option<Vec<u8>>, StoreError> {
    const CONTEXT: &str = "reading the sources";
    let bytes = tx.first(CONTEXT, sql, args![name, revision as i64], |r| {
        Ok(r.bytes(0).map_err(db(CONTEXT))?.map(<[u8]>::to_vec))
    })?;
    Ok(bytes.flatten())
}

#[cfg(test)]
mod tests {
    use ucpkit_core::{Block, BlockId, Content, Document, Metadata, Role};

    use crate::{IndexedFrom, StoreError};

    fn from(files: &'static [u8]) -> IndexedFrom<'static> {
        IndexedFrom { files, links: b"links" }
    }

    fn para(text: &str, n: u32) -> Block {
        let content = Content::markdown(text);
        Block::new(Block::derive_id(&content, Some(&Role::Paragraph), "", n), content, Metadata::default())
    }

    #[test]
    fn sources_describe_only_the_revision_written_with_them() {
        for place in crate::testing::places() {
            let mut store = place.open();
            let mut doc = Document::new("d");
            doc.append_child(BlockId::ROOT, para("a", 0)).unwrap();
            assert_eq!(store.index_sources("d").unwrap(), None);
            let first = store.save_indexed(&doc, 0, from(b"one")).unwrap();
            assert_eq!(store.index_sources("d").unwrap(), Some((b"one".to_vec(), first)));
            assert_eq!(store.index_links("d", first).unwrap(), Some(b"links".to_vec()));

            doc.mark_saved();
            doc.append_child(BlockId::ROOT, para("b", 1)).unwrap();
            let second = store.save_indexed(&doc, first, from(b"two")).unwrap();
            assert_eq!(store.index_sources("d").unwrap(), Some((b"two".to_vec(), second)));
            assert_eq!(store.load_document("d").unwrap().len(), 3, "the change was written");

            let stale = store.save_indexed(&doc, first, from(b"three"));
            assert!(matches!(stale, Err(StoreError::Conflict { .. })), "{stale:?}");
            assert_eq!(store.index_sources("d").unwrap(), Some((b"two".to_vec(), second)), "nothing written");

            assert!(!store.edited_since_index("d").unwrap());
            store.save_document(&doc).unwrap();
            assert_eq!(store.index_sources("d").unwrap(), None, "written since by something else");
            assert!(store.edited_since_index("d").unwrap());
            let third = store.revision("d").unwrap();
            assert!(!store.record_sources("d", second, from(b"late")).unwrap(), "not the revision it describes");
            assert!(store.record_sources("d", third, from(b"same")).unwrap());
            assert_eq!(store.index_sources("d").unwrap(), Some((b"same".to_vec(), third)));
            assert!(!store.restamp_sources("d", second, b"stale").unwrap());
            assert!(store.restamp_sources("d", third, b"restamped").unwrap());
            assert_eq!(store.index_sources("d").unwrap(), Some((b"restamped".to_vec(), third)));
            assert_eq!(store.index_links("d", third).unwrap(), Some(b"links".to_vec()), "the links stay");
            store.save_indexed(&doc, store.revision("d").unwrap(), from(b"four")).unwrap();
            store.delete_document("d").unwrap();
            assert_eq!(store.index_sources("d").unwrap(), None);
        }
    }
}
