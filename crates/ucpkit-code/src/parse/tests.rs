use super::*;

fn names(symbols: &[Symbol]) -> Vec<(String, SymbolKind, (u32, u32))> {
    symbols.iter().map(|s| (s.name.clone(), s.kind, s.lines)).collect()
}

#[test]
fn python_classes_methods_decorators_and_docstrings() {
    let src = r#"import os.path
from .base import Base as B, helper

# A thing.
@dataclass
class Thing(B, metaclass=Meta):
    """Holds stuff."""
    x = 1

    @property
    def size(self):
        def inner():
            pass
        return self.count(helper(x))

def top(a, b) -> int:
    return os.path.join(a, b)

main()
"#;
    let parsed = parse(Language::Python, src);
    assert_eq!(
        names(&parsed.symbols),
        vec![("Thing".into(), SymbolKind::Class, (4, 14)), ("top".into(), SymbolKind::Function, (16, 17)),]
    );
    let thing = &parsed.symbols[0];
    assert_eq!(thing.doc.as_deref(), Some("Holds stuff."));
    assert_eq!(thing.bases, vec!["B"]);
    assert_eq!(thing.signature, "class Thing(B, metaclass=Meta):");
    let size = &thing.children[0];
    assert_eq!((size.name.as_str(), size.kind, size.lines), ("size", SymbolKind::Method, (10, 14)));
    assert_eq!(size.nested, vec!["inner"]);
    let called: Vec<(&str, Option<&str>)> =
        size.calls.iter().map(|c| (c.name.as_str(), c.receiver.as_deref())).collect();
    assert_eq!(called, vec![("count", Some("self")), ("helper", None)]);
    assert_eq!(parsed.symbols[1].calls[0], Call { name: "join".into(), receiver: Some(String::new()) });
    assert_eq!(parsed.module_calls, vec![(19, Call { name: "main".into(), receiver: None })]);
    assert_eq!(parsed.imports[0], Import { module: "os.path".into(), names: vec![], alias: None, star: false });
    assert_eq!(parsed.imports[1].module, ".base");
    assert_eq!(parsed.imports[1].names, vec![("B".into(), "Base".into()), ("helper".into(), "helper".into())]);
}

#[test]
fn rust_impls_traits_and_doc_comments() {
    let src = r#"use crate::a::{B, c::D as E};
mod util;

/// A point.
#[derive(Debug)]
pub struct P { x: i32 }

impl Display for P<T> {
    /// Shows it.
    fn fmt(&self) -> String { self.x.show(); util::go() }
}
"#;
    let parsed = parse(Language::Rust, src);
    assert_eq!(
        names(&parsed.symbols),
        vec![("P".into(), SymbolKind::Struct, (4, 6)), ("P".into(), SymbolKind::Impl, (8, 11)),]
    );
    assert_eq!(parsed.symbols[0].doc.as_deref(), Some("A point."));
    let imp = &parsed.symbols[1];
    assert_eq!(imp.bases, vec!["Display"]);
    assert_eq!(names(&imp.children), vec![("fmt".into(), SymbolKind::Method, (9, 10))]);
    let calls: Vec<&str> = imp.children[0].calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(calls, vec!["show", "go"]);
    assert_eq!(imp.children[0].calls[1].receiver.as_deref(), Some("util"));
    assert_eq!(parsed.imports[0].module, "crate::a");
    assert_eq!(parsed.imports[0].names, vec![("B".into(), "B".into()), ("E".into(), "D".into())]);
    assert_eq!(parsed.imports[1].module, "self::util");
}

#[test]
fn javascript_exports_arrows_and_classes() {
    let src =
        "import def, { a as b } from './lib';\n\nexport class A extends Base {\n  run() { return helper(); }\n}\n\n\
const f = (x) => g(x);\nlet n = 3;\n";
    let parsed = parse(Language::JavaScript, src);
    assert_eq!(
        names(&parsed.symbols),
        vec![("A".into(), SymbolKind::Class, (3, 5)), ("f".into(), SymbolKind::Function, (7, 7)),]
    );
    assert_eq!(parsed.symbols[0].bases, vec!["Base"]);
    assert_eq!(names(&parsed.symbols[0].children), vec![("run".into(), SymbolKind::Method, (4, 4))]);
    assert_eq!(parsed.imports[0].module, "./lib");
    assert!(parsed.imports[0].names.contains(&("b".into(), "a".into())));
    assert!(parsed.imports[0].names.contains(&("def".into(), "default".into())));
}

#[test]
fn go_java_and_c_definitions() {
    let go = "package x\n\nimport \"fmt\"\n\ntype T struct{}\n\n// Run runs.\nfunc (t *T) Run() { fmt.Println() }\n";
    let parsed = parse(Language::Go, go);
    assert_eq!(
        names(&parsed.symbols),
        vec![("T".into(), SymbolKind::Struct, (5, 5)), ("Run".into(), SymbolKind::Method, (7, 8)),]
    );
    assert_eq!(parsed.symbols[1].owner.as_deref(), Some("T"));
    assert_eq!(parsed.imports[0].alias.as_deref(), Some("fmt"));

    let java = "import a.b.C;\nclass K extends C implements I {\n  K() {}\n  void m() { other(); }\n}\n";
    let parsed = parse(Language::Java, java);
    assert_eq!(parsed.symbols[0].bases, vec!["C", "I"]);
    assert_eq!(
        names(&parsed.symbols[0].children),
        vec![("K".into(), SymbolKind::Method, (3, 3)), ("m".into(), SymbolKind::Method, (4, 4)),]
    );
    let c = Import { module: "a.b".into(), names: vec![("C".into(), "C".into())], alias: None, star: false };
    assert_eq!(parsed.imports[0], c);

    let c =
        "#include \"util.h\"\n#include <stdio.h>\nstruct s { int a; };\nstatic int *f(int x) {\n  return g(x);\n}\n";
    let parsed = parse(Language::C, c);
    assert_eq!(
        names(&parsed.symbols),
        vec![("s".into(), SymbolKind::Struct, (3, 3)), ("f".into(), SymbolKind::Function, (4, 6)),]
    );
    assert_eq!(parsed.imports.len(), 1);
}

#[test]
fn a_comment_ending_a_line_of_code_stays_with_that_code() {
    let parsed = parse(Language::Rust, "impl Foo { // c\n    fn new() {}\n}\nfn a() {\n} // end a\nfn b() {}\n");
    assert_eq!(names(&parsed.symbols[0].children), vec![("new".into(), SymbolKind::Method, (2, 2))]);
    assert_eq!(
        names(&parsed.symbols[1..]),
        vec![("a".into(), SymbolKind::Function, (4, 5)), ("b".into(), SymbolKind::Function, (6, 6)),]
    );
    let parsed = parse(Language::C, "int x = 5; // n\nint f(void) { return 1; }\n");
    assert_eq!(parsed.symbols[0].lines, (2, 2));
    assert_eq!(parsed.symbols[0].doc, None);
}

#[test]
fn repeated_bases_are_read_once() {
    let bases = (0..200).map(|_| "A").collect::<Vec<_>>().join(", ");
    let parsed = parse(Language::Python, &format!("class A({bases}):\n    def f(self):\n        self.x()\n"));
    assert_eq!(parsed.symbols[0].bases, vec!["A"]);
}

#[test]
fn rust_uses_keep_names_holding_as_and_globs() {
    let parsed =
        parse(Language::Rust, "use std::collections::HashMap;\nuse crate::db::{Database, Class as K};\nuse a::b::*;\n");
    assert_eq!(parsed.imports[0].names, vec![("HashMap".into(), "HashMap".into())]);
    assert_eq!(parsed.imports[1].names, vec![("Database".into(), "Database".into()), ("K".into(), "Class".into())]);
    assert!(parsed.imports[2].star && parsed.imports[2].module == "a::b");
    let parsed = parse(Language::Python, "from m import *\nimport pkg\n");
    assert!(parsed.imports[0].star);
    assert_eq!(parsed.imports[1].alias.as_deref(), Some("pkg"));
}

#[test]
fn one_line_members_stay_in_their_container() {
    let parsed = parse(Language::Python, "class A: x = f()\nclass B:  # note\n    def g(self): pass\n");
    assert_eq!(parsed.symbols[1].signature, "class B:");
    assert!(parsed.symbols[0].children.is_empty());
    assert_eq!(parsed.symbols[1].children.len(), 1);
}

proptest::proptest! {
    #[test]
    fn any_text_parses_into_nested_ranges(text in "[a-z():\\n {}.=#@]{0,300}") {
        for language in [Language::Python, Language::Rust, Language::JavaScript, Language::C] {
            let parsed = parse(language, &text);
            let lines = text.lines().count().max(1) as u32;
            let mut stack: Vec<(&Symbol, (u32, u32))> = parsed.symbols.iter().map(|s| (s, (1, lines))).collect();
            while let Some((symbol, (low, high))) = stack.pop() {
                proptest::prop_assert!(low <= symbol.lines.0 && symbol.lines.0 <= symbol.lines.1 && symbol.lines.1 <= high);
                stack.extend(symbol.children.iter().map(|c| (c, (symbol.lines.0 + 1, symbol.lines.1))));
            }
        }
    }
}
