//! The o200k_base tables, built from the vocabulary the crate ships and
//! kept in the user's cache.
//!
//! `bpe-openai` embeds its tables ready-built: 32 MB of the binary for
//! o200k_base. The vocabulary they are built from is 1.7 MB gzip'd, but
//! building them takes about a second. So the first process on a machine
//! builds them and saves bpe's own serialization in the cache folder
//! (checksummed, written to a temporary file and renamed into place); every
//! later process maps that file and decodes it: about 30 ms, against 60 ms
//! for reading it into memory and decoding MessagePack, the format the
//! embedded tables use. A cache that cannot be read or written only costs
//! the build.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Duration;

use bpe::byte_pair_encoding::{read_tiktoken, BytePairEncoding};
use bpe_openai::Tokenizer;

/// o200k_base's vocabulary as OpenAI publishes it (`o200k_base.tiktoken`,
/// gzip'd; the copy `bpe-openai` 0.3.2 builds from).
const VOCABULARY: &[u8] = include_bytes!("../data/o200k_base.tiktoken.gz");

/// The hash factor `bpe-openai` builds its tables with (no two o200k
/// tokens collide under it).
const HASH_FACTOR: u64 = 17_846_336_922_010_275_747;

/// What the cached bytes are: `bpe`'s serialization, whose version is
/// pinned in Cargo.toml, in postcard's format. Upgrading either means
/// changing this name, so old caches are never read by new code.
const CACHE_FORMAT: &str = "bpe-0.2.3/postcard-1";

/// The first bytes of a cache file.
const MAGIC: &[u8; 8] = b"UCPBPE01";

/// The cache file: magic, the key (what it was built from), the payload's
/// checksum, then the payload.
const HEADER: usize = MAGIC.len() + 32 + 32;

/// The o200k_base tokenizer, built once per process.
static O200K: LazyLock<Tokenizer> = LazyLock::new(|| tokenizer(tables(cache_dir().as_deref())));

/// The o200k_base tokenizer (its tables read from the cache or built).
pub(crate) fn o200k() -> &'static Tokenizer {
    &O200K
}

/// o200k_base's pre-tokenizer (the patterns `bpe-openai` uses: tiktoken's,
/// with the negative look-ahead rewritten as a look-ahead pattern).
fn tokenizer(bpe: BytePairEncoding) -> Tokenizer {
    let words = [
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "\\p{N}{1,3}",
        " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
        "\\s*[\\r\\n]+",
        "\\s+$",
    ]
    .join("|");
    Tokenizer::new_lookahead(bpe, &[(&words, false), ("\\s+\\s", true), ("\\s+", false)], false)
        .expect("o200k_base's patterns compile")
}

/// UCP's folder for caches (these tables, a node's caches of a store on
/// a database server): `$UCP_CACHE_DIR`, else `$XDG_CACHE_HOME/ucp`, else
/// `~/.cache/ucp`; `None` without a home.
pub fn cache_dir() -> Option<PathBuf> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    env("UCP_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|dir| dir.join("ucp")))
        .or_else(|| env("HOME").map(|home| home.join(".cache").join("ucp")))
}

/// What a cache file must have been built from: this vocabulary, in this
/// format.
fn key() -> blake3::Hash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(CACHE_FORMAT.as_bytes());
    hasher.update(VOCABULARY);
    hasher.finalize()
}

/// The tables from the cache in `dir`, else built (and saved there).
fn tables(dir: Option<&Path>) -> BytePairEncoding {
    let key = key();
    let path = dir.map(|dir| dir.join(format!("o200k_base-{}.bpe", &key.to_hex()[..16])));
    if let Some(bpe) = path.as_deref().and_then(|path| read_cached(path, &key)) {
        return bpe;
    }
    let bpe = build();
    if let Some(path) = &path {
        // A cache that cannot be written costs the next process the build.
        if write_cached(path, &key, &bpe).is_ok() {
            remove_stale(path);
        }
    }
    bpe
}

/// How long tables cached for another key may go unread before a build
/// removes them.
const STALE_AFTER: Duration = Duration::from_secs(7 * 24 * 3600);

/// How old a cache file's modification time may get before a read
/// refreshes it (so it says when the file was last used).
const REFRESH_AFTER: Duration = Duration::from_secs(24 * 3600);

/// Removes the tables cached beside `kept` for other keys (another
/// vocabulary or format, left by an older UCP; about 30 MB each) that no
/// process has read for [`STALE_AFTER`]: two versions in use side by side
/// keep theirs.
fn remove_stale(kept: &Path) {
    let Some(dir) = kept.parent() else { return };
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for path in entries.flatten().map(|entry| entry.path()) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let unused = std::fs::metadata(&path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age > STALE_AFTER);
        if path != kept && name.starts_with("o200k_base-") && name.ends_with(".bpe") && unused {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Builds the tables from the shipped vocabulary (about a second).
fn build() -> BytePairEncoding {
    let mut text = String::new();
    flate2::read::GzDecoder::new(VOCABULARY).read_to_string(&mut text).expect("the shipped vocabulary is gzip'd text");
    let tokens = read_tiktoken(&text).expect("the shipped vocabulary is in tiktoken's format");
    BytePairEncoding::from_dictionary(tokens, Some(HASH_FACTOR))
}

/// The tables cached at `path`, if the file is whole, was built from `key`
/// and holds what its checksum says (the tables are deserialized without
/// checks, so nothing else is ever read).
fn read_cached(path: &Path, key: &blake3::Hash) -> Option<BytePairEncoding> {
    let file = std::fs::File::open(path).ok()?;
    // The modification time says when the tables were last used (see
    // `remove_stale`); refreshed at most once a day.
    if file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|m| m.elapsed().ok())
        .is_some_and(|age| age > REFRESH_AFTER)
    {
        let _ = file.set_modified(std::time::SystemTime::now());
    }
    // SAFETY: the file is only ever replaced whole (renamed into place),
    // never written in place, so the mapped bytes do not change under us.
    let bytes = unsafe { memmap2::MmapOptions::new().populate().map(&file) }.ok()?;
    let (header, payload) = bytes.split_at_checked(HEADER)?;
    let (magic, rest) = header.split_at(MAGIC.len());
    let (built_from, checksum) = rest.split_at(32);
    if magic != MAGIC || built_from != key.as_bytes() || checksum != blake3::hash(payload).as_bytes() {
        return None;
    }
    postcard::from_bytes(payload).ok()
}

/// Saves the tables at `path`: a temporary file in the same folder,
/// renamed into place, so a reader sees the whole file or none.
fn write_cached(path: &Path, key: &blake3::Hash, bpe: &BytePairEncoding) -> std::io::Result<()> {
    let payload = postcard::to_stdvec(bpe).map_err(std::io::Error::other)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(MAGIC)?;
    file.write_all(key.as_bytes())?;
    file.write_all(blake3::hash(&payload).as_bytes())?;
    file.write_all(&payload)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cached_file(dir: &Path) -> PathBuf {
        let entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(entries.len(), 1, "one cache file: {entries:?}");
        entries.into_iter().next().unwrap()
    }

    #[test]
    fn tables_are_built_once_then_read_and_a_damaged_cache_is_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let sample = "Budgets are enforced with exact counts: ünïcödé, 12345, \t tabs\r\n";
        let expected = bpe_openai::o200k_base().count(sample);

        let built = tokenizer(tables(Some(dir.path())));
        assert_eq!(built.count(sample), expected);
        let path = cached_file(dir.path());
        let key = key();
        assert!(read_cached(&path, &key).is_some());

        let read = tokenizer(tables(Some(dir.path())));
        assert_eq!(read.count(sample), expected);

        // A flipped payload byte, a truncated file, another key: never read.
        let whole = std::fs::read(&path).unwrap();
        let mut flipped = whole.clone();
        *flipped.last_mut().unwrap() ^= 1;
        std::fs::write(&path, &flipped).unwrap();
        assert!(read_cached(&path, &key).is_none());
        std::fs::write(&path, &whole[..HEADER - 1]).unwrap();
        assert!(read_cached(&path, &key).is_none());
        std::fs::write(&path, &whole).unwrap();
        assert!(read_cached(&path, &blake3::hash(b"another vocabulary")).is_none());

        // A damaged file is built again and replaced, and the tables an
        // older format left are removed; other files stay.
        std::fs::write(&path, &flipped).unwrap();
        // Tables of another key unread for weeks go; recent ones stay.
        let stale = dir.path().join("o200k_base-0123456789abcdef.bpe");
        std::fs::write(&stale, b"older tables").unwrap();
        let month_ago = std::time::SystemTime::now() - Duration::from_secs(30 * 24 * 3600);
        std::fs::File::options().write(true).open(&stale).unwrap().set_modified(month_ago).unwrap();
        let in_use = dir.path().join("o200k_base-fedcba9876543210.bpe");
        std::fs::write(&in_use, b"another version's tables").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"mine").unwrap();
        assert_eq!(tokenizer(tables(Some(dir.path()))).count(sample), expected);
        assert_eq!(std::fs::read(&path).unwrap(), whole);
        assert!(!stale.exists());
        assert!(in_use.exists() && dir.path().join("notes.txt").exists());
    }

    #[test]
    fn without_a_cache_the_tables_are_built() {
        assert_eq!(tokenizer(tables(None)).count("hello world"), 2);
    }
}
