//! Short ids: full block ids in a rendered window become 1, 2, 3 ... (and
//! UCL commands that use them are expanded back by the parser's
//! `Command::expand_short_ids`), so an agent spends two or three tokens on
//! an id instead of about a dozen.

use crate::{BlockId, IdMap, ID_PREFIX};

/// Length of a full id in text: `blk_` + 24 hex digits.
const ID_LEN: usize = ID_PREFIX.len() + 24;

/// A two-way map between full block ids and short integer ids.
///
/// Numbers are handed out in first-seen order starting at 1 and never
/// reused, so a short id keeps its meaning for the life of the map. It
/// serializes as the list of full ids in number order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IdMapper {
    to_short: IdMap<u32>,
    to_full: Vec<BlockId>,
}

impl IdMapper {
    /// An empty map.
    pub fn new() -> Self {
        IdMapper::default()
    }

    /// The short id of `id`, assigning the next number if it has none.
    pub fn short(&mut self, id: BlockId) -> u32 {
        if let Some(short) = self.to_short.get(&id) {
            return *short;
        }
        self.to_full.push(id);
        let short = u32::try_from(self.to_full.len()).expect("fewer than 2^32 ids");
        self.to_short.insert(id, short);
        short
    }

    /// The short id of `id`, if it has one.
    pub fn get_short(&self, id: BlockId) -> Option<u32> {
        self.to_short.get(&id).copied()
    }

    /// The full id behind a short id.
    pub fn full(&self, short: u32) -> Option<BlockId> {
        let index = usize::try_from(short).ok()?.checked_sub(1)?;
        self.to_full.get(index).copied()
    }

    /// The full ids in number order (short id `n` is at index `n - 1`).
    pub fn ids(&self) -> &[BlockId] {
        &self.to_full
    }

    /// Number of mapped ids.
    pub fn len(&self) -> usize {
        self.to_full.len()
    }

    /// Whether no id is mapped.
    pub fn is_empty(&self) -> bool {
        self.to_full.is_empty()
    }

    /// Replaces every full id in `text` by its short id (assigning numbers
    /// to ids seen for the first time).
    pub fn shorten(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find(ID_PREFIX) {
            let candidate = rest.get(at..at + ID_LEN);
            let boundary_before = !rest[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
            let boundary_after = !rest[at..].chars().nth(ID_LEN).is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            match candidate.and_then(|c| c.parse::<BlockId>().ok()) {
                Some(id) if boundary_before && boundary_after => {
                    out.push_str(&rest[..at]);
                    out.push_str(&self.short(id).to_string());
                    rest = &rest[at + ID_LEN..];
                }
                _ => {
                    out.push_str(&rest[..at + ID_PREFIX.len()]);
                    rest = &rest[at + ID_PREFIX.len()..];
                }
            }
        }
        out.push_str(rest);
        out
    }
}

impl serde::Serialize for IdMapper {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_full.serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for IdMapper {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let ids = Vec::<BlockId>::deserialize(deserializer)?;
        let mut map = IdMapper::new();
        for id in ids {
            map.short(id);
        }
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> BlockId {
        let mut bytes = [0u8; 12];
        bytes[11] = n;
        BlockId::from_bytes(bytes)
    }

    #[test]
    fn serializes_as_the_ids_in_number_order() {
        let mut map = IdMapper::new();
        map.short(id(5));
        map.short(id(2));
        let json = serde_json::to_string(&map).unwrap();
        let back: IdMapper = serde_json::from_str(&json).unwrap();
        assert_eq!(back, map);
        assert_eq!(back.full(2), Some(id(2)));
    }

    #[test]
    fn numbers_are_stable_and_start_at_one() {
        let mut map = IdMapper::new();
        assert_eq!(map.short(id(7)), 1);
        assert_eq!(map.short(id(9)), 2);
        assert_eq!(map.short(id(7)), 1);
        assert_eq!(map.full(2), Some(id(9)));
        assert_eq!(map.full(0), None);
        assert_eq!(map.full(3), None);
    }

    #[test]
    fn shortens_text() {
        let mut map = IdMapper::new();
        let text = format!("GOTO {}\nLINK {} references {}", id(1), id(2), id(1));
        assert_eq!(map.shorten(&text), "GOTO 1\nLINK 2 references 1");
    }

    #[test]
    fn leaves_lookalikes_alone() {
        let mut map = IdMapper::new();
        let text = format!("xblk_{} blk_short {}9", "0".repeat(24), id(3));
        assert_eq!(map.shorten(&text), text);
    }
}
