//! `glob`: files whose path under a folder matches a pattern like
//! `src/**/*.rs`, honouring `.gitignore` and skipping hidden files, newest
//! first or by path, paged.

use std::time::SystemTime;

use globset::{GlobBuilder, GlobSetBuilder};
use serde::Serialize;

use crate::jail::Kind;
use crate::page::{paginate, shown_path, Entry, PageInfo, Paging};
use crate::walk::walker;
use crate::{ToolError, Tools};

/// How glob results are ordered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GlobOrder {
    /// Most recently modified first (then by path).
    #[default]
    Modified,
    /// By path.
    Path,
}

impl std::str::FromStr for GlobOrder {
    type Err = ToolError;

    fn from_str(s: &str) -> Result<Self, ToolError> {
        match s {
            "modified" | "mtime" => Ok(GlobOrder::Modified),
            "path" => Ok(GlobOrder::Path),
            other => Err(ToolError::Arguments(format!("sort {other:?} is not one of modified, path"))),
        }
    }
}

/// A glob call.
#[derive(Debug, Clone, Default)]
pub struct GlobRequest {
    /// The pattern, matched against paths relative to `path` (`*` stays
    /// inside a folder, `**` crosses folders).
    pub pattern: String,
    /// Folder to search, relative to the root (default: the root).
    pub path: Option<String>,
    /// The order of the results.
    pub order: GlobOrder,
    /// Which entries to return.
    pub paging: Paging,
}

/// A glob answer.
#[derive(Debug, Clone, Serialize)]
pub struct GlobResult {
    /// The paths of this page, relative to the root.
    pub paths: Vec<String>,
    /// Where the page sits.
    pub page: PageInfo,
    /// The compact text form.
    pub text: String,
}

impl Tools {
    /// Lists files matching a glob.
    pub fn glob(&self, request: &GlobRequest) -> Result<GlobResult, ToolError> {
        let base = self.jail.resolve(request.path.as_deref().unwrap_or("."))?;
        if self.jail.kind(&base) != Some(Kind::Folder) {
            return Err(ToolError::Arguments(format!("{} is not a folder", self.jail.display(&base))));
        }
        // Built as a set: a pattern whose matcher cannot be compiled (a huge
        // one) is an error here, where a lone glob's matcher would panic.
        let invalid = |e: globset::Error| ToolError::arguments(format!("pattern: {}", e.kind()));
        let one = GlobBuilder::new(&request.pattern).literal_separator(true).build().map_err(invalid)?;
        let glob = GlobSetBuilder::new().add(one).build().map_err(invalid)?;
        let mut found: Vec<(SystemTime, String)> = Vec::new();
        for entry in walker(&base).build().flatten() {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(relative) = entry.path().strip_prefix(&base) else { continue };
            if !glob.is_match(relative) {
                continue;
            }
            // Read through the jail: a folder on the way swapped for a link
            // since the walk listed it drops the entry.
            let Some(metadata) = self.jail.metadata(entry.path()).filter(|m| m.is_file()) else { continue };
            let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            found.push((modified, self.jail.display(entry.path())));
        }
        match request.order {
            GlobOrder::Modified => found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1))),
            GlobOrder::Path => found.sort_by(|a, b| a.1.cmp(&b.1)),
        }
        let entries: Vec<Entry> = found.iter().map(|(_, p)| Entry::plain(shown_path(p))).collect();
        let (mut text, page) = paginate(&entries, request.paging, self.max_tokens, &|| self.tokenizer(), "files");
        if page.total == 0 {
            text = "no files match\n".to_owned();
        }
        let paths = found.into_iter().skip(page.offset).take(page.shown).map(|(_, p)| p).collect();
        Ok(GlobResult { paths, page, text })
    }
}
