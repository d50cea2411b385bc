//! `ast_search`: structural search with ast-grep patterns (`$X.unwrap()`,
//! `fn $NAME($$$ARGS)`, `def $F($$$)`) through `ast-grep-core` and the
//! tree-sitter grammars of the languages below, over the workspace's files
//! (walked like `grep`), matches sorted by path and position and paged.

use std::path::Path;

use ast_grep_core::tree_sitter::LanguageExt as _;
use ast_grep_core::Pattern;
use ast_grep_language::SupportLang;
use serde::Serialize;

use crate::page::{cut_line, paginate, Entry, PageInfo, Paging};
use crate::walk::{search_files, walker};
use crate::{ToolError, Tools};

/// The languages `ast_search` parses: name, the grammar, file extensions.
const LANGUAGES: &[(&str, SupportLang, &[&str])] = &[
    ("rust", SupportLang::Rust, &["rs"]),
    ("python", SupportLang::Python, &["py", "pyi"]),
    ("javascript", SupportLang::JavaScript, &["js", "mjs", "cjs", "jsx"]),
    ("typescript", SupportLang::TypeScript, &["ts", "mts", "cts"]),
    ("tsx", SupportLang::Tsx, &["tsx"]),
    ("go", SupportLang::Go, &["go"]),
    ("c", SupportLang::C, &["c", "h"]),
    ("cpp", SupportLang::Cpp, &["cc", "cpp", "cxx", "hpp", "hh", "hxx"]),
    ("java", SupportLang::Java, &["java"]),
];

/// Names `lang` accepts besides the languages' own.
const ALIASES: &[(&str, &str)] =
    &[("rs", "rust"), ("py", "python"), ("js", "javascript"), ("ts", "typescript"), ("golang", "go"), ("c++", "cpp")];

/// An ast_search call.
#[derive(Debug, Clone, Default)]
pub struct AstRequest {
    /// The ast-grep pattern.
    pub pattern: String,
    /// File or folder to search (default: the root).
    pub path: Option<String>,
    /// The language (else every supported language, each file by its
    /// extension; the pattern must parse in each).
    pub lang: Option<String>,
    /// Which matches to return.
    pub paging: Paging,
}

/// One structural match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AstMatch {
    /// Path relative to the root.
    pub path: String,
    /// First line (1-based).
    pub start_line: usize,
    /// Last line (1-based).
    pub end_line: usize,
    /// The matched source, exactly.
    pub text: String,
    /// Each metavariable's capture (`$$$` ones joined by `, `).
    pub captures: Vec<(String, String)>,
}

/// An ast_search answer.
#[derive(Debug, Clone, Serialize)]
pub struct AstResult {
    /// The matches of this page.
    pub matches: Vec<AstMatch>,
    /// Where the page sits.
    pub page: PageInfo,
    /// Files parsed.
    pub files_searched: usize,
    /// The compact text form.
    pub text: String,
}

/// The language named `name` (or an alias).
fn language(name: &str) -> Result<SupportLang, ToolError> {
    let lower = name.to_ascii_lowercase();
    let name = ALIASES.iter().find(|(alias, _)| *alias == lower).map_or(lower.as_str(), |(_, to)| to);
    LANGUAGES.iter().find(|(n, _, _)| *n == name).map(|(_, lang, _)| *lang).ok_or_else(|| {
        let known: Vec<&str> = LANGUAGES.iter().map(|(n, _, _)| *n).collect();
        ToolError::Arguments(format!("lang {name:?} is not one of {}", known.join(", ")))
    })
}

/// The language of a file, by its extension.
fn language_of(path: &Path) -> Option<SupportLang> {
    let extension = path.extension()?.to_str()?;
    LANGUAGES.iter().find(|(_, _, exts)| exts.contains(&extension)).map(|(_, lang, _)| *lang)
}

impl Tools {
    /// Runs a structural search.
    pub fn ast_search(&self, request: &AstRequest) -> Result<AstResult, ToolError> {
        let base = self.jail.resolve(request.path.as_deref().unwrap_or("."))?;
        if self.jail.kind(&base).is_none() {
            return Err(ToolError::NotFound(request.path.clone().unwrap_or_default()));
        }
        let only = request.lang.as_deref().map(language).transpose()?;
        // One compiled pattern per language the search may meet.
        let mut patterns = Vec::new();
        for (name, lang, _) in LANGUAGES {
            if only.is_some_and(|o| o != *lang) {
                continue;
            }
            match Pattern::try_new(&request.pattern, *lang) {
                Ok(pattern) => patterns.push((*lang, pattern)),
                Err(e) if only.is_some() => {
                    return Err(ToolError::arguments(format!("pattern does not parse as {name}: {e}")))
                }
                Err(_) => {}
            }
        }
        if patterns.is_empty() {
            return Err(ToolError::Arguments("the pattern parses in no supported language: set lang".into()));
        }
        let (mut found, searched) = search_files(&walker(&base), || {
            |path: &Path| {
                let lang = language_of(path)?;
                let (_, pattern) = patterns.iter().find(|(l, _)| *l == lang)?;
                Some(self.search_one(path, lang, pattern))
            }
        });
        found.sort_by(|a, b| (&a.path, a.start_line).cmp(&(&b.path, b.start_line)));
        let entries: Vec<Entry> = found.iter().map(match_entry).collect();
        let (mut text, page) = paginate(&entries, request.paging, self.max_tokens, &|| self.tokenizer(), "matches");
        if page.total == 0 {
            text = format!("no matches ({searched} files parsed)\n");
        }
        let matches = found.into_iter().skip(page.offset).take(page.shown).collect();
        Ok(AstResult { matches, page, files_searched: searched, text })
    }

    /// The matches in one file (none when it cannot be read as text).
    fn search_one(&self, path: &Path, lang: SupportLang, pattern: &Pattern) -> Vec<AstMatch> {
        let Some(source) = crate::text::read_listed(&self.jail, path) else { return Vec::new() };
        // Most files cannot match: skip those without the pattern's fixed text.
        let fixed = pattern.fixed_string();
        if !fixed.is_empty() && !source.contains(fixed.as_ref()) {
            return Vec::new();
        }
        let shown = self.jail.display(path);
        let grep = lang.ast_grep(&source);
        let vars = pattern.defined_vars();
        grep.root()
            .find_all(pattern)
            .map(|found| {
                let env = found.get_env();
                let mut captures: Vec<(String, String)> = vars
                    .iter()
                    .map(|var| {
                        let text = match env.get_match(var) {
                            Some(node) => node.text().into_owned(),
                            None => env
                                .get_multiple_matches(var)
                                .iter()
                                .filter(|n| n.is_named())
                                .map(|n| n.text().into_owned())
                                .collect::<Vec<_>>()
                                .join(", "),
                        };
                        ((*var).to_owned(), text)
                    })
                    .collect();
                captures.sort();
                AstMatch {
                    path: shown.clone(),
                    start_line: found.start_pos().line() + 1,
                    end_line: found.end_pos().line() + 1,
                    text: found.text().into_owned(),
                    captures,
                }
            })
            .collect()
    }
}

/// `LINE: first line of the match` (with the lines it spans), then its
/// captures, under its file's path.
fn match_entry(found: &AstMatch) -> Entry {
    let first = found.text.lines().next().unwrap_or_default();
    let span = if found.end_line > found.start_line {
        format!("{}-{}", found.start_line, found.end_line)
    } else {
        found.start_line.to_string()
    };
    let mut text = format!("{span}: {}", cut_line(first));
    for (var, capture) in &found.captures {
        let capture = capture.lines().next().unwrap_or_default();
        text.push_str(&format!("\n  ${var} = {}", cut_line(capture)));
    }
    Entry::under(&found.path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_resolve_by_name_alias_and_extension() {
        assert_eq!(language("RS").unwrap(), SupportLang::Rust);
        assert_eq!(language("py").unwrap(), SupportLang::Python);
        assert!(language("cobol").unwrap_err().to_string().contains("is not one of rust, python"));
        assert_eq!(language_of(Path::new("a/b.tsx")), Some(SupportLang::Tsx));
        assert_eq!(language_of(Path::new("a/b.kt")), None, "a grammar not built in is never used");
    }
}
