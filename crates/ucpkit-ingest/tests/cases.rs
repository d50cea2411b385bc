//! Data-driven ingest tests: every file under `tests/data/cases/` is
//! ingested and its outline compared with a snapshot in `tests/snapshots/`.
//! Add a case by adding a file; re-bless with `INSTA_UPDATE=always`.

mod common;

use std::path::PathBuf;

#[test]
fn ingest_cases_match_snapshots() {
    insta::glob!("data/cases/*.*", |path| {
        let ingested = ucpkit_ingest::ingest(&[PathBuf::from(path)], "case", &Default::default(), &()).unwrap();
        let doc = ingested.document;
        assert!(doc.validate().is_valid(), "{:?}", doc.validate());
        insta::assert_snapshot!(common::outline(&doc));
    });
}
