//! Block ids to their index in a [`super::Layout`]: an open-addressing
//! table (linear probing, at most half full) of indexes into the layout's
//! block array, keyed by the ids' leading bytes (ids are hashes already).
//!
//! It is plain numbers, so a layout read back from its file takes the
//! table as it is instead of hashing every block again: on a corpus of
//! half a million blocks, that insertion was the largest part of opening
//! a layout.

use ucpkit_core::BlockId;

/// A slot of the table that holds no block.
const EMPTY: u32 = u32::MAX;

/// Block ids to their index in a block array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SlotTable {
    /// Indexes into the block array, or [`EMPTY`]; a power of two long.
    slots: Vec<u32>,
    /// How many blocks it holds.
    len: usize,
}

/// Where probing for `id` starts in a table of `mask + 1` slots: all 12
/// bytes mixed (ids made from hashes are uniform, but an imported document
/// may carry ids such as `blk_000000000000000000000001`). Part of the
/// layout file's form: a change here bumps the codec's magic.
fn home(id: &BlockId, mask: usize) -> usize {
    let bytes = id.as_bytes();
    let head = u64::from_le_bytes(bytes[..8].try_into().expect("ids are 12 bytes"));
    let tail = u64::from(u32::from_le_bytes(bytes[8..12].try_into().expect("ids are 12 bytes")));
    (mix(head ^ mix(tail)) as usize) & mask
}

/// SplitMix64's finalizer: every input bit moves every output bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl SlotTable {
    /// The table of `blocks` (distinct ids).
    pub(super) fn build(blocks: &[BlockId]) -> Self {
        let capacity = (blocks.len() * 2).max(16).next_power_of_two();
        let mut slots = vec![EMPTY; capacity];
        let mask = capacity - 1;
        for (index, id) in blocks.iter().enumerate() {
            let mut at = home(id, mask);
            while slots[at] != EMPTY {
                at = (at + 1) & mask;
            }
            slots[at] = index as u32;
        }
        SlotTable { slots, len: blocks.len() }
    }

    /// The index of `id` in `blocks` (the array the table was built for).
    pub(super) fn get(&self, blocks: &[BlockId], id: &BlockId) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut at = home(id, mask);
        // At most half full, so an empty slot ends every probe.
        loop {
            match self.slots[at] {
                EMPTY => return None,
                index if blocks.get(index as usize) == Some(id) => return Some(index),
                _ => at = (at + 1) & mask,
            }
        }
    }

    /// How many blocks it holds.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Its slots, for encoding.
    pub(super) fn slots(&self) -> &[u32] {
        &self.slots
    }

    /// The table whose slots are `slots`, for a block array of `blocks`
    /// entries; `None` unless it is one [`SlotTable::build`] could have
    /// made: a power of two long, at most half full, each block at most
    /// once and every index inside the array.
    pub(super) fn from_slots(slots: Vec<u32>, blocks: usize) -> Option<Self> {
        if !slots.len().is_power_of_two() || slots.len() < blocks.checked_mul(2)? {
            return None;
        }
        let mut seen = vec![false; blocks];
        for &index in slots.iter().filter(|&&s| s != EMPTY) {
            let slot = seen.get_mut(index as usize)?;
            if std::mem::replace(slot, true) {
                return None;
            }
        }
        seen.iter().all(|&s| s).then_some(SlotTable { slots, len: blocks })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ids(n: usize) -> Vec<BlockId> {
        (0..n)
            .map(|i| format!("blk_{:024x}", (i as u128).wrapping_mul(0x9e37_79b9_7f4a_7c15)).parse().unwrap())
            .collect()
    }

    proptest! {
        #[test]
        fn every_block_is_found_at_its_index_and_no_other_id_is(n in 0usize..600) {
            let blocks = ids(n);
            let table = SlotTable::build(&blocks);
            for (i, id) in blocks.iter().enumerate() {
                prop_assert_eq!(table.get(&blocks, id), Some(i as u32));
            }
            let stranger: BlockId = "blk_ffffffffffffffffffffffff".parse().unwrap();
            prop_assert_eq!(table.get(&blocks, &stranger), None);
            prop_assert_eq!(SlotTable::from_slots(table.slots().to_vec(), n), Some(table));
        }
    }

    #[test]
    fn sequential_ids_spread_over_the_table() {
        let blocks: Vec<BlockId> = (0..5_000u32).map(|i| format!("blk_{i:024x}").parse().unwrap()).collect();
        let table = SlotTable::build(&blocks);
        let mask = table.slots().len() - 1;
        // Linear probing from each home: the longest run stays short.
        let longest = blocks
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let mut at = home(id, mask);
                let mut steps = 0;
                while table.slots()[at] != i as u32 {
                    at = (at + 1) & mask;
                    steps += 1;
                }
                steps
            })
            .max()
            .unwrap();
        assert!(longest < 64, "probes of {longest} steps");
    }

    #[test]
    fn slots_that_no_build_makes_are_refused() {
        let blocks = ids(5);
        let slots = SlotTable::build(&blocks).slots().to_vec();
        assert!(SlotTable::from_slots(slots[..15].to_vec(), 5).is_none(), "not a power of two");
        assert!(SlotTable::from_slots(slots.clone(), 9).is_none(), "more than half full");
        let mut twice = slots.clone();
        let empty = twice.iter().position(|&s| s == EMPTY).unwrap();
        twice[empty] = 0;
        assert!(SlotTable::from_slots(twice, 5).is_none(), "a block twice");
        let mut outside = slots;
        let empty = outside.iter().position(|&s| s == EMPTY).unwrap();
        outside[empty] = 7;
        assert!(SlotTable::from_slots(outside, 5).is_none(), "an index past the blocks");
    }
}
