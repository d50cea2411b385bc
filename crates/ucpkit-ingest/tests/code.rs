//! Source files as a code graph, on a small Python project
//! (`tests/data/code/repos/shop-1.0`): symbols as blocks quoting their exact
//! lines, imports, calls and bases as edges, an edit to one function
//! changing only that function's block, and the repository map.

use std::path::{Path, PathBuf};

use ucpkit_code::map::repo_map;
use ucpkit_core::{outline, BlockId, Content, Document, EdgeType, Role};
use ucpkit_ingest::{ingest, update, IngestOptions, Ingested, Update};

fn shop() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/code/repos/shop-1.0")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn by_symbol(doc: &Document, file: &str, symbol: &str) -> BlockId {
    doc.blocks()
        .find(|b| {
            outline::symbol(b) == Some(symbol) && b.metadata.source.as_ref().is_some_and(|s| s.file.as_ref() == file)
        })
        .unwrap_or_else(|| panic!("no {file}:{symbol}"))
        .id
}

fn targets(doc: &Document, from: BlockId, edge: EdgeType) -> Vec<BlockId> {
    doc.edges().outgoing(from).iter().filter(|e| e.edge_type == edge).map(|e| e.target).collect()
}

fn ingest_shop(root: &Path) -> Ingested {
    ingest(&[root.to_path_buf()], "shop", &IngestOptions::default(), &()).unwrap()
}

#[test]
fn symbols_are_blocks_quoting_their_lines() {
    let ingested = ingest_shop(&shop());
    let doc = &ingested.document;
    let total = doc.get(by_symbol(doc, "shop/cart.py", "Cart.total")).unwrap();
    assert_eq!(total.role(), Some(&Role::Method));
    assert_eq!(total.metadata.label.as_deref(), Some("total"));
    assert_eq!(total.metadata.custom["signature"], "def total(self, coupon_percent=0):");
    assert_eq!(outline::path_titles(doc, total.id), ["shop/cart.py", "Cart"]);
    // Every code block is the exact slice of its file's lines.
    for block in doc.blocks() {
        let (Content::Code { source, .. }, Some(at)) = (&block.content, &block.metadata.source) else { continue };
        let text = std::fs::read_to_string(shop().join(at.file.as_ref())).unwrap();
        let lines: Vec<&str> = text.split('\n').collect();
        let slice = lines[at.start_line as usize - 1..at.end_line as usize].join("\n");
        assert_eq!(source, &slice, "{}:{}-{}", at.file, at.start_line, at.end_line);
    }
    let report = &ingested.report.code;
    assert_eq!(report.files, 5);
    assert!(report.symbols >= 12, "{report:?}");
    assert!(report.calls_resolved >= 4 && report.calls_unresolved > 0, "{report:?}");
}

#[test]
fn imports_calls_and_bases_are_edges() {
    let doc = ingest_shop(&shop()).document;
    let file = |path: &str| doc.blocks().find(|b| b.metadata.label.as_deref() == Some(path)).unwrap().id;
    assert_eq!(targets(&doc, file("shop/cart.py"), EdgeType::Imports), [file("shop/prices.py")]);
    assert_eq!(targets(&doc, file("shop/receipt.py"), EdgeType::Imports), [file("shop/cart.py")]);
    let total = by_symbol(&doc, "shop/cart.py", "Cart.total");
    let mut called = targets(&doc, total, EdgeType::Calls);
    called.sort();
    let mut expected =
        vec![by_symbol(&doc, "shop/prices.py", "discount"), by_symbol(&doc, "shop/prices.py", "with_tax")];
    expected.sort();
    assert_eq!(called, expected);
    // A class called is the class; a test calls what it imports.
    let print_receipt = by_symbol(&doc, "shop/receipt.py", "print_receipt");
    assert_eq!(targets(&doc, print_receipt, EdgeType::Calls), [by_symbol(&doc, "shop/receipt.py", "Receipt")]);
    let test = by_symbol(&doc, "shop/tests/test_cart.py", "test_total_with_coupon");
    assert!(targets(&doc, test, EdgeType::Calls).contains(&by_symbol(&doc, "shop/cart.py", "Cart")));
    // `print` is a builtin, `item.subtotal()` is called on a variable: no guess.
    assert!(targets(&doc, by_symbol(&doc, "shop/receipt.py", "Receipt.lines"), EdgeType::Calls).is_empty());
}

#[test]
fn editing_one_function_changes_only_its_block() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&shop(), dir.path());
    let before = ingest_shop(dir.path());
    let prices = dir.path().join("shop/prices.py");
    let text = std::fs::read_to_string(&prices).unwrap();
    std::fs::write(&prices, text.replace("if percent > 100:", "if percent > 100 or percent < 0:")).unwrap();
    let kept = before.sources.to_bytes();
    let previous = ucpkit_ingest::Sources::from_bytes(&kept.files).unwrap();
    let Update::Changed(changes) =
        update(&[dir.path().to_path_buf()], &IngestOptions::default(), &(), &previous).unwrap()
    else {
        panic!("one file changed");
    };
    let mut document = before.document.clone();
    changes.apply(&mut document, &kept.links).unwrap();
    let old: Vec<BlockId> = before.document.document_order().collect();
    let new: Vec<BlockId> = document.document_order().collect();
    let gone: Vec<&BlockId> = old.iter().filter(|id| !new.contains(id)).collect();
    let came: Vec<&BlockId> = new.iter().filter(|id| !old.contains(id)).collect();
    assert_eq!(gone, [&by_symbol(&before.document, "shop/prices.py", "discount")]);
    assert_eq!(came, [&by_symbol(&document, "shop/prices.py", "discount")]);
    // The call from the unchanged cart.py now reaches the new block.
    let total = by_symbol(&document, "shop/cart.py", "Cart.total");
    assert!(targets(&document, total, EdgeType::Calls).contains(came[0]));
    assert!(document.same_content(&ingest_shop(dir.path()).document));
}

#[test]
fn the_map_ranks_files_by_the_graph_and_the_question() {
    let doc = ingest_shop(&shop()).document;
    let tokenizer = ucpkit_core::BpeTokenizer::default();
    let map = repo_map(&doc, &[], 120, &tokenizer);
    assert!(map.tokens <= 120 && !map.files.is_empty());
    // The most used file comes first: prices.py is called by cart.py.
    assert_eq!(map.files[0].path, "shop/prices.py", "{}", map.text);
    let receipt = doc.blocks().find(|b| b.metadata.label.as_deref() == Some("shop/receipt.py")).unwrap().id;
    let map = repo_map(&doc, &[(receipt, 1.0)], 400, &tokenizer);
    assert_eq!(map.files[0].path, "shop/receipt.py", "{}", map.text);
    assert!(map.text.starts_with("shop/receipt.py\n  class Receipt:\n"), "{}", map.text);
    assert!(map.text.contains("\n    def lines(self):\n"), "{}", map.text);
    let tiny = repo_map(&doc, &[], 5, &tokenizer);
    assert!(tiny.tokens <= 5);
}
