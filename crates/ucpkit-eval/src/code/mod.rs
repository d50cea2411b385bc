//! Code localization: for a real issue's text, does the engine find the
//! file and the functions the fix changed? A task file (JSON lines, the
//! format of `eval/swe-lite/tasks.jsonl`) names for each task a
//! repository snapshot, the issue text, the gold file and the gold
//! functions. Each snapshot is indexed once into a store of its own (later
//! runs find it indexed), then every task is run through
//!
//! - the engine: `ucp search` over code blocks for the ranked units,
//!   `ucp search --files` for the ranked files, and `ucp context --code`
//!   at the context budget;
//! - the reference baseline (the `reference` module), computed here over the same
//!   snapshot.
//!
//! Metrics, as the set's README defines them: File@1/5/10 (the gold file
//! among the first k distinct files), Module@10, Func@10 any/all (gold
//! functions among the first 10 units), and Ctx@budget (every gold
//! function whole in the context).

mod reference;
mod units;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use ucpkit_context::Representation;
use ucpkit_core::{Document, IdSet};
use ucpkit_workspace::{ContextOptions, IndexOptions, Library, LibraryConfig, Scope, SearchRequest, Workspace};

pub use reference::{terms, word_tokens, Bm25};
pub use units::{module_of, Units};

use crate::EvalError;

/// One localization task.
#[derive(Debug, Clone, Deserialize)]
pub struct CodeTask {
    /// Its id (`owner__repo-1234`).
    pub id: String,
    /// The repository (`owner/repo`).
    pub repo: String,
    /// The snapshot's package name.
    pub package: String,
    /// The snapshot's version: the task runs over `ROOT/<package>-<version>`.
    pub version_pinned: String,
    /// The issue text.
    pub question: String,
    /// The files the fix edits.
    pub gold_files: Vec<String>,
    /// The functions it edits, `path:func` or `path:Class.method`.
    pub gold_functions: Vec<String>,
}

impl CodeTask {
    /// The snapshot folder's name under the repositories' root.
    pub fn snapshot(&self) -> String {
        format!("{}-{}", self.package, self.version_pinned)
    }
}

/// Reads a task file.
pub fn load_code_tasks(path: &Path) -> Result<Vec<CodeTask>, EvalError> {
    let text = std::fs::read_to_string(path).map_err(|e| EvalError::Io(path.display().to_string(), e))?;
    let mut tasks = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let task: CodeTask =
            serde_json::from_str(line).map_err(|e| EvalError::BadQuestion { line: n + 1, message: e.to_string() })?;
        tasks.push(task);
    }
    if tasks.is_empty() {
        return Err(EvalError::NoQuestions);
    }
    Ok(tasks)
}

/// How a code evaluation runs.
#[derive(Debug, Clone)]
pub struct CodeEvalOptions {
    /// Where the snapshots are (`ROOT/<package>-<version>`).
    pub repos: PathBuf,
    /// Where each snapshot's store is kept between runs.
    pub stores: PathBuf,
    /// The context budget (tokens, o200k for the engine).
    pub budget: usize,
    /// Compute the reference baseline too.
    pub baseline: bool,
    /// An embedding model directory: the engine's search is hybrid.
    pub model: Option<PathBuf>,
}

/// One system's result on one task.
#[derive(Debug, Clone, Serialize)]
pub struct CodeOutcome {
    /// The task.
    pub task: String,
    /// Its repository.
    pub repo: String,
    /// `ucp` or `reference-bm25`.
    pub system: &'static str,
    /// 1-based rank of the gold file among distinct files, if found.
    pub file_rank: Option<usize>,
    /// Every gold module among the first 10 modules.
    pub module_at_10: bool,
    /// A gold function among the first 10 units.
    pub func_any_at_10: bool,
    /// Every gold function among the first 10 units.
    pub func_all_at_10: bool,
    /// Every gold function whole in the context.
    pub context_all: bool,
    /// The context's tokens.
    pub context_tokens: usize,
    /// Milliseconds to rank files and units.
    pub search_ms: f64,
    /// Milliseconds to build the context.
    pub context_ms: f64,
    /// The first 10 units.
    pub top_units: Vec<String>,
    /// Where each gold function's unit stands among the ranked units
    /// (1-based, as Func@10 counts them: a class's own lines are units
    /// too); none when its unit is not ranked or not in the snapshot.
    pub gold_unit_ranks: Vec<Option<usize>>,
}

/// The outcomes of a run.
#[derive(Debug, Clone, Serialize)]
pub struct CodeReport {
    /// The context budget.
    pub budget: usize,
    /// The embedding model directory the engine's search was hybrid with.
    pub model: Option<String>,
    /// Every system's outcome on every task.
    pub outcomes: Vec<CodeOutcome>,
    /// Per snapshot: files, seconds to index (0 when found indexed).
    pub snapshots: Vec<SnapshotIndexed>,
}

/// What indexing one snapshot took.
#[derive(Debug, Clone, Serialize)]
pub struct SnapshotIndexed {
    /// The snapshot.
    pub name: String,
    /// Files read.
    pub files: usize,
    /// Bytes read.
    pub bytes: u64,
    /// Seconds to index it (ingest and write; 0 when it was indexed).
    pub seconds: f64,
    /// Whether this run (re)built it.
    pub built: bool,
}

/// The roles of code blocks: what a localization search looks at.
const CODE_ROLES: [&str; 12] = [
    "function",
    "method",
    "class",
    "struct",
    "enum",
    "trait",
    "interface",
    "impl",
    "module",
    "constant",
    "type_alias",
    "code",
];

/// Hits asked of search for the ranked lists.
const SEARCH_HITS: usize = 200;

/// Runs `tasks`, snapshot by snapshot; `progress` hears of each task done.
pub fn run_code_eval(
    tasks: &[CodeTask],
    options: &CodeEvalOptions,
    progress: &mut dyn FnMut(&str, &CodeOutcome),
) -> Result<CodeReport, EvalError> {
    let mut by_snapshot: BTreeMap<String, Vec<&CodeTask>> = BTreeMap::new();
    for task in tasks {
        by_snapshot.entry(task.snapshot()).or_default().push(task);
    }
    let mut report = CodeReport {
        budget: options.budget,
        model: options.model.as_ref().map(|m| m.display().to_string()),
        outcomes: Vec::new(),
        snapshots: Vec::new(),
    };
    for (name, tasks) in by_snapshot {
        let root = options.repos.join(&name);
        if !root.is_dir() {
            return Err(EvalError::Io(root.display().to_string(), std::io::ErrorKind::NotFound.into()));
        }
        let config = LibraryConfig {
            allowed_roots: None,
            model: options.model.clone(),
            ..LibraryConfig::new(options.stores.join(&name))
        };
        let library = Library::open(config)?;
        let indexed = library.index(std::slice::from_ref(&root), Some(&name), &IndexOptions::default(), &())?;
        report.snapshots.push(SnapshotIndexed {
            name: name.clone(),
            files: indexed.report.files,
            bytes: indexed.report.bytes,
            seconds: indexed.seconds,
            built: indexed.changed,
        });
        let workspace = indexed.workspace;
        let document = workspace.traversal().engine().document().clone();
        let units = Units::of(&document);
        let reference = options.baseline.then(|| Reference::new(&document, &units));
        for task in tasks {
            let outcome = engine_outcome(&library, &workspace, &document, &units, task, options.budget)?;
            progress(&name, &outcome);
            report.outcomes.push(outcome);
            if let Some(reference) = &reference {
                let outcome = reference.outcome(&units, task, options.budget);
                progress(&name, &outcome);
                report.outcomes.push(outcome);
            }
        }
    }
    Ok(report)
}

/// Scores ranked files and units and a context against a task's gold.
struct Scored<'a> {
    task: &'a CodeTask,
    units: &'a Units,
}

impl Scored<'_> {
    fn gold_units(&self) -> Vec<Option<usize>> {
        self.task.gold_functions.iter().map(|g| self.units.find(g)).collect()
    }

    fn outcome(
        &self,
        system: &'static str,
        files: &[String],
        ranked: &[usize],
        in_context: &dyn Fn(usize) -> bool,
    ) -> CodeOutcome {
        let gold = self.gold_units();
        let file_rank = files.iter().position(|f| self.task.gold_files.contains(f)).map(|r| r + 1);
        let top: Vec<usize> = ranked.iter().copied().take(10).collect();
        let found = |g: &Option<usize>| g.is_some_and(|u| top.contains(&u));
        let mut modules: Vec<&str> = Vec::new();
        for unit in ranked {
            let module = module_of(self.units.key(*unit));
            if !modules.contains(&module) {
                modules.push(module);
            }
            if modules.len() == 10 {
                break;
            }
        }
        let gold_modules: HashSet<&str> = self.task.gold_functions.iter().map(|g| module_of(g)).collect();
        let gold_modules_found = gold
            .iter()
            .zip(&self.task.gold_functions)
            .map(|(unit, name)| unit.map_or(module_of(name), |u| module_of(self.units.key(u))))
            .collect::<HashSet<&str>>();
        CodeOutcome {
            task: self.task.id.clone(),
            repo: self.task.repo.clone(),
            system,
            file_rank,
            module_at_10: !gold_modules.is_empty() && gold_modules_found.iter().all(|m| modules.contains(m)),
            func_any_at_10: gold.iter().any(found),
            func_all_at_10: !gold.is_empty() && gold.iter().all(found),
            context_all: !gold.is_empty() && gold.iter().all(|g| g.is_some_and(in_context)),
            context_tokens: 0,
            search_ms: 0.0,
            context_ms: 0.0,
            top_units: top.iter().map(|u| self.units.key(*u).to_owned()).collect(),
            gold_unit_ranks: gold
                .iter()
                .map(|g| g.and_then(|u| ranked.iter().position(|r| *r == u)).map(|r| r + 1))
                .collect(),
        }
    }
}

fn engine_outcome(
    library: &Library,
    workspace: &Workspace,
    document: &Document,
    units: &Units,
    task: &CodeTask,
    budget: usize,
) -> Result<CodeOutcome, EvalError> {
    let started = Instant::now();
    let request = SearchRequest {
        limit: SEARCH_HITS,
        roles: CODE_ROLES.iter().map(|r| (*r).to_owned()).collect(),
        ..SearchRequest::new(task.question.clone())
    };
    let hits = workspace.search(&request)?;
    let files: Vec<String> = hits.files().into_iter().map(|f| f.file).collect();
    let mut ranked: Vec<usize> = Vec::new();
    for hit in &hits.results {
        let unit = hit.id.parse().ok().and_then(|id| units.of_block(id));
        if let Some(unit) = unit.filter(|u| !ranked.contains(u)) {
            ranked.push(unit);
        }
    }
    let search_ms = started.elapsed().as_secs_f64() * 1000.0;
    let started = Instant::now();
    let options = ContextOptions { budget, scope: Scope::Code, ..ContextOptions::new(task.question.clone()) };
    let context = library.context(workspace, &options)?;
    let context_ms = started.elapsed().as_secs_f64() * 1000.0;
    let whole: IdSet =
        context.blocks.iter().filter(|b| b.representation == Representation::Full).map(|b| b.id).collect();
    let in_context = |unit: usize| units.blocks(unit).iter().all(|id| whole.contains(id) || !document.contains(*id));
    let mut outcome = Scored { task, units }.outcome("ucp", &files, &ranked, &in_context);
    outcome.context_tokens = context.tokens;
    outcome.search_ms = search_ms;
    outcome.context_ms = context_ms;
    Ok(outcome)
}

/// The reference baseline's indexes over one snapshot.
struct Reference {
    files: Vec<String>,
    file_index: Bm25,
    unit_index: Bm25,
    unit_tokens: Vec<usize>,
}

impl Reference {
    fn new(document: &Document, units: &Units) -> Reference {
        let mut texts: BTreeMap<String, String> = BTreeMap::new();
        for unit in 0..units.len() {
            let file = units.key(unit).split_once(':').map_or("", |(f, _)| f).to_owned();
            texts.entry(file).or_default();
        }
        // Whole files: every code block of the file, in order.
        for id in document.document_order() {
            let Some(block) = document.get(id) else { continue };
            let (Some(source), ucpkit_core::Content::Code { source: code, .. }) =
                (&block.metadata.source, &block.content)
            else {
                continue;
            };
            if let Some(text) = texts.get_mut(source.file.as_ref()) {
                text.push_str(code);
                text.push('\n');
            }
        }
        let files: Vec<String> = texts.keys().cloned().collect();
        let file_terms: Vec<Vec<String>> = texts.values().map(|t| terms(t)).collect();
        let unit_texts: Vec<String> = (0..units.len()).map(|u| units.text(document, u)).collect();
        let unit_terms: Vec<Vec<String>> = unit_texts.iter().map(|t| terms(t)).collect();
        Reference {
            files,
            file_index: Bm25::new(&file_terms),
            unit_index: Bm25::new(&unit_terms),
            unit_tokens: unit_texts.iter().map(|t| word_tokens(t)).collect(),
        }
    }

    fn outcome(&self, units: &Units, task: &CodeTask, budget: usize) -> CodeOutcome {
        let started = Instant::now();
        let query = terms(&task.question);
        let files: Vec<String> = self.file_index.rank(&query).into_iter().map(|i| self.files[i].clone()).collect();
        let ranked = self.unit_index.rank(&query);
        let search_ms = started.elapsed().as_secs_f64() * 1000.0;
        let mut context: HashSet<usize> = HashSet::new();
        let mut used = 0;
        for &unit in &ranked {
            if used + self.unit_tokens[unit] <= budget {
                context.insert(unit);
                used += self.unit_tokens[unit];
            }
            if used >= budget {
                break;
            }
        }
        let mut outcome = Scored { task, units }.outcome("reference-bm25", &files, &ranked, &|u| context.contains(&u));
        outcome.context_tokens = used;
        outcome.search_ms = search_ms;
        outcome
    }
}

impl CodeReport {
    /// The metrics per system, overall and per repository, with latency
    /// percentiles, as a text table.
    pub fn table(&self) -> String {
        let mut systems: Vec<&str> = Vec::new();
        let mut repos: Vec<&str> = Vec::new();
        for outcome in &self.outcomes {
            if !systems.contains(&outcome.system) {
                systems.push(outcome.system);
            }
            if !repos.contains(&outcome.repo.as_str()) {
                repos.push(&outcome.repo);
            }
        }
        let ctx = format!("Ctx@{}", self.budget);
        let mut out = match &self.model {
            Some(model) => format!("ucp search: hybrid with the model in {model}\n"),
            None => String::new(),
        };
        out += &format!(
            "{:<16} {:<22} {:>5} {:>7} {:>7} {:>8} {:>9} {:>9} {:>9} {:>10} {:>8} {:>8}\n",
            "system",
            "repo",
            "tasks",
            "File@1",
            "File@5",
            "File@10",
            "Module@10",
            "Func@10",
            "Func@10",
            ctx,
            "p50 ms",
            "p95 ms"
        );
        out.push_str(&format!(
            "{:<16} {:<22} {:>5} {:>7} {:>7} {:>8} {:>9} {:>9} {:>9} {:>10}\n",
            "", "", "", "", "", "", "", "any", "all", "all"
        ));
        for system in &systems {
            let mut groups: Vec<(&str, Vec<&CodeOutcome>)> = repos
                .iter()
                .map(|r| (*r, self.outcomes.iter().filter(|o| o.system == *system && o.repo == *r).collect()))
                .collect();
            groups.push(("overall", self.outcomes.iter().filter(|o| o.system == *system).collect()));
            for (repo, outcomes) in groups.iter().filter(|(_, o)| !o.is_empty()) {
                let share = |f: &dyn Fn(&CodeOutcome) -> bool| {
                    100.0 * outcomes.iter().filter(|o| f(o)).count() as f64 / outcomes.len() as f64
                };
                let at = |k: usize| move |o: &CodeOutcome| o.file_rank.is_some_and(|r| r <= k);
                let mut ms: Vec<f64> = outcomes.iter().map(|o| o.search_ms + o.context_ms).collect();
                ms.sort_by(f64::total_cmp);
                out.push_str(&format!(
                    "{:<16} {:<22} {:>5} {:>7.1} {:>7.1} {:>8.1} {:>9.1} {:>9.1} {:>9.1} {:>10.1} {:>8.1} {:>8.1}\n",
                    system,
                    repo,
                    outcomes.len(),
                    share(&at(1)),
                    share(&at(5)),
                    share(&at(10)),
                    share(&|o| o.module_at_10),
                    share(&|o| o.func_any_at_10),
                    share(&|o| o.func_all_at_10),
                    share(&|o| o.context_all),
                    percentile(&ms, 0.5),
                    percentile(&ms, 0.95),
                ));
            }
        }
        out
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let at = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[at]
}
