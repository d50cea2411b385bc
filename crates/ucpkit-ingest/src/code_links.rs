//! Code references to edges: after every ingest or update, each code
//! file's imports, calls and bases are resolved across the whole corpus
//! ([`ucpkit_code::resolve`]) and set as `imports`, `calls`, `extends` and
//! `implements` edges, a block's edges of a type changed only when they
//! differ — so files that did not change keep their edges unless what they
//! name moved.

use ucpkit_code::resolve::{resolve, FileCode, LinkKind};
use ucpkit_core::{BlockId, Document, EdgeType, IdMap};

use crate::pipeline::file_block_id;
use crate::report::CodeReport;

/// Edge types code references become.
const CODE_EDGES: [EdgeType; 4] = [EdgeType::Imports, EdgeType::Calls, EdgeType::Extends, EdgeType::Implements];

/// Resolves the code files `(corpus path, code)` and sets their edges.
pub(crate) fn link_code(document: &mut Document, files: &[(&str, &FileCode<BlockId>)]) -> CodeReport {
    let inputs: Vec<(&str, BlockId, &FileCode<BlockId>)> =
        files.iter().map(|(path, code)| (*path, file_block_id(path), *code)).collect();
    let resolution = resolve(&inputs);
    let mut wanted: IdMap<[Vec<BlockId>; 4]> = IdMap::default();
    // Every block that may hold code edges is set, so stale ones go.
    for (_, file, code) in &inputs {
        wanted.entry(*file).or_default();
        for symbol in &code.symbols {
            wanted.entry(symbol.id).or_default();
        }
        for reference in &code.refs {
            wanted.entry(reference.from).or_default();
        }
    }
    for (from, kind, to) in &resolution.links {
        let slot = match kind {
            LinkKind::Imports => 0,
            LinkKind::Calls => 1,
            LinkKind::Extends => 2,
            LinkKind::Implements => 3,
        };
        wanted.entry(*from).or_default()[slot].push(*to);
    }
    let mut edges = 0;
    for (from, targets) in wanted {
        for (edge_type, to) in CODE_EDGES.iter().zip(targets) {
            let to: Vec<BlockId> = to.into_iter().filter(|t| document.contains(*t)).collect();
            edges += to.len();
            if document.contains(from) {
                // Both ends exist: this cannot fail.
                let _ = document.set_edges(from, edge_type, &to);
            }
        }
    }
    CodeReport {
        files: files.len(),
        symbols: files.iter().map(|(_, code)| code.symbols.len()).sum(),
        edges,
        calls_resolved: resolution.calls_resolved,
        calls_unresolved: resolution.calls_unresolved,
        imports_resolved: resolution.imports_resolved,
        imports_unresolved: resolution.imports_unresolved,
    }
}
