//! The search index end to end: what BM25 finds, filters, score scale,
//! incremental sync after edits, persistence, and recovery from damage.
//! Vector and hybrid search run when a model is configured for tests
//! (`UCP_TEST_MODEL`: a model2vec directory; `UCP_TEST_ONNX_MODEL`: an ONNX
//! one; `scripts/test` fetches both).

use std::path::{Path, PathBuf};

use ucpkit_core::{Block, BlockId, Content, Document, Metadata, RemoveMode, Role};
use ucpkit_ingest::{markdown_document, IngestOptions};
use ucpkit_search::{
    load_embedder, Embedder, Mode, RagProvider, SearchConfig, SearchError, SearchIndex, SearchOptions, SyncReport,
};

const GUIDE: &str = "\
# File system

## Reading files

Use `fs.createReadStream(path)` to read a large file in chunks.
The `highWaterMark` option sets how many bytes each chunk holds.

## Writing files

`fs.writeFile` replaces the whole file. Pass `flag: 'a'` to append instead.

# Networking

## Sockets

A socket emits `close` when the connection ends. Set `max_connections` on the server.

## Timers

Timers scheduled with setTimeout fire after the delay; a delay larger than 2147483647 becomes 1.
";

fn guide() -> Document {
    markdown_document("guide", GUIDE, &IngestOptions::default())
}

fn open(dir: &Path, doc: &Document, embedder: Option<Box<dyn Embedder>>) -> (SearchIndex, SyncReport) {
    SearchIndex::open(dir, doc, embedder, SearchConfig::default(), &()).expect("index opens")
}

fn texts(doc: &Document, index: &SearchIndex, query: &str, options: &SearchOptions, mode: Mode) -> Vec<String> {
    index
        .search_mode(query, options, mode)
        .expect("search runs")
        .into_iter()
        .map(|hit| doc.get(hit.id).expect("hits are blocks").plain_text().into_owned())
        .collect()
}

fn bm25(doc: &Document, index: &SearchIndex, query: &str) -> Vec<String> {
    texts(doc, index, query, &SearchOptions::default(), Mode::Bm25)
}

fn find_block(doc: &Document, needle: &str) -> BlockId {
    doc.blocks().find(|b| b.plain_text().contains(needle)).map(|b| b.id).expect("block exists")
}

#[test]
fn identifiers_are_found_whole_and_by_their_parts() {
    let doc = guide();
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = open(dir.path(), &doc, None);
    for query in ["fs.createReadStream", "createReadStream", "create read stream", "read streams"] {
        let found = bm25(&doc, &index, query);
        assert!(found.first().is_some_and(|t| t.contains("createReadStream")), "{query}: {found:?}");
    }
    let found = bm25(&doc, &index, "max connections");
    assert!(found[0].contains("max_connections"), "{found:?}");
}

#[test]
fn the_heading_path_finds_blocks_whose_text_does_not_say_it() {
    let doc = guide();
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = open(dir.path(), &doc, None);
    // "networking" appears only in a heading: the blocks below it match.
    let found = bm25(&doc, &index, "networking");
    assert!(found.iter().any(|t| t.contains("socket emits")), "{found:?}");
}

/// A limit any front end might pass through unchecked (`--limit 2147483648`).
fn huge_limit() -> SearchOptions {
    SearchOptions { limit: usize::MAX, ..SearchOptions::default() }
}

#[test]
fn a_huge_limit_is_capped_not_allocated() {
    let doc = guide();
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = open(dir.path(), &doc, None);
    let hits = index.search_mode("file", &huge_limit(), Mode::Bm25).unwrap();
    assert!(!hits.is_empty() && hits.len() <= ucpkit_search::MAX_HITS.min(index.len()));
}

#[test]
fn scores_are_normalized_and_ordered_and_min_similarity_cuts() {
    let doc = guide();
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = open(dir.path(), &doc, None);
    let hits = index.search_mode("file chunk bytes", &SearchOptions::default(), Mode::Bm25).unwrap();
    assert!(hits.len() >= 2);
    assert!(hits.iter().all(|h| h.score > 0.0 && h.score <= 1.0), "{hits:?}");
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    let threshold = hits[1].score + 1e-9;
    let strict = SearchOptions { min_similarity: threshold, ..SearchOptions::default() };
    let kept = index.search_mode("file chunk bytes", &strict, Mode::Bm25).unwrap();
    assert!(!kept.is_empty() && kept.len() < hits.len());
    assert!(kept.iter().all(|h| h.score >= threshold));
    let limited = SearchOptions { limit: 1, ..SearchOptions::default() };
    assert_eq!(index.search_mode("file", &limited, Mode::Bm25).unwrap().len(), 1);
}

#[test]
fn role_and_tag_filters_apply() {
    let mut doc = guide();
    let socket = find_block(&doc, "socket emits");
    doc.get_mut(socket).unwrap().metadata.tags.push("network".into());
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = open(dir.path(), &doc, None);
    let headings = SearchOptions { roles: vec!["heading2".into()], ..SearchOptions::default() };
    let mut found = texts(&doc, &index, "files", &headings, Mode::Bm25);
    found.sort();
    assert_eq!(found, ["Reading files", "Writing files"]);
    let tagged = SearchOptions { tags: vec!["network".into()], ..SearchOptions::default() };
    let found = texts(&doc, &index, "close connection server", &tagged, Mode::Bm25);
    assert_eq!(found.len(), 1);
    assert!(found[0].contains("socket emits"));
    let nothing = SearchOptions { tags: vec!["absent".into()], ..SearchOptions::default() };
    assert!(texts(&doc, &index, "file", &nothing, Mode::Bm25).is_empty());
}

#[test]
fn rare_terms_weigh_more_than_common_ones() {
    use ucpkit_search::RagProvider;
    let doc = guide();
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = open(dir.path(), &doc, None);
    let weights = index.term_weights("the files of highWaterMark zzzabsent");
    let weight = |t: &str| weights.iter().find(|(term, _)| term == t).map(|(_, w)| *w);
    assert!(weight("highwatermark").unwrap() > weight("file").unwrap());
    assert_eq!(weight("zzzabsent"), None, "terms no block holds are left out");
    assert_eq!(weight("the"), None, "stop words are not terms");
}

#[test]
fn queries_without_terms_find_nothing() {
    let doc = guide();
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = open(dir.path(), &doc, None);
    for query in ["", "   ", "the of and", "!!! ???", "zzzunknownword"] {
        assert!(bm25(&doc, &index, query).is_empty(), "{query:?}");
    }
}

#[test]
fn edits_reindex_only_what_changed() {
    let mut doc = guide();
    let dir = tempfile::tempdir().unwrap();
    let (index, report) = open(dir.path(), &doc, None);
    assert_eq!(report.rebuilt.as_deref(), Some("there is no search index yet"));
    let total = report.added;
    assert_eq!(index.len(), total);

    // Nothing changed: nothing to do.
    assert!(!index.sync(&doc).unwrap().changed());

    // Edit one block.
    let timers = find_block(&doc, "Timers scheduled");
    doc.get_mut(timers).unwrap().content = Content::markdown("Intervals repeat with setInterval until cleared.");
    let report = index.sync(&doc).unwrap();
    assert_eq!((report.added, report.updated, report.removed), (0, 1, 0));
    assert!(bm25(&doc, &index, "setTimeout delay").iter().all(|t| !t.contains("Timers scheduled")));
    assert!(bm25(&doc, &index, "setInterval")[0].contains("Intervals repeat"));

    // Append one.
    let sockets = find_block(&doc, "Sockets");
    let content = Content::markdown("Keep-alive probes detect dead peers.");
    let id = Block::derive_id(&content, Some(&Role::Paragraph), "guide", 99);
    doc.append_child(sockets, Block::new(id, content, Metadata::with_role(Role::Paragraph))).unwrap();
    let report = index.sync(&doc).unwrap();
    assert_eq!((report.added, report.updated, report.removed), (1, 0, 0));
    assert!(bm25(&doc, &index, "keep-alive probes")[0].contains("Keep-alive"));

    // Delete a section with its blocks.
    let networking = find_block(&doc, "Networking");
    let gone = doc.descendants(networking).count() + 1;
    doc.remove_block(networking, RemoveMode::Cascade).unwrap();
    let report = index.sync(&doc).unwrap();
    assert_eq!((report.added, report.updated, report.removed), (0, 0, gone));
    let left = bm25(&doc, &index, "socket probes intervals");
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(index.len(), total + 1 - gone);
}

#[test]
fn a_moved_block_is_reindexed_under_its_new_heading_path() {
    let mut doc = guide();
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = open(dir.path(), &doc, None);
    let socket = find_block(&doc, "socket emits");
    let reading = find_block(&doc, "Reading files");
    doc.move_block(socket, reading, None).unwrap();
    let report = index.sync(&doc).unwrap();
    assert_eq!(report.updated, 1, "only the moved block's heading path changed: {report:?}");
    let under_reading = SearchOptions { roles: vec!["paragraph".into()], ..SearchOptions::default() };
    let found = texts(&doc, &index, "reading", &under_reading, Mode::Bm25);
    assert!(found.iter().any(|t| t.contains("socket emits")), "{found:?}");
}

#[test]
fn the_index_survives_a_restart_and_catches_up_with_offline_edits() {
    let mut doc = guide();
    let dir = tempfile::tempdir().unwrap();
    let blocks = open(dir.path(), &doc, None).1.added;
    let (index, report) = open(dir.path(), &doc, None);
    assert_eq!(report.rebuilt, None);
    assert!(!report.changed(), "{report:?}");
    assert_eq!(index.len(), blocks);
    drop(index);

    // Edited while no index was open: the next open updates only that block.
    let timers = find_block(&doc, "Timers scheduled");
    doc.get_mut(timers).unwrap().content = Content::markdown("Immediate callbacks run after I/O.");
    let (index, report) = open(dir.path(), &doc, None);
    assert_eq!(report.rebuilt, None);
    assert_eq!((report.added, report.updated, report.removed), (0, 1, 0));
    assert!(bm25(&doc, &index, "immediate callbacks")[0].contains("Immediate"));
}

#[test]
fn a_damaged_index_is_rebuilt_and_says_why() {
    let doc = guide();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    let blocks = open(&path, &doc, None).1.added;
    type Damage = (&'static str, fn(&Path));
    let damages: [Damage; 4] = [
        ("meta", |p| std::fs::write(p.join("meta.json"), "{ not json").unwrap()),
        ("format", |p| std::fs::write(p.join("meta.json"), r#"{"format": 999, "document": "guide"}"#).unwrap()),
        ("catalog", |p| std::fs::write(p.join("catalog.bin"), b"garbage").unwrap()),
        ("bm25", |p| {
            for entry in std::fs::read_dir(p.join("bm25")).unwrap() {
                let entry = entry.unwrap().path();
                if entry.extension().is_some_and(|e| e == "json") {
                    std::fs::write(entry, "[]").unwrap();
                }
            }
        }),
    ];
    for (what, damage) in damages {
        damage(&path);
        let (index, report) = open(&path, &doc, None);
        let reason = report.rebuilt.unwrap_or_else(|| panic!("{what}: damage went unnoticed"));
        assert!(!reason.is_empty(), "{what}");
        assert_eq!(index.len(), blocks, "{what}");
        assert!(bm25(&doc, &index, "createReadStream")[0].contains("createReadStream"), "{what}");
    }
}

/// The model folder `var` names (scripts/test sets it).
fn model_dir(var: &str) -> PathBuf {
    let dir =
        std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| panic!("{var} is not set (scripts/test sets it)"));
    assert!(dir.is_dir(), "{var} names {}, which is not a folder", dir.display());
    dir
}

/// Vector and hybrid search with a real model: related words find each
/// other without sharing a term, and changing the model re-embeds.
fn semantic_search_works_with(dir: &Path) {
    let doc = guide();
    let index_dir = tempfile::tempdir().unwrap();
    let (index, report) = open(index_dir.path(), &doc, Some(load_embedder(dir).unwrap()));
    assert_eq!(report.embedded, index.len());
    assert_eq!(index.default_mode(), Mode::Hybrid);
    let options = SearchOptions { limit: 3, ..SearchOptions::default() };
    let networking = find_block(&doc, "Networking");
    let hits = index.search_mode("network connection", &options, Mode::Vector).unwrap();
    let outside: Vec<_> =
        hits.iter().filter(|h| !doc.ancestors(h.id).any(|a| a == networking) && h.id != networking).collect();
    assert!(outside.is_empty(), "{outside:?}");
    assert!(hits.iter().all(|h| (0.0..=1.0).contains(&h.score)));
    // What a ranking with a model fuses in: the vector search's hits.
    let provider: &dyn RagProvider = &index;
    assert_eq!(provider.semantic_search("network connection", &options).unwrap().unwrap(), hits);
    let hybrid = texts(&doc, &index, "createReadStream", &options, Mode::Hybrid);
    assert!(hybrid[0].contains("createReadStream"), "{hybrid:?}");
    for mode in [Mode::Vector, Mode::Hybrid] {
        assert!(index.search_mode("file", &huge_limit(), mode).unwrap().len() <= index.len());
    }
    drop(index);

    // Reopened with the same model: nothing is embedded again.
    let (_, report) = open(index_dir.path(), &doc, Some(load_embedder(dir).unwrap()));
    assert_eq!(report.embedded, 0);

    // Edited while opened without the model: the next run with it embeds
    // again rather than keep vectors of the old text.
    let mut doc = doc;
    let timers = find_block(&doc, "Timers scheduled");
    doc.get_mut(timers).unwrap().content = Content::markdown("Sockets and TCP connections of the network.");
    let (_, report) = open(index_dir.path(), &doc, None);
    assert_eq!(report.updated, 1);
    let (index, report) = open(index_dir.path(), &doc, Some(load_embedder(dir).unwrap()));
    assert_eq!(report.embedded, index.len());
}

#[test]
#[ignore = "needs UCP_TEST_MODEL: scripts/test fetches the model and runs this"]
fn static_model_search() {
    semantic_search_works_with(&model_dir("UCP_TEST_MODEL"));
}

#[test]
#[ignore = "needs UCP_TEST_MODEL: scripts/test fetches the model and runs this"]
fn an_index_opened_to_search_only_filters_its_vector_hits_as_a_whole_one_does() {
    let model = model_dir("UCP_TEST_MODEL");
    let mut doc = guide();
    let socket = find_block(&doc, "socket emits");
    doc.get_mut(socket).unwrap().metadata.tags.push("network".into());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    let config = SearchConfig::default;
    let embedder = || Some(load_embedder(&model).unwrap());
    let (whole, _) = SearchIndex::open_at(&path, &doc, Some(7), None, embedder(), config(), &()).unwrap();
    drop(whole);
    // The tag moves to another block: the first one's old entry must not pass.
    doc.get_mut(socket).unwrap().metadata.tags.clear();
    let timers = find_block(&doc, "Timers scheduled");
    doc.get_mut(timers).unwrap().metadata.tags.push("network".into());
    let (whole, _) = SearchIndex::open_at(&path, &doc, Some(8), None, embedder(), config(), &()).unwrap();
    let filters = [
        SearchOptions { roles: vec!["paragraph".into()], ..SearchOptions::default() },
        SearchOptions { roles: vec!["heading2".into(), "paragraph".into()], ..SearchOptions::default() },
        SearchOptions { tags: vec!["network".into()], ..SearchOptions::default() },
        SearchOptions { tags: vec!["absent".into(), "network".into()], ..SearchOptions::default() },
        SearchOptions { roles: vec!["paragraph".into()], tags: vec!["network".into()], ..SearchOptions::default() },
        SearchOptions { roles: vec!["heading2".into()], tags: vec!["network".into()], ..SearchOptions::default() },
    ];
    let expected: Vec<_> =
        filters.iter().map(|f| whole.search_mode("network connection", f, Mode::Vector).unwrap()).collect();
    drop(whole);
    let alone = SearchIndex::open_current_with_model(&path, "guide", 8, embedder().unwrap(), config())
        .unwrap()
        .expect("at revision 8");
    for (filter, expected) in filters.iter().zip(&expected) {
        assert_eq!(&alone.search_mode("network connection", filter, Mode::Vector).unwrap(), expected, "{filter:?}");
    }
    assert!(!expected[0].is_empty() && expected[5].is_empty(), "{expected:?}");
    for tagged in &expected[2..4] {
        assert_eq!(tagged.iter().map(|h| h.id).collect::<Vec<_>>(), vec![timers]);
    }
}

#[test]
#[ignore = "needs UCP_TEST_ONNX_MODEL: scripts/test fetches the model and runs this"]
fn onnx_model_search() {
    semantic_search_works_with(&model_dir("UCP_TEST_ONNX_MODEL"));
}

#[test]
fn vector_modes_without_a_model_fail_clearly() {
    let doc = guide();
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = open(dir.path(), &doc, None);
    for mode in [Mode::Vector, Mode::Hybrid] {
        let error = index.search_mode("file", &SearchOptions::default(), mode).unwrap_err();
        assert_eq!(error.code(), "search_no_model");
    }
    assert!((&index as &dyn RagProvider).semantic_search("file", &SearchOptions::default()).is_none());
}

#[test]
fn an_index_at_the_stores_revision_opens_without_its_document_only_to_search() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    let mut doc = guide();
    let (index, _) = SearchIndex::open_at(&path, &doc, Some(7), None, None, SearchConfig::default(), &()).unwrap();
    let expected = bm25(&doc, &index, "socket close");
    drop(index);

    assert!(SearchIndex::open_current(&path, "guide", 8, SearchConfig::default()).unwrap().is_none(), "behind");
    assert!(SearchIndex::open_current(&dir.path().join("none"), "guide", 7, SearchConfig::default())
        .unwrap()
        .is_none());
    let alone = SearchIndex::open_current(&path, "guide", 7, SearchConfig::default()).unwrap().expect("at revision 7");
    assert_eq!(bm25(&doc, &alone, "socket close"), expected);
    let roles = SearchOptions { roles: vec!["paragraph".into()], ..SearchOptions::default() };
    assert!(!alone.search_mode("socket", &roles, Mode::Bm25).unwrap().is_empty(), "filters need no catalog");

    // It refuses to change: it holds no record of what is indexed.
    let id = find_block(&doc, "A socket emits");
    doc.get_mut(id).unwrap().content = Content::markdown("edited");
    let write = ucpkit_search::Write { from: 7, to: 8 };
    assert!(matches!(alone.sync_changed(&doc, &[id], write), Err(ucpkit_search::SearchError::SearchOnly)));
    assert!(matches!(alone.sync_written(&doc, 8), Err(ucpkit_search::SearchError::SearchOnly)));
}

#[test]
fn an_index_opened_for_a_parts_changes_syncs_those_blocks_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    let mut doc = guide();
    drop(SearchIndex::open_at(&path, &doc, Some(7), None, None, SearchConfig::default(), &()).unwrap());
    assert!(SearchIndex::open_for_changes(&path, "guide", 8, SearchConfig::default()).unwrap().is_none(), "behind");

    let before = doc.clone();
    let id = find_block(&doc, "A socket emits");
    doc.get_mut(id).unwrap().content = Content::markdown("A quokka emits");
    let changes = SearchIndex::open_for_changes(&path, "guide", 7, SearchConfig::default()).unwrap().expect("at 7");
    // It knows what is indexed of the changed blocks only from the document
    // as read: no searching, no other sync.
    assert!(matches!(
        changes.search_mode("socket", &SearchOptions::default(), Mode::Bm25),
        Err(SearchError::ChangesOnly)
    ));
    assert!(matches!(changes.sync(&doc), Err(SearchError::ChangesOnly)));
    let write = ucpkit_search::Write { from: 7, to: 8 };
    assert!(matches!(changes.sync_changed(&doc, &[id], write), Err(SearchError::ChangesOnly)));
    let report = changes.sync_part(&before, &doc, &[id], write).unwrap();
    assert_eq!((report.added, report.updated, report.removed), (0, 1, 0));
    drop(changes);

    // The whole index, opened with the document, is current and finds it.
    let (index, opened) = SearchIndex::open_at(&path, &doc, Some(8), None, None, SearchConfig::default(), &()).unwrap();
    assert!(!opened.changed());
    assert_eq!(bm25(&doc, &index, "quokka"), ["A quokka emits"]);
    assert!(!index.sync(&doc).unwrap().changed(), "nothing was missed");
}

#[test]
fn a_write_is_recorded_only_over_the_revision_it_was_based_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    let mut doc = guide();
    let (index, _) = SearchIndex::open_at(&path, &doc, Some(7), None, None, SearchConfig::default(), &()).unwrap();
    let id = find_block(&doc, "A socket emits");
    doc.get_mut(id).unwrap().content = Content::markdown("A quokka emits");
    // Based on 7, which the index was current with: 8 is recorded.
    index.sync_changed(&doc, &[id], ucpkit_search::Write { from: 7, to: 8 }).unwrap();
    drop(index);
    assert!(SearchIndex::open_current(&path, "guide", 8, SearchConfig::default()).unwrap().is_some());

    // A write based on 9 while the index says 8: another writer's sync is
    // missing (or came late), so no revision is recorded.
    let (index, _) = SearchIndex::open_at(&path, &doc, Some(8), None, None, SearchConfig::default(), &()).unwrap();
    doc.get_mut(id).unwrap().content = Content::markdown("A wombat emits");
    index.sync_changed(&doc, &[id], ucpkit_search::Write { from: 9, to: 10 }).unwrap();
    drop(index);
    for revision in [8, 9, 10] {
        assert!(SearchIndex::open_current(&path, "guide", revision, SearchConfig::default()).unwrap().is_none());
    }
    // Opened with the document at 10, it syncs and finds the edit.
    let (index, _) = SearchIndex::open_at(&path, &doc, Some(10), None, None, SearchConfig::default(), &()).unwrap();
    assert_eq!(bm25(&doc, &index, "wombat"), ["A wombat emits"]);
}

/// An index behind the store catches up from the blocks the store says
/// changed since its revision, looking at no other block; told of changes
/// since another revision, it looks at every block.
#[test]
fn an_index_behind_catches_up_from_the_blocks_changed_since_its_revision() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    let mut doc = guide();
    drop(SearchIndex::open_at(&path, &doc, Some(7), None, None, SearchConfig::default(), &()).unwrap());
    assert_eq!(SearchIndex::recorded_revision(&path), Some(7));
    let edited = find_block(&doc, "A socket emits");
    doc.get_mut(edited).unwrap().content = Content::markdown("A quokka emits");
    // Changed behind the index's back too, but not in what the store says
    // changed since 7: only a whole sync would see it.
    let unlogged = find_block(&doc, "`fs.writeFile` replaces");
    doc.get_mut(unlogged).unwrap().content = Content::markdown("A numbat replaces");

    let wrong = ucpkit_search::ChangedSince { revision: 6, blocks: &[edited] };
    let scratch = tempfile::tempdir().unwrap();
    let copy = scratch.path().join("index");
    copy_dir(&path, &copy);
    let (index, opened) =
        SearchIndex::open_at(&copy, &doc, Some(8), Some(wrong), None, SearchConfig::default(), &()).unwrap();
    assert_eq!(opened.updated, 2, "from another revision: every block is looked at");
    assert_eq!(bm25(&doc, &index, "numbat"), ["A numbat replaces"]);

    let since = ucpkit_search::ChangedSince { revision: 7, blocks: &[edited] };
    let (index, opened) =
        SearchIndex::open_at(&path, &doc, Some(8), Some(since), None, SearchConfig::default(), &()).unwrap();
    assert_eq!((opened.added, opened.updated, opened.removed), (0, 1, 0));
    assert_eq!(bm25(&doc, &index, "quokka"), ["A quokka emits"]);
    assert!(bm25(&doc, &index, "numbat").is_empty(), "the block the store did not name was not looked at");
    assert_eq!(SearchIndex::recorded_revision(&path), Some(8));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn a_long_reports_headline_is_searched_on_its_own_too() {
    let doc = guide();
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = open(dir.path(), &doc, None);
    // A report whose body keeps talking about the socket it saw close,
    // under a headline that says the bug is a timer's delay.
    let headline = "setTimeout fires early with a delay larger than 2147483647";
    let body = "My production server closes a socket whenever the remote connection ends, and the \
        socket emits close. The gateway accepts each incoming request, writes audit entries, \
        retries failed handshakes three times, measures latency percentiles, rotates certificates \
        weekly, balances traffic across regions, and pages the operator on call during deployments \
        on Kubernetes clusters.";
    let report = format!("{headline}\n\n{body}");
    assert!(ucpkit_analyzer::distinct_terms(&report).len() >= 32, "a long report");
    let found = bm25(&doc, &index, &report);
    assert!(found[0].contains("2147483647"), "the headline's block first: {found:?}");
    // The same words on one line are one query: the body's words win.
    let one_line = bm25(&doc, &index, &report.replace('\n', " "));
    assert!(one_line[0].contains("socket"), "{one_line:?}");
    let scores = index.search_mode(&report, &SearchOptions::default(), Mode::Bm25).unwrap();
    assert!(scores.iter().all(|hit| (0.0..=1.0).contains(&hit.score)));
    assert!(scores.windows(2).all(|w| w[0].score >= w[1].score));
}
