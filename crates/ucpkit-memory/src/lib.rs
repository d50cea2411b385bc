//! The agents' state, kept in a [`Library`]'s store: memory that lasts
//! across sessions ([`memory`]) and plans as a graph of nodes with
//! statuses ([`relations`]). Both are documents of the store written as
//! UCL through the workspace, so they share its durability rule and its
//! revision check; a write another writer beat is replayed
//! ([`ucpkit_workspace::replayed`]).
//!
//! ```no_run
//! use ucpkit_memory::{AgentState, MemoryFilter, NewMemory};
//! use ucpkit_workspace::{Library, LibraryConfig};
//!
//! let library = Library::open(LibraryConfig::new(".ucp")).unwrap();
//! let state = AgentState::of(&library);
//! let note = NewMemory { content: "The parser fuzzing is half done.".into(), ..NewMemory::default() };
//! state.memory_store(&note).unwrap();
//! let found = state.memory_search("fuzzing", &MemoryFilter::default(), 5).unwrap();
//! ```

pub mod conversation;
pub mod memory;
pub mod relations;

use ucpkit_workspace::Library;

pub use conversation::{conversation_turns, TURN_KIND};
pub use memory::{
    memories_text, memory_document, Memory, MemoryFilter, NewMemory, Stored, DEFAULT_KIND, MAX_MEMORY_BYTES,
    MEMORY_DOCUMENT,
};

/// The agents' state in one library: its memories and plans.
#[derive(Clone, Copy)]
pub struct AgentState<'a> {
    library: &'a Library,
}

impl<'a> AgentState<'a> {
    /// The state `library`'s store keeps.
    pub fn of(library: &'a Library) -> Self {
        AgentState { library }
    }
}
