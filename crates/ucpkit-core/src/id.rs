//! Block ids: `blk_` followed by 24 lowercase hex digits (96 bits).
//!
//! Ids are derived deterministically from what a block *is* (content kind,
//! normalized content, role) plus a disambiguator (the scope it was imported
//! from and the occurrence index of identical content inside that scope), so
//! importing the same source twice yields the same ids while identical
//! paragraphs in two places still get two distinct blocks.

use std::fmt;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The textual prefix of every block id.
pub const ID_PREFIX: &str = "blk_";

/// A 96-bit block identifier.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct BlockId([u8; 12]);

impl BlockId {
    /// The id of every document's root block: `blk_000000000000000000000000`.
    pub const ROOT: BlockId = BlockId([0; 12]);

    /// Wraps raw id bytes.
    pub const fn from_bytes(bytes: [u8; 12]) -> Self {
        BlockId(bytes)
    }

    /// The raw id bytes (what the store keeps).
    pub const fn as_bytes(&self) -> &[u8; 12] {
        &self.0
    }

    /// Whether this is the root id.
    pub fn is_root(&self) -> bool {
        *self == Self::ROOT
    }

    /// Builds an id from a finished [`IdHasher`] input.
    ///
    /// The zero id is reserved for roots; a derived id that happens to be
    /// zero (probability 2^-96) has its last byte set so it never collides.
    fn from_digest(digest: &[u8; 32]) -> Self {
        let mut bytes = [0u8; 12];
        bytes.copy_from_slice(&digest[..12]);
        if bytes == [0; 12] {
            bytes[11] = 1;
        }
        BlockId(bytes)
    }
}

/// Incremental input for [`BlockId`] derivation.
///
/// Every field is length-prefixed so that `("ab", "c")` and `("a", "bc")`
/// hash differently.
pub struct IdHasher(blake3::Hasher);

impl IdHasher {
    /// Starts a derivation for blocks of the given content kind.
    pub fn new(kind: &str) -> Self {
        let mut hasher = IdHasher(blake3::Hasher::new());
        hasher.field(b"ucm-block-id/v1");
        hasher.field(kind.as_bytes());
        hasher
    }

    /// Adds one length-prefixed field.
    pub fn field(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    /// Finishes the derivation.
    pub fn finish(&self) -> BlockId {
        BlockId::from_digest(self.0.finalize().as_bytes())
    }
}

/// Why a string is not a block id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid block id {input:?}: expected `blk_` followed by 24 hex digits")]
pub struct ParseIdError {
    /// The rejected text.
    pub input: String,
}

impl FromStr for BlockId {
    type Err = ParseIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseIdError { input: s.chars().take(64).collect() };
        let hex = s.strip_prefix(ID_PREFIX).ok_or_else(err)?.as_bytes();
        if hex.len() != 24 {
            return Err(err());
        }
        let mut bytes = [0u8; 12];
        for (i, pair) in hex.chunks_exact(2).enumerate() {
            let hi = hex_value(pair[0]).ok_or_else(err)?;
            let lo = hex_value(pair[1]).ok_or_else(err)?;
            bytes[i] = hi << 4 | lo;
        }
        Ok(BlockId(bytes))
    }
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for BlockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(ID_PREFIX)?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for BlockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Hash for BlockId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Derived ids are uniformly random, so 64 of their bits are already a
        // perfect hash; feeding them through SipHash would only cost time.
        let mut head = [0u8; 8];
        head.copy_from_slice(&self.0[4..]);
        state.write_u64(u64::from_le_bytes(head) ^ u64::from(self.0[0]));
    }
}

impl Serialize for BlockId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for BlockId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A hasher that passes a [`BlockId`]'s own bits through (see its `Hash`).
#[derive(Default, Clone, Copy)]
pub struct PassThroughHasher(u64);

impl Hasher for PassThroughHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only reached for keys other than BlockId; fold bytes in (FNV-1a).
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// `HashMap` keyed by block ids, using [`PassThroughHasher`].
pub type IdMap<V> = std::collections::HashMap<BlockId, V, BuildHasherDefault<PassThroughHasher>>;

/// `HashSet` of block ids, using [`PassThroughHasher`].
pub type IdSet = std::collections::HashSet<BlockId, BuildHasherDefault<PassThroughHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn root_prints_as_zeros() {
        assert_eq!(BlockId::ROOT.to_string(), "blk_000000000000000000000000");
    }

    #[test]
    fn rejects_malformed_ids() {
        for bad in [
            "",
            "blk_",
            "blk_123",
            "xyz_000000000000000000000000",
            "blk_00000000000000000000000g",
            "blk_0000000000000000000000000",
        ] {
            assert!(bad.parse::<BlockId>().is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn derivation_separates_fields() {
        let a = IdHasher::new("text").field(b"ab").field(b"c").finish();
        let b = IdHasher::new("text").field(b"a").field(b"bc").finish();
        assert_ne!(a, b);
        assert_eq!(a, IdHasher::new("text").field(b"ab").field(b"c").finish());
    }

    proptest! {
        #[test]
        fn display_parse_round_trip(bytes in any::<[u8; 12]>()) {
            let id = BlockId::from_bytes(bytes);
            let text = id.to_string();
            prop_assert_eq!(text.len(), 28);
            prop_assert_eq!(text.parse::<BlockId>().unwrap(), id);
        }

        #[test]
        fn parse_never_panics(s in ".{0,40}") {
            let _ = s.parse::<BlockId>();
        }
    }
}
