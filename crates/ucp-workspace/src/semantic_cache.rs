//! A semantic cache for the LLM layer: responses kept for a while and
//! served again for a request that says the same thing, even in other
//! words.
//!
//! Two requests match when their similarity reaches the threshold: the
//! cosine of their embeddings when the cache has an embedding model, else
//! the share of analyzed terms (stemmed, stop words out) they have in
//! common. Entries live `ttl_ms`; past `max_entries` the oldest go first.
//! The cache persists through a callback that receives its bytes after
//! every change (write them to a file, a store, ...), and
//! [`SemanticCache::from_bytes`] reads them back.

use std::collections::HashSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use ucp_search::Embedder;

use crate::WorkspaceError;

/// How a cache behaves.
#[derive(Debug, Clone, Copy)]
pub struct CacheConfig {
    /// How long an entry is served (ms).
    pub ttl_ms: i64,
    /// Lowest similarity (0..1) at which a request gets a kept response.
    pub threshold: f64,
    /// Most entries kept.
    pub max_entries: usize,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig { ttl_ms: 24 * 3_600_000, threshold: 0.92, max_entries: 10_000 }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    request: String,
    response: String,
    created_ms: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    vector: Option<Vec<f32>>,
    terms: Vec<String>,
}

/// A response served from the cache.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheHit {
    /// The response kept.
    pub response: String,
    /// The request it was kept for.
    pub request: String,
    /// How similar that request is to the one asked (0..1).
    pub similarity: f64,
}

/// What a cache persists with: called with its bytes after each change.
pub type Persist = Box<dyn Fn(&[u8]) + Send + Sync>;

/// (request, response) pairs served again to similar requests.
pub struct SemanticCache {
    config: CacheConfig,
    entries: Vec<Entry>,
    embedder: Option<Arc<dyn Embedder>>,
    persist: Option<Persist>,
}

/// The share of terms two sets have in common (Jaccard).
fn overlap(a: &[String], b: &[String]) -> f64 {
    let a: HashSet<&String> = a.iter().collect();
    let b: HashSet<&String> = b.iter().collect();
    let union = a.union(&b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(&b).count() as f64 / union as f64
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    // Embedders give unit vectors.
    a.iter().zip(b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum()
}

impl SemanticCache {
    /// An empty cache.
    pub fn new(config: CacheConfig) -> Self {
        SemanticCache { config, entries: Vec::new(), embedder: None, persist: None }
    }

    /// The cache that `bytes` (from the persist callback) hold, with `config`.
    pub fn from_bytes(config: CacheConfig, bytes: &[u8]) -> Result<Self, WorkspaceError> {
        let entries: Vec<Entry> = serde_json::from_slice(bytes)
            .map_err(|e| WorkspaceError::Damaged(format!("the semantic cache cannot be read: {e}")))?;
        Ok(SemanticCache { config, entries, embedder: None, persist: None })
    }

    /// Matches requests by the cosine of `embedder`'s vectors.
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Calls `persist` with the cache's bytes after every change.
    pub fn with_persist(mut self, persist: Persist) -> Self {
        self.persist = Some(persist);
        self
    }

    /// How many entries it keeps.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it keeps none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The cache as bytes (what the persist callback receives).
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.entries).expect("cache entries serialize")
    }

    fn vector(&self, text: &str) -> Result<Option<Vec<f32>>, WorkspaceError> {
        let Some(embedder) = &self.embedder else { return Ok(None) };
        let mut vectors = embedder.embed(&[text.to_owned()])?;
        Ok(vectors.pop())
    }

    fn changed(&self) {
        if let Some(persist) = &self.persist {
            persist(&self.to_bytes());
        }
    }

    /// The kept response whose request is most similar to `request`, when
    /// it reaches the threshold and has not expired at `now_ms`.
    pub fn get(&self, request: &str, now_ms: i64) -> Result<Option<CacheHit>, WorkspaceError> {
        let vector = self.vector(request)?;
        let terms = ucp_analyzer::distinct_terms(request);
        let best = self
            .entries
            .iter()
            .filter(|e| now_ms - e.created_ms < self.config.ttl_ms)
            .map(|e| {
                let similarity = match (&vector, &e.vector) {
                    (Some(a), Some(b)) if a.len() == b.len() => cosine(a, b),
                    _ => overlap(&terms, &e.terms),
                };
                (similarity, e)
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        Ok(best.filter(|(similarity, _)| *similarity >= self.config.threshold).map(|(similarity, e)| CacheHit {
            response: e.response.clone(),
            request: e.request.clone(),
            similarity,
        }))
    }

    /// Keeps `response` for `request` from `now_ms` on (replacing what was
    /// kept for the same request), dropping expired entries and, past the
    /// most kept, the oldest.
    pub fn put(&mut self, request: &str, response: &str, now_ms: i64) -> Result<(), WorkspaceError> {
        let vector = self.vector(request)?;
        let ttl = self.config.ttl_ms;
        self.entries.retain(|e| e.request != request && now_ms - e.created_ms < ttl);
        self.entries.push(Entry {
            request: request.to_owned(),
            response: response.to_owned(),
            created_ms: now_ms,
            vector,
            terms: ucp_analyzer::distinct_terms(request),
        });
        if self.entries.len() > self.config.max_entries {
            self.entries.sort_by_key(|e| e.created_ms);
            let excess = self.entries.len() - self.config.max_entries;
            self.entries.drain(..excess);
        }
        self.changed();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn similar_requests_get_kept_responses_until_they_expire() {
        let config = CacheConfig { ttl_ms: 1_000, threshold: 0.6, max_entries: 2 };
        let saved: Arc<Mutex<Vec<u8>>> = Arc::default();
        let sink = Arc::clone(&saved);
        let mut cache = SemanticCache::new(config)
            .with_persist(Box::new(move |bytes: &[u8]| *sink.lock().unwrap() = bytes.to_vec()));
        cache.put("How do I read a file in Node?", "fs.readFile", 0).unwrap();

        let hit = cache.get("how to read files in node", 10).unwrap().unwrap();
        assert_eq!(hit.response, "fs.readFile");
        assert!(hit.similarity >= 0.6);
        assert!(cache.get("How do I parse command line flags?", 10).unwrap().is_none());
        assert!(cache.get("How do I read a file in Node?", 1_000).unwrap().is_none(), "expired");

        // Persisted after each change, and read back.
        let restored = SemanticCache::from_bytes(config, &saved.lock().unwrap()).unwrap();
        assert_eq!(restored.get("how do I read a file with node", 10).unwrap().unwrap().response, "fs.readFile");
        assert!(SemanticCache::from_bytes(config, b"not json").is_err());

        // The same request replaces its entry; past the most kept, the oldest goes.
        cache.put("How do I read a file in Node?", "fs.promises.readFile", 20).unwrap();
        assert_eq!(cache.len(), 1);
        cache.put("parse flags", "util.parseArgs", 30).unwrap();
        cache.put("spawn a process", "child_process.spawn", 40).unwrap();
        assert_eq!(cache.len(), 2);
        assert!(cache.get("How do I read a file in Node?", 50).unwrap().is_none());
    }
}
