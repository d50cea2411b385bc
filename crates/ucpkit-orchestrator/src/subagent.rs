//! One sub-agent exploring one section: a session of its own, a claim on
//! the section, and the policy's commands round by round.

use crate::policy::{self, ExplorationTask, Observed};
use crate::Exploration;
use ucpkit_sessions::SessionLimits;
use ucpkit_sessions::{Capabilities, SessionConfig, SessionId};

/// Rounds of commands one task may take.
const MAX_ROUNDS: usize = 8;

/// Explores `task`; returns the tasks the policy wants queued.
pub(super) fn run(exploration: &Exploration<'_>, task: &ExplorationTask) -> Vec<ExplorationTask> {
    let traversal = exploration.traversal;
    let config = SessionConfig {
        task: Some(exploration.request.question.clone()),
        limits: SessionLimits {
            max_context_tokens: exploration.request.budget,
            max_context_blocks: 1000,
            max_results_per_operation: 1000,
            ..SessionLimits::default()
        },
        capabilities: Capabilities::read_only(),
        // The orchestrator's own work: no client's session slot is taken.
        internal: true,
        ..SessionConfig::default()
    };
    // No session (the engine refused one): this section goes unexplored.
    let session = match traversal.create_session(config) {
        Ok(session) => session,
        Err(e) => {
            exploration.refused.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
            return Vec::new();
        }
    };
    exploration.sessions.lock().unwrap_or_else(|e| e.into_inner()).push(session);
    let coordinator = &exploration.coordinator;
    let claimed = coordinator.claim_exploration(session, &[task.root], exploration.orchestrator.config.claim_ttl);
    let spawned = if claimed.granted() { rounds(exploration, session, task) } else { Vec::new() };
    // The claim outlives the session (the job's coordinator keeps it until
    // the job ends), so a later task on the same section learns it was
    // explored.
    let _ = traversal.close_session(session);
    spawned
}

fn rounds(exploration: &Exploration<'_>, session: SessionId, task: &ExplorationTask) -> Vec<ExplorationTask> {
    let policy = &exploration.orchestrator.policy;
    let mut history: Vec<Vec<Observed>> = Vec::new();
    let mut spawned = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let decision = policy.decide(&policy::Exploration {
            question: &exploration.request.question,
            terms: &exploration.terms,
            task,
            rounds: &history,
            budget: exploration.request.budget,
        });
        for discovery in decision.share {
            exploration.coordinator.share_discovery(session, discovery);
        }
        spawned.extend(decision.spawn);
        if decision.done || decision.commands.is_empty() {
            break;
        }
        let round =
            decision.commands.into_iter().map(|command| execute(exploration, session, command)).collect::<Vec<_>>();
        history.push(round);
    }
    spawned
}

/// Runs one command. The sub-agent's session is the engine's own, so the
/// engine-wide rate limit (charged once for the whole context) never
/// refuses it.
fn execute(exploration: &Exploration<'_>, session: SessionId, command: ucpkit_ucl::Command) -> Observed {
    let result = exploration.traversal.execute(session, &command);
    Observed { command, result }
}
