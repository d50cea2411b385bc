//! What a repository tells the agents working in it, loaded when it is
//! relevant rather than stuffed into every prompt: rules (`AGENTS.md`,
//! with `CLAUDE.md` as an alias; see [`rules`]) and skills (`SKILL.md`
//! folders; see [`skills`]).
//!
//! Both are markdown on disk that link to more markdown. A link's target
//! is loaded when a task matches it: the task's terms, analyzed the way
//! search analyzes, found in the link's text (full weight) or in the
//! target's own text (half). Files are read through a cache keyed by path,
//! modification time and size, so a change on disk is noticed without
//! scanning the tree again.

pub mod rules;
pub mod skills;

/// Why guidance could not be read as asked.
#[derive(Debug, thiserror::Error)]
pub enum GuidanceError {
    /// A root or path that is not usable (not a folder, outside the root).
    #[error("{0}")]
    Path(String),
    /// A request that names what is not there (a skill, say).
    #[error("{0}")]
    Invalid(String),
}

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::SystemTime;

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

/// Share of a task's terms a link must match to be loaded.
pub const MATCH_SHARE: f64 = 0.2;

/// Most bytes of one guidance file read.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Bytes of text the cache holds before it starts over.
const CACHED_BYTES: usize = 64 * 1024 * 1024;

/// A file's text, with what it was read at.
type Cached = (SystemTime, u64, Arc<str>);

/// The cache, and the bytes of text it holds.
static FILES: LazyLock<Mutex<(HashMap<PathBuf, Cached>, usize)>> = LazyLock::new(|| Mutex::new((HashMap::new(), 0)));

/// What reading a guidance file gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GuidanceFile {
    /// Its text.
    Text(Arc<str>),
    /// No such file under the folder (or not a file, or it lies outside
    /// the folder once links are resolved).
    Missing,
    /// A file that is there but is not read, and why (too large, not text).
    Refused(String),
}

impl GuidanceFile {
    /// The text, when the file was read.
    pub(crate) fn text(self) -> Option<Arc<str>> {
        match self {
            GuidanceFile::Text(text) => Some(text),
            _ => None,
        }
    }
}

/// The file at `path`, from the cache when it has not changed on disk
/// since it was read. It is opened through a jail on the folder `within`
/// (`ucpkit_tools::Jail`): a symbolic link does not lead out of it, not even
/// one swapped in after the path was checked.
pub(crate) fn read_cached(within: &Path, path: &Path) -> GuidanceFile {
    let Ok(jail) = ucpkit_tools::Jail::new(within) else { return GuidanceFile::Missing };
    // Relative to the folder as given (the jail's root is its real path,
    // which a folder reached through a link does not start with).
    let asked = path.strip_prefix(within).unwrap_or(path);
    let Some(real) = asked.to_str().and_then(|p| jail.resolve(p).ok()) else { return GuidanceFile::Missing };
    let shown = jail.display(&real);
    let file = match jail.open(&real, &shown) {
        Ok(file) => file,
        Err(ucpkit_tools::ToolError::Io { source, .. }) => return GuidanceFile::Refused(source.to_string()),
        Err(_) => return GuidanceFile::Missing,
    };
    let Ok(meta) = file.metadata() else { return GuidanceFile::Missing };
    if meta.len() > MAX_FILE_BYTES {
        return GuidanceFile::Refused(format!(
            "{} KiB, over the {} KiB a rules or skill file may have",
            meta.len().div_ceil(1024),
            MAX_FILE_BYTES / 1024
        ));
    }
    let Ok(modified) = meta.modified() else { return GuidanceFile::Missing };
    let stamp = (modified, meta.len());
    let mut cache = FILES.lock().unwrap_or_else(|e| e.into_inner());
    let (files, bytes) = &mut *cache;
    if let Some((modified, len, text)) = files.get(&real) {
        if (*modified, *len) == stamp {
            return GuidanceFile::Text(Arc::clone(text));
        }
    }
    let mut text = String::new();
    if std::io::Read::read_to_string(&mut std::io::Read::take(file, MAX_FILE_BYTES), &mut text).is_err() {
        return GuidanceFile::Refused("not UTF-8 text".into());
    }
    let text: Arc<str> = text.into();
    if *bytes + text.len() > CACHED_BYTES {
        files.clear();
        *bytes = 0;
    }
    *bytes += text.len();
    if let Some((_, _, old)) = files.insert(real, (stamp.0, stamp.1, Arc::clone(&text))) {
        *bytes -= old.len();
    }
    GuidanceFile::Text(text)
}

/// A markdown link to a local file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Link {
    /// The link's text.
    pub text: String,
    /// The file it points to (resolved against the linking file's folder).
    pub target: PathBuf,
}

/// The links of `markdown` (a file in `dir`) to markdown files under
/// `root`; web links, anchors and links that leave `root` are left out.
pub(crate) fn local_links(markdown: &str, dir: &Path, root: &Path) -> Vec<Link> {
    let mut links: Vec<Link> = Vec::new();
    let mut open: Option<(String, String)> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::Link { dest_url, .. }) => open = Some((dest_url.to_string(), String::new())),
            Event::Text(text) | Event::Code(text) => {
                if let Some((_, label)) = &mut open {
                    label.push_str(&text);
                }
            }
            Event::End(TagEnd::Link) => {
                let Some((url, text)) = open.take() else { continue };
                let path = url.split('#').next().unwrap_or("");
                if path.is_empty() || path.contains("://") || path.starts_with("mailto:") || !path.ends_with(".md") {
                    continue;
                }
                let target = normalize(&dir.join(path));
                if target.starts_with(root) && !links.iter().any(|l| l.target == target) {
                    links.push(Link { text, target });
                }
            }
            _ => {}
        }
    }
    links
}

/// `path` with `.` and `..` resolved lexically (the file need not exist).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The folder guidance is found under, made absolute.
pub(crate) fn checked_root(root: &Path) -> Result<PathBuf, GuidanceError> {
    let absolute = std::path::absolute(root)
        .map_err(|e| GuidanceError::Path(format!("cannot resolve {}: {e}", root.display())))?;
    if !absolute.is_dir() {
        return Err(GuidanceError::Path(format!("{} is not a folder", root.display())));
    }
    Ok(normalize(&absolute))
}

/// How well a task (its analyzed terms) matches a link: the share of the
/// task's terms in the link's text (each counting 1) or only in the
/// target's text (each counting ½).
pub(crate) fn match_share(task: &[String], link_text: &str, target_text: &str) -> f64 {
    if task.is_empty() {
        return 0.0;
    }
    let in_link = ucpkit_analyzer::distinct_terms(link_text);
    let in_target = ucpkit_analyzer::distinct_terms(target_text);
    let weight: f64 = task
        .iter()
        .map(|term| {
            if in_link.binary_search(term).is_ok() {
                1.0
            } else if in_target.binary_search(term).is_ok() {
                0.5
            } else {
                0.0
            }
        })
        .sum();
    weight / task.len() as f64
}

/// `path` relative to `root`, with `/` between its parts.
pub(crate) fn relative(path: &Path, root: &Path) -> String {
    let shown = path.strip_prefix(root).unwrap_or(path);
    shown.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// Writes `text` at `path` under `root`, making the folders (for tests).
#[cfg(test)]
pub(crate) fn write_file(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("a path under the root")).expect("the folders are made");
    std::fs::write(path, text).expect("the file is written");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_links_keep_markdown_files_under_the_root() {
        let root = Path::new("/repo");
        let text = "See [Database *migrations*](docs/db.md#top), [web](https://x.org/a.md), \
                    [out](../../etc/x.md), [img](a.png), [again](./docs/db.md) and [`style`](style.md).";
        let links = local_links(text, &root.join("sub"), root);
        assert_eq!(
            links,
            [
                Link { text: "Database migrations".into(), target: "/repo/sub/docs/db.md".into() },
                Link { text: "style".into(), target: "/repo/sub/style.md".into() },
            ]
        );
    }

    #[test]
    fn a_task_matches_a_link_by_its_text_first() {
        let task = ucpkit_analyzer::distinct_terms("fix the flaky database migration test");
        let by_text = match_share(&task, "Database migrations", "How to write one.");
        let by_body = match_share(&task, "Style", "Tests must not be flaky.");
        assert!(by_text >= MATCH_SHARE && by_text > by_body, "{by_text} {by_body}");
        assert_eq!(match_share(&task, "Release process", "Tag and push."), 0.0);
        assert_eq!(match_share(&[], "anything", "at all"), 0.0);
    }

    #[test]
    fn a_changed_file_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("AGENTS.md");
        let text = |within: &Path, path: &Path| read_cached(within, path).text();
        std::fs::write(&path, "one").unwrap();
        assert_eq!(text(dir.path(), &path).as_deref(), Some("one"));
        std::fs::write(&path, "two, longer").unwrap();
        assert_eq!(text(dir.path(), &path).as_deref(), Some("two, longer"));
        assert_eq!(read_cached(dir.path(), &dir.path().join("missing.md")), GuidanceFile::Missing);
        // Not outside the folder, not even through a link.
        let inner = dir.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        assert!(text(&inner, &path).is_none());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&path, inner.join("AGENTS.md")).unwrap();
            assert!(text(&inner, &inner.join("AGENTS.md")).is_none());
        }
        // A folder reached through a link reads as the folder itself.
        #[cfg(unix)]
        {
            let link = dir.path().join("link");
            std::os::unix::fs::symlink(&inner, &link).unwrap();
            std::fs::write(inner.join("RULES.md"), "inner").unwrap();
            assert_eq!(text(&link, &link.join("RULES.md")).as_deref(), Some("inner"));
        }
        // Too large, or not text: said, not taken for absent.
        std::fs::write(&path, "x".repeat(MAX_FILE_BYTES as usize + 1)).unwrap();
        let refused = read_cached(dir.path(), &path);
        assert!(matches!(&refused, GuidanceFile::Refused(why) if why.contains("over the 1024 KiB")), "{refused:?}");
        std::fs::write(&path, b"caf\xe9").unwrap();
        assert_eq!(read_cached(dir.path(), &path), GuidanceFile::Refused("not UTF-8 text".into()));
    }
}
