//! A deterministic synthetic markdown corpus for benchmarks: nested
//! headings, paragraphs, lists, code, tables and cross-file links, from a
//! fixed-seed generator so every run writes the same bytes.

use std::fmt::Write as _;

const WORDS: &[&str] = &[
    "buffer",
    "stream",
    "request",
    "handler",
    "option",
    "value",
    "returns",
    "callback",
    "event",
    "emitter",
    "socket",
    "server",
    "client",
    "promise",
    "error",
    "signal",
    "timeout",
    "module",
    "export",
    "import",
    "the",
    "a",
    "of",
    "to",
    "is",
    "when",
    "with",
    "for",
    "and",
    "or",
    "if",
    "not",
    "be",
    "this",
    "that",
    "file",
    "path",
    "directory",
    "encoding",
    "length",
    "offset",
    "position",
    "chunk",
    "data",
    "close",
];

/// xorshift64*: small, fast and the same everywhere.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn words(&mut self, n: usize) -> String {
        let mut out = String::new();
        for i in 0..n {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(WORDS[self.below(WORDS.len() as u64) as usize]);
        }
        out
    }
}

/// Writes about `bytes` of markdown for file number `file` of `files`.
pub fn markdown_file(rng: &mut Rng, file: usize, files: usize, bytes: usize) -> String {
    let mut out = format!("# File {file}: {}\n\n", rng.words(3));
    let mut section = 0;
    while out.len() < bytes {
        section += 1;
        let level = 2 + rng.below(3) as usize;
        let _ = writeln!(out, "{} {} {section}\n", "#".repeat(level), rng.words(3));
        for _ in 0..1 + rng.below(3) {
            let n = 15 + rng.below(60) as usize;
            let _ = writeln!(out, "{}.\n", rng.words(n));
        }
        match rng.below(6) {
            0 => {
                for _ in 0..2 + rng.below(4) {
                    let _ = writeln!(out, "- `{}` {}", rng.words(1), rng.words(6));
                }
                out.push('\n');
            }
            1 => {
                let _ = writeln!(
                    out,
                    "```js\nconst {} = require('{}');\n{}();\n```\n",
                    rng.words(1),
                    rng.words(1),
                    rng.words(1)
                );
            }
            2 => {
                let _ = writeln!(
                    out,
                    "| name | value |\n| --- | --- |\n| {} | {} |\n| {} | {} |\n",
                    rng.words(1),
                    rng.below(100),
                    rng.words(1),
                    rng.below(100)
                );
            }
            3 if files > 1 => {
                let target = rng.below(files as u64);
                let _ = writeln!(out, "See [file {target}](f{target:05}.md) for {}.\n", rng.words(4));
            }
            _ => {}
        }
    }
    out
}
