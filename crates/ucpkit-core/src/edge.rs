//! Typed, directed edges between blocks and an index that answers both
//! outgoing and incoming edges of a block in O(degree).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::id::{BlockId, IdMap};

macro_rules! edge_types {
    ($( $variant:ident => $name:literal ),* $(,)?) => {
        /// The type of an edge.
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum EdgeType {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
            /// `custom:<name>`
            Custom(Box<str>),
        }

        impl EdgeType {
            /// The edge type's name (`custom:` prefixed for custom types).
            pub fn name(&self) -> std::borrow::Cow<'_, str> {
                match self {
                    $( EdgeType::$variant => $name.into(), )*
                    EdgeType::Custom(name) => format!("custom:{name}").into(),
                }
            }

            /// Every built-in edge type.
            pub const BUILT_IN: &'static [EdgeType] = &[$( EdgeType::$variant, )*];
        }

        impl FromStr for EdgeType {
            type Err = UnknownEdgeType;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                if let Some(name) = s.strip_prefix("custom:") {
                    if name.is_empty() {
                        return Err(UnknownEdgeType(s.to_owned()));
                    }
                    return Ok(EdgeType::Custom(name.into()));
                }
                match s.to_ascii_lowercase().as_str() {
                    $( $name => Ok(EdgeType::$variant), )*
                    _ => Err(UnknownEdgeType(s.to_owned())),
                }
            }
        }
    };
}

edge_types! {
    References => "references", CitedBy => "cited_by", LinksTo => "links_to",
    Supports => "supports", Contradicts => "contradicts", Elaborates => "elaborates",
    Summarizes => "summarizes", DerivedFrom => "derived_from", Supersedes => "supersedes",
    VersionOf => "version_of", AlternativeOf => "alternative_of",
    TranslationOf => "translation_of", Calls => "calls", Imports => "imports",
    Defines => "defines", Implements => "implements", Extends => "extends",
}

/// A string that names no edge type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown edge type {0:?} (expected a built-in type such as links_to, or custom:<name>)")]
pub struct UnknownEdgeType(pub String);

impl fmt::Display for EdgeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl Serialize for EdgeType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for EdgeType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Optional facts about an edge.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EdgeMetadata {
    /// How sure the producer of the edge is (0..1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f32>,
    /// A human note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Anything else.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub custom: BTreeMap<String, serde_json::Value>,
}

impl EdgeMetadata {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self.confidence.is_none() && self.note.is_none() && self.custom.is_empty()
    }
}

/// A directed, typed edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edge {
    /// Where the edge starts.
    pub source: BlockId,
    /// The relation.
    #[serde(rename = "type")]
    pub edge_type: EdgeType,
    /// Where the edge points.
    pub target: BlockId,
    /// Optional facts about the edge.
    #[serde(default, skip_serializing_if = "EdgeMetadata::is_empty")]
    pub metadata: EdgeMetadata,
}

impl Edge {
    /// An edge without metadata.
    pub fn new(source: BlockId, edge_type: EdgeType, target: BlockId) -> Self {
        Edge { source, edge_type, target, metadata: EdgeMetadata::default() }
    }
}

/// Outgoing and incoming edges of every block.
///
/// Outgoing lists own the edges; incoming lists hold `(source, type)` so a
/// reverse lookup never scans.
#[derive(Debug, Clone, Default)]
pub struct EdgeIndex {
    outgoing: IdMap<Vec<Edge>>,
    incoming: IdMap<Vec<(BlockId, EdgeType)>>,
    len: usize,
}

impl EdgeIndex {
    /// Adds an edge; returns false (and changes nothing) when an edge with the
    /// same source, type and target already exists.
    pub fn insert(&mut self, edge: Edge) -> bool {
        let out = self.outgoing.entry(edge.source).or_default();
        if out.iter().any(|e| e.edge_type == edge.edge_type && e.target == edge.target) {
            return false;
        }
        self.incoming.entry(edge.target).or_default().push((edge.source, edge.edge_type.clone()));
        out.push(edge);
        self.len += 1;
        true
    }

    /// Adds an edge known not to be there yet (as a store's, which holds
    /// each edge once), without looking through its source's edges first.
    pub(crate) fn insert_unchecked(&mut self, edge: Edge) {
        self.incoming.entry(edge.target).or_default().push((edge.source, edge.edge_type.clone()));
        self.outgoing.entry(edge.source).or_default().push(edge);
        self.len += 1;
    }

    /// Removes the edge `source -type-> target`; returns it when it existed.
    pub fn remove(&mut self, source: BlockId, edge_type: &EdgeType, target: BlockId) -> Option<Edge> {
        let out = self.outgoing.get_mut(&source)?;
        let pos = out.iter().position(|e| &e.edge_type == edge_type && e.target == target)?;
        let edge = out.remove(pos);
        if out.is_empty() {
            self.outgoing.remove(&source);
        }
        if let Some(inc) = self.incoming.get_mut(&target) {
            inc.retain(|(s, t)| !(*s == source && t == edge_type));
            if inc.is_empty() {
                self.incoming.remove(&target);
            }
        }
        self.len -= 1;
        Some(edge)
    }

    /// Makes `edges` (all starting at `source`, each once) the outgoing
    /// edges of `source`, in that order.
    pub(crate) fn replace_outgoing(&mut self, source: BlockId, edges: Vec<Edge>) {
        let current: Vec<(EdgeType, BlockId)> =
            self.outgoing(source).iter().map(|e| (e.edge_type.clone(), e.target)).collect();
        for (edge_type, target) in current {
            self.remove(source, &edge_type, target);
        }
        for edge in edges {
            self.insert_unchecked(edge);
        }
    }

    /// Removes every edge that starts or ends at `block`; returns them.
    pub fn remove_block(&mut self, block: BlockId) -> Vec<Edge> {
        let mut removed = Vec::new();
        let outgoing: Vec<(EdgeType, BlockId)> =
            self.outgoing(block).iter().map(|e| (e.edge_type.clone(), e.target)).collect();
        for (edge_type, target) in outgoing {
            removed.extend(self.remove(block, &edge_type, target));
        }
        let incoming: Vec<(BlockId, EdgeType)> = self.incoming(block).to_vec();
        for (source, edge_type) in incoming {
            removed.extend(self.remove(source, &edge_type, block));
        }
        removed
    }

    /// Edges starting at `block`, in insertion order.
    pub fn outgoing(&self, block: BlockId) -> &[Edge] {
        self.outgoing.get(&block).map_or(&[], Vec::as_slice)
    }

    /// `(source, type)` of edges ending at `block`, in insertion order.
    pub fn incoming(&self, block: BlockId) -> &[(BlockId, EdgeType)] {
        self.incoming.get(&block).map_or(&[], Vec::as_slice)
    }

    /// Number of edges.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no edges.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// All edges, grouped by source (in no particular source order).
    pub fn iter(&self) -> impl Iterator<Item = &Edge> {
        self.outgoing.values().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::IdHasher;

    fn id(n: u8) -> BlockId {
        IdHasher::new("test").field(&[n]).finish()
    }

    #[test]
    fn edge_types_parse_and_print() {
        for t in EdgeType::BUILT_IN {
            assert_eq!(&t.name().parse::<EdgeType>().unwrap(), t);
        }
        assert_eq!("custom:see_also".parse::<EdgeType>().unwrap(), EdgeType::Custom("see_also".into()));
        assert!("custom:".parse::<EdgeType>().is_err());
        assert!("likes".parse::<EdgeType>().is_err());
    }

    #[test]
    fn index_answers_both_directions_and_dedupes() {
        let mut index = EdgeIndex::default();
        assert!(index.insert(Edge::new(id(1), EdgeType::LinksTo, id(2))));
        assert!(!index.insert(Edge::new(id(1), EdgeType::LinksTo, id(2))));
        assert!(index.insert(Edge::new(id(3), EdgeType::References, id(2))));
        assert_eq!(index.len(), 2);
        assert_eq!(index.outgoing(id(1)).len(), 1);
        assert_eq!(index.incoming(id(2)), &[(id(1), EdgeType::LinksTo), (id(3), EdgeType::References)]);
        let removed = index.remove_block(id(2));
        assert_eq!(removed.len(), 2);
        assert!(index.is_empty());
        assert!(index.incoming(id(2)).is_empty());
        assert!(index.outgoing(id(1)).is_empty());
    }
}
