//! Moving a store from one backend to another (`ucp store migrate`): every
//! document with its snapshots, named sessions, stored vectors and the
//! record of what it was indexed from, and every agent transcript, copied
//! into another store, SQLite or PostgreSQL either way.

use serde::Serialize;

use crate::indexed::write_sources;
use crate::vectors::{read_vectors, write_vectors};
use crate::{check_document_name, codec, revision_in, write_snapshots, IndexedFrom, SessionWrite, Store, StoreError};

/// What [`Store::copy_into`] copied.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Copied {
    /// Documents (agents' memories and plans among them).
    pub documents: usize,
    /// Blocks over all documents, roots included.
    pub blocks: usize,
    /// Snapshots.
    pub snapshots: usize,
    /// Named sessions.
    pub sessions: usize,
    /// Stored embedding vectors.
    pub vectors: usize,
    /// Agent transcripts.
    pub transcripts: usize,
}

impl Store {
    /// Copies everything this store holds into `target`. Names `target`
    /// holds already are refused (nothing copied) unless `replace`, which
    /// replaces them (what else it holds stays). Each document is read at
    /// one revision and written with its snapshots and the record of its
    /// sources in one transaction, so a copy stopped midway leaves whole
    /// documents only, and running it again (with `replace`) finishes it.
    /// Meant for a store no one writes meanwhile: a write that comes in
    /// during the copy may be missed.
    pub fn copy_into(&self, target: &mut Store, replace: bool) -> Result<Copied, StoreError> {
        let names: Vec<String> = self.documents()?.into_iter().map(|d| d.name).collect();
        let transcripts: Vec<String> = self.transcripts()?.into_iter().map(|(name, _)| name).collect();
        if !replace {
            let held: Vec<String> = target.documents()?.into_iter().map(|d| d.name).collect();
            let held_runs: Vec<String> = target.transcripts()?.into_iter().map(|(name, _)| name).collect();
            let clashes: Vec<&String> = names
                .iter()
                .filter(|n| held.contains(n))
                .chain(transcripts.iter().filter(|n| held_runs.contains(n)))
                .collect();
            if !clashes.is_empty() {
                let listed: Vec<&str> = clashes.iter().map(|n| n.as_str()).collect();
                return Err(StoreError::NameTaken(format!(
                    "{} (the target holds them already; replace them on purpose, or copy into another store)",
                    listed.join(", ")
                )));
            }
        }
        let mut copied = Copied::default();
        for name in &names {
            let (document, revision) = self.load_with_revision(name)?;
            let snapshots = self.load_snapshots(name)?;
            let vectors = self.db.read(|tx| read_vectors(tx, name))?;
            // What it was indexed from, when that describes this revision:
            // the next index of the same files then reads only changes.
            let sources = match self.index_sources(name)?.filter(|(_, at)| *at == revision) {
                Some((files, at)) => self.index_links(name, at)?.map(|links| (files, links)),
                None => None,
            };
            check_document_name(name)?;
            let written = target.db.write(|tx| {
                codec::write_document(tx, &document)?;
                write_snapshots(tx, name, &snapshots)?;
                write_vectors(tx, name, &vectors)?;
                let written = revision_in(tx, name)?;
                if let Some((files, links)) = &sources {
                    write_sources(tx, name, written, IndexedFrom { files, links })?;
                }
                Ok(written)
            })?;
            for (session, _) in self.sessions(name)? {
                let Some(stored) = self.load_session(name, &session)? else { continue };
                let opened_at = target.load_session(name, &session)?.map_or(0, |s| s.revision);
                let write = SessionWrite { name: &session, record: &stored.record, opened_at };
                target.save_checked(name, written, None, Some(write))?;
                copied.sessions += 1;
            }
            copied.documents += 1;
            copied.blocks += document.len();
            copied.snapshots += snapshots.len();
            copied.vectors += vectors.len();
        }
        for name in transcripts {
            let Some(stored) = self.load_transcript(&name)? else { continue };
            let read_at = target.load_transcript(&name)?.map_or(0, |t| t.revision);
            target.save_transcript(&name, &stored.body, read_at)?;
            copied.transcripts += 1;
        }
        Ok(copied)
    }
}

#[cfg(test)]
mod tests {
    use ucpkit_core::{Block, BlockId, Content, Document, Metadata, Role, Snapshot};

    use crate::testing::places;
    use crate::{IndexedFrom, SessionWrite, Store};

    fn filled(store: &mut Store) {
        let mut doc = Document::new("docs");
        doc.metadata.title = Some("Docs".into());
        for n in 0..50u32 {
            let content = Content::markdown(format!("paragraph {n}"));
            let block =
                Block::new(Block::derive_id(&content, None, "", n), content, Metadata::with_role(Role::Paragraph));
            doc.append_child(BlockId::ROOT, block).unwrap();
        }
        let snapshot = Snapshot {
            name: "before".into(),
            description: Some("a snapshot".into()),
            created_ms: 1_000,
            blocks: doc.len(),
            json: doc.to_json(false).into(),
        };
        let revision = store.save_with_snapshots(&doc, &[snapshot]).unwrap();
        store.record_sources("docs", revision, IndexedFrom { files: b"files", links: b"links" }).unwrap();
        let session = SessionWrite { name: "s", record: "{\"cursor\":1}", opened_at: 0 };
        store.save_checked("docs", revision, None, Some(session)).unwrap();
        store.save_document(&Document::new("memory")).unwrap();
        store.save_transcript("run-1", "{\"steps\":[]}", 0).unwrap();
        store.save_vectors("docs", "model", &[([1; 16], vec![0.5, -0.5]), ([2; 16], vec![0.25, 1.0])]).unwrap();
    }

    /// Everything a store holds, as text to compare.
    fn contents(store: &Store) -> Vec<String> {
        let mut out = Vec::new();
        for summary in store.documents().unwrap() {
            let name = &summary.name;
            out.push(store.load_document(name).unwrap().to_json(true));
            for snapshot in store.load_snapshots(name).unwrap() {
                out.push(format!("{} {:?} {}", snapshot.name, snapshot.description, snapshot.json));
            }
            for (session, _) in store.sessions(name).unwrap() {
                out.push(format!("{session}: {}", store.load_session(name, &session).unwrap().unwrap().record));
            }
            out.push(format!("{:?}", store.index_sources(name).unwrap().map(|(files, _)| files)));
            let mut vectors: Vec<_> =
                store.load_vectors(name, "model", &[[1; 16], [2; 16]]).unwrap().into_iter().collect();
            vectors.sort_by_key(|(key, _)| *key);
            out.push(format!("{vectors:?}"));
        }
        for (name, _) in store.transcripts().unwrap() {
            out.push(format!("{name}: {}", store.load_transcript(&name).unwrap().unwrap().body));
        }
        out
    }

    #[test]
    fn a_store_goes_to_another_backend_and_back_losing_nothing() {
        for there in places() {
            let from = places().remove(0);
            let mut source = from.open();
            filled(&mut source);
            let mut target = there.open();
            let copied = source.copy_into(&mut target, false).unwrap();
            let counts = (copied.documents, copied.snapshots, copied.sessions, copied.transcripts, copied.vectors);
            assert_eq!(counts, (2, 1, 1, 1, 2));
            assert_eq!(contents(&target), contents(&source), "{}", there.backend);
            // Back into a new store, and again over what it holds: the same.
            let back_place = places().remove(0);
            let mut back = back_place.open();
            target.copy_into(&mut back, false).unwrap();
            let again = target.copy_into(&mut back, false).unwrap_err();
            assert!(again.to_string().contains("docs, memory, run-1"), "{again}");
            target.copy_into(&mut back, true).unwrap();
            assert_eq!(contents(&back), contents(&source), "back from {}", there.backend);
            // A store copied into itself, names replaced: still the same.
            back.copy_into(&mut back_place.open(), true).unwrap();
            assert_eq!(contents(&back), contents(&source), "copied into itself");
        }
    }
}
