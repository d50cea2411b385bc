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
use ucpkit_core::Tokenizer;

use super::{checked_root, local_links, match_share, normalize, read_cached, relative, GuidanceFile, MATCH_SHARE};
use crate::GuidanceError;

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
    /// Its tokens (o200k): of `text`, which is the whole file unless
    /// `cut_from` says otherwise.
    pub tokens: usize,
    /// The file's text, verbatim: its head when it was cut to the budget.
    pub text: String,
    /// The whole file's tokens, when `text` is its head alone (the root
    /// file, longer than the budget).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_from: Option<usize>,
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
    /// Rules files that are there but were not read: `file: why` (too
    /// large, not text).
    pub unread: Vec<String>,
}

impl Rules {
    /// Whether nothing applies: no rule, none left out, none unread.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty() && self.left_out.is_empty() && self.unread.is_empty()
    }

    /// The rules as one text: each under a line naming its source.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for rule in &self.rules {
            match rule.cut_from {
                Some(whole) => out.push_str(&format!(
                    "§ {} ({}; cut to the budget: its first {} of {whole} tokens, read the file for the rest)\n",
                    rule.source, rule.reason, rule.tokens
                )),
                None => out.push_str(&format!("§ {} ({})\n", rule.source, rule.reason)),
            }
            out.push_str(rule.text.trim_end());
            out.push_str("\n\n");
        }
        for source in &self.left_out {
            out.push_str(&format!("§ {source}: applies, left out (over the budget)\n"));
        }
        for unread in &self.unread {
            out.push_str(&format!("§ {unread}: not read\n"));
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
    /// Most tokens of rules text (the root file is cut to it when longer;
    /// the other files are whole or left out).
    pub budget: Option<usize>,
}

/// The rules files of folder `dir` under `root`, with their text (one text
/// read under both names is kept once); those there but not read go to
/// `unread` as `file: why`.
fn rule_files(root: &Path, dir: &Path, unread: &mut Vec<String>) -> Vec<(PathBuf, Arc<str>)> {
    let mut found: Vec<(PathBuf, Arc<str>)> = Vec::new();
    for name in RULE_FILES {
        let path = dir.join(name);
        match read_cached(root, &path) {
            GuidanceFile::Text(text) => {
                if !found.iter().any(|(_, seen)| *seen == text) {
                    found.push((path, text));
                }
            }
            GuidanceFile::Refused(why) => {
                let note = format!("{}: {why}", relative(&path, root));
                if !unread.contains(&note) {
                    unread.push(note);
                }
            }
            GuidanceFile::Missing => {}
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
fn nested_files(
    root: &Path,
    paths: &[PathBuf],
    unread: &mut Vec<String>,
) -> Result<Vec<(PathBuf, Arc<str>, String)>, GuidanceError> {
    let mut found: Vec<(PathBuf, Arc<str>, String)> = Vec::new();
    for asked in paths {
        let path = normalize(&if asked.is_absolute() { asked.clone() } else { root.join(asked) });
        if !path.starts_with(root) {
            return Err(GuidanceError::Path(format!("{} is outside {}", asked.display(), root.display())));
        }
        for dir in folders_between(root, &path) {
            for (file, text) in rule_files(root, &dir, unread) {
                if !found.iter().any(|(seen, ..)| *seen == file) {
                    found.push((file, text, format!("applies to {}/", relative(&dir, root))));
                }
            }
        }
    }
    Ok(found)
}

/// The nested rules (tier 3 alone) for `paths` under `root`: what a file
/// operation brings with it, without the root file or linked ones (no
/// budget: the caller picks), and the rules files there it could not read.
pub fn nested_rules(root: &Path, paths: &[PathBuf], tokenizer: &dyn Tokenizer) -> Result<Rules, GuidanceError> {
    let root = checked_root(root)?;
    let mut unread = Vec::new();
    let rules: Vec<Rule> = nested_files(&root, paths, &mut unread)?
        .into_iter()
        .map(|(path, text, reason)| Rule {
            source: relative(&path, &root),
            tier: Tier::Nested,
            reason,
            tokens: tokenizer.count(&text),
            text: text.to_string(),
            cut_from: None,
        })
        .collect();
    let tokens = rules.iter().map(|r| r.tokens).sum();
    Ok(Rules { rules, tokens, left_out: Vec::new(), unread })
}

/// The rules under `root` that apply to `request`.
pub fn rules_for(root: &Path, request: &RulesRequest, tokenizer: &dyn Tokenizer) -> Result<Rules, GuidanceError> {
    let root = checked_root(root)?;
    let budget = request.budget.unwrap_or(DEFAULT_RULES_BUDGET);
    let mut unread = Vec::new();
    let mut applies: Vec<(PathBuf, Arc<str>, Tier, String)> = Vec::new();
    for (path, text) in rule_files(&root, &root, &mut unread) {
        applies.push((path, text, Tier::Root, "workspace rules".into()));
    }
    for (file, text, reason) in nested_files(&root, &request.paths, &mut unread)? {
        if !applies.iter().any(|(seen, ..)| *seen == file) {
            applies.push((file, text, Tier::Nested, reason));
        }
    }
    // Linked files the task matches, best first.
    let task = request.task.as_deref().map(ucpkit_analyzer::distinct_terms).unwrap_or_default();
    let mut linked: Vec<(f64, PathBuf, Arc<str>, String)> = Vec::new();
    // Without a task no link matches: nothing linked is read.
    for (file, text, ..) in applies.iter().filter(|_| !task.is_empty()) {
        let dir = file.parent().unwrap_or(&root);
        for link in local_links(text, dir, &root) {
            if applies.iter().any(|(seen, ..)| *seen == link.target) || linked.iter().any(|l| l.1 == link.target) {
                continue;
            }
            let target = match read_cached(&root, &link.target) {
                GuidanceFile::Text(target) => target,
                GuidanceFile::Refused(why) => {
                    unread.push(format!("{}: {why}", relative(&link.target, &root)));
                    continue;
                }
                GuidanceFile::Missing => continue,
            };
            let share = match_share(&task, &link.text, &target);
            if share >= MATCH_SHARE {
                let reason = format!("the task matches [{}] in {}", link.text, relative(file, &root));
                linked.push((share, link.target, target, reason));
            }
        }
    }
    linked.sort_by(|a, b| b.0.total_cmp(&a.0));
    applies.extend(linked.into_iter().map(|(_, path, text, reason)| (path, text, Tier::Linked, reason)));

    let mut rules = Rules { rules: Vec::new(), tokens: 0, left_out: Vec::new(), unread };
    for (path, text, tier, reason) in applies {
        let tokens = tokenizer.count(&text);
        let source = relative(&path, &root);
        if tier == Tier::Root && rules.tokens + tokens > budget {
            // The root file always applies: its head, within the budget.
            let head = ucpkit_core::outline::bounded_head(&text, budget.saturating_sub(rules.tokens), tokenizer);
            let head_tokens = tokenizer.count(&head);
            rules.tokens += head_tokens;
            let rule = Rule { source, tier, reason, tokens: head_tokens, text: head, cut_from: Some(tokens) };
            rules.rules.push(rule);
            continue;
        }
        if rules.tokens + tokens > budget {
            rules.left_out.push(source);
            continue;
        }
        rules.tokens += tokens;
        rules.rules.push(Rule { source, tier, reason, tokens, text: text.to_string(), cut_from: None });
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write_file as write;
    use ucpkit_core::BpeTokenizer;

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
        assert_eq!(sources(&nested), [("crates/store/CLAUDE.md", Tier::Nested)]);
        assert!(nested_rules(root, &["README.md".into()], &tokenizer).unwrap().rules.is_empty());

        // A budget keeps it bounded; what applies and does not fit is named.
        let tight = RulesRequest { budget: Some(plain.tokens + 1), ..request.clone() };
        let rules = rules_for(root, &tight, &tokenizer).unwrap();
        assert_eq!(sources(&rules), [("AGENTS.md", Tier::Root)]);
        assert_eq!(rules.left_out, ["crates/store/CLAUDE.md", "docs/migrations.md"]);

        // A change on disk is seen by the next call.
        write(root, "AGENTS.md", "Run `make check`.\n");
        let changed = rules_for(root, &RulesRequest::default(), &tokenizer).unwrap();
        assert_eq!(changed.rules[0].text, "Run `make check`.\n");

        // A root file longer than the budget is cut to it, and says so.
        write(root, "AGENTS.md", &"Always run the whole test suite before a commit. ".repeat(400));
        let cut = rules_for(root, &RulesRequest { budget: Some(100), ..RulesRequest::default() }, &tokenizer).unwrap();
        assert!(cut.tokens <= 100 && cut.rules[0].tokens == cut.tokens, "{}", cut.tokens);
        assert!(cut.rules[0].cut_from.is_some_and(|whole| whole > 4000));
        assert!(cut.text().contains("cut to the budget: its first"), "{}", cut.text());
        assert!(std::fs::read_to_string(root.join("AGENTS.md")).unwrap().starts_with(&cut.rules[0].text));

        // A rules file too large to read is said, not taken for absent.
        write(root, "crates/store/AGENTS.md", &"x".repeat(2 << 20));
        let unread = rules_for(root, &request, &tokenizer).unwrap();
        assert_eq!(unread.unread.len(), 1, "{:?}", unread.unread);
        assert!(unread.text().contains("§ crates/store/AGENTS.md: 2048 KiB, over the 1024 KiB"), "{}", unread.text());
        let nested = nested_rules(root, &["crates/store/src/lib.rs".into()], &tokenizer).unwrap();
        assert_eq!(nested.unread, unread.unread);

        // A path outside the root is refused.
        let outside = RulesRequest { paths: vec!["../elsewhere.rs".into()], ..RulesRequest::default() };
        assert!(rules_for(root, &outside, &tokenizer).is_err());
    }
}
