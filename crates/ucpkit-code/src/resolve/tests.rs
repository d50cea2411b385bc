use super::*;
use crate::{parse, Symbol};

/// The symbols and references of a parsed file, ids numbered from `base`
/// in the order of `symbols` (then `0` for module-level code).
fn code_of(language: Language, text: &str, base: u32) -> (FileCode<u32>, Vec<String>) {
    let parsed = parse(language, text);
    let mut code = FileCode { language, imports: parsed.imports.clone(), symbols: Vec::new(), refs: Vec::new() };
    let mut names = Vec::new();
    fn walk(
        symbols: &[Symbol],
        prefix: &str,
        class: Option<&str>,
        code: &mut FileCode<u32>,
        names: &mut Vec<String>,
        base: u32,
    ) {
        for symbol in symbols {
            let qname = if prefix.is_empty() { symbol.name.clone() } else { format!("{prefix}.{}", symbol.name) };
            let id = base + names.len() as u32;
            names.push(qname.clone());
            code.symbols.push(SymbolRef { qname: qname.clone(), kind: symbol.kind, id });
            let own_class = if symbol.kind.is_container() { Some(qname.as_str()) } else { class };
            for call in &symbol.calls {
                let reference = Reference {
                    from: id,
                    class: own_class.map(str::to_owned),
                    name: call.name.clone(),
                    receiver: call.receiver.clone(),
                    base: false,
                };
                code.refs.push(reference);
            }
            for base_name in &symbol.bases {
                code.refs.push(Reference {
                    from: id,
                    class: None,
                    name: base_name.clone(),
                    receiver: None,
                    base: true,
                });
            }
            walk(&symbol.children, &qname, own_class, code, names, base);
        }
    }
    walk(&parsed.symbols, "", None, &mut code, &mut names, base);
    (code, names)
}

#[test]
fn python_names_resolve_by_scope_then_uniquely() {
    let (models, model_names) = code_of(
        Language::Python,
        "class Base:\n    def save(self):\n        self.clean()\n    def clean(self):\n        pass\n\ndef helper():\n    pass\n",
        100,
    );
    let (views, view_names) = code_of(
        Language::Python,
        "from .models import Base, helper as h\nimport json\n\nclass View(Base):\n    def get(self):\n        h()\n        json.dumps(1)\n        self.save()\n",
        200,
    );
    let files = [("app/models.py", 1, &models), ("app/views.py", 2, &views)];
    let resolution = resolve(&files);
    let id = |names: &[String], base: u32, name: &str| base + names.iter().position(|n| n == name).unwrap() as u32;
    let links = &resolution.links;
    assert!(links.contains(&(2, LinkKind::Imports, 1)));
    assert!(links.contains(&(
        id(&model_names, 100, "Base.save"),
        LinkKind::Calls,
        id(&model_names, 100, "Base.clean")
    )));
    assert!(links.contains(&(id(&view_names, 200, "View.get"), LinkKind::Calls, id(&model_names, 100, "helper"))));
    assert!(links.contains(&(id(&view_names, 200, "View"), LinkKind::Extends, id(&model_names, 100, "Base"))));
    // `self.save()` is inherited: found as the one `save` in the corpus.
    assert!(links.contains(&(id(&view_names, 200, "View.get"), LinkKind::Calls, id(&model_names, 100, "Base.save"))));
    assert_eq!(resolution.imports_resolved, 1);
    assert_eq!(resolution.imports_unresolved, 1, "json is outside the corpus");
    assert_eq!(resolution.calls_unresolved, 1, "json.dumps");
}

#[test]
fn a_name_used_alone_is_not_linked_across_files_without_an_import() {
    let (template, _) = code_of(Language::Python, "class Block:\n    def super(self):\n        pass\n", 10);
    let (model, _) = code_of(
        Language::Python,
        "class M(Base):\n    def save(self):\n        super().save()\n        print(1)\n",
        20,
    );
    let resolution = resolve(&[("template.py", 1, &template), ("model.py", 2, &model)]);
    assert!(resolution.links.iter().all(|(_, kind, _)| *kind != LinkKind::Calls), "{:?}", resolution.links);
}

#[test]
fn ambiguous_names_stay_unlinked() {
    let (a, _) = code_of(Language::Python, "def run():\n    pass\n", 10);
    let (b, _) = code_of(Language::Python, "def run():\n    pass\n", 20);
    let (c, _) = code_of(Language::Python, "def main():\n    run()\n", 30);
    let resolution = resolve(&[("a.py", 1, &a), ("b.py", 2, &b), ("c.py", 3, &c)]);
    assert!(resolution.links.is_empty());
    assert_eq!(resolution.calls_unresolved, 1);
}

#[test]
fn module_paths_follow_each_language() {
    assert_eq!(module_path("pkg/sub/x.py", Language::Python, "..a.b").as_deref(), Some("pkg/a/b"));
    assert_eq!(module_path("x.py", Language::Python, "...a"), None);
    assert_eq!(module_path("src/a/mod.rs", Language::Rust, "super::b").as_deref(), Some("src/b"));
    assert_eq!(module_path("src/lib.rs", Language::Rust, "crate::x::y").as_deref(), Some("x/y"));
    assert_eq!(module_path("web/app.ts", Language::TypeScript, "../lib/util.js").as_deref(), Some("lib/util"));
    assert_eq!(module_path("web/app.ts", Language::TypeScript, "react"), None);
    assert_eq!(module_path("src/a.c", Language::C, "inc/b.h").as_deref(), Some("src/inc/b.h"));
    // Outside mod.rs, lib.rs and main.rs a file is a module of its own name.
    assert_eq!(module_path("src/net/tcp.rs", Language::Rust, "super::addr").as_deref(), Some("src/net/addr"));
    assert_eq!(module_path("src/net/tcp.rs", Language::Rust, "self::x").as_deref(), Some("src/net/tcp/x"));
    assert_eq!(module_path("src/lib.rs", Language::Rust, "log::info"), None, "another crate");
    assert_eq!(module_path("web/a.ts", Language::TypeScript, "./app.component").as_deref(), Some("web/app.component"));
}

#[test]
fn rust_and_javascript_imports_find_their_files() {
    let (lib, _) = code_of(Language::Rust, "mod util;\nuse crate::util::go;\nfn main() { go(); }\n", 10);
    let (util, util_names) = code_of(Language::Rust, "pub fn go() {}\n", 20);
    let (app, _) = code_of(Language::JavaScript, "import { f } from './lib/f';\nf();\n", 30);
    let (f, _) = code_of(Language::JavaScript, "export function f() {}\n", 40);
    let files = [("src/lib.rs", 1, &lib), ("src/util.rs", 2, &util), ("app.js", 3, &app), ("lib/f.js", 4, &f)];
    let resolution = resolve(&files);
    assert!(resolution.links.contains(&(1, LinkKind::Imports, 2)));
    assert!(resolution.links.contains(&(
        10,
        LinkKind::Calls,
        20 + util_names.iter().position(|n| n == "go").unwrap() as u32
    )));
    assert!(resolution.links.contains(&(3, LinkKind::Imports, 4)));
}

#[test]
fn absolute_imports_respect_packages_and_go_modules() {
    let (json, _) = code_of(Language::Python, "def dumps():\n    pass\n", 10);
    let (init, _) = code_of(Language::Python, "", 20);
    let (main, _) = code_of(Language::Python, "import json\nfrom src_pkg import x\n", 30);
    let (x, _) = code_of(Language::Python, "", 40);
    let files = [
        ("compat/json.py", 1, &json),
        ("compat/__init__.py", 2, &init),
        ("app.py", 3, &main),
        ("src/src_pkg/x.py", 4, &x),
    ];
    let resolution = resolve(&files);
    // `compat` is a package: its json.py is compat.json, not the stdlib json.
    assert!(!resolution.links.contains(&(3, LinkKind::Imports, 1)), "{:?}", resolution.links);
    // `src` is no package: a source root.
    assert!(resolution.links.contains(&(3, LinkKind::Imports, 4)), "{:?}", resolution.links);

    let (server, _) = code_of(Language::Go, "package main\nimport (\n\t\"log\"\n\t\"github.com/acme/tool/internal/store\"\n)\nfunc main() { store.Open(); log.Printf() }\n", 50);
    let (store, store_names) = code_of(Language::Go, "package store\nfunc Open() {}\n", 60);
    let (logger, _) = code_of(Language::Go, "package log\nfunc Printf() {}\n", 70);
    let files = [("cmd/main.go", 5, &server), ("internal/store/store.go", 6, &store), ("pkg/log/log.go", 7, &logger)];
    let resolution = resolve(&files);
    assert!(resolution.links.contains(&(5, LinkKind::Imports, 6)));
    assert!(!resolution.links.contains(&(5, LinkKind::Imports, 7)), "the standard library's log");
    let open = 60 + store_names.iter().position(|n| n == "Open").unwrap() as u32;
    assert!(resolution.links.iter().any(|(_, kind, to)| *kind == LinkKind::Calls && *to == open));
    assert!(!resolution.links.iter().any(|(_, kind, to)| *kind == LinkKind::Calls && *to >= 70));
}

#[test]
fn recursive_bases_end() {
    let bases = (0..40).map(|i| format!("B{i}")).collect::<Vec<_>>().join(", ");
    let mut text = format!("class A({bases}):\n    def f(self):\n        self.missing()\n");
    for i in 0..40 {
        text.push_str(&format!("class B{i}({bases}):\n    pass\n"));
    }
    let (code, _) = code_of(Language::Python, &text, 1);
    let resolution = resolve(&[("a.py", 0, &code)]);
    assert_eq!(resolution.calls_unresolved, 1);
}
