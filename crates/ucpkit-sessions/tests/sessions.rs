//! Session life cycle, safety limits, events, persistence and concurrency.

mod common;

use std::sync::Arc;

use common::*;
use ucpkit_core::Role;
use ucpkit_sessions::{
    AgentError, CircuitState, GlobalLimits, OperationBudget, SessionConfig, SessionLimits, SessionState,
};

#[test]
fn named_sessions_are_isolated_and_listed() {
    let traversal = traversal();
    let a = traversal.create_session(SessionConfig { name: Some("a".into()), ..Default::default() }).unwrap();
    let b = traversal.create_session(SessionConfig { name: Some("b".into()), ..Default::default() }).unwrap();
    let duplicate = traversal.create_session(SessionConfig { name: Some("a".into()), ..Default::default() });
    assert_eq!(duplicate.unwrap_err().code(), "session_exists");
    assert_eq!(traversal.find_session("b"), Some(b));
    let doc = node_excerpt();
    let heading = first(&doc, Role::Heading2);
    ok(&traversal, a, &format!("GOTO {heading}"));
    ok(&traversal, a, &format!("CTX ADD {heading}"));
    assert_eq!(
        traversal.with_session(b, |s| (s.cursor().position(), s.window().len())).unwrap(),
        (ucpkit_core::BlockId::ROOT, 0)
    );
    let list = traversal.list_sessions();
    assert_eq!(list.len(), 2);
    assert_eq!(list.iter().find(|s| s.id == a).unwrap().context_blocks, 1);
    let record = traversal.close_session(a).unwrap();
    assert_eq!(record.state(), SessionState::Closed);
    assert_eq!(exec(&traversal, a, "CTX STATS").unwrap_err().code(), "session_not_found");
    assert_eq!(traversal.find_session("a"), None);
}

#[test]
fn the_session_count_is_capped() {
    let traversal = traversal_with(GlobalLimits { max_sessions: 2, ..GlobalLimits::default() });
    session(&traversal);
    session(&traversal);
    let error = traversal.create_session(SessionConfig::default()).unwrap_err();
    assert!(matches!(error, AgentError::MaxSessionsReached(2)));
}

#[test]
fn idle_sessions_expire_and_are_reaped() {
    let traversal = traversal();
    let limits = SessionLimits { session_timeout_ms: 1000, ..SessionLimits::default() };
    let s = traversal.create_session(SessionConfig { limits, ..Default::default() }).unwrap();
    ok(&traversal, s, "CTX STATS");
    advance(1001);
    assert_eq!(exec(&traversal, s, "CTX STATS").unwrap_err().code(), "session_expired");
    assert_eq!(traversal.reap_expired(), 1);
    assert!(traversal.list_sessions().is_empty());
}

#[test]
fn the_circuit_breaker_opens_on_repeated_failures_and_recovers() {
    let limits = GlobalLimits { circuit_failure_threshold: 3, circuit_recovery_ms: 5000, ..GlobalLimits::default() };
    let traversal = traversal_with(limits);
    let s = session(&traversal);
    for _ in 0..3 {
        assert_eq!(exec(&traversal, s, "BACK").unwrap_err().code(), "empty_history");
    }
    let error = exec(&traversal, s, "CTX STATS").unwrap_err();
    assert_eq!(error.code(), "circuit_open");
    assert_eq!(traversal.with_session(s, |s| s.breaker().state()).unwrap(), CircuitState::Open);
    advance(5000);
    for _ in 0..3 {
        ok(&traversal, s, "CTX STATS");
    }
    assert_eq!(traversal.with_session(s, |s| s.breaker().state()).unwrap(), CircuitState::Closed);
}

#[test]
fn the_rate_limit_refuses_bursts() {
    let traversal = traversal_with(GlobalLimits { max_ops_per_second: 5, ..GlobalLimits::default() });
    let s = session(&traversal);
    for _ in 0..5 {
        ok(&traversal, s, "CTX STATS");
    }
    assert_eq!(exec(&traversal, s, "CTX STATS").unwrap_err().code(), "rate_limit");
    advance(200);
    ok(&traversal, s, "CTX STATS");
}

#[test]
fn budgets_are_enforced_and_warned_about() {
    let traversal = traversal();
    let budget = OperationBudget { traversal_ops: 5, ..OperationBudget::default() };
    let limits = SessionLimits { budget, ..SessionLimits::default() };
    let s = traversal.create_session(SessionConfig { limits, ..Default::default() }).unwrap();
    for i in 0..5 {
        let step = ok(&traversal, s, "CTX STATS");
        assert_eq!(!step.warnings.is_empty(), i >= 3, "step {i}: {:?}", step.warnings);
    }
    let error = fails(&traversal, s, "CTX STATS");
    assert!(matches!(error, AgentError::BudgetExhausted { budget: "traversal_ops", used: 5, limit: 5 }));
    assert_eq!(traversal.with_session(s, |s| s.metrics().budget_warnings).unwrap(), 2);
}

#[test]
fn metrics_count_per_session() {
    let traversal = traversal();
    let s = session(&traversal);
    let doc = node_excerpt();
    let heading = first(&doc, Role::Heading2);
    ok(&traversal, s, &format!("GOTO {heading}"));
    ok(&traversal, s, &format!("EXPAND {heading} DOWN DEPTH=2"));
    ok(&traversal, s, "CTX ADD RESULTS");
    let _ = exec(&traversal, s, "BACK 9");
    let metrics = traversal.with_session(s, |s| s.metrics()).unwrap();
    assert_eq!((metrics.commands, metrics.navigations, metrics.expansions, metrics.errors), (4, 1, 1, 1));
    assert!(metrics.context_adds > 0 && metrics.blocks_visited > 0);
}

#[test]
fn a_session_record_restores_the_session_exactly() {
    let traversal = searchable();
    let s = traversal.create_session(SessionConfig { name: Some("keep".into()), ..Default::default() }).unwrap();
    ok(&traversal, s, "SEARCH \"punycode\" LIMIT=4");
    ok(&traversal, s, "CTX ADD RESULTS");
    let doc = node_excerpt();
    ok(&traversal, s, &format!("GOTO {}", first(&doc, Role::Heading2)));
    let rendered = ok(&traversal, s, "CTX RENDER FORMAT=SHORT_IDS").to_string();
    let before = record_json(&traversal, s);
    let record = traversal.close_session(s).unwrap();
    let json = serde_json::to_string(&record).unwrap();

    let other = common::traversal();
    let restored = other.restore_session(serde_json::from_str(&json).unwrap()).unwrap();
    assert_eq!(restored, s);
    assert_eq!(other.find_session("keep"), Some(s));
    let mut after: serde_json::Value = serde_json::from_str(&record_json(&other, restored)).unwrap();
    after["state"] = "closed".into();
    let mut expected: serde_json::Value = serde_json::from_str(&before).unwrap();
    expected["state"] = "closed".into();
    assert_eq!(after, expected);
    assert_eq!(ok(&other, restored, "CTX RENDER FORMAT=SHORT_IDS").to_string(), rendered);
    ok(&other, restored, "BACK");
    ok(&other, restored, "CTX REMOVE 1");
}

#[test]
fn fifty_sessions_on_two_threads_stay_isolated_and_within_budget() {
    let traversal = Arc::new(traversal_with(GlobalLimits { max_ops_per_second: 1_000_000, ..GlobalLimits::default() }));
    let doc = node_excerpt();
    let ids: Vec<_> = doc.document_order().collect();
    let limits = SessionLimits { max_context_tokens: 500, ..SessionLimits::default() };
    let sessions: Vec<_> = (0..50)
        .map(|_| traversal.create_session(SessionConfig { limits: limits.clone(), ..Default::default() }).unwrap())
        .collect();
    std::thread::scope(|scope| {
        for half in sessions.chunks(25) {
            let traversal = Arc::clone(&traversal);
            let ids = &ids;
            scope.spawn(move || {
                for round in 0..20 {
                    for (n, s) in half.iter().enumerate() {
                        let id = ids[(round * 31 + n * 7) % ids.len()];
                        for ucl in [format!("GOTO {id}"), format!("CTX ADD {id}"), "CTX EXPAND DOWN".into()] {
                            let commands = ucpkit_ucl::parse_commands(&ucl).unwrap();
                            traversal.execute(*s, &commands[0]).unwrap();
                        }
                    }
                }
            });
        }
    });
    for s in &sessions {
        let (tokens, commands) = traversal.with_session(*s, |s| (s.window().tokens(), s.metrics().commands)).unwrap();
        assert!(tokens <= 500);
        assert_eq!(commands, 60);
    }
}

#[test]
fn upstream_context_forms_run_with_their_meaning() {
    let traversal = traversal();
    let s = session(&traversal);
    let heading = first(&node_excerpt(), Role::Heading2);
    ok(&traversal, s, &format!("CTX ADD {heading} REASON=\"the user asked about streams\""));
    let record = record_json(&traversal, s);
    assert!(record.contains("the user asked about streams") && record.contains("agent_decision"), "{record}");
    let before = record.len();
    ok(&traversal, s, "CTX EXPAND BOTH DEPTH=1");
    assert!(record_json(&traversal, s).len() > before, "EXPAND BOTH added the parent and the children");
    ok(&traversal, s, "CTX RENDER FORMAT=SHORT");
    ok(&traversal, s, "CTX RENDER FORMAT=MD");
    ok(&traversal, s, "CTX PRUNE RELEVANCE=0.1");
}
