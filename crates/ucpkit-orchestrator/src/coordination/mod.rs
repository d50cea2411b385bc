//! Coordination between the sessions of one engine: what they found (the
//! discovery pool), what they are exploring (claims), and work waiting for
//! a free agent (the work queue). The orchestrator uses all three; any host
//! may too.
//!
//! Every part is thread-safe behind its own lock, so sub-agents on several
//! threads share discoveries without blocking each other's claims.

mod claims;
mod pool;
mod queue;

use std::time::Duration;

pub use claims::{ClaimResult, Claims};
pub use pool::{Discovery, DiscoveryFilter, DiscoveryPool, DiscoveryRelevance, NewDiscovery};
pub use queue::{JobId, WorkQueue};

use ucpkit_core::BlockId;

use crate::policy::ExplorationTask;
use ucpkit_sessions::SessionId;

/// The coordinator an engine's sessions share.
pub struct AgentCoordinator {
    /// Shared discoveries, expiring by TTL.
    pub discoveries: DiscoveryPool,
    /// Exploration claims (soft locks with expiry).
    pub claims: Claims,
    /// Work waiting for an agent, per job.
    pub queue: WorkQueue<ExplorationTask>,
}

impl AgentCoordinator {
    /// A coordinator reading time (ms since the Unix epoch) from `clock`.
    pub fn new(clock: fn() -> i64) -> Self {
        AgentCoordinator {
            discoveries: DiscoveryPool::new(clock),
            claims: Claims::new(clock),
            queue: WorkQueue::default(),
        }
    }

    /// Shares a discovery from `session` (see [`DiscoveryPool::share`]).
    pub fn share_discovery(&self, session: SessionId, discovery: NewDiscovery) -> u64 {
        self.discoveries.share(session, discovery)
    }

    /// Live discoveries passing `filter` (see [`DiscoveryPool::get`]).
    pub fn get_discoveries(&self, filter: &DiscoveryFilter) -> Vec<Discovery> {
        self.discoveries.get(filter)
    }

    /// Removes and returns what `sources` shared (see [`DiscoveryPool::take`]).
    pub fn take_discoveries(&self, sources: &[SessionId]) -> Vec<Discovery> {
        self.discoveries.take(sources)
    }

    /// Claims `blocks` for exploration by `session` for `ttl`.
    pub fn claim_exploration(&self, session: SessionId, blocks: &[BlockId], ttl: Duration) -> ClaimResult {
        self.claims.claim(session, blocks, ttl)
    }

    /// Releases `session`'s claims on `blocks`.
    pub fn release_claim(&self, session: SessionId, blocks: &[BlockId]) {
        self.claims.release(session, blocks);
    }

    /// The session exploring `block`, if any.
    pub fn is_being_explored(&self, block: BlockId) -> Option<SessionId> {
        self.claims.holder(block)
    }

    /// Forgets the claims `session` holds (its discoveries stay until they
    /// expire).
    pub fn forget_session(&self, session: SessionId) {
        self.claims.release_all(session);
    }
}
