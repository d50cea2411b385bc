//! The catalog on disk that says which version of every block the index
//! holds, so a sync re-indexes only the blocks whose indexed fields
//! changed.

use ucpkit_core::{BlockId, IdMap};

use crate::indexable::Indexable;

use crate::SearchOptions;

/// What the catalog remembers of an indexed block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub fingerprint: u64,
    /// Index into the catalog's strings (`u16::MAX`: none).
    pub role: u16,
    pub tags: Box<[u16]>,
}

/// The indexed blocks, their fingerprints, roles and tags.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Catalog {
    pub(crate) strings: Vec<String>,
    lookup: std::collections::HashMap<String, u16>,
    pub entries: IdMap<Entry>,
}

/// The index of no string.
pub(crate) const NONE: u16 = u16::MAX;

impl Catalog {
    /// The number of `s` among the catalog's strings (added when new).
    pub(crate) fn intern(&mut self, s: &str) -> u16 {
        if s.is_empty() {
            return NONE;
        }
        if let Some(&i) = self.lookup.get(s) {
            return i;
        }
        let i = u16::try_from(self.strings.len()).ok().filter(|&i| i < NONE).unwrap_or(NONE);
        if i != NONE {
            self.strings.push(s.to_owned());
            self.lookup.insert(s.to_owned(), i);
        }
        i
    }

    /// Records that `item` is indexed as it is now.
    pub fn insert(&mut self, item: &Indexable, fingerprint: u64) {
        let role = self.intern(item.role);
        let tags = item.tags.iter().map(|t| self.intern(t)).collect();
        self.entries.insert(item.id, Entry { fingerprint, role, tags });
    }

    /// Whether `id` passes the role and tag filters of `options`.
    pub fn accepts(&self, id: BlockId, options: &SearchOptions) -> bool {
        let Some(entry) = self.entries.get(&id) else { return false };
        let name = |i: u16| self.strings.get(usize::from(i)).map_or("", String::as_str);
        (options.roles.is_empty() || options.roles.iter().any(|r| r == name(entry.role)))
            && (options.tags.is_empty() || entry.tags.iter().any(|&t| options.tags.iter().any(|w| w == name(t))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexable::{indexables, sample_document};

    #[test]
    fn filters_read_roles_and_tags() {
        let doc = sample_document();
        let mut catalog = Catalog::default();
        let items = indexables(&doc);
        for item in &items {
            catalog.insert(item, 0);
        }
        let roles = SearchOptions { roles: vec!["paragraph".into()], ..SearchOptions::default() };
        let kept: Vec<_> = items.iter().filter(|i| catalog.accepts(i.id, &roles)).map(|i| i.text.as_ref()).collect();
        assert_eq!(kept, ["Readable streams.", "Writable streams."]);
        let tags = SearchOptions { tags: vec!["x".into()], ..SearchOptions::default() };
        assert!(items.iter().all(|i| !catalog.accepts(i.id, &tags)));
    }
}
