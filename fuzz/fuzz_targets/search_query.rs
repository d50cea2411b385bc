//! Any query text analyzes into terms and searches a small index without a
//! panic; hits are blocks of the document with scores in 0..1.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use ucpkit_search::{Mode, SearchConfig, SearchIndex, SearchOptions};

struct Fixture {
    doc: ucpkit_core::Document,
    index: SearchIndex,
    _dir: tempfile::TempDir,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let text = "# Streams\n\nUse `fs.createReadStream(path)` for big files.\n\n## Errors\n\n\
                    An `ERR_INVALID_ARG_TYPE` is thrown when max_old_space_size is wrong.\n";
        let doc = ucpkit_ingest::markdown_document("fuzz", text, &ucpkit_ingest::IngestOptions::default());
        let dir = tempfile::tempdir().expect("temporary directory");
        let (index, _) =
            SearchIndex::open(dir.path(), &doc, None, SearchConfig::default(), &()).expect("index builds");
        Fixture { doc, index, _dir: dir }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(query) = std::str::from_utf8(data) else { return };
    let fixture = fixture();
    let _ = ucpkit_analyzer::terms(query);
    let hits = fixture.index.search_mode(query, &SearchOptions::default(), Mode::Bm25).expect("search runs");
    assert!(hits.iter().all(|h| (0.0..=1.0).contains(&h.score) && fixture.doc.contains(h.id)));
});
