//! Properties over arbitrary input: the analyzer's tokens always point at
//! their source text, and no query string can make a search fail or return
//! scores outside 0..1.

use proptest::prelude::*;
use tantivy::tokenizer::{TokenStream, Tokenizer};
use ucpkit_analyzer::{terms, CodeTokenizer};
use ucpkit_ingest::{markdown_document, IngestOptions};
use ucpkit_search::{Mode, SearchConfig, SearchIndex, SearchOptions};

/// Text mixing prose, identifiers, connectors, digits and non-ASCII.
fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            "[a-zA-Z_]{1,12}",
            "[a-z]+([A-Z][a-z]+){0,3}",
            "[a-z]+(\\.|::|/|-)[a-zA-Z]+",
            "[0-9]{1,6}",
            "[ .,:;!?/\\-()\\[\\]`*#]{1,4}",
            "\\PC{1,4}",
        ],
        0..24,
    )
    .prop_map(|parts| parts.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn tokens_are_lowercased_slices_of_the_source(input in text()) {
        let mut tokenizer = CodeTokenizer::default();
        let mut stream = tokenizer.token_stream(&input);
        let mut previous = 0;
        while stream.advance() {
            let token = stream.token();
            prop_assert!(input.is_char_boundary(token.offset_from) && input.is_char_boundary(token.offset_to));
            prop_assert!(token.offset_from < token.offset_to);
            prop_assert_eq!(&token.text, &input[token.offset_from..token.offset_to].to_lowercase());
            prop_assert!(token.position >= previous);
            previous = token.position;
        }
        // The analyzed terms never contain separators.
        for term in terms(&input) {
            prop_assert!(!term.is_empty() && !term.chars().any(char::is_whitespace), "{term:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_query_searches_without_error(query in text(), limit in 0usize..20, min in 0.0f64..1.0) {
        let doc = markdown_document(
            "p",
            "# Streams\n\nUse `fs.createReadStream` for big files.\n\n## Errors\n\nAn `ERR_INVALID_ARG_TYPE` is thrown.\n",
            &IngestOptions::default(),
        );
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = SearchIndex::open(dir.path(), &doc, None, SearchConfig::default(), &()).unwrap();
        let options = SearchOptions { limit, min_similarity: min, ..SearchOptions::default() };
        let hits = index.search_mode(&query, &options, Mode::Bm25).unwrap();
        prop_assert!(hits.len() <= limit);
        prop_assert!(hits.iter().all(|h| h.score >= min && h.score <= 1.0 && doc.contains(h.id)));
    }
}
