//! Folders for tests that need one in a particular place.

/// A folder outside `/tmp` and `/dev` (which a sandboxed command may
/// write), for a write the sandbox must deny: the build's scratch folder,
/// or the home folder when the build itself lives under `/tmp`.
pub fn outside_tmp() -> std::path::PathBuf {
    [Some(std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))), std::env::var_os("HOME").map(Into::into)]
        .into_iter()
        .flatten()
        .filter_map(|p| p.canonicalize().ok())
        .find(|p| !p.starts_with("/tmp") && !p.starts_with("/dev"))
        .expect("a folder outside /tmp for the sandbox test")
}
