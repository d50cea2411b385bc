//! What a server offers (its tools, resources and prompts), as listed the
//! last time it was connected, kept in the store's `mcp-servers/` folder
//! so that UCP starts without starting any server. A listing is used only
//! for the configuration it was made with ([`ServerConfig::cache_key`]);
//! a server that reports another version when it is next connected is
//! listed again.
//!
//! [`ServerConfig::cache_key`]: crate::ServerConfig::cache_key

use std::io::Write as _;
use std::path::{Path, PathBuf};

use rmcp::model::{Prompt, Resource, Tool};
use serde::{Deserialize, Serialize};

/// A server's lists.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Listing {
    /// The configuration it was listed with ([`crate::ServerConfig::cache_key`]).
    pub key: String,
    /// The name the server gave itself.
    pub server_name: String,
    /// The version it reported.
    pub server_version: String,
    /// Its tools, as it listed them.
    pub tools: Vec<Tool>,
    /// Its resources.
    pub resources: Vec<Resource>,
    /// Its prompts.
    pub prompts: Vec<Prompt>,
}

/// The listings of one store's servers.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: Option<PathBuf>,
}

impl Cache {
    /// Listings kept under `store`'s `mcp-servers/` folder; none kept
    /// (every start lists again) when `store` is `None`.
    pub fn new(store: Option<&Path>) -> Self {
        Cache { dir: store.map(|store| store.join("mcp-servers")) }
    }

    fn path(&self, server: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|dir| dir.join(format!("{server}.json")))
    }

    /// `server`'s listing made with the configuration `key`, if one is kept
    /// (an unreadable one counts as none).
    pub fn load(&self, server: &str, key: &str) -> Option<Listing> {
        let text = std::fs::read_to_string(self.path(server)?).ok()?;
        serde_json::from_str::<Listing>(&text).ok().filter(|listing| listing.key == key)
    }

    /// Keeps `listing` as `server`'s, whole or not at all: it is written
    /// to a file beside it and renamed over the old one.
    pub fn store(&self, server: &str, listing: &Listing) -> std::io::Result<()> {
        let (Some(dir), Some(path)) = (&self.dir, self.path(server)) else { return Ok(()) };
        std::fs::create_dir_all(dir)?;
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        file.write_all(&serde_json::to_vec(listing)?)?;
        file.as_file().sync_all()?;
        file.persist(path).map_err(|e| e.error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_is_kept_for_its_configuration() {
        let store = tempfile::tempdir().unwrap();
        let cache = Cache::new(Some(store.path()));
        let listing = Listing { key: "k1".into(), server_version: "1.0".into(), ..Listing::default() };
        assert_eq!(cache.load("s", "k1"), None);
        cache.store("s", &listing).unwrap();
        assert_eq!(cache.load("s", "k1"), Some(listing));
        assert_eq!(cache.load("s", "k2"), None, "another configuration lists again");
        std::fs::write(store.path().join("mcp-servers/s.json"), "{not json").unwrap();
        assert_eq!(cache.load("s", "k1"), None);
        assert!(Cache::new(None).store("s", &Listing::default()).is_ok());
    }
}
