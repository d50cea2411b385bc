//! The discovery pool: sessions share block ids they found relevant, with a
//! relevance, a reason, metadata and a time to live; others read them back
//! through filters. Expired entries are dropped as the pool is used.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;
use std::time::Duration;

use serde::Serialize;
use ucpkit_core::BlockId;

use ucpkit_sessions::SessionId;

/// How relevant a discovery is, coarsely.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiscoveryRelevance {
    /// Context around what matters.
    Low,
    /// Probably useful.
    Medium,
    /// Answers (part of) the task.
    High,
}

/// What a session shares.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDiscovery {
    /// The blocks found.
    pub block_ids: Vec<BlockId>,
    /// How relevant they are.
    pub relevance: DiscoveryRelevance,
    /// A finer score (0..1) for ranking discoveries of the same relevance.
    pub score: f64,
    /// Why they matter.
    pub reason: String,
    /// Free-form facts (`section`, `via` ...).
    pub metadata: BTreeMap<String, String>,
    /// How long the discovery stays in the pool.
    pub ttl: Duration,
}

/// A discovery in the pool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Discovery {
    /// Its number, in the order shared (starting at 1).
    pub seq: u64,
    /// The session that shared it.
    pub source: SessionId,
    /// The blocks found.
    pub block_ids: Vec<BlockId>,
    /// How relevant they are.
    pub relevance: DiscoveryRelevance,
    /// A finer score (0..1).
    pub score: f64,
    /// Why they matter.
    pub reason: String,
    /// Free-form facts.
    pub metadata: BTreeMap<String, String>,
    /// When it was shared (ms since the Unix epoch).
    pub shared_ms: i64,
    /// When it leaves the pool.
    pub expires_ms: i64,
}

/// Which discoveries to read; every condition given must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiscoveryFilter {
    /// At least this relevant.
    pub min_relevance: Option<DiscoveryRelevance>,
    /// Shared by one of these sessions (empty: any).
    pub sources: Vec<SessionId>,
    /// Not shared by this session (to read what the others found).
    pub exclude_source: Option<SessionId>,
    /// Naming this block.
    pub block: Option<BlockId>,
    /// Shared after this sequence number (to read only what is new).
    pub after: Option<u64>,
    /// At most this many, most recent first when cut.
    pub limit: Option<usize>,
}

impl DiscoveryFilter {
    fn accepts(&self, d: &Discovery) -> bool {
        self.min_relevance.is_none_or(|min| d.relevance >= min)
            && (self.sources.is_empty() || self.sources.contains(&d.source))
            && self.exclude_source != Some(d.source)
            && self.block.is_none_or(|b| d.block_ids.contains(&b))
            && self.after.is_none_or(|after| d.seq > after)
    }
}

/// Discoveries shared by the sessions of an engine.
pub struct DiscoveryPool {
    entries: RwLock<Entries>,
    next: AtomicU64,
    clock: fn() -> i64,
}

/// The pool's list, and the length at which sharing next drops the
/// expired entries (twice what stayed at the last sweep), so a share costs
/// O(1) amortized however large the pool grows.
#[derive(Default)]
struct Entries {
    list: Vec<Discovery>,
    sweep_at: usize,
}

/// The smallest pool worth sweeping.
const MIN_SWEEP: usize = 1024;

impl DiscoveryPool {
    /// An empty pool reading time from `clock`.
    pub fn new(clock: fn() -> i64) -> Self {
        DiscoveryPool { entries: RwLock::new(Entries::default()), next: AtomicU64::new(1), clock }
    }

    /// Shares a discovery; returns its sequence number.
    pub fn share(&self, source: SessionId, discovery: NewDiscovery) -> u64 {
        let now = (self.clock)();
        let ttl = i64::try_from(discovery.ttl.as_millis()).unwrap_or(i64::MAX);
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        if entries.list.len() >= entries.sweep_at {
            entries.list.retain(|d| d.expires_ms > now);
            entries.sweep_at = (entries.list.len() * 2).max(MIN_SWEEP);
        }
        // Numbered under the lock, so sequence order is pool order.
        let seq = self.next.fetch_add(1, Ordering::Relaxed);
        entries.list.push(Discovery {
            seq,
            source,
            block_ids: discovery.block_ids,
            relevance: discovery.relevance,
            score: discovery.score.clamp(0.0, 1.0),
            reason: discovery.reason,
            metadata: discovery.metadata,
            shared_ms: now,
            expires_ms: now.saturating_add(ttl),
        });
        seq
    }

    /// Live discoveries passing `filter`, oldest first.
    pub fn get(&self, filter: &DiscoveryFilter) -> Vec<Discovery> {
        let now = (self.clock)();
        let entries = self.entries.read().unwrap_or_else(|e| e.into_inner());
        let mut found: Vec<Discovery> =
            entries.list.iter().filter(|d| d.expires_ms > now && filter.accepts(d)).cloned().collect();
        if let Some(limit) = filter.limit {
            let cut = found.len().saturating_sub(limit);
            found.drain(..cut);
        }
        found
    }

    /// Removes the discoveries `sources` shared and returns the live ones,
    /// oldest first: how a host that ran those sessions for one job (the
    /// orchestrator) collects their findings without leaving them behind.
    pub fn take(&self, sources: &[SessionId]) -> Vec<Discovery> {
        let now = (self.clock)();
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        let (taken, kept): (Vec<Discovery>, Vec<Discovery>) =
            std::mem::take(&mut entries.list).into_iter().partition(|d| sources.contains(&d.source));
        entries.list = kept;
        taken.into_iter().filter(|d| d.expires_ms > now).collect()
    }

    /// Drops expired discoveries; returns how many left.
    pub fn expire(&self) -> usize {
        let now = (self.clock)();
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        let before = entries.list.len();
        entries.list.retain(|d| d.expires_ms > now);
        before - entries.list.len()
    }

    /// Live discoveries held.
    pub fn len(&self) -> usize {
        let now = (self.clock)();
        self.entries.read().unwrap_or_else(|e| e.into_inner()).list.iter().filter(|d| d.expires_ms > now).count()
    }

    /// Whether no live discovery is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicI64;

    use super::*;

    static NOW: AtomicI64 = AtomicI64::new(1_000);

    fn clock() -> i64 {
        NOW.load(Ordering::SeqCst)
    }

    fn found(blocks: &[u8], relevance: DiscoveryRelevance, ttl_ms: u64) -> NewDiscovery {
        NewDiscovery {
            block_ids: blocks.iter().map(|&n| BlockId::from_bytes([n; 12])).collect(),
            relevance,
            score: 0.5,
            reason: "test".into(),
            metadata: BTreeMap::new(),
            ttl: Duration::from_millis(ttl_ms),
        }
    }

    #[test]
    fn filters_combine_and_expired_entries_leave() {
        let pool = DiscoveryPool::new(clock);
        let (a, b) = (SessionId::from_u128(1), SessionId::from_u128(2));
        let first = pool.share(a, found(&[1, 2], DiscoveryRelevance::High, 10_000));
        pool.share(b, found(&[2], DiscoveryRelevance::Low, 100));
        pool.share(b, found(&[3], DiscoveryRelevance::Medium, 10_000));
        assert_eq!(pool.len(), 3);
        let high = pool.get(&DiscoveryFilter { min_relevance: Some(DiscoveryRelevance::Medium), ..Default::default() });
        assert_eq!(high.len(), 2);
        let others = pool.get(&DiscoveryFilter { exclude_source: Some(a), ..Default::default() });
        assert!(others.iter().all(|d| d.source == b));
        let on_two = pool.get(&DiscoveryFilter { block: Some(BlockId::from_bytes([2; 12])), ..Default::default() });
        assert_eq!(on_two.len(), 2);
        let newer = pool.get(&DiscoveryFilter { after: Some(first), limit: Some(1), ..Default::default() });
        assert_eq!(newer.len(), 1);
        assert_eq!(newer[0].block_ids, [BlockId::from_bytes([3; 12])]);

        NOW.fetch_add(500, Ordering::SeqCst);
        assert_eq!(pool.len(), 2, "the 100 ms discovery expired");
        assert_eq!(pool.expire(), 1);
        assert!(pool.get(&DiscoveryFilter::default()).iter().all(|d| d.relevance != DiscoveryRelevance::Low));
    }

    #[test]
    fn take_removes_what_the_sources_shared() {
        let pool = DiscoveryPool::new(clock);
        let (a, b, c) = (SessionId::from_u128(1), SessionId::from_u128(2), SessionId::from_u128(3));
        pool.share(a, found(&[1], DiscoveryRelevance::High, 10_000));
        pool.share(b, found(&[2], DiscoveryRelevance::High, 10_000));
        pool.share(c, found(&[3], DiscoveryRelevance::High, 10_000));
        let taken = pool.take(&[a, c]);
        assert_eq!(taken.iter().map(|d| d.source).collect::<Vec<_>>(), [a, c]);
        assert_eq!(pool.len(), 1);
        assert!(pool.take(&[a]).is_empty(), "taken once");
    }

    #[test]
    fn a_pool_shared_into_for_long_stays_bounded_by_what_lives() {
        // A clock of its own: the other tests' clock must not move under them.
        static LATER: AtomicI64 = AtomicI64::new(1_000);
        let pool = DiscoveryPool::new(|| LATER.load(Ordering::SeqCst));
        let a = SessionId::from_u128(1);
        for _ in 0..10 * MIN_SWEEP {
            pool.share(a, found(&[1], DiscoveryRelevance::Low, 1));
            LATER.fetch_add(2, Ordering::SeqCst);
        }
        let held = pool.entries.read().unwrap().list.len();
        assert!(held <= MIN_SWEEP, "{held} entries held, all but one expired");
    }
}
