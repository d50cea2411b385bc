//! Traversal and context behaviour that a transcript cannot show (session
//! configuration, search providers, permissions); the commands themselves
//! are pinned by the data-driven cases in `tests/scripts/`.

mod common;

use common::*;
use ucpkit_core::{BlockId, Role};
use ucpkit_sessions::{AgentError, Reply};

const ROOT: &str = "blk_000000000000000000000000";

fn listed(reply: &Reply) -> Vec<BlockId> {
    reply.results().expect("a listing")
}

#[test]
fn adaptive_views_follow_the_task() {
    let traversal = traversal();
    let s = traversal
        .create_session(ucpkit_sessions::SessionConfig { task: Some("punycode".into()), ..Default::default() })
        .unwrap();
    let doc = node_excerpt();
    let on_topic = doc
        .document_order()
        .find(|id| doc.get(*id).unwrap().to_markdown().to_lowercase().contains("punycode"))
        .unwrap();
    let off_topic = doc
        .document_order()
        .find(|id| {
            let text = doc.get(*id).unwrap().to_markdown().to_lowercase();
            doc.get(*id).unwrap().role() == Some(&Role::Paragraph) && !text.contains("punycode")
        })
        .unwrap();
    let Reply::View { view } = ok(&traversal, s, &format!("VIEW {on_topic} MODE=adaptive")).reply else { panic!() };
    assert_eq!(view.mode, ucpkit_ucl::ViewMode::Full);
    let Reply::View { view } = ok(&traversal, s, &format!("VIEW {off_topic} MODE=adaptive")).reply else { panic!() };
    assert_eq!(view.mode, ucpkit_ucl::ViewMode::Ids);
}

#[test]
fn search_needs_a_provider() {
    let traversal = traversal();
    let s = session(&traversal);
    let error = fails(&traversal, s, "SEARCH \"punycode\"");
    assert_eq!(error.code(), "search_not_configured");
    assert!(error.to_string().contains("no search provider"));

    let traversal = searchable();
    let s = session(&traversal);
    let hits = listed(&ok(&traversal, s, "SEARCH \"punycode encoding\" LIMIT=3").reply);
    assert_eq!(hits.len(), 3);
    let step = ok(&traversal, s, "CTX ADD RESULTS");
    let Reply::Context { added, .. } = &step.reply else { panic!() };
    assert_eq!(added.len(), 3);
    assert_eq!(
        traversal.with_session(s, |s| s.window().task().map(str::to_owned)).unwrap().as_deref(),
        Some("punycode encoding")
    );
}

#[test]
fn edits_run_through_the_engine_when_allowed() {
    let traversal = traversal();
    let s = session(&traversal);
    let step = ok(&traversal, s, &format!("APPEND {ROOT} text WITH label=\"note\" :: \"A new note\""));
    let Reply::Edit { outcome } = &step.reply else { panic!() };
    let note = outcome.created[0];
    ok(&traversal, s, "CTX ADD @note");
    ok(&traversal, s, "DELETE @note");
    let Reply::Stats { stats } = ok(&traversal, s, "CTX STATS").reply else { panic!() };
    assert_eq!(stats.blocks, 0);
    assert_eq!(stats.removed["deleted"], 1);
    assert!(stats.recent.iter().any(|c| c.id == note));

    let read_only = traversal
        .create_session(ucpkit_sessions::SessionConfig {
            capabilities: ucpkit_sessions::Capabilities::read_only(),
            ..Default::default()
        })
        .unwrap();
    let error = fails(&traversal, read_only, &format!("APPEND {ROOT} text :: \"x\""));
    assert_eq!(error.code(), "not_permitted");
    assert!(matches!(error, AgentError::NotPermitted(_)));
}
