//! Behaviour of the window on the Node.js documentation excerpt.

use std::path::Path;
use ucpkit_core::outline;

use ucpkit_context::{Action, ContextWindow, Env, ExtractiveSummarizer, Representation, WindowConfig, WindowError};
use ucpkit_context::{CompressMethod, CtxDirection, IdMapper, Reason, RenderFormat};
use ucpkit_core::{BlockId, BpeTokenizer, Document, RemoveMode, Role, Tokenizer};

fn corpus() -> Document {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/node-excerpt");
    ucpkit_ingest::ingest(&[dir], "node", &ucpkit_ingest::IngestOptions::default(), &()).unwrap().document
}

fn env<'a>(doc: &'a Document, tokenizer: &'a BpeTokenizer) -> Env<'a> {
    Env { doc, tokenizer, summarizer: &ExtractiveSummarizer, now_ms: 1_700_000_000_000 }
}

fn window(max_tokens: usize) -> ContextWindow {
    ContextWindow::new(WindowConfig { max_tokens, ..WindowConfig::default() })
}

/// Paragraphs with more than `min` tokens, in document order.
fn long_paragraphs(doc: &Document, min: u32) -> Vec<BlockId> {
    doc.document_order()
        .filter(|id| {
            let b = doc.get(*id).unwrap();
            b.role() == Some(&Role::Paragraph) && b.metadata.tokens.unwrap_or(0) > min
        })
        .collect()
}

#[test]
fn compressed_blocks_open_back_to_their_exact_text() {
    let doc = corpus();
    let tokenizer = BpeTokenizer::default();
    let env = env(&doc, &tokenizer);
    let config = WindowConfig { truncate_tokens: 24, summary_tokens: 16, ..WindowConfig::default() };
    let mut window = ContextWindow::new(config);
    for id in long_paragraphs(&doc, 60).into_iter().take(5) {
        window.add(&env, id, Reason::DirectReference, None).unwrap();
    }
    let original = window.render(&env, RenderFormat::Default, &mut IdMapper::new());
    for method in [CompressMethod::Truncate, CompressMethod::Summarize, CompressMethod::StructureOnly] {
        let before = window.tokens();
        let changed = window.compress(&env, method);
        assert_eq!(changed.len(), 5, "{method:?}");
        assert!(window.tokens() < before);
        let ids: Vec<BlockId> = window.entries().iter().map(|e| e.id).collect();
        for id in ids {
            let admitted = window.add(&env, id, Reason::DirectReference, None).unwrap();
            assert!(admitted.already_present);
            assert_eq!(admitted.representation, Representation::Full);
        }
        assert_eq!(window.render(&env, RenderFormat::Default, &mut IdMapper::new()), original);
    }
    let stats = window.stats(&env);
    assert_eq!(stats.removed["compressed"], 15);
}

#[test]
fn a_full_window_evicts_the_least_relevant_and_says_so() {
    let doc = corpus();
    let tokenizer = BpeTokenizer::default();
    let env = env(&doc, &tokenizer);
    let paragraphs = long_paragraphs(&doc, 60);
    let mut window = window(260);
    window.add(&env, paragraphs[0], Reason::AgentDecision, None).unwrap();
    window.add(&env, paragraphs[1], Reason::DirectReference, None).unwrap();
    let mut evicted = Vec::new();
    for id in &paragraphs[2..6] {
        let admitted = window.add(&env, *id, Reason::DirectReference, None).unwrap();
        evicted.extend(admitted.evicted);
    }
    assert_eq!(evicted[0], paragraphs[0], "the agent_decision block leaves first");
    assert!(window.tokens() <= 260);
    let logged: Vec<BlockId> =
        window.log().filter(|c| matches!(c.action, Action::Evicted { .. })).map(|c| c.id).collect();
    assert_eq!(logged, evicted);
    assert_eq!(window.stats(&env).removed["evicted"], evicted.len());
}

#[test]
fn a_block_too_large_for_the_budget_is_shown_smaller() {
    let doc = corpus();
    let tokenizer = BpeTokenizer::default();
    let env = env(&doc, &tokenizer);
    let big = long_paragraphs(&doc, 100)[0];
    let mut window = window(90);
    let admitted = window.add(&env, big, Reason::DirectReference, None).unwrap();
    assert_ne!(admitted.representation, Representation::Full);
    assert!(window.tokens() <= 90);

    let mut tiny = self::window(5);
    let error = tiny.add(&env, big, Reason::DirectReference, None).unwrap_err();
    assert!(matches!(error, WindowError::ContextLimitExceeded { .. }), "{error}");
    assert!(tiny.is_empty());
}

#[test]
fn the_focus_and_its_ancestors_survive_pruning() {
    let doc = corpus();
    let tokenizer = BpeTokenizer::default();
    let env = env(&doc, &tokenizer);
    let paragraph = long_paragraphs(&doc, 30)[3];
    let mut window = window(8000);
    window.add(&env, paragraph, Reason::AgentDecision, None).unwrap();
    for ancestor in doc.ancestors(paragraph).filter(|a| !a.is_root()) {
        window.add(&env, ancestor, Reason::StructuralContext, None).unwrap();
    }
    let other = *long_paragraphs(&doc, 30).last().unwrap();
    window.add(&env, other, Reason::AgentDecision, None).unwrap();
    window.set_focus(&env, Some(paragraph)).unwrap();
    let pruned = window.prune(&env, Some(1.0), None);
    assert_eq!(pruned, vec![other]);
    assert!(window.get(paragraph).is_some());
    assert_eq!(window.len(), 1 + doc.ancestors(paragraph).filter(|a| !a.is_root()).count());
}

#[test]
fn budget_aware_expansion_opens_the_best_and_stubs_the_rest() {
    let doc = corpus();
    let tokenizer = BpeTokenizer::default();
    let env = env(&doc, &tokenizer);
    let file = doc.children(BlockId::ROOT)[1];
    let mut window = window(8000);
    window.add(&env, file, Reason::DirectReference, None).unwrap();
    window.set_focus(&env, Some(file)).unwrap();
    let expansion = window.expand(&env, CtxDirection::Down, 3, Some(400));
    assert!(!expansion.added.is_empty() && !expansion.stubs.is_empty(), "{expansion:?}");
    assert!(expansion.tokens <= 400);
    let text = window.render(&env, RenderFormat::Default, &mut IdMapper::new());
    let stub = expansion.stubs[0];
    assert!(text.contains(&format!("[{stub}] stub ")), "{text}");
    assert!(text.contains(" tokens"), "stubs show their price");
    // Opening a stub swaps it for its content.
    let opened = window.add(&env, stub, Reason::DirectReference, None).unwrap();
    assert_eq!(opened.representation, Representation::Full);
}

#[test]
fn entries_of_deleted_blocks_leave_on_the_next_operation() {
    let mut doc = corpus();
    let tokenizer = BpeTokenizer::default();
    let paragraphs = long_paragraphs(&doc, 30);
    let mut window = window(8000);
    window.add(&env(&doc, &tokenizer), paragraphs[0], Reason::DirectReference, None).unwrap();
    window.add(&env(&doc, &tokenizer), paragraphs[1], Reason::DirectReference, None).unwrap();
    doc.remove_block(paragraphs[0], RemoveMode::Cascade).unwrap();
    let env = env(&doc, &tokenizer);
    window.sync(&env);
    assert_eq!(window.len(), 1);
    assert!(window.log().any(|c| c.id == paragraphs[0] && c.action == Action::Deleted));
    let text = window.render(&env, RenderFormat::Default, &mut IdMapper::new());
    assert_eq!(tokenizer.count(&text), window.tokens());
}

#[test]
fn refused_changes_change_nothing() {
    let doc = corpus();
    let tokenizer = BpeTokenizer::default();
    let env = env(&doc, &tokenizer);
    let mut window = window(8000);
    let paragraph = long_paragraphs(&doc, 30)[0];
    window.add(&env, paragraph, Reason::DirectReference, None).unwrap();
    let before = serde_json::to_string(&window).unwrap();
    let missing: BlockId = "blk_0123456789abcdef01234567".parse().unwrap();
    assert_eq!(window.remove(&env, missing), Err(WindowError::NotInWindow(missing)));
    assert_eq!(window.add(&env, missing, Reason::DirectReference, None), Err(WindowError::BlockNotFound(missing)));
    assert_eq!(window.set_focus(&env, Some(missing)), Err(WindowError::BlockNotFound(missing)));
    assert_eq!(serde_json::to_string(&window).unwrap(), before);
}

#[test]
fn stats_report_every_required_field() {
    let doc = corpus();
    let tokenizer = BpeTokenizer::default();
    let env = env(&doc, &tokenizer);
    let mut window = window(8000);
    window.add(&env, long_paragraphs(&doc, 30)[0], Reason::SemanticRelevance, None).unwrap();
    let json = serde_json::to_value(window.stats(&env)).unwrap();
    for key in ["blocks", "tokens", "max_tokens", "max_blocks", "by_reason", "by_role", "by_representation"] {
        assert!(json.get(key).is_some(), "{key} missing from {json}");
    }
    for representation in ["full", "truncated", "summary", "structure_only"] {
        assert!(json["by_representation"].get(representation).is_some());
    }
    assert_eq!(json["by_reason"]["semantic_relevance"], 1);
    assert_eq!(json["by_role"]["paragraph"], 1);
}

#[test]
fn a_window_survives_a_json_round_trip() {
    let doc = corpus();
    let tokenizer = BpeTokenizer::default();
    let env = env(&doc, &tokenizer);
    let mut window = window(8000);
    for id in long_paragraphs(&doc, 30).into_iter().take(4) {
        window.add(&env, id, Reason::DirectReference, None).unwrap();
    }
    window.set_task(&env, Some("punycode"));
    let text = window.render(&env, RenderFormat::Default, &mut IdMapper::new());
    let mut loaded: ContextWindow = serde_json::from_str(&serde_json::to_string(&window).unwrap()).unwrap();
    loaded.sync(&env);
    assert_eq!(loaded.render(&env, RenderFormat::Default, &mut IdMapper::new()), text);
    assert_eq!(loaded.tokens(), window.tokens());
    assert_eq!(loaded.task(), Some("punycode"));
}

#[test]
fn heading_paths_name_a_folder_once_through_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("corpus/library/io");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(nested.join("csv.md"), "# CSV\n\nReading rows.\n").unwrap();
    let doc = ucpkit_ingest::ingest(&[dir.path().join("corpus")], "c", &ucpkit_ingest::IngestOptions::default(), &())
        .unwrap()
        .document;
    let rows = doc.document_order().find(|id| doc.get(*id).is_some_and(|b| b.plain_text() == "Reading rows.")).unwrap();
    assert_eq!(outline::path_titles(&doc, rows), ["library/io/csv.md", "CSV"]);
    // A folder's own name holds the folders above it.
    let io = doc
        .ancestors(rows)
        .find(|a| {
            doc.get(*a).is_some_and(|b| {
                b.role() == Some(&Role::Directory) && b.metadata.label.as_deref() == Some("library/io")
            })
        })
        .unwrap();
    assert!(outline::path_titles(&doc, io).is_empty());
}
