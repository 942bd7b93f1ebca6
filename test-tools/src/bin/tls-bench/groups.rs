//! What a handshake used: the group it negotiated, checked against the
//! group table (the `tls-groups` crate, which the provider registers its
//! groups from), and the provider that served its key exchange.

use std::ffi::{c_long, CStr};

use openssl::ssl::SslRef;
use tls_groups::{Group, GROUPS};

use crate::ffi::{group_name, negotiated_group, provider_of};

/// libssl reports a group it has no NID for as this bit or'ed with the
/// group's TLS code point.
pub(crate) const TLSEXT_NID_UNKNOWN: c_long = 0x100_0000;

/// The group one of whose spellings is `name` (compared without case); an
/// error for a name the table does not know, whose negotiation could not
/// be checked.
pub(crate) fn known_group(name: &str) -> Result<&'static Group, String> {
    tls_groups::named(name).ok_or_else(|| {
        let known: Vec<&str> = GROUPS.iter().map(Group::name).collect();
        format!("unknown group {name:?} (known: {})", known.join(", "))
    })
}

/// The group `SSL_get_negotiated_group` reported: by its code point
/// (`TLSEXT_NID_UNKNOWN` | the code point), or by libssl's name for the NID.
fn reported_group(reported: c_long, name: Option<&str>) -> Option<&'static Group> {
    match reported & TLSEXT_NID_UNKNOWN != 0 {
        true => u16::try_from(reported & 0xffff)
            .ok()
            .and_then(tls_groups::by_code_point),
        false => name.and_then(tls_groups::named),
    }
}

/// Checks that a finished handshake (TLS 1.3: the contexts allow no other)
/// negotiated `expected`.
pub(crate) fn check_group(ssl: &SslRef, expected: &Group) -> Result<(), String> {
    let reported = negotiated_group(ssl);
    let name = group_name(ssl, reported).map(CStr::to_string_lossy);
    match reported_group(reported, name.as_deref()) {
        Some(group) if group.code_point == expected.code_point => Ok(()),
        Some(group) => Err(format!("negotiated {}", group.name())),
        None => Err(format!(
            "negotiated group {reported:#x} ({})",
            name.as_deref().unwrap_or("no name")
        )),
    }
}

/// Calls `f` with the provider that served a finished handshake's key
/// exchange, as this end saw it: the provider of the client's key share,
/// which the client generated (`SSL_get_tmp_key`) and the server parsed
/// (`SSL_get_peer_tmp_key`) with their SSL_CTX's library context and
/// property query (the KEM or key exchange then runs in the key's
/// provider); `None` where there is no key to tell it by.
fn served_by<R>(ssl: &SslRef, server: bool, f: impl FnOnce(Option<&CStr>) -> R) -> R {
    match server {
        true => f(ssl.peer_tmp_key().ok().as_deref().and_then(provider_of)),
        false => f(ssl.tmp_key().ok().as_deref().and_then(provider_of)),
    }
}

/// Checks that provider `expected` served a finished handshake's key
/// exchange, as this end saw it.
pub(crate) fn check_key_exchange(
    ssl: &SslRef,
    server: bool,
    expected: &CStr,
) -> Result<(), String> {
    served_by(ssl, server, |provider| match provider {
        Some(provider) if provider == expected => Ok(()),
        Some(provider) => Err(format!(
            "key exchange served by provider {}, not {}",
            provider.to_string_lossy(),
            expected.to_string_lossy()
        )),
        None => Err("no key share to tell the key exchange's provider by".to_owned()),
    })
}

/// The provider that served a finished handshake's key exchange, as this
/// end saw it.
pub(crate) fn key_exchange_provider(ssl: &SslRef, server: bool) -> Option<String> {
    served_by(ssl, server, |p| p.map(|p| p.to_string_lossy().into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_groups_by_code_point_or_name() {
        let named = |reported, name| reported_group(reported, name).map(Group::name);
        assert_eq!(named(0x100_11ec, None), Some("X25519MLKEM768"));
        assert_eq!(named(0x100_0201, Some("ignored")), Some("MLKEM768"));
        assert_eq!(named(0x100_2f3a, None), None);
        // NIDs, by libssl's names for them.
        assert_eq!(named(1034, Some("x25519")), Some("X25519"));
        assert_eq!(named(415, Some("secp256r1")), Some("P-256"));
        assert_eq!(named(0, None), None);
        assert_eq!(named(0x201, None), None, "a code point is no NID");
    }

    #[test]
    fn names_and_aliases_are_known() {
        assert_eq!(known_group("prime256v1").unwrap().code_point, 0x17);
        assert_eq!(known_group("X25519MLKEM768").unwrap().code_point, 0x11ec);
        // The other spellings the provider registers, each its IANA group.
        let aliases = [
            ("x25519_mlkem768", 0x11ec),
            ("p256_mlkem768", 0x11eb),
            ("p384_mlkem1024", 0x11ed),
            ("mlkem512", 0x0200),
            ("mlkem768", 0x0201),
            ("mlkem1024", 0x0202),
        ];
        for (alias, code_point) in aliases {
            assert_eq!(
                known_group(alias).map(|g| g.code_point),
                Ok(code_point),
                "{alias}"
            );
        }
        let unknown = known_group("BOGUS").unwrap_err();
        assert!(
            unknown.starts_with("unknown group \"BOGUS\" (known: X25519MLKEM768, "),
            "{unknown}"
        );
    }
}
