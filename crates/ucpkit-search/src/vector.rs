//! Block embeddings and nearest-neighbour search: exact (every vector, in
//! parallel) for small corpora, an HNSW graph (usearch, with the `models`
//! feature) from a size up that depends on the dimension
//! ([`hnsw_threshold`], measured by `benches/search.rs`); without the
//! feature every search is exact.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::io::{BufWriter, Write};
use std::path::Path;

use rayon::prelude::*;
use ucpkit_core::{BlockId, IdMap};
#[cfg(feature = "models")]
use usearch::{Index as Hnsw, IndexOptions, MetricKind, ScalarKind};

use crate::SearchError;

/// An exact scan reads every component of every vector, so its cost grows
/// with vectors × dimensions; HNSW overtakes it at about this many
/// components (on two cores: near 100k vectors of 64 dimensions and between
/// 10k and 50k of 384, `cargo bench -p ucpkit-search --bench search -- vector`).
pub const HNSW_MIN_COMPONENTS: usize = 6_400_000;

/// From how many `dim`-long vectors on searches use the HNSW graph.
pub fn hnsw_threshold(dim: usize) -> usize {
    HNSW_MIN_COMPONENTS / dim.max(1)
}

/// How many candidates HNSW explores while searching.
#[cfg(feature = "models")]
const HNSW_EXPANSION: usize = 128;

const MAGIC: &[u8; 8] = b"UCPVEC1\n";

/// Vectors of blocks, one slot each; a removed block leaves a free slot
/// that the next insert reuses (the HNSW key is the slot number).
pub(crate) struct VectorStore {
    dim: usize,
    slots: Vec<Option<BlockId>>,
    data: Vec<f32>,
    by_id: IdMap<usize>,
    free: Vec<usize>,
    #[cfg(feature = "models")]
    hnsw: Option<Hnsw>,
    /// From this many vectors on, searches use the HNSW graph.
    #[cfg_attr(not(feature = "models"), allow(dead_code))]
    hnsw_min: usize,
}

/// A scored slot, ordered so a max-heap pops the worst first.
#[derive(PartialEq)]
struct Worst(f32, usize);

impl Eq for Worst {}

impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight lanes the compiler vectorizes.
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(feature = "models")]
fn hnsw_error(e: impl std::fmt::Display) -> SearchError {
    SearchError::Vector(e.to_string())
}

impl VectorStore {
    /// An empty store of `dim`-long vectors that builds an HNSW graph from
    /// `hnsw_min` vectors on.
    pub fn new(dim: usize, hnsw_min: usize) -> VectorStore {
        VectorStore {
            dim,
            slots: Vec::new(),
            data: Vec::new(),
            by_id: IdMap::default(),
            free: Vec::new(),
            #[cfg(feature = "models")]
            hnsw: None,
            hnsw_min: hnsw_min.max(1),
        }
    }

    /// How many blocks have a vector.
    #[cfg_attr(not(feature = "models"), allow(dead_code))]
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether `id` has a vector.
    pub fn contains(&self, id: BlockId) -> bool {
        self.by_id.contains_key(&id)
    }

    /// Sets the vector of `id`.
    pub fn upsert(&mut self, id: BlockId, vector: &[f32]) -> Result<(), SearchError> {
        assert_eq!(vector.len(), self.dim, "vector of the wrong dimension");
        let slot = match self.by_id.get(&id) {
            Some(&slot) => slot,
            None => {
                let slot = self.free.pop().unwrap_or_else(|| {
                    self.slots.push(None);
                    self.data.resize(self.data.len() + self.dim, 0.0);
                    self.slots.len() - 1
                });
                self.slots[slot] = Some(id);
                self.by_id.insert(id, slot);
                slot
            }
        };
        self.data[slot * self.dim..(slot + 1) * self.dim].copy_from_slice(vector);
        #[cfg(feature = "models")]
        if let Some(hnsw) = &self.hnsw {
            let key = slot as u64;
            if hnsw.contains(key) {
                hnsw.remove(key).map_err(hnsw_error)?;
            }
            if hnsw.size() >= hnsw.capacity() {
                hnsw.reserve((hnsw.capacity() * 2).max(1024)).map_err(hnsw_error)?;
            }
            hnsw.add(key, vector).map_err(hnsw_error)?;
        }
        Ok(())
    }

    /// Drops the vector of `id`, if any.
    pub fn remove(&mut self, id: BlockId) -> Result<(), SearchError> {
        if let Some(slot) = self.by_id.remove(&id) {
            self.slots[slot] = None;
            self.free.push(slot);
            #[cfg(feature = "models")]
            if let Some(hnsw) = &self.hnsw {
                hnsw.remove(slot as u64).map_err(hnsw_error)?;
            }
        }
        Ok(())
    }

    /// Builds the HNSW graph when the store is large enough to want one
    /// (and drops it when it shrank below that); without the `models`
    /// feature there is no graph and searches scan.
    #[cfg(not(feature = "models"))]
    pub fn prepare(&mut self) -> Result<(), SearchError> {
        Ok(())
    }

    /// Builds the HNSW graph when the store is large enough to want one
    /// (and drops it when it shrank below that).
    #[cfg(feature = "models")]
    pub fn prepare(&mut self) -> Result<(), SearchError> {
        if self.len() < self.hnsw_min {
            self.hnsw = None;
            return Ok(());
        }
        if self.hnsw.as_ref().is_some_and(|h| h.size() == self.len()) {
            return Ok(());
        }
        let hnsw = Hnsw::new(&self.hnsw_options()).map_err(hnsw_error)?;
        hnsw.reserve(self.len() + self.len() / 8).map_err(hnsw_error)?;
        let live: Vec<usize> = self.by_id.values().copied().collect();
        live.par_iter()
            .try_for_each(|&slot| hnsw.add(slot as u64, &self.data[slot * self.dim..(slot + 1) * self.dim]))
            .map_err(hnsw_error)?;
        self.hnsw = Some(hnsw);
        Ok(())
    }

    #[cfg(feature = "models")]
    fn hnsw_options(&self) -> IndexOptions {
        IndexOptions {
            dimensions: self.dim,
            metric: MetricKind::IP,
            quantization: ScalarKind::F32,
            connectivity: 16,
            expansion_add: 128,
            expansion_search: HNSW_EXPANSION,
            multi: false,
        }
    }

    /// Whether searches go through the HNSW graph.
    pub fn approximate(&self) -> bool {
        #[cfg(feature = "models")]
        return self.hnsw.is_some();
        #[cfg(not(feature = "models"))]
        false
    }

    /// The `k` blocks most similar to `query` (cosine, as vectors are unit
    /// length) among those `accept` lets through, best first.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        accept: &(dyn Fn(BlockId) -> bool + Sync),
    ) -> Result<Vec<(BlockId, f32)>, SearchError> {
        if k == 0 || self.by_id.is_empty() {
            return Ok(Vec::new());
        }
        #[cfg(feature = "models")]
        if let Some(hnsw) = &self.hnsw {
            let keep = |key: u64| self.slots.get(key as usize).copied().flatten().is_some_and(accept);
            let found = hnsw.filtered_search(query, k, keep).map_err(hnsw_error)?;
            return Ok(found
                .keys
                .iter()
                .zip(&found.distances)
                .filter_map(|(&key, &distance)| Some((self.slots[key as usize]?, 1.0 - distance)))
                .collect());
        }
        const CHUNK: usize = 4096;
        let best = self
            .slots
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(c, slots)| {
                let mut heap = BinaryHeap::with_capacity(k + 1);
                for (i, id) in slots.iter().enumerate() {
                    let Some(id) = id else { continue };
                    let slot = c * CHUNK + i;
                    let score = dot(query, &self.data[slot * self.dim..(slot + 1) * self.dim]);
                    if heap.len() == k && heap.peek().is_some_and(|w: &Worst| score <= w.0) {
                        continue;
                    }
                    if !accept(*id) {
                        continue;
                    }
                    heap.push(Worst(score, slot));
                    if heap.len() > k {
                        heap.pop();
                    }
                }
                heap
            })
            .reduce(BinaryHeap::new, |mut a, b| {
                for w in b {
                    a.push(w);
                    if a.len() > k {
                        a.pop();
                    }
                }
                a
            });
        let mut out: Vec<Worst> = best.into_vec();
        out.sort();
        Ok(out.into_iter().filter_map(|Worst(score, slot)| Some((self.slots[slot]?, score))).collect())
    }

    /// Writes the vectors (and the HNSW graph beside them) atomically.
    pub fn save(&self, path: &Path) -> Result<(), SearchError> {
        let tmp = path.with_extension("tmp");
        let file = std::fs::File::create(&tmp).map_err(SearchError::io(&tmp))?;
        let mut out = BufWriter::new(file);
        let result = (|| {
            out.write_all(MAGIC)?;
            out.write_all(&(self.dim as u32).to_le_bytes())?;
            out.write_all(&(self.slots.len() as u64).to_le_bytes())?;
            for (slot, id) in self.slots.iter().enumerate() {
                out.write_all(&[u8::from(id.is_some())])?;
                out.write_all(id.unwrap_or(BlockId::ROOT).as_bytes())?;
                for x in &self.data[slot * self.dim..(slot + 1) * self.dim] {
                    out.write_all(&x.to_le_bytes())?;
                }
            }
            out.flush()
        })();
        result.map_err(SearchError::io(&tmp))?;
        std::fs::rename(&tmp, path).map_err(SearchError::io(path))?;
        let graph = path.with_extension("hnsw");
        #[cfg(feature = "models")]
        if let Some(hnsw) = &self.hnsw {
            return hnsw.save(&graph.to_string_lossy()).map_err(hnsw_error);
        }
        match std::fs::remove_file(&graph) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(SearchError::io(&graph)(e)),
            _ => Ok(()),
        }
    }

    /// Reads vectors written by [`VectorStore::save`], with their HNSW
    /// graph when one was saved for exactly these vectors.
    pub fn load(path: &Path, dim: usize, hnsw_min: usize) -> Result<VectorStore, SearchError> {
        let bytes = std::fs::read(path).map_err(SearchError::io(path))?;
        let damaged = |reason: &str| SearchError::Damaged { path: path.to_owned(), reason: reason.to_owned() };
        if bytes.len() < 20 || &bytes[..8] != MAGIC {
            return Err(damaged("not a vector file of this version"));
        }
        let stored_dim = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize;
        if stored_dim != dim {
            return Err(damaged(&format!("vectors of length {stored_dim}, the model makes {dim}")));
        }
        let count = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes")) as usize;
        let record = 13 + 4 * dim;
        if bytes.len() != 20 + count * record {
            return Err(damaged("truncated"));
        }
        let mut store = VectorStore::new(dim, hnsw_min);
        store.slots.reserve(count);
        store.data.reserve(count * dim);
        for (slot, chunk) in bytes[20..].chunks_exact(record).enumerate() {
            let live = match chunk[0] {
                0 => false,
                1 => true,
                _ => return Err(damaged("bad slot flag")),
            };
            let id = BlockId::from_bytes(chunk[1..13].try_into().expect("12 bytes"));
            if live {
                store.slots.push(Some(id));
                store.by_id.insert(id, slot);
            } else {
                store.slots.push(None);
                store.free.push(slot);
            }
            store.data.extend(chunk[13..].chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))));
        }
        #[cfg(feature = "models")]
        {
            let graph = path.with_extension("hnsw");
            if store.len() >= store.hnsw_min && graph.exists() {
                let hnsw = Hnsw::new(&store.hnsw_options()).map_err(hnsw_error)?;
                // A graph that does not load or does not match is rebuilt by `prepare`.
                if hnsw.load(&graph.to_string_lossy()).is_ok() && hnsw.size() == store.len() {
                    store.hnsw = Some(hnsw);
                }
            }
        }
        Ok(store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> BlockId {
        BlockId::from_bytes([n; 12])
    }

    fn unit(v: [f32; 4]) -> Vec<f32> {
        let mut v = v.to_vec();
        crate::embed::normalize(&mut v);
        v
    }

    #[test]
    fn exact_search_ranks_by_cosine_and_filters() {
        let mut store = VectorStore::new(4, hnsw_threshold(4));
        store.upsert(id(1), &unit([1.0, 0.0, 0.0, 0.0])).unwrap();
        store.upsert(id(2), &unit([0.7, 0.7, 0.0, 0.0])).unwrap();
        store.upsert(id(3), &unit([0.0, 0.0, 1.0, 0.0])).unwrap();
        let q = unit([1.0, 0.1, 0.0, 0.0]);
        let found: Vec<BlockId> = store.search(&q, 2, &|_| true).unwrap().into_iter().map(|(i, _)| i).collect();
        assert_eq!(found, [id(1), id(2)]);
        let found: Vec<BlockId> = store.search(&q, 2, &|i| i != id(1)).unwrap().into_iter().map(|(i, _)| i).collect();
        assert_eq!(found, [id(2), id(3)]);
    }

    #[test]
    fn removed_slots_are_reused_and_survive_a_save() {
        let mut store = VectorStore::new(4, hnsw_threshold(4));
        store.upsert(id(1), &unit([1.0, 0.0, 0.0, 0.0])).unwrap();
        store.upsert(id(2), &unit([0.0, 1.0, 0.0, 0.0])).unwrap();
        store.remove(id(1)).unwrap();
        store.upsert(id(3), &unit([0.0, 0.0, 1.0, 0.0])).unwrap();
        assert_eq!(store.slots.len(), 2);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        store.save(&path).unwrap();
        let loaded = VectorStore::load(&path, 4, hnsw_threshold(4)).unwrap();
        assert_eq!(loaded.len(), 2);
        let top = loaded.search(&unit([0.0, 0.0, 1.0, 0.0]), 1, &|_| true).unwrap();
        assert_eq!(top[0].0, id(3));
        assert!((top[0].1 - 1.0).abs() < 1e-6);
        assert!(matches!(VectorStore::load(&path, 8, hnsw_threshold(8)), Err(SearchError::Damaged { .. })));
    }

    #[cfg(feature = "models")]
    #[test]
    fn hnsw_search_agrees_with_the_exact_scan_and_follows_edits() {
        let dim = 16;
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % 2000) as f32 / 1000.0 - 1.0
        };
        let vector = |random: &mut dyn FnMut() -> f32| {
            let mut v: Vec<f32> = (0..dim).map(|_| random()).collect();
            crate::embed::normalize(&mut v);
            v
        };
        let key = |n: usize| {
            BlockId::from_bytes({
                let mut b = [0u8; 12];
                b[..8].copy_from_slice(&(n as u64 + 1).to_le_bytes());
                b
            })
        };
        let mut exact = VectorStore::new(dim, usize::MAX);
        let mut graph = VectorStore::new(dim, 100);
        for n in 0..2000 {
            let v = vector(&mut random);
            exact.upsert(key(n), &v).unwrap();
            graph.upsert(key(n), &v).unwrap();
        }
        graph.prepare().unwrap();
        assert!(graph.approximate() && !exact.approximate());
        // Edits after the graph exists go into it too.
        graph.remove(key(0)).unwrap();
        exact.remove(key(0)).unwrap();
        let moved = vector(&mut random);
        graph.upsert(key(1), &moved).unwrap();
        exact.upsert(key(1), &moved).unwrap();
        let top = graph.search(&moved, 1, &|_| true).unwrap();
        assert_eq!(top[0].0, key(1));
        let mut agreed = 0;
        for _ in 0..50 {
            let q = vector(&mut random);
            let want: Vec<BlockId> = exact.search(&q, 10, &|_| true).unwrap().into_iter().map(|(i, _)| i).collect();
            let got = graph.search(&q, 10, &|_| true).unwrap();
            assert!(got.iter().all(|(i, _)| *i != key(0)));
            agreed += got.iter().filter(|(i, _)| want.contains(i)).count();
        }
        assert!(agreed >= 450, "HNSW recall@10 {agreed}/500");
        // A saved graph is loaded back with the vectors.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vectors.bin");
        graph.save(&path).unwrap();
        let loaded = VectorStore::load(&path, dim, 100).unwrap();
        assert!(loaded.approximate());
        assert_eq!(loaded.search(&moved, 1, &|_| true).unwrap()[0].0, key(1));
    }
}
