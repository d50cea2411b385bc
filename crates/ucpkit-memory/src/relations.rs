//! A relation store: plans, steps, files and agents as the nodes of a
//! directed acyclic graph (a step may belong to several plans), each node
//! with a type, a status and free context.
//!
//! Like memories, the graph is a document of the store (`relations`, or
//! `relations@<namespace>`): each node a block under the root (its title
//! the text; `node_type`, `status` and `context` in its metadata), each
//! relation a `custom:<type>` edge from parent to child. So it is written
//! under the store's durability and conflict rules, and an agent can GOTO
//! a node and FOLLOW its edges. A link that would close a cycle is
//! refused; the check and the write happen on the same revision (a writer
//! that came in between makes the link checked again).

use std::collections::VecDeque;

use serde::Serialize;
use ucpkit_core::{Block, BlockId, Document, EdgeType, IdSet, Tokenizer};
use ucpkit_ucl::{
    Append, BlockRef, Command, ContentLiteral, ContentType, Delete, DeleteMode, Edit, EditOp, Link, Path, PathSegment,
    Unlink, Value,
};

use ucpkit_workspace::WorkspaceError;

use crate::AgentState;

/// The relation graph of the default namespace.
pub const RELATIONS_DOCUMENT: &str = ucpkit_store::AGENT_STATE_DOCUMENTS[1];

/// The relation a link gets when none is named.
pub const DEFAULT_RELATION: &str = "contains";

/// Times a change is tried again when another writer came in.
const ATTEMPTS: usize = ucpkit_workspace::STATE_TRIES;

/// Where a node stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Finished.
    Done,
    /// Given up, or broken.
    Failed,
}

impl Status {
    /// Its name as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::InProgress => "in_progress",
            Status::Done => "done",
            Status::Failed => "failed",
        }
    }
}

impl std::str::FromStr for Status {
    type Err = WorkspaceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pending" => Ok(Status::Pending),
            "in_progress" => Ok(Status::InProgress),
            "done" => Ok(Status::Done),
            "failed" => Ok(Status::Failed),
            other => {
                Err(WorkspaceError::Invalid(format!("status {other:?}: one of pending, in_progress, done, failed")))
            }
        }
    }
}

/// One node of the graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// Its id (`blk_…`).
    pub id: BlockId,
    /// Its title.
    pub title: String,
    /// Its type (plan, step, file, agent ...).
    pub node_type: String,
    /// Where it stands.
    pub status: Status,
    /// Free context.
    pub context: String,
}

/// A node to add.
#[derive(Debug, Clone)]
pub struct NewNode {
    /// Its title.
    pub title: String,
    /// Its type (plan, step, file, agent ...).
    pub node_type: String,
    /// Where it stands (pending when `None`).
    pub status: Option<Status>,
    /// Free context.
    pub context: String,
    /// Its parents, each with the relation (`contains` when `None`).
    pub parents: Vec<(BlockId, Option<String>)>,
}

/// The graph as stored at one revision: nodes and relations, read only.
#[derive(Debug, Clone)]
pub struct RelationGraph {
    nodes: Vec<Node>,
    /// (parent, relation, child)
    relations: Vec<(BlockId, String, BlockId)>,
}

fn one_word(what: &str, value: &str) -> Result<(), WorkspaceError> {
    let ok = !value.is_empty()
        && value.len() <= 32
        && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(WorkspaceError::Invalid(format!("{what} {value:?}: one word of at most 32 letters, digits, '_' or '-'")))
    }
}

impl RelationGraph {
    /// The graph of `doc`, a relations document.
    pub fn of(doc: &Document) -> RelationGraph {
        let node = |block: &Block| {
            let custom = &block.metadata.custom;
            let text = |key: &str| custom.get(key).and_then(|v| v.as_str()).unwrap_or("").to_owned();
            Node {
                id: block.id,
                title: block.plain_text().into_owned(),
                node_type: text("node_type"),
                status: text("status").parse().unwrap_or(Status::Pending),
                context: text("context"),
            }
        };
        let nodes: Vec<Node> = doc.children(BlockId::ROOT).iter().filter_map(|id| doc.get(*id)).map(node).collect();
        let mut relations = Vec::new();
        for node in &nodes {
            for edge in doc.edges().outgoing(node.id) {
                if let EdgeType::Custom(name) = &edge.edge_type {
                    relations.push((node.id, name.to_string(), edge.target));
                }
            }
        }
        RelationGraph { nodes, relations }
    }

    /// Every node, in the order added.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Node `id`.
    pub fn node(&self, id: BlockId) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// The relations, as (parent, relation, child).
    pub fn relations(&self) -> &[(BlockId, String, BlockId)] {
        &self.relations
    }

    /// The nodes `id` hangs under.
    pub fn parents(&self, id: BlockId) -> Vec<BlockId> {
        self.relations.iter().filter(|r| r.2 == id).map(|r| r.0).collect()
    }

    /// The nodes under `id`.
    pub fn children(&self, id: BlockId) -> Vec<BlockId> {
        self.relations.iter().filter(|r| r.0 == id).map(|r| r.2).collect()
    }

    fn reach(&self, from: BlockId, next: impl Fn(BlockId) -> Vec<BlockId>) -> Vec<BlockId> {
        let mut seen = IdSet::default();
        let mut out = Vec::new();
        let mut queue: VecDeque<BlockId> = next(from).into();
        while let Some(id) = queue.pop_front() {
            if seen.insert(id) {
                out.push(id);
                queue.extend(next(id));
            }
        }
        out
    }

    /// Every node above `id`, nearest first.
    pub fn ancestors(&self, id: BlockId) -> Vec<BlockId> {
        self.reach(id, |n| self.parents(n))
    }

    /// Every node below `id`, nearest first.
    pub fn descendants(&self, id: BlockId) -> Vec<BlockId> {
        self.reach(id, |n| self.children(n))
    }

    /// Nodes without parents.
    pub fn roots(&self) -> Vec<&Node> {
        self.nodes.iter().filter(|n| !self.relations.iter().any(|r| r.2 == n.id)).collect()
    }

    /// Nodes without children.
    pub fn leaves(&self) -> Vec<&Node> {
        self.nodes.iter().filter(|n| !self.relations.iter().any(|r| r.0 == n.id)).collect()
    }

    /// Nodes of type `node_type`.
    pub fn by_type(&self, node_type: &str) -> Vec<&Node> {
        self.nodes.iter().filter(|n| n.node_type == node_type).collect()
    }

    /// Nodes with status `status`.
    pub fn by_status(&self, status: Status) -> Vec<&Node> {
        self.nodes.iter().filter(|n| n.status == status).collect()
    }

    /// Whether a relation from `parent` to `child` would close a cycle
    /// (`child` is `parent` or lies above it).
    pub fn would_create_cycle(&self, parent: BlockId, child: BlockId) -> bool {
        parent == child || self.ancestors(parent).contains(&child)
    }

    /// The graph as an indented tree an LLM reads easily: each root, then
    /// what is under it, one node a line (`[status] title (type, id)`); a
    /// node under several parents is drawn in full under the first and
    /// named again, `(shown above)`, under the others, so the tree has one
    /// line per node and relation. Lines stop before `budget` tokens, with
    /// a line saying how many nodes were not drawn.
    pub fn render(&self, budget: usize, tokenizer: &dyn Tokenizer) -> String {
        let mut out = String::new();
        let mut used = 0;
        let mut drawn = IdSet::default();
        let mut stack: Vec<(BlockId, usize)> = self.roots().iter().rev().map(|root| (root.id, 0)).collect();
        while let Some((id, depth)) = stack.pop() {
            let Some(node) = self.node(id) else { continue };
            let again = drawn.contains(&id);
            let tail = match (again, node.context.is_empty()) {
                (true, _) => " (shown above)".to_owned(),
                (false, true) => String::new(),
                (false, false) => format!(": {}", node.context),
            };
            let line = format!(
                "{}[{}] {} ({}, {}){tail}\n",
                "  ".repeat(depth),
                node.status.as_str(),
                node.title,
                node.node_type,
                node.id
            );
            let tokens = tokenizer.count(&line);
            if used + tokens > budget {
                let left = self.nodes.iter().filter(|n| !drawn.contains(&n.id)).count();
                out.push_str(&format!("… {left} more nodes not drawn (a larger budget shows them)\n"));
                break;
            }
            used += tokens;
            out.push_str(&line);
            if !again {
                drawn.insert(id);
                stack.extend(self.children(id).into_iter().rev().map(|child| (child, depth + 1)));
            }
        }
        out
    }
}

/// The document holding `namespace`'s relation graph.
pub fn relations_document(namespace: Option<&str>) -> Result<String, WorkspaceError> {
    crate::memory::namespaced(RELATIONS_DOCUMENT, namespace)
}

fn field(name: &str) -> Path {
    Path(vec![PathSegment::Field(name.to_owned())])
}

fn set(id: BlockId, name: &str, value: &str) -> Command {
    Command::Edit(Edit {
        target: BlockRef::Id(id),
        path: field(name),
        op: EditOp::Set(Value::String(value.to_owned())),
        condition: None,
    })
}

fn link(parent: BlockId, relation: &str, child: BlockId) -> Command {
    Command::Link(Link {
        source: BlockRef::Id(parent),
        edge_type: EdgeType::Custom(relation.into()),
        target: BlockRef::Id(child),
        properties: Vec::new(),
    })
}

impl AgentState<'_> {
    /// The relation graph of `namespace` as stored now (empty when none).
    pub fn relations(&self, namespace: Option<&str>) -> Result<RelationGraph, WorkspaceError> {
        let name = relations_document(namespace)?;
        if !self.library.holds_stored(&name)? {
            return Ok(RelationGraph { nodes: Vec::new(), relations: Vec::new() });
        }
        let workspace = self.library.workspace(&name)?;
        let engine = workspace.traversal().engine();
        Ok(RelationGraph::of(engine.document()))
    }

    /// Adds `node` under its parents; returns it.
    pub fn relation_add(&self, namespace: Option<&str>, node: &NewNode) -> Result<Node, WorkspaceError> {
        one_word("node type", &node.node_type)?;
        if node.title.trim().is_empty() {
            return Err(WorkspaceError::Invalid("a node needs a title".into()));
        }
        let name = relations_document(namespace)?;
        self.library.create_if_absent(&name)?;
        let append = Command::Append(Append {
            parent: BlockRef::Id(BlockId::ROOT),
            content_type: ContentType::Text,
            at: None,
            properties: vec![
                ("node_type".into(), Value::String(node.node_type.clone())),
                ("status".into(), Value::String(node.status.unwrap_or(Status::Pending).as_str().into())),
                ("context".into(), Value::String(node.context.clone())),
            ],
            content: Some(ContentLiteral::Value(Value::String(node.title.clone()))),
        });
        let created = self.change_graph(&name, |graph| {
            for (parent, relation) in &node.parents {
                one_word("relation", relation.as_deref().unwrap_or(DEFAULT_RELATION))?;
                if graph.node(*parent).is_none() {
                    return Err(WorkspaceError::Invalid(format!("no node {parent}")));
                }
            }
            Ok(vec![append.clone()])
        })?;
        let id = created.ok_or_else(|| WorkspaceError::Damaged("the new node cannot be read back".into()))?;
        // A new node has no children, so no relation to it closes a cycle;
        // a parent removed meanwhile fails the link, and the node goes too.
        for (parent, relation) in &node.parents {
            if let Err(error) = self.relation_link(namespace, *parent, id, relation.as_deref()) {
                let _ = self.relation_remove(namespace, id);
                return Err(error);
            }
        }
        self.relations(namespace)?
            .node(id)
            .cloned()
            .ok_or_else(|| WorkspaceError::Damaged("the new node cannot be read back".into()))
    }

    /// Sets node `id`'s status, context or title (those given).
    pub fn relation_update(
        &self,
        namespace: Option<&str>,
        id: BlockId,
        status: Option<Status>,
        context: Option<&str>,
        title: Option<&str>,
    ) -> Result<Node, WorkspaceError> {
        let name = relations_document(namespace)?;
        self.change_graph(&name, |graph| {
            if graph.node(id).is_none() {
                return Err(WorkspaceError::Invalid(format!("no node {id}")));
            }
            let mut commands = Vec::new();
            commands.extend(status.map(|s| set(id, "status", s.as_str())));
            commands.extend(context.map(|c| set(id, "context", c)));
            commands.extend(title.map(|t| set(id, "text", t)));
            Ok(commands)
        })?;
        self.relations(namespace)?.node(id).cloned().ok_or_else(|| WorkspaceError::Invalid(format!("no node {id}")))
    }

    /// Relates `parent` to `child` (`contains` when `relation` is `None`);
    /// refused when it would close a cycle.
    pub fn relation_link(
        &self,
        namespace: Option<&str>,
        parent: BlockId,
        child: BlockId,
        relation: Option<&str>,
    ) -> Result<(), WorkspaceError> {
        let relation = relation.unwrap_or(DEFAULT_RELATION);
        one_word("relation", relation)?;
        let name = relations_document(namespace)?;
        self.change_graph(&name, |graph| {
            for id in [parent, child] {
                if graph.node(id).is_none() {
                    return Err(WorkspaceError::Invalid(format!("no node {id}")));
                }
            }
            if graph.would_create_cycle(parent, child) {
                return Err(WorkspaceError::Invalid(format!(
                    "{parent} -> {child} would close a cycle: {child} is {parent} or above it"
                )));
            }
            let exists = graph.relations.iter().any(|r| (r.0, r.1.as_str(), r.2) == (parent, relation, child));
            Ok(if exists { Vec::new() } else { vec![link(parent, relation, child)] })
        })?;
        Ok(())
    }

    /// Removes the relation `parent` -> `child` of type `relation`.
    pub fn relation_unlink(
        &self,
        namespace: Option<&str>,
        parent: BlockId,
        child: BlockId,
        relation: Option<&str>,
    ) -> Result<bool, WorkspaceError> {
        let relation = relation.unwrap_or(DEFAULT_RELATION).to_owned();
        let name = relations_document(namespace)?;
        let mut found = false;
        self.change_graph(&name, |graph| {
            found = graph.relations.iter().any(|r| (r.0, r.1.as_str(), r.2) == (parent, relation.as_str(), child));
            Ok(if found {
                vec![Command::Unlink(Unlink {
                    source: BlockRef::Id(parent),
                    edge_type: EdgeType::Custom(relation.as_str().into()),
                    target: BlockRef::Id(child),
                })]
            } else {
                Vec::new()
            })
        })?;
        Ok(found)
    }

    /// Removes node `id` with its relations (its children stay, as roots
    /// when it was their only parent). False when there is no such node.
    pub fn relation_remove(&self, namespace: Option<&str>, id: BlockId) -> Result<bool, WorkspaceError> {
        let name = relations_document(namespace)?;
        let mut found = false;
        self.change_graph(&name, |graph| {
            found = graph.node(id).is_some();
            let mut commands: Vec<Command> = Vec::new();
            if found {
                for (parent, relation, child) in graph.relations.iter().filter(|r| r.0 == id || r.2 == id) {
                    commands.push(Command::Unlink(Unlink {
                        source: BlockRef::Id(*parent),
                        edge_type: EdgeType::Custom(relation.as_str().into()),
                        target: BlockRef::Id(*child),
                    }));
                }
                commands.push(Command::Delete(Delete {
                    target: Some(BlockRef::Id(id)),
                    mode: DeleteMode::Cascade,
                    condition: None,
                }));
            }
            Ok(commands)
        })?;
        Ok(found)
    }

    /// Runs the commands `plan` makes from the graph as stored, on that
    /// same revision: when another writer came in, the graph is read again
    /// and `plan` asked again. Returns the block the commands created, if
    /// any.
    fn change_graph(
        &self,
        name: &str,
        mut plan: impl FnMut(&RelationGraph) -> Result<Vec<Command>, WorkspaceError>,
    ) -> Result<Option<BlockId>, WorkspaceError> {
        if self.library.config().read_only {
            return Err(WorkspaceError::ReadOnly(format!("{name:?} cannot be written")));
        }
        if !self.library.holds_stored(name)? {
            return Err(WorkspaceError::Invalid("no node yet: add one first".into()));
        }
        ucpkit_workspace::replayed(ATTEMPTS, || {
            let _checked = self.library.state_writes();
            let graph = {
                let workspace = self.library.workspace(name)?;
                let engine = workspace.traversal().engine();
                RelationGraph::of(engine.document())
            };
            let commands = plan(&graph)?;
            if commands.is_empty() {
                return Ok(None);
            }
            self.library.run_commands(name, &commands, 1).map(|(_, created)| created)
        })
        .map_err(|e| match e.is_conflict() {
            true => WorkspaceError::Invalid(format!("{name:?} kept changing under this change: try again")),
            false => e,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_core::BpeTokenizer;
    use ucpkit_workspace::{Library, LibraryConfig};

    fn node(title: &str, node_type: &str, parents: &[BlockId]) -> NewNode {
        NewNode {
            title: title.into(),
            node_type: node_type.into(),
            status: None,
            context: String::new(),
            parents: parents.iter().map(|p| (*p, None)).collect(),
        }
    }

    #[test]
    fn a_plan_is_a_dag_that_refuses_cycles_and_renders_as_a_tree() {
        let dir = tempfile::tempdir().unwrap();
        let library = Library::open(LibraryConfig::new(dir.path())).unwrap();
        let state = AgentState::of(&library);
        assert!(state.relations(None).unwrap().nodes().is_empty());
        let plan = state.relation_add(None, &node("Ship memory", "plan", &[])).unwrap();
        let other = state.relation_add(None, &node("Release 1.2", "plan", &[])).unwrap();
        let store = state.relation_add(None, &node("Store memories", "step", &[plan.id, other.id])).unwrap();
        let test = state.relation_add(None, &node("Test recall", "step", &[store.id])).unwrap();
        assert_eq!(store.status, Status::Pending);

        let graph = state.relations(None).unwrap();
        assert_eq!(graph.parents(store.id), [plan.id, other.id], "two parents");
        assert_eq!(graph.ancestors(test.id), [store.id, plan.id, other.id]);
        assert_eq!(graph.descendants(plan.id), [store.id, test.id]);
        assert_eq!(graph.roots().len(), 2);
        assert_eq!(graph.leaves().iter().map(|n| n.id).collect::<Vec<_>>(), [test.id]);
        assert_eq!(graph.by_type("step").len(), 2);
        assert!(graph.would_create_cycle(test.id, plan.id));
        assert!(!graph.would_create_cycle(other.id, test.id));

        // A cycle is refused and nothing changes; an unknown node too.
        let refused = state.relation_link(None, test.id, plan.id, None).unwrap_err();
        assert!(refused.to_string().contains("cycle"), "{refused}");
        assert!(state.relation_link(None, plan.id, BlockId::ROOT, None).is_err());
        assert_eq!(state.relations(None).unwrap().relations().len(), graph.relations().len());

        let done = state.relation_update(None, store.id, Some(Status::Done), Some("merged in #12"), None).unwrap();
        assert_eq!((done.status, done.context.as_str()), (Status::Done, "merged in #12"));
        assert_eq!(state.relations(None).unwrap().by_status(Status::Done).len(), 1);

        let tokenizer = BpeTokenizer::default();
        let text = state.relations(None).unwrap().render(1_000, &tokenizer);
        assert!(text.starts_with("[pending] Ship memory (plan, blk_"), "{text}");
        assert!(text.contains(&format!("  [done] Store memories (step, {}): merged in #12\n", store.id)), "{text}");
        assert!(text.contains("    [pending] Test recall"), "{text}");
        assert!(text.contains("  [done] Store memories (step, "), "{text}");
        assert!(text.contains(" (shown above)\n"), "a node under two parents is drawn once: {text}");
        let short = state.relations(None).unwrap().render(12, &tokenizer);
        assert!(short.contains("more nodes not drawn"), "{short}");

        // A new process reads the same graph; removing a node drops its relations.
        drop(library);
        let library = Library::open(LibraryConfig::new(dir.path())).unwrap();
        let state = AgentState::of(&library);
        assert!(state.relation_remove(None, store.id).unwrap());
        assert!(!state.relation_remove(None, store.id).unwrap());
        let graph = state.relations(None).unwrap();
        assert_eq!(graph.nodes().len(), 3);
        assert!(graph.parents(test.id).is_empty(), "its only parent went");
        assert!(state.relation_unlink(None, plan.id, test.id, None).is_ok());
    }
}
