//! The coordinator under contention: many threads sharing discoveries,
//! claiming the same blocks and draining one work queue at once.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Duration;

use ucpkit_core::BlockId;
use ucpkit_orchestrator::coordination::{AgentCoordinator, DiscoveryFilter, DiscoveryRelevance, NewDiscovery};
use ucpkit_sessions::SessionId;

const THREADS: usize = 16;
const PER_THREAD: usize = 500;

fn clock() -> i64 {
    1_700_000_000_000
}

fn block(n: usize) -> BlockId {
    let mut bytes = [0u8; 12];
    bytes[..8].copy_from_slice(&(n as u64).to_le_bytes());
    BlockId::from_bytes(bytes)
}

fn discovery(thread: usize, n: usize) -> NewDiscovery {
    NewDiscovery {
        block_ids: vec![block(thread * PER_THREAD + n)],
        relevance: if n.is_multiple_of(2) { DiscoveryRelevance::High } else { DiscoveryRelevance::Low },
        score: 0.5,
        reason: format!("{thread}/{n}"),
        metadata: BTreeMap::from([("thread".to_owned(), thread.to_string())]),
        ttl: Duration::from_secs(60),
    }
}

#[test]
fn concurrent_discoveries_are_neither_lost_nor_duplicated() {
    let coordinator = AgentCoordinator::new(clock);
    let start = Barrier::new(THREADS);
    let seqs = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (coordinator, start, seqs) = (&coordinator, &start, &seqs);
            scope.spawn(move || {
                let session = SessionId::from_u128(thread as u128 + 1);
                start.wait();
                let mut mine = Vec::with_capacity(PER_THREAD);
                for n in 0..PER_THREAD {
                    mine.push(coordinator.share_discovery(session, discovery(thread, n)));
                    // Readers run while writers write.
                    if n % 50 == 0 {
                        let seen = coordinator.get_discoveries(&DiscoveryFilter::default());
                        assert!(seen.windows(2).all(|w| w[0].seq < w[1].seq), "pool order is sequence order");
                    }
                }
                seqs.lock().unwrap().extend(mine);
            });
        }
    });
    let seqs = seqs.into_inner().unwrap();
    let unique: HashSet<u64> = seqs.iter().copied().collect();
    assert_eq!(unique.len(), THREADS * PER_THREAD, "every share got its own sequence number");

    let all = coordinator.get_discoveries(&DiscoveryFilter::default());
    assert_eq!(all.len(), THREADS * PER_THREAD);
    let reasons: HashSet<&str> = all.iter().map(|d| d.reason.as_str()).collect();
    assert_eq!(reasons.len(), THREADS * PER_THREAD, "no discovery twice, none lost");
    for d in &all {
        let thread: usize = d.metadata["thread"].parse().unwrap();
        assert_eq!(d.source, SessionId::from_u128(thread as u128 + 1), "attributed to its sharer");
    }
    let high = coordinator
        .get_discoveries(&DiscoveryFilter { min_relevance: Some(DiscoveryRelevance::High), ..Default::default() });
    assert_eq!(high.len(), THREADS * PER_THREAD / 2);
    let one = SessionId::from_u128(3);
    let from_one = coordinator.get_discoveries(&DiscoveryFilter { sources: vec![one], ..Default::default() });
    assert_eq!(from_one.len(), PER_THREAD);
}

#[test]
fn one_claimant_wins_each_block_and_the_others_learn_who() {
    let coordinator = AgentCoordinator::new(clock);
    let start = Barrier::new(THREADS);
    let winners = Mutex::new(BTreeMap::<usize, SessionId>::new());
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (coordinator, start, winners) = (&coordinator, &start, &winners);
            scope.spawn(move || {
                let session = SessionId::from_u128(thread as u128 + 1);
                start.wait();
                for n in 0..200 {
                    let result = coordinator.claim_exploration(session, &[block(n)], Duration::from_secs(60));
                    if result.granted() {
                        let previous = winners.lock().unwrap().insert(n, session);
                        assert!(previous.is_none(), "block {n} granted twice");
                    } else {
                        match result {
                            ucpkit_orchestrator::coordination::ClaimResult::Held { by, .. } => assert_ne!(by, session),
                            granted => panic!("{granted:?}"),
                        }
                    }
                }
            });
        }
    });
    let winners = winners.into_inner().unwrap();
    assert_eq!(winners.len(), 200, "every block was claimed by someone");
    for (n, holder) in &winners {
        assert_eq!(coordinator.is_being_explored(block(*n)), Some(*holder));
    }
    // Forgetting a session frees its blocks for the others.
    let (n, holder) = winners.iter().next().map(|(n, h)| (*n, *h)).unwrap();
    coordinator.forget_session(holder);
    assert_eq!(coordinator.is_being_explored(block(n)), None);
    assert!(coordinator.claim_exploration(SessionId::from_u128(999), &[block(n)], Duration::from_secs(1)).granted());
}

#[test]
fn workers_drain_a_growing_queue_taking_every_task_once() {
    let coordinator = AgentCoordinator::new(clock);
    let queue = &coordinator.queue;
    let job = queue.open_job();
    let seeds: Vec<usize> = (0..64).collect();
    for &seed in &seeds {
        queue.push(job, task(seed), 1.0);
    }
    let taken = Mutex::new(Vec::new());
    let running = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                while let Some(task) = queue.take(job) {
                    running.fetch_add(1, Ordering::SeqCst);
                    let n = task.root_number();
                    // Every seed spawns two children, up to depth three.
                    if n < 64 * 4 {
                        queue.push(job, self::task(n * 2 + 64 * 4), 0.5);
                        queue.push(job, self::task(n * 2 + 1 + 64 * 4), 0.5);
                    }
                    taken.lock().unwrap().push(n);
                    queue.done(job);
                }
            });
        }
    });
    let taken = taken.into_inner().unwrap();
    let unique: HashSet<usize> = taken.iter().copied().collect();
    assert_eq!(unique.len(), taken.len(), "no task taken twice");
    assert_eq!(taken.len(), 64 + 128, "seeds and their children, none lost");
    assert_eq!(queue.waiting(job), 0);
    queue.remove(job);
}

/// A task carrying a number in its root block.
fn task(n: usize) -> ucpkit_orchestrator::policy::ExplorationTask {
    ucpkit_orchestrator::policy::ExplorationTask {
        root: block(n),
        heading_path: Vec::new(),
        hits: Vec::new(),
        priority: 0.0,
        origin: ucpkit_orchestrator::policy::TaskOrigin::Search,
    }
}

trait RootNumber {
    fn root_number(&self) -> usize;
}

impl RootNumber for ucpkit_orchestrator::policy::ExplorationTask {
    fn root_number(&self) -> usize {
        let bytes = self.root.as_bytes();
        usize::try_from(u64::from_le_bytes(bytes[..8].try_into().unwrap())).unwrap()
    }
}
