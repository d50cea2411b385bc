//! One context over documents, code and memories: one ranking, one budget,
//! each block naming its document; a conversation imported turn by turn
//! shows each turn under its session (and so its date), verbatim.

use std::path::{Path, PathBuf};

use ucpkit_memory::{conversation_turns, AgentState, MemoryFilter};
use ucpkit_workspace::{ContextOptions, IndexOptions, Library, LibraryConfig, SearchRequest, Sources};

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data").join(path)
}

fn open(dir: &Path) -> Library {
    let mut config = LibraryConfig::new(dir.join(".ucp"));
    config.allowed_roots = None;
    Library::open(config).unwrap()
}

const CHAT: &str = "# Ana and Bo\n\n## Session 1 (9 May, 2023)\n\nAna: I finally adopted a greyhound called Pixel!\n\n\
    Bo: Congrats! How is Pixel settling in?\n\n## Session 2 (2 June, 2023)\n\nAna: Pixel and I ran our first \
    5k race together on Saturday.\n\nBo: That is amazing, well done to you both.\n";

const NOTES: &str = "# Garden notes\n\nTomatoes need staking once they reach knee height.\n\n\
    Water the beans early in the morning.\n";

/// A store with the Node.js excerpt, a small notes document and a chat
/// imported as memories.
fn store(dir: &Path) {
    let library = open(dir);
    library.index(&[data("node-excerpt")], Some("node"), &IndexOptions::default(), &()).unwrap();
    let notes = dir.join("notes.md");
    std::fs::write(&notes, NOTES).unwrap();
    library.index(&[notes], Some("notes"), &IndexOptions::default(), &()).unwrap();
    let (stored, skipped) = AgentState::of(&library).memory_import(None, &conversation_turns(CHAT)).unwrap();
    assert_eq!((stored, skipped), (4, 0));
}

fn everything() -> Sources {
    Sources { all: true, memory: Some(None), ..Sources::default() }
}

#[test]
fn one_window_ranks_documents_and_memories_together() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path());
    let library = open(dir.path());
    assert_eq!(library.source_names(&everything()).unwrap(), ["node", "notes", "memory"]);
    let options = ContextOptions { budget: 300, ..ContextOptions::new("When did Ana run a race with Pixel?") };
    let built = library.context_across(&everything(), &options).unwrap();
    assert!(built.tokens <= 300 && built.tokens == library.tokenizer().count(&built.text), "{}", built.tokens);
    let best = built.blocks.iter().max_by(|a, b| a.relevance.total_cmp(&b.relevance)).unwrap();
    assert_eq!(best.document.as_deref(), Some("memory"), "the turn that answers ranks first: {:?}", built.blocks);
    assert_eq!(best.occasion.as_deref(), Some("Session 2 (2 June, 2023)"));
    assert!(built.text.starts_with("§ memory > "), "the best source comes first: {}", built.text);
    assert!(
        built.text.contains(
            "§ memory > Session 2 (2 June, 2023)\n\nAna: Pixel and I ran our first 5k race together on Saturday.\n"
        ),
        "the turn, verbatim, under its session: {}",
        built.text
    );
    assert!(built.blocks.iter().all(|b| b.document.is_some()));
    for name in ["node", "notes"] {
        assert!(!library.holds(name), "{name} was answered from parts of the store");
    }
}

#[test]
fn a_small_source_that_answers_is_not_drowned_by_a_large_one() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path());
    let library = open(dir.path());
    let options = ContextOptions { budget: 120, ..ContextOptions::new("When do tomatoes need staking?") };
    let built = library.context_across(&everything(), &options).unwrap();
    let best = built.blocks.iter().max_by(|a, b| a.relevance.total_cmp(&b.relevance)).unwrap();
    assert_eq!(best.document.as_deref(), Some("notes"), "{}", built.text);
    assert!(built.text.starts_with("§ notes > Garden notes\n\nTomatoes need staking once they reach knee height.\n"));
    // And the large source still answers its own questions.
    let options = ContextOptions { budget: 400, ..ContextOptions::new("How does punycode encode a domain name?") };
    let built = library.context_across(&everything(), &options).unwrap();
    assert!(built.blocks.iter().all(|b| b.document.as_deref() == Some("node")), "{:?}", built.blocks);
}

/// A library holding `prose` (markdown) as document `name` and
/// `program` (Python) as document `client`.
fn prose_and_program(dir: &Path, name: &str, prose: &str, program: &str) -> Library {
    let text = dir.join("uploads.md");
    std::fs::write(&text, prose).unwrap();
    let code = dir.join("client");
    std::fs::create_dir(&code).unwrap();
    std::fs::write(code.join("client.py"), program).unwrap();
    let library = open(dir);
    library.index(&[text], Some(name), &IndexOptions::default(), &()).unwrap();
    library.index(&[code], Some("client"), &IndexOptions::default(), &()).unwrap();
    library
}

#[test]
fn code_that_uses_the_words_of_a_question_counts_half_next_to_prose_that_answers_it() {
    let dir = tempfile::tempdir().unwrap();
    let library = prose_and_program(
        dir.path(),
        "notes",
        "# Uploads\n\nA failed upload is retried this often: at most five times, with exponential backoff.\n\n\
         Every request carries the session's token.\n",
        "def upload(payload, retries=5):\n    \"\"\"Send one request: a failed upload is retried this often.\"\"\"\n    \
         for attempt in range(retries):\n        if send(payload):\n            return True\n        \
         sleep(2 ** attempt)\n    return False\n",
    );
    // The function holds every word of the question, the paragraph all but
    // "request": counted in full, the function would come first.
    let options =
        ContextOptions { budget: 200, ..ContextOptions::new("How often is a failed upload request retried?") };
    let built = library.context_across(&everything(), &options).unwrap();
    assert!(
        built.text.starts_with("§ notes > Uploads\n\nA failed upload is retried this often"),
        "the prose that answers comes first: {}",
        built.text
    );
    let function = built.blocks.iter().find(|b| b.symbol.as_deref() == Some("upload"));
    let function = function.unwrap_or_else(|| panic!("the code still comes when it fits: {}", built.text));
    assert!(function.relevance < 1.0 && function.relevance > 0.5, "{:?}", built.blocks);
}

#[test]
fn a_documents_code_sample_counts_in_full_when_the_question_quotes_code() {
    let dir = tempfile::tempdir().unwrap();
    let library = prose_and_program(
        dir.path(),
        "guide",
        "# Uploads\n\nThe upload helper sends one payload and retries a failed upload.\n\n\
         ```python\nupload_file(payload, retries=5)\n```\n",
        "def upload_file(payload, retries=5):\n    for attempt in range(retries):\n        \
         if send(payload):\n            return True\n    return False\n",
    );
    // Within the guide the sample and its prose keep their own ranking; next
    // to the program's code the sample counts in full for a question that
    // quotes code, half for one asked in words. The function counts half
    // either way.
    for (question, sample_prior) in [
        ("How is `upload_file(payload)` called with retries?", 1.0),
        ("How is the upload file helper called with retries?", 0.5),
    ] {
        let options = ContextOptions { budget: 400, ..ContextOptions::new(question) };
        let relevance = |built: &ucpkit_workspace::vocabulary::BuiltContext, role: &str| {
            let block = built.blocks.iter().find(|b| b.role.as_deref() == Some(role) && b.file.is_some());
            block.unwrap_or_else(|| panic!("no {role} block: {}", built.text)).relevance
        };
        let alone = library.context_in(Some("guide"), &options).unwrap();
        let merged = library.context_across(&everything(), &options).unwrap();
        let sample_over_prose = |built| relevance(built, "code") / relevance(built, "paragraph");
        let expected = sample_prior * sample_over_prose(&alone);
        assert!((sample_over_prose(&merged) - expected).abs() < 1e-9, "{question}: {:?}", merged.blocks);
        let function = merged.blocks.iter().find(|b| b.symbol.as_deref() == Some("upload_file"));
        assert!(function.is_some(), "the function fits too: {}", merged.text);
    }
}

#[test]
fn a_context_over_many_matching_memories_fills_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let library = open(dir.path());
    // Sixty turns over three sessions, each too long to come in as a short
    // neighbour of another, each naming the lake.
    let mut chat = String::from("# Ana and Bo\n");
    for n in 0..60 {
        if n % 20 == 0 {
            chat.push_str(&format!("\n## Session {} (May {}, 2023)\n", n / 20 + 1, n / 20 + 1));
        }
        chat.push_str(&format!(
            "\nAna: On walk {n} around the lake we counted herons, coots and grebes, and noted the water level \
             at the old boathouse, the reeds by the north shore and the path by the mill.\n"
        ));
    }
    assert_eq!(AgentState::of(&library).memory_import(None, &conversation_turns(&chat)).unwrap(), (60, 0));
    let options = ContextOptions { budget: 8000, ..ContextOptions::new("What did Ana see at the lake?") };
    let memory = Sources { memory: Some(None), ..Sources::default() };
    let built = library.context_across(&memory, &options).unwrap();
    assert_eq!(built.blocks.len(), 60, "every matching turn fits: {} tokens", built.tokens);
}

#[test]
fn sources_are_named_checked_and_default_to_the_one_document() {
    let dir = tempfile::tempdir().unwrap();
    store(dir.path());
    let library = open(dir.path());
    let named = Sources { documents: vec!["notes".into(), "notes".into()], ..Sources::default() };
    assert_eq!(library.source_names(&named).unwrap(), ["notes"]);
    let missing = Sources::document("nowhere");
    assert!(library.source_names(&missing).is_err());
    let other_namespace = Sources { memory: Some(Some("agent-1".into())), ..Sources::default() };
    assert!(library.source_names(&other_namespace).is_err(), "no memories there, and nothing else named");
    let bad = Sources { memory: Some(Some("a/b".into())), ..Sources::default() };
    assert!(library.source_names(&bad).is_err());
    let short_ids = ucpkit_workspace::vocabulary::RenderFormat::ShortIds;
    let options = ContextOptions { budget: 200, format: short_ids, ..ContextOptions::new("tomatoes staking") };
    assert!(library.context_across(&everything(), &options).is_err(), "short ids would repeat across documents");
    let options = ContextOptions { budget: 200, ..ContextOptions::new("tomatoes staking") };
    let built = library.context_across(&Sources::document("notes"), &options).unwrap();
    assert!(built.blocks.iter().all(|b| b.document.as_deref() == Some("notes")));
    assert!(built.text.starts_with("§ Garden notes"), "one document reads as before: {}", built.text);
}

#[test]
fn a_conversation_import_keeps_speaker_session_and_repeated_words() {
    let dir = tempfile::tempdir().unwrap();
    let library = open(dir.path());
    let chat = format!("{CHAT}\n## Session 3 (4 July, 2023)\n\nBo: That is amazing, well done to you both.\n");
    let state = AgentState::of(&library);
    assert_eq!(state.memory_import(None, &conversation_turns(&chat)).unwrap(), (5, 0), "said again another day");
    assert_eq!(state.memory_import(None, &conversation_turns(&chat)).unwrap(), (0, 5), "imported once");
    let found = state.memory_search("greyhound adopted", &MemoryFilter::default(), 1).unwrap();
    assert_eq!(found[0].speaker.as_deref(), Some("Ana"));
    assert_eq!(found[0].session.as_deref(), Some("Session 1 (9 May, 2023)"));
    assert_eq!(found[0].kind, "message");
    // A turn is found by its session's date, which its text does not hold.
    let found = state.memory_search("June", &MemoryFilter::default(), 5).unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().all(|m| m.session.as_deref() == Some("Session 2 (2 June, 2023)")), "{found:?}");
    // A plain search says so: the hit's occasion is its place.
    let hits = library.workspace("memory").unwrap().search(&SearchRequest::new("June")).unwrap();
    assert_eq!(hits.results[0].occasion.as_deref(), Some("Session 2 (2 June, 2023)"));
    assert!(hits.text().contains(" Session 2 (2 June, 2023)\n"), "{}", hits.text());
}

#[test]
fn memory_search_ranks_as_a_context_does() {
    let dir = tempfile::tempdir().unwrap();
    let library = open(dir.path());
    let state = AgentState::of(&library);
    let chat = "# Ana and Bo\n\n## Session 1 (9 May, 2023)\n\nBo: Where did you go camping last summer?\n\n\
        Ana: Yosemite, with the kids and the dog.\n\n## Session 2 (2 June, 2023)\n\nBo: The new tent arrived.\n\n\
        Ana: Great, it looks roomy.\n";
    assert_eq!(state.memory_import(None, &conversation_turns(chat)).unwrap(), (4, 0));
    // The reply holds no word of the question: it is found through its
    // sitting, after the turn that does, and the other sitting is not.
    let found = state.memory_search("where did we go camping?", &MemoryFilter::default(), 10).unwrap();
    let said: Vec<&str> = found.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(said, ["Bo: Where did you go camping last summer?", "Ana: Yosemite, with the kids and the dog."]);

    // Notes kept on their own are read alone: a note stored next to the
    // one that matches does not come with it.
    let notes = MemoryFilter { namespace: Some("notes".into()), ..MemoryFilter::default() };
    let kept = ["The deploy script reads the staging token from the vault.", "Lunch is at noon on Fridays."];
    for content in kept {
        let memory = ucpkit_memory::NewMemory {
            content: content.into(),
            namespace: Some("notes".into()),
            ..ucpkit_memory::NewMemory::default()
        };
        state.memory_store(&memory).unwrap();
    }
    let found = state.memory_search("staging token", &notes, 10).unwrap();
    assert_eq!(found.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), [kept[0]]);
}

#[test]
fn a_one_shot_memory_search_reads_the_store_alone_and_finds_what_a_loaded_one_does() {
    use ucpkit_memory::Memory;
    let dir = tempfile::tempdir().unwrap();
    let chat = format!("{CHAT}\n## Session 3 (5 July, 2023)\n\nAna: Pixel hurt a paw, so no races this month.\n");
    assert_eq!(AgentState::of(&open(dir.path())).memory_import(None, &conversation_turns(&chat)).unwrap(), (5, 0));
    // Two blocks below a memory that are not memories themselves, and
    // rank first for "zorbling": the memory that also says it comes in a
    // second batch.
    {
        let library = open(dir.path());
        let workspace = library.workspace("memory").unwrap();
        let session = library.create_session(&workspace, &ucpkit_workspace::NewSession::default()).unwrap();
        let state = AgentState::of(&library);
        let greyhound = &state.memory_search("greyhound", &MemoryFilter::default(), 1).unwrap()[0].id;
        for _ in 0..2 {
            let append = format!("APPEND {greyhound} text :: \"zorbling zorbling zorbling\"");
            assert!(library.run_script(&workspace, session, &append).unwrap().written);
        }
        let toy = ucpkit_memory::NewMemory { content: "Ana: a zorbling toy for Pixel.".into(), ..Default::default() };
        state.memory_store(&toy).unwrap();
    }
    let queries = [("What race did Ana run with Pixel?", 3), ("zorbling", 1), ("greyhound adopted", 2), ("xyzzy", 3)];
    let search = |library: &Library, (query, limit): (&str, usize)| -> Vec<Memory> {
        AgentState::of(library).memory_search(query, &MemoryFilter::default(), limit).unwrap()
    };
    // The memories loaded, as a server holds them; `keep_layout` leaves
    // their layout beside the index for a later process.
    let loaded = |keep_layout: bool| -> Vec<Vec<Memory>> {
        let library = open(dir.path());
        let workspace = library.workspace("memory").unwrap();
        if keep_layout {
            library.keep_layout(&workspace);
        }
        queries.iter().map(|&query| search(&library, query)).collect()
    };
    // A process per query, as `ucp memory search` is: each ranks from the
    // layout and reads only the best memories.
    let one_shot = |expected: &[Vec<Memory>]| {
        for (&query, expected) in queries.iter().zip(expected) {
            let library = open(dir.path());
            let found = search(&library, query);
            assert!(!library.holds("memory"), "{query:?}: the one-shot search loaded the memories");
            assert_eq!(found.len(), expected.len(), "{query:?}");
            for (found, expected) in found.iter().zip(expected) {
                assert!((found.score.unwrap() - expected.score.unwrap()).abs() < 1e-9, "{found:?} {expected:?}");
                let unscored = |m: &Memory| Memory { score: None, ..m.clone() };
                assert_eq!(unscored(found), unscored(expected), "{query:?}");
            }
        }
    };
    let expected = loaded(true);
    assert!(expected[0].iter().any(|m| m.content.contains("first 5k race")), "{:?}", expected[0]);
    assert_eq!(expected[1].iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), ["Ana: a zorbling toy for Pixel."]);
    assert!(expected[3].is_empty(), "no word of it anywhere: {:?}", expected[3]);
    one_shot(&expected);

    // A memory stored and one forgotten since: the first one-shot search
    // catches the layout up from the store's log.
    let writer = open(dir.path());
    let state = AgentState::of(&writer);
    let stored =
        ucpkit_memory::NewMemory { content: "Pixel won a medal at the dog race.".into(), ..Default::default() };
    state.memory_store(&stored).unwrap();
    let paw = expected[0].iter().find(|m| m.content.contains("paw"));
    assert!(state.memory_forget(None, &paw.expect("the paw turn is found").id).unwrap());
    let expected = loaded(false);
    assert!(expected[0].iter().any(|m| m.content == stored.content), "{:?}", expected[0]);
    assert!(expected.iter().flatten().all(|m| !m.content.contains("paw")), "{expected:?}");
    one_shot(&expected);
}
