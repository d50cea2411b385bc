//! The work queue: tasks waiting for a free agent, highest priority first,
//! grouped by job so concurrent orchestrations do not take each other's
//! work. A task in progress may add more, so a worker asking for the next
//! task waits while others are still working and gets `None` only when the
//! job has nothing queued and nothing in progress.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Condvar, Mutex};

/// One job's tasks.
pub type JobId = u64;

struct Queued<T> {
    priority: f64,
    seq: u64,
    task: T,
}

impl<T> PartialEq for Queued<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<T> Eq for Queued<T> {}

impl<T> PartialOrd for Queued<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Queued<T> {
    /// Highest priority first, then first queued.
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority.total_cmp(&other.priority).then(other.seq.cmp(&self.seq))
    }
}

struct Job<T> {
    waiting: BinaryHeap<Queued<T>>,
    in_progress: usize,
    seq: u64,
    closed: bool,
}

/// Tasks by job.
pub struct WorkQueue<T> {
    jobs: Mutex<HashMap<JobId, Job<T>>>,
    changed: Condvar,
    next_job: AtomicU64,
}

impl<T> Default for WorkQueue<T> {
    fn default() -> Self {
        WorkQueue { jobs: Mutex::new(HashMap::new()), changed: Condvar::new(), next_job: AtomicU64::new(1) }
    }
}

impl<T> WorkQueue<T> {
    /// Opens a job.
    pub fn open_job(&self) -> JobId {
        let id = self.next_job.fetch_add(1, AtomicOrdering::Relaxed);
        let job = Job { waiting: BinaryHeap::new(), in_progress: 0, seq: 0, closed: false };
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).insert(id, job);
        id
    }

    /// Queues a task; `false` when the job is closed or unknown.
    pub fn push(&self, job: JobId, task: T, priority: f64) -> bool {
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        let Some(queue) = jobs.get_mut(&job).filter(|q| !q.closed) else { return false };
        queue.seq += 1;
        let seq = queue.seq;
        queue.waiting.push(Queued { priority, seq, task });
        self.changed.notify_one();
        true
    }

    /// The job's best waiting task, marked in progress; waits while the
    /// queue is empty but tasks are in progress. `None`: the job is done
    /// (or closed). Every task taken must be reported with [`WorkQueue::done`].
    pub fn take(&self, job: JobId) -> Option<T> {
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let queue = jobs.get_mut(&job)?;
            if queue.closed {
                return None;
            }
            if let Some(Queued { task, .. }) = queue.waiting.pop() {
                queue.in_progress += 1;
                return Some(task);
            }
            if queue.in_progress == 0 {
                return None;
            }
            jobs = self.changed.wait(jobs).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Reports a taken task finished.
    pub fn done(&self, job: JobId) {
        let mut jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(queue) = jobs.get_mut(&job) {
            queue.in_progress = queue.in_progress.saturating_sub(1);
        }
        self.changed.notify_all();
    }

    /// Stops handing out the job's tasks (waiting workers get `None`).
    pub fn close(&self, job: JobId) {
        if let Some(queue) = self.jobs.lock().unwrap_or_else(|e| e.into_inner()).get_mut(&job) {
            queue.closed = true;
        }
        self.changed.notify_all();
    }

    /// Forgets a job and its remaining tasks.
    pub fn remove(&self, job: JobId) {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).remove(&job);
        self.changed.notify_all();
    }

    /// Tasks waiting in a job.
    pub fn waiting(&self, job: JobId) -> usize {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).get(&job).map_or(0, |q| q.waiting.len())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    #[test]
    fn highest_priority_first_then_fifo_and_jobs_apart() {
        let queue = WorkQueue::default();
        let (a, b) = (queue.open_job(), queue.open_job());
        queue.push(a, "low", 0.1);
        queue.push(a, "high", 0.9);
        queue.push(a, "high too", 0.9);
        queue.push(b, "other job", 1.0);
        assert_eq!(queue.take(a), Some("high"));
        assert_eq!(queue.take(a), Some("high too"));
        assert_eq!(queue.take(a), Some("low"));
        for _ in 0..3 {
            queue.done(a);
        }
        assert_eq!(queue.take(a), None);
        assert_eq!(queue.waiting(b), 1);
        queue.close(b);
        assert_eq!(queue.take(b), None);
        assert!(!queue.push(b, "late", 1.0));
    }

    #[test]
    fn workers_wait_for_tasks_spawned_by_tasks_in_progress() {
        // Each task n > 0 spawns task n - 1; four workers must run all of
        // them and then all stop.
        let queue = WorkQueue::default();
        let job = queue.open_job();
        queue.push(job, 50u32, 1.0);
        let ran = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    while let Some(n) = queue.take(job) {
                        if n > 0 {
                            queue.push(job, n - 1, 1.0);
                        }
                        ran.fetch_add(1, AtomicOrdering::SeqCst);
                        queue.done(job);
                    }
                });
            }
        });
        assert_eq!(ran.load(AtomicOrdering::SeqCst), 51);
    }
}
