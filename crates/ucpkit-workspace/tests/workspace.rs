//! The workspace end to end over a real store on disk: indexing writes only
//! what changed, scripts follow the one durability rule, named sessions
//! come back as they were saved, and searches and contexts carry what
//! every front end shows.

use std::path::{Path, PathBuf};

use ucpkit_engine::Kept;
use ucpkit_workspace::{
    ContextOptions, IndexOptions, Library, LibraryConfig, NewSession, SearchRequest, WorkspaceError,
};

const ROOT: &str = "blk_000000000000000000000000";

fn excerpt() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/node-excerpt")
}

/// The configuration of a store in `dir` that may index any path.
fn unrestricted(dir: &Path) -> LibraryConfig {
    LibraryConfig { allowed_roots: None, ..LibraryConfig::new(dir.join(".ucp")) }
}

/// A library over a fresh store holding the Node.js excerpt as `node`.
fn library(dir: &Path) -> Library {
    let library = Library::open(unrestricted(dir)).unwrap();
    let indexed = library.index(&[excerpt()], Some("node"), &IndexOptions::default(), &()).unwrap();
    assert!(indexed.changed, "a new document is written");
    library
}

/// Another library over the store in `dir`, as another process opens it.
fn reopen(dir: &Path) -> Library {
    Library::open_existing(unrestricted(dir)).unwrap()
}

/// The stored document as another process would read it.
fn stored_json(dir: &Path) -> String {
    reopen(dir).read_document(Some("node")).unwrap().to_json(false)
}

#[test]
fn indexing_again_writes_nothing_when_nothing_changed() {
    let dir = tempfile::tempdir().unwrap();
    let library = library(dir.path());
    let again = library.index(&[excerpt()], Some("node"), &IndexOptions::default(), &()).unwrap();
    assert!(!again.changed);
    assert!(again.report.files >= 5, "the report still says what was read: {} files", again.report.files);
    let names: Vec<String> = library.documents().unwrap().into_iter().map(|d| d.name).collect();
    assert_eq!(names, ["node"]);
}

#[test]
fn a_failed_script_keeps_no_edit_and_the_session_keeps_its_moves() {
    let dir = tempfile::tempdir().unwrap();
    let library = library(dir.path());
    let before = stored_json(dir.path());
    let workspace = library.workspace("node").unwrap();
    let session = library.create_session(&workspace, &NewSession::default()).unwrap();

    let failing = format!("GOTO {ROOT}\nAPPEND {ROOT} text :: \"lost\"\nDELETE blk_ffffffffffffffffffffffff\n");
    let run = library.run_script(&workspace, session, &failing).unwrap();
    assert!(!run.ok() && !run.written);
    assert_eq!(run.kept(), Kept::Nothing);
    let failure = run.failure().unwrap();
    assert!(failure.starts_with("line 3, column 1: DELETE") && failure.contains("nothing saved"), "{failure}");
    assert_eq!(run.report.steps.len(), 3);
    assert_eq!(stored_json(dir.path()), before, "the store is unchanged");
    let lost = workspace.traversal().engine().document().blocks().any(|b| b.plain_text() == "lost");
    assert!(!lost, "and so is the loaded document");
    let at = workspace.traversal().with_session(session, |s| s.cursor().position()).unwrap();
    assert_eq!(at.to_string(), ROOT, "the GOTO before the failure stands");

    let committed = format!(
        "BEGIN TRANSACTION\nAPPEND {ROOT} text WITH label=\"kept\" :: \"kept\"\nCOMMIT\nAPPEND {ROOT} text :: \"lost\"\nGOTO blk_ffffffffffffffffffffffff\n"
    );
    let run = library.run_script(&workspace, session, &committed).unwrap();
    assert_eq!((run.kept(), run.written), (Kept::LastCommit, true));
    let stored = stored_json(dir.path());
    assert!(stored.contains("\"kept\"") && !stored.contains("\"lost\""), "only the committed edit is stored");

    let parse = library.run_script(&workspace, session, "GOTO\n");
    assert!(matches!(parse, Err(WorkspaceError::Agent(ucpkit_sessions::AgentError::Parse { .. }))));
}

#[test]
fn named_sessions_come_back_as_saved_and_are_held_by_one_caller() {
    let dir = tempfile::tempdir().unwrap();
    let library = library(dir.path());
    let workspace = library.workspace("node").unwrap();
    let options = NewSession { budget: Some(300), ..NewSession::default() };
    let session = library.open_named(&workspace, "work", &options).unwrap();
    assert!(matches!(library.open_named(&workspace, "work", &options), Err(WorkspaceError::SessionInUse(_))));
    let run = library.run_script(&workspace, session, "FIND ROLE=heading1\nCTX ADD RESULTS\n").unwrap();
    assert!(run.ok(), "{}", run.transcript());
    assert_eq!((run.metrics.commands, run.metrics.searches), (2, 1), "the session's counters come with the run");
    assert_eq!(run.to_json()["metrics"]["commands"], 2);
    library.close_session(&workspace, session).unwrap();

    // A second library, as another process would open it.
    let other = Library::open_existing(LibraryConfig::new(dir.path().join(".ucp"))).unwrap();
    let workspace = other.workspace("node").unwrap();
    let again = other.open_named(&workspace, "work", &NewSession::default()).unwrap();
    let (blocks, budget) =
        workspace.traversal().with_session(again, |s| (s.window().len(), s.limits().max_context_tokens)).unwrap();
    assert!(blocks > 0, "the window came back");
    assert_eq!(budget, 300);
}

#[test]
fn search_hits_carry_their_place_and_contexts_stay_in_budget() {
    let dir = tempfile::tempdir().unwrap();
    let library = library(dir.path());
    let workspace = library.workspace("node").unwrap();
    let results = workspace.search(&SearchRequest::new("corepack")).unwrap();
    assert_eq!(results.mode, "bm25");
    let hit = results.results.first().expect("a hit");
    assert!(hit.file.as_deref().is_some_and(|f| f.ends_with(".md")), "{hit:?}");
    assert!(hit.lines.is_some() && !hit.heading_path.is_empty() && hit.tokens > 0, "{hit:?}");
    assert!(results.text().contains(&hit.id));
    assert!(matches!(workspace.search(&SearchRequest::new("  ")), Err(WorkspaceError::Invalid(_))));

    let options = ContextOptions { budget: 300, ..ContextOptions::new("How do I enable corepack?") };
    let built = library.context(&workspace, &options).unwrap();
    assert!(!built.blocks.is_empty() && built.tokens <= 300, "{} tokens", built.tokens);
    let empty = ContextOptions::new(" ");
    assert!(matches!(library.context(&workspace, &empty), Err(WorkspaceError::Invalid(_))));
}

#[test]
fn a_restricted_library_indexes_only_under_its_roots() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = LibraryConfig::new(dir.path().join(".ucp"));
    config.allowed_roots = Some(vec![dir.path().to_path_buf()]);
    let library = Library::open(config).unwrap();
    let outside = library.index(&[excerpt()], None, &IndexOptions::default(), &());
    assert!(matches!(outside, Err(WorkspaceError::NotAllowed(_))));
    assert!(library.documents().unwrap().is_empty(), "nothing was written");
}

/// Two writers on one store (two processes, or a server and a command
/// line): the one whose copy is stale is refused, writing nothing, and the
/// other's edit stands; opening the document again gives the current one.
#[test]
fn a_stale_writer_is_refused_and_no_edit_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    library(dir.path());
    let open = || reopen(dir.path());
    let (first, second) = (open(), open());
    let (one, two) = (first.workspace("node").unwrap(), second.workspace("node").unwrap());
    let s1 = first.create_session(&one, &NewSession::default()).unwrap();
    let s2 = second.create_session(&two, &NewSession::default()).unwrap();

    let run = first.run_script(&one, s1, &format!("APPEND {ROOT} text :: \"from the first\"")).unwrap();
    assert!(run.ok() && run.written);
    let stale = second.run_script(&two, s2, &format!("APPEND {ROOT} text :: \"from the second\""));
    let error = stale.unwrap_err().to_string();
    assert!(
        error.contains("changed in the store by another writer") && error.contains("nothing was written"),
        "{error}"
    );
    let stored = stored_json(dir.path());
    assert!(stored.contains("from the first") && !stored.contains("from the second"), "the first edit stands");

    // Opened again, the second writer sees the first's edit and can write.
    assert!(!second.is_current(&two), "the stale copy was dropped");
    let fresh = second.workspace("node").unwrap();
    assert!(second.is_current(&fresh));
    assert!(fresh.traversal().engine().document().blocks().any(|b| b.plain_text() == "from the first"));
    let s3 = second.create_session(&fresh, &NewSession::default()).unwrap();
    assert!(second.run_script(&fresh, s3, &format!("APPEND {ROOT} text :: \"again\"")).unwrap().written);
    let stored = stored_json(dir.path());
    assert!(stored.contains("from the first") && stored.contains("again"));
}

/// A long-lived holder learns that another process wrote the document
/// before it next uses its copy.
#[test]
fn a_holder_notices_another_writer_before_its_next_call() {
    let dir = tempfile::tempdir().unwrap();
    library(dir.path());
    let open = || reopen(dir.path());
    let (holder, writer) = (open(), open());
    let held = holder.workspace("node").unwrap();
    assert!(holder.is_current(&held));
    let ws = writer.workspace("node").unwrap();
    let session = writer.create_session(&ws, &NewSession::default()).unwrap();
    writer.run_script(&ws, session, &format!("APPEND {ROOT} text :: \"news\"")).unwrap();
    assert!(!holder.is_current(&held), "the write is noticed");
    let fresh = holder.workspace("node").unwrap();
    assert!(fresh.traversal().engine().document().blocks().any(|b| b.plain_text() == "news"));
}

/// A named session held by two processes: the second to save, whose copy
/// predates the first's save, is refused and the first's record stands.
#[test]
fn a_named_session_saved_by_another_holder_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    library(dir.path());
    let (first, second) = (reopen(dir.path()), reopen(dir.path()));
    let (one, two) = (first.workspace("node").unwrap(), second.workspace("node").unwrap());
    let s1 = first.open_named(&one, "shared", &NewSession::default()).unwrap();
    let s2 = second.open_named(&two, "shared", &NewSession::default()).unwrap();
    assert!(first.run_script(&one, s1, "FIND ROLE=heading1\nCTX ADD RESULTS\n").unwrap().ok());
    let refused = second.run_script(&two, s2, "FIND ROLE=heading2\n").unwrap_err().to_string();
    assert!(refused.contains("saved by another writer") && refused.contains("open the session again"), "{refused}");

    // Opened again, it is the first holder's session, and saves.
    second.close_session(&two, s2).unwrap_err();
    let again = second.open_named(&two, "shared", &NewSession::default()).unwrap();
    let window = two.traversal().with_session(again, |s| s.window().len()).unwrap();
    assert!(window > 0, "the first holder's window came back");
    assert!(second.run_script(&two, again, "FIND ROLE=heading2\n").unwrap().ok());
    // The first holder's copy is now the stale one.
    assert!(first.run_script(&one, s1, "FIND ROLE=heading2\n").is_err());
}

/// An edit made through the library writes its own rows only; the store
/// and the search index agree with the copy in memory afterwards.
#[test]
fn an_edit_writes_what_it_touched_and_search_follows() {
    let dir = tempfile::tempdir().unwrap();
    let library = library(dir.path());
    let workspace = library.workspace("node").unwrap();
    let session = library.create_session(&workspace, &NewSession::default()).unwrap();
    let target = workspace.traversal().engine().document().ordered_ids()[5];
    let script = format!("EDIT {target} SET text = \"quetzalcoatlus soared\"\nAPPEND {target} text :: \"ornithopter\"");
    assert!(library.run_script(&workspace, session, &script).unwrap().written);
    assert_eq!(stored_json(dir.path()), workspace.traversal().engine().document().to_json(false));
    for word in ["quetzalcoatlus", "ornithopter"] {
        let hits = workspace.search(&SearchRequest::new(word)).unwrap();
        assert!(!hits.results.is_empty(), "{word} is found after the edit");
        let fresh = reopen(dir.path());
        let hits = fresh.workspace("node").unwrap().search(&SearchRequest::new(word)).unwrap();
        assert!(!hits.results.is_empty(), "{word} is found by another process");
    }
}

#[test]
fn writes_leave_the_ranking_layout_to_be_patched_and_rank_as_a_fresh_load() {
    use ucpkit_core::Role;
    use ucpkit_orchestrator::rank::{Layout, PendingLayout};

    let dir = tempfile::tempdir().unwrap();
    let library = library(dir.path());
    let workspace = library.workspace("node").unwrap();
    let host = workspace.traversal();
    let question = "How do I parse a query string into an object?";
    let (paragraphs, headings) = {
        let engine = host.engine();
        let doc = engine.document();
        let ids = doc.ordered_ids();
        let of = |heading: bool| -> Vec<_> {
            ids.iter()
                .copied()
                .filter(|&id| {
                    let block = doc.get(id).unwrap();
                    match heading {
                        true => block.heading_level().is_some() && !doc.children(id).is_empty(),
                        false => block.role() == Some(&Role::Paragraph),
                    }
                })
                .collect()
        };
        (of(false), of(true))
    };
    // The pending layout patched, byte for byte the one laid out afresh,
    // and taken by the next ranking, which is a fresh process's.
    let check = |what: &str| {
        let engine = host.engine();
        let doc = engine.document();
        let pending = host.derived_kept::<PendingLayout>(doc).unwrap_or_else(|| panic!("{what}: left pending"));
        let lengths = host.search_provider().unwrap().block_lengths();
        let patched = pending.patched(doc, lengths.as_deref()).unwrap_or_else(|| panic!("{what}: patches"));
        assert_eq!(patched.encode(), Layout::build(doc, lengths.as_deref()).encode(), "{what}");
        drop(engine);
        let ranked = workspace.rank(question).unwrap();
        assert!(host.derived_kept::<PendingLayout>(host.engine().document()).is_none(), "{what}: taken");
        let fresh = reopen(dir.path());
        assert_eq!(ranked, fresh.workspace("node").unwrap().rank(question).unwrap(), "{what}");
    };

    workspace.rank(question).unwrap().expect("the question's terms are there");
    let session = library.create_session(&workspace, &NewSession::default()).unwrap();
    // Two writes with no ranking between them: both are pending.
    let (edited, appended_to) = (paragraphs[3], headings[2]);
    let script = format!("EDIT {edited} SET text = \"parse a query string into an object\"");
    assert!(library.run_script(&workspace, session, &script).unwrap().written);
    let script = format!("APPEND {appended_to} text :: \"a query string parsed\"");
    assert!(library.run_script(&workspace, session, &script).unwrap().written);
    check("two writes");
    // A section and all below it deleted, after a ranking.
    let script = format!("DELETE {} CASCADE", headings[4]);
    assert!(library.run_script(&workspace, session, &script).unwrap().written);
    check("a section deleted");
}

#[test]
fn indexing_a_changed_folder_again_rewrites_the_changed_file_and_search_follows() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    for entry in std::fs::read_dir(excerpt()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), corpus.join(entry.file_name())).unwrap();
    }
    let mut config = LibraryConfig::new(dir.path().join(".ucp"));
    config.allowed_roots = None;
    let library = Library::open(config).unwrap();
    let index =
        |library: &Library| library.index(std::slice::from_ref(&corpus), Some("c"), &IndexOptions::default(), &());
    assert!(index(&library).unwrap().changed);
    let held = library.workspace("c").unwrap();

    let file = std::fs::read_dir(&corpus).unwrap().next().unwrap().unwrap().path();
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}\n\nA pterodactyl paragraph.\n")).unwrap();
    let again = index(&library).unwrap();
    assert!(again.changed);
    let document = again.workspace.traversal().engine().document().clone();
    let full = ucpkit_ingest::ingest(std::slice::from_ref(&corpus), "c", &Default::default(), &()).unwrap();
    assert!(document.same_content(&full.document), "what a full ingest gives");
    assert_eq!(again.report.blocks, full.report.blocks);
    assert_eq!(reopen(dir.path()).read_document(Some("c")).unwrap().to_json(false), document.to_json(false));
    let hits = again.workspace.search(&SearchRequest::new("pterodactyl")).unwrap();
    assert_eq!(hits.results.len(), 1, "the search index follows the change");
    assert!(!library.is_current(&held), "a holder of the old copy notices");

    let unchanged = index(&reopen(dir.path())).unwrap();
    assert!(!unchanged.changed);
    assert_eq!(unchanged.report.blocks, full.report.blocks);

    // An edit since: indexing again would lose it, so it is refused unless
    // asked for, and then a snapshot keeps the edited version.
    let session = library.create_session(&again.workspace, &NewSession::default()).unwrap();
    assert!(library.run_script(&again.workspace, session, &format!("APPEND {ROOT} text :: \"edit\"")).unwrap().written);
    let refused = index(&library).err().expect("refused");
    assert!(matches!(refused, WorkspaceError::Edited { .. }), "{refused}");
    assert!(refused.to_string().contains("--force"), "{refused}");
    let replace = IndexOptions { replace_edits: true, ..IndexOptions::default() };
    let rebuilt = library.index(std::slice::from_ref(&corpus), Some("c"), &replace, &()).unwrap();
    assert!(rebuilt.changed, "the edit is replaced by what the files hold");
    let engine = rebuilt.workspace.traversal().engine();
    assert!(engine.document().same_content(&full.document));
    let kept: Vec<&str> = engine.snapshots().map(|s| s.name.as_str()).collect();
    assert!(kept.len() == 1 && kept[0].starts_with("before-index-"), "{kept:?}");
    drop(engine);
    assert!(!index(&library).unwrap().changed, "indexed again: nothing to refuse");
}

#[test]
fn one_shot_searches_and_views_read_the_store_alone_and_answer_as_the_loaded_document() {
    let dir = tempfile::tempdir().unwrap();
    let library = library(dir.path());
    let loaded = library.workspace("node").unwrap();
    let one_shot = reopen(dir.path());
    for query in ["readFile callback", "event loop timers", "stream backpressure"] {
        let request = SearchRequest::new(query);
        let stored = one_shot.search_stored(Some("node"), &request).unwrap().expect("the index is at the revision");
        let full = loaded.search(&request).unwrap();
        assert!(!full.results.is_empty(), "{query}");
        assert_eq!(serde_json::to_value(&stored).unwrap(), serde_json::to_value(&full).unwrap(), "{query}");
    }

    let document = loaded.traversal().engine().document().clone();
    let id = document.edges().iter().next().expect("the excerpt has links").source;
    let view = one_shot.view(Some("node"), &id.to_string()).unwrap();
    assert_eq!(Some(&view.block), document.get(id));
    assert_eq!((view.parent, view.children), (document.parent(id), document.children(id).len()));
    let edges = (document.edges().outgoing(id).len(), document.edges().incoming(id).len());
    assert_eq!((view.edges_out, view.edges_in), edges);
    assert!(one_shot.view(Some("node"), "@no-such-label").unwrap_err().to_string().contains("no block is labelled"));
    assert!(one_shot.view(Some("node"), "blk_ffffffffffffffffffffffff").unwrap_err().to_string().contains("not found"));

    // An index behind the store is not searched alone.
    std::fs::remove_dir_all(dir.path().join(".ucp/search")).unwrap();
    assert!(reopen(dir.path()).search_stored(Some("node"), &SearchRequest::new("stream")).unwrap().is_none());
}

#[test]
fn code_hits_rank_where_they_stand_the_same_from_the_store_alone_and_files_by_their_own_matches() {
    let dir = tempfile::tempdir().unwrap();
    let library = Library::open(unrestricted(dir.path())).unwrap();
    let shop = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/code/repos/shop-1.0");
    let loaded = library.index(&[shop], Some("shop"), &IndexOptions::default(), &()).unwrap().workspace;
    let one_shot = reopen(dir.path());
    for query in ["cart total with a coupon", "item subtotal price quantity", "tax on a receipt"] {
        let request = SearchRequest { limit: 5, ..SearchRequest::new(query) };
        let full = loaded.search(&request).unwrap();
        let stored = one_shot.search_stored(Some("shop"), &request).unwrap().expect("the index is at the revision");
        assert_eq!(serde_json::to_value(&stored).unwrap(), serde_json::to_value(&full).unwrap(), "{query}");
        assert!(!full.results.is_empty() && full.results.len() <= 5, "{query}");
        assert!(full.results.windows(2).all(|w| w[0].score >= w[1].score), "ranked by score: {query}");
        for hit in &full.results {
            assert!(hit.match_score > 0.0 && (hit.match_score..=1.0).contains(&hit.score), "{query}: {hit:?}");
        }
        // The lowest score asked for is of a hit's own match.
        let floor = full.results[0].match_score / 2.0;
        let high = loaded.search(&SearchRequest { min_similarity: floor, ..request.clone() }).unwrap();
        assert!(!high.results.is_empty() && high.results.iter().all(|h| h.match_score >= floor), "{query}");
        // Files rank by their hits' own matches: the best plus a tenth of
        // the next ten, the best being the best match.
        let wide = loaded.search(&SearchRequest { limit: 50, ..request.clone() }).unwrap();
        let files = wide.files();
        assert!(files.windows(2).all(|w| w[0].score >= w[1].score), "{query}");
        for file in &files {
            let mut own: Vec<f64> =
                wide.results.iter().filter(|h| h.file.as_ref() == Some(&file.file)).map(|h| h.match_score).collect();
            own.sort_by(|a, b| b.total_cmp(a));
            let evidence = own[0] + 0.1 * own.iter().skip(1).take(10).sum::<f64>();
            assert!((file.score - evidence).abs() < 1e-9, "{query}: {}", file.file);
            assert_eq!((file.best.match_score, file.hits), (own[0], own.len()), "{query}: {}", file.file);
        }
    }
    // Hits with other matches in their file and class gain from them.
    let hits = loaded.search(&SearchRequest { limit: 20, ..SearchRequest::new("cart item quantity") }).unwrap();
    assert!(hits.results.iter().any(|h| h.score > h.match_score), "{:?}", hits.results);
    // UCL SEARCH in a session ranks the same way, though here that is not
    // the order of the hits' own matches.
    let five = loaded.search(&SearchRequest { limit: 5, ..SearchRequest::new("receipt total tax") }).unwrap();
    let mut own = five.results.clone();
    own.sort_by(|a, b| b.match_score.total_cmp(&a.match_score));
    assert_ne!(own.iter().map(|h| &h.id).collect::<Vec<_>>(), five.results.iter().map(|h| &h.id).collect::<Vec<_>>());
    let session = library.create_session(&loaded, &NewSession::default()).unwrap();
    let run = library.run_script(&loaded, session, "SEARCH \"receipt total tax\" LIMIT=5").unwrap();
    let listed = run.report.steps[0].result.as_ref().unwrap().reply.results().expect("a listing");
    let searched: Vec<String> = five.results.iter().map(|h| h.id.clone()).collect();
    assert_eq!(listed.iter().map(|id| id.to_string()).collect::<Vec<_>>(), searched);
}

#[test]
fn prose_beside_code_keeps_its_own_score_and_a_lone_code_match_keeps_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("notes.md"), "# Notes\n\nThe ledger balance is settled nightly.\n").unwrap();
    std::fs::write(corpus.join("ledger.py"), "def settle_balance(ledger):\n    return sum(ledger)\n").unwrap();
    let library = Library::open(unrestricted(dir.path())).unwrap();
    let workspace = library.index(&[corpus], Some("mixed"), &IndexOptions::default(), &()).unwrap().workspace;
    let hits = workspace.search(&SearchRequest::new("ledger balance settled")).unwrap();
    let files: Vec<&str> = hits.results.iter().filter_map(|h| h.file.as_deref()).collect();
    assert!(files.contains(&"notes.md") && files.contains(&"ledger.py"), "{files:?}");
    for hit in &hits.results {
        assert_eq!(hit.score, hit.match_score, "{hit:?}");
    }
    assert!(hits.results.windows(2).all(|w| w[0].score >= w[1].score));
}

#[test]
fn a_session_handle_follows_the_store() {
    use ucpkit_workspace::{Followed, SessionHandle};
    let dir = tempfile::tempdir().unwrap();
    let library = library(dir.path());
    let workspace = library.workspace("node").unwrap();
    let options = NewSession::default();
    let mut session = SessionHandle::open(&library, workspace, Some("reader"), &options).unwrap();
    library.run_script(session.workspace(), session.id(), &format!("GOTO {ROOT}\nCTX ADD {ROOT}")).unwrap();
    assert_eq!(session.current(&library).unwrap(), Followed::Same);
    library.save_session(session.workspace(), session.id()).unwrap();
    // Another process writes the document: the session goes on with the
    // new version, taken up as it was saved.
    let other = reopen(dir.path());
    let theirs = other.workspace("node").unwrap();
    let edit = format!("APPEND {ROOT} text :: \"Written elsewhere.\"");
    let other_session = other.create_session(&theirs, &NewSession::default()).unwrap();
    assert!(other.run_script(&theirs, other_session, &edit).unwrap().ok());
    assert_eq!(session.current(&library).unwrap(), Followed::Changed);
    let stats = library.run_script(session.workspace(), session.id(), "CTX STATS").unwrap().transcript();
    assert!(stats.contains("1 blocks") || stats.contains("blocks: 1"), "the saved window came back: {stats}");
    let found = library.run_script(session.workspace(), session.id(), "FIND ROLE=paragraph").unwrap().transcript();
    assert!(found.contains("Written elsewhere."), "{found}");
    // Closed to make room: opened again.
    session.workspace().traversal().close_session(session.id()).unwrap();
    assert_eq!(session.current(&library).unwrap(), Followed::Reopened);
    session.close(&library).unwrap();
}
