//! Indexing a corpus again: every file whose size or modification time
//! moved is read and hashed, only those whose text changed are parsed, and the stored document is changed where they
//! sit — their blocks replaced, every link of the corpus resolved again —
//! so the result is the document a full ingest would build (ingest times
//! aside) while the cost follows what changed.
//!
//! What makes that possible is [`Sources`], kept with the document: each
//! file's path, the hash of its text and its stamp — read on every run —,
//! and apart from them its anchors and links (which other files' links
//! resolve against), read only when something changed. A corpus whose list of files
//! changed, or a file that became readable or unreadable, is ingested
//! whole ([`Update::Rebuild`]).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use ucpkit_core::{BlockId, Document, Metadata, RemoveMode, Timestamps};

use crate::code_links::link_code;
use crate::links::{link_files, FileLinks, LinkTargets};
use crate::pipeline::{
    content_hash, file_block, file_block_id, list_sources, parse_file, place_blocks, scope_of, source_names, Layout,
};
use crate::report::{IngestReport, Warning};
use crate::section::ParsedFile;
use crate::source::{read_text, SourceFile};
use crate::{IngestError, IngestOptions, Progress};
use ucpkit_code::resolve::FileCode;

/// Bumped whenever ingest turns the same files into other blocks (a new
/// parser, a new block layout): a document made by another format is
/// ingested whole again, not updated file by file.
/// 2: source files as symbol blocks, code edges; 3: source file blocks
/// name their language; 4: trailing comments stay with their code, imports
/// resolve by package.
pub const INGEST_FORMAT: u32 = 4;

/// What an ingest read of each file, kept with the document it made so the
/// next run can tell which files changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sources {
    /// The [`INGEST_FORMAT`] that made the document.
    #[serde(default)]
    format: u32,
    /// The paths given, as the document's `source` names them.
    source: String,
    /// Folders and files as blocks (else one file under the root).
    tree: bool,
    /// Every file listed, in walk order.
    files: Vec<FileRecord>,
}

/// One listed file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FileRecord {
    /// Its corpus path.
    pub(crate) path: String,
    /// The hash of its text; `None` when it was skipped (unreadable, too
    /// large, binary ...).
    pub(crate) hash: Option<String>,
    /// Its size and modification time when it was read, if that was long
    /// enough after its last change to be trusted: a file that still has
    /// them is not read again.
    #[serde(default)]
    pub(crate) stamp: Option<Stamp>,
    /// Its anchors and links (kept apart, see [`SourceBytes`]).
    #[serde(skip)]
    pub(crate) targets: FileTargets,
}

/// What other files' links resolve against in a file, and its own links.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct FileTargets {
    /// `(anchor, block)` of its headings and HTML ids.
    pub(crate) anchors: Vec<(String, BlockId)>,
    /// `(block, destination)` of its links, in order.
    pub(crate) links: Vec<(BlockId, String)>,
    /// A source file's symbols, imports and the names it uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) code: Option<FileCode<BlockId>>,
}

/// [`Sources`] as bytes to keep beside the document, in two parts: what
/// every run reads, and what only a run that found changes needs.
pub struct SourceBytes {
    /// Each file's path, hash and stamp.
    pub files: Vec<u8>,
    /// Each file's anchors and links.
    pub links: Vec<u8>,
}

impl FileRecord {
    /// A file that was read and placed, its blocks at `ids`.
    pub(crate) fn read(path: &str, (hash, stamp): Seen, parsed: &ParsedFile, ids: &[BlockId]) -> FileRecord {
        FileRecord {
            path: path.to_owned(),
            hash: Some(hash),
            stamp,
            targets: FileTargets {
                anchors: parsed.anchors.iter().map(|(anchor, index)| (anchor.clone(), ids[*index])).collect(),
                links: parsed.links.iter().map(|link| (ids[link.block], link.dest.clone())).collect(),
                code: parsed.code.as_ref().map(|code| code.map_ids(|index| ids[*index])),
            },
        }
    }

    /// A file that was skipped.
    pub(crate) fn skipped(path: &str) -> FileRecord {
        FileRecord { path: path.to_owned(), hash: None, stamp: None, targets: FileTargets::default() }
    }
}

/// How a read of a file is known again: its text's hash, and its stamp.
pub(crate) type Seen = (String, Option<Stamp>);

/// A file's size and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    size: u64,
    modified_ns: u128,
}

/// A file changed this recently may change again within the same tick of
/// a coarse clock, unseen: its stamp is not trusted.
const SETTLED: std::time::Duration = std::time::Duration::from_secs(2);

impl Stamp {
    /// The stamp of the file at `path` now (taken before reading it, so a
    /// change while it is read makes the stamp differ next time); `None`
    /// when it cannot be read or changed too recently to be trusted.
    pub(crate) fn of(path: &std::path::Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        let modified = meta.modified().ok()?;
        let age = std::time::SystemTime::now().duration_since(modified).ok()?;
        let since_epoch = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
        (age >= SETTLED).then_some(Stamp { size: meta.len(), modified_ns: since_epoch.as_nanos() })
    }
}

impl Sources {
    pub(crate) fn new(source: String, layout: Layout, files: Vec<FileRecord>) -> Sources {
        Sources { format: INGEST_FORMAT, source, tree: layout == Layout::Tree, files }
    }

    /// The record as bytes, to keep beside the document.
    pub fn to_bytes(&self) -> SourceBytes {
        let targets: Vec<&FileTargets> = self.files.iter().map(|f| &f.targets).collect();
        SourceBytes {
            files: serde_json::to_vec(self).expect("sources serialize"),
            links: serde_json::to_vec(&targets).expect("links serialize"),
        }
    }

    /// The record of files from [`SourceBytes::files`], without their
    /// links (what [`update`] needs); `None` when it cannot be read (the
    /// corpus is then ingested whole).
    pub fn from_bytes(files: &[u8]) -> Option<Sources> {
        serde_json::from_slice(files).ok()
    }

    /// Puts back the files' anchors and links from [`SourceBytes::links`];
    /// false when they do not fit these files.
    fn read_links(&mut self, links: &[u8]) -> bool {
        let Ok(targets) = serde_json::from_slice::<Vec<FileTargets>>(links) else { return false };
        if targets.len() != self.files.len() {
            return false;
        }
        for (file, targets) in self.files.iter_mut().zip(targets) {
            file.targets = targets;
        }
        true
    }
}

/// What indexing the same paths again needs.
pub enum Update {
    /// No file changed: the stored document is what an ingest would build.
    /// When files were read whose stamps had moved (touched, or settled
    /// since), the record with their new stamps, to keep in place of the
    /// old one's files part ([`SourceBytes::files`]) so they are not read
    /// again next time.
    Unchanged(IngestReport, Option<Sources>),
    /// Some files' texts changed: [`Changes::apply`] them to the stored
    /// document.
    Changed(Changes),
    /// The corpus changed shape (files came or went, the paths differ):
    /// ingest it whole.
    Rebuild,
}

/// Files whose text changed, read and ready to apply.
pub struct Changes {
    layout: Layout,
    files: Vec<SourceFile>,
    /// `(index in files, text, stamp)` of each changed file.
    changed: Vec<(usize, String, Option<Stamp>)>,
    previous: Sources,
    report: IngestReport,
    options: IngestOptions,
}

/// What reading a listed file again found.
enum Reread {
    /// The same text, of this many bytes; the file's new stamp when it
    /// moved.
    Same(u64, Option<Option<Stamp>>),
    /// Another text, and the file's stamp before it was read.
    Changed(String, Option<Stamp>),
    /// Skipped again (the warning says why).
    StillSkipped(Warning),
    /// Skipped once and read now, or the other way round.
    Flipped,
}

/// Reads and hashes every file under `paths` and compares them with what
/// made the stored document (`previous`).
pub fn update(
    paths: &[std::path::PathBuf],
    options: &IngestOptions,
    progress: &dyn Progress,
    previous: &Sources,
) -> Result<Update, IngestError> {
    let mut report = IngestReport::default();
    let (layout, files) = list_sources(paths, &mut report.warnings)?;
    let same_list = files.len() == previous.files.len()
        && files.iter().zip(&previous.files).all(|(file, record)| file.rel_path == record.path);
    let same_layout = source_names(paths) == previous.source && (layout == Layout::Tree) == previous.tree;
    if !same_list || !same_layout || previous.format != INGEST_FORMAT {
        return Ok(Update::Rebuild);
    }
    progress.files_found(files.len());
    let read: Vec<Reread> = files
        .par_iter()
        .zip(&previous.files)
        .map(|(file, record)| {
            let stamp = Stamp::of(&file.path);
            let reread = match (stamp, record.stamp, &record.hash) {
                // A file the size limit now excludes is read, and found skipped.
                (Some(now), Some(then), Some(_)) if now == then && now.size <= options.max_file_size => {
                    Reread::Same(now.size, None)
                }
                _ => match (read_text(file, options.max_file_size), &record.hash) {
                    (Ok(text), Some(hash)) if content_hash(&text) == *hash => {
                        Reread::Same(text.len() as u64, (stamp != record.stamp).then_some(stamp))
                    }
                    (Ok(text), Some(_)) => Reread::Changed(text, stamp),
                    (Err(warning), None) => Reread::StillSkipped(warning),
                    _ => Reread::Flipped,
                },
            };
            let bytes = match &reread {
                Reread::Same(bytes, _) => *bytes,
                Reread::Changed(text, _) => text.len() as u64,
                _ => 0,
            };
            progress.file_done(&file.rel_path, bytes);
            reread
        })
        .collect();
    let mut changed = Vec::new();
    let mut restamped = previous.clone();
    let mut moved = false;
    for (index, reread) in read.into_iter().enumerate() {
        match reread {
            Reread::Same(bytes, stamp) => {
                report.files += 1;
                report.bytes += bytes;
                if let Some(stamp) = stamp {
                    restamped.files[index].stamp = stamp;
                    moved = true;
                }
            }
            Reread::Changed(text, stamp) => {
                report.files += 1;
                report.bytes += text.len() as u64;
                changed.push((index, text, stamp));
            }
            Reread::StillSkipped(warning) => report.warnings.push(warning),
            Reread::Flipped => return Ok(Update::Rebuild),
        }
    }
    if changed.is_empty() {
        return Ok(Update::Unchanged(report, moved.then_some(restamped)));
    }
    if layout == Layout::SingleFile {
        return Ok(Update::Rebuild);
    }
    Ok(Update::Changed(Changes { layout, files, changed, previous: restamped, report, options: options.clone() }))
}

impl Changes {
    /// How many files changed.
    pub fn files(&self) -> usize {
        self.changed.len()
    }

    /// Parses the changed files and puts them into `document` (the one
    /// the previous sources describe, whose anchors and links `links`
    /// holds: [`SourceBytes::links`]) in place of what they held, then
    /// resolves every link of the corpus again. Returns what a full ingest
    /// would have reported, and the sources to keep; `None`, changing
    /// nothing, when the document lacks a changed file's block or `links`
    /// does not fit.
    pub fn apply(self, document: &mut Document, links: &[u8]) -> Option<(IngestReport, Sources)> {
        let Changes { layout, files, changed, mut previous, mut report, options } = self;
        if changed.iter().any(|(index, ..)| !document.contains(file_block_id(&files[*index].rel_path)))
            || !previous.read_links(links)
        {
            return None;
        }
        let now = ucpkit_core::now_ms();
        let parsed: Vec<(usize, ParsedFile, Seen)> = changed
            .into_par_iter()
            .map(|(index, text, stamp)| {
                let parsed = parse_file(&files[index], &text, layout, &options, now);
                (index, parsed, (content_hash(&text), stamp))
            })
            .collect();
        let Sources { source, tree, files: mut records, .. } = previous;
        let mut fresh = vec![false; files.len()];
        for (index, mut parsed, hash) in parsed {
            let file = &files[index];
            let notes = parsed.notes.iter().map(|(kind, n)| Warning::new(*kind, &file.rel_path, n));
            report.warnings.extend(notes);
            let ids = replace_file(document, file, &mut parsed, now);
            records[index] = FileRecord::read(&file.rel_path, hash, &parsed, &ids);
            fresh[index] = true;
        }
        link_corpus(document, &files, &records, layout, &fresh, &mut report);
        document.metadata.modified_ms = now;
        report.blocks = document.len();
        report.tokens = document.blocks().map(|b| u64::from(b.metadata.tokens.unwrap_or(0))).sum();
        Some((report, Sources { format: INGEST_FORMAT, source, tree, files: records }))
    }
}

/// Resolves the links of every file read (`records`, beside `files`)
/// against all their anchors, in file order, and sets each linking block's
/// `links_to` edges (see [`link_files`]); links to URLs are noted on the
/// blocks of files marked `fresh`. Code references become edges too (see
/// [`link_code`]). Counts both in `report`.
pub(crate) fn link_corpus(
    document: &mut Document,
    files: &[SourceFile],
    records: &[FileRecord],
    layout: Layout,
    fresh: &[bool],
    report: &mut IngestReport,
) {
    let mut targets = LinkTargets::default();
    let mut links = Vec::new();
    for ((file, record), &fresh) in files.iter().zip(records).zip(fresh) {
        if record.hash.is_none() {
            continue;
        }
        let scope = scope_of(file, layout);
        let id = match layout {
            Layout::SingleFile => BlockId::ROOT,
            Layout::Tree => file_block_id(&file.rel_path),
        };
        targets.add_file(scope, id);
        for (anchor, id) in &record.targets.anchors {
            targets.add_anchor(scope, anchor, *id);
        }
        links.push(FileLinks { path: &file.rel_path, scope, links: &record.targets.links, fresh });
    }
    report.links = link_files(document, &targets, &links, &mut report.warnings);
    if layout == Layout::Tree {
        let code: Vec<(&str, &FileCode<BlockId>)> = files
            .iter()
            .zip(records)
            .filter_map(|(file, record)| Some((file.rel_path.as_str(), record.targets.code.as_ref()?)))
            .collect();
        report.code = link_code(document, &code);
    }
}

/// Puts a file's new blocks under its block in place of the old ones, and
/// its block's metadata when that changed; returns the new blocks' ids.
fn replace_file(document: &mut Document, file: &SourceFile, parsed: &mut ParsedFile, now: i64) -> Vec<BlockId> {
    let id = file_block_id(&file.rel_path);
    for child in document.children(id).to_vec() {
        // Listed just now, and never the root: the removal cannot fail.
        let _ = document.remove_block(child, RemoveMode::Cascade);
    }
    let metadata = file_block(file, parsed, now).metadata;
    let timeless = |m: &Metadata| Metadata { timestamps: Timestamps::default(), ..m.clone() };
    if document.get(id).is_some_and(|block| timeless(&block.metadata) != timeless(&metadata)) {
        if let Some(block) = document.get_mut(id) {
            block.metadata = metadata;
        }
    }
    place_blocks(document, id, parsed)
}
