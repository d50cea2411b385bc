//! Source files as symbol blocks. A file's lines are shared out among
//! blocks: each definition ([`ucpkit_code::Symbol`]) is a block holding its
//! exact lines, a container (class, impl, trait ...) holding its head —
//! from its first line to its first member — with its members and the
//! code between them as children; code outside every definition becomes
//! blocks of up to [`CHUNK_LINES`] lines, cut at blank lines. So every
//! block quotes its source verbatim, and a container's subtree in order is
//! its whole source. The names each block uses are kept, by block, for
//! [`crate::code_links`] to resolve across the corpus.

use ucpkit_code::resolve::{FileCode, Reference, SymbolRef};
use ucpkit_code::{Language, Symbol, SymbolKind};
use ucpkit_core::{Content, Role};

use crate::report::WarningKind;
use crate::section::SectionBuilder;

/// Most lines in one block of code outside definitions.
const CHUNK_LINES: u32 = 40;

/// Average line length from which a file is taken for minified or
/// generated code: kept as plain chunks, no symbols read.
const MINIFIED_LINE_BYTES: usize = 400;

/// The symbols of a source file; none when the grammars are not built in
/// (the `code` feature off: the WebAssembly build), where a source file is
/// kept as plain chunks, as a minified one is.
fn symbols(language: Language, text: &str) -> ucpkit_code::ParsedCode {
    #[cfg(feature = "code")]
    return ucpkit_code::parse(language, text);
    #[cfg(not(feature = "code"))]
    {
        let _ = (language, text);
        ucpkit_code::ParsedCode::default()
    }
}

/// Parses a source file into symbol blocks.
pub(crate) fn parse_code(language: Language, text: &str, builder: &mut SectionBuilder) {
    let lines = Lines::new(text);
    let minified = text.len() / lines.count().max(1) as usize > MINIFIED_LINE_BYTES;
    let parsed = if minified { ucpkit_code::ParsedCode::default() } else { symbols(language, text) };
    let mut out = Emit {
        language,
        lines: &lines,
        builder,
        code: FileCode { language, imports: parsed.imports, symbols: Vec::new(), refs: Vec::new() },
        chunks: Vec::new(),
    };
    out.region(None, (1, lines.count()), &parsed.symbols, "", None);
    for (line, call) in parsed.module_calls {
        // The chunks are in line order: the one starting last at or before
        // the line holds it, if any does.
        let after = out.chunks.partition_point(|((start, _), _)| *start <= line);
        let holder = after.checked_sub(1).map(|i| &out.chunks[i]).filter(|((_, end), _)| line <= *end);
        if let Some((_, index)) = holder {
            let reference =
                Reference { from: *index, class: None, name: call.name, receiver: call.receiver, base: false };
            out.code.refs.push(reference);
        }
    }
    if parsed.has_errors {
        out.builder
            .parsed
            .notes
            .push((WarningKind::Syntax, "syntax errors: symbols were read from the parts that parsed".to_owned()));
    }
    let code = out.code;
    builder.parsed.code = Some(code);
}

/// The block role of a kind of symbol.
fn role_of(kind: SymbolKind) -> Role {
    match kind {
        SymbolKind::Module => Role::Module,
        SymbolKind::Class => Role::Class,
        SymbolKind::Struct => Role::Struct,
        SymbolKind::Enum => Role::Enum,
        SymbolKind::Trait => Role::Trait,
        SymbolKind::Interface => Role::Interface,
        SymbolKind::Impl => Role::Impl,
        SymbolKind::Function => Role::Function,
        SymbolKind::Method => Role::Method,
        SymbolKind::Constant => Role::Constant,
        SymbolKind::TypeAlias => Role::TypeAlias,
    }
}

struct Emit<'a, 'b> {
    language: Language,
    lines: &'a Lines<'a>,
    builder: &'b mut SectionBuilder,
    code: FileCode<usize>,
    /// Line ranges and indexes of the blocks of code outside definitions.
    chunks: Vec<((u32, u32), usize)>,
}

impl Emit<'_, '_> {
    /// Lines `from..=to` holding `members`: the code between them, and
    /// them.
    fn region(
        &mut self,
        parent: Option<usize>,
        (from, to): (u32, u32),
        members: &[Symbol],
        prefix: &str,
        class: Option<&str>,
    ) {
        let mut cursor = from;
        for member in members {
            self.between(parent, cursor, member.lines.0.saturating_sub(1), parent.is_none());
            self.symbol(parent, member, prefix, class);
            cursor = member.lines.1 + 1;
        }
        self.between(parent, cursor, to, parent.is_none());
    }

    fn symbol(&mut self, parent: Option<usize>, symbol: &Symbol, prefix: &str, class: Option<&str>) {
        let name = match &symbol.owner {
            Some(owner) => format!("{owner}.{}", symbol.name),
            None => symbol.name.clone(),
        };
        let qname = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
        let (start, end) = symbol.lines;
        let head_end = match symbol.children.first() {
            Some(first) => self.lines.last_filled(start, first.lines.0 - 1),
            None => end,
        };
        let content = Content::code(Some(self.language.name().to_owned()), self.lines.slice(start, head_end));
        let index = self.builder.push_under(content, role_of(symbol.kind), (start, head_end), parent);
        let metadata = &mut self.builder.parsed.blocks[index].block.metadata;
        metadata.label = Some(name);
        metadata.custom.insert("symbol".into(), qname.clone().into());
        metadata.custom.insert("signature".into(), symbol.signature.clone().into());
        if let Some(doc) = &symbol.doc {
            metadata.custom.insert("doc".into(), doc.clone().into());
        }
        if !symbol.nested.is_empty() {
            metadata.custom.insert("nested".into(), symbol.nested.clone().into());
        }
        self.code.symbols.push(SymbolRef { qname: qname.clone(), kind: symbol.kind, id: index });
        let own_class = match &symbol.owner {
            Some(owner) => Some(owner.clone()),
            None if symbol.kind.is_container() => Some(qname.clone()),
            None => class.map(str::to_owned),
        };
        for call in &symbol.calls {
            let (name, receiver) = (call.name.clone(), call.receiver.clone());
            self.code.refs.push(Reference { from: index, class: own_class.clone(), name, receiver, base: false });
        }
        for base in &symbol.bases {
            self.code.refs.push(Reference { from: index, class: None, name: base.clone(), receiver: None, base: true });
        }
        if !symbol.children.is_empty() {
            self.region(Some(index), (head_end + 1, end), &symbol.children, &qname, own_class.as_deref());
        }
    }

    /// The code on lines `from..=to`, outside definitions: blocks of at
    /// most [`CHUNK_LINES`] lines, cut at blank lines where it can be.
    fn between(&mut self, parent: Option<usize>, from: u32, to: u32, top: bool) {
        let mut start = from;
        while start <= to {
            while start <= to && self.lines.blank(start) {
                start += 1;
            }
            if start > to {
                break;
            }
            let limit = to.min(start + CHUNK_LINES - 1);
            // The last blank line within the limit, unless the code runs
            // on past it without one.
            let mut end = limit;
            if limit < to {
                if let Some(blank) = (start + 1..=limit).rev().find(|l| self.lines.blank(*l)) {
                    end = blank - 1;
                }
            }
            let end = self.lines.last_filled(start, end);
            let content = Content::code(Some(self.language.name().to_owned()), self.lines.slice(start, end));
            let index = self.builder.push_under(content, Role::Code, (start, end), parent);
            if top {
                self.chunks.push(((start, end), index));
            }
            start = end + 1;
        }
    }
}

/// A text's lines, 1-based.
struct Lines<'t> {
    text: &'t str,
    /// Byte offset of each line's start, and of the text's end.
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Lines<'t> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(at, _)| at + 1).filter(|at| *at < text.len()));
        starts.push(text.len());
        Lines { text, starts }
    }

    fn count(&self) -> u32 {
        (self.starts.len() - 1) as u32
    }

    fn line(&self, n: u32) -> &'t str {
        let n = n as usize;
        if n == 0 || n >= self.starts.len() {
            return "";
        }
        &self.text[self.starts[n - 1]..self.starts[n]]
    }

    fn blank(&self, n: u32) -> bool {
        self.line(n).trim().is_empty()
    }

    /// The last line in `from..=to` that is not blank (`from` when all
    /// are).
    fn last_filled(&self, from: u32, to: u32) -> u32 {
        (from..=to).rev().find(|l| !self.blank(*l)).unwrap_or(from)
    }

    /// Lines `from..=to` exactly as written, without the last line end.
    fn slice(&self, from: u32, to: u32) -> &'t str {
        let (from, to) = (from.max(1) as usize, (to as usize).min(self.starts.len() - 1));
        if from > to {
            return "";
        }
        let text = &self.text[self.starts[from - 1]..self.starts[to]];
        let text = text.strip_suffix('\n').unwrap_or(text);
        text.strip_suffix('\r').unwrap_or(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Role, parent index, text and line range of a block.
    type Shown = (String, Option<usize>, String, (u32, u32));

    fn blocks(language: Language, text: &str) -> Vec<Shown> {
        let mut builder = SectionBuilder::new("f".into(), Some("f".into()), 0);
        parse_code(language, text, &mut builder);
        let parsed = builder.finish();
        parsed
            .blocks
            .iter()
            .map(|b| {
                let source = b.block.metadata.source.as_ref().unwrap();
                let Content::Code { source: code, .. } = &b.block.content else { panic!("not code") };
                (b.block.role().unwrap().to_string(), b.parent, code.clone(), (source.start_line, source.end_line))
            })
            .collect()
    }

    #[test]
    fn a_file_is_shared_out_among_blocks_verbatim() {
        let src = "import os\n\nclass A(B):\n    \"\"\"Doc.\"\"\"\n    x = 1\n\n    def f(self):\n        return 1\n\n    y = 2\n\n    def g(self):\n        pass\n\nrun()\n";
        let got = blocks(Language::Python, src);
        let expected = vec![
            ("code".to_owned(), None, "import os".to_owned(), (1, 1)),
            ("class".into(), None, "class A(B):\n    \"\"\"Doc.\"\"\"\n    x = 1".into(), (3, 5)),
            ("method".into(), Some(1), "    def f(self):\n        return 1".into(), (7, 8)),
            ("code".into(), Some(1), "    y = 2".into(), (10, 10)),
            ("method".into(), Some(1), "    def g(self):\n        pass".into(), (12, 13)),
            ("code".into(), None, "run()".into(), (15, 15)),
        ];
        assert_eq!(got, expected);
        // Every non-blank line is in exactly one block, as written.
        let mut covered: Vec<&str> = Vec::new();
        for (_, _, code, _) in &got {
            covered.extend(code.lines());
        }
        let filled: Vec<&str> = src.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(covered, filled);
    }

    #[test]
    fn long_stretches_outside_definitions_are_cut_at_blank_lines() {
        let mut src = String::new();
        for i in 0..30 {
            src.push_str(&format!("a{i} = 1\nb{i} = 2\n\n"));
        }
        let got = blocks(Language::Python, &src);
        assert!(got.len() > 1);
        assert!(got.iter().all(|(_, _, code, (a, b))| b - a < CHUNK_LINES && !code.ends_with('\n')));
    }

    #[test]
    fn crlf_and_missing_final_newline_keep_exact_text() {
        let got = blocks(Language::Rust, "fn a() {}\r\n\r\nfn b() {\r\n}");
        assert_eq!(got[0].2, "fn a() {}");
        assert_eq!(got[1].2, "fn b() {\r\n}");
    }
}
