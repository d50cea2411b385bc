//! Rules: `AGENTS.md` files (`CLAUDE.md` read as the same) in three tiers.
//!
//! 1. **root**: the rules file at the workspace root, always loaded;
//! 2. **linked**: markdown files a loaded rules file links to, loaded when
//!    the task matches the link's text or the file's text;
//! 3. **nested**: rules files in the folders between the root and a path a
//!    file operation touches, loaded for that path (outermost first).
//!
//! Only the folders above the paths named are looked at, so a call costs
//! what it touches, never a scan of the tree; files come through the
//! guidance cache (a change on disk is read again).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use ucm_core::Tokenizer;

use super::{checked_root, local_links, match_share, normalize, read_cached, relative, MATCH_SHARE};
use crate::WorkspaceError;

/// The names a rules file goes by, in the order read.
pub const RULE_FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// Tokens of rules text returned when no budget is given.
pub const DEFAULT_RULES_BUDGET: usize = 4_000;

/// Which tier a rule was loaded by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// The workspace root's rules file: always.
    Root,
    /// A file a rules file links to, matched by the task.
    Linked,
    /// A rules file of a folder a path lies in.
    Nested,
}

/// One rules text that applies.
#[derive(Debug, Clone, Serialize)]
pub struct Rule {
    /// Its file, relative to the root.
    pub source: String,
    /// The tier that loaded it.
    pub tier: Tier,
    /// Why it applies.
    pub reason: String,
    /// Its tokens (o200k).
    pub tokens: usize,
    /// The file's text, verbatim.
    pub text: String,
}

/// The rules that apply to a task and the paths it touches.
#[derive(Debug, Clone, Serialize)]
pub struct Rules {
    /// What applies, root first, then nested (outermost first), then linked
    /// (best match first).
    pub rules: Vec<Rule>,
    /// Their tokens together.
    pub tokens: usize,
    /// Files that applied but did not fit in the budget.
    pub left_out: Vec<String>,
}

impl Rules {
    /// The rules as one text: each under a line naming its source.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for rule in &self.rules {
            out.push_str(&format!("§ {} ({})\n", rule.source, rule.reason));
            out.push_str(rule.text.trim_end());
            out.push_str("\n\n");
        }
        for source in &self.left_out {
            out.push_str(&format!("§ {source}: applies, left out (over the budget)\n"));
        }
        out
    }
}

/// What to find rules for.
#[derive(Debug, Clone, Default)]
pub struct RulesRequest {
    /// The task, matched against linked files (none: no linked file loads).
    pub task: Option<String>,
    /// Paths the task touches (relative to the root, or absolute under it).
    pub paths: Vec<PathBuf>,
    /// Most tokens of rules text (the root file is always whole).
    pub budget: Option<usize>,
}

/// The rules files of folder `dir` under `root`, with their text (one text
/// read under both names is kept once).
fn rule_files(root: &Path, dir: &Path) -> Vec<(PathBuf, Arc<str>)> {
    let mut found: Vec<(PathBuf, Arc<str>)> = Vec::new();
    for name in RULE_FILES {
        let path = dir.join(name);
        if let Some(text) = read_cached(root, &path) {
            if !found.iter().any(|(_, seen)| *seen == text) {
                found.push((path, text));
            }
        }
    }
    found
}

/// The folders from just below `root` down to the one holding `path`.
fn folders_between(root: &Path, path: &Path) -> Vec<PathBuf> {
    let start = if path.is_dir() { path } else { path.parent().unwrap_or(root) };
    let mut folders: Vec<PathBuf> =
        start.ancestors().take_while(|dir| *dir != root && dir.starts_with(root)).map(Path::to_path_buf).collect();
    folders.reverse();
    folders
}

/// The rules files of the folders between `root` (made absolute) and each
/// of `paths`, outermost first, each once, with why it applies.
fn nested_files(root: &Path, paths: &[PathBuf]) -> Result<Vec<(PathBuf, Arc<str>, String)>, WorkspaceError> {
    let mut found: Vec<(PathBuf, Arc<str>, String)> = Vec::new();
    for asked in paths {
        let path = normalize(&if asked.is_absolute() { asked.clone() } else { root.join(asked) });
        if !path.starts_with(root) {
            return Err(WorkspaceError::Path(format!("{} is outside {}", asked.display(), root.display())));
        }
        for dir in folders_between(root, &path) {
            for (file, text) in rule_files(root, &dir) {
                if !found.iter().any(|(seen, ..)| *seen == file) {
                    found.push((file, text, format!("applies to {}/", relative(&dir, root))));
                }
            }
        }
    }
    Ok(found)
}

/// The nested rules (tier 3 alone) for `paths` under `root`: what a file
/// operation brings with it, without the root file or linked ones.
pub fn nested_rules(root: &Path, paths: &[PathBuf], tokenizer: &dyn Tokenizer) -> Result<Vec<Rule>, WorkspaceError> {
    let root = checked_root(root)?;
    Ok(nested_files(&root, paths)?
        .into_iter()
        .map(|(path, text, reason)| Rule {
            source: relative(&path, &root),
            tier: Tier::Nested,
            reason,
            tokens: tokenizer.count(&text),
            text: text.to_string(),
        })
        .collect())
}

/// The rules under `root` that apply to `request`.
pub fn rules_for(root: &Path, request: &RulesRequest, tokenizer: &dyn Tokenizer) -> Result<Rules, WorkspaceError> {
    let root = checked_root(root)?;
    let budget = request.budget.unwrap_or(DEFAULT_RULES_BUDGET);
    let mut applies: Vec<(PathBuf, Arc<str>, Tier, String)> = Vec::new();
    for (path, text) in rule_files(&root, &root) {
        applies.push((path, text, Tier::Root, "workspace rules".into()));
    }
    for (file, text, reason) in nested_files(&root, &request.paths)? {
        if !applies.iter().any(|(seen, ..)| *seen == file) {
            applies.push((file, text, Tier::Nested, reason));
        }
    }
    // Linked files the task matches, best first.
    let task = request.task.as_deref().map(ucp_analyzer::distinct_terms).unwrap_or_default();
    let mut linked: Vec<(f64, PathBuf, Arc<str>, String)> = Vec::new();
    // Without a task no link matches: nothing linked is read.
    for (file, text, ..) in applies.iter().filter(|_| !task.is_empty()) {
        let dir = file.parent().unwrap_or(&root);
        for link in local_links(text, dir, &root) {
            if applies.iter().any(|(seen, ..)| *seen == link.target) || linked.iter().any(|l| l.1 == link.target) {
                continue;
            }
            let Some(target) = read_cached(&root, &link.target) else { continue };
            let share = match_share(&task, &link.text, &target);
            if share >= MATCH_SHARE {
                let reason = format!("the task matches [{}] in {}", link.text, relative(file, &root));
                linked.push((share, link.target, target, reason));
            }
        }
    }
    linked.sort_by(|a, b| b.0.total_cmp(&a.0));
    applies.extend(linked.into_iter().map(|(_, path, text, reason)| (path, text, Tier::Linked, reason)));

    let mut rules = Rules { rules: Vec::new(), tokens: 0, left_out: Vec::new() };
    for (path, text, tier, reason) in applies {
        let tokens = tokenizer.count(&text);
        let source = relative(&path, &root);
        if tier != Tier::Root && rules.tokens + tokens > budget {
            rules.left_out.push(source);
            continue;
        }
        rules.tokens += tokens;
        rules.rules.push(Rule { source, tier, reason, tokens, text: text.to_string() });
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guidance::write_file as write;
    use ucm_core::BpeTokenizer;

    fn sources(rules: &Rules) -> Vec<(&str, Tier)> {
        rules.rules.iter().map(|r| (r.source.as_str(), r.tier)).collect()
    }

    #[test]
    fn rules_load_by_tier_when_they_apply() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "AGENTS.md",
            "Run `cargo test`.\n\nSee [database migrations](docs/migrations.md) and [releases](docs/release.md).\n",
        );
        write(root, "docs/migrations.md", "Every migration is reversible.\n");
        write(root, "docs/release.md", "Tag, then push.\n");
        write(root, "crates/store/CLAUDE.md", "The store never rewrites a whole document.\n");
        write(root, "crates/store/src/lib.rs", "fn main() {}\n");
        let tokenizer = BpeTokenizer::default();

        // No task, no path: the root file alone.
        let plain = rules_for(root, &RulesRequest::default(), &tokenizer).unwrap();
        assert_eq!(sources(&plain), [("AGENTS.md", Tier::Root)]);
        assert!(plain.rules[0].text.starts_with("Run `cargo test`."), "verbatim");

        // A task that matches a link loads its file; a path loads the nested rules.
        let request = RulesRequest {
            task: Some("add a migration for the new column".into()),
            paths: vec!["crates/store/src/lib.rs".into()],
            budget: None,
        };
        let rules = rules_for(root, &request, &tokenizer).unwrap();
        assert_eq!(
            sources(&rules),
            [("AGENTS.md", Tier::Root), ("crates/store/CLAUDE.md", Tier::Nested), ("docs/migrations.md", Tier::Linked)]
        );
        assert_eq!(rules.tokens, rules.rules.iter().map(|r| r.tokens).sum::<usize>());
        assert!(rules.text().contains("§ crates/store/CLAUDE.md (applies to crates/store/)"));

        // What a file operation brings: the nested tier alone.
        let nested = nested_rules(root, &["crates/store/src/lib.rs".into()], &tokenizer).unwrap();
        assert_eq!(
            nested.iter().map(|r| (r.source.as_str(), r.tier)).collect::<Vec<_>>(),
            [("crates/store/CLAUDE.md", Tier::Nested)]
        );
        assert!(nested_rules(root, &["README.md".into()], &tokenizer).unwrap().is_empty());

        // A budget keeps it bounded; what applies and does not fit is named.
        let tight = RulesRequest { budget: Some(plain.tokens + 1), ..request.clone() };
        let rules = rules_for(root, &tight, &tokenizer).unwrap();
        assert_eq!(sources(&rules), [("AGENTS.md", Tier::Root)]);
        assert_eq!(rules.left_out, ["crates/store/CLAUDE.md", "docs/migrations.md"]);

        // A change on disk is seen by the next call.
        write(root, "AGENTS.md", "Run `make check`.\n");
        let changed = rules_for(root, &RulesRequest::default(), &tokenizer).unwrap();
        assert_eq!(changed.rules[0].text, "Run `make check`.\n");

        // A path outside the root is refused.
        let outside = RulesRequest { paths: vec!["../elsewhere.rs".into()], ..RulesRequest::default() };
        assert!(rules_for(root, &outside, &tokenizer).is_err());
    }
}
