//! Finding and reading source files: the corpus walk (gitignore-aware,
//! deterministic order, symlinks kept inside the corpus), file kinds, and
//! the checks that turn bad files into counted warnings.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::report::{Warning, WarningKind};

/// How a file is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SourceKind {
    /// CommonMark / GFM.
    Markdown,
    /// HTML pages.
    Html,
    /// Plain text, split into paragraphs.
    Text,
    /// Source code or configuration, kept whole as one code block.
    Code(&'static str),
}

impl SourceKind {
    /// The kind of a file, from its extension.
    pub(crate) fn of(path: &Path) -> Option<SourceKind> {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        let Some(ext) = ext else {
            let name = path.file_name()?.to_str()?;
            return matches!(name, "README" | "LICENSE" | "CHANGELOG" | "AUTHORS" | "NOTICE" | "COPYING")
                .then_some(SourceKind::Text);
        };
        Some(match ext.as_str() {
            "md" | "markdown" | "mdown" | "mkd" | "mdx" => SourceKind::Markdown,
            "html" | "htm" | "xhtml" => SourceKind::Html,
            "txt" | "text" | "rst" | "adoc" => SourceKind::Text,
            other => SourceKind::Code(code_language(other)?),
        })
    }
}

/// Language names of source and configuration files we keep as code.
fn code_language(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "js" | "mjs" | "cjs" => "javascript",
        "ts" | "mts" | "cts" => "typescript",
        "jsx" => "jsx",
        "tsx" => "tsx",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "cpp",
        "cs" => "csharp",
        "rb" => "ruby",
        "php" => "php",
        "swift" => "swift",
        "scala" => "scala",
        "sh" | "bash" | "zsh" => "bash",
        "sql" => "sql",
        "toml" => "toml",
        "yaml" | "yml" => "yaml",
        "json" => "json",
        "css" => "css",
        "lua" => "lua",
        "zig" => "zig",
        "hs" => "haskell",
        "ex" | "exs" => "elixir",
        _ => return None,
    })
}

/// One file to ingest.
#[derive(Debug, Clone)]
pub(crate) struct SourceFile {
    /// Path relative to the corpus, `/`-separated (the block id scope).
    pub(crate) rel_path: String,
    /// Where to read it.
    pub(crate) path: PathBuf,
    /// How to parse it.
    pub(crate) kind: SourceKind,
}

/// Lists the files of a folder in a deterministic order (by name, depth
/// first), honouring `.gitignore`/`.ignore` and skipping hidden entries.
/// Symlinks, to files or to folders, are followed only while their real
/// path stays inside the folder's real path; one that leaves it is skipped
/// with a warning and a folder behind it is never entered.
pub(crate) fn walk_folder(root: &Path, prefix: &str, warnings: &mut Vec<Warning>) -> Vec<SourceFile> {
    let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let escapes: Arc<Mutex<Vec<(PathBuf, bool)>>> = Arc::default();
    let walker = {
        let escapes = Arc::clone(&escapes);
        ignore::WalkBuilder::new(root)
            .follow_links(true)
            .require_git(false)
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(move |entry| stays_inside(entry, &canonical_root, &escapes))
            .build()
    };
    let mut files = Vec::new();
    let mut kept: HashSet<PathBuf> = HashSet::new();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                warnings.push(walk_warning(&err, root, prefix));
                continue;
            }
        };
        kept.insert(entry.path().to_path_buf());
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let rel = relative(path, root, prefix);
        match SourceKind::of(path) {
            Some(kind) => files.push(SourceFile { rel_path: rel, path: path.to_path_buf(), kind }),
            None if looks_binary(path) => {
                warnings.push(Warning::new(WarningKind::Binary, &rel, "binary file; skipped"));
            }
            None => warnings.push(Warning::new(WarningKind::Unsupported, &rel, "unsupported file type; skipped")),
        }
    }
    let mut escapes = std::mem::take(&mut *escapes.lock().unwrap_or_else(|e| e.into_inner()));
    escapes.sort();
    for (path, is_dir) in escapes {
        let what = if is_dir { "folder" } else { "file" };
        let message = format!("symlink to a {what} outside the corpus; skipped");
        warnings.push(Warning::new(WarningKind::OutsideCorpus, relative(&path, root, prefix), message));
    }
    count_ignored(root, prefix, &kept, warnings);
    files
}

/// Whether the walk may yield (and, for a folder, enter) `entry`. Only a
/// symlink can lead out: every other entry lies inside its parent, which
/// was checked before it was entered. A link that cannot be resolved is
/// let through for the walker to report as broken.
fn stays_inside(entry: &ignore::DirEntry, canonical_root: &Path, escapes: &Mutex<Vec<(PathBuf, bool)>>) -> bool {
    if !entry.path_is_symlink() {
        return true;
    }
    match entry.path().canonicalize() {
        Ok(target) if !target.starts_with(canonical_root) => {
            let is_dir = target.is_dir();
            escapes.lock().unwrap_or_else(|e| e.into_inner()).push((entry.path().to_path_buf(), is_dir));
            false
        }
        _ => true,
    }
}

/// Warns once for every file or folder that `.gitignore`/`.ignore` rules
/// kept out of the walk. Only the kept folders are read again (names only),
/// so an ignored `node_modules/` costs one warning and no descent.
fn count_ignored(root: &Path, prefix: &str, kept: &HashSet<PathBuf>, warnings: &mut Vec<Warning>) {
    let mut dirs: Vec<&PathBuf> = kept.iter().filter(|p| p.is_dir()).collect();
    dirs.sort();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut skipped: Vec<(PathBuf, bool)> = entries
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
            .filter(|e| !kept.contains(&e.path()))
            .map(|e| (e.path(), e.file_type().is_ok_and(|t| t.is_dir())))
            .collect();
        skipped.sort();
        for (path, is_dir) in skipped {
            let what = if is_dir { "folder" } else { "file" };
            let message = format!("{what} ignored by .gitignore/.ignore rules; skipped");
            warnings.push(Warning::new(WarningKind::Ignored, relative(&path, root, prefix), message));
        }
    }
}

/// A walk error as a warning about a path inside the corpus.
fn walk_warning(err: &ignore::Error, root: &Path, prefix: &str) -> Warning {
    let path = err_path(err).map(|p| relative(p, root, prefix)).unwrap_or_default();
    if is_loop(err) {
        return Warning::new(WarningKind::Walk, path, "symlink loop (points to a folder above it); skipped");
    }
    match err.io_error() {
        Some(io) if io.kind() == std::io::ErrorKind::NotFound => {
            Warning::new(WarningKind::Unreadable, path, "cannot read: broken symlink or vanished entry; skipped")
        }
        Some(io) => Warning::new(WarningKind::Unreadable, path, format!("cannot read: {io}; skipped")),
        None => Warning::new(WarningKind::Walk, path, format!("{err}; skipped")),
    }
}

fn err_path(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => err_path(err),
        ignore::Error::Loop { child, .. } => Some(child),
        _ => None,
    }
}

fn is_loop(err: &ignore::Error) -> bool {
    match err {
        ignore::Error::Loop { .. } => true,
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => is_loop(err),
        _ => false,
    }
}

fn relative(path: &Path, root: &Path, prefix: &str) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let rel: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let rel = rel.join("/");
    match (prefix.is_empty(), rel.is_empty()) {
        (true, _) => rel,
        (false, true) => prefix.to_owned(),
        (false, false) => format!("{prefix}/{rel}"),
    }
}

/// Whether the first 8 KiB of a file hold a NUL byte.
fn looks_binary(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 8192];
    std::fs::File::open(path).and_then(|mut f| f.read(&mut head)).is_ok_and(|n| head[..n].contains(&0))
}

/// Reads a file as UTF-8 text, refusing binary, oversized and invalid
/// files with a warning that names the problem.
pub(crate) fn read_text(file: &SourceFile, max_bytes: u64) -> Result<String, Warning> {
    let rel = &file.rel_path;
    let meta = std::fs::metadata(&file.path).map_err(|e| io_warning(rel, &e))?;
    if meta.len() > max_bytes {
        return Err(too_large(rel, meta.len(), max_bytes));
    }
    let bytes = std::fs::read(&file.path).map_err(|e| io_warning(rel, &e))?;
    checked_text(rel, bytes, max_bytes)
}

fn too_large(rel: &str, bytes: u64, max_bytes: u64) -> Warning {
    let message = format!("{bytes} bytes is over the {max_bytes}-byte limit (--max-file-size); skipped");
    Warning::new(WarningKind::TooLarge, rel, message)
}

/// Most `/`-separated components in a path given with its text.
pub(crate) const MAX_PATH_COMPONENTS: usize = 64;
/// Most bytes in a path given with its text.
pub(crate) const MAX_PATH_BYTES: usize = 4096;

/// A path given with its text (not read from disk) as the document's
/// relative path: empty and `.` components dropped, so `./a//b.md` is
/// `a/b.md`; refused when it is empty, climbs out with `..`, holds a
/// control character, or is longer or deeper than a folder walk meets.
pub(crate) fn text_path(path: &str) -> Result<String, String> {
    if path.len() > MAX_PATH_BYTES {
        return Err(format!("the path has {} bytes; at most {MAX_PATH_BYTES} are allowed", path.len()));
    }
    if path.chars().any(char::is_control) {
        return Err("the path holds a control character".into());
    }
    let components: Vec<&str> = path.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    if components.contains(&"..") {
        return Err("the path climbs out with `..`".into());
    }
    if components.len() > MAX_PATH_COMPONENTS {
        return Err(format!("the path has {} components; at most {MAX_PATH_COMPONENTS} are allowed", components.len()));
    }
    if components.is_empty() {
        return Err("the path names no file".into());
    }
    Ok(components.join("/"))
}

/// A file's bytes as UTF-8 text without a byte-order mark, refusing
/// binary, oversized and invalid ones with a warning that names the
/// problem.
pub(crate) fn checked_text(rel: &str, bytes: Vec<u8>, max_bytes: u64) -> Result<String, Warning> {
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(rel, bytes.len() as u64, max_bytes));
    }
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Err(Warning::new(WarningKind::Binary, rel, "binary file; skipped"));
    }
    let mut text = String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        Warning::new(WarningKind::NotUtf8, rel, format!("not valid UTF-8 (first bad byte at offset {offset}); skipped"))
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..3);
    }
    Ok(text)
}

fn io_warning(rel: &str, err: &std::io::Error) -> Warning {
    let kind = match err.kind() {
        std::io::ErrorKind::NotFound => WarningKind::Vanished,
        _ => WarningKind::Unreadable,
    };
    let what = match err.kind() {
        std::io::ErrorKind::NotFound => "disappeared before it could be read".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => err.to_string(),
    };
    Warning::new(kind, rel, format!("cannot read: {what}; skipped"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_extensions() {
        assert_eq!(SourceKind::of(Path::new("a/B.MD")), Some(SourceKind::Markdown));
        assert_eq!(SourceKind::of(Path::new("x.htm")), Some(SourceKind::Html));
        assert_eq!(SourceKind::of(Path::new("src/lib.rs")), Some(SourceKind::Code("rust")));
        assert_eq!(SourceKind::of(Path::new("LICENSE")), Some(SourceKind::Text));
        assert_eq!(SourceKind::of(Path::new("photo.png")), None);
    }

    #[test]
    fn prose_files_are_told_from_programs() {
        for prose in ["guide/intro.MD", "pages/widgets.html", "notes.txt", "README"] {
            assert!(crate::reads_as_prose(Path::new(prose)), "{prose}");
        }
        for other in ["app/models/shapes.py", "deploy.sh", "config.yaml", "photo.png", "Makefile"] {
            assert!(!crate::reads_as_prose(Path::new(other)), "{other}");
        }
    }

    #[test]
    fn text_paths_are_normalized_or_refused() {
        assert_eq!(text_path("./docs//api/./fs.md").unwrap(), "docs/api/fs.md");
        assert_eq!(text_path("/guide.md").unwrap(), "guide.md");
        for (bad, reason) in
            [("", "names no file"), ("./", "names no file"), ("a/../../etc/passwd", "`..`"), ("a\nb.md", "control")]
        {
            assert!(text_path(bad).unwrap_err().contains(reason), "{bad:?}");
        }
        let deep = "d/".repeat(MAX_PATH_COMPONENTS) + "x.md";
        assert!(text_path(&deep).unwrap_err().contains("components"));
        assert!(text_path(&"a".repeat(MAX_PATH_BYTES + 1)).unwrap_err().contains("bytes"));
        let deepest = "d/".repeat(MAX_PATH_COMPONENTS - 1) + "x.md";
        assert_eq!(text_path(&deepest).unwrap(), deepest);
    }

    #[test]
    fn bad_files_become_warnings() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            SourceFile { rel_path: name.to_owned(), path, kind: SourceKind::Markdown }
        };
        let bad = file("bad.md", b"ok \xff\xfe");
        assert_eq!(read_text(&bad, 1 << 20).unwrap_err().kind, WarningKind::NotUtf8);
        let bin = file("bin.md", b"a\0b");
        assert_eq!(read_text(&bin, 1 << 20).unwrap_err().kind, WarningKind::Binary);
        let big = file("big.md", &[b'a'; 100]);
        assert_eq!(read_text(&big, 10).unwrap_err().kind, WarningKind::TooLarge);
        let gone = file("gone.md", b"x");
        std::fs::remove_file(&gone.path).unwrap();
        assert_eq!(read_text(&gone, 1 << 20).unwrap_err().kind, WarningKind::Vanished);
        let bom = file("bom.md", "\u{feff}# T".as_bytes());
        assert_eq!(read_text(&bom, 1 << 20).unwrap(), "# T");
    }
}
