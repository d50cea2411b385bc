//! Parsers never panic on arbitrary input and always produce a valid
//! document (the property-test side of fuzzing the untrusted-input parsers).

use proptest::prelude::*;
use ucpkit_ingest::{html_document, markdown_document, IngestOptions};

/// Text biased towards markdown and HTML syntax.
fn markup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("# ".to_owned()),
        Just("\n".to_owned()),
        Just("\n\n".to_owned()),
        Just("- ".to_owned()),
        Just("```".to_owned()),
        Just("|".to_owned()),
        Just("---".to_owned()),
        Just("> ".to_owned()),
        Just("[x](#a)".to_owned()),
        Just("[^1]".to_owned()),
        Just("$$".to_owned()),
        Just("<h2 id='a'>".to_owned()),
        Just("<p>".to_owned()),
        Just("</div>".to_owned()),
        Just("<table><tr><td>".to_owned()),
        Just("<!--".to_owned()),
        "\\PC{0,12}",
    ];
    prop::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn markdown_never_panics_and_stays_valid(text in markup()) {
        let doc = markdown_document("fuzz", &text, &IngestOptions::default());
        prop_assert!(doc.validate().is_valid());
    }

    #[test]
    fn html_never_panics_and_stays_valid(text in markup()) {
        let doc = html_document("fuzz", &text, &IngestOptions::default());
        prop_assert!(doc.validate().is_valid());
    }
}
