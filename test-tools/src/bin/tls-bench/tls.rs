//! The TLS contexts: one group, TLS 1.3 only, full handshakes, the server's
//! self-signed certificate.

use std::ffi::CStr;
use std::marker::PhantomData;

use openssl::error::ErrorStack;
use openssl::ssl::{
    SslContext, SslContextBuilder, SslMethod, SslOptions, SslSessionCacheMode, SslVerifyMode,
    SslVersion,
};
use openssl::{asn1::Asn1Time, bn::BigNum, ec, hash::MessageDigest, nid::Nid, pkey, x509};
use test_tools::evp_harness::{clear_openssl_errors, take_openssl_errors, Library};

use crate::ffi::SSL_CTX_new_ex;

/// The server's certificate and key.
pub(crate) struct Identity {
    pub(crate) certificate: x509::X509,
    pub(crate) key: pkey::PKey<pkey::Private>,
}

/// A self-signed P-256 ECDSA certificate for `localhost`, valid for a day.
pub(crate) fn self_signed() -> Result<Identity, ErrorStack> {
    let curve = ec::EcGroup::from_curve_name(Nid::X9_62_PRIME256V1)?;
    let key = pkey::PKey::from_ec_key(ec::EcKey::generate(&curve)?)?;
    let mut name = x509::X509Name::builder()?;
    name.append_entry_by_text("CN", "localhost")?;
    let name = name.build();
    let mut cert = x509::X509::builder()?;
    cert.set_version(2)?;
    cert.set_serial_number(&*BigNum::from_u32(1)?.to_asn1_integer()?)?;
    cert.set_subject_name(&name)?;
    cert.set_issuer_name(&name)?;
    cert.set_pubkey(&key)?;
    cert.set_not_before(&*Asn1Time::days_from_now(0)?)?;
    cert.set_not_after(&*Asn1Time::days_from_now(1)?)?;
    cert.sign(&key, MessageDigest::sha256())?;
    let certificate = cert.build();
    Ok(Identity { certificate, key })
}

/// An `SSL_CTX` made in a [`Library`]'s context (which must outlive it).
pub(crate) struct TlsContext<'l>(pub(crate) SslContext, PhantomData<&'l Library>);

impl<'l> TlsContext<'l> {
    /// A TLS 1.3-only context offering (client) or accepting (server, with
    /// `identity`) exactly `group`, with tickets and session caching off.
    pub(crate) fn new(
        library: &'l Library,
        propquery: Option<&CStr>,
        group: &str,
        identity: Option<&Identity>,
    ) -> Result<TlsContext<'l>, String> {
        let (side, method) = match identity {
            Some(_) => ("server", SslMethod::tls_server()),
            None => ("client", SslMethod::tls_client()),
        };
        let propquery = propquery.map_or(std::ptr::null(), CStr::as_ptr);
        clear_openssl_errors();
        // SAFETY: a live library context (borrowed for 'l), a
        // NUL-terminated property query or NULL, and a static method.
        let raw = unsafe { SSL_CTX_new_ex(library.as_ptr(), propquery, method.as_ptr()) };
        if raw.is_null() {
            return Err(format!("{side} SSL_CTX_new_ex: {}", take_openssl_errors()));
        }
        // SAFETY: a new SSL_CTX that nothing else owns; the builder frees it.
        let mut builder = unsafe { SslContextBuilder::from_ptr(raw) };
        builder
            .set_groups_list(group)
            .map_err(|e| format!("{side} group {group}: {e}"))?;
        configure(&mut builder, identity).map_err(|e| format!("{side} context: {e}"))?;
        Ok(TlsContext(builder.build(), PhantomData))
    }
}

/// TLS 1.3 only, no tickets, no session cache; the server's `identity`.
pub(crate) fn configure(
    builder: &mut SslContextBuilder,
    identity: Option<&Identity>,
) -> Result<(), ErrorStack> {
    builder.set_min_proto_version(Some(SslVersion::TLS1_3))?;
    builder.set_max_proto_version(Some(SslVersion::TLS1_3))?;
    builder.set_session_cache_mode(SslSessionCacheMode::OFF);
    builder.set_options(SslOptions::NO_TICKET);
    let Some(identity) = identity else {
        // The certificate is not what is measured; the client still checks
        // the server's CertificateVerify signature.
        builder.set_verify(SslVerifyMode::NONE);
        return Ok(());
    };
    builder.set_num_tickets(0)?;
    builder.set_certificate(&identity.certificate)?;
    builder.set_private_key(&identity.key)?;
    builder.check_private_key()
}
