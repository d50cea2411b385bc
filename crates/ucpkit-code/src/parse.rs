//! One file's syntax tree to symbols, calls and imports.
//!
//! The walk keeps a scope stack: a container (class, impl, trait ...)
//! collects its members as child symbols, a function keeps everything
//! inside it (nested functions are named in [`Symbol::nested`], their calls
//! are the function's). Ranges are whole lines; a symbol starts at its
//! decorators, `export`, attributes or the comments right above it.

use tree_sitter::{Node, Parser};

use crate::lang::{Language, Spec};
use crate::{Call, Import, ParsedCode, Symbol, SymbolKind};

/// Deepest syntax-tree nesting walked; calls and definitions below it are
/// not read (no real source nests this deep, hostile input may).
const MAX_DEPTH: usize = 256;
/// Longest signature kept, in characters.
const SIGNATURE_CHARS: usize = 240;
/// Longest doc kept, in characters.
const DOC_CHARS: usize = 400;
/// Most base types read of one definition.
const MAX_BASES: usize = 64;

/// Reads one source file's symbols, calls and imports.
pub fn parse(language: Language, text: &str) -> ParsedCode {
    let mut parser = Parser::new();
    if parser.set_language(&language.grammar()).is_err() {
        return ParsedCode::default();
    }
    let Some(tree) = parser.parse(text, None) else {
        return ParsedCode::default();
    };
    let root = tree.root_node();
    let mut walk = Walk { language, spec: language.spec(), src: text, imports: Vec::new(), wrapper: None };
    let mut scope = Scope::new(None, false);
    walk.children(root, &mut scope, 0);
    let lines = u32::try_from(text.lines().count()).unwrap_or(u32::MAX).max(1);
    let (symbols, _) = settle_members(scope.symbols, 1, lines);
    ParsedCode { symbols, imports: walk.imports, module_calls: scope.calls, has_errors: root.has_error() }
}

/// Where the definitions and calls found go.
struct Scope {
    /// The container whose members these are.
    container: Option<SymbolKind>,
    /// Inside a function or another leaf definition: definitions found are
    /// part of it.
    leaf: bool,
    symbols: Vec<Symbol>,
    calls: Vec<(u32, Call)>,
    nested: Vec<String>,
}

impl Scope {
    fn new(container: Option<SymbolKind>, leaf: bool) -> Scope {
        Scope { container, leaf, symbols: Vec::new(), calls: Vec::new(), nested: Vec::new() }
    }
}

struct Walk<'s> {
    language: Language,
    spec: &'static Spec,
    src: &'s str,
    imports: Vec<Import>,
    /// The outermost wrapper being walked, whose range the next
    /// definition takes on.
    wrapper: Option<Node<'s>>,
}

impl<'s> Walk<'s> {
    fn text(&self, node: Node<'_>) -> &'s str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    fn field_text(&self, node: Node<'_>, field: &str) -> Option<&'s str> {
        node.child_by_field_name(field).map(|n| self.text(n))
    }

    fn children(&mut self, node: Node<'s>, scope: &mut Scope, depth: usize) {
        if depth >= MAX_DEPTH {
            return;
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'s>> = node.named_children(&mut cursor).collect();
        for child in children {
            self.visit(child, scope, depth + 1);
        }
    }

    fn visit(&mut self, node: Node<'s>, scope: &mut Scope, depth: usize) {
        let kind = node.kind();
        if self.spec.imports.contains(&kind) {
            self.read_import(node);
            return;
        }
        if self.spec.calls.contains(&kind) {
            if let Some(call) = self.read_call(node) {
                scope.calls.push((line_of(node), call));
            }
        }
        if let Some(kind) = self.symbol_kind(node) {
            let wrapper = self.wrapper.take();
            self.define(node, kind, wrapper, scope, depth);
            return;
        }
        if kind == "mod_item" {
            // `mod name;` brings in a file.
            if let Some(name) = self.field_text(node, "name") {
                let alias = Some(name.to_owned());
                self.imports.push(Import { module: format!("self::{name}"), names: Vec::new(), alias, star: false });
            }
            return;
        }
        if self.spec.wrappers.contains(&kind) {
            let outer = self.wrapper.is_none();
            if outer {
                self.wrapper = Some(node);
            }
            self.children(node, scope, depth);
            if outer {
                self.wrapper = None;
            }
            return;
        }
        self.children(node, scope, depth);
    }

    /// The kind of symbol `node` defines, if it defines one.
    fn symbol_kind(&self, node: Node<'_>) -> Option<SymbolKind> {
        let kind = node.kind();
        let (_, symbol) = self.spec.symbols.iter().find(|(k, _)| *k == kind)?;
        match kind {
            "variable_declarator" => {
                let value = node.child_by_field_name("value")?.kind();
                let function =
                    matches!(value, "arrow_function" | "function_expression" | "function" | "generator_function");
                function.then_some(SymbolKind::Function)
            }
            "type_spec" => Some(match node.child_by_field_name("type").map(|t| t.kind()) {
                Some("struct_type") => SymbolKind::Struct,
                Some("interface_type") => SymbolKind::Interface,
                _ => SymbolKind::TypeAlias,
            }),
            "mod_item" | "struct_specifier" | "union_specifier" | "class_specifier" | "enum_specifier" => {
                node.child_by_field_name("body").map(|_| *symbol)
            }
            _ => Some(*symbol),
        }
        .filter(|_| self.name(node).is_some())
    }

    /// The symbol's name.
    fn name(&self, node: Node<'_>) -> Option<String> {
        let name = match node.kind() {
            "impl_item" => strip_generics(self.field_text(node, "type")?).to_owned(),
            "function_definition" if matches!(self.language, Language::C | Language::Cpp) => {
                let mut declarator = node.child_by_field_name("declarator")?;
                while let Some(inner) = declarator.child_by_field_name("declarator") {
                    declarator = inner;
                }
                self.text(declarator).to_owned()
            }
            _ => self.field_text(node, "name")?.to_owned(),
        };
        (!name.is_empty() && !name.contains('\n')).then_some(name)
    }

    fn define(&mut self, node: Node<'s>, kind: SymbolKind, wrapper: Option<Node<'s>>, scope: &mut Scope, depth: usize) {
        let name = self.name(node).unwrap_or_default();
        if scope.leaf {
            if kind.is_callable() {
                scope.nested.push(name);
            }
            self.children(node, scope, depth);
            return;
        }
        let kind = match (kind, scope.container) {
            (SymbolKind::Function, Some(container)) if container != SymbolKind::Module => SymbolKind::Method,
            (kind, _) => kind,
        };
        let outer = wrapper.unwrap_or(node);
        let (start, attached) = self.attached_start(outer);
        let end = outer.end_position().row.max(node.end_position().row) as u32 + 1;
        let mut inner = Scope::new(kind.is_container().then_some(kind), !kind.is_container());
        self.children(node, &mut inner, depth);
        let symbol = Symbol {
            kind,
            owner: self.owner(node),
            lines: (start, end),
            signature: self.signature(node),
            doc: self.doc(node, outer, attached),
            children: inner.symbols,
            nested: inner.nested,
            calls: inner.calls.into_iter().map(|(_, call)| call).collect(),
            bases: self.bases(node),
            name,
        };
        scope.symbols.push(symbol);
    }

    /// The first line of a definition: that of the comments and attributes
    /// right above it (no blank line between), else its own; and the byte
    /// where the first of those starts.
    fn attached_start(&self, node: Node<'_>) -> (u32, Option<usize>) {
        let mut start = node.start_position().row;
        let mut first_byte = None;
        let mut previous = node.prev_named_sibling();
        while let Some(sibling) = previous.filter(|s| self.spec.attached.contains(&s.kind())) {
            if sibling.end_position().row + 1 < start {
                break;
            }
            // A comment that ends a line of code belongs to that code.
            let ends_code = |p: Node<'_>| {
                !self.spec.attached.contains(&p.kind()) && p.end_position().row == sibling.start_position().row
            };
            if sibling.prev_sibling().is_some_and(ends_code) {
                break;
            }
            start = sibling.start_position().row;
            first_byte = Some(sibling.start_byte());
            previous = sibling.prev_named_sibling();
        }
        (start as u32 + 1, first_byte)
    }

    /// The type a Go method's receiver names.
    fn owner(&self, node: Node<'_>) -> Option<String> {
        let receiver = node.child_by_field_name("receiver")?;
        first_of_kind(receiver, "type_identifier").map(|n| self.text(n).to_owned())
    }

    fn signature(&self, node: Node<'_>) -> String {
        // Up to the body, comments before it left out.
        let end = node.child_by_field_name("body").map_or(node.end_byte(), |body| {
            let mut cursor = node.walk();
            node.children(&mut cursor)
                .take_while(|c| c.start_byte() < body.start_byte())
                .filter(|c| !self.spec.attached.contains(&c.kind()))
                .map(|c| c.end_byte())
                .max()
                .unwrap_or(body.start_byte())
        });
        let head = self.src.get(node.start_byte()..end).unwrap_or("");
        let head = if node.child_by_field_name("body").is_some() { head } else { head.lines().next().unwrap_or("") };
        let collapsed = head.split_whitespace().collect::<Vec<_>>().join(" ");
        cut(collapsed.trim_end_matches(['{', ' ']), SIGNATURE_CHARS)
    }

    /// A Python docstring, else the comments right above the definition.
    fn doc(&self, node: Node<'_>, outer: Node<'_>, attached: Option<usize>) -> Option<String> {
        if self.language == Language::Python {
            let body = node.child_by_field_name("body")?;
            let first = body.named_child(0).filter(|n| n.kind() == "expression_statement")?;
            let string = first.named_child(0).filter(|n| n.kind() == "string")?;
            let text = self.text(string).trim_start_matches(|c: char| c.is_ascii_alphabetic());
            let text = text.trim_matches(|c| c == '"' || c == '\'').trim();
            return (!text.is_empty()).then(|| cut(text, DOC_CHARS));
        }
        let comments = self.src.get(attached?..outer.start_byte())?;
        let text = comments
            .lines()
            .map(|l| l.trim().trim_start_matches(['/', '*', '#', '!']).trim_end_matches("*/").trim())
            .filter(|l| !l.is_empty() && !l.starts_with('['))
            .collect::<Vec<_>>()
            .join(" ");
        (!text.is_empty()).then(|| cut(&text, DOC_CHARS))
    }

    /// Names of the types a definition extends or implements.
    fn bases(&self, node: Node<'_>) -> Vec<String> {
        let clauses: Vec<Node<'_>> = match node.kind() {
            "class_definition" => node.child_by_field_name("superclasses").into_iter().collect(),
            "impl_item" => node.child_by_field_name("trait").into_iter().collect(),
            _ => {
                let mut cursor = node.walk();
                let wanted =
                    ["class_heritage", "superclass", "super_interfaces", "base_class_clause", "extends_type_clause"];
                node.children(&mut cursor).filter(|c| wanted.contains(&c.kind())).collect()
            }
        };
        let mut names: Vec<String> = Vec::new();
        let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut add = |name: &str| {
            if names.len() < MAX_BASES && !BASE_KEYWORDS.contains(&name) && seen.insert(name.to_owned()) {
                names.push(name.to_owned());
            }
        };
        for clause in clauses {
            if clause.kind() == "argument_list" {
                let mut cursor = clause.walk();
                for argument in clause.named_children(&mut cursor) {
                    if matches!(argument.kind(), "identifier" | "attribute") {
                        if let Some(name) = last_identifier(self.text(argument)) {
                            add(&name);
                        }
                    }
                }
                continue;
            }
            for word in identifiers(strip_generics(self.text(clause))) {
                add(word);
            }
        }
        names
    }

    fn read_call(&self, node: Node<'_>) -> Option<Call> {
        let callee =
            ["function", "constructor", "type"].iter().find_map(|f| node.child_by_field_name(f)).unwrap_or(node);
        let callee = match callee.kind() {
            "generic_function" | "template_function" => {
                callee.child_by_field_name("function").or_else(|| callee.child_by_field_name("name"))?
            }
            _ => callee,
        };
        let name_node = ["attribute", "property", "field", "name"].iter().find_map(|f| callee.child_by_field_name(f));
        let (name, receiver) = match name_node {
            Some(name) => {
                // A receiver that is an expression is kept as "".
                let receiver = ["object", "value", "operand", "argument", "path", "scope"]
                    .iter()
                    .find_map(|f| callee.child_by_field_name(f))
                    .map(|r| self.text(r))
                    .map(|r| if is_identifier(r) { r } else { "" });
                (self.text(name), receiver)
            }
            None if callee.named_child_count() == 0 => (self.text(callee), None),
            None => return None,
        };
        is_identifier(name).then(|| Call { name: name.to_owned(), receiver: receiver.map(str::to_owned) })
    }

    fn read_import(&mut self, node: Node<'_>) {
        match self.language {
            Language::Python => self.python_import(node),
            Language::JavaScript | Language::TypeScript | Language::Tsx => self.js_import(node),
            Language::Rust => {
                if let Some(argument) = self.field_text(node, "argument") {
                    self.imports.extend(rust_use(argument));
                }
            }
            Language::Go => {
                let Some(path) = self.field_text(node, "path") else { return };
                let module = path.trim_matches(['"', '`']).to_owned();
                // `import . "x"` brings every name in; `import _ "x"` none.
                let name = self.field_text(node, "name");
                let star = name == Some(".");
                let alias = match name {
                    Some("." | "_") => None,
                    Some(name) => Some(name.to_owned()),
                    None => module.rsplit('/').next().map(str::to_owned),
                };
                self.imports.push(Import { module, names: Vec::new(), alias, star });
            }
            Language::Java => {
                let text = self.text(node).trim_start_matches("import").trim().trim_end_matches(';').trim();
                let path = text.strip_prefix("static ").unwrap_or(text).trim();
                let (module, name) = path.rsplit_once('.').unwrap_or(("", path));
                let star = name == "*";
                let names = if star { Vec::new() } else { vec![(name.to_owned(), name.to_owned())] };
                self.imports.push(Import { module: module.to_owned(), names, alias: None, star });
            }
            Language::C | Language::Cpp => {
                let Some(path) = node.child_by_field_name("path").filter(|p| p.kind() == "string_literal") else {
                    return;
                };
                let module = self.text(path).trim_matches('"').to_owned();
                self.imports.push(Import { module, names: Vec::new(), alias: None, star: true });
            }
        }
    }

    fn python_import(&mut self, node: Node<'_>) {
        let aliased = |n: Node<'_>| -> (String, Option<String>) {
            match n.kind() {
                "aliased_import" => (
                    self.field_text(n, "name").unwrap_or("").to_owned(),
                    self.field_text(n, "alias").map(str::to_owned),
                ),
                _ => (self.text(n).to_owned(), None),
            }
        };
        let mut cursor = node.walk();
        let names: Vec<Node<'_>> = node.children_by_field_name("name", &mut cursor).collect();
        if node.kind() == "import_statement" {
            let imports: Vec<Import> = names
                .into_iter()
                .map(|name| {
                    // `import a.b` binds `a`, the package, not `a.b`: only
                    // an alias binds the module named.
                    let (module, alias) = aliased(name);
                    let alias = alias.or_else(|| (!module.contains('.')).then(|| module.clone()));
                    Import { module, names: Vec::new(), alias, star: false }
                })
                .collect();
            self.imports.extend(imports);
            return;
        }
        let module = self.field_text(node, "module_name").unwrap_or("").to_owned();
        let mut cursor = node.walk();
        let star = node.children(&mut cursor).any(|c| c.kind() == "wildcard_import");
        let names: Vec<(String, String)> = names
            .into_iter()
            .map(|n| {
                let (remote, alias) = aliased(n);
                (alias.unwrap_or_else(|| remote.clone()), remote)
            })
            .collect();
        self.imports.push(Import { module, names, alias: None, star });
    }

    fn js_import(&mut self, node: Node<'_>) {
        let Some(source) = self.field_text(node, "source") else { return };
        let module = source.trim_matches(['"', '\'', '`']).to_owned();
        let mut import = Import { module, names: Vec::new(), alias: None, star: false };
        let mut stack: Vec<Node<'_>> = Vec::new();
        let mut cursor = node.walk();
        stack.extend(node.named_children(&mut cursor).filter(|c| c.kind() == "import_clause"));
        while let Some(n) = stack.pop() {
            match n.kind() {
                "identifier" => import.names.push((self.text(n).to_owned(), "default".to_owned())),
                "namespace_import" => import.alias = first_of_kind(n, "identifier").map(|i| self.text(i).to_owned()),
                "import_specifier" => {
                    let remote = self.field_text(n, "name").unwrap_or("").to_owned();
                    let local = self.field_text(n, "alias").map_or_else(|| remote.clone(), str::to_owned);
                    import.names.push((local, remote));
                }
                _ => {
                    let mut cursor = n.walk();
                    stack.extend(n.named_children(&mut cursor));
                }
            }
        }
        self.imports.push(import);
    }
}

/// Words of a base clause that are not type names.
const BASE_KEYWORDS: &[&str] =
    &["extends", "implements", "public", "private", "protected", "virtual", "override", "final", "class", "struct"];

/// A Rust `use` argument as imports: `a::b::{C, d::E as F}` brings `C` and
/// `F` from `a::b`; `a::b::*` every name of `a::b`.
fn rust_use(argument: &str) -> Vec<Import> {
    let text = argument.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = text.replace(" ::", "::").replace(":: ", "::");
    let (prefix, items): (String, Vec<String>) = match text.split_once("::{") {
        Some((prefix, rest)) => {
            let rest = rest.strip_suffix('}').unwrap_or(rest);
            (prefix.to_owned(), rest.split(',').map(|i| i.trim().to_owned()).collect())
        }
        None => {
            // `a::B as C`: the alias goes with the last segment.
            let (path, alias) = match text.split_once(" as ") {
                Some((path, alias)) => (path.trim(), Some(alias.trim())),
                None => (text.as_str(), None),
            };
            let (prefix, item) = path.rsplit_once("::").unwrap_or(("", path));
            let item = match alias {
                Some(alias) => format!("{item} as {alias}"),
                None => item.to_owned(),
            };
            (prefix.to_owned(), vec![item])
        }
    };
    let mut names = Vec::new();
    let mut star = false;
    for item in items.iter().filter(|i| !i.is_empty() && !i.contains('{') && !i.contains('}')) {
        let (path, alias) = match item.split_once(" as ") {
            Some((path, alias)) => (path.trim(), Some(alias.trim())),
            None => (item.as_str(), None),
        };
        let remote = path.rsplit("::").next().unwrap_or(path);
        match remote {
            "*" => star = true,
            "self" => {}
            _ => names.push((alias.unwrap_or(remote).to_owned(), remote.to_owned())),
        }
    }
    vec![Import { module: prefix, names, alias: None, star }]
}

/// Symbols as nested line ranges: a member starts below its container's
/// first line and after the member before it ends. A member that breaks
/// that becomes part of the member it overlaps (`a=function(){}, b=...`
/// on one line) or of its container (`class A: def f(): ...`).
fn settle(mut symbol: Symbol) -> Symbol {
    let children = std::mem::take(&mut symbol.children);
    let (kept, stray) = settle_members(children, symbol.lines.0 + 1, symbol.lines.1);
    symbol.children = kept;
    for member in stray {
        absorb(&mut symbol, member);
    }
    symbol
}

/// Members kept in `from..=to` in order without overlaps, and those
/// that fit nowhere (before `from` or past `to`).
fn settle_members(members: Vec<Symbol>, from: u32, to: u32) -> (Vec<Symbol>, Vec<Symbol>) {
    let mut kept: Vec<Symbol> = Vec::new();
    let mut stray = Vec::new();
    for member in members.into_iter().map(settle) {
        let (start, end) = member.lines;
        match kept.last_mut() {
            Some(previous) if start <= previous.lines.1 => {
                previous.lines.1 = previous.lines.1.max(end.min(to));
                absorb(previous, member);
            }
            _ if start < from || end > to => stray.push(member),
            _ => kept.push(member),
        }
    }
    (kept, stray)
}

/// Makes a member part of its container: its calls and nested functions.
fn absorb(into: &mut Symbol, member: Symbol) {
    if member.kind.is_callable() {
        into.nested.push(member.name);
    }
    into.calls.extend(member.calls);
    into.nested.extend(member.nested);
    for child in member.children {
        absorb(into, child);
    }
}

fn line_of(node: Node<'_>) -> u32 {
    node.start_position().row as u32 + 1
}

fn first_of_kind<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == kind {
            return Some(n);
        }
        let mut cursor = n.walk();
        let children: Vec<Node<'t>> = n.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    None
}

fn is_identifier(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$')
}

/// `Foo<T>` → `Foo`.
fn strip_generics(text: &str) -> &str {
    text.split_once('<').map_or(text, |(head, _)| head).trim()
}

/// The identifiers of a text, in order.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
}

/// `a.b.C` → `C`.
fn last_identifier(text: &str) -> Option<String> {
    identifiers(text).last().map(str::to_owned)
}

fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests;
