//! Any text parses as HTML into a valid document.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ucpkit_ingest::{html_document, IngestOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let doc = html_document("fuzz", text, &IngestOptions::default());
    assert!(doc.validate().is_valid());
});
