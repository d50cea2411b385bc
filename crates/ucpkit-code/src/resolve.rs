//! Linking names across a repository: each file's imports to the files
//! they name, and its calls and base classes to the symbols they name.
//!
//! A name is looked up by scope first — the method's own class for
//! `self.x()`, the file, the names its imports bring in, the module an
//! alias stands for — and only then across the repository, where it is
//! linked only when one definition has that name. Everything else (library
//! and builtin calls, ambiguous names) is counted as unresolved, never
//! guessed.

use std::hash::Hash;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use crate::{Import, Language, SymbolKind};

/// A symbol of a file: its qualified name (`Class.method`), kind and id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymbolRef<Id> {
    /// Names from the outermost container down, joined by `.`.
    pub qname: String,
    /// What it defines.
    pub kind: SymbolKind,
    /// The id the caller gave it.
    pub id: Id,
}

/// A name used in a file: a call, or a base class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference<Id> {
    /// The symbol (or module-level code) using it.
    pub from: Id,
    /// The qualified name of the class, impl or trait it is used in.
    pub class: Option<String>,
    /// The name.
    pub name: String,
    /// What it was called on (`self`, an alias, a type).
    pub receiver: Option<String>,
    /// A base class or trait rather than a call.
    pub base: bool,
}

/// What [`resolve`] needs of one code file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCode<Id> {
    /// Its language.
    pub language: Language,
    /// Its imports.
    pub imports: Vec<Import>,
    /// Its symbols, containers before their members.
    pub symbols: Vec<SymbolRef<Id>>,
    /// The names it uses.
    pub refs: Vec<Reference<Id>>,
}

impl<Id> FileCode<Id> {
    /// The same facts under other ids.
    pub fn map_ids<T>(&self, mut id: impl FnMut(&Id) -> T) -> FileCode<T> {
        FileCode {
            language: self.language,
            imports: self.imports.clone(),
            symbols: self
                .symbols
                .iter()
                .map(|s| SymbolRef { qname: s.qname.clone(), kind: s.kind, id: id(&s.id) })
                .collect(),
            refs: self
                .refs
                .iter()
                .map(|r| Reference {
                    from: id(&r.from),
                    class: r.class.clone(),
                    name: r.name.clone(),
                    receiver: r.receiver.clone(),
                    base: r.base,
                })
                .collect(),
        }
    }
}

/// The kind of a resolved link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// A file imports another.
    Imports,
    /// A symbol calls another.
    Calls,
    /// A type extends a class.
    Extends,
    /// A type implements a trait or interface.
    Implements,
}

/// The links found, and what could not be linked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution<Id> {
    /// `(from, kind, to)`, each once.
    pub links: Vec<(Id, LinkKind, Id)>,
    /// Calls linked to a definition in the repository.
    pub calls_resolved: usize,
    /// Calls left unlinked: library or builtin names, or names defined
    /// more than once with nothing to choose between them.
    pub calls_unresolved: usize,
    /// Imports linked to a file of the repository.
    pub imports_resolved: usize,
    /// Imports of modules outside the repository (or not found).
    pub imports_unresolved: usize,
}

/// Files imported under one module path, at most this many (a Go package
/// is every file of its folder).
const PACKAGE_FILES: usize = 32;

/// Links every file's imports, calls and bases; `files` are `(corpus path,
/// file id, code)`.
pub fn resolve<Id: Copy + Eq + Hash>(files: &[(&str, Id, &FileCode<Id>)]) -> Resolution<Id> {
    let modules = Modules::new(files);
    let symbols = Symbols::new(files);
    let mut resolution = Resolution {
        links: Vec::new(),
        calls_resolved: 0,
        calls_unresolved: 0,
        imports_resolved: 0,
        imports_unresolved: 0,
    };
    let mut seen = FxHashSet::default();
    let mut scopes: Vec<FileScope<'_>> = Vec::with_capacity(files.len());
    for (index, (path, file_id, code)) in files.iter().enumerate() {
        let mut scope = FileScope::default();
        for import in &code.imports {
            let targets = modules.of_import(path, code.language, import);
            // `from pkg import a, b` imports the modules a and b.
            let submodules = scope.bind(&modules, path, code.language, import, targets.clone());
            if targets.is_empty() && submodules.is_empty() {
                resolution.imports_unresolved += 1;
            } else {
                resolution.imports_resolved += 1;
            }
            for &target in targets.iter().chain(&submodules) {
                if target != index && seen.insert((*file_id, LinkKind::Imports, files[target].1)) {
                    resolution.links.push((*file_id, LinkKind::Imports, files[target].1));
                }
            }
        }
        scopes.push(scope);
    }
    let lookup = Lookup { symbols: &symbols, scopes: &scopes, modules: &modules, files };
    for (index, (_, _, code)) in files.iter().enumerate() {
        for reference in &code.refs {
            match lookup.find(index, reference) {
                Some((target, kind)) if target != reference.from => {
                    let link = if !reference.base {
                        LinkKind::Calls
                    } else if matches!(kind, SymbolKind::Trait | SymbolKind::Interface) {
                        LinkKind::Implements
                    } else {
                        LinkKind::Extends
                    };
                    if !reference.base {
                        resolution.calls_resolved += 1;
                    }
                    if seen.insert((reference.from, link, target)) {
                        resolution.links.push((reference.from, link, target));
                    }
                }
                Some(_) => resolution.calls_resolved += usize::from(!reference.base),
                None => resolution.calls_unresolved += usize::from(!reference.base),
            }
        }
    }
    resolution
}

/// The names a file's imports bring in.
#[derive(Default)]
struct FileScope<'a> {
    bindings: FxHashMap<&'a str, Binding<'a>>,
    /// Files whose every name is imported (`from m import *`).
    stars: Vec<usize>,
}

impl<'a> FileScope<'a> {
    /// Binds the names `import` brings in; returns the files of the names
    /// that are modules themselves.
    fn bind(
        &mut self,
        modules: &Modules,
        path: &str,
        language: Language,
        import: &'a Import,
        targets: Vec<usize>,
    ) -> Vec<usize> {
        let mut submodules = Vec::new();
        if let Some(alias) = &import.alias {
            self.bindings.insert(alias, Binding::Module(targets.clone()));
        }
        if import.star {
            self.stars.extend(&targets);
        }
        for (local, remote) in &import.names {
            let module = join_module(language, &import.module, remote);
            let submodule = Import { module, names: Vec::new(), alias: None, star: false };
            let files = modules.of_import(path, language, &submodule);
            let binding = if files.is_empty() {
                let remote = if remote == "default" { local } else { remote };
                Binding::Symbol(targets.clone(), remote)
            } else {
                submodules.extend(&files);
                Binding::Module(files)
            };
            self.bindings.insert(local, binding);
        }
        submodules
    }
}

/// What a local name stands for.
enum Binding<'a> {
    /// A name defined in other files.
    Symbol(Vec<usize>, &'a str),
    /// A module (its files).
    Module(Vec<usize>),
}

fn join_module(language: Language, module: &str, name: &str) -> String {
    let separator = language.module_separator();
    if module.is_empty() || module.ends_with(separator) || (language == Language::Python && module.ends_with('.')) {
        format!("{module}{name}")
    } else {
        format!("{module}{separator}{name}")
    }
}

/// Files by module path: every file by its path without extension (and a
/// package file by its folder), under each of that path's suffixes.
struct Modules {
    by_suffix: FxHashMap<String, Vec<usize>>,
    /// Go files by folder.
    go_packages: FxHashMap<String, Vec<usize>>,
    /// Folders holding an `__init__.py`.
    python_packages: FxHashSet<String>,
    by_dir: FxHashMap<String, Vec<usize>>,
    dir_of: Vec<String>,
    paths: Vec<String>,
}

impl Modules {
    fn new<Id>(files: &[(&str, Id, &FileCode<Id>)]) -> Modules {
        let mut by_suffix: FxHashMap<String, Vec<usize>> = FxHashMap::default();
        let mut go_packages: FxHashMap<String, Vec<usize>> = FxHashMap::default();
        let mut python_packages: FxHashSet<String> = FxHashSet::default();
        for (index, (path, _, code)) in files.iter().enumerate() {
            let stem = strip_extension(path);
            let (dir, name) = stem.rsplit_once('/').unwrap_or(("", stem));
            let keys = match code.language {
                // A Go import names a package: a folder.
                Language::Go => {
                    go_packages.entry(dir.to_owned()).or_default().push(index);
                    continue;
                }
                // An include names a file, extension and all.
                Language::C | Language::Cpp => vec![(*path).to_owned()],
                language if language.package_files().contains(&name) => {
                    if language == Language::Python {
                        python_packages.insert(dir.to_owned());
                    }
                    vec![stem.to_owned(), dir.to_owned()]
                }
                _ => vec![stem.to_owned()],
            };
            for key in keys.into_iter().filter(|k| !k.is_empty()) {
                let mut suffix = key.as_str();
                loop {
                    let entry = by_suffix.entry(suffix.to_owned()).or_default();
                    if entry.len() < PACKAGE_FILES * 4 && entry.last() != Some(&index) {
                        entry.push(index);
                    }
                    match suffix.split_once('/') {
                        Some((_, rest)) => suffix = rest,
                        None => break,
                    }
                }
            }
        }
        let mut by_dir: FxHashMap<String, Vec<usize>> = FxHashMap::default();
        let mut dir_of = Vec::with_capacity(files.len());
        for (index, (path, _, _)) in files.iter().enumerate() {
            let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir).to_owned();
            by_dir.entry(dir.clone()).or_default().push(index);
            dir_of.push(dir);
        }
        let paths = files.iter().map(|(p, _, _)| (*p).to_owned()).collect();
        Modules { by_suffix, by_dir, dir_of, go_packages, python_packages, paths }
    }

    /// The files of the Go package an import path names: the repository
    /// folder that ends the path (`github.com/org/repo/internal/x` is
    /// `internal/x`). A path whose first part is no domain is the
    /// standard library's.
    fn go_package(&self, module: &str) -> Vec<usize> {
        let parts: Vec<&str> = module.split('/').collect();
        if !parts.first().is_some_and(|p| p.contains('.')) {
            return Vec::new();
        }
        (1..parts.len())
            .find_map(|i| self.go_packages.get(&parts[i..].join("/")))
            .map(|files| files.iter().copied().take(PACKAGE_FILES).collect())
            .unwrap_or_default()
    }

    /// Whether file `index` is module `module` as an absolute Python import
    /// sees it: its path is the module's, or sits in a folder that is no
    /// package (a source root such as `src/`); `compat/json.py` in package
    /// `compat` is `compat.json`, not `json`.
    fn is_python_root(&self, index: usize, module: &str) -> bool {
        let stem = strip_extension(&self.paths[index]);
        let key = stem.strip_suffix("/__init__").unwrap_or(stem);
        let prefix = key.strip_suffix(module).map(|p| p.trim_end_matches('/')).unwrap_or("");
        prefix.is_empty() || !self.python_packages.contains(prefix)
    }

    /// The files in the same folder as `file` (itself included).
    fn package_of(&self, file: usize) -> &[usize] {
        self.by_dir.get(&self.dir_of[file]).map(Vec::as_slice).unwrap_or_default()
    }

    /// The files an import names (several for a Go package).
    fn of_import(&self, from: &str, language: Language, import: &Import) -> Vec<usize> {
        if language == Language::Go {
            return self.go_package(&import.module);
        }
        let Some(path) = module_path(from, language, &import.module) else {
            return Vec::new();
        };
        let exact = self.by_suffix.get(&path).map(Vec::as_slice).unwrap_or_default();
        let absolute_python = language == Language::Python && !import.module.starts_with('.');
        let exact: Vec<usize> =
            exact.iter().copied().filter(|i| !absolute_python || self.is_python_root(*i, &path)).collect();
        // The candidates closest to the importing file: most leading path
        // components in common, and alone at that.
        let common = |i: &usize| common_prefix(&self.paths[*i], from);
        let exact = exact.as_slice();
        let best = exact.iter().map(common).max();
        let closest: Vec<usize> = exact.iter().copied().filter(|i| Some(common(i)) == best).collect();
        if closest.len() == 1 {
            closest
        } else {
            Vec::new()
        }
    }
}

/// A module as a slash path without extension, relative where the import
/// is relative; `None` for what cannot be in the repository.
fn module_path(from: &str, language: Language, module: &str) -> Option<String> {
    let dir = from.rsplit_once('/').map_or("", |(dir, _)| dir);
    let path = match language {
        Language::Python => {
            let level = module.len() - module.trim_start_matches('.').len();
            let rest = module[level..].replace('.', "/");
            if level == 0 {
                rest
            } else {
                join(up(dir, level - 1)?, &rest)
            }
        }
        Language::Java => module.replace('.', "/"),
        Language::Rust => {
            let mut parts: Vec<&str> = module.split("::").filter(|p| !p.is_empty()).collect();
            // The module a file is: its folder for mod.rs, lib.rs and
            // main.rs, else the folder named after it.
            let stem = strip_extension(from);
            let own = match stem.rsplit_once('/').map_or(stem, |(_, name)| name) {
                "mod" | "lib" | "main" => dir.to_owned(),
                _ => stem.to_owned(),
            };
            let mut base = String::new();
            match parts.first().copied() {
                Some("self" | "super") => {
                    base = own;
                    while parts.first() == Some(&"super") {
                        base = up(&base, 1)?.to_owned();
                        parts.remove(0);
                    }
                    if parts.first() == Some(&"self") {
                        parts.remove(0);
                    }
                }
                Some("crate") => {
                    parts.remove(0);
                }
                // Another crate's path.
                _ => return None,
            }
            join(&base, &parts.join("/"))
        }
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            if !module.starts_with('.') {
                return None;
            }
            let path = normalize(&join(dir, module));
            let script = [".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"];
            match script.iter().find_map(|ext| path.strip_suffix(ext)) {
                Some(stem) => stem.to_owned(),
                None => path,
            }
        }
        Language::C | Language::Cpp => normalize(&join(dir, module)),
        Language::Go => return None,
    };
    let path = normalize(&path);
    (!path.is_empty()).then_some(path)
}

fn join(dir: &str, rest: &str) -> String {
    match (dir.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_owned(),
        (_, true) => dir.to_owned(),
        _ => format!("{dir}/{rest}"),
    }
}

/// `levels` folders up from `dir`.
fn up(dir: &str, levels: usize) -> Option<&str> {
    let mut dir = dir;
    for _ in 0..levels {
        if dir.is_empty() {
            return None;
        }
        dir = dir.rsplit_once('/').map_or("", |(parent, _)| parent);
    }
    Some(dir)
}

/// `a/./b/../c` → `a/c`; leading `..` that leave the corpus are dropped.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    parts.join("/")
}

fn strip_extension(path: &str) -> &str {
    match path.rsplit_once('.') {
        Some((stem, ext)) if !ext.contains('/') && !stem.is_empty() && !stem.ends_with('/') => stem,
        _ => path,
    }
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.split('/').zip(b.split('/')).take_while(|(x, y)| x == y).count()
}

/// Symbols by file and qualified name, and by simple name corpus-wide.
struct Symbols<Id> {
    by_qname: Vec<FxHashMap<String, (Id, SymbolKind)>>,
    /// `(file, qualified name, id, kind)` by simple name.
    by_name: FxHashMap<String, Vec<(usize, String, Id, SymbolKind)>>,
    /// Per file, the base names of each of its types.
    bases: Vec<FxHashMap<String, Vec<String>>>,
}

impl<Id: Copy + Eq + Hash> Symbols<Id> {
    fn new(files: &[(&str, Id, &FileCode<Id>)]) -> Symbols<Id> {
        let mut symbols = Symbols { by_qname: Vec::new(), by_name: FxHashMap::default(), bases: Vec::new() };
        for (file, (_, _, code)) in files.iter().enumerate() {
            let mut own: FxHashMap<String, (Id, SymbolKind)> = FxHashMap::default();
            let mut qname_of: FxHashMap<Id, &str> = FxHashMap::default();
            for symbol in &code.symbols {
                own.entry(symbol.qname.clone()).or_insert((symbol.id, symbol.kind));
                qname_of.insert(symbol.id, &symbol.qname);
                let name = symbol.qname.rsplit('.').next().unwrap_or(&symbol.qname);
                if symbol.kind != SymbolKind::Impl {
                    let entry = (file, symbol.qname.clone(), symbol.id, symbol.kind);
                    symbols.by_name.entry(name.to_owned()).or_default().push(entry);
                }
            }
            let mut bases: FxHashMap<String, Vec<String>> = FxHashMap::default();
            for reference in code.refs.iter().filter(|r| r.base) {
                if let Some(qname) = qname_of.get(&reference.from) {
                    bases.entry((*qname).to_owned()).or_default().push(reference.name.clone());
                }
            }
            symbols.by_qname.push(own);
            symbols.bases.push(bases);
        }
        symbols
    }
}

/// Most types a method is looked for in, its class and bases together.
const BASE_TYPES: usize = 64;

/// Looks names up in the scopes a language gives them.
struct Lookup<'a, Id> {
    symbols: &'a Symbols<Id>,
    scopes: &'a [FileScope<'a>],
    modules: &'a Modules,
    files: &'a [(&'a str, Id, &'a FileCode<Id>)],
}

impl<Id: Copy + Eq + Hash> Lookup<'_, Id> {
    fn in_file(&self, file: usize, qname: &str, wanted: impl Fn(SymbolKind) -> bool) -> Option<(Id, SymbolKind)> {
        self.symbols.by_qname[file].get(qname).copied().filter(|(_, k)| wanted(*k))
    }

    /// The one definition of `qname` among `files`.
    fn in_files(
        &self,
        files: &[usize],
        qname: &str,
        wanted: impl Fn(SymbolKind) -> bool + Copy,
    ) -> Option<(usize, Id, SymbolKind)> {
        let mut found = files.iter().filter_map(|f| self.in_file(*f, qname, wanted).map(|(id, k)| (*f, id, k)));
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }

    /// The definition a reference names, if one can be told.
    fn find(&self, file: usize, reference: &Reference<Id>) -> Option<(Id, SymbolKind)> {
        let name = reference.name.as_str();
        let callable = |kind: SymbolKind| kind != SymbolKind::Impl;
        if reference.base {
            return self.bare(file, name, SymbolKind::is_type, true).map(|(_, _, id, kind)| (id, kind));
        }
        let scope = &self.scopes[file];
        match reference.receiver.as_deref() {
            Some("self" | "this" | "cls" | "Self") => {
                let class = reference.class.as_deref()?;
                self.method(file, class, name, &mut FxHashSet::default())
            }
            // An expression: what it stands for is not known here.
            Some("") => None,
            Some(receiver) => match scope.bindings.get(receiver) {
                Some(Binding::Module(files)) => self.in_files(files, name, callable).map(|(_, id, k)| (id, k)),
                Some(Binding::Symbol(files, remote)) => {
                    let (owner, _, _) = self.in_files(files, remote, SymbolKind::is_type)?;
                    self.method(owner, remote, name, &mut FxHashSet::default())
                }
                None => {
                    let (owner, qname, _, _) = self.bare(file, receiver, SymbolKind::is_type, false)?;
                    self.method(owner, &qname, name, &mut FxHashSet::default())
                }
            },
            None => self.bare(file, name, callable, false).map(|(_, _, id, kind)| (id, kind)),
        }
    }

    /// `name` used alone in `file`: defined there, imported, star-imported,
    /// in the file's package (where the language shares one), or — for
    /// bases, and for languages that link globally — the one definition
    /// of that name in the corpus. Gives the file and qualified name too.
    fn bare(
        &self,
        file: usize,
        name: &str,
        wanted: impl Fn(SymbolKind) -> bool + Copy,
        global: bool,
    ) -> Option<(usize, String, Id, SymbolKind)> {
        if let Some((id, kind)) = self.in_file(file, name, wanted) {
            return Some((file, name.to_owned(), id, kind));
        }
        let scope = &self.scopes[file];
        match scope.bindings.get(name) {
            Some(Binding::Symbol(files, remote)) => {
                return self.in_files(files, remote, wanted).map(|(f, id, k)| (f, (*remote).to_owned(), id, k));
            }
            Some(Binding::Module(_)) => return None,
            None => {}
        }
        if let Some((f, id, k)) = self.in_files(&scope.stars, name, wanted) {
            return Some((f, name.to_owned(), id, k));
        }
        let language = self.files[file].2.language;
        if language.shares_package_scope() {
            let package = self.modules.package_of(file);
            if let Some((f, id, k)) = self.in_files(package, name, wanted) {
                return Some((f, name.to_owned(), id, k));
            }
        }
        if global || language.links_globally() {
            let candidates: Vec<&(usize, String, Id, SymbolKind)> = self
                .symbols
                .by_name
                .get(name)
                .map(|c| c.iter().filter(|(_, qname, _, k)| wanted(*k) && !qname.contains('.')).collect())
                .unwrap_or_default();
            if let [(f, qname, id, k)] = candidates[..] {
                return Some((*f, qname.clone(), *id, *k));
            }
        }
        None
    }

    /// Method `name` of type `class` (defined in `file`), or of a base it
    /// extends (each type looked at once, at most [`BASE_TYPES`] of them).
    fn method(
        &self,
        file: usize,
        class: &str,
        name: &str,
        visited: &mut FxHashSet<(usize, String)>,
    ) -> Option<(Id, SymbolKind)> {
        if visited.len() >= BASE_TYPES || !visited.insert((file, class.to_owned())) {
            return None;
        }
        if let Some(found) = self.in_file(file, &format!("{class}.{name}"), |k| k != SymbolKind::Impl) {
            return Some(found);
        }
        let bases = self.symbols.bases[file].get(class)?;
        bases.iter().find_map(|base| {
            let (owner, qname, _, _) = self.bare(file, base, SymbolKind::is_type, true)?;
            self.method(owner, &qname, name, visited)
        })
    }
}

#[cfg(test)]
mod tests;
