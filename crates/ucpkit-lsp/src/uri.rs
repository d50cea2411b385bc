//! `file://` URIs of paths and back (percent-encoded as RFC 3986 wants).

use std::path::{Path, PathBuf};

/// The `file://` URI of an absolute path.
pub(crate) fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// The path of a `file://` URI; `None` for another scheme.
pub(crate) fn uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://host/path` is not local; `file:///path` has an empty host.
    let rest = if rest.starts_with('/') { rest } else { return None };
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(value) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(value);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    Some(PathBuf::from(String::from_utf8_lossy(&out).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_uris() {
        for path in ["/a/b c/d#e.py", "/tmp/é/x%y.rs", "/plain/path.go"] {
            let uri = file_uri(Path::new(path));
            assert!(uri.starts_with("file:///"));
            assert!(!uri[7..].contains(' ') && !uri[7..].contains('#'));
            assert_eq!(uri_path(&uri).unwrap(), PathBuf::from(path));
        }
        assert_eq!(uri_path("https://x/y"), None);
        assert_eq!(uri_path("file:///bad%zz"), Some(PathBuf::from("/bad%zz")));
        assert_eq!(uri_path("file:///a%€"), Some(PathBuf::from("/a%€")));
    }
}
