//! Lock-free operation counters of a session, with serializable snapshots
//! (saved with the session, reported by `ucp run --json`).

use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

macro_rules! metrics {
    ($( $field:ident: $doc:literal ),* $(,)?) => {
        /// Atomic counters; shared by reference, updated without locks.
        #[derive(Debug, Default)]
        pub struct Metrics {
            $( #[doc = $doc] pub $field: AtomicU64, )*
        }

        /// A copy of [`Metrics`] at one moment.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(default)]
        pub struct MetricsSnapshot {
            $( #[doc = $doc] pub $field: u64, )*
        }

        impl Metrics {
            /// The counters now.
            pub fn snapshot(&self) -> MetricsSnapshot {
                MetricsSnapshot { $( $field: self.$field.load(Ordering::Relaxed), )* }
            }

            /// Counters starting from a snapshot (a reloaded session).
            pub fn from_snapshot(snapshot: &MetricsSnapshot) -> Self {
                Metrics { $( $field: AtomicU64::new(snapshot.$field), )* }
            }
        }
    };
}

metrics! {
    commands: "Commands run.",
    navigations: "GOTO and BACK.",
    expansions: "EXPAND and CTX EXPAND.",
    searches: "SEARCH and FIND.",
    context_adds: "Blocks added to the context window.",
    context_removes: "Blocks that left the context window.",
    blocks_visited: "Blocks read by walks and views.",
    edges_followed: "Edges walked by FOLLOW, PATH and semantic expansion.",
    edits: "Edit commands run through the engine.",
    execution_us: "Time spent executing, in microseconds.",
    errors: "Commands that failed.",
    budget_warnings: "Results that warned of a budget nearly spent.",
}

impl Metrics {
    /// Adds `n` to a counter.
    pub fn bump(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// Serde for live counters as their snapshot (`#[serde(with = ...)]`).
pub(crate) mod as_snapshot {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{Metrics, MetricsSnapshot};

    pub fn serialize<S: Serializer>(metrics: &Metrics, s: S) -> Result<S::Ok, S::Error> {
        metrics.snapshot().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Metrics, D::Error> {
        Ok(Metrics::from_snapshot(&MetricsSnapshot::deserialize(d)?))
    }
}
