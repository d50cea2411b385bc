//! Memory that lasts across sessions: the findings, decisions, handoffs and
//! todos an agent stores and later finds again by meaning.
//!
//! Memories are blocks of a document of their own (`memory`, or
//! `memory@<namespace>` for an agent's or a user's own), children of its
//! root in the order stored. So they are written under the store's one
//! durability rule (a crash keeps a memory whole or not at all; a writer
//! that raced another replays its APPEND), found by the same search index
//! as documents (hybrid when a model is configured), and an agent can GOTO,
//! EXPAND or CTX ADD them like any block. The text is kept as given; kind,
//! links and time live in the block's metadata (`custom.kind`,
//! `custom.links`, `created_ms`), tags in its tags.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use ucpkit_core::{Block, BlockId, Document, IdSet};
use ucpkit_ucl::{Append, BlockRef, Command, ContentLiteral, ContentType, Delete, DeleteMode, Value};

use ucpkit_workspace::{RankedStored, SearchRequest, WorkspaceError};

use crate::AgentState;

/// The memory document of the default namespace.
pub const MEMORY_DOCUMENT: &str = ucpkit_store::AGENT_STATE_DOCUMENTS[0];

/// The kind a memory gets when none is given.
pub const DEFAULT_KIND: &str = "note";

/// Most bytes one memory holds.
pub const MAX_MEMORY_BYTES: usize = 64 * 1024;

/// Most bytes of a memory's speaker, session or time.
pub const MAX_LABEL_BYTES: usize = 256;

/// Memories an import writes per script (one transaction each).
pub const IMPORT_BATCH: usize = 5_000;

/// Tries of a store or forget when other writers keep coming in (with a
/// growing pause between them: see [`ucpkit_workspace::replayed`]).
const ATTEMPTS: usize = ucpkit_workspace::STATE_TRIES;

/// A memory to store (as JSON too: `{"content": ..., "kind": ..., "tags":
/// [...], "links": [...]}`, one per line of an import).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NewMemory {
    /// What to remember (kept verbatim).
    pub content: String,
    /// Its kind (`finding`, `decision`, `handoff`, `todo` ...); `note` when `None`.
    pub kind: Option<String>,
    /// Free tags.
    pub tags: Vec<String>,
    /// Blocks (`blk_…`) or files it is about.
    pub links: Vec<String>,
    /// Whose memory: an agent's or a user's; the project's when `None`.
    pub namespace: Option<String>,
    /// Who said it, for a conversation's turn.
    pub speaker: Option<String>,
    /// The session (a conversation's sitting) it belongs to, as written.
    pub session: Option<String>,
    /// When it happened, as written (a date, a time): shown next to it in
    /// a context, so a question about *when* can be answered.
    pub time: Option<String>,
}

/// Which memories a search or a listing keeps.
#[derive(Debug, Clone, Default)]
pub struct MemoryFilter {
    /// Whose memories; the project's when `None`.
    pub namespace: Option<String>,
    /// Only these kinds (all when empty).
    pub kinds: Vec<String>,
    /// Only memories with one of these tags (all when empty).
    pub tags: Vec<String>,
    /// Only memories stored at or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Only memories stored before this time (ms since the epoch).
    pub until_ms: Option<i64>,
}

impl MemoryFilter {
    /// Whether it keeps fewer memories than a namespace holds (a kind, a
    /// tag or a time is asked for).
    fn narrows(&self) -> bool {
        !self.kinds.is_empty() || !self.tags.is_empty() || self.since_ms.is_some() || self.until_ms.is_some()
    }

    fn keeps(&self, memory: &Memory) -> bool {
        (self.kinds.is_empty() || self.kinds.iter().any(|k| k.eq_ignore_ascii_case(&memory.kind)))
            && (self.tags.is_empty() || self.tags.iter().any(|t| memory.tags.contains(t)))
            && self.since_ms.is_none_or(|since| memory.created_ms >= since)
            && self.until_ms.is_none_or(|until| memory.created_ms < until)
    }
}

/// One stored memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Memory {
    /// Its block (`blk_…`), in [`Memory::document`].
    pub id: String,
    /// The document it is a block of.
    pub document: String,
    /// What was stored, verbatim.
    pub content: String,
    /// Its kind.
    pub kind: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// Blocks or files it is about.
    pub links: Vec<String>,
    /// When it was stored (ms since the epoch).
    pub created_ms: i64,
    /// Who said it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speaker: Option<String>,
    /// Its session, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// When it happened, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// Its search score, for a search: relative to the best memory the
    /// ranking found, or, for one a narrowing filter's top-up brought,
    /// the index's own score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

impl Memory {
    fn of(document: &str, block: &Block) -> Memory {
        let custom = &block.metadata.custom;
        let strings = |value: Option<&serde_json::Value>| -> Vec<String> {
            value
                .and_then(|v| v.as_array())
                .map(|items| items.iter().filter_map(|i| i.as_str().map(str::to_owned)).collect())
                .unwrap_or_default()
        };
        let text = |value: Option<&serde_json::Value>| value.and_then(|v| v.as_str()).map(str::to_owned);
        Memory {
            id: block.id.to_string(),
            document: document.to_owned(),
            content: block.plain_text().into_owned(),
            kind: custom.get("kind").and_then(|k| k.as_str()).unwrap_or(DEFAULT_KIND).to_owned(),
            tags: block.metadata.tags.clone(),
            links: strings(custom.get("links")),
            created_ms: block.metadata.timestamps.created_ms,
            speaker: text(custom.get("speaker")),
            session: text(custom.get("session")),
            time: text(custom.get("time")),
            score: None,
        }
    }
}

/// What storing a memory did.
#[derive(Debug, Clone, Serialize)]
pub struct Stored {
    /// The memory stored, or the one already there that says the same.
    pub memory: Memory,
    /// True when a memory saying the same was there already (nothing was
    /// written).
    pub duplicate: bool,
}

/// Memories as text: each one's id, kind and tags on a line, then its
/// content, indented.
pub fn memories_text(memories: &[Memory]) -> String {
    if memories.is_empty() {
        return "no memories\n".to_owned();
    }
    let mut out = String::new();
    for memory in memories {
        let tags = if memory.tags.is_empty() { String::new() } else { format!(" [{}]", memory.tags.join(", ")) };
        out.push_str(&format!("{} {}{}\n", memory.id, memory.kind, tags));
        for line in memory.content.lines() {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}

/// The document holding `namespace`'s memories.
pub fn memory_document(namespace: Option<&str>) -> Result<String, WorkspaceError> {
    namespaced(MEMORY_DOCUMENT, namespace)
}

/// Agent-state document `base` of `namespace`: `base` itself, or
/// `base@namespace`.
pub(crate) fn namespaced(base: &str, namespace: Option<&str>) -> Result<String, WorkspaceError> {
    ucpkit_store::namespaced_document(base, namespace).map_err(|e| WorkspaceError::Invalid(e.to_string()))
}

/// What makes two memories one: kind, speaker, occasion and words.
type Identity = (String, [Option<String>; 3], Vec<String>);

/// The occasion of a memory: who said it, in which session, when.
type Occasion<'a> = [&'a Option<String>; 3];

/// The identity of a memory: the same words said by someone else or on
/// another occasion (a conversation's "Bye!" in two sessions) are two
/// memories.
fn identity(kind: &str, [speaker, session, time]: Occasion<'_>, content: &str) -> Identity {
    let label = |v: &Option<String>| v.as_deref().map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned);
    (kind.to_owned(), [label(speaker), label(session), label(time)], words(content))
}

/// A kind as stored: lower case, one word.
fn checked_kind(kind: Option<&str>) -> Result<String, WorkspaceError> {
    let kind = kind.unwrap_or(DEFAULT_KIND).trim().to_ascii_lowercase();
    let ok = !kind.is_empty() && kind.len() <= 32 && kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err(WorkspaceError::Invalid(format!("kind {kind:?}: one word of at most 32 letters, digits or '_'")));
    }
    Ok(kind)
}

/// What two memories must share to be one memory written twice: their
/// words, lower case, in order (spacing, case and punctuation aside; a
/// text without words is compared as it is, trimmed). Not their word sets:
/// "keep A, not B" and "keep B, not A" are two decisions.
fn words(text: &str) -> Vec<String> {
    let words: Vec<String> =
        text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
    if words.is_empty() {
        vec![text.trim().to_owned()]
    } else {
        words
    }
}

impl AgentState<'_> {
    /// Stores `memory` in its namespace's document (created on first use),
    /// unless a memory of the same kind saying the same is there: then that
    /// one is returned and nothing is written.
    pub fn memory_store(&self, memory: &NewMemory) -> Result<Stored, WorkspaceError> {
        let append = append_command(memory)?;
        let kind = checked_kind(memory.kind.as_deref())?;
        let name = memory_document(memory.namespace.as_deref())?;
        self.library.create_if_absent(&name)?;
        let _checked = self.library.state_writes();
        if let Some(same) = self.same_memory(&name, memory, &kind)? {
            return Ok(Stored { memory: same, duplicate: true });
        }
        let (workspace, created) = self.library.run_commands(&name, &[append], ATTEMPTS)?;
        let engine = workspace.traversal().engine();
        let block = created
            .and_then(|id| engine.document().get(id))
            .ok_or_else(|| WorkspaceError::Damaged("the stored memory cannot be read back".into()))?;
        Ok(Stored { memory: Memory::of(&name, block), duplicate: false })
    }

    /// Stores many memories of `namespace` at once (an import, a
    /// migration): checked like [`AgentState::memory_store`] before anything
    /// is written, written in batches of [`IMPORT_BATCH`] (each batch
    /// whole or not at all); a memory of the same kind with the same
    /// words as one stored, or as one before it, is skipped. Returns how
    /// many were stored and how many skipped.
    pub fn memory_import(
        &self,
        namespace: Option<&str>,
        memories: &[NewMemory],
    ) -> Result<(usize, usize), WorkspaceError> {
        let name = memory_document(namespace)?;
        let mut commands = Vec::with_capacity(memories.len());
        for memory in memories {
            if memory.namespace.as_deref().is_some_and(|n| Some(n) != namespace) {
                return Err(WorkspaceError::Invalid(
                    "every imported memory belongs to the namespace imported into".into(),
                ));
            }
            commands.push(append_command(memory)?);
        }
        self.library.create_if_absent(&name)?;
        let _checked = self.library.state_writes();
        let mut seen: HashSet<Identity> = {
            let workspace = self.library.workspace(&name)?;
            let engine = workspace.traversal().engine();
            let doc = engine.document();
            doc.children(BlockId::ROOT)
                .iter()
                .filter_map(|id| doc.get(*id))
                .map(|block| {
                    let memory = Memory::of(&name, block);
                    identity(&memory.kind, [&memory.speaker, &memory.session, &memory.time], &memory.content)
                })
                .collect()
        };
        let mut fresh = Vec::new();
        for (memory, command) in memories.iter().zip(commands) {
            let kind = checked_kind(memory.kind.as_deref())?;
            if seen.insert(identity(&kind, [&memory.speaker, &memory.session, &memory.time], &memory.content)) {
                fresh.push(command);
            }
        }
        let stored = fresh.len();
        for batch in fresh.chunks(IMPORT_BATCH) {
            self.library.run_commands(&name, batch, ATTEMPTS)?;
        }
        Ok((stored, memories.len() - stored))
    }

    /// The memories best matching `query`, best first, at most `limit`,
    /// kept by `filter`: ranked as a context over them is
    /// ([`ucpkit_workspace::Workspace::rank`], the model's nearest fused in
    /// when one is configured). A filter that narrows the memories is
    /// topped up, after them, from the index's own search, which applies
    /// tags before it limits: a tagged memory is not lost below the
    /// ranking's candidates. An empty query is an error.
    pub fn memory_search(
        &self,
        query: &str,
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<Memory>, WorkspaceError> {
        if query.trim().is_empty() {
            return Err(WorkspaceError::Invalid("the query is empty".into()));
        }
        let name = memory_document(filter.namespace.as_deref())?;
        if !self.library.holds_stored(&name)? {
            return Ok(Vec::new());
        }
        if !filter.narrows() {
            // One-shot: the best memories read from the store alone.
            let keep = |doc: &Document, id: BlockId| doc.get(id).is_some_and(|block| is_memory(doc, block));
            if let Some(RankedStored { document, ranked }) = self.library.ranked_stored(&name, query, limit, keep)? {
                return Ok(ranked
                    .into_iter()
                    .filter_map(|(id, score)| {
                        Some(Memory { score: Some(score), ..Memory::of(&name, document.get(id)?) })
                    })
                    .collect());
            }
        }
        let held = self.library.holds(&name);
        let workspace = self.library.workspace(&name)?;
        let ranked = workspace.rank(query)?;
        if !held {
            // For the next one-shot search.
            self.library.keep_layout(&workspace);
        }
        let searched = if ranked.is_none() || filter.narrows() {
            // Hits the filter drops make room for the next ones.
            let mut request = SearchRequest::new(query);
            request.limit = limit.saturating_mul(4).clamp(limit.min(1_000), 1_000);
            request.tags = filter.tags.clone();
            let hits = workspace.search(&request)?;
            hits.results.iter().filter_map(|hit| Some((hit.id.parse::<BlockId>().ok()?, hit.score))).collect()
        } else {
            Vec::new()
        };
        let engine = workspace.traversal().engine();
        let doc = engine.document();
        let mut seen = IdSet::default();
        Ok(ranked
            .unwrap_or_default()
            .into_iter()
            .chain(searched)
            .filter(|(id, _)| seen.insert(*id))
            .filter_map(|(id, score)| {
                let block = doc.get(id)?;
                let mut memory = is_memory(doc, block).then(|| Memory::of(&name, block))?;
                memory.score = Some(score);
                filter.keeps(&memory).then_some(memory)
            })
            .take(limit)
            .collect())
    }

    /// The latest memories kept by `filter`, newest first, at most `limit`.
    pub fn memory_recent(&self, filter: &MemoryFilter, limit: usize) -> Result<Vec<Memory>, WorkspaceError> {
        let name = memory_document(filter.namespace.as_deref())?;
        if !self.library.holds_stored(&name)? {
            return Ok(Vec::new());
        }
        let workspace = self.library.workspace(&name)?;
        let engine = workspace.traversal().engine();
        let doc = engine.document();
        let mut memories: Vec<(usize, Memory)> = doc
            .children(BlockId::ROOT)
            .iter()
            .enumerate()
            .filter_map(|(at, id)| doc.get(*id).map(|block| (at, Memory::of(&name, block))))
            .filter(|(_, memory)| filter.keeps(memory))
            .collect();
        // Newest first; stored order breaks ties within a millisecond.
        memories.sort_by(|a, b| b.1.created_ms.cmp(&a.1.created_ms).then(b.0.cmp(&a.0)));
        Ok(memories.into_iter().take(limit).map(|(_, memory)| memory).collect())
    }

    /// Deletes memory `id` of `namespace`; false when it holds none of that id.
    pub fn memory_forget(&self, namespace: Option<&str>, id: &str) -> Result<bool, WorkspaceError> {
        let name = memory_document(namespace)?;
        let id: BlockId = id.parse().map_err(|_| WorkspaceError::Invalid(format!("{id:?} is not a block id")))?;
        if !self.library.holds_stored(&name)? {
            return Ok(false);
        }
        {
            let workspace = self.library.workspace(&name)?;
            let engine = workspace.traversal().engine();
            let doc = engine.document();
            if !doc.get(id).is_some_and(|block| is_memory(doc, block)) {
                return Ok(false);
            }
        }
        let delete =
            Command::Delete(Delete { target: Some(BlockRef::Id(id)), mode: DeleteMode::Cascade, condition: None });
        self.library.run_commands(&name, &[delete], ATTEMPTS)?;
        Ok(true)
    }

    /// The memory of `name` of kind `kind` that says what `memory` says, on
    /// the same occasion.
    fn same_memory(&self, name: &str, memory: &NewMemory, kind: &str) -> Result<Option<Memory>, WorkspaceError> {
        let content = memory.content.as_str();
        let workspace = self.library.workspace(name)?;
        let engine = workspace.traversal().engine();
        if engine.document().children(BlockId::ROOT).is_empty() {
            return Ok(None);
        }
        drop(engine);
        let mut request = SearchRequest::new(content);
        request.limit = 5;
        let hits = workspace.search(&request)?;
        let engine = workspace.traversal().engine();
        let doc = engine.document();
        Ok(hits.results.iter().find_map(|hit| {
            let block = doc.get(hit.id.parse::<BlockId>().ok()?)?;
            let found = is_memory(doc, block).then(|| Memory::of(name, block))?;
            (identity(&found.kind, [&found.speaker, &found.session, &found.time], &found.content)
                == identity(kind, [&memory.speaker, &memory.session, &memory.time], content))
            .then_some(found)
        }))
    }
}

/// The APPEND that stores `memory` under its document's root, once the
/// memory is checked.
fn append_command(memory: &NewMemory) -> Result<Command, WorkspaceError> {
    if memory.content.trim().is_empty() {
        return Err(WorkspaceError::Invalid("a memory needs content".into()));
    }
    if memory.content.len() > MAX_MEMORY_BYTES {
        return Err(WorkspaceError::Invalid(format!(
            "a memory holds at most {MAX_MEMORY_BYTES} bytes; this one has {}",
            memory.content.len()
        )));
    }
    let kind = checked_kind(memory.kind.as_deref())?;
    if let Some(tag) = memory.tags.iter().find(|t| t.trim().is_empty() || t.chars().any(char::is_control)) {
        return Err(WorkspaceError::Invalid(format!("tag {tag:?} is empty or holds control characters")));
    }
    let strings = |items: &[String]| Value::Array(items.iter().map(|s| Value::String(s.clone())).collect());
    let mut custom = vec![("kind".into(), Value::String(kind)), ("links".into(), strings(&memory.links))];
    for (key, value) in [("speaker", &memory.speaker), ("session", &memory.session), ("time", &memory.time)] {
        match value.as_deref().map(str::trim) {
            Some(v) if v.chars().any(char::is_control) || v.len() > MAX_LABEL_BYTES => {
                return Err(WorkspaceError::Invalid(format!(
                    "{key} {v:?}: one line of at most {MAX_LABEL_BYTES} bytes"
                )));
            }
            Some(v) if !v.is_empty() => custom.push((key.into(), Value::String(v.to_owned()))),
            _ => {}
        }
    }
    Ok(Command::Append(Append {
        parent: BlockRef::Id(BlockId::ROOT),
        content_type: ContentType::Text,
        at: None,
        properties: vec![
            ("role".into(), Value::String("note".into())),
            ("tags".into(), strings(&memory.tags)),
            ("created_ms".into(), Value::Int(ucpkit_core::now_ms())),
            ("custom".into(), Value::Object(custom)),
        ],
        content: Some(ContentLiteral::Value(Value::String(memory.content.clone()))),
    }))
}

/// Whether `block` is a memory: a child of its document's root.
fn is_memory(doc: &Document, block: &Block) -> bool {
    doc.parent(block.id) == Some(BlockId::ROOT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_workspace::{Library, LibraryConfig};

    fn note(content: &str, kind: &str, tags: &[&str]) -> NewMemory {
        NewMemory {
            content: content.into(),
            kind: Some(kind.into()),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            ..NewMemory::default()
        }
    }

    #[test]
    fn memories_are_stored_found_listed_deduplicated_and_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let library = Library::open(LibraryConfig::new(dir.path())).unwrap();
        let state = AgentState::of(&library);
        let all = MemoryFilter::default();
        assert!(state.memory_recent(&all, 10).unwrap().is_empty(), "no memory document yet");
        assert!(state.memory_search("anything", &all, 5).unwrap().is_empty());
        assert!(state.memory_search("  ", &all, 5).is_err(), "an empty query is an error, filtered or not");

        let retry = state
            .memory_store(&note("The flaky test fails because the retry loop has no backoff.", "finding", &["tests"]))
            .unwrap();
        assert!(!retry.duplicate);
        assert_eq!(retry.memory.kind, "finding");
        assert_eq!(retry.memory.document, MEMORY_DOCUMENT);
        let decision = state
            .memory_store(&NewMemory {
                links: vec!["src/store.rs".into()],
                ..note("We keep SQLite; PostgreSQL only when several hosts write.", "decision", &["store"])
            })
            .unwrap()
            .memory;
        assert_eq!(decision.links, ["src/store.rs"]);
        state.memory_store(&note("Handoff: the parser fuzzing is half done.", "handoff", &[])).unwrap();

        // Found by its words; kinds and tags filter.
        let found = state.memory_search("why does the retry test fail", &all, 5).unwrap();
        assert_eq!(found[0].id, retry.memory.id);
        assert!(found[0].score.is_some());
        let decisions = MemoryFilter { kinds: vec!["decision".into()], ..MemoryFilter::default() };
        assert!(state.memory_search("retry loop backoff", &decisions, 5).unwrap().iter().all(|m| m.kind == "decision"));
        let tagged = MemoryFilter { tags: vec!["store".into()], ..MemoryFilter::default() };
        assert_eq!(state.memory_recent(&tagged, 10).unwrap(), std::slice::from_ref(&decision));

        // Newest first; the same thing said again is not stored twice.
        let recent = state.memory_recent(&all, 10).unwrap();
        assert_eq!(recent.len(), 3);
        assert_eq!(recent[0].kind, "handoff");
        let again = state
            .memory_store(&note("the flaky test fails because the retry loop has no backoff", "finding", &[]))
            .unwrap();
        assert!(again.duplicate);
        assert_eq!(again.memory.id, retry.memory.id);
        assert_eq!(state.memory_recent(&all, 10).unwrap().len(), 3);
        // The same words in another order say something else.
        let sqlite = state.memory_store(&note("Keep SQLite, not PostgreSQL.", "decision", &[])).unwrap();
        let postgres = state.memory_store(&note("Keep PostgreSQL, not SQLite.", "decision", &[])).unwrap();
        assert!(!sqlite.duplicate && !postgres.duplicate);
        assert!(state.memory_forget(None, &sqlite.memory.id).unwrap());
        assert!(state.memory_forget(None, &postgres.memory.id).unwrap());
        assert!(!state.memory_search("retry", &all, 5_000).unwrap().is_empty(), "any limit");

        // Memories are blocks of a document: any session can read them.
        let workspace = library.workspace(MEMORY_DOCUMENT).unwrap();
        assert_eq!(workspace.traversal().engine().document().children(BlockId::ROOT).len(), 3);
        drop(workspace);

        // Forgotten once; a second time, or an id that is no memory, is false.
        assert!(state.memory_forget(None, &decision.id).unwrap());
        assert!(!state.memory_forget(None, &decision.id).unwrap());
        assert!(!state.memory_forget(None, BlockId::ROOT.to_string().as_str()).unwrap());
        assert_eq!(state.memory_recent(&all, 10).unwrap().len(), 2);

        // A new process finds what the first stored.
        drop(library);
        let library = Library::open(LibraryConfig::new(dir.path())).unwrap();
        let state = AgentState::of(&library);
        assert_eq!(state.memory_recent(&all, 10).unwrap().len(), 2);
    }

    #[test]
    fn a_filter_keeps_what_it_narrows_to_however_low_it_ranks() {
        let dir = tempfile::tempdir().unwrap();
        let library = Library::open(LibraryConfig::new(dir.path())).unwrap();
        let state = AgentState::of(&library);
        // Far more memories hold the word than the ranking takes as
        // candidates, and the tagged one, long, ranks below them all.
        let padding = "and then the whole team looked at the dashboards for a long while ".repeat(8);
        let mut many: Vec<NewMemory> =
            (0..400).map(|n| note(&format!("The build broke on step {n}."), "finding", &[])).collect();
        many.push(note(&format!("The build {padding}"), "finding", &["ci"]));
        assert_eq!(state.memory_import(None, &many).unwrap(), (401, 0));
        let tagged = MemoryFilter { tags: vec!["ci".into()], ..MemoryFilter::default() };
        let found = state.memory_search("build", &tagged, 5).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].tags, ["ci"]);
        assert_eq!(state.memory_search("build", &MemoryFilter::default(), 5).unwrap().len(), 5);
    }

    #[test]
    fn an_import_stores_many_at_once_and_skips_what_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let library = Library::open(LibraryConfig::new(dir.path())).unwrap();
        let state = AgentState::of(&library);
        state.memory_store(&note("Already here.", "note", &[])).unwrap();
        let many: Vec<NewMemory> = (0..12)
            .map(|n| note(&format!("Fact number {n} about the build."), "finding", &[]))
            .chain([note("already HERE", "note", &[]), note("Fact number 3 about the build", "finding", &[])])
            .collect();
        assert_eq!(state.memory_import(None, &many).unwrap(), (12, 2));
        assert_eq!(state.memory_recent(&MemoryFilter::default(), 100).unwrap().len(), 13);
        // One bad memory and nothing is written.
        let bad = [note("fine", "finding", &[]), note("", "finding", &[])];
        assert!(state.memory_import(None, &bad).is_err());
        assert_eq!(state.memory_recent(&MemoryFilter::default(), 100).unwrap().len(), 13);
        let parsed: NewMemory = serde_json::from_str(r#"{"content": "c", "kind": "todo", "tags": ["t"]}"#).unwrap();
        assert_eq!((parsed.kind.as_deref(), parsed.tags.len()), (Some("todo"), 1));
        assert!(serde_json::from_str::<NewMemory>(r#"{"content": "c", "colour": "red"}"#).is_err());
    }

    #[test]
    fn namespaces_keep_memories_apart_and_bad_input_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let library = Library::open(LibraryConfig::new(dir.path())).unwrap();
        let state = AgentState::of(&library);
        let mine =
            NewMemory { namespace: Some("agent-7".into()), ..note("Port 8080 is taken by the proxy.", "finding", &[]) };
        assert_eq!(state.memory_store(&mine).unwrap().memory.document, "memory@agent-7");
        let ours = MemoryFilter::default();
        let theirs = MemoryFilter { namespace: Some("agent-7".into()), ..MemoryFilter::default() };
        assert!(state.memory_recent(&ours, 10).unwrap().is_empty());
        assert_eq!(state.memory_recent(&theirs, 10).unwrap().len(), 1);

        for bad in [
            note("   ", "finding", &[]),
            note("fine", "two words", &[]),
            note("fine", "finding", &[""]),
            NewMemory { namespace: Some("a/b".into()), ..note("fine", "finding", &[]) },
            note(&"x".repeat(MAX_MEMORY_BYTES + 1), "finding", &[]),
        ] {
            let error = state.memory_store(&bad).unwrap_err();
            assert_eq!(error.code(), "invalid_argument", "{error}");
        }
        assert!(state.memory_recent(&ours, 10).unwrap().is_empty());
        assert_eq!(state.memory_recent(&theirs, 10).unwrap().len(), 1);
        assert!(state.memory_forget(None, "not-an-id").is_err());

        // No corpus takes the name memories and plans are kept under.
        let mut config = LibraryConfig::new(dir.path());
        config.allowed_roots = None;
        let library = Library::open(config).unwrap();
        let state = AgentState::of(&library);
        let corpus = tempfile::tempdir().unwrap();
        std::fs::write(corpus.path().join("notes.md"), "# Notes\n\nA corpus.\n").unwrap();
        for name in ["memory", "relations@agent-7"] {
            let Err(refused) = library.index(&[corpus.path().to_owned()], Some(name), &Default::default(), &()) else {
                panic!("{name} was taken by a corpus");
            };
            assert_eq!(refused.code(), "invalid_argument", "{refused}");
        }
        assert_eq!(state.memory_recent(&theirs, 10).unwrap().len(), 1);
    }
}
