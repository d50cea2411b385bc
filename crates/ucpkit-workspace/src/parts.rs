//! A one-shot context from the parts of a stored document the question
//! reaches, instead of the whole document.
//!
//! The ranking needs the document's layout (its content blocks grouped by
//! section, with their lengths), which is kept beside the search index
//! (`layout.bin`, written when a document is indexed or first loaded at a
//! revision). With it and the index's postings, the question's best blocks
//! are known before any block is read; their sections (with ancestors and
//! edges) and the blocks their links point to are read from the store, and
//! the context job runs on that partial document, reusing the ranking. Every id the job asks for that the part does not hold
//! is recorded ([`Document::partial`]); when there are any, their
//! sections are read too and the job runs again, so the answer is the one
//! the whole document gives. A layout and index of an earlier revision
//! are caught up from the store's log of the blocks written since: both
//! look at those blocks and their subtrees alone, and the layout keeps the
//! ranges of every subtree nothing was written in ([`Layout::patched`]).
//! With a model, the index is opened with its vectors (those of the blocks
//! written made again) and the model's nearest blocks are ranked in, as
//! on the whole document. When the layout is missing or cannot be caught up,
//! the index is behind otherwise, or the job keeps reaching further, the
//! document is loaded whole as before. The same ranking serves a one-shot
//! memory search ([`Library::ranked_stored`]), which reads only the
//! best-ranked blocks.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

use ucpkit_core::{BlockId, Document};
use ucpkit_engine::Engine;
use ucpkit_orchestrator::rank::{self, Layout, QuestionRanking};
use ucpkit_orchestrator::BuiltContext;
use ucpkit_search::{CatchUp, ChangedSince, Embedder, SearchConfig, SearchIndex};
use ucpkit_sessions::RagProvider;
use ucpkit_sessions::SessionHost;
use ucpkit_store::Part;

use crate::library::{lock, Library, Workspace};
use crate::{ContextOptions, WorkspaceError};

/// The layout's file in a document's search index folder.
const LAYOUT_FILE: &str = "layout.bin";

/// The first bytes of the layout file: then the store revision it is the
/// layout of, the blake3 checksum of the rest, and the encoded layout.
/// Bumped with the encoded form, so a file in an older one is written
/// again rather than kept (its revision still matching) and never read.
const MAGIC: &[u8; 8] = b"UCPLAYF7";

/// Times the job runs on a grown part before the document is read whole.
const ROUNDS: usize = 4;

impl Library {
    /// The context for `options.question` in stored document `name` (the
    /// default one when `None`): in this library's copy when it holds one,
    /// else from the parts of the stored document the question reaches,
    /// else from the whole document, loaded (and kept).
    pub fn context_in(&self, name: Option<&str>, options: &ContextOptions) -> Result<BuiltContext, WorkspaceError> {
        options.request()?;
        let name = self.store()?.resolve_name(name.or(self.config.document.as_deref()))?;
        let held = lock(&self.loaded).contains_key(&name);
        if !held {
            if let Some(built) = self.context_from_parts(&name, options)? {
                return Ok(built);
            }
        }
        let workspace = self.workspace(&name)?;
        let built = self.context(&workspace, options)?;
        if !held {
            self.keep_layout(&workspace);
        }
        Ok(built)
    }

    /// Writes the layout of `workspace`'s document beside its search index,
    /// unless the file there is a whole one of the same revision. Best
    /// effort: without the file, a one-shot context or [`ranked_stored`]
    /// loads the document.
    ///
    /// [`ranked_stored`]: Library::ranked_stored
    pub fn keep_layout(&self, workspace: &Workspace) {
        if self.config.read_only {
            return;
        }
        let (revision, version) = workspace.saved_at();
        let dir = ucpkit_search::index_dir(&self.config.store_dir, workspace.name());
        // Read whole, not only its head: a file of another form, or a
        // damaged one, is written again.
        if read_layout(&dir, revision).is_some() {
            return;
        }
        let engine = workspace.traversal().engine();
        let doc = engine.document();
        if doc.version() != version {
            return; // edited since it was read: not the stored revision's layout
        }
        let layout = rank::layout(workspace.traversal(), doc);
        let _ = write_layout(&dir, revision, &layout);
    }

    /// The context built on parts of stored document `name`; `None` when
    /// that cannot be done (the caller loads the document).
    fn context_from_parts(&self, name: &str, options: &ContextOptions) -> Result<Option<BuiltContext>, WorkspaceError> {
        let orchestrator = options.orchestrator();
        let request = options.request()?;
        let Some(StoredRanking { mut part, layout, index, ranking }) = self.stored_ranking(name, &options.question)?
        else {
            return Ok(None);
        };
        // A part over half the document costs about what the whole does.
        let most = layout.len() / 2 + 1_000;
        // The sections of the blocks the job will plan from, read first.
        let planned = &ranking.ranked[..ranking.ranked.len().min(orchestrator.config().search_limit)];
        let mut wanted: Vec<BlockId> = planned.iter().filter_map(|&(id, _)| layout.section_root(id)).collect();
        for round in 0..ROUNDS {
            if !self.store()?.extend_part(&mut part, &wanted, usize::MAX, most)? {
                return Ok(None);
            }
            if round == 0 {
                // The job views the targets of links out of the blocks it
                // judges: read them now (not what is below them) rather
                // than in a round of their own.
                let targets = part.unread_targets();
                if !self.store()?.extend_part(&mut part, &targets, 0, most)? {
                    return Ok(None);
                }
            }
            let mut doc = part.document();
            let absent = doc.partial();
            let mut host = SessionHost::with_limits(Engine::new(doc), self.config.limits.clone());
            host.set_search(index.clone());
            host.provide_derived(host.engine().document(), Arc::clone(&layout));
            host.provide_derived(host.engine().document(), Arc::clone(&ranking));
            let built = orchestrator.context(&host, &request)?;
            let missed = absent.take();
            if missed.is_empty() {
                if built.blocks.is_empty() && built.hits > 0 {
                    // Nothing fits: the whole document says how much would.
                    return Ok(None);
                }
                return Ok(Some(built));
            }
            // Each missed block with what is below it (a link target the
            // job views, and expands when it queues it as a task).
            wanted = missed.into_iter().collect();
        }
        Ok(None)
    }
}

/// The best blocks of a stored document for a question, read without
/// loading the document ([`Library::ranked_stored`]).
#[derive(Debug)]
pub struct RankedStored {
    /// The part of the document read: the blocks ranked, with their
    /// ancestors.
    pub document: Document,
    /// The blocks taken, best first, with their scores (the best at 1).
    pub ranked: Vec<(BlockId, f64)>,
}

/// What a one-shot call ranks from: the part of a stored document read so
/// far, its layout and open search index, and the question's ranking.
struct StoredRanking {
    part: Part,
    layout: Arc<Layout>,
    index: Arc<dyn RagProvider>,
    ranking: Arc<QuestionRanking>,
}

impl Library {
    /// The ranking of `question` over stored document `name`, from the
    /// layout beside its index (caught up from the store's log when it is
    /// of an earlier revision) and the index's postings, with the model's
    /// nearest blocks when one is configured; `None` when those cannot be
    /// had without loading the document.
    fn stored_ranking(&self, name: &str, question: &str) -> Result<Option<StoredRanking>, WorkspaceError> {
        let dir = ucpkit_search::index_dir(&self.config.store_dir, name);
        if layout_revision(&dir).is_none() {
            return Ok(None); // no layout to rank from
        }
        let Some(mut part) = self.store()?.part(name)? else { return Ok(None) };
        // Loaded once for the catch-up and the search.
        let model = self.load_model()?;
        let (layout, index) = match read_layout(&dir, part.revision()) {
            Some(layout) => {
                let index = self.index_to_search(&dir, name, part.revision(), model.as_ref())?;
                let Some(index) = index else { return Ok(None) };
                (layout, index)
            }
            None => match self.caught_up_layout(name, &dir, &mut part, model.as_ref()) {
                Some(caught_up) => caught_up,
                None => return Ok(None),
            },
        };
        let index: Arc<dyn RagProvider> = Arc::new(index);
        let ranking = ucpkit_orchestrator::ranking_over(&layout, index.as_ref(), question, model.is_some())?;
        let Some(ranking) = ranking else { return Ok(None) };
        Ok(Some(StoredRanking { part, layout: Arc::new(layout), index, ranking: Arc::new(ranking) }))
    }

    /// The best blocks of stored document `name` for `question`, as the
    /// context job ranks them ([`Workspace::rank`]), read from the store
    /// without loading the document: in ranking order, the first `limit`
    /// that `keep` takes, with the part of the document that holds them
    /// and their ancestors. `None` when this library holds the document,
    /// has ranked it so before (a caller that asks again, a server, is
    /// answered faster by the loaded document from then on), or its layout
    /// and index cannot be had as stored: rank the loaded [`Workspace`]
    /// instead.
    pub fn ranked_stored(
        &self,
        name: &str,
        question: &str,
        limit: usize,
        keep: impl Fn(&Document, BlockId) -> bool,
    ) -> Result<Option<RankedStored>, WorkspaceError> {
        if self.holds(name) || !lock(&self.ranked_from_store).insert(name.to_owned()) {
            return Ok(None);
        }
        let Some(StoredRanking { mut part, layout, ranking, .. }) = self.stored_ranking(name, question)? else {
            return Ok(None);
        };
        let most = layout.len() / 2 + 1_000;
        let ranked = &ranking.ranked;
        let (mut kept, mut next, mut document) = (Vec::new(), 0, part.document());
        while kept.len() < limit && next < ranked.len() {
            // Twice as many as are still wanted, for those `keep` drops.
            let end = next.saturating_add((limit - kept.len()).saturating_mul(2)).min(ranked.len());
            let batch = &ranked[next..end];
            next = end;
            let ids: Vec<BlockId> = batch.iter().map(|&(id, _)| id).collect();
            if !self.store()?.extend_part(&mut part, &ids, 0, most)? {
                return Ok(None); // written meanwhile, or too much to read
            }
            document = part.document();
            kept.extend(batch.iter().filter(|&&(id, _)| keep(&document, id)).take(limit - kept.len()));
        }
        Ok(Some(RankedStored { document, ranked: kept }))
    }
}

impl Library {
    /// The layout of stored document `name` at `part`'s revision, made
    /// from the one in `dir` of an earlier revision when the store's log
    /// names every block written since ([`Layout::patched`]), with the
    /// search index caught up from the log too (both are written back, and
    /// the index is returned open). `part` grows by the blocks written,
    /// with their children and ancestors, and by the subtrees the index
    /// (below a renamed heading) and the layout (a moved block) ask for.
    /// `None` when that cannot be done, or fails: the caller reads the
    /// document whole.
    fn caught_up_layout(
        &self,
        name: &str,
        dir: &Path,
        part: &mut Part,
        model: Option<&Arc<dyn Embedder>>,
    ) -> Option<(Layout, SearchIndex)> {
        let now = part.revision();
        let since = layout_revision(dir).filter(|&since| since < now && !self.config.read_only)?;
        let earlier = read_layout(dir, since)?;
        let store = self.store().ok()?;
        let (at, changed) = store.changed_since(name, since).ok()??;
        // More than a few blocks written costs about what a whole read does.
        if at != now || changed.len() > earlier.len() / 8 + 64 {
            return None;
        }
        // Blocks read at most (content blocks are most of a document's).
        let most = earlier.len() / 2 + 1_000;
        // The blocks written with their children (the root's own changes,
        // its children, change nothing below it: the part holds it), then
        // the subtrees the index or the layout asks for, a round each.
        let below_root: Vec<BlockId> = changed.iter().copied().filter(|id| !id.is_root()).collect();
        if !store.extend_part(part, &below_root, 1, most).ok()? {
            return None;
        }
        let mut rounds = 0..ROUNDS;
        if SearchIndex::recorded_revision(dir)? != now {
            loop {
                rounds.next()?;
                let changed = ChangedSince { revision: since, blocks: &changed };
                let embedder = model.map(|model| self.stored_vectors(Arc::clone(model), name));
                let config = SearchConfig::default();
                match SearchIndex::catch_up(dir, &part.document(), changed, now, embedder, config).ok()? {
                    CatchUp::Done => break,
                    CatchUp::Refused => return None,
                    CatchUp::Needs(subtrees) => {
                        if !store.extend_part(part, &subtrees, usize::MAX, most).ok()? {
                            return None;
                        }
                    }
                }
            }
        }
        let index = self.index_to_search(dir, name, now, model).ok()??;
        // Lengths measured for some blocks and estimated for others would
        // not be the layout a whole read makes.
        let lengths = index.block_lengths()?;
        let layout = loop {
            rounds.next()?;
            let mut doc = part.document();
            let absent = doc.partial();
            let patched = earlier.patched(&doc, &changed, Some(&lengths));
            let missed: Vec<BlockId> = absent.take().into_iter().collect();
            match patched {
                Some(layout) if missed.is_empty() => break layout,
                // The subtrees of blocks added or moved, walked afresh.
                _ if !missed.is_empty() => {
                    if !store.extend_part(part, &missed, usize::MAX, most).ok()? {
                        return None;
                    }
                }
                _ => return None,
            }
        };
        // Best effort: without the file, the next call catches up again.
        let _ = write_layout(dir, now, &layout);
        Some((layout, index))
    }

    /// The search index in `dir` of document `name`, opened to search
    /// without the document when it is at `revision` (with the vectors of
    /// `model`, the configured one, if any).
    fn index_to_search(
        &self,
        dir: &Path,
        name: &str,
        revision: u64,
        model: Option<&Arc<dyn Embedder>>,
    ) -> Result<Option<SearchIndex>, WorkspaceError> {
        let config = SearchConfig::default();
        Ok(match model {
            Some(model) => {
                SearchIndex::open_current_with_model(dir, name, revision, Box::new(Arc::clone(model)), config)?
            }
            None => SearchIndex::open_current(dir, name, revision, config)?,
        })
    }
}

/// The revision the layout file in `dir` is for, read from its head.
fn layout_revision(dir: &Path) -> Option<u64> {
    use std::io::Read as _;
    let mut head = [0u8; 16];
    std::fs::File::open(dir.join(LAYOUT_FILE)).ok()?.read_exact(&mut head).ok()?;
    (head[..8] == MAGIC[..]).then(|| u64::from_le_bytes(head[8..16].try_into().expect("8 bytes")))
}

/// The layout in `dir` if it is whole, unchanged and for `revision`.
fn read_layout(dir: &Path, revision: u64) -> Option<Layout> {
    let bytes = std::fs::read(dir.join(LAYOUT_FILE)).ok()?;
    let rest = bytes.strip_prefix(MAGIC)?;
    let (stored, rest) = rest.split_first_chunk::<8>()?;
    let (checksum, payload) = rest.split_first_chunk::<32>()?;
    if u64::from_le_bytes(*stored) != revision || blake3::hash(payload).as_bytes() != checksum {
        return None;
    }
    Layout::decode(payload)
}

/// Writes the layout file: a temporary file renamed into place, so a
/// reader sees a whole file or none.
fn write_layout(dir: &Path, revision: u64, layout: &Layout) -> std::io::Result<()> {
    let payload = layout.encode();
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(MAGIC)?;
    file.write_all(&revision.to_le_bytes())?;
    file.write_all(blake3::hash(&payload).as_bytes())?;
    file.write_all(&payload)?;
    file.persist(dir.join(LAYOUT_FILE)).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_file_is_read_only_for_its_revision_and_whole() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::build(&Document::new("d"), None);
        write_layout(dir.path(), 7, &layout).unwrap();
        assert_eq!(layout_revision(dir.path()), Some(7));
        assert!(read_layout(dir.path(), 7).is_some());
        assert!(read_layout(dir.path(), 8).is_none());
        let path = dir.path().join(LAYOUT_FILE);
        let mut bytes = std::fs::read(&path).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(read_layout(dir.path(), 7).is_none(), "a changed byte fails the checksum");
    }
}
