//! Any bytes, read as source in every language: symbols nest inside the
//! file's lines without overlapping, and resolving the file's names across
//! a corpus of itself finishes without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ucpkit_code::resolve::{resolve, FileCode, Reference, SymbolRef};
use ucpkit_code::{parse, Language, Symbol};

const LANGUAGES: [Language; 9] = [
    Language::Python,
    Language::Rust,
    Language::JavaScript,
    Language::TypeScript,
    Language::Tsx,
    Language::Go,
    Language::Java,
    Language::C,
    Language::Cpp,
];

fn check(symbols: &[Symbol], low: u32, high: u32, code: &mut FileCode<usize>, prefix: &str) {
    let mut last = low.saturating_sub(1);
    for symbol in symbols {
        let (start, end) = symbol.lines;
        assert!(low <= start && start <= end && end <= high, "{start}-{end} outside {low}-{high}");
        assert!(start > last || last < low, "overlap at {start}");
        last = end;
        let qname = if prefix.is_empty() { symbol.name.clone() } else { format!("{prefix}.{}", symbol.name) };
        let id = code.symbols.len();
        code.symbols.push(SymbolRef { qname: qname.clone(), kind: symbol.kind, id });
        for call in &symbol.calls {
            let reference =
                Reference { from: id, class: None, name: call.name.clone(), receiver: call.receiver.clone(), base: false };
            code.refs.push(reference);
        }
        check(&symbol.children, start + 1, end, code, &qname);
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let lines = u32::try_from(text.lines().count()).unwrap_or(u32::MAX).max(1);
    for language in LANGUAGES {
        let parsed = parse(language, text);
        let mut code = FileCode { language, imports: parsed.imports.clone(), symbols: Vec::new(), refs: Vec::new() };
        check(&parsed.symbols, 1, lines, &mut code, "");
        let _ = resolve(&[("a/b.x", usize::MAX, &code), ("a/c.x", usize::MAX - 1, &code)]);
    }
});
