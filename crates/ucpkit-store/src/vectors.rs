//! Embedding vectors kept with a document's blocks, by model and text:
//! a node embeds a block once and every other node (or its own rebuilt
//! search index) reads the vector back instead of embedding it again.
//! Similarity search stays in each node's index.

use std::collections::HashMap;
use std::sync::LazyLock;

use crate::codec::insert_all;
use crate::excerpt::{batched_after, each_batch_after};
use crate::sql::{args, Arg, Tx};
use crate::{db, Store, StoreError};

/// What a vector is stored under besides its document and model: the
/// first 16 bytes of the BLAKE3 hash of the embedded text.
pub type TextKey = [u8; 16];

/// The columns of a vector's row, in the order [`Store::save_vectors`] gives them.
const COLUMNS: [&str; 4] = ["document", "model", "key", "vector"];

/// A vector row that is there already is kept: the same model and text
/// give the same vector.
const KEEP: &str = "ON CONFLICT (document, model, key) DO NOTHING";

impl Store {
    /// The vectors stored for document `document` under `model` for the
    /// texts `keys` name; keys with none stored are left out.
    pub fn load_vectors(
        &self,
        document: &str,
        model: &str,
        keys: &[TextKey],
    ) -> Result<HashMap<TextKey, Vec<f32>>, StoreError> {
        const READING: &str = "reading vectors";
        static SQL: LazyLock<String> = LazyLock::new(|| {
            batched_after("SELECT key, vector FROM vectors WHERE document = ?1 AND model = ?2 AND key IN", 2)
        });
        let keys: Vec<&[u8]> = keys.iter().map(|key| &key[..]).collect();
        self.db.read(|tx| {
            let mut found = HashMap::new();
            each_batch_after(tx, READING, &SQL, &[Arg::Text(document), Arg::Text(model)], &keys, |row| {
                let key = row.bytes(0).map_err(db(READING))?.and_then(|k| TextKey::try_from(k).ok());
                let vector = row.bytes(1).map_err(db(READING))?.filter(|v| v.len() % 4 == 0);
                if let (Some(key), Some(vector)) = (key, vector) {
                    let floats = vector.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")));
                    found.insert(key, floats.collect());
                }
                Ok(())
            })?;
            Ok(found)
        })
    }

    /// Stores `vectors` of document `document`'s texts under `model`, in
    /// one transaction; a key stored already keeps its vector.
    pub fn save_vectors(
        &mut self,
        document: &str,
        model: &str,
        vectors: &[(TextKey, Vec<f32>)],
    ) -> Result<(), StoreError> {
        let rows: Vec<VectorRow> = vectors
            .iter()
            .map(|(key, vector)| (model.to_owned(), *key, vector.iter().flat_map(|x| x.to_le_bytes()).collect()))
            .collect();
        self.db.write(|tx| write_vectors(tx, document, &rows))
    }

    /// Deletes the vectors of document `document` under `model` whose
    /// texts `held` (the keys of every block text at `revision`) leaves
    /// out: texts edited away. Nothing is deleted unless the store still
    /// holds `revision` (`None` then): a node behind would delete the
    /// vectors of newer texts. The number deleted otherwise. The keys are
    /// read first; only when some are to go is the store written (so the
    /// nodes that follow the one that pruned take no writer's lock).
    pub fn prune_vectors(
        &mut self,
        document: &str,
        model: &str,
        held: &[TextKey],
        revision: u64,
    ) -> Result<Option<usize>, StoreError> {
        const PRUNING: &str = "pruning vectors";
        static SQL: LazyLock<String> =
            LazyLock::new(|| batched_after("DELETE FROM vectors WHERE document = ?1 AND model = ?2 AND key IN", 2));
        let held: std::collections::HashSet<&TextKey> = held.iter().collect();
        let orphans = self.db.read(|tx| {
            if crate::revision_in(tx, document)? != revision {
                return Ok(None);
            }
            let stored = tx.all(
                PRUNING,
                "SELECT key FROM vectors WHERE document = ?1 AND model = ?2",
                args![document, model],
                |row| Ok(row.bytes(0).map_err(db(PRUNING))?.map(<[u8]>::to_vec)),
            )?;
            // A damaged key is an orphan too.
            let orphans: Vec<Vec<u8>> = stored
                .into_iter()
                .flatten()
                .filter(|key| TextKey::try_from(key.as_slice()).map_or(true, |key| !held.contains(&key)))
                .collect();
            Ok(Some(orphans))
        })?;
        let Some(orphans) = orphans else { return Ok(None) };
        if orphans.is_empty() {
            return Ok(Some(0));
        }
        let keys: Vec<&[u8]> = orphans.iter().map(Vec::as_slice).collect();
        self.db.write(|tx| {
            // A write in between may have made an orphan's text current again.
            if crate::revision_in(tx, document)? != revision {
                return Ok(None);
            }
            each_batch_after(tx, PRUNING, &SQL, &[Arg::Text(document), Arg::Text(model)], &keys, |_| Ok(()))?;
            Ok(Some(keys.len()))
        })
    }
}

/// A stored vector: its model, its text's key and its bytes.
pub(crate) type VectorRow = (String, TextKey, Vec<u8>);

/// Every vector of document `name`, read in `tx`.
pub(crate) fn read_vectors(tx: &Tx<'_>, name: &str) -> Result<Vec<VectorRow>, StoreError> {
    const READING: &str = "reading vectors";
    let rows = tx.all(READING, "SELECT model, key, vector FROM vectors WHERE document = ?1", args![name], |row| {
        let model = row.string(0).map_err(db(READING))?;
        let key = row.bytes(1).map_err(db(READING))?.and_then(|k| TextKey::try_from(k).ok());
        let vector = row.bytes(2).map_err(db(READING))?.map(<[u8]>::to_vec);
        // A damaged key is left behind: the vector is made again when needed.
        Ok(key.zip(vector).map(|(key, vector)| (model, key, vector)))
    })?;
    Ok(rows.into_iter().flatten().collect())
}

/// Writes `rows` as vectors of document `name` in `tx`; a key stored
/// already keeps its vector.
pub(crate) fn write_vectors(tx: &Tx<'_>, name: &str, rows: &[VectorRow]) -> Result<(), StoreError> {
    insert_all(tx, "writing vectors", "vectors", &COLUMNS, KEEP, rows, |(model, key, bytes), args| {
        args.extend([Arg::Text(name), Arg::Text(model), Arg::Bytes(&key[..]), Arg::Bytes(bytes)]);
    })
}

/// Deletes the vectors of document `name` inside a transaction.
pub(crate) fn delete_vectors(tx: &Tx<'_>, name: &str) -> Result<(), StoreError> {
    tx.run("deleting vectors", "DELETE FROM vectors WHERE document = ?1", args![name]).map(drop)
}

#[cfg(test)]
mod tests {
    use ucpkit_core::Document;

    use crate::testing::places;

    #[test]
    fn vectors_are_kept_per_document_and_model_and_go_with_their_document() {
        for place in places() {
            let mut store = place.open();
            store.save_document(&Document::new("d")).unwrap();
            let many: Vec<([u8; 16], Vec<f32>)> = (0..150u8).map(|n| ([n; 16], vec![f32::from(n), -1.5])).collect();
            store.save_vectors("d", "m1", &many).unwrap();
            // Stored again, a key keeps its first vector.
            store.save_vectors("d", "m1", &[([3; 16], vec![9.0, 9.0])]).unwrap();
            let keys: Vec<[u8; 16]> = (0..200u8).map(|n| [n; 16]).collect();
            let found = store.load_vectors("d", "m1", &keys).unwrap();
            assert_eq!(found.len(), 150, "{}", place.backend);
            assert_eq!(found[&[3; 16]], [3.0, -1.5]);
            assert_eq!(found[&[149; 16]], [149.0, -1.5]);
            assert!(store.load_vectors("d", "m2", &keys).unwrap().is_empty(), "another model's are not these");
            assert!(store.load_vectors("e", "m1", &keys).unwrap().is_empty(), "another document's are not these");

            store.rename_document("d", "e").unwrap();
            assert_eq!(store.load_vectors("e", "m1", &keys).unwrap().len(), 150, "they follow a rename");
            store.delete_document("e").unwrap();
            assert!(store.load_vectors("e", "m1", &keys).unwrap().is_empty(), "they go with their document");
        }
    }

    #[test]
    fn pruning_drops_the_vectors_of_texts_no_block_holds_at_the_revision_read() {
        for place in places() {
            let mut store = place.open();
            store.save_document(&Document::new("d")).unwrap();
            let revision = store.revision("d").unwrap();
            let many: Vec<([u8; 16], Vec<f32>)> = (0..150u8).map(|n| ([n; 16], vec![f32::from(n)])).collect();
            store.save_vectors("d", "m1", &many).unwrap();
            store.save_vectors("d", "m2", &many).unwrap();
            let keys: Vec<[u8; 16]> = (0..150u8).map(|n| [n; 16]).collect();
            let held: Vec<[u8; 16]> = (0..150u8).filter(|n| n % 3 == 0).map(|n| [n; 16]).collect();

            let behind = store.prune_vectors("d", "m1", &held, revision + 1).unwrap();
            assert_eq!(behind, None, "{}: a node behind or ahead deletes nothing", place.backend);
            assert_eq!(store.load_vectors("d", "m1", &keys).unwrap().len(), 150);
            assert_eq!(store.prune_vectors("d", "m1", &held, revision).unwrap(), Some(100), "{}", place.backend);
            let kept = store.load_vectors("d", "m1", &keys).unwrap();
            assert_eq!(kept.len(), 50);
            assert!(held.iter().all(|key| kept.contains_key(key)), "every held text keeps its vector");
            assert_eq!(store.load_vectors("d", "m2", &keys).unwrap().len(), 150, "another model's are untouched");
            assert_eq!(store.prune_vectors("d", "m1", &held, revision).unwrap(), Some(0));
        }
    }
}
