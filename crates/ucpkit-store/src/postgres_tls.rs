//! How a node reaches the PostgreSQL server: the URL's settings, with
//! `sslmode`, `sslrootcert`, `sslcert` and `sslkey` read the way libpq
//! reads them, and TLS by rustls. `disable` sends plain text; `allow`
//! tries plain text first and TLS when that fails; `prefer` (the default)
//! and `require` encrypt without checking the server's certificate
//! (`prefer` falls back to plain text when the server has no TLS;
//! `require` with `sslrootcert` checks the authority, as libpq's does);
//! `verify-ca` checks that a trusted authority signed it; `verify-full`
//! checks that and that it names the host. The authorities are those in
//! the file `sslrootcert` names, else the system's (`sslrootcert=system`
//! says so, and then asks for `verify-full`, as libpq 16 does; libpq's
//! default files under `~/.postgresql/` are not read). `sslcert` and
//! `sslkey` give the client's certificate and its key; a key others can
//! read is refused, as libpq refuses it, and an encrypted key
//! (`sslpassword`) is not supported.

use std::path::Path;
use std::sync::Arc;

use postgres::config::SslMode;
use postgres::NoTls;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::location::redact;
use crate::StoreError;

/// A server's connection settings and how to secure the connection.
#[derive(Clone)]
pub(crate) struct Settings {
    /// The URL's settings (`sslmode` as PostgreSQL's driver knows it).
    pub(crate) config: postgres::Config,
    /// `None` for `sslmode=disable`.
    tls: Option<MakeRustlsConnect>,
    /// `sslmode=allow`: plain text first, TLS when that fails.
    plain_first: bool,
}

/// The client's certificate chain and key files (`sslcert`, `sslkey`).
struct ClientFiles {
    certificate: String,
    key: String,
}

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Nothing,
    Authority,
    AuthorityAndHost,
}

impl Settings {
    /// The settings of store URL `url` (`postgres://…?sslmode=…&sslrootcert=…`).
    pub(crate) fn parse(url: &str) -> Result<Settings, StoreError> {
        let bad = |message: String| StoreError::Url(format!("{}: {message}", redact(url)));
        let (base, query) = url.split_once('?').map_or((url, ""), |(b, q)| (b, q));
        let mut mode: Option<String> = None;
        let (mut root_file, mut cert_file, mut key_file): (Option<String>, Option<String>, Option<String>) =
            (None, None, None);
        let mut kept: Vec<&str> = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "sslmode" => mode = Some(value.to_owned()),
                "sslrootcert" => root_file = Some(decode(value).map_err(&bad)?),
                "sslcert" => cert_file = Some(decode(value).map_err(&bad)?),
                "sslkey" => key_file = Some(decode(value).map_err(&bad)?),
                "sslpassword" if !value.is_empty() => {
                    return Err(bad("an encrypted client key (sslpassword) is not supported".into()))
                }
                "sslpassword" => {}
                _ => kept.push(pair),
            }
        }
        // As libpq 16: the system's authorities ask for the full check.
        let system_roots = root_file.as_deref() == Some("system");
        let mode = mode.unwrap_or_else(|| if system_roots { "verify-full" } else { "prefer" }.to_owned());
        if system_roots && mode != "verify-full" {
            return Err(bad(format!("sslrootcert=system needs sslmode=verify-full, not {mode}")));
        }
        let root_file = root_file.filter(|_| !system_roots);
        let client = match (cert_file, key_file) {
            (Some(certificate), Some(key)) => Some(ClientFiles { certificate, key }),
            (None, None) => None,
            _ => return Err(bad("a client certificate needs both sslcert and sslkey".into())),
        };
        let rest = if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) };
        let mut config: postgres::Config =
            rest.parse().map_err(|e: postgres::Error| bad(crate::postgres::describe(&e)))?;
        let (ssl, check) = match mode.as_str() {
            "disable" => (SslMode::Disable, None),
            "allow" => (SslMode::Disable, Some(Check::Nothing)),
            "prefer" => (SslMode::Prefer, Some(Check::Nothing)),
            // As libpq: with a root certificate file, `require` checks the authority.
            "require" if root_file.is_some() => (SslMode::Require, Some(Check::Authority)),
            "require" => (SslMode::Require, Some(Check::Nothing)),
            "verify-ca" => (SslMode::Require, Some(Check::Authority)),
            "verify-full" => (SslMode::Require, Some(Check::AuthorityAndHost)),
            other => {
                return Err(bad(format!(
                    "sslmode={other} is not one of disable, allow, prefer, require, verify-ca, verify-full"
                )))
            }
        };
        config.ssl_mode(ssl);
        let tls = match check {
            None if client.is_some() => return Err(bad("sslmode=disable sends no client certificate".into())),
            None => None,
            Some(check) => {
                Some(MakeRustlsConnect::new(client_config(check, root_file.as_deref(), client.as_ref()).map_err(&bad)?))
            }
        };
        Ok(Settings { config, tls, plain_first: mode == "allow" })
    }

    /// A new connection to the server, secured as the settings say.
    pub(crate) fn connect(&self) -> Result<postgres::Client, postgres::Error> {
        match &self.tls {
            // Encrypted again only when the server refused plain text (not
            // when it could not be reached: that would wait twice).
            Some(tls) if self.plain_first => self.config.connect(NoTls).or_else(|plain| {
                if plain.as_db_error().is_none() {
                    return Err(plain);
                }
                let mut secured = self.config.clone();
                secured.ssl_mode(SslMode::Require);
                secured.connect(tls.clone())
            }),
            Some(tls) => self.config.connect(tls.clone()),
            None => self.config.connect(NoTls),
        }
    }
}

/// A URL query value with its `%XX` escapes decoded.
fn decode(value: &str) -> Result<String, String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            out.push(hex.ok_or_else(|| format!("a bad %-escape in {value:?}"))?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{value:?} is not UTF-8 once decoded"))
}

/// rustls's settings for `check`, trusting the authorities in
/// `root_file`, else the system's, and showing the `client` certificate
/// when there is one.
fn client_config(check: Check, root_file: Option<&str>, client: Option<&ClientFiles>) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let verifier: Arc<dyn ServerCertVerifier> = match check {
        Check::Nothing => Arc::new(Unchecked(provider)),
        Check::Authority | Check::AuthorityAndHost => {
            let roots = Arc::new(authorities(root_file)?);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| format!("TLS: {e}"))?;
            Arc::new(Signed { webpki, host: check == Check::AuthorityAndHost })
        }
    };
    let builder = builder.dangerous().with_custom_certificate_verifier(verifier);
    match client {
        None => Ok(builder.with_no_client_auth()),
        Some(files) => {
            let (chain, key) = client_identity(files)?;
            builder.with_client_auth_cert(chain, key).map_err(|e| format!("sslkey={}: {e}", files.key))
        }
    }
}

/// The client's certificate chain and its key, read from their files; a
/// key file others can read is refused (libpq's rule: no access for the
/// group or the world, or read access for the group when root owns it).
fn client_identity(files: &ClientFiles) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), String> {
    use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
    let chain = CertificateDer::pem_file_iter(Path::new(&files.certificate))
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("sslcert={}: {e}", files.certificate))?;
    if chain.is_empty() {
        return Err(format!("sslcert={} holds no certificate", files.certificate));
    }
    // The key is opened once, without waiting on a pipe: its kind, its
    // permissions and its text are of one file.
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&files.key)
        .map_err(|e| format!("sslkey={}: {e}", files.key))?;
    let meta = file.metadata().map_err(|e| format!("sslkey={}: {e}", files.key))?;
    if !meta.is_file() {
        return Err(format!("sslkey={} is not a regular file", files.key));
    }
    let (forbidden, at_most) = if meta.uid() == 0 { (0o037, "u=rw,g=r (0640)") } else { (0o077, "u=rw (0600)") };
    if meta.mode() & forbidden != 0 {
        return Err(format!(
            "sslkey={} is open to others (mode {:o}): allow {at_most} or less",
            files.key,
            meta.mode() & 0o777
        ));
    }
    let mut pem = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut pem).map_err(|e| format!("sslkey={}: {e}", files.key))?;
    let key = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| format!("sslkey={}: {e}", files.key))?;
    Ok((chain, key))
}

/// The authorities certificates are checked against.
fn authorities(root_file: Option<&str>) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    match root_file {
        Some(file) => {
            let certs = CertificateDer::pem_file_iter(Path::new(file))
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("sslrootcert={file}: {e}"))?;
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(format!("sslrootcert={file} holds no certificate"));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
            if roots.is_empty() {
                return Err("no trusted authorities on this system: name them with sslrootcert=FILE".into());
            }
        }
    }
    Ok(roots)
}

/// Accepts any certificate (`prefer`, `require`): the connection is
/// encrypted, but who is at the other end is not checked. The handshake's
/// signatures are still checked.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Checks that a trusted authority signed the certificate, and with
/// `host` that it names the host connected to (`verify-full`).
#[derive(Debug)]
struct Signed {
    webpki: Arc<WebPkiServerVerifier>,
    host: bool,
}

impl ServerCertVerifier for Signed {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.host => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslmode_and_sslrootcert_are_read_like_libpq_and_bad_ones_refused() {
        let plain = Settings::parse("postgres://u:secret@h/db?sslmode=disable&connect_timeout=3").unwrap();
        assert!(plain.tls.is_none());
        assert_eq!(plain.config.get_ssl_mode(), SslMode::Disable);
        assert_eq!(plain.config.get_connect_timeout(), Some(&std::time::Duration::from_secs(3)));
        let default = Settings::parse("postgres://u@h/db").unwrap();
        assert_eq!(default.config.get_ssl_mode(), SslMode::Prefer);
        assert!(default.tls.is_some(), "TLS when the server offers it");
        assert_eq!(
            Settings::parse("postgres://u@h/db?sslmode=require").unwrap().config.get_ssl_mode(),
            SslMode::Require
        );

        let bad = Settings::parse("postgres://u:secret@h/db?sslmode=sometimes").err().unwrap().to_string();
        assert!(bad.contains("sslmode=sometimes is not one of"), "{bad}");
        assert!(!bad.contains("secret"), "the password is never shown: {bad}");
        let missing = Settings::parse("postgres://u@h/db?sslmode=verify-full&sslrootcert=%2Fno%2Fsuch.pem");
        let missing = missing.err().unwrap().to_string();
        assert!(missing.contains("sslrootcert=/no/such.pem"), "{missing}");
        assert!(decode("%zz").is_err());

        let allow = Settings::parse("postgres://u@h/db?sslmode=allow").unwrap();
        assert!(allow.plain_first && allow.tls.is_some(), "plain text first, TLS held ready");
        assert_eq!(allow.config.get_ssl_mode(), SslMode::Disable);
        assert!(!default.plain_first);
    }

    #[test]
    fn system_authorities_ask_for_the_full_check_as_in_libpq() {
        let error = |url: &str| Settings::parse(url).err().expect("refused").to_string();
        assert!(error("postgres://u@h/db?sslrootcert=system&sslmode=require").contains("needs sslmode=verify-full"));
        assert!(error("postgres://u@h/db?sslrootcert=system&sslmode=verify-ca").contains("needs sslmode=verify-full"));
        // The system's store may be empty on a bare machine: then it says so.
        match Settings::parse("postgres://u@h/db?sslrootcert=system") {
            Ok(settings) => assert_eq!(settings.config.get_ssl_mode(), SslMode::Require),
            Err(e) => assert!(e.to_string().contains("no trusted authorities on this system"), "{e}"),
        }
    }

    #[test]
    fn a_client_certificate_needs_its_key_kept_private() {
        let dir = tempfile::tempdir().unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["client".to_owned()]).unwrap().self_signed(&key).unwrap();
        let (cert_file, key_file) = (dir.path().join("client.crt"), dir.path().join("client.key"));
        std::fs::write(&cert_file, cert.pem()).unwrap();
        std::fs::write(&key_file, key.serialize_pem()).unwrap();
        let url =
            format!("postgres://u@h/db?sslmode=require&sslcert={}&sslkey={}", cert_file.display(), key_file.display());
        let set_mode = |mode| {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        set_mode(0o604);
        let open = Settings::parse(&url).err().expect("a key the world reads is refused").to_string();
        assert!(open.contains("is open to others (mode 604)"), "{open}");
        set_mode(0o600);
        assert!(Settings::parse(&url).unwrap().tls.is_some());

        let error = |url: &str| Settings::parse(url).err().expect("refused").to_string();
        let half = error(&format!("postgres://u@h/db?sslcert={}", cert_file.display()));
        assert!(half.contains("needs both sslcert and sslkey"), "{half}");
        assert!(error("postgres://u@h/db?sslpassword=x").contains("not supported"));
        assert!(Settings::parse("postgres://u@h/db?sslpassword=").is_ok(), "an empty one asks for nothing");
        let folder = error(&format!("{url}&sslkey={}", dir.path().display()));
        assert!(folder.contains("is not a regular file"), "{folder}");
        let plain = error(&format!("{url}&sslmode=disable"));
        assert!(plain.contains("sends no client certificate"), "{plain}");
        std::fs::write(&key_file, "not a key").unwrap();
        assert!(error(&url).contains(&format!("sslkey={}", key_file.display())));
    }
}
