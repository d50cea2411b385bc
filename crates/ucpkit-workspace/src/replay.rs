//! Replaying a write that another writer beat to the store: each write is
//! checked against the revision it read, so a conflict changes nothing,
//! and the caller reads again and replays ([`replayed`], the one loop that
//! does it). Writers that collided would collide again at once; a
//! growing, jittered pause between tries spreads them out, so under
//! steady contention every write lands.

use std::time::Duration;

use crate::WorkspaceError;

/// The first pause after a conflict; each one after doubles, up to
/// [`LONGEST_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(2);

/// The longest pause between two tries.
const LONGEST_PAUSE: Duration = Duration::from_millis(250);

/// Tries of a write to the agents' state (memories, plans) while other
/// writers keep coming in: many, as the pauses keep them cheap.
pub const STATE_TRIES: usize = 64;

/// Runs `attempt`, which reads what it needs and writes it, again each
/// time it fails on a conflict with another writer (having changed
/// nothing), at most `tries` times in all, pausing longer between each.
/// Returns the first result that is not a conflict, or the last conflict
/// when the tries are spent.
pub fn replayed<T>(tries: usize, mut attempt: impl FnMut() -> Result<T, WorkspaceError>) -> Result<T, WorkspaceError> {
    let mut replays = Replays::new(tries);
    loop {
        match attempt() {
            Err(e) if e.is_conflict() && replays.again() => continue,
            done => return done,
        }
    }
}

/// The tries of one write: the first, and replays after conflicts.
#[derive(Debug)]
struct Replays {
    tried: usize,
    most: usize,
}

impl Replays {
    /// At most `most` tries (at least one).
    fn new(most: usize) -> Self {
        Replays { tried: 1, most: most.max(1) }
    }

    /// After a conflict: false when the tries are spent; else waits a
    /// pause (half of it random) and returns true.
    fn again(&mut self) -> bool {
        if self.tried >= self.most {
            return false;
        }
        let pause = FIRST_PAUSE.saturating_mul(1 << (self.tried - 1).min(16)).min(LONGEST_PAUSE);
        std::thread::sleep(pause / 2 + pause.mul_f64(jitter() / 2.0));
        self.tried += 1;
        true
    }
}

/// A number in [0, 1) that differs between processes and calls.
fn jitter() -> f64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher
        .write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos());
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tries_are_counted_and_pauses_grow() {
        let mut replays = Replays::new(3);
        let started = std::time::Instant::now();
        assert!(replays.again() && replays.again());
        assert!(!replays.again(), "three tries in all");
        assert!(started.elapsed() >= Duration::from_millis(3), "paused 1-2 ms, then 2-4 ms");
        assert!(!Replays::new(0).again(), "one try at least, none again");
        let values: Vec<f64> = (0..100).map(|_| jitter()).collect();
        assert!(values.iter().all(|v| (0.0..1.0).contains(v)));
        assert!(values.windows(2).any(|w| w[0] != w[1]));
    }

    #[test]
    fn only_conflicts_are_replayed() {
        let conflict = || {
            WorkspaceError::Store(ucpkit_store::StoreError::Conflict { document: "d".into(), expected: 1, found: 2 })
        };
        let mut calls = 0;
        let landed = replayed(5, || {
            calls += 1;
            if calls < 3 {
                Err(conflict())
            } else {
                Ok(calls)
            }
        });
        assert_eq!(landed.unwrap(), 3);
        let mut calls = 0;
        let spent = replayed(2, || -> Result<(), _> {
            calls += 1;
            Err(conflict())
        });
        assert!(spent.unwrap_err().is_conflict() && calls == 2, "two tries, then the conflict");
        let mut calls = 0;
        let other = replayed(5, || -> Result<(), _> {
            calls += 1;
            Err(WorkspaceError::Invalid("no".into()))
        });
        assert!(matches!(other, Err(WorkspaceError::Invalid(_))) && calls == 1, "other errors are not replayed");
    }
}
