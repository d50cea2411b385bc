//! [`SearchIndex`]: the on-disk search index of one document (BM25, and
//! vectors when a model is configured), kept in step with the document by
//! fingerprint: a sync re-indexes only blocks whose indexed fields changed.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use ucpkit_core::{BlockId, Document, IdSet};

use crate::bm25::Bm25;
use crate::catalog::Catalog;
use crate::indexable::{indexables, indexables_caught_up, indexables_within, Indexable};
use crate::turns::take_turn;
use crate::vector::{hnsw_threshold, VectorStore};
use crate::{
    fuse, BlockLengths, Embedder, RagCapabilities, RagProvider, SearchError, SearchHit, SearchOptions, TermPostings,
    MAX_HITS,
};

/// Bumped whenever the files' layout or analysis changes: older indexes are
/// rebuilt.
const FORMAT: u32 = 4;

/// Texts embedded per batch (and per progress step).
const EMBED_BATCH: usize = 512;

/// How results are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// BM25 over text, heading path and label.
    Bm25,
    /// Nearest embeddings.
    Vector,
    /// Reciprocal rank fusion of both.
    Hybrid,
}

impl Mode {
    /// The mode's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Bm25 => "bm25",
            Mode::Vector => "vector",
            Mode::Hybrid => "hybrid",
        }
    }
}

/// Settings of a search index.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchConfig {
    /// Reciprocal rank fusion constant `k` (a hit at rank `r` scores
    /// `1 / (k + r)`).
    pub rrf_k: f64,
    /// Weight of the vector list in fusion (the BM25 list weighs 1).
    pub vector_weight: f64,
    /// How many candidates each side gives fusion, per hit asked for.
    pub fusion_depth: usize,
    /// From this many vectors on, vector search uses an HNSW graph instead
    /// of an exact scan (`None`: chosen from the model's dimension by
    /// [`hnsw_threshold`]).
    pub hnsw_min_vectors: Option<usize>,
}

impl SearchConfig {
    /// From how many vectors of `dim` dimensions on search uses HNSW.
    pub fn hnsw_min(&self, dim: usize) -> usize {
        self.hnsw_min_vectors.unwrap_or_else(|| hnsw_threshold(dim))
    }
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig { rrf_k: 60.0, vector_weight: 1.0, fusion_depth: 5, hnsw_min_vectors: None }
    }
}

/// Reports the progress of a long sync (building an index from scratch).
pub trait SyncProgress {
    /// A phase (`indexing`, `embedding`) over `total` items starts.
    fn phase(&self, name: &str, total: usize);
    /// `done` more items of the phase are finished.
    fn advance(&self, done: usize);
}

impl SyncProgress for () {
    fn phase(&self, _: &str, _: usize) {}
    fn advance(&self, _: usize) {}
}

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SyncReport {
    /// Why the index was built from scratch, if it was.
    pub rebuilt: Option<String>,
    /// Blocks newly indexed.
    pub added: usize,
    /// Blocks re-indexed because they changed.
    pub updated: usize,
    /// Blocks dropped from the index.
    pub removed: usize,
    /// Blocks embedded.
    pub embedded: usize,
    /// Bytes of text indexed.
    pub bytes: usize,
    /// Seconds it took.
    pub seconds: f64,
}

impl SyncReport {
    /// Whether anything changed.
    pub fn changed(&self) -> bool {
        self.added + self.updated + self.removed + self.embedded > 0
    }
}

#[derive(Serialize, Deserialize)]
struct Meta {
    format: u32,
    document: String,
    /// The embedder's identity the vectors were made with.
    model: Option<String>,
    /// The store's revision of the document the index was last brought up
    /// to date with, when the caller said (see [`SearchIndex::open_at`]).
    #[serde(default)]
    revision: Option<u64>,
}

/// A write of a document to its store that an index follows: the store's
/// revision it was based on and the one it made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Write {
    /// The revision the writer's copy was read at.
    pub from: u64,
    /// The revision the write made.
    pub to: u64,
}

/// The blocks a store's writes of a document changed since one of its
/// revisions: what an index recorded current with that revision looks at
/// to catch up ([`SearchIndex::open_at`]).
#[derive(Debug, Clone, Copy)]
pub struct ChangedSince<'a> {
    /// The earlier revision.
    pub revision: u64,
    /// The blocks written since (changed, added or deleted).
    pub blocks: &'a [BlockId],
}

/// What [`SearchIndex::catch_up`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatchUp {
    /// The index is current with the later revision.
    Done,
    /// Nothing: the index is not at the earlier revision, or its vectors
    /// are not of the model given (or not one per block).
    Refused,
    /// Nothing yet: the document lacks these blocks, whose subtrees the
    /// catch-up looks at.
    Needs(Vec<BlockId>),
}

/// The search index of one document, in its own directory.
pub struct SearchIndex {
    dir: PathBuf,
    document: String,
    bm25: Bm25,
    embedder: Option<Box<dyn Embedder>>,
    vectors: RwLock<Option<VectorStore>>,
    catalog: RwLock<Catalog>,
    /// The document version last synced in this process.
    synced: Mutex<Option<(u64, usize)>>,
    config: SearchConfig,
    /// What it was opened for.
    opened: Opened,
}

/// What an index was opened for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opened {
    /// Searching and syncing with the whole document: its catalog is read.
    Whole,
    /// Searching only, without the catalog ([`SearchIndex::open_current`]):
    /// it refuses to sync.
    SearchOnly,
    /// Syncing blocks a part of the document changed, what it holds of
    /// them taken from the part as read ([`SearchIndex::open_for_changes`],
    /// [`SearchIndex::sync_part`]): the catalog is not read, and it refuses
    /// to search and any other sync.
    ChangesOnly,
}

fn read_meta(dir: &Path) -> Result<Meta, String> {
    let text = std::fs::read_to_string(dir.join("meta.json")).map_err(|_| "there is no search index yet".to_owned())?;
    let meta: Meta = serde_json::from_str(&text).map_err(|e| format!("its description is damaged ({e})"))?;
    if meta.format != FORMAT {
        return Err(format!("it was written by another version of ucp (format {})", meta.format));
    }
    Ok(meta)
}

impl SearchIndex {
    /// Opens the index in `dir` for `doc` and brings it up to date: builds it
    /// when it is missing or unreadable (the report says why), otherwise
    /// re-indexes only what changed. With an embedder, blocks without a
    /// vector from this model are embedded.
    pub fn open(
        dir: &Path,
        doc: &Document,
        embedder: Option<Box<dyn Embedder>>,
        config: SearchConfig,
        progress: &dyn SyncProgress,
    ) -> Result<(SearchIndex, SyncReport), SearchError> {
        SearchIndex::open_at(dir, doc, None, None, embedder, config, progress)
    }

    /// [`SearchIndex::open`] for `doc` as a store holds it at `revision`:
    /// when the index was last brought up to date with that revision
    /// ([`SearchIndex::sync_written`] and the like record it) and needs no embedding, nothing
    /// is re-read, so opening costs little whatever the document's size.
    /// When it was brought up to date with the revision `changed` starts
    /// from (and needs no model), only the blocks `changed` names, and
    /// those below them, are looked at; otherwise every block is.
    pub fn open_at(
        dir: &Path,
        doc: &Document,
        revision: Option<u64>,
        changed: Option<ChangedSince<'_>>,
        embedder: Option<Box<dyn Embedder>>,
        config: SearchConfig,
        progress: &dyn SyncProgress,
    ) -> Result<(SearchIndex, SyncReport), SearchError> {
        let _turn = take_turn(dir)?;
        let (index, rebuilt, scope) = match SearchIndex::load(dir, doc.name(), embedder, config, Opened::Whole) {
            Ok((index, meta)) => {
                if revision.is_some() && meta.revision == revision && index.embedder.is_none() {
                    *index.synced.lock().expect("sync lock") = Some((doc.version(), doc.len()));
                    return Ok((index, SyncReport::default()));
                }
                let from_here = |c: &ChangedSince<'_>| {
                    revision.is_some() && meta.revision == Some(c.revision) && meta.model.is_none()
                };
                let scope = changed.filter(|c| index.embedder.is_none() && from_here(c)).map(|c| c.blocks);
                (index, None, scope)
            }
            Err((reason, embedder, config)) => {
                if dir.exists() {
                    std::fs::remove_dir_all(dir).map_err(SearchError::io(dir))?;
                }
                (SearchIndex::create(dir, doc.name(), embedder, config)?, Some(reason), None)
            }
        };
        let mut report = index.sync_scope(doc, scope, None, progress)?;
        report.rebuilt = rebuilt;
        if revision.is_some() {
            index.save_meta(revision)?;
        }
        Ok((index, report))
    }

    /// Brings the index in `dir` from the revision `changed` starts at to
    /// `revision` by looking only at the blocks `changed` names, and below
    /// those whose title may have changed: `doc` holds every one of them the
    /// store still holds, with its ancestors and its children (part of the
    /// document will do). With `embedder`, the index's vectors are of its
    /// model and only those blocks' are made again. [`CatchUp::Needs`] the
    /// blocks below them whose subtrees `doc` lacks, changing nothing;
    /// [`CatchUp::Refused`] when the index was not recorded current with
    /// that earlier revision, its recorded model is not `embedder`'s (or it
    /// has vectors and there is no model), it lacks the vector of a block
    /// (as many vectors as catalogued blocks, or none are trusted), or it
    /// cannot be read.
    pub fn catch_up(
        dir: &Path,
        doc: &Document,
        changed: ChangedSince<'_>,
        revision: u64,
        embedder: Option<Box<dyn Embedder>>,
        config: SearchConfig,
    ) -> Result<CatchUp, SearchError> {
        let _turn = take_turn(dir)?;
        let model = embedder.as_ref().map(|e| e.identity().to_owned());
        let Ok((index, meta)) = SearchIndex::load(dir, doc.name(), embedder, config, Opened::Whole) else {
            return Ok(CatchUp::Refused);
        };
        if meta.revision != Some(changed.revision) || meta.model != model {
            return Ok(CatchUp::Refused);
        }
        let catalog = index.catalog.read().expect("catalog lock");
        // Every indexed block's vector (none missing, or damaged): a sync
        // of some blocks makes theirs alone.
        let vectors = index.vectors.read().expect("vectors lock").as_ref().map(VectorStore::len);
        if vectors.is_some_and(|vectors| vectors != catalog.entries.len()) {
            return Ok(CatchUp::Refused);
        }
        let started = Instant::now();
        let (items, scope) = match indexables_caught_up(doc, changed.blocks, &catalog) {
            Ok(selected) => selected,
            Err(needed) => return Ok(CatchUp::Needs(needed)),
        };
        drop(catalog);
        let mut synced = index.synced.lock().expect("sync lock");
        index.apply(&mut synced, (doc.version(), doc.len()), &items, Some(scope), started, &())?;
        index.save_meta(Some(revision))?;
        Ok(CatchUp::Done)
    }

    /// The store revision the index in `dir` was last recorded current
    /// with, if any: where a caller asks its store what changed since.
    pub fn recorded_revision(dir: &Path) -> Option<u64> {
        read_meta(dir).ok()?.revision
    }

    /// The index in `dir` of document `document`, when it was last brought
    /// up to date with the store's `revision` of it and needs no model:
    /// opened without the document, for a call that only searches. `None`
    /// when it is behind, missing or damaged (open it with the document).
    pub fn open_current(
        dir: &Path,
        document: &str,
        revision: u64,
        config: SearchConfig,
    ) -> Result<Option<SearchIndex>, SearchError> {
        SearchIndex::open_without_document(dir, document, revision, None, config, Opened::SearchOnly)
    }

    /// [`SearchIndex::open_current`] for an index with vectors of
    /// `embedder`'s model: opened with them, for hybrid search without the
    /// document. `None` when it is behind, missing, damaged, or its vectors
    /// are of another model (or none).
    pub fn open_current_with_model(
        dir: &Path,
        document: &str,
        revision: u64,
        embedder: Box<dyn Embedder>,
        config: SearchConfig,
    ) -> Result<Option<SearchIndex>, SearchError> {
        SearchIndex::open_without_document(dir, document, revision, Some(embedder), config, Opened::SearchOnly)
    }

    /// The index in `dir` of document `document`, when it was last brought
    /// up to date with the store's `revision` of it and needs no model,
    /// opened to follow changes without the document: for a caller that
    /// holds part of it and syncs only blocks it changed
    /// ([`SearchIndex::sync_part`]; never [`SearchIndex::sync`], which
    /// would drop every block the part does not hold). `None` when it is
    /// behind, missing or damaged.
    pub fn open_for_changes(
        dir: &Path,
        document: &str,
        revision: u64,
        config: SearchConfig,
    ) -> Result<Option<SearchIndex>, SearchError> {
        if !dir.join("catalog.bin").exists() {
            return Ok(None); // nothing to log its changes against
        }
        SearchIndex::open_without_document(dir, document, revision, None, config, Opened::ChangesOnly)
    }

    /// The index in `dir`, opened for `opened` when it is up to date with
    /// `revision` and holds vectors of `embedder`'s model (none without one).
    fn open_without_document(
        dir: &Path,
        document: &str,
        revision: u64,
        embedder: Option<Box<dyn Embedder>>,
        config: SearchConfig,
        opened: Opened,
    ) -> Result<Option<SearchIndex>, SearchError> {
        if !dir.join("meta.json").exists() {
            return Ok(None);
        }
        let _turn = take_turn(dir)?;
        let model = embedder.as_ref().map(|e| e.identity().to_owned());
        Ok(match SearchIndex::load(dir, document, embedder, config, opened) {
            Ok((index, meta)) if meta.revision == Some(revision) && meta.model == model => Some(index),
            _ => None,
        })
    }

    #[allow(clippy::type_complexity)]
    fn load(
        dir: &Path,
        document: &str,
        embedder: Option<Box<dyn Embedder>>,
        config: SearchConfig,
        opened: Opened,
    ) -> Result<(SearchIndex, Meta), (String, Option<Box<dyn Embedder>>, SearchConfig)> {
        let meta = match read_meta(dir) {
            Ok(meta) => meta,
            Err(reason) => return Err((reason, embedder, config)),
        };
        let catalog = || match opened {
            Opened::Whole => Catalog::load(&dir.join("catalog.bin")),
            Opened::SearchOnly | Opened::ChangesOnly => Ok(Catalog::default()),
        };
        let parts = Bm25::open(&dir.join("bm25")).and_then(|bm25| Ok((bm25, catalog()?)));
        let (bm25, catalog) = match parts {
            Ok(parts) => parts,
            Err(e) => return Err((format!("it is damaged ({e})"), embedder, config)),
        };
        let vectors = match embedder.as_ref() {
            None => None,
            Some(e) => {
                let same_model = meta.model.as_deref() == Some(e.identity());
                let stored = same_model
                    .then(|| VectorStore::load(&dir.join("vectors.bin"), e.dim(), config.hnsw_min(e.dim())).ok())
                    .flatten();
                match stored {
                    Some(stored) => Some(stored),
                    // Vectors of another model, or damaged ones, are
                    // recomputed by a sync; an index that only searches
                    // has none to do it.
                    None if opened == Opened::SearchOnly => {
                        return Err(("its vectors are not the model's".into(), embedder, config))
                    }
                    None => Some(VectorStore::new(e.dim(), config.hnsw_min(e.dim()))),
                }
            }
        };
        let index = SearchIndex {
            dir: dir.to_owned(),
            document: document.to_owned(),
            bm25,
            embedder,
            vectors: RwLock::new(vectors),
            catalog: RwLock::new(catalog),
            synced: Mutex::new(None),
            config,
            opened,
        };
        Ok((index, meta))
    }

    fn create(
        dir: &Path,
        document: &str,
        embedder: Option<Box<dyn Embedder>>,
        config: SearchConfig,
    ) -> Result<SearchIndex, SearchError> {
        let bm25_dir = dir.join("bm25");
        std::fs::create_dir_all(&bm25_dir).map_err(SearchError::io(&bm25_dir))?;
        let bm25 = Bm25::create(&bm25_dir)?;
        let vectors = embedder.as_ref().map(|e| VectorStore::new(e.dim(), config.hnsw_min(e.dim())));
        let index = SearchIndex {
            dir: dir.to_owned(),
            document: document.to_owned(),
            bm25,
            embedder,
            vectors: RwLock::new(vectors),
            catalog: RwLock::new(Catalog::default()),
            synced: Mutex::new(None),
            config,
            opened: Opened::Whole,
        };
        index.save_meta(None)?;
        Ok(index)
    }

    /// Writes the index's description, with the store revision it is up
    /// to date with when known.
    fn save_meta(&self, revision: Option<u64>) -> Result<(), SearchError> {
        let meta = Meta {
            format: FORMAT,
            document: self.document.clone(),
            model: self.embedder.as_ref().map(|e| e.identity().to_owned()),
            revision,
        };
        let path = self.dir.join("meta.json");
        let tmp = self.dir.join("meta.json.tmp");
        let text = serde_json::to_string_pretty(&meta).expect("meta serializes");
        std::fs::write(&tmp, text).map_err(SearchError::io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(SearchError::io(&path))
    }

    /// The directory the index lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The mode searches use unless told otherwise: hybrid with a model,
    /// BM25 without.
    pub fn default_mode(&self) -> Mode {
        if self.embedder.is_some() {
            Mode::Hybrid
        } else {
            Mode::Bm25
        }
    }

    /// The embedder, if one is configured.
    pub fn embedder(&self) -> Option<&dyn Embedder> {
        self.embedder.as_deref()
    }

    /// How many blocks the full-text index holds.
    pub fn len(&self) -> usize {
        self.bm25.len() as usize
    }

    /// Whether the index holds no blocks.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Brings the index up to date with `doc`, re-indexing only the blocks
    /// whose text, heading path, label, role or tags changed.
    pub fn sync(&self, doc: &Document) -> Result<SyncReport, SearchError> {
        self.sync_with(doc, &())
    }

    /// [`SearchIndex::sync`] with progress reports.
    pub fn sync_with(&self, doc: &Document, progress: &dyn SyncProgress) -> Result<SyncReport, SearchError> {
        let _turn = take_turn(&self.dir)?;
        self.sync_scope(doc, None, None, progress)
    }

    /// Brings the index up to date with `doc`, just written whole to the
    /// store at revision `written`, and records that revision (in the same
    /// turn: whatever another writer's sync did before, every block is
    /// now `doc`'s).
    pub fn sync_written(&self, doc: &Document, written: u64) -> Result<SyncReport, SearchError> {
        let _turn = take_turn(&self.dir)?;
        let report = self.sync_scope(doc, None, None, &())?;
        self.save_meta(Some(written))?;
        Ok(report)
    }

    /// Brings the index up to date with `doc`, just written to the store
    /// (`write`), when it was up to date with the document before the
    /// blocks in `changed` were touched (as
    /// [`ucpkit_core::Document::unsaved_changes`] lists them): only those and
    /// the blocks below them are looked at, so a small edit costs little
    /// whatever the document's size.
    pub fn sync_changed(&self, doc: &Document, changed: &[BlockId], write: Write) -> Result<SyncReport, SearchError> {
        self.sync_write(doc, changed, None, write)
    }

    /// [`SearchIndex::sync_changed`] for an index opened to follow a part
    /// of the document ([`SearchIndex::open_for_changes`]): `doc` is that
    /// part after its changes, `before` the same part as read. What the
    /// index holds of the changed blocks is what `before` says of them (the
    /// index was current with the revision they were read at), so the
    /// catalog is not read.
    pub fn sync_part(
        &self,
        before: &Document,
        doc: &Document,
        changed: &[BlockId],
        write: Write,
    ) -> Result<SyncReport, SearchError> {
        self.sync_write(doc, changed, Some(before), write)
    }

    /// Syncs a write's changed blocks and, in the same turn, records the
    /// revision it made when the index was recorded current with the one
    /// it was based on; otherwise another writer's sync came in between,
    /// in either order, so none is recorded and the next opening with the
    /// document syncs it whole.
    fn sync_write(
        &self,
        doc: &Document,
        changed: &[BlockId],
        before: Option<&Document>,
        write: Write,
    ) -> Result<SyncReport, SearchError> {
        let _turn = take_turn(&self.dir)?;
        let current = read_meta(&self.dir).ok().and_then(|meta| meta.revision) == Some(write.from);
        let report = self.sync_scope(doc, Some(changed), before, &())?;
        self.save_meta(current.then_some(write.to))?;
        Ok(report)
    }

    /// Syncs every block, or those `changed` and below; the caller holds
    /// the index's turn.
    fn sync_scope(
        &self,
        doc: &Document,
        changed: Option<&[BlockId]>,
        before: Option<&Document>,
        progress: &dyn SyncProgress,
    ) -> Result<SyncReport, SearchError> {
        match (self.opened, before) {
            (Opened::SearchOnly, _) => return Err(SearchError::SearchOnly),
            (Opened::ChangesOnly, None) | (Opened::Whole, Some(_)) => return Err(SearchError::ChangesOnly),
            _ => {}
        }
        let mut synced = self.synced.lock().expect("sync lock");
        let shape = (doc.version(), doc.len());
        if *synced == Some(shape) {
            return Ok(SyncReport::default());
        }
        let started = Instant::now();
        let (items, scope) = match changed {
            None => (indexables(doc), None),
            Some(changed) => {
                if let Some(before) = before {
                    // What the catalog holds of these blocks.
                    let mut catalog = Catalog::default();
                    for item in indexables_within(before, changed).0 {
                        catalog.insert(&item, item.fingerprint());
                    }
                    *self.catalog.write().expect("catalog lock") = catalog;
                }
                let (items, scope) = indexables_within(doc, changed);
                (items, Some(scope))
            }
        };
        self.apply(&mut synced, shape, &items, scope, started, progress)
    }

    /// Indexes `items` where the catalog says they changed and removes the
    /// blocks of `scope` (all, when `None`) that are not among them; then
    /// the index is synced with the document of `shape`.
    fn apply(
        &self,
        synced: &mut Option<(u64, usize)>,
        shape: (u64, usize),
        items: &[Indexable<'_>],
        scope: Option<IdSet>,
        started: Instant,
        progress: &dyn SyncProgress,
    ) -> Result<SyncReport, SearchError> {
        let fingerprints: Vec<u64> = {
            use rayon::prelude::*;
            items.par_iter().map(Indexable::fingerprint).collect()
        };
        let mut report = SyncReport::default();
        let (changed, removed): (Vec<usize>, Vec<BlockId>) = {
            let catalog = self.catalog.read().expect("catalog lock");
            let present: IdSet = items.iter().map(|i| i.id).collect();
            let changed = (0..items.len())
                .filter(|&k| match catalog.entries.get(&items[k].id) {
                    None => {
                        report.added += 1;
                        true
                    }
                    Some(entry) if entry.fingerprint != fingerprints[k] => {
                        report.updated += 1;
                        true
                    }
                    Some(_) => false,
                })
                .collect();
            let removed = match &scope {
                None => catalog.entries.keys().filter(|id| !present.contains(id)).copied().collect(),
                Some(scope) => scope
                    .iter()
                    .filter(|id| !present.contains(id) && catalog.entries.contains_key(id))
                    .copied()
                    .collect(),
            };
            (changed, removed)
        };
        report.removed = removed.len();
        let upserts: Vec<&Indexable> = changed.iter().map(|&k| &items[k]).collect();
        report.bytes = upserts.iter().map(|i| i.text.len() + i.headings.len()).sum();
        progress.phase("indexing", upserts.len());
        self.bm25.apply(&upserts, &removed)?;
        progress.advance(upserts.len());
        if self.embedder.is_none() && (!changed.is_empty() || !removed.is_empty()) {
            // Vectors stored by an earlier run with a model no longer match
            // these blocks: drop them, so a later run with the model embeds
            // afresh instead of trusting stale ones.
            let path = self.dir.join("vectors.bin");
            if path.exists() {
                std::fs::remove_file(&path).map_err(SearchError::io(&path))?;
            }
        }
        if let Some(embedder) = &self.embedder {
            let mut guard = self.vectors.write().expect("vectors lock");
            let vectors = guard.as_mut().expect("an embedder comes with a vector store");
            let stale: IdSet = upserts.iter().map(|i| i.id).collect();
            let todo: Vec<&Indexable> =
                items.iter().filter(|i| stale.contains(&i.id) || !vectors.contains(i.id)).collect();
            for id in &removed {
                vectors.remove(*id)?;
            }
            progress.phase("embedding", todo.len());
            for batch in todo.chunks(EMBED_BATCH) {
                let texts: Vec<String> = batch.iter().map(|i| i.embedding_text()).collect();
                let embedded = embedder.embed_blocks(&texts)?;
                for (item, vector) in batch.iter().zip(embedded) {
                    vectors.upsert(item.id, &vector)?;
                }
                progress.advance(batch.len());
            }
            report.embedded = todo.len();
            vectors.prepare()?;
            if !todo.is_empty() || !removed.is_empty() {
                vectors.save(&self.dir.join("vectors.bin"))?;
            }
        }
        if !changed.is_empty() || !removed.is_empty() {
            let mut catalog = self.catalog.write().expect("catalog lock");
            for id in &removed {
                catalog.entries.remove(id);
            }
            for &k in &changed {
                catalog.insert(&items[k], fingerprints[k]);
            }
            let changed: Vec<BlockId> = changed.iter().map(|&k| items[k].id).collect();
            let path = self.dir.join("catalog.bin");
            match self.opened {
                Opened::ChangesOnly => catalog.save_changes_of_some(&path, &removed, &changed)?,
                _ => catalog.save_changes(&path, &removed, &changed)?,
            }
        }
        if report.changed() {
            // The model the vectors now come from.
            self.save_meta(None)?;
        }
        *synced = Some(shape);
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// The best hits for `query` in `mode`; role and tag filters and the
    /// minimum similarity of `options` apply (in hybrid mode, to each side
    /// before fusion). At most [`MAX_HITS`] hits, whatever `options.limit` asks.
    pub fn search_mode(&self, query: &str, options: &SearchOptions, mode: Mode) -> Result<Vec<SearchHit>, SearchError> {
        if self.opened == Opened::ChangesOnly {
            return Err(SearchError::ChangesOnly);
        }
        let options = &SearchOptions { limit: options.limit.min(MAX_HITS), ..options.clone() };
        match mode {
            Mode::Bm25 => self.bm25.search(query, options),
            Mode::Vector => self.vector_search(query, options),
            Mode::Hybrid => {
                let deep = SearchOptions { limit: options.limit * self.config.fusion_depth.max(1), ..options.clone() };
                let lexical = self.bm25.search(query, &deep)?;
                let semantic = self.vector_search(query, &deep)?;
                let mut fused = fuse(&[(&lexical, 1.0), (&semantic, self.config.vector_weight)], self.config.rrf_k);
                fused.truncate(options.limit);
                Ok(fused)
            }
        }
    }

    fn vector_search(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>, SearchError> {
        let embedder = self.embedder.as_ref().ok_or(SearchError::NoModel)?;
        let query = embedder.embed(&[query.to_owned()])?.pop().unwrap_or_default();
        let catalog = self.catalog.read().expect("catalog lock");
        let filtered = !options.roles.is_empty() || !options.tags.is_empty();
        // Opened to search only, the catalog was not read: the full-text
        // index tells which blocks pass.
        let passed =
            if filtered && self.opened == Opened::SearchOnly { Some(self.bm25.filtered(options)?) } else { None };
        let accept = |id: BlockId| match &passed {
            Some(passed) => passed.contains(&id),
            None => !filtered || catalog.accepts(id, options),
        };
        let guard = self.vectors.read().expect("vectors lock");
        let vectors = guard.as_ref().expect("an embedder comes with a vector store");
        Ok(vectors
            .search(&query, options.limit, &accept)?
            .into_iter()
            .map(|(id, cosine)| SearchHit { id, score: f64::from(cosine.clamp(0.0, 1.0)) })
            .filter(|hit| hit.score >= options.min_similarity)
            .collect())
    }

    /// Whether vector searches use the approximate (HNSW) graph.
    pub fn approximate(&self) -> bool {
        self.vectors.read().expect("vectors lock").as_ref().is_some_and(VectorStore::approximate)
    }
}

impl RagProvider for SearchIndex {
    fn name(&self) -> &str {
        self.default_mode().as_str()
    }

    fn capabilities(&self) -> RagCapabilities {
        RagCapabilities { lexical: true, semantic: self.embedder.is_some() }
    }

    fn search(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>, SearchError> {
        self.search_mode(query, options, self.default_mode())
    }

    fn semantic_search(&self, query: &str, options: &SearchOptions) -> Option<Result<Vec<SearchHit>, SearchError>> {
        self.embedder.is_some().then(|| self.search_mode(query, options, Mode::Vector))
    }

    fn term_weights(&self, text: &str) -> Vec<(String, f64)> {
        // A failed read only costs the caller its weights.
        self.bm25.term_weights(text).unwrap_or_default()
    }

    fn term_postings(&self, text: &str) -> Option<Vec<TermPostings>> {
        // A failed read only costs the caller the shortcut.
        self.bm25.term_postings(text).ok()
    }

    fn block_lengths(&self) -> Option<Vec<BlockLengths>> {
        // A failed read only costs the caller exact lengths.
        self.bm25.block_lengths().ok()
    }

    fn sync(&self, document: &Document) -> Result<(), SearchError> {
        // A search-only index was opened at the store revision its caller
        // reads the document at ([`SearchIndex::open_current`]): current by
        // construction, and its caller may hold only part of the document,
        // which must never be mistaken for the whole.
        if self.opened != Opened::Whole {
            return Ok(());
        }
        self.sync_with(document, &()).map(drop)
    }
}
