//! How a node reaches the PostgreSQL server: the URL's settings, with
//! `sslmode` and `sslrootcert` read the way libpq reads them, and TLS by
//! rustls. `disable` sends plain text; `prefer` (the default) and
//! `require` encrypt without checking the server's certificate (`prefer`
//! falls back to plain text when the server has no TLS; `require` with
//! `sslrootcert` checks the authority, as libpq's does); `verify-ca`
//! checks that a trusted authority signed it; `verify-full` checks that
//! and that it names the host. The authorities are those in the file
//! `sslrootcert` names, else the system's (libpq's default file,
//! `~/.postgresql/root.crt`, is not read; `sslrootcert=system` and
//! `sslmode=allow` are not supported).

use std::path::Path;
use std::sync::Arc;

use postgres::config::SslMode;
use postgres::NoTls;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
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
        let mut mode = "prefer".to_owned();
        let mut root_file: Option<String> = None;
        let mut kept: Vec<&str> = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "sslmode" => mode = value.to_owned(),
                "sslrootcert" => root_file = Some(decode(value).map_err(&bad)?),
                _ => kept.push(pair),
            }
        }
        let rest = if kept.is_empty() { base.to_owned() } else { format!("{base}?{}", kept.join("&")) };
        let mut config: postgres::Config =
            rest.parse().map_err(|e: postgres::Error| bad(crate::postgres::describe(&e)))?;
        let (ssl, check) = match mode.as_str() {
            "disable" => (SslMode::Disable, None),
            "prefer" => (SslMode::Prefer, Some(Check::Nothing)),
            // As libpq: with a root certificate file, `require` checks the authority.
            "require" if root_file.is_some() => (SslMode::Require, Some(Check::Authority)),
            "require" => (SslMode::Require, Some(Check::Nothing)),
            "verify-ca" => (SslMode::Require, Some(Check::Authority)),
            "verify-full" => (SslMode::Require, Some(Check::AuthorityAndHost)),
            other => {
                return Err(bad(format!(
                    "sslmode={other} is not one of disable, prefer, require, verify-ca, verify-full"
                )))
            }
        };
        config.ssl_mode(ssl);
        let tls = match check {
            None => None,
            Some(check) => Some(MakeRustlsConnect::new(client_config(check, root_file.as_deref()).map_err(&bad)?)),
        };
        Ok(Settings { config, tls })
    }

    /// A new connection to the server, secured as the settings say.
    pub(crate) fn connect(&self) -> Result<postgres::Client, postgres::Error> {
        match &self.tls {
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
/// `root_file`, else the system's.
fn client_config(check: Check, root_file: Option<&str>) -> Result<ClientConfig, String> {
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
    Ok(builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth())
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
    }
}
