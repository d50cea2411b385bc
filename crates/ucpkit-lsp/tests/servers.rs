//! The client against real language servers, which scripts/setup-lsp-servers
//! installs: python-lsp-server (its path in `UCP_TEST_PYLSP`) and
//! rust-analyzer (`UCP_TEST_RUST_ANALYZER`). Ignored unless scripts/test
//! runs them with what they need.

use std::path::Path;

use ucpkit_lsp::{Lsp, LspConfig, LspError, ServerConfig};

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn config_with(name: &str, command: Vec<String>, extensions: &[&str]) -> LspConfig {
    let mut config = LspConfig::default();
    let extensions = extensions.iter().map(|e| (*e).to_owned()).collect();
    config.servers.insert(name.to_owned(), ServerConfig { command, extensions, install: None });
    config
}

fn python_project() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write(
        root.path(),
        "pkg/lib.py",
        "def greet(name):\n    \"\"\"Say hi to someone.\"\"\"\n    return 'hi ' + name\n\n\nclass Box:\n    def open(self):\n        return greet('box')\n",
    );
    write(root.path(), "app.py", "from pkg.lib import greet, Box\n\nprint(greet('x'))  # café ✓\nBox().open()\n");
    write(root.path(), "pkg/__init__.py", "");
    root
}

#[test]
#[ignore = "needs UCP_TEST_PYLSP: scripts/test installs python-lsp-server and runs this"]
fn pylsp_answers_definition_references_hover_and_symbols() {
    let pylsp = std::env::var("UCP_TEST_PYLSP").expect("UCP_TEST_PYLSP is not set (scripts/test sets it)");
    let root = python_project();
    let lsp = Lsp::new(root.path(), config_with("python", vec![pylsp], &["py"])).unwrap();

    // `greet` in `print(greet('x'))`: line 3, column 7.
    let definition = lsp.definition("app.py", 3, 7).unwrap();
    assert_eq!(definition.len(), 1, "{definition:?}");
    assert_eq!((definition[0].path.as_str(), definition[0].line, definition[0].column), ("pkg/lib.py", 1, 5));
    assert_eq!(definition[0].code, "def greet(name):");

    let references = lsp.references("pkg/lib.py", 1, 5).unwrap();
    let places: Vec<(String, u32)> = references.iter().map(|p| (p.path.clone(), p.line)).collect();
    for expected in [("pkg/lib.py", 1), ("pkg/lib.py", 8), ("app.py", 3)] {
        assert!(places.contains(&(expected.0.to_owned(), expected.1)), "{expected:?} not in {places:?}");
    }

    let hover = lsp.hover("app.py", 3, 7).unwrap().expect("a hover");
    assert!(hover.contains("Say hi to someone."), "{hover}");

    let symbols = lsp.document_symbols("pkg/lib.py").unwrap();
    let names: Vec<(&str, &str)> = symbols.iter().map(|s| (s.name.as_str(), s.kind.as_str())).collect();
    assert!(names.contains(&("greet", "function")), "{names:?}");
    assert!(names.contains(&("Box", "class")), "{names:?}");
    assert!(symbols.iter().any(|s| s.name == "open" && s.place.line == 7), "{symbols:?}");

    // A file that changed on disk is sent again before the next request.
    write(root.path(), "app.py", "\n\nfrom pkg.lib import greet\nprint(greet('x'))\n");
    let definition = lsp.definition("app.py", 4, 7).unwrap();
    assert_eq!(definition[0].line, 1);

    // A server that is gone is started again on the next request.
    lsp.shutdown();
    assert_eq!(lsp.definition("app.py", 4, 7).unwrap()[0].path, "pkg/lib.py");

    // Bad input is refused before any request.
    assert!(matches!(lsp.definition("app.py", 99, 1), Err(LspError::Input(_))));
    assert!(matches!(lsp.definition("../outside.py", 1, 1), Err(LspError::Input(_))));
    assert!(matches!(lsp.definition("README.md", 1, 1), Err(LspError::Input(_) | LspError::NoServer(_))));
}

#[test]
fn a_missing_server_says_how_to_install_it() {
    let root = python_project();
    let lsp = Lsp::new(root.path(), config_with("python", vec!["ucp-no-such-server".into()], &["py"])).unwrap();
    let error = lsp.definition("app.py", 3, 7).unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, LspError::Start { .. }), "{message}");
    assert!(message.contains("pip install python-lsp-server"), "{message}");
    let error = Lsp::new(root.path(), LspConfig::default()).unwrap().definition("nope.zig", 1, 1).unwrap_err();
    assert!(matches!(error, LspError::Input(_) | LspError::NoServer(_)), "{error}");
}

#[test]
#[ignore = "needs UCP_TEST_RUST_ANALYZER: scripts/test installs rust-analyzer and runs this"]
fn rust_analyzer_finds_definitions_and_workspace_symbols() {
    let rust_analyzer =
        std::env::var("UCP_TEST_RUST_ANALYZER").expect("UCP_TEST_RUST_ANALYZER is not set (scripts/test sets it)");
    let root = tempfile::tempdir().unwrap();
    write(
        root.path(),
        "Cargo.toml",
        "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    write(root.path(), "src/lib.rs", "mod util;\n\npub fn run() -> u32 {\n    util::helper_value() + 1\n}\n");
    write(root.path(), "src/util.rs", "/// The value.\npub fn helper_value() -> u32 {\n    41\n}\n");
    let config = LspConfig { timeout_secs: Some(120), ..config_with("rust", vec![rust_analyzer], &["rs"]) };
    let lsp = Lsp::new(root.path(), config).unwrap();
    // rust-analyzer answers once it has loaded the project (empty, or
    // "content modified" past the client's own retries, until then).
    let mut definition = Vec::new();
    for _ in 0..60 {
        match lsp.definition("src/lib.rs", 4, 11) {
            Ok(found) if !found.is_empty() => {
                definition = found;
                break;
            }
            Ok(_) | Err(LspError::Server { .. }) => std::thread::sleep(std::time::Duration::from_millis(500)),
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(definition.first().map(|p| (p.path.as_str(), p.line)), Some(("src/util.rs", 2)), "{definition:?}");
    let symbols = lsp.workspace_symbols("helper_value", Some("src/lib.rs")).unwrap();
    assert!(symbols.iter().any(|s| s.name == "helper_value" && s.place.path == "src/util.rs"), "{symbols:?}");
}
