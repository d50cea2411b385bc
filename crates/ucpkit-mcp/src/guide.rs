//! The `ucl` prompt: UCL in a few hundred tokens, one example per command.

/// The prompt's name.
pub const NAME: &str = "ucl";

/// The prompt's one-line description.
pub const DESCRIPTION: &str = "How to move through a document and build your context with UCL";

/// The text of the prompt.
pub const TEXT: &str = r#"You work in a document graph through UCL, one command per line, with the `ucl` tool.
Blocks have ids (blk_…); after CTX RENDER FORMAT=SHORT_IDS you may write 1, 2, 3 instead; @label names a labelled block.
Your session keeps a cursor, your last results and a context window under a hard token budget.

Find:
SEARCH "retry backoff" LIMIT=5        ranked blocks; they become your last results
FIND ROLE=code PATTERN="^fn connect"  exact filter by role, tag, label, regex
Move and look:
GOTO blk_1a2b                          move the cursor
BACK                                   previous position
EXPAND blk_1a2b DOWN DEPTH=2 TOKENS=800  children; stubs show what the rest would cost
FOLLOW blk_1a2b links_to               blocks an edge leads to
PATH blk_a TO blk_b                    shortest route
VIEW blk_1a2b MODE=preview             also full, metadata, ids, adaptive; VIEW NEIGHBORHOOD
VIEW MAP TOKENS=800                    in code: files ranked around what you look at, key signatures
FOLLOW blk_1a2b calls                  in code: what a function calls (also imports, extends)
Build the context:
CTX ADD blk_1a2b REASON=direct_reference   or CTX ADD RESULTS, CTX ADD CHILDREN blk_x
CTX EXPAND DOWN DEPTH=1 TOKENS=1500    most relevant descendants within a budget
CTX REMOVE blk_1a2b | CTX CLEAR
CTX COMPRESS METHOD=TRUNCATE           or SUMMARIZE, STRUCTURE_ONLY
CTX PRUNE MIN_RELEVANCE=0.3
CTX FOCUS blk_1a2b                     the focus and its ancestors are never pruned
CTX STATS                              blocks, tokens, budget
CTX RENDER FORMAT=MARKDOWN             the window's text (DEFAULT, SHORT_IDS)
Edit (when allowed):
EDIT blk_1a2b SET text = "new text"
APPEND blk_parent text :: "A new paragraph"
MOVE blk_x TO blk_parent AT 0 | DELETE blk_x | LINK blk_a references blk_b

Tips: SEARCH or the `context` tool first; EXPAND with TOKENS= to see sizes before adding;
check CTX STATS before CTX RENDER. Long results are cut into pages: call `ucl` with page=N."#;

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_registry::vocabulary::{BpeTokenizer, Tokenizer as _};

    #[test]
    fn the_guide_is_short_and_its_examples_parse() {
        let tokens = BpeTokenizer::default().count(TEXT);
        assert!(tokens < 700, "the guide costs {tokens} tokens");
        // Every example line (the text before two spaces of comment) parses.
        let examples = TEXT
            .lines()
            .filter(|l| {
                let word = l.split(' ').next().unwrap_or("");
                word.len() > 1 && word.chars().all(|c| c.is_ascii_uppercase())
            })
            .flat_map(|l| {
                let code = l.split("  ").next().unwrap_or(l);
                code.split(" | ").map(str::to_owned).collect::<Vec<_>>()
            })
            .filter(|code| !code.contains("…"));
        let mut checked = 0;
        for example in examples {
            let example = example.split(" or ").next().unwrap().trim().to_owned();
            assert!(ucpkit_registry::vocabulary::parse_script(&example).is_ok(), "example does not parse: {example}");
            checked += 1;
        }
        assert!(checked >= 20, "only {checked} examples checked");
    }
}
