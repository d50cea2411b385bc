//! Tool discovery: a server started with it lists only a few core tools
//! and `find_tools`, which searches the descriptions of every tool the
//! server offers and returns the definitions of the few that fit an
//! intent, so an agent's tool list stays small. Every offered tool can be
//! called whether it was listed or not.
//!
//! The descriptions are searched like documents: each tool is a block
//! (its name's words, its description, its arguments) of a small document
//! indexed in a folder of its own, by BM25, and hybrid when the server has
//! a model.

use std::num::NonZeroUsize;
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use ucpkit_core::{Block, BlockId, Content, Document, Metadata, Role};
use ucpkit_search::{SearchConfig, SearchIndex, SearchOptions};

use crate::{CallError, Needs, ToolDef as Tool};

/// The tools a discovering server lists besides `find_tools`.
pub const CORE_TOOLS: [&str; 3] = ["context", "search", "ucl"];

/// Tools `find_tools` returns when the call does not say.
const DEFAULT_FOUND: usize = 3;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FindArgs {
    /// What you want to do
    intent: String,
    #[schemars(range(max = 10))]
    limit: Option<NonZeroUsize>,
}

/// `find_tools`.
pub(crate) fn find_tools() -> crate::Tool {
    crate::Tool::typed(
        "find_tools",
        "Find tools for what you want to do: returns the definitions of the best matching tools (memory, \
         rules, skills, files, code navigation, documents), which you can then call.",
        |connection, args: FindArgs| connection.find_tools(&args.intent, args.limit.map(NonZeroUsize::get)),
    )
    .needs(Needs::Discovery)
    .kind(crate::ActionKind::Search)
}

/// The words a tool is found by: its name split, its description, its
/// arguments with their descriptions.
fn searchable(tool: &Tool) -> String {
    let mut text = format!("{} {}", tool.name.replace('_', " "), tool.description);
    if let Some(properties) = tool.input_schema.get("properties").and_then(|p| p.as_object()) {
        for (name, schema) in properties {
            text.push_str(&format!("\n{}", name.replace('_', " ")));
            if let Some(description) = schema.get("description").and_then(|d| d.as_str()) {
                text.push_str(&format!(": {description}"));
            }
        }
    }
    text
}

/// The offered tools, searchable by intent.
pub(crate) struct ToolCatalog {
    tools: Vec<(BlockId, Tool)>,
    index: SearchIndex,
    /// Where the index lives (removed with the catalog).
    _dir: tempfile::TempDir,
}

impl ToolCatalog {
    /// A catalog of `tools`, with the embedding model in `model` when given.
    pub(crate) fn build(tools: Vec<Tool>, model: Option<&Path>) -> Result<Self, CallError> {
        let failed = |e: String| CallError::Arguments(format!("the tool catalog cannot be built: {e}"));
        let mut doc = Document::new("tools");
        let mut catalog = Vec::with_capacity(tools.len());
        for (n, tool) in tools.into_iter().enumerate() {
            let content = Content::plain(searchable(&tool));
            let role = Role::Paragraph;
            let block = Block::new(
                Block::derive_id(&content, Some(&role), &tool.name, n as u32),
                content,
                Metadata::with_role(role),
            );
            let id = doc.append_child(BlockId::ROOT, block).map_err(|e| failed(e.to_string()))?;
            catalog.push((id, tool));
        }
        let dir = tempfile::tempdir().map_err(|e| failed(e.to_string()))?;
        let embedder = model.map(ucpkit_search::load_embedder).transpose().map_err(|e| failed(e.to_string()))?;
        let (index, _) = SearchIndex::open(dir.path(), &doc, embedder, SearchConfig::default(), &())
            .map_err(|e| failed(e.to_string()))?;
        Ok(ToolCatalog { tools: catalog, index, _dir: dir })
    }

    /// The tools best fitting `intent`, best first, at most `limit`.
    pub(crate) fn find(&self, intent: &str, limit: Option<usize>) -> Result<Vec<&Tool>, CallError> {
        let limit = limit.unwrap_or(DEFAULT_FOUND).clamp(1, 10);
        let options = SearchOptions { limit, ..SearchOptions::default() };
        let hits = self
            .index
            .search_mode(intent, &options, self.index.default_mode())
            .map_err(|e| CallError::Arguments(format!("searching the tools failed: {e}")))?;
        Ok(hits.iter().filter_map(|hit| self.tools.iter().find(|(id, _)| *id == hit.id).map(|(_, t)| t)).collect())
    }
}

/// The definitions of `found` as the text `find_tools` returns.
pub(crate) fn found_text(found: &[&Tool]) -> String {
    if found.is_empty() {
        return "no tool fits; describe what you want to do in other words".to_owned();
    }
    let definitions: Vec<_> = found
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema}))
        .collect();
    serde_json::to_string_pretty(&definitions).expect("tool definitions serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_are_found_by_what_one_wants_to_do() {
        let offer = crate::ToolOffer { root: Some(std::env::temp_dir()), ..crate::ToolOffer::documents(8000) };
        let catalog = ToolCatalog::build(crate::tools::list(&offer), None).unwrap();
        let names = |intent: &str| -> Vec<String> {
            catalog.find(intent, Some(3)).unwrap().iter().map(|t| t.name.to_string()).collect()
        };
        assert_eq!(names("remember a decision for the next session")[0], "memory_store");
        assert_eq!(names("replace a string in a file")[0], "edit");
        assert!(names("which rules apply to this repository").contains(&"rules_for".to_owned()));
        assert!(names("run a shell command").contains(&"bash".to_owned()));
        assert!(found_text(&catalog.find("zzzz qqqq", None).unwrap()).starts_with("no tool fits"));
    }
}
