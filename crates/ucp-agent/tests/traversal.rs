//! Every traversal and context command, executed for real on the Node.js
//! excerpt, including the errors each one can give.

mod common;

use common::*;
use ucm_core::{BlockId, Role, Tokenizer as _};
use ucp_agent::{AgentError, Reply};

const ROOT: &str = "blk_000000000000000000000000";

fn listed(reply: &Reply) -> Vec<BlockId> {
    reply.results().expect("a listing")
}

#[test]
fn goto_back_and_view() {
    let traversal = traversal();
    let s = session(&traversal);
    let doc = node_excerpt();
    let heading = first(&doc, Role::Heading2);
    let step = ok(&traversal, s, &format!("GOTO {heading}"));
    assert!(step.to_string().starts_with(&format!("at {heading} heading2")), "{step}");
    let paragraph = first(&doc, Role::Paragraph);
    ok(&traversal, s, &format!("GOTO {paragraph}"));
    ok(&traversal, s, "BACK");
    assert_eq!(traversal.with_session(s, |s| s.cursor().position()).unwrap(), heading);
    ok(&traversal, s, "BACK 1");
    assert_eq!(traversal.with_session(s, |s| s.cursor().position()).unwrap(), BlockId::ROOT);
    assert_eq!(fails(&traversal, s, "BACK 1").code(), "empty_history");
    assert_eq!(fails(&traversal, s, "GOTO blk_0123456789abcdef01234567").code(), "block_not_found");
    assert_eq!(fails(&traversal, s, "GOTO @no-such-label").code(), "bad_reference");

    let full = ok(&traversal, s, &format!("VIEW {paragraph}")).to_string();
    let text = doc.get(paragraph).unwrap().to_markdown();
    assert!(full.ends_with(text.trim_end()), "{full}");
    let ids = ok(&traversal, s, &format!("VIEW {paragraph} MODE=ids")).to_string();
    assert_eq!(ids, format!("{paragraph} paragraph"));
    let preview = ok(&traversal, s, &format!("VIEW {paragraph} MODE=preview")).to_string();
    assert!(preview.contains(" tok · ") && preview.chars().count() < 200, "{preview}");
    let metadata = ok(&traversal, s, &format!("VIEW {heading} MODE=metadata")).to_string();
    assert!(metadata.contains("children"), "{metadata}");
}

#[test]
fn adaptive_views_follow_the_task() {
    let traversal = traversal();
    let s = traversal
        .create_session(ucp_agent::SessionConfig { task: Some("punycode".into()), ..Default::default() })
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
    assert_eq!(view.mode, ucl_parser::ViewMode::Full);
    let Reply::View { view } = ok(&traversal, s, &format!("VIEW {off_topic} MODE=adaptive")).reply else { panic!() };
    assert_eq!(view.mode, ucl_parser::ViewMode::Ids);
}

#[test]
fn view_neighborhood_shows_the_cursor_surroundings() {
    let traversal = traversal();
    let s = session(&traversal);
    let doc = node_excerpt();
    let heading = first(&doc, Role::Heading2);
    ok(&traversal, s, &format!("GOTO {heading}"));
    let Reply::Neighborhood { at, ancestors, children, siblings, .. } = ok(&traversal, s, "VIEW NEIGHBORHOOD").reply
    else {
        panic!()
    };
    assert_eq!(at.id, heading);
    assert_eq!(ancestors.iter().map(|v| v.id).collect::<Vec<_>>(), doc.ancestors(heading).collect::<Vec<_>>());
    assert_eq!(children.len(), doc.children(heading).len());
    assert_eq!(siblings.len(), doc.siblings(heading).count());
    let Reply::Neighborhood { children: deep, .. } = ok(&traversal, s, "VIEW NEIGHBORHOOD DEPTH=3").reply else {
        panic!()
    };
    assert!(deep.len() >= children.len());
    assert_eq!(fails(&traversal, s, "VIEW NEIGHBORHOOD DEPTH=11").code(), "depth_limit");
}

#[test]
fn expand_walks_every_direction_with_filters() {
    let traversal = traversal();
    let s = session(&traversal);
    let doc = node_excerpt();
    let file = doc.children(BlockId::ROOT)[1];
    let down = listed(&ok(&traversal, s, &format!("EXPAND {file} DOWN DEPTH=2")).reply);
    let expected: Vec<BlockId> =
        doc.descendants(file).filter(|d| doc.ancestors(*d).take_while(|a| *a != file).count() < 2).collect();
    assert_eq!(down, expected);
    let headings = listed(&ok(&traversal, s, &format!("EXPAND {file} DOWN DEPTH=5 ROLES=heading2,heading3")).reply);
    assert!(!headings.is_empty());
    assert!(headings.iter().all(|h| matches!(doc.get(*h).unwrap().role(), Some(Role::Heading2 | Role::Heading3))));
    let leaf = doc.descendants(file).last().unwrap();
    let up = listed(&ok(&traversal, s, &format!("EXPAND {leaf} UP DEPTH=2")).reply);
    let mut ancestors: Vec<BlockId> = doc.ancestors(leaf).take(2).collect();
    ancestors.reverse();
    assert_eq!(up, ancestors);
    let both = listed(&ok(&traversal, s, &format!("EXPAND {file} BOTH DEPTH=1")).reply);
    assert_eq!(both.len(), 1 + doc.children(file).len());
    assert_eq!(fails(&traversal, s, &format!("EXPAND {file} DOWN DEPTH=11")).code(), "depth_limit");
    // The results are the session's last results.
    let last = traversal.with_session(s, |s| s.last_results().to_vec()).unwrap();
    assert_eq!(last, both);
}

#[test]
fn expand_with_a_token_budget_shows_stubs_with_prices() {
    let traversal = traversal();
    let s = session(&traversal);
    let doc = node_excerpt();
    let file = doc.children(BlockId::ROOT)[1];
    let step = ok(&traversal, s, &format!("EXPAND {file} DOWN DEPTH=3 MODE=full TOKENS=120"));
    let Reply::Listing { items, stubs, .. } = &step.reply else { panic!() };
    assert!(!stubs.is_empty(), "{step}");
    let shown: usize =
        items.iter().map(|i| i.view.to_string()).map(|l| ucm_core::BpeTokenizer::default().count(&l) + 1).sum();
    assert!(shown <= 120);
    assert!(step.to_string().contains(" stub · "), "{step}");
    assert!(stubs.iter().all(|s| s.tokens > 0));
}

#[test]
fn follow_and_path_use_edges() {
    let traversal = traversal();
    let s = session(&traversal);
    let doc = node_excerpt();
    let edge = doc.edges().iter().next().unwrap().clone();
    let step = ok(&traversal, s, &format!("FOLLOW {} links_to", edge.source));
    let targets = listed(&step.reply);
    assert!(targets.contains(&edge.target));
    assert!(step.to_string().contains("links_to"));
    assert!(listed(&ok(&traversal, s, &format!("FOLLOW {} references", edge.source)).reply).is_empty());
    ok(&traversal, s, &format!("FOLLOW {} links_to {}", edge.source, edge.target));
    assert_eq!(traversal.with_session(s, |s| s.cursor().position()).unwrap(), edge.target);

    // PATH: the tree path, then a shortcut once two distant blocks are linked.
    let files = doc.children(BlockId::ROOT);
    let (a, b) = (doc.descendants(files[1]).last().unwrap(), doc.descendants(files[4]).last().unwrap());
    let tree = listed(&ok(&traversal, s, &format!("PATH {a} TO {b}")).reply);
    assert_eq!(tree.first(), Some(&a));
    assert_eq!(tree.last(), Some(&b));
    assert_eq!(tree.len() - 1, ucp_context::tree_distance(&doc, a, b).unwrap());
    ok(&traversal, s, &format!("LINK {a} references {b}"));
    let linked = listed(&ok(&traversal, s, &format!("PATH {a} TO {b}")).reply);
    assert_eq!(linked, vec![a, b]);
    let error = fails(&traversal, s, &format!("PATH {} TO {b} MAX=1", files[1]));
    assert_eq!(error.code(), "no_path");
}

#[test]
fn find_filters_combine_with_and() {
    let traversal = traversal();
    let s = session(&traversal);
    let doc = node_excerpt();
    let found = listed(&ok(&traversal, s, "FIND ROLE=heading2 PATTERN=\"^[A-Z]\"").reply);
    let expected: Vec<BlockId> = doc
        .document_order()
        .filter(|id| {
            let block = doc.get(*id).unwrap();
            block.role() == Some(&Role::Heading2) && block.plain_text().starts_with(|c: char| c.is_ascii_uppercase())
        })
        .collect();
    assert_eq!(found, expected);
    let all_h2 = listed(&ok(&traversal, s, "FIND ROLE=heading2").reply);
    assert!(all_h2.len() > found.len() || all_h2 == found);
    assert_eq!(fails(&traversal, s, "FIND PATTERN=\"(\"").code(), "invalid_pattern");
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
fn context_commands_change_the_window() {
    let traversal = traversal();
    let s = session(&traversal);
    let doc = node_excerpt();
    let heading = first(&doc, Role::Heading2);
    assert_eq!(fails(&traversal, s, "CTX ADD RESULTS").code(), "no_results");
    ok(&traversal, s, &format!("CTX ADD {heading} REASON=structural_context RELEVANCE=0.9"));
    ok(&traversal, s, &format!("CTX ADD CHILDREN {heading}"));
    let blocks = traversal.with_session(s, |s| s.window().len()).unwrap();
    assert_eq!(blocks, 1 + doc.children(heading).len());
    ok(&traversal, s, &format!("CTX FOCUS {heading}"));
    ok(&traversal, s, "CTX EXPAND DOWN DEPTH=2 TOKENS=300");
    let rendered = ok(&traversal, s, "CTX RENDER FORMAT=SHORT_IDS");
    let Reply::Rendered { text, tokens, .. } = &rendered.reply else { panic!() };
    assert!(text.contains("[1]"), "{text}");
    assert_eq!(*tokens, ucm_core::BpeTokenizer::default().count(text));
    // Short ids from the rendering work in later commands.
    let step = ok(&traversal, s, "CTX REMOVE 2");
    let Reply::Context { removed, .. } = &step.reply else { panic!() };
    let second = traversal.with_session(s, |s| s.ids().full(2)).unwrap();
    assert_eq!(removed, &vec![second.unwrap()]);
    assert_eq!(fails(&traversal, s, "GOTO 9999").code(), "bad_reference");
    ok(&traversal, s, "CTX COMPRESS METHOD=TRUNCATE");
    ok(&traversal, s, "CTX PRUNE MIN_RELEVANCE=0.99");
    let stats = ok(&traversal, s, "CTX STATS");
    let json = serde_json::to_value(&stats).unwrap();
    assert!(json["reply"]["stats"]["by_representation"]["full"].is_number(), "{json}");
    assert!(json["reply"]["stats"]["removed"]["pruned"].as_u64().unwrap() > 0);
    ok(&traversal, s, "CTX CLEAR");
    assert_eq!(traversal.with_session(s, |s| s.window().len()).unwrap(), 0);
    assert_eq!(fails(&traversal, s, &format!("CTX REMOVE {heading}")).code(), "not_in_window");
    ok(&traversal, s, "CTX FOCUS CLEAR");
    let markdown = ok(&traversal, s, &format!("CTX ADD {heading}"));
    assert!(markdown.to_string().contains("1 blocks"), "{markdown}");
    let Reply::Rendered { text, .. } = ok(&traversal, s, "CTX RENDER FORMAT=MARKDOWN").reply else { panic!() };
    assert!(text.starts_with("§ ") && !text.contains("[blk_"), "{text}");
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
        .create_session(ucp_agent::SessionConfig {
            capabilities: ucp_agent::Capabilities::read_only(),
            ..Default::default()
        })
        .unwrap();
    let error = fails(&traversal, read_only, &format!("APPEND {ROOT} text :: \"x\""));
    assert_eq!(error.code(), "not_permitted");
    assert!(matches!(error, AgentError::NotPermitted(_)));
}
