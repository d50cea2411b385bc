//! The units code localization is counted in: a function, a method, or a
//! class's own lines (its head and the code between its methods), each
//! named `path:qualname` the way SWE-bench localization sets name the
//! functions a fix edited. A function nested in another is no unit of its
//! own: its name (`Class.inner`, `inner`) is an alias of the unit around
//! it. Units are read from a document made by code ingest, so the engine
//! and the reference baseline count the same things.

use std::collections::HashMap;

use ucpkit_core::{outline, Block, BlockId, Content, Document, IdMap, Role};

/// The units of a document.
#[derive(Debug, Default)]
pub struct Units {
    keys: Vec<String>,
    by_key: HashMap<String, usize>,
    /// The blocks of each unit, in document order.
    blocks: Vec<Vec<BlockId>>,
    of_block: IdMap<usize>,
    aliases: HashMap<String, usize>,
}

impl Units {
    /// Reads the units of every code file of `doc`.
    pub fn of(doc: &Document) -> Units {
        let mut units = Units::default();
        let mut nested: Vec<(String, usize)> = Vec::new();
        for id in doc.document_order() {
            let Some(block) = doc.get(id) else { continue };
            let Some(file) = block.metadata.source.as_ref().map(|s| s.file.to_string()) else { continue };
            let unit = match (outline::symbol(block), block.role()) {
                (Some(qname), Some(role)) if is_unit_role(role) => {
                    let unit = units.unit(&format!("{file}:{qname}"));
                    if let Some(inner) = block.metadata.custom.get("nested").and_then(|n| n.as_array()) {
                        let prefix = qname.rsplit_once('.').map_or(String::new(), |(p, _)| format!("{p}."));
                        for name in inner.iter().filter_map(|n| n.as_str()) {
                            nested.push((format!("{file}:{prefix}{name}"), unit));
                        }
                    }
                    unit
                }
                (None, Some(Role::Code)) => match doc.parent(id).and_then(|p| units.of_block.get(&p).copied()) {
                    Some(unit) => unit,
                    None => continue,
                },
                _ => continue,
            };
            units.blocks[unit].push(id);
            units.of_block.insert(id, unit);
        }
        for (alias, unit) in nested {
            if !units.by_key.contains_key(&alias) {
                units.aliases.entry(alias).or_insert(unit);
            }
        }
        units
    }

    fn unit(&mut self, key: &str) -> usize {
        if let Some(unit) = self.by_key.get(key) {
            return *unit;
        }
        self.keys.push(key.to_owned());
        self.blocks.push(Vec::new());
        self.by_key.insert(key.to_owned(), self.keys.len() - 1);
        self.keys.len() - 1
    }

    /// How many units there are.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The unit a block belongs to.
    pub fn of_block(&self, id: BlockId) -> Option<usize> {
        self.of_block.get(&id).copied()
    }

    /// A unit's `path:qualname`.
    pub fn key(&self, unit: usize) -> &str {
        &self.keys[unit]
    }

    /// A unit's blocks.
    pub fn blocks(&self, unit: usize) -> &[BlockId] {
        &self.blocks[unit]
    }

    /// The unit a gold function names: itself, or the unit it is nested in.
    pub fn find(&self, gold: &str) -> Option<usize> {
        self.by_key.get(gold).or_else(|| self.aliases.get(gold)).copied()
    }

    /// A unit's text: its blocks' text, one after the other.
    pub fn text(&self, doc: &Document, unit: usize) -> String {
        let mut text = String::new();
        for block in self.blocks[unit].iter().filter_map(|id| doc.get(*id)) {
            text.push_str(code_text(block));
            text.push('\n');
        }
        text
    }
}

/// The module of a unit key: `path:Class` for `path:Class.method`.
pub fn module_of(key: &str) -> &str {
    match key.split_once(':') {
        Some((path, name)) => {
            let end = path.len() + 1 + name.split('.').next().unwrap_or(name).len();
            &key[..end]
        }
        None => key,
    }
}

fn is_unit_role(role: &Role) -> bool {
    role.is_code_symbol() && !matches!(role, Role::Module | Role::Impl | Role::Constant | Role::TypeAlias)
}

fn code_text(block: &Block) -> &str {
    match &block.content {
        Content::Code { source, .. } => source,
        Content::Text { text, .. } => text,
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_are_the_top_level_name() {
        assert_eq!(module_of("a/b.py:Model.save"), "a/b.py:Model");
        assert_eq!(module_of("a/b.py:helper"), "a/b.py:helper");
    }
}
