//! Behavioural programming (Harel, Marron, Weiss): b-threads that, at each
//! synchronisation point, request events, wait for events and block
//! events; an arbiter that selects an enabled event (requested and not
//! blocked), external events first, then the threads' requests in their
//! priority order; interrupts that end a thread; and a deadlock report
//! when something is requested and nothing is enabled — a snapshot of
//! who blocks what, never a hang. Every decision is recorded in the
//! [`Trace`].
//!
//! Besides blocking (a *deny*), a thread may say an event needs a
//! person's approval (*ask*) or vouch for it (*allow*): the verdicts of
//! rules as data, weighed deny > ask > allow.

use serde::{Deserialize, Serialize};

use crate::Event;

/// Milliseconds since the guard started (scenarios give their own).
pub type Millis = u64;

/// What a thread says of an event at its synchronisation point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Let it through without asking (an allow rule).
    Allow,
    /// Ask a person first.
    Ask,
    /// Block it.
    Deny,
}

/// A thread's verdict on an event, with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Block, ask or allow.
    pub decision: Decision,
    /// Why, in words the model is shown.
    pub reason: String,
}

/// A b-thread: a state machine stopped at a synchronisation point.
pub trait BThread: Send {
    /// Its name, in traces and reports.
    fn name(&self) -> &str;

    /// The events it requests now.
    fn requested(&self) -> Vec<Event> {
        Vec::new()
    }

    /// What it says of `event` now: blocks, asks, allows, or nothing.
    fn verdict(&self, event: &Event, now: Millis) -> Option<Verdict>;

    /// Whether it waits for `event` (and so moves on when it is selected).
    fn waits_for(&self, event: &Event) -> bool;

    /// Moves past its synchronisation point: `event`, which it requested
    /// or waited for, was selected.
    fn advance(&mut self, event: &Event, now: Millis);

    /// Whether `event` ends it.
    fn interrupted_by(&self, _event: &Event) -> bool {
        false
    }

    /// Whether it has run to its end.
    fn ended(&self) -> bool {
        false
    }
}

/// One thread's say on an event, in a judgement or a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Say {
    /// The thread.
    pub thread: String,
    /// Its decision.
    pub decision: Decision,
    /// Its reason.
    pub reason: String,
}

/// The arbiter's judgement of events proposed together (one tool call's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Judgement {
    /// The strongest say (deny > ask > allow); `None`: no thread spoke.
    pub decision: Option<Decision>,
    /// Every thread that spoke, strongest first, then by priority.
    pub says: Vec<Say>,
}

impl Judgement {
    /// The reasons of the says that made the decision, joined.
    pub fn reason(&self) -> String {
        let decisive: Vec<&str> =
            self.says.iter().filter(|s| Some(s.decision) == self.decision).map(|s| s.reason.as_str()).collect();
        decisive.join("; ")
    }
}

/// Nothing can be selected: each event requested, and who blocks it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Deadlock {
    /// The requested events, each with the threads blocking it.
    pub blocked: Vec<(String, Vec<Say>)>,
}

impl std::fmt::Display for Deadlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "nothing can go on:")?;
        for (event, says) in &self.blocked {
            let by: Vec<String> = says.iter().map(|s| format!("{} ({})", s.thread, s.reason)).collect();
            write!(f, " {event} is blocked by {};", by.join(", "))?;
        }
        Ok(())
    }
}

/// What became of an event or a proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    /// Selected: the threads moved on.
    Selected,
    /// Blocked, or declined by the person asked.
    Refused {
        /// Who refused, and why.
        by: Vec<Say>,
    },
    /// Requested with nothing enabled.
    Deadlock {
        /// The report.
        report: Deadlock,
    },
}

/// One line of the audit trail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceEntry {
    /// Its place in the trail.
    pub seq: u64,
    /// When (ms since the guard started).
    pub at: Millis,
    /// The events (a tool call's together).
    pub events: Vec<String>,
    /// What became of them.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// The audit trail: every selection and refusal, in order.
pub type Trace = Vec<TraceEntry>;

/// The threads and the arbiter.
#[derive(Default)]
pub struct Engine {
    /// In priority order: earlier threads' requests are selected first.
    threads: Vec<Box<dyn BThread>>,
    trace: Trace,
    /// Entries recorded so far (the trail keeps the last [`MAX_TRACE`]).
    recorded: u64,
}

/// The most entries the trail keeps.
pub const MAX_TRACE: usize = 100_000;

impl Engine {
    /// Adds a thread, after (below) the others in priority.
    pub fn add(&mut self, thread: Box<dyn BThread>) {
        self.threads.push(thread);
    }

    /// The names of the live threads, in priority order.
    pub fn threads(&self) -> Vec<&str> {
        self.threads.iter().map(|t| t.name()).collect()
    }

    /// The audit trail so far.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// What the threads say of `events` proposed together, changing nothing.
    pub fn judge(&self, events: &[Event], now: Millis) -> Judgement {
        let mut says: Vec<(usize, Say)> = Vec::new();
        for (priority, thread) in self.threads.iter().enumerate() {
            for event in events {
                if let Some(verdict) = thread.verdict(event, now) {
                    let say =
                        Say { thread: thread.name().to_owned(), decision: verdict.decision, reason: verdict.reason };
                    if !says.iter().any(|(_, s)| *s == say) {
                        says.push((priority, say));
                    }
                }
            }
        }
        says.sort_by_key(|(priority, say)| (std::cmp::Reverse(say.decision), *priority));
        let decision = says.first().map(|(_, s)| s.decision);
        Judgement { decision, says: says.into_iter().map(|(_, s)| s).collect() }
    }

    /// Selects `events` (external ones, allowed by whoever had to allow
    /// them) in order, then the threads' own requests while any is enabled.
    /// A thread request left with nothing enabled is a [`Deadlock`],
    /// recorded and returned.
    pub fn select(&mut self, events: &[Event], now: Millis) -> Result<(), Deadlock> {
        for event in events {
            self.step(event, now);
        }
        if !events.is_empty() {
            self.record(events, now, Outcome::Selected);
        }
        self.run_requests(now)
    }

    /// Records that `events` were refused (blocked, or declined by a person).
    pub fn refuse(&mut self, events: &[Event], now: Millis, by: Vec<Say>) {
        self.record(events, now, Outcome::Refused { by });
    }

    /// Asks that `event` happen (`finish`): selected when enabled, else
    /// a [`Deadlock`] report of who blocks it (and any thread request).
    pub fn request(&mut self, event: &Event, now: Millis) -> Result<(), Deadlock> {
        let judgement = self.judge(std::slice::from_ref(event), now);
        if judgement.decision == Some(Decision::Deny) {
            let report = self.report(Some((event, judgement)), now);
            self.record(std::slice::from_ref(event), now, Outcome::Deadlock { report: report.clone() });
            return Err(report);
        }
        self.select(std::slice::from_ref(event), now)
    }

    /// One selected event: the threads that requested or waited for it
    /// move on, those it interrupts end.
    fn step(&mut self, event: &Event, now: Millis) {
        for thread in &mut self.threads {
            if thread.interrupted_by(event) {
                continue;
            }
            if thread.waits_for(event) || thread.requested().contains(event) {
                thread.advance(event, now);
            }
        }
        self.threads.retain(|t| !t.interrupted_by(event) && !t.ended());
    }

    /// Selects the threads' requests, first enabled first, until none is.
    fn run_requests(&mut self, now: Millis) -> Result<(), Deadlock> {
        // Each selection moves a thread on; a thread requesting forever
        // is stopped after this many, as a deadlock would be.
        for _ in 0..10_000 {
            let requested: Vec<Event> = self.threads.iter().flat_map(|t| t.requested()).collect();
            if requested.is_empty() {
                return Ok(());
            }
            let enabled =
                requested.iter().find(|e| self.judge(std::slice::from_ref(e), now).decision != Some(Decision::Deny));
            match enabled {
                Some(event) => {
                    let event = event.clone();
                    self.step(&event, now);
                    self.record(std::slice::from_ref(&event), now, Outcome::Selected);
                }
                None => {
                    let report = self.report(None, now);
                    let names: Vec<Event> = requested;
                    self.record(&names, now, Outcome::Deadlock { report: report.clone() });
                    return Err(report);
                }
            }
        }
        Err(Deadlock { blocked: vec![("the threads' requests".into(), Vec::new())] })
    }

    /// Who blocks each requested event (`outside`'s first).
    fn report(&self, outside: Option<(&Event, Judgement)>, now: Millis) -> Deadlock {
        let mut blocked = Vec::new();
        if let Some((event, judgement)) = outside {
            let says = judgement.says.into_iter().filter(|s| s.decision == Decision::Deny).collect();
            blocked.push((event.summary(), says));
        }
        for event in self.threads.iter().flat_map(|t| t.requested()) {
            let says = self.judge(std::slice::from_ref(&event), now).says;
            blocked.push((event.summary(), says.into_iter().filter(|s| s.decision == Decision::Deny).collect()));
        }
        Deadlock { blocked }
    }

    fn record(&mut self, events: &[Event], now: Millis, outcome: Outcome) {
        self.recorded += 1;
        let seq = self.recorded;
        if self.trace.len() >= MAX_TRACE {
            // A long-lived server keeps the latest; `seq` tells what went.
            self.trace.drain(..MAX_TRACE / 10);
        }
        self.trace.push(TraceEntry { seq, at: now, events: events.iter().map(Event::summary).collect(), outcome });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Act, Event};

    /// Harel's water tap: `hot` three times, `cold` three times, and an
    /// interleaver that alternates them by blocking.
    struct Repeat {
        name: &'static str,
        text: &'static str,
        left: u32,
    }

    fn msg(text: &str) -> Event {
        Event::new("tap", Act::Message { text: text.into() })
    }

    impl BThread for Repeat {
        fn name(&self) -> &str {
            self.name
        }
        fn requested(&self) -> Vec<Event> {
            if self.left > 0 {
                vec![msg(self.text)]
            } else {
                Vec::new()
            }
        }
        fn verdict(&self, _: &Event, _: Millis) -> Option<Verdict> {
            None
        }
        fn waits_for(&self, _: &Event) -> bool {
            false
        }
        fn advance(&mut self, _: &Event, _: Millis) {
            self.left -= 1;
        }
        fn ended(&self) -> bool {
            self.left == 0
        }
    }

    struct Alternate {
        next_hot: bool,
    }

    impl BThread for Alternate {
        fn name(&self) -> &str {
            "interleave"
        }
        fn verdict(&self, event: &Event, _: Millis) -> Option<Verdict> {
            let blocked = msg(if self.next_hot { "cold" } else { "hot" });
            (*event == blocked).then(|| Verdict { decision: Decision::Deny, reason: "take turns".into() })
        }
        fn waits_for(&self, event: &Event) -> bool {
            matches!(&event.act, Act::Message { .. })
        }
        fn advance(&mut self, _: &Event, _: Millis) {
            self.next_hot = !self.next_hot;
        }
    }

    #[test]
    fn the_arbiter_interleaves_requests_by_blocking() {
        let mut engine = Engine::default();
        engine.add(Box::new(Repeat { name: "hot", text: "hot", left: 3 }));
        engine.add(Box::new(Repeat { name: "cold", text: "cold", left: 3 }));
        engine.add(Box::new(Alternate { next_hot: true }));
        engine.select(&[], 0).unwrap();
        let selected: Vec<&str> = engine.trace().iter().flat_map(|t| t.events.iter().map(String::as_str)).collect();
        assert_eq!(selected, ["hot", "cold", "hot", "cold", "hot", "cold"].map(|t| format!("tap: message {t:?}")));
        assert_eq!(engine.threads(), ["interleave"], "threads that ran to their end are gone");
    }

    /// Blocks `hot` until it is interrupted by `stop`.
    struct Until;

    impl BThread for Until {
        fn name(&self) -> &str {
            "until stop"
        }
        fn verdict(&self, event: &Event, _: Millis) -> Option<Verdict> {
            (*event == msg("hot")).then(|| Verdict { decision: Decision::Deny, reason: "not yet".into() })
        }
        fn waits_for(&self, _: &Event) -> bool {
            false
        }
        fn advance(&mut self, _: &Event, _: Millis) {}
        fn interrupted_by(&self, event: &Event) -> bool {
            *event == msg("stop")
        }
    }

    #[test]
    fn an_interrupt_ends_a_thread_and_its_block() {
        let mut engine = Engine::default();
        engine.add(Box::new(Until));
        assert_eq!(engine.judge(&[msg("hot")], 0).decision, Some(Decision::Deny));
        engine.select(&[msg("other")], 1).unwrap();
        assert_eq!(engine.threads(), ["until stop"], "not interrupted by other events");
        engine.select(&[msg("stop")], 2).unwrap();
        assert!(engine.threads().is_empty());
        assert_eq!(engine.judge(&[msg("hot")], 3).decision, None);
    }

    #[test]
    fn a_request_nothing_can_satisfy_is_a_deadlock_report_not_a_hang() {
        let mut engine = Engine::default();
        engine.add(Box::new(Repeat { name: "cold", text: "cold", left: 2 }));
        engine.add(Box::new(Alternate { next_hot: true }));
        let report = engine.select(&[], 7).unwrap_err();
        assert_eq!(report.blocked.len(), 1);
        assert_eq!(report.blocked[0].0, "tap: message \"cold\"");
        assert_eq!(report.blocked[0].1[0].thread, "interleave");
        assert!(report.to_string().contains("tap: message \"cold\" is blocked by interleave (take turns)"), "{report}");
        assert!(matches!(engine.trace().last().unwrap().outcome, Outcome::Deadlock { .. }));
    }
}
