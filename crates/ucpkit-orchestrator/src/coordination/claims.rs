//! Exploration claims: soft locks with expiry, so two agents do not explore
//! the same blocks. A claim takes all of its blocks or none; a second
//! claimant is told who holds them and until when.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;
use ucpkit_core::{BlockId, IdMap};

use ucpkit_sessions::SessionId;

/// The answer to a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum ClaimResult {
    /// The blocks are the claimant's until then (ms since the Unix epoch).
    Granted {
        /// Expiry.
        expires_ms: i64,
    },
    /// Another session holds (at least) this block.
    Held {
        /// The block in conflict.
        block: BlockId,
        /// Its holder.
        by: SessionId,
        /// When the holder's claim expires.
        expires_ms: i64,
    },
}

impl ClaimResult {
    /// Whether the claim was granted.
    pub fn granted(&self) -> bool {
        matches!(self, ClaimResult::Granted { .. })
    }
}

/// Claims by block.
pub struct Claims {
    held: Mutex<IdMap<(SessionId, i64)>>,
    clock: fn() -> i64,
}

impl Claims {
    /// No claims; time from `clock`.
    pub fn new(clock: fn() -> i64) -> Self {
        Claims { held: Mutex::new(IdMap::default()), clock }
    }

    /// Claims every block of `blocks` for `session` until `ttl` from now,
    /// or none of them when another session holds one (its own claims are
    /// renewed).
    pub fn claim(&self, session: SessionId, blocks: &[BlockId], ttl: Duration) -> ClaimResult {
        let now = (self.clock)();
        let expires_ms = now.saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        for block in blocks {
            if let Some(&(by, until)) = held.get(block) {
                if by != session && until > now {
                    return ClaimResult::Held { block: *block, by, expires_ms: until };
                }
            }
        }
        for block in blocks {
            held.insert(*block, (session, expires_ms));
        }
        ClaimResult::Granted { expires_ms }
    }

    /// Releases `session`'s claims on `blocks` (others' claims stay).
    pub fn release(&self, session: SessionId, blocks: &[BlockId]) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        for block in blocks {
            if held.get(block).is_some_and(|(by, _)| *by == session) {
                held.remove(block);
            }
        }
    }

    /// Releases every claim of `session`.
    pub fn release_all(&self, session: SessionId) {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).retain(|_, (by, _)| *by != session);
    }

    /// Who holds a live claim on `block`.
    pub fn holder(&self, block: BlockId) -> Option<SessionId> {
        let now = (self.clock)();
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.get(&block).filter(|(_, until)| *until > now).map(|(by, _)| *by)
    }

    /// Live claims per session.
    pub fn by_session(&self) -> HashMap<SessionId, usize> {
        let now = (self.clock)();
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let mut counts = HashMap::new();
        for (by, until) in held.values() {
            if *until > now {
                *counts.entry(*by).or_default() += 1;
            }
        }
        counts
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicI64, Ordering};

    use super::*;

    static NOW: AtomicI64 = AtomicI64::new(0);

    fn clock() -> i64 {
        NOW.load(Ordering::SeqCst)
    }

    #[test]
    fn claims_are_all_or_nothing_name_the_holder_and_expire() {
        let claims = Claims::new(clock);
        let (a, b) = (SessionId::from_u128(1), SessionId::from_u128(2));
        let blocks: Vec<BlockId> = (1..=3).map(|n| BlockId::from_bytes([n; 12])).collect();
        assert!(claims.claim(a, &blocks[..2], Duration::from_secs(1)).granted());
        let second = claims.claim(b, &blocks[1..], Duration::from_secs(1));
        assert_eq!(second, ClaimResult::Held { block: blocks[1], by: a, expires_ms: 1000 });
        assert_eq!(claims.holder(blocks[2]), None, "a refused claim takes nothing");
        assert!(claims.claim(a, &blocks[..1], Duration::from_secs(5)).granted(), "the holder renews");

        claims.release(b, &blocks[..2]);
        assert_eq!(claims.holder(blocks[0]), Some(a), "only the holder releases");
        NOW.store(2_000, Ordering::SeqCst);
        assert_eq!(claims.holder(blocks[1]), None, "expired");
        assert!(claims.claim(b, &blocks[1..], Duration::from_secs(1)).granted());
        claims.release_all(a);
        assert_eq!(claims.holder(blocks[0]), None);
        assert_eq!(claims.by_session().get(&b), Some(&2));
    }
}
