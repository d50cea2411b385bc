//! The example agent session of the product design, on the
//! Node.js excerpt: search, add results, go to the overview, expand it, add
//! two blocks, follow an edge, expand semantically, check stats, compress,
//! render with short ids. It runs end to end and stays within budget.

mod common;

use common::*;
use ucpkit_core::{BlockId, Document, Tokenizer as _};
use ucpkit_sessions::{Reply, SessionConfig, SessionLimits};

/// The block whose markdown starts with `prefix`.
fn block(doc: &Document, prefix: &str) -> BlockId {
    doc.document_order().find(|id| doc.get(*id).unwrap().to_markdown().starts_with(prefix)).unwrap()
}

#[test]
fn the_design_example_session_runs_within_budget() {
    let traversal = searchable();
    let doc = node_excerpt();
    let budget = 1500;
    let limits = SessionLimits { max_context_tokens: budget, ..SessionLimits::default() };
    let session =
        traversal.create_session(SessionConfig { name: Some("example".into()), limits, ..Default::default() }).unwrap();
    let overview = block(&doc, "# Punycode");
    let encode = block(&doc, "## `punycode.encode(string)`");
    let decode = block(&doc, "## `punycode.decode(string)`");
    let linking = doc.edges().iter().next().unwrap().source;
    let script = format!(
        "# 1. Search for relevant content
SEARCH \"punycode encode domain\" LIMIT=5
# 2. Add top results to context
CTX ADD RESULTS
# 3. Navigate to the most relevant block
GOTO {overview}
# 4. Expand to see structure
EXPAND {overview} DOWN DEPTH=2 MODE=preview
# 5. Add interesting blocks to context
CTX ADD {encode} REASON=semantic_relevance
CTX ADD {decode}
# 6. Follow edges to related content
FOLLOW {linking} links_to
# 7. Expand context with related content
CTX EXPAND SEMANTIC DEPTH=1
# 8. Check context status
CTX STATS
# 9. Compress if needed
CTX COMPRESS METHOD=TRUNCATE
# 10. Render for LLM analysis
CTX RENDER FORMAT=SHORT_IDS
"
    );
    let report = traversal.run_script(session, &script).unwrap();
    assert!(report.ok(), "{report}");
    assert_eq!(report.steps.len(), 11);
    let Reply::Rendered { text, tokens, .. } = &report.steps[10].result.as_ref().unwrap().reply else { panic!() };
    assert!(*tokens <= budget, "{tokens} tokens");
    assert_eq!(*tokens, ucpkit_core::BpeTokenizer::default().count(text));
    assert!(text.contains("punycode.encode"), "{text}");
    // Short ids assigned by the rendering resolve in later commands.
    let step = ok(&traversal, session, "VIEW 1 MODE=ids");
    assert!(step.to_string().starts_with("blk_"), "{step}");
    let stats = traversal.with_session(session, |s| s.window().len()).unwrap();
    assert!(stats > 3);
}
