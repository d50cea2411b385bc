//! Who is looking at what: the blocks each session visited last (bounded),
//! so a host or another agent can see where attention is.

use std::collections::{HashMap, VecDeque};
use std::sync::RwLock;

use ucm_core::BlockId;

use crate::session::SessionId;

/// Blocks remembered per session.
pub const ACCESS_HISTORY: usize = 64;

/// Recent block accesses by session.
#[derive(Default)]
pub struct AccessTracker {
    recent: RwLock<HashMap<SessionId, VecDeque<BlockId>>>,
}

impl AccessTracker {
    /// Records that `session` looked at `blocks`.
    pub fn record(&self, session: SessionId, blocks: &[BlockId]) {
        if blocks.is_empty() {
            return;
        }
        let mut recent = self.recent.write().unwrap_or_else(|e| e.into_inner());
        let seen = recent.entry(session).or_default();
        for block in blocks {
            seen.retain(|b| b != block);
            if seen.len() == ACCESS_HISTORY {
                seen.pop_front();
            }
            seen.push_back(*block);
        }
    }

    /// The sessions that recently looked at `block`.
    pub fn watchers(&self, block: BlockId) -> Vec<SessionId> {
        let recent = self.recent.read().unwrap_or_else(|e| e.into_inner());
        let mut found: Vec<SessionId> =
            recent.iter().filter(|(_, seen)| seen.contains(&block)).map(|(session, _)| *session).collect();
        found.sort();
        found
    }

    /// The blocks `session` looked at last, most recent last.
    pub fn looked_at(&self, session: SessionId) -> Vec<BlockId> {
        let recent = self.recent.read().unwrap_or_else(|e| e.into_inner());
        recent.get(&session).map(|seen| seen.iter().copied().collect()).unwrap_or_default()
    }

    /// Forgets `session`.
    pub fn forget(&self, session: SessionId) {
        self.recent.write().unwrap_or_else(|e| e.into_inner()).remove(&session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_recent_accesses_per_session_bounded() {
        let tracker = AccessTracker::default();
        let (a, b) = (SessionId::from_u128(1), SessionId::from_u128(2));
        let block = |n: u8| BlockId::from_bytes([n; 12]);
        tracker.record(a, &[block(1), block(2)]);
        tracker.record(b, &[block(2)]);
        assert_eq!(tracker.watchers(block(2)), [a, b]);
        tracker.record(a, &[block(1)]);
        assert_eq!(tracker.looked_at(a), [block(2), block(1)], "a revisit moves to the end");
        let many: Vec<BlockId> = (0..100).map(|n| BlockId::from_bytes([n; 12])).collect();
        tracker.record(a, &many);
        assert_eq!(tracker.looked_at(a).len(), ACCESS_HISTORY);
        tracker.forget(b);
        assert!(tracker.watchers(block(2)).is_empty());
    }
}
