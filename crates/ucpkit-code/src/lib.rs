//! Code as a graph. [`parse`] reads one source file with its tree-sitter
//! grammar into [`Symbol`]s (classes, structs, traits, functions, methods
//! ... nested as in the source, each with its exact line range, signature
//! and doc), the calls made inside each, the file's imports and each class's
//! bases. [`resolve`] links those names across a repository: imports to
//! files, calls and bases to the symbols they name, by scope first and
//! only when the name is unambiguous. [`map`] ranks a repository's files
//! and symbols by a PageRank personalized to a question, for an outline
//! under a token budget.
//!
//! The crate knows languages, not documents: `ucpkit-ingest` turns symbols
//! into blocks and resolved references into edges.
//!
//! The grammars (C code) come with the default `grammars` feature; without
//! it (the WebAssembly build) there is no [`parse`], and what only parsing
//! reads of a language is left unused.
#![cfg_attr(not(feature = "grammars"), allow(dead_code))]

use serde::{Deserialize, Serialize};

mod lang;
pub mod map;
#[cfg(feature = "grammars")]
mod parse;
pub mod resolve;

pub use lang::Language;
#[cfg(feature = "grammars")]
pub use parse::parse;

/// What kind of definition a symbol is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    /// A module or namespace with a body.
    Module,
    /// A class.
    Class,
    /// A struct (or a union).
    Struct,
    /// An enum.
    Enum,
    /// A trait.
    Trait,
    /// An interface.
    Interface,
    /// A Rust `impl` block.
    Impl,
    /// A free function.
    Function,
    /// A function defined in a class, impl, trait or interface.
    Method,
    /// A constant or static.
    Constant,
    /// A type alias.
    TypeAlias,
}

impl SymbolKind {
    /// Whether definitions nested inside are symbols of their own (a
    /// function's nested functions are part of it).
    pub fn is_container(self) -> bool {
        matches!(
            self,
            SymbolKind::Module
                | SymbolKind::Class
                | SymbolKind::Struct
                | SymbolKind::Enum
                | SymbolKind::Trait
                | SymbolKind::Interface
                | SymbolKind::Impl
        )
    }

    /// Whether this is a type others can extend or implement.
    pub fn is_type(self) -> bool {
        matches!(
            self,
            SymbolKind::Class | SymbolKind::Struct | SymbolKind::Enum | SymbolKind::Trait | SymbolKind::Interface
        )
    }

    /// Whether this is a function or a method.
    pub fn is_callable(self) -> bool {
        matches!(self, SymbolKind::Function | SymbolKind::Method)
    }

    /// The kind's name, as block roles spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Module => "module",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Enum => "enum",
            SymbolKind::Trait => "trait",
            SymbolKind::Interface => "interface",
            SymbolKind::Impl => "impl",
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Constant => "constant",
            SymbolKind::TypeAlias => "type_alias",
        }
    }
}

/// A call site: `name(...)`, `receiver.name(...)` or `Path::name(...)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The called name (the last segment).
    pub name: String,
    /// What it was called on: a plain name (`self`, `this`, a module
    /// alias, a type), or `""` for an expression (`a.b().c()`).
    pub receiver: Option<String>,
}

/// One definition, nested as in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// What it defines.
    pub kind: SymbolKind,
    /// Its name as written (`Type` for a Go method's receiver is in
    /// `owner`).
    pub name: String,
    /// The type a method belongs to when it is not nested in it (Go
    /// receivers).
    pub owner: Option<String>,
    /// 1-based inclusive line range, from its first decorator, attribute
    /// or doc comment to its last line.
    pub lines: (u32, u32),
    /// Its declaration up to the body, whitespace collapsed.
    pub signature: String,
    /// Its docstring or leading doc comment.
    pub doc: Option<String>,
    /// Definitions nested inside (only in containers).
    pub children: Vec<Symbol>,
    /// Names of functions defined inside this function's body (which stay
    /// part of it).
    pub nested: Vec<String>,
    /// Calls made in its own lines (not in its children's).
    pub calls: Vec<Call>,
    /// Names of the types it extends or implements.
    pub bases: Vec<String>,
}

/// An import statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// The module as written (`a.b`, `..c`, `./x`, `crate::a`, `fmt`,
    /// `x/y.h`).
    pub module: String,
    /// `(local name, imported name)` of names brought in from the module.
    pub names: Vec<(String, String)>,
    /// The local name the module itself is bound to, if any.
    pub alias: Option<String>,
    /// Every name of the module is brought in (`from m import *`,
    /// `use m::*`, `import a.b.*`, `#include`).
    #[serde(default)]
    pub star: bool,
}

/// What one file defines, calls and imports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedCode {
    /// Top-level definitions in source order.
    pub symbols: Vec<Symbol>,
    /// The file's imports.
    pub imports: Vec<Import>,
    /// Calls made outside every symbol, with their 1-based line.
    pub module_calls: Vec<(u32, Call)>,
    /// Whether the grammar found syntax errors (symbols are still read
    /// from the parts that parsed).
    pub has_errors: bool,
}
