//! Skills in the Agent Skills format: a folder holding `SKILL.md`, whose
//! front matter has a `name` and a `description`, with optional
//! `scripts/`, `references/` and `assets/`.
//!
//! Loading is progressive: listing gives each skill's name and description
//! (tens of tokens each); loading one gives its body and its scripts, and
//! the reference files its body links to only when the task matches them
//! (the others are listed by their link text, to load by name later).

use std::path::{Path, PathBuf};

use serde::Serialize;
use ucpkit_core::Tokenizer;

use super::{checked_root, local_links, match_share, read_cached, relative, GuidanceFile, MATCH_SHARE};
use crate::GuidanceError;

/// The folders under a workspace root skills are looked for in.
pub const SKILL_ROOTS: [&str; 3] = ["skills", ".agents/skills", ".claude/skills"];

/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// A skill as listed.
#[derive(Debug, Clone, Serialize)]
pub struct SkillSummary {
    /// Its name (front matter).
    pub name: String,
    /// What it does and when to use it (front matter).
    pub description: String,
    /// Its folder, relative to the workspace root when under it.
    pub path: String,
}

/// Skills found, and folders that look like skills but cannot be read as one.
#[derive(Debug, Clone, Serialize)]
pub struct SkillList {
    /// The skills, by name.
    pub skills: Vec<SkillSummary>,
    /// `folder: why` for each `SKILL.md` that is not a valid skill.
    pub problems: Vec<String>,
}

/// A reference file of a loaded skill.
#[derive(Debug, Clone, Serialize)]
pub struct SkillReference {
    /// The text of the link to it (its file name when nothing links to it).
    pub title: String,
    /// The file, relative to the skill's folder.
    pub path: String,
    /// Its text, when the task matched it (or it was asked for by path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its tokens (o200k).
    pub tokens: usize,
}

/// A skill loaded for a task.
#[derive(Debug, Clone, Serialize)]
pub struct LoadedSkill {
    /// Its name, description and folder.
    #[serde(flatten)]
    pub summary: SkillSummary,
    /// `SKILL.md` after the front matter, verbatim.
    pub body: String,
    /// Files under `scripts/`, relative to the skill's folder (for the bash tool).
    pub scripts: Vec<String>,
    /// Its reference files: loaded ones with their text.
    pub references: Vec<SkillReference>,
    /// Tokens of the body and the loaded references.
    pub tokens: usize,
}

impl LoadedSkill {
    /// The skill as text: its body under a `§` line, then its scripts, the
    /// loaded references under theirs, and the others by title.
    pub fn text(&self) -> String {
        let mut out = format!("§ {} ({})\n{}", self.summary.name, self.summary.path, self.body);
        if !out.ends_with('\n') {
            out.push('\n');
        }
        for script in &self.scripts {
            out.push_str(&format!("script: {}/{script}\n", self.summary.path));
        }
        for reference in &self.references {
            match &reference.text {
                Some(text) => out.push_str(&format!("\n§ {} ({})\n{text}", reference.path, reference.title)),
                None => out.push_str(&format!(
                    "reference: {} ({}, {} tokens; load it by path)\n",
                    reference.path, reference.title, reference.tokens
                )),
            }
        }
        out
    }
}

/// `SKILL.md`'s front matter and body.
fn split_front_matter(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n"))?;
    let end = rest.find("\n---")?;
    let after = &rest[end + 4..];
    let body = after.split_once('\n').map_or("", |(_, body)| body);
    Some((&rest[..end], body))
}

/// A skill name as the format allows: 1 to 64 lower-case letters, digits
/// and hyphens.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// A skill's folder, and the folder its files are read within (the
/// workspace root for the root's own skills, else the folder given).
struct SkillDir {
    dir: PathBuf,
    within: PathBuf,
}

/// The skill in folder `skill`, with its body.
fn read_skill(skill: &SkillDir, root: &Path) -> Result<(SkillSummary, String), String> {
    let dir = &skill.dir;
    let text = match read_cached(&skill.within, &dir.join(SKILL_FILE)) {
        GuidanceFile::Text(text) => text,
        GuidanceFile::Refused(why) => return Err(format!("SKILL.md is not read: {why}")),
        GuidanceFile::Missing => return Err("SKILL.md cannot be read".into()),
    };
    let (front, body) = split_front_matter(&text).ok_or("SKILL.md has no front matter (--- name, description ---)")?;
    let value: serde_json::Value =
        serde_norway::from_str(front).map_err(|e| format!("front matter is not valid YAML: {e}"))?;
    let field = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::trim).filter(|v| !v.is_empty());
    let name = field("name").ok_or("front matter has no name")?;
    if !valid_name(name) {
        return Err(format!("name {name:?}: 1 to 64 lower-case letters, digits and hyphens"));
    }
    let description = field("description").ok_or("front matter has no description")?;
    let summary =
        SkillSummary { name: name.to_owned(), description: description.to_owned(), path: relative(dir, root) };
    Ok((summary, body.to_owned()))
}

/// The skill folders under the skill roots of `root` and under `extra`.
/// A skill under the root's own skill folders is read within the root (a
/// link does not lead out of it, not even one swapped in later); folders
/// named in `extra` are trusted as given and read within themselves.
fn skill_dirs(root: &Path, extra: &[PathBuf]) -> Vec<SkillDir> {
    let real_root = std::fs::canonicalize(root).ok();
    let inside = |dir: &Path| {
        let real = std::fs::canonicalize(dir).ok();
        matches!((real, &real_root), (Some(real), Some(root)) if real.starts_with(root))
    };
    let roots = SKILL_ROOTS
        .iter()
        .map(|r| (root.join(r), None))
        .chain(extra.iter().map(|e| (root.join(e), Some(root.join(e)))));
    let mut dirs: Vec<SkillDir> = Vec::new();
    for (skills, trusted) in roots {
        let Ok(entries) = std::fs::read_dir(&skills) else { continue };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join(SKILL_FILE).is_file() && (trusted.is_some() || inside(p)))
            .collect();
        found.sort();
        let within = trusted.unwrap_or_else(|| root.to_owned());
        dirs.extend(found.into_iter().map(|dir| SkillDir { dir, within: within.clone() }));
    }
    dirs
}

/// The skills under `root`'s skill roots and the folders `extra` (relative
/// to `root`, or absolute).
pub fn list_skills(root: &Path, extra: &[PathBuf]) -> Result<SkillList, GuidanceError> {
    let root = checked_root(root)?;
    let mut list = SkillList { skills: Vec::new(), problems: Vec::new() };
    for skill in skill_dirs(&root, extra) {
        match read_skill(&skill, &root) {
            Ok((summary, _)) if list.skills.iter().any(|s| s.name == summary.name) => {
                list.problems.push(format!("{}: another skill is named {:?}", summary.path, summary.name));
            }
            Ok((summary, _)) => list.skills.push(summary),
            Err(why) => list.problems.push(format!("{}: {why}", relative(&skill.dir, &root))),
        }
    }
    list.skills.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(list)
}

/// Files under `dir`, relative to `base`, sorted (two levels deep at most).
fn files_under(dir: &Path, base: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for path in entries.flatten().map(|e| e.path()) {
        if path.is_file() {
            out.push(relative(&path, base));
        } else if path.is_dir() {
            if let Ok(inner) = std::fs::read_dir(&path) {
                out.extend(inner.flatten().map(|e| e.path()).filter(|p| p.is_file()).map(|p| relative(&p, base)));
            }
        }
    }
    out.sort();
    out
}

/// Skill `name` loaded for `task`: its body and scripts, and the reference
/// files the task matches (or named in `references`) with their text.
pub fn load_skill(
    root: &Path,
    extra: &[PathBuf],
    name: &str,
    task: Option<&str>,
    references: &[String],
    tokenizer: &dyn Tokenizer,
) -> Result<LoadedSkill, GuidanceError> {
    let root = checked_root(root)?;
    let skill = skill_dirs(&root, extra)
        .into_iter()
        .find(|skill| read_skill(skill, &root).is_ok_and(|(s, _)| s.name == name))
        .ok_or_else(|| GuidanceError::Invalid(format!("no skill named {name:?} (list them with skills_list)")))?;
    let (summary, body) = read_skill(&skill, &root).map_err(GuidanceError::Invalid)?;
    let dir = &skill.dir;
    let task = task.map(ucpkit_analyzer::distinct_terms).unwrap_or_default();
    let mut loaded = LoadedSkill {
        summary,
        tokens: tokenizer.count(&body),
        scripts: files_under(&dir.join("scripts"), dir),
        references: Vec::new(),
        body,
    };
    // Linked files first (by their link text), then the rest of references/.
    let mut candidates: Vec<(String, PathBuf)> =
        local_links(&loaded.body, dir, dir).into_iter().map(|l| (l.text, l.target)).collect();
    for path in files_under(&dir.join("references"), dir) {
        let target = dir.join(&path);
        if !candidates.iter().any(|(_, seen)| *seen == target) {
            let title = target.file_stem().map(|s| s.to_string_lossy().replace(['-', '_'], " ")).unwrap_or_default();
            candidates.push((title, target));
        }
    }
    // A reference lies in the skill's folder once links are resolved (it is
    // opened within the root, or the folder given, all the same).
    let real_dir = std::fs::canonicalize(dir).ok();
    for (title, target) in candidates {
        let inside = std::fs::canonicalize(&target).ok().zip(real_dir.as_ref()).is_some_and(|(t, d)| t.starts_with(d));
        if !inside {
            continue;
        }
        let Some(text) = read_cached(&skill.within, &target).text() else { continue };
        let path = relative(&target, dir);
        let wanted = references.iter().any(|r| *r == path || r.eq_ignore_ascii_case(&title))
            || match_share(&task, &title, &text) >= MATCH_SHARE;
        let tokens = tokenizer.count(&text);
        if wanted {
            loaded.tokens += tokens;
        }
        loaded.references.push(SkillReference { title, path, text: wanted.then(|| text.to_string()), tokens });
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write_file as write;
    use ucpkit_core::BpeTokenizer;

    #[test]
    fn skills_are_listed_cheaply_and_load_their_references_when_the_task_matches() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(
            root,
            "skills/pdf-forms/SKILL.md",
            "---\nname: pdf-forms\ndescription: Fill and read PDF forms.\n---\n# PDF forms\n\n\
             For checkboxes see [checkbox fields](references/checkboxes.md).\n",
        );
        write(root, "skills/pdf-forms/references/checkboxes.md", "Checkboxes take /Yes or /Off.\n");
        write(root, "skills/pdf-forms/references/signatures.md", "Signature fields cannot be filled.\n");
        write(root, "skills/pdf-forms/scripts/fill.py", "print('fill')\n");
        write(
            root,
            ".claude/skills/release/SKILL.md",
            "---\nname: release\ndescription: Cut a release.\n---\nTag it.\n",
        );
        write(root, "skills/broken/SKILL.md", "no front matter\n");
        write(root, "skills/Bad Name/SKILL.md", "---\nname: Bad Name\ndescription: x\n---\n");

        let list = list_skills(root, &[]).unwrap();
        let names: Vec<_> = list.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["pdf-forms", "release"]);
        assert_eq!(list.skills[0].description, "Fill and read PDF forms.");
        assert_eq!(list.skills[1].path, ".claude/skills/release");
        assert_eq!(list.problems.len(), 2, "{:?}", list.problems);

        let tokenizer = BpeTokenizer::default();
        let plain = load_skill(root, &[], "pdf-forms", None, &[], &tokenizer).unwrap();
        assert!(plain.body.starts_with("# PDF forms"), "the body after the front matter, verbatim");
        assert_eq!(plain.scripts, ["scripts/fill.py"]);
        let titles: Vec<_> = plain.references.iter().map(|r| (r.title.as_str(), r.text.is_some())).collect();
        assert_eq!(titles, [("checkbox fields", false), ("signatures", false)], "listed, not loaded");

        let matched = load_skill(root, &[], "pdf-forms", Some("tick the checkbox fields"), &[], &tokenizer).unwrap();
        assert_eq!(matched.references[0].text.as_deref(), Some("Checkboxes take /Yes or /Off.\n"));
        assert!(matched.references[1].text.is_none());
        assert_eq!(matched.tokens, plain.tokens + matched.references[0].tokens);
        let asked = load_skill(root, &[], "pdf-forms", None, &["references/signatures.md".into()], &tokenizer).unwrap();
        assert!(asked.references[1].text.is_some());

        assert!(load_skill(root, &[], "missing", None, &[], &tokenizer).is_err());

        // A skill folder linked from outside the root is not the root's skill,
        // and a reference linked to a file elsewhere in the root is not read.
        #[cfg(unix)]
        {
            write(root, "private/notes.md", "Private notes.\n");
            std::os::unix::fs::symlink(root.join("private/notes.md"), root.join("skills/pdf-forms/references/leak.md"))
                .unwrap();
            let loaded = load_skill(root, &[], "pdf-forms", None, &["references/leak.md".into()], &tokenizer).unwrap();
            assert!(loaded.references.iter().all(|r| r.path != "references/leak.md"), "{:?}", loaded.references);
            let outside = tempfile::tempdir().unwrap();
            write(outside.path(), "SKILL.md", "---\nname: stranger\ndescription: From elsewhere.\n---\nHi.\n");
            std::os::unix::fs::symlink(outside.path(), root.join("skills/stranger")).unwrap();
            let names: Vec<_> = list_skills(root, &[]).unwrap().skills.into_iter().map(|s| s.name).collect();
            assert!(!names.contains(&"stranger".to_owned()), "{names:?}");
        }
    }
}
