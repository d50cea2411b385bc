//! Where a store lives: a directory (SQLite) or a database server's URL
//! (`postgres://…`), and where a node keeps its caches of a server's store.

use std::path::{Path, PathBuf};

/// Whether `location` names a store in a database server
/// (`postgres://…`) rather than a store directory.
pub fn is_store_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// The servers (host name or address, port) the store URL `url` names,
/// in its order: what a sandbox around a node must let it reach. A host
/// given as a socket folder, or a `hostaddr`, is refused: only TCP to a
/// named host crosses a sandbox.
pub fn store_hosts(url: &str) -> Result<Vec<(String, u16)>, crate::StoreError> {
    #[cfg(feature = "postgres")]
    {
        let settings = crate::postgres_tls::Settings::parse(url)?;
        let config = &settings.config;
        if !config.get_hostaddrs().is_empty() {
            // The connection would go to the address, not the forwarded name.
            return Err(crate::StoreError::Url(format!(
                "{}: hostaddr cannot cross a sandbox: name the server in the host part",
                redact(url)
            )));
        }
        let ports = config.get_ports();
        let mut hosts = Vec::new();
        for (n, host) in config.get_hosts().iter().enumerate() {
            // One port each (the driver fills in the default), or one for all.
            let port = ports.get(n).or(ports.first()).copied().unwrap_or(5432);
            match host {
                postgres::config::Host::Tcp(name) => hosts.push((name.clone(), port)),
                #[cfg(unix)]
                postgres::config::Host::Unix(folder) => {
                    return Err(crate::StoreError::Url(format!(
                        "{}: the socket in {} cannot be reached from a sandbox: name the server by host and port",
                        redact(url),
                        folder.display()
                    )))
                }
            }
        }
        Ok(hosts)
    }
    #[cfg(not(feature = "postgres"))]
    Err(crate::StoreError::Url(format!("{}: this ucp was built without PostgreSQL", redact(url))))
}

/// Where a node keeps what it derives from the store at `url` (search
/// indexes): a folder of UCP's cache ([`ucpkit_tokens::cache_dir`],
/// `$UCP_CACHE_DIR` first) named after the server and database (the
/// password left out).
pub fn node_cache_dir(url: &str) -> PathBuf {
    under(&ucpkit_tokens::cache_dir().unwrap_or_else(|| std::env::temp_dir().join("ucp")), url)
}

/// The cache folder of the store at `url` under UCP's cache folder `base`.
fn under(base: &Path, url: &str) -> PathBuf {
    let shown = redact(url);
    // FNV-1a: a name that stays the same from one build to the next.
    let hash = shown.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let server = shown.split("://").last().unwrap_or_default();
    let readable: String = server
        .rsplit('@')
        .next()
        .unwrap_or(server)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' })
        .take(60)
        .collect();
    base.join("stores").join(format!("{readable}-{hash:016x}"))
}

/// `url` without its password, for messages.
pub fn redact(url: &str) -> String {
    // Every `…password=VALUE` (`password=`, `sslpassword=` …) in a query
    // or a key-value string.
    let mut shown = String::with_capacity(url.len());
    let mut rest = url;
    while let Some(at) = rest.find("password=") {
        let value = at + "password=".len();
        let end = rest[value..].find([' ', '&']).map_or(rest.len(), |e| value + e);
        shown.push_str(&rest[..value]);
        shown.push_str("***");
        rest = &rest[end..];
    }
    shown.push_str(rest);
    // The password of `user:password@host`.
    let authority_end = shown.find("://").map(|scheme| {
        let start = scheme + 3;
        (start, shown[start..].find(['/', '?']).map_or(shown.len(), |e| start + e))
    });
    if let Some((start, end)) = authority_end {
        if let Some(at) = shown[start..end].rfind('@').map(|at| start + at) {
            if let Some(colon) = shown[start..at].find(':').map(|c| start + c) {
                shown.replace_range(colon + 1..at, "***");
            }
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "postgres")]
    #[test]
    fn a_store_urls_servers_are_its_hosts_with_their_ports() {
        let two = store_hosts("postgres://u:pw@db1:6000,db2/team?target_session_attrs=read-write").unwrap();
        assert_eq!(two, [("db1".to_owned(), 6000), ("db2".to_owned(), 5432)], "a host without a port: the default");
        let each = store_hosts("postgres://u@db1:6000,db2:6001/team").unwrap();
        assert_eq!(each, [("db1".to_owned(), 6000), ("db2".to_owned(), 6001)]);
        assert_eq!(store_hosts("postgresql://u@127.0.0.1/team").unwrap(), [("127.0.0.1".to_owned(), 5432)]);
        let socket = store_hosts("postgres://u:pw@%2Fvar%2Frun%2Fpostgresql/team").unwrap_err().to_string();
        assert!(socket.contains("cannot be reached from a sandbox") && !socket.contains("pw"), "{socket}");
        assert!(store_hosts("postgres://u@db1/team?hostaddr=10.0.0.5").is_err(), "the address is not forwarded");
    }

    #[test]
    fn passwords_are_left_out_of_messages() {
        assert_eq!(redact("postgres://ucp:secret@db:5432/x"), "postgres://ucp:***@db:5432/x");
        assert_eq!(redact("postgres://ucp@db/x"), "postgres://ucp@db/x");
        assert_eq!(redact("host=db"), "host=db");
        assert_eq!(redact("host=db password=x user=u"), "host=db password=*** user=u");
        assert_eq!(redact("postgres://db/x?password=x&a=b"), "postgres://db/x?password=***&a=b");
        assert_eq!(
            redact("postgres://u:secret@h/db?sslpassword=k&password=x"),
            "postgres://u:***@h/db?sslpassword=***&password=***"
        );
        assert_eq!(redact("postgres://u:p@ss@h/db"), "postgres://u:***@h/db");
    }

    #[test]
    fn each_server_and_database_has_a_cache_folder_of_its_own() {
        let base = Path::new("/cache");
        let a = under(base, "postgres://ucp:secret@db:5432/team");
        assert_eq!(a, under(base, "postgres://ucp:other@db:5432/team"), "the password is not part of it");
        assert_ne!(a, under(base, "postgres://ucp@db:5432/other"));
        assert!(a.starts_with("/cache/stores"));
        assert!(a.display().to_string().contains("db_5432_team"), "{}", a.display());
        assert!(is_store_url("postgresql://h/d") && !is_store_url(".ucp"));
    }
}
