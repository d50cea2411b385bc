//! The languages read, and what their grammars call the nodes that matter:
//! which nodes define symbols, which wrap a definition (decorators,
//! `export`, templates), which comments and attributes belong to the next
//! definition, and which nodes are calls and imports.

use std::path::Path;

use crate::SymbolKind;

/// A language with a grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// Python (`.py`, `.pyi`).
    Python,
    /// Rust.
    Rust,
    /// JavaScript (`.js`, `.mjs`, `.cjs`, `.jsx`).
    JavaScript,
    /// TypeScript (`.ts`, `.mts`, `.cts`).
    TypeScript,
    /// TypeScript with JSX (`.tsx`).
    Tsx,
    /// Go.
    Go,
    /// Java.
    Java,
    /// C (`.c`, `.h`).
    C,
    /// C++.
    Cpp,
}

impl Language {
    /// The language of a file, by its extension.
    pub fn of_path(path: &Path) -> Option<Language> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Language::of_extension(&ext)
    }

    /// The language of a file extension (without the dot).
    pub fn of_extension(ext: &str) -> Option<Language> {
        Some(match ext {
            "py" | "pyi" => Language::Python,
            "rs" => Language::Rust,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "java" => Language::Java,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Language::Cpp,
            _ => return None,
        })
    }

    /// The language a code block's language name stands for (`jsx` is
    /// JavaScript).
    pub fn of_name(name: &str) -> Option<Language> {
        Some(match name {
            "python" => Language::Python,
            "rust" => Language::Rust,
            "javascript" | "jsx" => Language::JavaScript,
            "typescript" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "java" => Language::Java,
            "c" => Language::C,
            "cpp" => Language::Cpp,
            _ => return None,
        })
    }

    /// The language's name, as code blocks name it.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Rust => "rust",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Tsx => "tsx",
            Language::Go => "go",
            Language::Java => "java",
            Language::C => "c",
            Language::Cpp => "cpp",
        }
    }

    /// The tree-sitter grammar.
    #[cfg(feature = "grammars")]
    pub(crate) fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::C => tree_sitter_c::LANGUAGE.into(),
            Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        }
    }

    /// What the grammar calls the nodes that matter.
    pub(crate) fn spec(self) -> &'static Spec {
        match self {
            Language::Python => &PYTHON,
            Language::Rust => &RUST,
            Language::JavaScript | Language::TypeScript | Language::Tsx => &JAVASCRIPT,
            Language::Go => &GO,
            Language::Java => &JAVA,
            Language::C | Language::Cpp => &C,
        }
    }

    /// How a module path is written in imports: the separator between its
    /// parts.
    pub(crate) fn module_separator(self) -> &'static str {
        match self {
            Language::Python | Language::Java => ".",
            Language::Rust => "::",
            _ => "/",
        }
    }

    /// Whether a file sees the names its folder's other files define
    /// without importing them (a Go or Java package; C's one namespace).
    pub(crate) fn shares_package_scope(self) -> bool {
        matches!(self, Language::Go | Language::Java | Language::C | Language::Cpp)
    }

    /// Whether a name used alone may be defined in any file (C and C++
    /// link every file's functions into one namespace).
    pub(crate) fn links_globally(self) -> bool {
        matches!(self, Language::C | Language::Cpp)
    }

    /// File names that stand for their folder as a module.
    pub(crate) fn package_files(self) -> &'static [&'static str] {
        match self {
            Language::Python => &["__init__"],
            Language::Rust => &["mod", "lib"],
            Language::JavaScript | Language::TypeScript | Language::Tsx => &["index"],
            _ => &[],
        }
    }
}

/// Node kinds of one grammar.
pub(crate) struct Spec {
    /// Nodes that define a symbol, and of which kind.
    pub(crate) symbols: &'static [(&'static str, SymbolKind)],
    /// Nodes whose range the definition inside them takes on.
    pub(crate) wrappers: &'static [&'static str],
    /// Comments and attributes that belong to the definition right after.
    pub(crate) attached: &'static [&'static str],
    /// Call nodes.
    pub(crate) calls: &'static [&'static str],
    /// Import nodes.
    pub(crate) imports: &'static [&'static str],
}

use SymbolKind as K;

static PYTHON: Spec = Spec {
    symbols: &[("class_definition", K::Class), ("function_definition", K::Function)],
    wrappers: &["decorated_definition"],
    attached: &["comment"],
    calls: &["call"],
    imports: &["import_statement", "import_from_statement"],
};

static RUST: Spec = Spec {
    symbols: &[
        ("function_item", K::Function),
        ("function_signature_item", K::Function),
        ("struct_item", K::Struct),
        ("union_item", K::Struct),
        ("enum_item", K::Enum),
        ("trait_item", K::Trait),
        ("impl_item", K::Impl),
        ("mod_item", K::Module),
        ("const_item", K::Constant),
        ("static_item", K::Constant),
        ("type_item", K::TypeAlias),
        ("macro_definition", K::Function),
    ],
    wrappers: &[],
    attached: &["line_comment", "block_comment", "attribute_item"],
    calls: &["call_expression"],
    imports: &["use_declaration"],
};

static JAVASCRIPT: Spec = Spec {
    symbols: &[
        ("class_declaration", K::Class),
        ("abstract_class_declaration", K::Class),
        ("function_declaration", K::Function),
        ("generator_function_declaration", K::Function),
        ("method_definition", K::Method),
        ("variable_declarator", K::Function),
        ("interface_declaration", K::Interface),
        ("type_alias_declaration", K::TypeAlias),
        ("enum_declaration", K::Enum),
        ("internal_module", K::Module),
    ],
    wrappers: &["export_statement", "lexical_declaration", "variable_declaration"],
    attached: &["comment"],
    calls: &["call_expression", "new_expression"],
    imports: &["import_statement"],
};

static GO: Spec = Spec {
    symbols: &[
        ("function_declaration", K::Function),
        ("method_declaration", K::Method),
        ("type_spec", K::TypeAlias),
        ("method_elem", K::Method),
    ],
    wrappers: &["type_declaration"],
    attached: &["comment"],
    calls: &["call_expression"],
    imports: &["import_spec"],
};

static JAVA: Spec = Spec {
    symbols: &[
        ("class_declaration", K::Class),
        ("record_declaration", K::Class),
        ("interface_declaration", K::Interface),
        ("enum_declaration", K::Enum),
        ("method_declaration", K::Method),
        ("constructor_declaration", K::Method),
    ],
    wrappers: &[],
    attached: &["line_comment", "block_comment"],
    calls: &["method_invocation", "object_creation_expression"],
    imports: &["import_declaration"],
};

static C: Spec = Spec {
    symbols: &[
        ("function_definition", K::Function),
        ("struct_specifier", K::Struct),
        ("union_specifier", K::Struct),
        ("class_specifier", K::Class),
        ("enum_specifier", K::Enum),
        ("namespace_definition", K::Module),
    ],
    wrappers: &["template_declaration", "type_definition", "declaration"],
    attached: &["comment"],
    calls: &["call_expression"],
    imports: &["preproc_include"],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_pick_the_grammar() {
        assert_eq!(Language::of_path(Path::new("a/b.py")), Some(Language::Python));
        assert_eq!(Language::of_path(Path::new("x.TSX")), Some(Language::Tsx));
        assert_eq!(Language::of_path(Path::new("x.hpp")), Some(Language::Cpp));
        assert_eq!(Language::of_path(Path::new("README.md")), None);
    }
}
