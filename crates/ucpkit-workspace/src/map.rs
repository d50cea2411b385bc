//! The repository map as every front end asks for it: a budget, and a
//! question or files to personalize it to.

use std::collections::HashMap;

use ucpkit_code::map::{repo_map, RepoMap};
use ucpkit_core::{BlockId, Role};

use crate::library::Workspace;
use crate::{SearchRequest, WorkspaceError};

/// The budget of a map when none is asked for, in tokens.
pub const DEFAULT_MAP_BUDGET: usize = 1024;

/// Search hits a question seeds the map with.
const SEED_HITS: usize = 50;

/// What a map is personalized to, and its size.
#[derive(Debug, Clone, Default)]
pub struct MapRequest {
    /// A question: its search hits pull their files up.
    pub question: Option<String>,
    /// Files (corpus paths) the agent is working on.
    pub files: Vec<String>,
    /// Most tokens of the map (o200k).
    pub budget: usize,
}

impl Workspace {
    /// The repository map of the document: files ranked by PageRank over
    /// the code graph, personalized to the request, with their most used
    /// symbols' signatures, within the budget.
    pub fn map(&self, request: &MapRequest) -> Result<RepoMap, WorkspaceError> {
        if request.budget < crate::MIN_BUDGET {
            return Err(WorkspaceError::Invalid(format!("the map budget must be at least {}", crate::MIN_BUDGET)));
        }
        let mut seeds: Vec<(BlockId, f64)> = Vec::new();
        if let Some(question) = request.question.as_deref().filter(|q| !q.trim().is_empty()) {
            let hits = self.search(&SearchRequest { limit: SEED_HITS, ..SearchRequest::new(question) })?;
            for hit in hits.results {
                if let Ok(id) = hit.id.parse() {
                    seeds.push((id, hit.score));
                }
            }
        }
        let engine = self.traversal().engine();
        let doc = engine.document();
        if !request.files.is_empty() {
            let files: HashMap<&str, BlockId> = doc
                .blocks()
                .filter(|b| b.role() == Some(&Role::File))
                .filter_map(|b| Some((b.metadata.label.as_deref()?, b.id)))
                .collect();
            for path in &request.files {
                let path = path.trim_start_matches("./");
                let id = files.get(path).ok_or_else(|| {
                    WorkspaceError::Invalid(format!(
                        "no file {path:?} in {} (paths are relative to the corpus)",
                        self.name()
                    ))
                })?;
                seeds.push((*id, 1.0));
            }
        }
        let tokenizer = ucpkit_core::BpeTokenizer::default();
        Ok(repo_map(doc, &seeds, request.budget, &tokenizer))
    }
}
