//! Indexing paths into the store: ingesting them as a document, writing
//! it when its content changed (only the files that changed, when the
//! store has the last ingest's record), and opening it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use ucpkit_ingest::{Changes, IngestOptions, IngestReport, Sources, Update};
use ucpkit_store::IndexedFrom;

use crate::library::{refuse_agent_state, Library, Workspace};
use crate::WorkspaceError;

/// What [`Library::index`] did.
pub struct Indexed {
    /// The document, loaded.
    pub workspace: Arc<Workspace>,
    /// What ingest read and found.
    pub report: IngestReport,
    /// Whether the document differed from the stored one (and was written).
    pub changed: bool,
    /// Seconds to ingest and write.
    pub seconds: f64,
}

/// What [`Library::index_stored`] did.
pub struct IndexedStored {
    /// The document's name.
    pub name: String,
    /// What ingest read and found (an unchanged document's counts as stored).
    pub report: IngestReport,
    /// Whether the document differed from the stored one (and was written).
    pub changed: bool,
    /// Seconds to ingest and write.
    pub seconds: f64,
}

/// One index run: the document loaded when it was asked for or written.
struct IndexRun {
    name: String,
    workspace: Option<Arc<Workspace>>,
    report: IngestReport,
    changed: bool,
    seconds: f64,
}

/// How [`Library::index`] treats its paths.
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// Files larger than this many bytes are skipped with a warning.
    pub max_file_size: u64,
    /// Index a document edited since it was last indexed anyway: a
    /// snapshot keeps the edited version, then the files replace it.
    pub replace_edits: bool,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions { max_file_size: ucpkit_ingest::DEFAULT_MAX_FILE_SIZE, replace_edits: false }
    }
}

/// Told how [`Library::index`] goes: files read (as ingest tells), then
/// the write of a changed document.
pub trait IndexProgress: ucpkit_ingest::Progress {
    /// A changed document of `blocks` blocks is about to be written.
    fn writing(&self, _name: &str, _blocks: usize) {}
}

impl IndexProgress for () {}

impl Library {
    /// Ingests `paths` as the document `name` (default: the first path's
    /// name) and writes it unless the stored one is the same. With allowed
    /// roots, every path must lie under one. A read-only library writes
    /// nothing: it only opens a stored document whose content is the same.
    /// A document edited since it was last indexed is refused
    /// ([`WorkspaceError::Edited`]) unless `options.replace_edits`.
    pub fn index(
        &self,
        paths: &[PathBuf],
        name: Option<&str>,
        options: &IndexOptions,
        progress: &dyn IndexProgress,
    ) -> Result<Indexed, WorkspaceError> {
        let done = self.index_paths(paths, name, options, progress, true)?;
        let Some(workspace) = done.workspace else {
            return Err(WorkspaceError::Damaged(format!("{:?} was indexed but could not be opened", done.name)));
        };
        // The next one-shot context ranks from it without loading the document.
        self.keep_layout(&workspace);
        Ok(Indexed { workspace, report: done.report, changed: done.changed, seconds: done.seconds })
    }

    /// [`Library::index`] for a caller that may not need the document
    /// loaded: an unchanged one is not (a one-shot `ucp context --corpus`
    /// then reads only what its question reaches).
    pub fn index_stored(
        &self,
        paths: &[PathBuf],
        name: Option<&str>,
        options: &IndexOptions,
        progress: &dyn IndexProgress,
    ) -> Result<IndexedStored, WorkspaceError> {
        let done = self.index_paths(paths, name, options, progress, false)?;
        if let Some(workspace) = &done.workspace {
            self.keep_layout(workspace);
        }
        Ok(IndexedStored { name: done.name, report: done.report, changed: done.changed, seconds: done.seconds })
    }

    fn index_paths(
        &self,
        paths: &[PathBuf],
        name: Option<&str>,
        options: &IndexOptions,
        progress: &dyn IndexProgress,
        load: bool,
    ) -> Result<IndexRun, WorkspaceError> {
        let started = Instant::now();
        let first = paths.first().ok_or_else(|| WorkspaceError::Invalid("no path to index".into()))?;
        let resolved: Vec<PathBuf> = match &self.config.allowed_roots {
            None => paths.to_vec(),
            Some(roots) => paths
                .iter()
                .map(|path| {
                    let not_allowed = || WorkspaceError::NotAllowed(path.display().to_string());
                    let resolved = path.canonicalize().map_err(|_| not_allowed())?;
                    if roots.iter().any(|root| resolved.starts_with(root)) {
                        Ok(resolved)
                    } else {
                        Err(not_allowed())
                    }
                })
                .collect::<Result<_, _>>()?,
        };
        let name = name.map_or_else(|| ucpkit_ingest::default_name(&resolved[0]), str::to_owned);
        ucpkit_store::check_document_name(&name)?;
        refuse_agent_state(&name)?;
        if self.store()?.edited_since_index(&name)? && !self.config.read_only {
            if !options.replace_edits {
                return Err(WorkspaceError::Edited { name, path: first.display().to_string() });
            }
            self.snapshot_edits(&name)?;
        }
        // What is written replaces the document only if no other writer
        // came in since (an edit made while the files are read is not
        // silently overwritten).
        let base = self.store()?.revision(&name)?;
        let options = IngestOptions { max_file_size: options.max_file_size, ..IngestOptions::default() };
        // The caller named `path`: an error says that, not where it resolved to.
        let ingest_error = |e: ucpkit_ingest::IngestError| {
            let text = resolved
                .iter()
                .zip(paths)
                .fold(e.to_string(), |text, (r, p)| text.replace(&r.display().to_string(), &p.display().to_string()));
            if self.config.allowed_roots.is_some() {
                WorkspaceError::Path(text)
            } else {
                WorkspaceError::Ingest(e)
            }
        };
        let refuse = |exists: bool| {
            let why = if exists { "differs from the stored document" } else { "is not stored as the document" };
            WorkspaceError::ReadOnly(format!(
                "{} {why} {name:?}, and nothing may be indexed (open a stored document by name instead)",
                first.display()
            ))
        };
        let previous = self.store()?.index_sources(&name)?;
        if let Some(sources) = previous.and_then(|(bytes, revision)| Some((Sources::from_bytes(&bytes)?, revision))) {
            let update =
                ucpkit_ingest::update(&resolved, &options, &Ingesting(progress), &sources.0).map_err(ingest_error)?;
            let reindexed = match update {
                Update::Rebuild => None,
                Update::Unchanged(report, restamped) => {
                    if let Some(restamped) = restamped.filter(|_| !self.config.read_only) {
                        // Best effort: a record left as it was only costs reading those files again.
                        let _ = self.store()?.restamp_sources(&name, sources.1, &restamped.to_bytes().files);
                    }
                    if load {
                        let (workspace, report, changed) = self.unchanged(&name, report)?;
                        Some((Some(workspace), report, changed))
                    } else {
                        Some((None, self.stored_counts(&name, report)?, false))
                    }
                }
                Update::Changed(_) if self.config.read_only => return Err(refuse(true)),
                Update::Changed(changes) => self
                    .apply_changes(&name, changes, sources.1, progress)?
                    .map(|(workspace, report, changed)| (Some(workspace), report, changed)),
            };
            if let Some((workspace, report, changed)) = reindexed {
                let seconds = started.elapsed().as_secs_f64();
                return Ok(IndexRun { name, workspace, report, changed, seconds });
            }
        }
        let ingested = ucpkit_ingest::ingest(&resolved, &name, &options, &Ingesting(progress)).map_err(ingest_error)?;
        let bytes = ingested.sources.to_bytes();
        let sources = indexed_from(&bytes);
        let written = {
            let mut store = self.store()?;
            let exists = store.documents()?.iter().any(|d| d.name == name);
            let stored = exists.then(|| store.load_with_revision(&name)).transpose()?;
            let unchanged = stored.as_ref().filter(|(stored, _)| stored.same_content(&ingested.document));
            if let Some((_, revision)) = unchanged {
                // The next index of these paths reads only what changed.
                store.record_sources(&name, *revision, sources)?;
                None
            } else {
                if self.config.read_only {
                    return Err(refuse(exists));
                }
                progress.writing(&name, ingested.document.len());
                let snapshots = store.load_snapshots(&name)?;
                Some((store.save_indexed(&ingested.document, base, sources)?, snapshots))
            }
        };
        let seconds = started.elapsed().as_secs_f64();
        let changed = written.is_some();
        let workspace = if let Some((revision, snapshots)) = written {
            // Sessions already in the old version keep it until they open again.
            let mut document = ingested.document;
            document.mark_saved();
            let workspace = Arc::new(self.load(document, snapshots, revision)?);
            self.install(&name, &workspace);
            Some(workspace)
        } else if load {
            Some(self.workspace(&name)?)
        } else {
            None
        };
        Ok(IndexRun { name, workspace, report: ingested.report, changed, seconds })
    }

    /// Keeps the edited version of document `name` as a snapshot
    /// (`before-index-<ms>`) before indexing replaces it.
    fn snapshot_edits(&self, name: &str) -> Result<(), WorkspaceError> {
        let workspace = self.workspace(name)?;
        let session = self.create_session(&workspace, &crate::NewSession::default())?;
        let script = format!("SNAPSHOT CREATE \"before-index-{}\"", ucpkit_core::now_ms());
        let run = self.run_script(&workspace, session, &script);
        self.close_session(&workspace, session)?;
        match run?.failure() {
            Some(failure) => Err(WorkspaceError::Invalid(format!("cannot keep the edited {name:?}: {failure}"))),
            None => Ok(()),
        }
    }

    /// The stored document, indexed again from files none of which
    /// changed; the report's totals are the document's.
    /// `report` of an unchanged document, with the stored document's
    /// block and token counts (it is not loaded).
    fn stored_counts(&self, name: &str, mut report: IngestReport) -> Result<IngestReport, WorkspaceError> {
        if let Some(summary) = self.store()?.documents()?.into_iter().find(|d| d.name == name) {
            report.blocks = usize::try_from(summary.blocks).unwrap_or(usize::MAX);
            report.tokens = summary.tokens;
        }
        Ok(report)
    }

    fn unchanged(
        &self,
        name: &str,
        mut report: IngestReport,
    ) -> Result<(Arc<Workspace>, IngestReport, bool), WorkspaceError> {
        let workspace = self.workspace(name)?;
        {
            let engine = workspace.traversal().engine();
            let document = engine.document();
            report.blocks = document.len();
            report.tokens = document.blocks().map(|b| u64::from(b.metadata.tokens.unwrap_or(0))).sum();
            report.links = document.edges().iter().filter(|e| e.edge_type == ucpkit_core::EdgeType::LinksTo).count();
        }
        Ok((workspace, report, false))
    }

    /// Puts the files that changed into the stored document (at
    /// `revision`, which `changes` were read against), writes what that
    /// changed and brings the search index along. A stored document that
    /// moved on meanwhile is a conflict (a whole ingest could not be
    /// written either); `None` when the record does not fit the document:
    /// the caller ingests whole.
    fn apply_changes(
        &self,
        name: &str,
        changes: Changes,
        revision: u64,
        progress: &dyn IndexProgress,
    ) -> Result<Option<(Arc<Workspace>, IngestReport, bool)>, WorkspaceError> {
        let (mut document, loaded, links) = {
            let store = self.store()?;
            let (document, loaded) = store.load_with_revision(name)?;
            (document, loaded, store.index_links(name, revision)?)
        };
        if loaded != revision {
            let document = name.to_owned();
            return Err(ucpkit_store::StoreError::Conflict { document, expected: revision, found: loaded }.into());
        }
        let Some(links) = links else { return Ok(None) };
        // At the stored revision: opening skips the sync when it is there.
        let (index, _) = self.open_index(&document, revision)?;
        let Some((report, sources)) = changes.apply(&mut document, &links) else { return Ok(None) };
        progress.writing(name, document.len());
        let changed = document.unsaved_changes();
        let (written, snapshots) = {
            let mut store = self.store()?;
            let written = store.save_indexed(&document, revision, indexed_from(&sources.to_bytes()))?;
            (written, store.load_snapshots(name)?)
        };
        let write = ucpkit_search::Write { from: revision, to: written };
        let revision = written;
        let synced = match &changed {
            Some(changed) => index.sync_changed(&document, &changed.blocks, write)?,
            None => index.sync_written(&document, write.to)?,
        };
        self.prune_vectors_after(&index, &synced, &document, revision);
        document.mark_saved();
        let workspace = Arc::new(self.assemble(document, snapshots, revision, Arc::new(index), synced));
        self.install(name, &workspace);
        Ok(Some((workspace, report, true)))
    }
}

/// An [`IndexProgress`] as ingest's `Progress`.
struct Ingesting<'a>(&'a dyn IndexProgress);

impl ucpkit_ingest::Progress for Ingesting<'_> {
    fn files_found(&self, count: usize) {
        self.0.files_found(count);
    }

    fn file_done(&self, path: &str, bytes: u64) {
        self.0.file_done(path, bytes);
    }
}

/// Ingest's record of a corpus as the store keeps it.
fn indexed_from(bytes: &ucpkit_ingest::SourceBytes) -> IndexedFrom<'_> {
    IndexedFrom { files: &bytes.files, links: &bytes.links }
}
