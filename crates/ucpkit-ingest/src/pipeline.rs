//! The ingest pipeline: list sources → read and parse them in parallel →
//! count tokens → assemble one document (folders and files as blocks) →
//! resolve links into edges.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use ucpkit_core::{Block, BlockId, Content, Document, Metadata, Role, SourceLocation, Timestamps};

use crate::links::{link_files, FileLinks, LinkTargets};
use crate::markdown::LineIndex;
use crate::reingest::{link_corpus, FileRecord, Seen, Sources, Stamp};
use crate::report::{IngestReport, Warning, WarningKind};
use crate::section::{ParsedFile, SectionBuilder};
use crate::source::{checked_text, read_text, text_path, walk_folder, SourceFile, SourceKind};
use crate::{IngestError, IngestOptions, Ingested, Progress};

/// Where the files of an ingest run sit in the document.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// One file: its blocks hang directly under the root.
    SingleFile,
    /// Folders and files are blocks; content hangs under file blocks.
    Tree,
}

/// Runs the whole pipeline over `paths`.
pub(crate) fn ingest(
    paths: &[PathBuf],
    name: &str,
    options: &IngestOptions,
    progress: &dyn Progress,
) -> Result<Ingested, IngestError> {
    let mut warnings = Vec::new();
    let (layout, files) = list_sources(paths, &mut warnings)?;
    let corpus = Corpus {
        name,
        layout,
        files,
        source: source_names(paths),
        title: paths.first().and_then(|p| display_name(p)),
        first: paths[0].clone(),
    };
    let read = |file: &SourceFile| {
        let stamp = Stamp::of(&file.path);
        Ok((read_text(file, options.max_file_size)?, stamp))
    };
    assemble(corpus, read, warnings, options, progress)
}

/// Runs the pipeline over files held in memory, `(path, bytes)`: one file
/// gives a document as one file on disk does, several a tree of folders
/// and files as a folder does (in the order a folder walk takes: by path
/// component), with the same blocks and ids.
pub(crate) fn ingest_texts(
    texts: &[(String, Vec<u8>)],
    name: &str,
    options: &IngestOptions,
) -> Result<Ingested, IngestError> {
    let Some((first, _)) = texts.first() else { return Err(IngestError::NoInput) };
    let layout = if texts.len() == 1 { Layout::SingleFile } else { Layout::Tree };
    let mut warnings = Vec::new();
    let mut files = Vec::with_capacity(texts.len());
    let mut seen: HashMap<String, &str> = HashMap::new();
    for (path, _) in texts {
        let rel_path = text_path(path).map_err(|reason| IngestError::Unusable { path: PathBuf::from(path), reason })?;
        if let Some(other) = seen.insert(rel_path.clone(), path) {
            return Err(IngestError::NameClash { first: PathBuf::from(other), second: PathBuf::from(path) });
        }
        match SourceKind::of(Path::new(&rel_path)) {
            Some(kind) => files.push(SourceFile { rel_path, path: PathBuf::from(path), kind }),
            None if layout == Layout::SingleFile => {
                return Err(IngestError::Unusable {
                    path: PathBuf::from(path),
                    reason: "unsupported file type (expected markdown, HTML, text or source code)".into(),
                })
            }
            None => warnings.push(Warning::new(WarningKind::Unsupported, rel_path, "unsupported file type; skipped")),
        }
    }
    files.sort_by(|a, b| a.rel_path.split('/').cmp(b.rel_path.split('/')));
    let corpus = Corpus {
        name,
        layout,
        files,
        source: texts.iter().map(|(path, _)| path.as_str()).collect::<Vec<_>>().join(", "),
        title: Some(name.to_owned()),
        first: PathBuf::from(first),
    };
    let bytes: HashMap<&str, &[u8]> = texts.iter().map(|(path, bytes)| (path.as_str(), bytes.as_slice())).collect();
    let read = |file: &SourceFile| {
        let bytes = file.path.to_str().and_then(|path| bytes.get(path)).copied().unwrap_or_default();
        Ok((checked_text(&file.rel_path, bytes.to_vec(), options.max_file_size)?, None))
    };
    assemble(corpus, read, warnings, options, &())
}

/// The files of one ingest run and what the document says of them.
struct Corpus<'a> {
    name: &'a str,
    layout: Layout,
    files: Vec<SourceFile>,
    /// The document's `source`: the paths given.
    source: String,
    /// The document's title when it is a tree of files.
    title: Option<String>,
    /// The input named when a lone file cannot be used.
    first: PathBuf,
}

/// Reads (with `read`) and parses every file in parallel, then assembles
/// one document and resolves its links.
fn assemble(
    corpus: Corpus<'_>,
    read: impl Fn(&SourceFile) -> Result<(String, Option<Stamp>), Warning> + Sync,
    warnings: Vec<Warning>,
    options: &IngestOptions,
    progress: &dyn Progress,
) -> Result<Ingested, IngestError> {
    let Corpus { name, layout, files, source, title, first } = corpus;
    let mut report = IngestReport { warnings, ..IngestReport::default() };
    progress.files_found(files.len());
    let now = ucpkit_core::now_ms();
    let parsed: Vec<Result<(ParsedFile, u64, Seen), Warning>> = files
        .par_iter()
        .map(|file| {
            let (text, stamp) = read(file)?;
            let parsed = parse_file(file, &text, layout, options, now);
            progress.file_done(&file.rel_path, text.len() as u64);
            Ok((parsed, text.len() as u64, (content_hash(&text), stamp)))
        })
        .collect();

    let mut document = Document::new(name);
    document.metadata.created_ms = now;
    document.metadata.modified_ms = now;
    document.metadata.tokenizer = Some(options.tokenizer.name().to_owned());
    document.metadata.source = Some(source.clone());
    let mut records: Vec<FileRecord> = Vec::with_capacity(files.len());
    let mut folders = FolderBlocks::default();
    for (file, result) in files.iter().zip(parsed) {
        let (mut parsed, bytes, hash) = match result {
            Ok(ok) => ok,
            Err(warning) if matches!(layout, Layout::SingleFile) => {
                let reason = warning.message.trim_end_matches("; skipped").to_owned();
                return Err(IngestError::Unusable { path: first, reason });
            }
            Err(warning) => {
                report.warnings.push(warning);
                records.push(FileRecord::skipped(&file.rel_path));
                continue;
            }
        };
        report.files += 1;
        report.bytes += bytes;
        report.warnings.extend(parsed.notes.iter().map(|(kind, n)| Warning::new(*kind, &file.rel_path, n)));
        let parent = match layout {
            Layout::SingleFile => {
                document.metadata.title = parsed.title.clone().or_else(|| Some(file.rel_path.clone()));
                copy_front_matter(&parsed, &mut document.metadata.custom);
                BlockId::ROOT
            }
            Layout::Tree => {
                let dir = folders.ensure(&mut document, parent_dir(&file.rel_path), now);
                insert(&mut document, dir, file_block(file, &parsed, now))
            }
        };
        let ids = place_blocks(&mut document, parent, &mut parsed);
        records.push(FileRecord::read(&file.rel_path, hash, &parsed, &ids));
    }
    if matches!(layout, Layout::Tree) {
        document.metadata.title = title;
    }
    let fresh = vec![true; files.len()];
    link_corpus(&mut document, &files, &records, layout, &fresh, &mut report);
    report.blocks = document.len();
    report.tokens = document.blocks().map(|b| u64::from(b.metadata.tokens.unwrap_or(0))).sum();
    let sources = Sources::new(source, layout, records);
    Ok(Ingested { document, report, sources })
}

/// What the paths given are called in the document's `source`.
pub(crate) fn source_names(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// The scope of a file's block ids and links: its corpus path, or nothing
/// for a single-file document.
pub(crate) fn scope_of(file: &SourceFile, layout: Layout) -> &str {
    match layout {
        Layout::SingleFile => "",
        Layout::Tree => file.rel_path.as_str(),
    }
}

/// Parses a file's text and counts its blocks' tokens.
pub(crate) fn parse_file(
    file: &SourceFile,
    text: &str,
    layout: Layout,
    options: &IngestOptions,
    now: i64,
) -> ParsedFile {
    let mut parsed = parse_source(file.kind, text, scope_of(file, layout), &file.rel_path, now);
    count_tokens(&mut parsed, options);
    parsed
}

/// What tells one version of a file's text from another.
pub(crate) fn content_hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

/// Parses one in-memory source into a block tree.
pub(crate) fn parse_source(kind: SourceKind, text: &str, scope: &str, file: &str, now: i64) -> ParsedFile {
    let mut builder = SectionBuilder::new(scope.into(), Some(file.into()), now);
    match kind {
        SourceKind::Markdown => crate::markdown::parse_markdown(text, &mut builder),
        SourceKind::Html => crate::html::parse_html(text, &mut builder),
        SourceKind::Text => parse_plain(text, &mut builder),
        SourceKind::Code(language) => match ucpkit_code::Language::of_name(language) {
            Some(language) => crate::code::parse_code(language, text, &mut builder),
            None => {
                let last = LineIndex::new(text).line(text.len().saturating_sub(1));
                builder.push(Content::code(Some(language.to_owned()), text), Role::Code, (1, last));
            }
        },
    }
    builder.finish()
}

/// Plain text: one paragraph block per blank-line separated chunk.
fn parse_plain(text: &str, builder: &mut SectionBuilder) {
    let mut chunk: Vec<&str> = Vec::new();
    let mut start_line = 0u32;
    let flush = |chunk: &mut Vec<&str>, lines: (u32, u32), builder: &mut SectionBuilder| {
        if !chunk.is_empty() {
            builder.push(Content::plain(chunk.join("\n")), Role::Paragraph, lines);
            chunk.clear();
        }
    };
    let mut line_no = 0u32;
    for line in text.lines() {
        line_no += 1;
        if line.trim().is_empty() {
            flush(&mut chunk, (start_line, line_no - 1), builder);
        } else {
            if chunk.is_empty() {
                start_line = line_no;
            }
            chunk.push(line);
        }
    }
    flush(&mut chunk, (start_line, line_no), builder);
}

/// Counts every block's tokens, in parallel.
pub(crate) fn count_tokens(parsed: &mut ParsedFile, options: &IngestOptions) {
    let tokenizer = options.tokenizer.as_ref();
    parsed.blocks.par_iter_mut().with_min_len(64).for_each(|local| {
        let tokens = tokenizer.count(&local.block.to_markdown());
        local.block.metadata.tokens = Some(u32::try_from(tokens).unwrap_or(u32::MAX));
    });
}

/// Moves a file's blocks into the document under `parent`; returns their
/// ids by local index (links and anchors stay in `parsed` to be resolved).
pub(crate) fn place_blocks(document: &mut Document, parent: BlockId, parsed: &mut ParsedFile) -> Vec<BlockId> {
    let blocks = std::mem::take(&mut parsed.blocks);
    let mut ids = Vec::with_capacity(blocks.len());
    for local in blocks {
        let under = local.parent.map_or(parent, |i| ids[i]);
        ids.push(insert(document, under, local.block));
    }
    ids
}

/// Appends a block whose id is unique by construction (scope + occurrence).
fn insert(document: &mut Document, parent: BlockId, block: Block) -> BlockId {
    let id = block.id;
    match document.append_child(parent, block) {
        Ok(id) => id,
        // Only a 96-bit hash collision gets here; keep the first block.
        Err(_) => id,
    }
}

/// The block of a file of a folder corpus.
pub(crate) fn file_block(file: &SourceFile, parsed: &ParsedFile, now: i64) -> Block {
    let mut metadata = Metadata::with_role(Role::File);
    metadata.tokens = Some(0);
    metadata.label = Some(file.rel_path.clone());
    metadata.timestamps = Timestamps::at(now);
    let last_line = parsed.blocks.iter().filter_map(|b| b.block.metadata.source.as_ref()).map(|s| s.end_line).max();
    metadata.source =
        Some(SourceLocation { file: file.rel_path.as_str().into(), start_line: 1, end_line: last_line.unwrap_or(1) });
    if let Some(title) = &parsed.title {
        metadata.custom.insert("title".into(), title.clone().into());
    }
    if let Some(code) = &parsed.code {
        metadata.custom.insert("language".into(), code.language.name().into());
    }
    copy_front_matter(parsed, &mut metadata.custom);
    Block::new(file_block_id(&file.rel_path), Content::Composite, metadata)
}

/// The id of the block of the file at corpus path `path`.
pub(crate) fn file_block_id(path: &str) -> BlockId {
    Block::derive_id(&Content::Composite, Some(&Role::File), path, 0)
}

/// Puts a file's front matter (parsed, and as written for export) into the
/// custom metadata of the document or file block that represents it.
fn copy_front_matter(parsed: &ParsedFile, custom: &mut BTreeMap<String, serde_json::Value>) {
    if let Some((value, source)) = &parsed.front_matter {
        custom.insert("front_matter".into(), value.clone());
        custom.insert("front_matter_source".into(), source.clone().into());
    }
}

/// Directory blocks, created on first use in walk order.
#[derive(Default)]
struct FolderBlocks {
    by_path: HashMap<String, BlockId>,
}

impl FolderBlocks {
    fn ensure(&mut self, document: &mut Document, dir: &str, now: i64) -> BlockId {
        if dir.is_empty() {
            return BlockId::ROOT;
        }
        if let Some(id) = self.by_path.get(dir) {
            return *id;
        }
        let parent = self.ensure(document, parent_dir(dir), now);
        let mut metadata = Metadata::with_role(Role::Directory);
        metadata.tokens = Some(0);
        metadata.label = Some(dir.to_owned());
        metadata.timestamps = Timestamps::at(now);
        metadata.source = Some(SourceLocation { file: Arc::from(dir), start_line: 0, end_line: 0 });
        let id = Block::derive_id(&Content::Composite, Some(&Role::Directory), dir, 0);
        let id = insert(document, parent, Block::new(id, Content::Composite, metadata));
        self.by_path.insert(dir.to_owned(), id);
        id
    }
}

fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// Checks the inputs and lists the files to read.
pub(crate) fn list_sources(
    paths: &[PathBuf],
    warnings: &mut Vec<Warning>,
) -> Result<(Layout, Vec<SourceFile>), IngestError> {
    if paths.is_empty() {
        return Err(IngestError::NoInput);
    }
    let mut files = Vec::new();
    let mut names: HashMap<String, &Path> = HashMap::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|source| IngestError::Io { path: path.clone(), source })?;
        let prefix = if paths.len() == 1 { String::new() } else { display_name(path).unwrap_or_default() };
        if let Some(other) = names.insert(prefix.clone(), path).filter(|_| !prefix.is_empty()) {
            return Err(IngestError::NameClash { first: other.to_path_buf(), second: path.clone() });
        }
        if meta.is_dir() {
            files.extend(walk_folder(path, &prefix, warnings));
        } else {
            let kind = SourceKind::of(path).ok_or_else(|| IngestError::Unusable {
                path: path.clone(),
                reason: "unsupported file type (expected markdown, HTML, text or source code)".into(),
            })?;
            let rel_path = if prefix.is_empty() { display_name(path).unwrap_or_default() } else { prefix };
            files.push(SourceFile { rel_path, path: path.clone(), kind });
        }
    }
    let single = paths.len() == 1 && std::fs::metadata(&paths[0]).is_ok_and(|m| m.is_file());
    Ok((if single { Layout::SingleFile } else { Layout::Tree }, files))
}

/// The last path component, as a name for documents and prefixes.
pub(crate) fn display_name(path: &Path) -> Option<String> {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    path.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// A document from one in-memory text of the given kind (tokens counted).
pub(crate) fn text_document(kind: SourceKind, name: &str, text: &str, options: &IngestOptions) -> Document {
    let mut parsed = parse_source(kind, text, "", name, ucpkit_core::now_ms());
    count_tokens(&mut parsed, options);
    let mut document = Document::new(name);
    document.metadata.tokenizer = Some(options.tokenizer.name().to_owned());
    document.metadata.title = parsed.title.clone();
    copy_front_matter(&parsed, &mut document.metadata.custom);
    let ids = place_blocks(&mut document, BlockId::ROOT, &mut parsed);
    let mut targets = LinkTargets::default();
    targets.add_file("", BlockId::ROOT);
    for (anchor, index) in &parsed.anchors {
        targets.add_anchor("", anchor, ids[*index]);
    }
    let links: Vec<(BlockId, String)> = parsed.links.iter().map(|l| (ids[l.block], l.dest.clone())).collect();
    let file = FileLinks { path: name, scope: "", links: &links, fresh: true };
    link_files(&mut document, &targets, &[file], &mut Vec::new());
    document
}
