//! The catalog on disk: a whole copy (`catalog.bin`) and a log of the
//! changes since (`catalog.log`), so a sync of a few blocks appends a few
//! records instead of rewriting an entry per block of the document. The
//! log is folded into a new copy once it outgrows a quarter of it.
//!
//! A log that does not read to its end (a crash in the middle of an
//! append) makes the whole catalog damaged, so the index is rebuilt: a
//! catalog missing changes could keep deleted blocks in the index.

use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use ucpkit_core::BlockId;

use crate::catalog::{Catalog, Entry};
use crate::SearchError;

const MAGIC: &[u8; 8] = b"UCPCAT1\n";
const LOG_MAGIC: &[u8; 8] = b"UCPCLOG2";
const UPSERT: u8 = 1;
const REMOVE: u8 = 2;

fn log_path(path: &Path) -> PathBuf {
    path.with_extension("log")
}

impl Catalog {
    /// Writes the whole catalog to `path` (atomically: a temporary file
    /// renamed), the change log dropped first.
    pub fn save(&self, path: &Path) -> Result<(), SearchError> {
        let log = log_path(path);
        if let Err(e) = std::fs::remove_file(&log) {
            if e.kind() != std::io::ErrorKind::NotFound {
                return Err(SearchError::io(&log)(e));
            }
        }
        let tmp = path.with_extension("tmp");
        let file = std::fs::File::create(&tmp).map_err(SearchError::io(&tmp))?;
        let mut out = BufWriter::new(file);
        let result = (|| {
            let mut write = |bytes: &[u8]| out.write_all(bytes);
            write(MAGIC)?;
            write(&(self.strings.len() as u32).to_le_bytes())?;
            for s in &self.strings {
                write(&(s.len() as u32).to_le_bytes())?;
                write(s.as_bytes())?;
            }
            write(&(self.entries.len() as u64).to_le_bytes())?;
            for (id, entry) in &self.entries {
                write(id.as_bytes())?;
                write(&entry.fingerprint.to_le_bytes())?;
                write(&entry.role.to_le_bytes())?;
                write(&(entry.tags.len() as u16).to_le_bytes())?;
                for t in entry.tags.iter() {
                    write(&t.to_le_bytes())?;
                }
            }
            out.flush()
        })();
        result.map_err(SearchError::io(&tmp))?;
        std::fs::rename(&tmp, path).map_err(SearchError::io(path))
    }

    /// Reads a catalog written by [`Catalog::save`], with the changes
    /// [`Catalog::save_changes`] logged since.
    pub fn load(path: &Path) -> Result<Catalog, SearchError> {
        let mut catalog = Catalog::load_base(path)?;
        let log = log_path(path);
        catalog.replay(&log).map_err(|reason| SearchError::Damaged { path: log, reason: reason.to_owned() })?;
        Ok(catalog)
    }

    fn load_base(path: &Path) -> Result<Catalog, SearchError> {
        let bytes = std::fs::read(path).map_err(SearchError::io(path))?;
        let damaged = |reason: &str| SearchError::Damaged { path: path.to_owned(), reason: reason.to_owned() };
        let mut input = bytes.as_slice();
        let mut take = |n: usize| -> Result<&[u8], SearchError> {
            if input.len() < n {
                return Err(damaged("truncated"));
            }
            let (head, rest) = input.split_at(n);
            input = rest;
            Ok(head)
        };
        if take(8)? != MAGIC {
            return Err(damaged("not a catalog of this version"));
        }
        let mut catalog = Catalog::default();
        let strings = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes"));
        for _ in 0..strings {
            let len = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")) as usize;
            let s = std::str::from_utf8(take(len)?).map_err(|_| damaged("a name is not UTF-8"))?;
            catalog.intern(s);
        }
        let count = u64::from_le_bytes(take(8)?.try_into().expect("8 bytes"));
        for _ in 0..count {
            let id = BlockId::from_bytes(take(12)?.try_into().expect("12 bytes"));
            let fingerprint = u64::from_le_bytes(take(8)?.try_into().expect("8 bytes"));
            let role = u16::from_le_bytes(take(2)?.try_into().expect("2 bytes"));
            let n = u16::from_le_bytes(take(2)?.try_into().expect("2 bytes"));
            let tags = (0..n)
                .map(|_| Ok(u16::from_le_bytes(take(2)?.try_into().expect("2 bytes"))))
                .collect::<Result<_, SearchError>>()?;
            catalog.entries.insert(id, Entry { fingerprint, role, tags });
        }
        let mut rest = Vec::new();
        input.read_to_end(&mut rest).map_err(SearchError::io(path))?;
        if !rest.is_empty() {
            return Err(damaged("trailing bytes"));
        }
        Ok(catalog)
    }

    /// Records that `removed` left the catalog and `changed` entries were
    /// set: appended to the log beside `path`, or the whole catalog written
    /// when the log would outgrow a quarter of it.
    pub fn save_changes(&self, path: &Path, removed: &[BlockId], changed: &[BlockId]) -> Result<(), SearchError> {
        if !self.append_changes(path, removed, changed)? {
            self.save(path)?;
        }
        Ok(())
    }

    /// [`Catalog::save_changes`] for a catalog holding only the entries of
    /// some blocks (those a part of the document changed): when the log is
    /// due to be folded, the whole catalog is read, given the changes, and
    /// written. A whole catalog that cannot be read is removed instead, so
    /// the next opening with the document rebuilds the index (the document
    /// was written already: failing here would only hide that).
    pub fn save_changes_of_some(
        &self,
        path: &Path,
        removed: &[BlockId],
        changed: &[BlockId],
    ) -> Result<(), SearchError> {
        if self.append_changes(path, removed, changed)? {
            return Ok(());
        }
        let Ok(mut whole) = Catalog::load(path) else {
            for file in [path.to_owned(), log_path(path)] {
                if let Err(e) = std::fs::remove_file(&file) {
                    if e.kind() != std::io::ErrorKind::NotFound {
                        return Err(SearchError::io(&file)(e));
                    }
                }
            }
            return Ok(());
        };
        for id in removed {
            whole.entries.remove(id);
        }
        for id in changed {
            let Some(entry) = self.entries.get(id) else { continue };
            let name = |i: u16| self.strings.get(usize::from(i)).map_or("", String::as_str);
            let role = whole.intern(name(entry.role));
            let tags = entry.tags.iter().map(|&t| whole.intern(name(t))).collect();
            whole.entries.insert(*id, Entry { fingerprint: entry.fingerprint, role, tags });
        }
        whole.save(path)
    }

    /// Appends the records of the changes to the log beside `path`; false,
    /// appending nothing, when the log would outgrow a quarter of the
    /// catalog (or there is none): it is time to write it whole.
    fn append_changes(&self, path: &Path, removed: &[BlockId], changed: &[BlockId]) -> Result<bool, SearchError> {
        let log = log_path(path);
        let base = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let logged = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0);
        let mut records = Vec::new();
        for id in removed {
            records.push(REMOVE);
            records.extend_from_slice(id.as_bytes());
        }
        for id in changed {
            let Some(entry) = self.entries.get(id) else { continue };
            records.push(UPSERT);
            records.extend_from_slice(id.as_bytes());
            records.extend_from_slice(&entry.fingerprint.to_le_bytes());
            let string = |records: &mut Vec<u8>, i: u16| {
                let text = self.strings.get(usize::from(i)).map_or("", String::as_str);
                records.extend_from_slice(&(text.len() as u32).to_le_bytes());
                records.extend_from_slice(text.as_bytes());
            };
            string(&mut records, entry.role);
            records.extend_from_slice(&(entry.tags.len() as u16).to_le_bytes());
            for &tag in entry.tags.iter() {
                string(&mut records, tag);
            }
        }
        if base == 0 || (logged + records.len() as u64) * 4 > base {
            return Ok(false);
        }
        let mut file =
            std::fs::OpenOptions::new().create(true).append(true).open(&log).map_err(SearchError::io(&log))?;
        if logged == 0 {
            records.splice(0..0, LOG_MAGIC.iter().copied());
        }
        file.write_all(&records).map_err(SearchError::io(&log))?;
        Ok(true)
    }

    /// Applies the log at `log`, when there is one, record by record; why
    /// it cannot be read to its end.
    fn replay(&mut self, log: &Path) -> Result<(), &'static str> {
        let bytes = match std::fs::read(log) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(_) => return Err("the change log cannot be read"),
        };
        let input = bytes.strip_prefix(LOG_MAGIC.as_slice()).ok_or("the change log is not of this version")?;
        let mut input = Cursor(input);
        let torn = "the change log ends in the middle of a record";
        while let Some(op) = input.take(1).map(|b| b[0]) {
            let id = input.take(12).map(|b| BlockId::from_bytes(b.try_into().expect("12 bytes"))).ok_or(torn)?;
            match op {
                REMOVE => {
                    self.entries.remove(&id);
                }
                UPSERT => {
                    let (fingerprint, role, tags) = input.upsert().ok_or(torn)?;
                    let role = self.intern(&role);
                    let tags = tags.iter().map(|t| self.intern(t)).collect();
                    self.entries.insert(id, Entry { fingerprint, role, tags });
                }
                _ => return Err("the change log holds an unknown record"),
            }
        }
        Ok(())
    }
}

/// Reads a log's bytes in order.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.len() >= n).then(|| self.0.split_at(n))?;
        self.0 = rest;
        Some(head)
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }

    fn string(&mut self) -> Option<String> {
        let len = u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize;
        String::from_utf8(self.take(len)?.to_vec()).ok()
    }

    /// An upsert record's fingerprint, role and tags.
    fn upsert(&mut self) -> Option<(u64, String, Vec<String>)> {
        let fingerprint = u64::from_le_bytes(self.take(8)?.try_into().ok()?);
        let role = self.string()?;
        let tags = (0..self.u16()?).map(|_| self.string()).collect::<Option<Vec<String>>>()?;
        Some((fingerprint, role, tags))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexable::indexables;
    use ucpkit_core::{Block, Content, Document, Metadata, Role};

    fn doc() -> Document {
        let mut doc = Document::new("d");
        for n in 0..40 {
            let content = Content::markdown(format!("paragraph {n}"));
            let block = Block::new(
                Block::derive_id(&content, Some(&Role::Paragraph), "", n),
                content,
                Metadata::with_role(Role::Paragraph),
            );
            doc.append_child(BlockId::ROOT, block).unwrap();
        }
        doc
    }

    #[test]
    fn catalog_round_trips_and_rejects_damage() {
        let doc = doc();
        let mut catalog = Catalog::default();
        for item in indexables(&doc) {
            catalog.insert(&item, item.fingerprint());
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.bin");
        catalog.save(&path).unwrap();
        assert_eq!(Catalog::load(&path).unwrap().entries, catalog.entries);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(matches!(Catalog::load(&path), Err(SearchError::Damaged { .. })));
        std::fs::write(&path, b"garbage!").unwrap();
        assert!(matches!(Catalog::load(&path), Err(SearchError::Damaged { .. })));
    }

    #[test]
    fn changes_are_logged_then_folded_into_a_new_copy() {
        let doc = doc();
        let items = indexables(&doc);
        let mut catalog = Catalog::default();
        for item in &items {
            catalog.insert(item, 1);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.bin");
        catalog.save(&path).unwrap();
        let base = std::fs::read(&path).unwrap();

        // A few changes: logged, the copy untouched.
        catalog.insert(&items[0], 2);
        let gone = items[1].id;
        catalog.entries.remove(&gone);
        catalog.save_changes(&path, &[gone], &[items[0].id]).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), base);
        assert!(log_path(&path).exists());
        assert_eq!(Catalog::load(&path).unwrap().entries, catalog.entries);

        // A torn last record makes the catalog damaged (the index is then
        // rebuilt): a catalog missing a change could keep a deleted block.
        let log = std::fs::read(log_path(&path)).unwrap();
        catalog.insert(&items[2], 3);
        catalog.save_changes(&path, &[], &[items[2].id]).unwrap();
        let torn = std::fs::read(log_path(&path)).unwrap();
        std::fs::write(log_path(&path), &torn[..torn.len() - 3]).unwrap();
        assert!(matches!(Catalog::load(&path), Err(SearchError::Damaged { .. })));
        std::fs::write(log_path(&path), &log).unwrap();
        catalog.insert(&items[2], 1);

        // Many changes: a new copy, no log.
        let all: Vec<BlockId> = items.iter().map(|i| i.id).filter(|id| *id != gone).collect();
        for item in &items[3..] {
            catalog.insert(item, 4);
        }
        catalog.save_changes(&path, &[], &all).unwrap();
        assert!(!log_path(&path).exists());
        assert_eq!(Catalog::load(&path).unwrap().entries, catalog.entries);
    }

    #[test]
    fn a_catalog_of_some_blocks_logs_their_changes_and_folds_into_the_whole() {
        let doc = doc();
        let items = indexables(&doc);
        let mut whole = Catalog::default();
        for item in &items {
            whole.insert(item, 1);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.bin");
        whole.save(&path).unwrap();
        whole.insert(&items[5], 5);
        whole.save_changes(&path, &[], &[items[5].id]).unwrap();

        // A catalog of three blocks, as the whole one holds them.
        let mut some = Catalog::default();
        some.insert(&items[4], 1);
        some.insert(&items[5], 5);
        some.insert(&items[6], 1);

        // A change of one: logged, and the whole catalog reads it.
        some.insert(&items[4], 7);
        whole.insert(&items[4], 7);
        some.save_changes_of_some(&path, &[], &[items[4].id]).unwrap();
        assert!(log_path(&path).exists());
        assert_eq!(Catalog::load(&path).unwrap().entries, whole.entries);

        // Enough changes to fold: the whole catalog is written with them,
        // every other entry kept.
        let gone = items[6].id;
        some.entries.remove(&gone);
        whole.entries.remove(&gone);
        let mut tagged = items[4].clone();
        let tags = vec!["fresh".to_owned()];
        tagged.tags = &tags;
        some.insert(&tagged, 8);
        whole.insert(&tagged, 8);
        let changed = vec![items[4].id; 40];
        some.save_changes_of_some(&path, &[gone], &changed).unwrap();
        assert!(!log_path(&path).exists(), "folded");
        let folded = Catalog::load(&path).unwrap();
        assert_eq!(folded.entries.len(), items.len() - 1);
        let name = |c: &Catalog, i: u16| c.strings[usize::from(i)].clone();
        let entry = &folded.entries[&items[4].id];
        assert_eq!((entry.fingerprint, name(&folded, entry.tags[0])), (8, "fresh".to_owned()));
        assert_eq!(folded.entries[&items[0].id], whole.entries[&items[0].id]);

        // A whole catalog that cannot be read when a fold is due is removed,
        // so the index is rebuilt when it is next opened with its document.
        std::fs::write(&path, b"not a catalog").unwrap();
        some.save_changes_of_some(&path, &[], &changed).unwrap();
        assert!(!path.exists() && !log_path(&path).exists());
    }
}
