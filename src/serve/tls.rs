//! TLS (rustls with the ring provider) and client authentication: a client certificate
//! verified against `--client-ca-file` (what kube-scheduler's extender `tlsConfig` can
//! present), or a bearer token from `--token-file` compared in constant time.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use std::path::Path;
use std::sync::Arc;
use subtle::ConstantTimeEq;

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Reads every certificate of a PEM file.
pub fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no certificate in the file", path.display()));
    }
    Ok(certs)
}

/// The server's TLS configuration: its certificate chain and key, and, with a client CA,
/// client certificates verified against it (optional when a token is also accepted).
pub fn server_config(cert: &Path, key: &Path, client_ca: Option<&Path>, token_too: bool) -> Result<Arc<ServerConfig>, String> {
    let chain = read_certs(cert)?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("{}: {e}", key.display()))?;
    let builder = ServerConfig::builder_with_provider(provider()).with_safe_default_protocol_versions().map_err(|e| e.to_string())?;
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for c in read_certs(ca)? {
                roots.add(c).map_err(|e| format!("{}: {e}", ca.display()))?;
            }
            let v = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider());
            let v = if token_too { v.allow_unauthenticated() } else { v };
            builder.with_client_cert_verifier(v.build().map_err(|e| format!("{}: {e}", ca.display()))?)
        }
    };
    let mut config = builder.with_single_cert(chain, key).map_err(|e| format!("{}: {e}", cert.display()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The bearer token of a token file (surrounding whitespace dropped; empty is an error).
pub fn read_token(path: &Path) -> Result<String, String> {
    let t = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let t = t.trim().to_string();
    if t.is_empty() {
        return Err(format!("{}: empty token", path.display()));
    }
    Ok(t)
}

/// Whether the `Authorization` header carries the token (constant time in the token).
pub fn bearer_matches(header: Option<&str>, token: &str) -> bool {
    let Some(given) = header.and_then(|h| h.strip_prefix("Bearer ")) else { return false };
    given.trim().as_bytes().ct_eq(token.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens() {
        assert!(bearer_matches(Some("Bearer s3cret"), "s3cret"));
        assert!(!bearer_matches(Some("Bearer s3cre"), "s3cret"));
        assert!(!bearer_matches(Some("Basic s3cret"), "s3cret"));
        assert!(!bearer_matches(None, "s3cret"));
    }
}
