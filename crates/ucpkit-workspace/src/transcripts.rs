//! Agent transcripts in the store, by session name (see
//! [`ucpkit_store::Store::save_transcript`]).

use ucpkit_store::StoredTranscript;

use crate::library::Library;
use crate::WorkspaceError;

impl Library {
    /// The transcript saved under session `name`, if any.
    pub fn load_transcript(&self, name: &str) -> Result<Option<StoredTranscript>, WorkspaceError> {
        Ok(self.store()?.load_transcript(name)?)
    }

    /// Every transcript's name and when it was last saved (ms), the latest
    /// first.
    pub fn transcripts(&self) -> Result<Vec<(String, u64)>, WorkspaceError> {
        Ok(self.store()?.transcripts()?)
    }

    /// Saves transcript `name` if the stored one is still at revision
    /// `read_at` (0: none); returns the new revision.
    pub fn save_transcript(&self, name: &str, body: &str, read_at: u64) -> Result<u64, WorkspaceError> {
        Ok(self.store()?.save_transcript(name, body, read_at)?)
    }
}
