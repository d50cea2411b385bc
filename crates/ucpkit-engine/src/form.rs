//! The UCL document form both ways (export then import is lossless), and
//! document comparison for SNAPSHOT DIFF.

use std::collections::HashMap;

use serde_json::Value as Json;
use ucpkit_core::{Block, BlockId, Document, DocumentMetadata, Edge, IdHasher, IdSet};
use ucpkit_ucl::{BlockDef, BlockRef, Command, Link, StructureEntry, UclDocument, Value};

use crate::outcome::{Outcome, SnapshotDiff};
use crate::{build, edge_metadata, Engine, EngineError};

/// The root block property that carries the document's name, version and
/// metadata.
const DOCUMENT_PROPERTY: &str = "document";

/// The document as canonical UCL in document form: STRUCTURE for the tree,
/// BLOCKS for every block (orphans included), COMMANDS with one LINK per
/// edge. [`import_ucl`] reads it back to an identical document.
pub fn export_ucl(document: &Document) -> String {
    let ids = document.ordered_ids();
    let structure = ids
        .iter()
        .filter(|id| !document.children(**id).is_empty())
        .map(|id| StructureEntry {
            parent: BlockRef::Id(*id),
            children: document.children(*id).iter().map(|c| BlockRef::Id(*c)).collect(),
        })
        .collect();
    let blocks = ids
        .iter()
        .map(|id| {
            let block = document.get(*id).expect("ordered ids exist");
            let (content_type, mut properties, content) = build::describe(&block.content, &block.metadata);
            if id.is_root() {
                let facts = serde_json::json!({
                    "name": document.name(),
                    "version": document.version(),
                    "metadata": document.metadata,
                });
                properties.insert(0, (DOCUMENT_PROPERTY.to_owned(), Value::from_json(&facts)));
            }
            BlockDef { content_type, id: BlockRef::Id(*id), properties, content }
        })
        .collect();
    let commands = document
        .ordered_edges()
        .into_iter()
        .map(|edge| {
            let mut properties = Vec::new();
            if let Some(confidence) = edge.metadata.confidence {
                properties.push(("confidence".to_owned(), Value::Float(f64::from(confidence))));
            }
            if let Some(note) = &edge.metadata.note {
                properties.push(("note".to_owned(), Value::String(note.clone())));
            }
            properties.extend(edge.metadata.custom.iter().map(|(k, v)| (k.clone(), Value::from_json(v))));
            Command::Link(Link {
                source: BlockRef::Id(edge.source),
                edge_type: edge.edge_type.clone(),
                target: BlockRef::Id(edge.target),
                properties,
            })
        })
        .collect();
    let form = UclDocument { structure, blocks, commands };
    format!("// UCL document form of {:?}\n{}", document.name(), ucpkit_ucl::print_document(&form))
}

/// Why a document form could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The form describes no valid document.
    #[error("{0}")]
    Invalid(String),
    /// A command of the COMMANDS section failed.
    #[error("command {index} of COMMANDS failed: {source}")]
    Command {
        /// 1-based position in COMMANDS.
        index: usize,
        /// The engine's error.
        source: EngineError,
    },
}

/// Builds a document from its UCL document form: the tree from STRUCTURE,
/// blocks from BLOCKS, edges from the leading LINK commands; any other
/// commands then run through the engine, which is returned ready for more.
///
/// Symbolic ids (`blk_intro`) get stable derived ids; a STRUCTURE parent
/// that is neither defined nor anyone's child is the document root
/// (`blk_root: [...]` in hand-written forms). `name` is used when the form
/// does not carry one.
pub fn import_ucl(form: &UclDocument, name: &str) -> Result<(Engine, Vec<Outcome>), ImportError> {
    let invalid = |message: String| ImportError::Invalid(message);
    let mut names: HashMap<String, BlockId> = HashMap::new();

    let mut definitions: Vec<(BlockId, &BlockDef)> = Vec::with_capacity(form.blocks.len());
    let mut defined = IdSet::default();
    for def in &form.blocks {
        let id = symbolic_id(&mut names, &def.id)?;
        if !defined.insert(id) {
            return Err(invalid(format!("block {} is defined twice", def.id)));
        }
        definitions.push((id, def));
    }
    let mut children: HashMap<BlockId, Vec<BlockId>> = HashMap::new();
    let mut listed = IdSet::default();
    for entry in &form.structure {
        let parent = symbolic_id(&mut names, &entry.parent)?;
        let kids = entry.children.iter().map(|c| symbolic_id(&mut names, c)).collect::<Result<Vec<_>, _>>()?;
        for kid in &kids {
            if !listed.insert(*kid) {
                return Err(invalid(format!("block {kid} is listed as a child twice")));
            }
        }
        if children.insert(parent, kids).is_some() {
            return Err(invalid(format!("STRUCTURE lists the children of {} twice", entry.parent)));
        }
    }
    // Hand-written forms name the root (`blk_root`) without defining it.
    let undefined_roots: Vec<BlockId> =
        children.keys().copied().filter(|p| !defined.contains(p) && !listed.contains(p) && !p.is_root()).collect();
    let alias = match undefined_roots.as_slice() {
        [] => None,
        [one] if !defined.contains(&BlockId::ROOT) => Some(*one),
        _ => return Err(invalid("more than one STRUCTURE parent has no BLOCKS definition".into())),
    };
    if let Some(alias) = alias {
        let kids = children.remove(&alias).expect("found above");
        children.insert(BlockId::ROOT, kids);
        for id in names.values_mut().filter(|id| **id == alias) {
            *id = BlockId::ROOT;
        }
    }
    for kid in &listed {
        if !defined.contains(kid) {
            return Err(invalid(format!("block {kid} is in STRUCTURE but has no BLOCKS definition")));
        }
    }

    let mut doc_name = name.to_owned();
    let mut version = 0;
    let mut doc_metadata = DocumentMetadata::default();
    let mut blocks = Vec::with_capacity(definitions.len() + 1);
    for (id, def) in definitions {
        let mut properties = def.properties.clone();
        if let Some(at) = properties.iter().position(|(k, _)| k == DOCUMENT_PROPERTY) {
            if !id.is_root() {
                return Err(invalid(format!("only the root block carries {DOCUMENT_PROPERTY}=")));
            }
            let facts = properties.remove(at).1.to_json();
            if let Some(Json::String(n)) = facts.get("name") {
                doc_name.clone_from(n);
            }
            version = facts.get("version").and_then(Json::as_u64).unwrap_or(0);
            if let Some(m) = facts.get("metadata") {
                doc_metadata = serde_json::from_value(m.clone())
                    .map_err(|e| invalid(format!("document metadata of the root: {e}")))?;
            }
        }
        let (content, metadata) = build::build(def.content_type, &properties, def.content.as_ref())
            .map_err(|e| invalid(format!("block {}: {e}", def.id)))?;
        let kids = children.remove(&id).unwrap_or_default();
        blocks.push((Block::new(id, content, metadata), kids));
    }
    if let Some(kids) = children.remove(&BlockId::ROOT) {
        blocks.push((Block::root(), kids));
    }

    let leading_links = form.commands.iter().take_while(|c| matches!(c, Command::Link(_))).count();
    let mut edges = Vec::with_capacity(leading_links);
    for command in &form.commands[..leading_links] {
        let Command::Link(link) = command else { unreachable!("counted above") };
        let source = symbolic_id(&mut names, &link.source)?;
        let target = symbolic_id(&mut names, &link.target)?;
        for end in [source, target] {
            if !defined.contains(&end) && !end.is_root() {
                return Err(invalid(format!("LINK names {end}, which has no BLOCKS definition")));
            }
        }
        let metadata = edge_metadata(&link.properties).map_err(|e| invalid(e.to_string()))?;
        edges.push(Edge { source, edge_type: link.edge_type.clone(), target, metadata });
    }

    let document = Document::from_parts(doc_name, doc_metadata, version, blocks, edges);
    if let Some(issue) = document.validate().tree_issue() {
        return Err(invalid(format!("the structure is not a tree: {issue}")));
    }
    let mut engine = Engine::new(document);
    engine.names = names;
    let mut outcomes = Vec::new();
    for (offset, command) in form.commands[leading_links..].iter().enumerate() {
        let outcome = engine
            .execute(command)
            .map_err(|source| ImportError::Command { index: leading_links + offset + 1, source })?;
        outcomes.push(outcome);
    }
    Ok((engine, outcomes))
}

/// The id a document-form reference stands for; symbolic names get stable
/// derived ids.
fn symbolic_id(names: &mut HashMap<String, BlockId>, reference: &BlockRef) -> Result<BlockId, ImportError> {
    match reference {
        BlockRef::Id(id) => Ok(*id),
        BlockRef::Name(name) => {
            Ok(*names.entry(name.clone()).or_insert_with(|| IdHasher::new("ucl-name").field(name.as_bytes()).finish()))
        }
        other => Err(ImportError::Invalid(format!("the document form names blocks by id, not {other}"))),
    }
}

/// What changed from `from` to `to`.
pub(crate) fn diff(from: &Document, to: &Document) -> SnapshotDiff {
    let mut diff = SnapshotDiff::default();
    for id in to.ordered_ids() {
        match from.get(id) {
            None => diff.added.push(id),
            Some(before) => {
                let after = to.get(id).expect("listed");
                if before != after {
                    diff.modified.push(id);
                }
                if from.parent(id) != to.parent(id) {
                    diff.moved.push(id);
                }
            }
        }
    }
    diff.removed = from.ordered_ids().into_iter().filter(|id| !to.contains(*id)).collect();
    let key = |e: &Edge| (e.source, e.edge_type.clone(), e.target);
    let before: std::collections::HashSet<_> = from.edges().iter().map(key).collect();
    let after: std::collections::HashSet<_> = to.edges().iter().map(key).collect();
    diff.edges_added = after.difference(&before).count();
    diff.edges_removed = before.difference(&after).count();
    diff
}
