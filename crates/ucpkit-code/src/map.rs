//! The repository map: a ranked outline of a code corpus under a token
//! budget — files, and under each the signatures of its most used
//! symbols. Files are ranked by PageRank over the graph their symbols'
//! `calls`, `imports`, `extends` and `implements` edges make between files,
//! personalized to seed blocks (search hits for a question, files an agent
//! names), the approach aider's repository map made popular; a symbol
//! ranks by its file's rank and how often it is referenced. Only source
//! files (file blocks that name their language) are mapped.

use std::collections::HashMap;

use serde::Serialize;
use ucpkit_core::{outline, BlockId, Document, EdgeType, Role, Tokenizer};

/// PageRank's damping factor: how much of a file's rank flows on along
/// its references rather than back to where the walk started.
const DAMPING: f64 = 0.85;
/// The damping factor when seeds personalize the walk: half returns to
/// them, so the files a question is about stay ahead of the corpus's hubs.
const SEEDED_DAMPING: f64 = 0.5;
/// PageRank iterations (the ranks settle well before).
const ITERATIONS: usize = 40;
/// Most symbols shown under one file.
const SYMBOLS_PER_FILE: usize = 12;

/// A ranked outline of a repository.
#[derive(Debug, Clone, Serialize)]
pub struct RepoMap {
    /// The outline as text.
    pub text: String,
    /// Its tokens (exact; never more than the budget).
    pub tokens: usize,
    /// The files shown, best first.
    pub files: Vec<MapFile>,
}

/// A file of the map.
#[derive(Debug, Clone, Serialize)]
pub struct MapFile {
    /// Its path in the corpus.
    pub path: String,
    /// Its block.
    pub id: BlockId,
    /// Its PageRank.
    pub rank: f64,
    /// The symbols shown, in source order.
    pub symbols: Vec<MapSymbol>,
}

/// A symbol of the map.
#[derive(Debug, Clone, Serialize)]
pub struct MapSymbol {
    /// Its block.
    pub id: BlockId,
    /// Its qualified name.
    pub symbol: String,
    /// Its declaration.
    pub signature: String,
    /// Its first and last line.
    pub lines: [u32; 2],
    /// How deep it is nested in its file (0: at the top).
    pub depth: usize,
}

/// The map of `doc` within `budget` tokens, personalized to `seeds`
/// (blocks with weights: hits, named files); uniform when there are none.
pub fn repo_map(doc: &Document, seeds: &[(BlockId, f64)], budget: usize, tokenizer: &dyn Tokenizer) -> RepoMap {
    let graph = FileGraph::new(doc);
    let ranks = graph.pagerank(doc, seeds);
    let mut order: Vec<usize> = (0..graph.files.len()).collect();
    order.sort_by(|a, b| ranks[*b].total_cmp(&ranks[*a]).then(graph.paths[*a].cmp(&graph.paths[*b])));
    let seeded: HashMap<BlockId, f64> = seeds.iter().copied().collect();
    let mut map = RepoMap { text: String::new(), tokens: 0, files: Vec::new() };
    for file in order {
        let symbols = graph.best_symbols(doc, file, &seeded);
        let header = format!("{}\n", graph.paths[file]);
        let header_tokens = tokenizer.count(&header);
        if map.tokens + header_tokens > budget {
            break;
        }
        let mut block = header;
        let mut tokens = header_tokens;
        let mut shown = Vec::new();
        for (id, depth) in symbols {
            let Some(symbol) = doc.get(id) else { continue };
            let signature = symbol.metadata.custom.get("signature").and_then(|s| s.as_str()).unwrap_or_default();
            let line = format!("{}{signature}\n", "  ".repeat(depth + 1));
            let cost = tokenizer.count(&line);
            if map.tokens + tokens + cost > budget {
                break;
            }
            block.push_str(&line);
            tokens += cost;
            let lines = symbol.metadata.source.as_ref().map_or([0, 0], |s| [s.start_line, s.end_line]);
            let name = outline::symbol(symbol).unwrap_or_default().to_owned();
            shown.push(MapSymbol { id, symbol: name, signature: signature.to_owned(), lines, depth });
        }
        map.text.push_str(&block);
        map.tokens += tokens;
        map.files.push(MapFile {
            path: graph.paths[file].clone(),
            id: graph.files[file],
            rank: ranks[file],
            symbols: shown,
        });
    }
    // Counted line by line; a whole count may differ where lines join:
    // the last lines go until it fits, and the files say what is shown.
    map.tokens = tokenizer.count(&map.text);
    while map.tokens > budget {
        let Some(last) = map.files.last_mut() else { break };
        if last.symbols.pop().is_none() {
            map.files.pop();
        }
        map.text = render(&map.files);
        map.tokens = tokenizer.count(&map.text);
    }
    map
}

/// The map's text: each file's path, then its symbols' signatures
/// indented by depth.
fn render(files: &[MapFile]) -> String {
    let mut text = String::new();
    for file in files {
        text.push_str(&file.path);
        text.push('\n');
        for symbol in &file.symbols {
            text.push_str(&"  ".repeat(symbol.depth + 1));
            text.push_str(&symbol.signature);
            text.push('\n');
        }
    }
    text
}

/// Files as nodes, references between their symbols as weighted edges.
struct FileGraph {
    files: Vec<BlockId>,
    paths: Vec<String>,
    by_path: HashMap<String, usize>,
    /// `(target file, weight)` per file.
    out: Vec<Vec<(usize, f64)>>,
    /// References into each symbol block.
    used: HashMap<BlockId, usize>,
}

const GRAPH_EDGES: [EdgeType; 4] = [EdgeType::Calls, EdgeType::Imports, EdgeType::Extends, EdgeType::Implements];

impl FileGraph {
    fn new(doc: &Document) -> FileGraph {
        let mut files = Vec::new();
        let mut paths = Vec::new();
        let mut by_path: HashMap<String, usize> = HashMap::new();
        // Source files only: prose has no code graph to rank.
        for id in doc.document_order() {
            let source =
                |b: &&ucpkit_core::Block| b.role() == Some(&Role::File) && b.metadata.custom.contains_key("language");
            let Some(block) = doc.get(id).filter(source) else { continue };
            let Some(path) = block.metadata.label.clone() else { continue };
            by_path.insert(path.clone(), files.len());
            files.push(id);
            paths.push(path);
        }
        let file_of = |id: BlockId| -> Option<usize> {
            let source = doc.get(id)?.metadata.source.as_ref()?;
            by_path.get(source.file.as_ref()).copied()
        };
        let mut weights: Vec<HashMap<usize, f64>> = vec![HashMap::new(); files.len()];
        let mut used: HashMap<BlockId, usize> = HashMap::new();
        for edge in doc.edges().iter().filter(|e| GRAPH_EDGES.contains(&e.edge_type)) {
            *used.entry(edge.target).or_default() += 1;
            if let (Some(from), Some(to)) = (file_of(edge.source), file_of(edge.target)) {
                if from != to {
                    *weights[from].entry(to).or_default() += 1.0;
                }
            }
        }
        let out = weights
            .into_iter()
            .map(|w| {
                let mut w: Vec<(usize, f64)> = w.into_iter().collect();
                w.sort_by_key(|(to, _)| *to);
                w
            })
            .collect();
        FileGraph { files, paths, by_path, out, used }
    }

    /// The file a block is in (the file's own block included).
    fn file_of(&self, doc: &Document, id: BlockId) -> Option<usize> {
        let source = doc.get(id)?.metadata.source.as_ref()?;
        self.by_path.get(source.file.as_ref()).copied()
    }

    /// Personalized PageRank of the files: each seed block counts for the
    /// file it is in.
    fn pagerank(&self, doc: &Document, seeds: &[(BlockId, f64)]) -> Vec<f64> {
        let n = self.files.len();
        if n == 0 {
            return Vec::new();
        }
        let mut personal = vec![0.0; n];
        for (id, weight) in seeds {
            if let Some(file) = self.file_of(doc, *id) {
                personal[file] += weight.max(0.0);
            }
        }
        let total: f64 = personal.iter().sum();
        let damping = if total > 0.0 { SEEDED_DAMPING } else { DAMPING };
        if total > 0.0 {
            personal.iter_mut().for_each(|p| *p /= total);
        } else {
            personal.iter_mut().for_each(|p| *p = 1.0 / n as f64);
        }
        let out_weight: Vec<f64> = self.out.iter().map(|o| o.iter().map(|(_, w)| w).sum()).collect();
        let mut rank = personal.clone();
        for _ in 0..ITERATIONS {
            let mut next: Vec<f64> = personal.iter().map(|p| (1.0 - damping) * p).collect();
            let mut dangling = 0.0;
            for (from, edges) in self.out.iter().enumerate() {
                if out_weight[from] == 0.0 {
                    dangling += rank[from];
                    continue;
                }
                for (to, weight) in edges {
                    next[*to] += damping * rank[from] * weight / out_weight[from];
                }
            }
            for (value, p) in next.iter_mut().zip(&personal) {
                *value += damping * dangling * p;
            }
            rank = next;
        }
        rank
    }

    /// The file's symbols worth showing, in source order, each with its
    /// nesting depth below the file: the most referenced and the seeded
    /// ones, with the containers they sit in.
    fn best_symbols(&self, doc: &Document, file: usize, seeded: &HashMap<BlockId, f64>) -> Vec<(BlockId, usize)> {
        let mut symbols: Vec<(BlockId, usize, f64)> = Vec::new();
        let mut stack: Vec<(BlockId, usize)> = doc.children(self.files[file]).iter().rev().map(|c| (*c, 0)).collect();
        while let Some((id, depth)) = stack.pop() {
            let Some(block) = doc.get(id) else { continue };
            if !block.role().is_some_and(Role::is_code_symbol) {
                continue;
            }
            let used = self.used.get(&id).copied().unwrap_or(0) as f64;
            let score = (1.0 + used).ln() + seeded.get(&id).map_or(0.0, |w| 10.0 * w) + 1.0 / (1.0 + depth as f64);
            symbols.push((id, depth, score));
            stack.extend(doc.children(id).iter().rev().map(|c| (*c, depth + 1)));
        }
        let mut best: Vec<usize> = (0..symbols.len()).collect();
        best.sort_by(|a, b| symbols[*b].2.total_cmp(&symbols[*a].2).then(a.cmp(b)));
        best.truncate(SYMBOLS_PER_FILE);
        // Keep the containers of what is shown, so nesting reads right.
        let mut keep: Vec<usize> = best.clone();
        for &i in &best {
            let mut parent = doc.parent(symbols[i].0);
            while let Some(p) = parent {
                if let Some(at) = symbols.iter().position(|s| s.0 == p) {
                    if !keep.contains(&at) {
                        keep.push(at);
                    }
                }
                parent = doc.parent(p);
            }
        }
        keep.sort_unstable();
        keep.into_iter().map(|i| (symbols[i].0, symbols[i].1)).collect()
    }
}
