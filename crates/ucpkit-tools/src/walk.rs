//! The file walk `grep`, `glob` and `ast_search` share: ripgrep's `ignore`
//! walker (`.gitignore`/`.ignore` honoured, hidden files skipped, links
//! not followed), and a parallel visit of its files.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use ignore::{WalkBuilder, WalkState};

/// A walker over `base` with the tools' rules.
pub(crate) fn walker(base: &Path) -> WalkBuilder {
    let mut walker = WalkBuilder::new(base);
    walker.hidden(true).threads(0);
    walker
}

/// Visits every file `walker` yields on all cores: `per_thread` makes each
/// thread's visitor (holding its own state), which returns `None` for a
/// file it skips and the file's findings otherwise. Gives all findings, in
/// no particular order, and how many files were searched.
pub(crate) fn search_files<T, V>(walker: &WalkBuilder, per_thread: impl Fn() -> V + Sync) -> (Vec<T>, usize)
where
    T: Send,
    V: FnMut(&Path) -> Option<Vec<T>> + Send,
{
    let found = Mutex::new(Vec::new());
    let searched = AtomicUsize::new(0);
    walker.build_parallel().run(|| {
        let mut visit = per_thread();
        let (found, searched) = (&found, &searched);
        Box::new(move |entry| {
            let Ok(entry) = entry else { return WalkState::Continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            if let Some(hits) = visit(entry.path()) {
                searched.fetch_add(1, Ordering::Relaxed);
                if !hits.is_empty() {
                    found.lock().unwrap_or_else(|e| e.into_inner()).extend(hits);
                }
            }
            WalkState::Continue
        })
    });
    (found.into_inner().unwrap_or_else(|e| e.into_inner()), searched.into_inner())
}
