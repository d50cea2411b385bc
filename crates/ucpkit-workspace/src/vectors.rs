//! Embedding through the store: the vectors of a document's blocks are
//! kept in its store, so a block embedded once is read back by every
//! other node, and by this one when its search index is rebuilt, instead
//! of being embedded again. Queries are embedded as they come.

use ucpkit_core::Document;
use ucpkit_search::{Embedder, SearchError, SearchIndex, SyncReport};
use ucpkit_store::{StorePool, TextKey};

use crate::library::Library;

/// A model whose block vectors are looked up in, and kept in, the store.
pub(crate) struct StoredVectors {
    pub(crate) model: Box<dyn Embedder>,
    pub(crate) store: StorePool,
    /// The document whose blocks it embeds.
    pub(crate) document: String,
    /// Whether vectors it makes are written to the store (not by a
    /// read-only library).
    pub(crate) keep: bool,
}

/// What a text's vector is stored under: 16 bytes of its BLAKE3 hash.
fn key_of(text: &str) -> TextKey {
    let hash = blake3::hash(text.as_bytes());
    hash.as_bytes()[..16].try_into().expect("16 bytes")
}

/// The model whose vectors in the store the sync `report` describes may
/// have left for texts no block holds: `index`'s, when it was rebuilt, or
/// blocks changed or went, or it embedded more than the new blocks (it
/// held no vector of that model for them).
pub(crate) fn orphaning_model(index: &SearchIndex, report: &SyncReport) -> Option<String> {
    let looked_again =
        report.rebuilt.is_some() || report.updated + report.removed > 0 || report.embedded > report.added;
    let model = index.embedder()?;
    looked_again.then(|| model.identity().to_owned())
}

/// The key of each text `doc`'s blocks are embedded as.
pub(crate) fn held_keys(doc: &Document) -> Vec<TextKey> {
    ucpkit_search::embedding_texts(doc).iter().map(|text| key_of(text)).collect()
}

impl Library {
    /// Drops the vectors the store keeps of document `name` under `model`
    /// for texts none of its blocks holds at `revision` (`held`): texts
    /// edited away. Best effort, never by a read-only library, and nothing
    /// is dropped when the store has moved on from `revision` (the vectors
    /// are made again when needed).
    pub(crate) fn prune_vectors(&self, name: &str, model: &str, held: &[TextKey], revision: u64) {
        if !self.config.read_only {
            if let Ok(mut store) = self.store() {
                let _ = store.prune_vectors(name, model, held, revision);
            }
        }
    }

    /// [`Library::prune_vectors`] after a sync of `index` that `report`
    /// describes, of `doc` as stored at `revision`, when it may have left
    /// any.
    pub(crate) fn prune_vectors_after(&self, index: &SearchIndex, report: &SyncReport, doc: &Document, revision: u64) {
        if let Some(model) = orphaning_model(index, report) {
            self.prune_vectors(doc.name(), &model, &held_keys(doc), revision);
        }
    }
}

impl Embedder for StoredVectors {
    fn dim(&self) -> usize {
        self.model.dim()
    }

    fn identity(&self) -> &str {
        self.model.identity()
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError> {
        self.model.embed(texts)
    }

    /// The stored vectors of these texts, the others embedded (and kept).
    /// A store that cannot be read or written now costs only the
    /// embedding: the vectors are the model's either way.
    fn embed_blocks(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError> {
        let keys: Vec<TextKey> = texts.iter().map(|text| key_of(text)).collect();
        let loaded = self.store.get().and_then(|store| store.load_vectors(&self.document, self.identity(), &keys));
        let mut stored = loaded.unwrap_or_default();
        stored.retain(|_, vector| vector.len() == self.dim());
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| !stored.contains_key(&keys[i])).collect();
        let embedded = if missing.is_empty() {
            Vec::new()
        } else {
            self.model.embed(&missing.iter().map(|&i| texts[i].clone()).collect::<Vec<_>>())?
        };
        if self.keep && !embedded.is_empty() {
            let made: Vec<(TextKey, Vec<f32>)> =
                missing.iter().map(|&i| keys[i]).zip(embedded.iter().cloned()).collect();
            let _ = self.store.get().and_then(|mut store| store.save_vectors(&self.document, self.identity(), &made));
        }
        let mut embedded = embedded.into_iter();
        Ok(keys
            .iter()
            .map(|key| match stored.get(key) {
                Some(vector) => vector.clone(),
                None => embedded.next().unwrap_or_default(),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    /// A model that makes a vector from a text's length and counts the
    /// texts it was asked to embed.
    struct Counting(Arc<AtomicUsize>);

    impl Embedder for Counting {
        fn dim(&self) -> usize {
            2
        }

        fn identity(&self) -> &str {
            "counting"
        }

        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, SearchError> {
            self.0.fetch_add(texts.len(), Ordering::Relaxed);
            Ok(texts.iter().map(|text| vec![text.len() as f32, 1.0]).collect())
        }
    }

    fn node(place: &crate::testing::Place, keep: bool) -> (StoredVectors, Arc<AtomicUsize>) {
        let count = Arc::new(AtomicUsize::new(0));
        let model = Box::new(Counting(Arc::clone(&count)));
        let store = StorePool::new(place.open(), 2, Duration::from_secs(10));
        (StoredVectors { model, store, document: "d".into(), keep }, count)
    }

    #[test]
    fn each_block_text_is_embedded_once_per_store_and_queries_never_kept() {
        for place in crate::testing::places() {
            let texts: Vec<String> = ["alpha", "beta", "gamma"].map(String::from).to_vec();
            let (first, embedded) = node(&place, true);
            let vectors = first.embed_blocks(&texts).unwrap();
            assert_eq!(vectors, [vec![5.0, 1.0], vec![4.0, 1.0], vec![5.0, 1.0]]);
            assert_eq!(embedded.load(Ordering::Relaxed), 3, "{}", place.backend);

            // Another node: the stored vectors, and only a new text embedded.
            let (second, embedded) = node(&place, true);
            let more: Vec<String> = ["gamma", "delta!", "alpha"].map(String::from).to_vec();
            assert_eq!(second.embed_blocks(&more).unwrap(), [vec![5.0, 1.0], vec![6.0, 1.0], vec![5.0, 1.0]]);
            assert_eq!(embedded.load(Ordering::Relaxed), 1, "{}: only the new text", place.backend);

            // A query is embedded every time and never stored.
            second.embed(&["zeta".to_owned()]).unwrap();
            let (third, embedded) = node(&place, false);
            third.embed_blocks(&["zeta".to_owned(), "delta!".to_owned()]).unwrap();
            assert_eq!(embedded.load(Ordering::Relaxed), 1, "the query was not kept");
            // A node that keeps nothing (read-only) wrote nothing either.
            let (fourth, embedded) = node(&place, true);
            fourth.embed_blocks(&["zeta".to_owned()]).unwrap();
            assert_eq!(embedded.load(Ordering::Relaxed), 1);
        }
    }
}
