//! Any text parses into a valid document, and its markdown export parses
//! again into the same structure.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ucpkit_ingest::{markdown_document, to_markdown, IngestOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let options = IngestOptions::default();
    let doc = markdown_document("fuzz", text, &options);
    assert!(doc.validate().is_valid());
    let again = markdown_document("fuzz", &to_markdown(&doc), &options);
    assert!(again.validate().is_valid());
});
