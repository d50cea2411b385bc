//! TLS to a real PostgreSQL server: a cluster of this test's own
//! (scripts/pg-cluster) given a certificate from an authority the test
//! makes, and told to refuse plain text. Each `sslmode` does what libpq's
//! does: `verify-full` checks the authority and the host name,
//! `verify-ca` the authority only, `require` and the default encrypt
//! without checking, `disable` is refused by this server; a certificate
//! from another authority, or for another host, is refused with a clear
//! error. `allow` tries plain text, is refused, and encrypts; a client
//! certificate from the trusted authority lets a user in whom the server
//! admits by certificate only, and one from another authority does not.
#![cfg(feature = "postgres")]

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use ucpkit_store::Store;

/// `scripts/pg-cluster ARGS…`; what it printed.
fn pg_cluster(args: &[&Path]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-cluster");
    let out = Command::new(script).args(args).output().unwrap();
    assert!(out.status.success(), "pg-cluster {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The test's cluster, stopped when dropped.
struct Cluster(PathBuf);

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = pg_cluster(&[Path::new("stop"), &self.0]);
    }
}

/// PEM texts of an authority and what it signed.
struct Certificates {
    authority: String,
    /// For `localhost`.
    server: (String, String),
    /// For user `certuser` (its common name).
    client: (String, String),
}

/// A certificate authority and the server and client certificates it
/// signed, each with its key.
fn certificates() -> Certificates {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name.push(rcgen::DnType::CommonName, "ucp test authority");
    let ca = ca.self_signed(&ca_key).unwrap();
    let server_key = rcgen::KeyPair::generate().unwrap();
    let server = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    let server = server.signed_by(&server_key, &ca, &ca_key).unwrap();
    let client_key = rcgen::KeyPair::generate().unwrap();
    let mut client = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    client.distinguished_name.push(rcgen::DnType::CommonName, "certuser");
    let client = client.signed_by(&client_key, &ca, &ca_key).unwrap();
    Certificates {
        authority: ca.pem(),
        server: (server.pem(), server_key.serialize_pem()),
        client: (client.pem(), client_key.serialize_pem()),
    }
}

/// Writes `text` to `path`, readable by the server (which runs as the
/// owner of `dir`, `nobody` under root) and, for a key, by no one else.
fn write_for_server(dir: &Path, path: &Path, text: &str, secret: bool) {
    std::fs::write(path, text).unwrap();
    let running_as_root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let mode = match (secret, running_as_root) {
        // A key owned by root must be group-readable only, by the server's group.
        (true, true) => {
            std::os::unix::fs::chown(path, None, Some(std::fs::metadata(dir).unwrap().gid())).unwrap();
            0o640
        }
        (true, false) => 0o600,
        (false, _) => 0o644,
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
#[ignore = "needs UCP_TEST_POSTGRES_DIR: scripts/test starts a throwaway cluster (so PostgreSQL is installed) and runs this"]
fn each_sslmode_secures_and_checks_as_libpq_does() {
    if std::env::var_os("UCP_TEST_POSTGRES_DIR").is_none() {
        eprintln!("note: UCP_TEST_POSTGRES_DIR is not set: the TLS test is skipped");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("tls");
    let printed = pg_cluster(&[Path::new("start"), &dir]);
    let cluster = Cluster(dir.clone());
    let url = printed.trim().strip_prefix("UCP_TEST_POSTGRES=").expect("the URL").to_owned();

    let made = certificates();
    let ca_file = root.path().join("authority.pem");
    std::fs::write(&ca_file, &made.authority).unwrap();
    write_for_server(&dir, &dir.join("server.crt"), &made.server.0, false);
    write_for_server(&dir, &dir.join("server.key"), &made.server.1, true);
    write_for_server(&dir, &dir.join("clients.crt"), &made.authority, false);
    // The test's own connection goes through the cluster's socket, which
    // the TLS rules below do not touch.
    let port: u16 = std::fs::read_to_string(dir.join("port")).unwrap().trim().parse().unwrap();
    let admin_config = || {
        let mut config = postgres::Config::new();
        config.host_path(&dir).port(port).user("postgres").password(password(&url)).dbname("postgres");
        config
    };
    let mut admin = admin_config().connect(postgres::NoTls).unwrap();
    // One statement each: ALTER SYSTEM runs outside a transaction only.
    for setting in [
        "ssl = on".to_owned(),
        format!("ssl_cert_file = '{}'", dir.join("server.crt").display()),
        format!("ssl_key_file = '{}'", dir.join("server.key").display()),
        format!("ssl_ca_file = '{}'", dir.join("clients.crt").display()),
    ] {
        admin.batch_execute(&format!("ALTER SYSTEM SET {setting}")).unwrap();
    }
    // A user the server admits by its certificate only.
    admin.batch_execute("CREATE ROLE certuser LOGIN").unwrap();
    admin.batch_execute("CREATE DATABASE certdb OWNER certuser").unwrap();
    // Plain text is refused from now on.
    let hba = dir.join("data/pg_hba.conf");
    let rules = std::fs::read_to_string(&hba).unwrap();
    let first = "hostnossl all all 0.0.0.0/0 reject\nhostssl certdb certuser 0.0.0.0/0 cert\n";
    std::fs::write(&hba, format!("{first}{rules}")).unwrap();
    admin.batch_execute("SELECT pg_reload_conf()").unwrap();

    let with = |host: &str, query: &str| {
        let url = url.replace("127.0.0.1", host);
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("{url}{sep}{query}")
    };
    let trusted = format!("sslrootcert={}", ca_file.display());
    // Whether a store opened at `url` talks to the server over TLS (each
    // check names its connections apart).
    let encrypted = |url: &str, name: &str| {
        let sep = if url.contains('?') { '&' } else { '?' };
        let url = format!("{url}{sep}application_name={name}");
        let store = Store::open_url(&url, root.path().join("cache")).unwrap_or_else(|e| panic!("{name}: {e}"));
        let row = admin_config()
            .connect(postgres::NoTls)
            .unwrap()
            .query_one(
                "SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE ssl AND application_name = $1",
                &[&name],
            )
            .unwrap();
        drop(store);
        row.get::<_, i64>(0) == 1
    };
    assert!(encrypted(&with("localhost", &format!("sslmode=verify-full&{trusted}")), "full"));
    assert!(encrypted(&with("127.0.0.1", &format!("sslmode=verify-ca&{trusted}")), "ca"), "the host is not checked");
    assert!(encrypted(&with("127.0.0.1", "sslmode=require"), "require"));
    assert!(encrypted(&url, "prefer"), "the default encrypts when the server can");

    let refused = |url: &str| Store::open_url(url, root.path().join("cache")).err().expect("refused").to_string();
    let wrong_host = refused(&with("127.0.0.1", &format!("sslmode=verify-full&{trusted}")));
    assert!(wrong_host.contains("certificate") && wrong_host.contains("connecting to PostgreSQL"), "{wrong_host}");
    let others = certificates();
    let other = root.path().join("other.pem");
    std::fs::write(&other, &others.authority).unwrap();
    let untrusted = refused(&with("localhost", &format!("sslmode=verify-full&sslrootcert={}", other.display())));
    assert!(untrusted.contains("certificate"), "{untrusted}");
    // As libpq: `require` with a root file checks the authority.
    let required = refused(&with("127.0.0.1", &format!("sslmode=require&sslrootcert={}", other.display())));
    assert!(required.contains("certificate"), "{required}");
    assert!(encrypted(&with("127.0.0.1", &format!("sslmode=require&{trusted}")), "require-ca"));
    let plain = refused(&with("127.0.0.1", "sslmode=disable"));
    assert!(plain.contains("no encryption"), "{plain}");
    assert!(!plain.contains(&password(&url)), "the password is never shown: {plain}");
    assert!(encrypted(&with("127.0.0.1", "sslmode=allow"), "allow"), "plain text refused, then TLS");

    // `certuser` at `certdb`: only with a certificate from the trusted authority.
    let as_certuser = |query: &str| {
        let (userinfo, rest) = url.split_once('@').unwrap();
        let scheme = &userinfo[..userinfo.find("://").unwrap() + 3];
        let (host, _) = rest.split_once('/').unwrap();
        format!("{scheme}certuser@{host}/certdb?sslmode=require{query}")
    };
    let identity = |name: &str, (certificate, key): &(String, String)| {
        let (cert_file, key_file) = (root.path().join(format!("{name}.crt")), root.path().join(format!("{name}.key")));
        std::fs::write(&cert_file, certificate).unwrap();
        std::fs::write(&key_file, key).unwrap();
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        format!("&sslcert={}&sslkey={}", cert_file.display(), key_file.display())
    };
    let without = refused(&as_certuser(""));
    assert!(without.contains("connecting to PostgreSQL"), "{without}");
    assert!(encrypted(&as_certuser(&identity("client", &made.client)), "client-cert"), "admitted by its certificate");
    let stranger = refused(&as_certuser(&identity("stranger", &others.client)));
    assert!(stranger.contains("connecting to PostgreSQL"), "{stranger}");
    drop(admin);
    drop(cluster);
}

/// The password in `url`.
fn password(url: &str) -> String {
    let userinfo = url.split('@').next().unwrap();
    userinfo.rsplit(':').next().unwrap().to_owned()
}
