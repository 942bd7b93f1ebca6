//! Which group a handshake negotiated, checked against the group table.

use std::ffi::{c_int, c_long};

use foreign_types_shared::ForeignTypeRef;
use openssl::ssl::SslRef;
use openssl_sys as ffi;

use crate::ffi::{SSL_CTRL_GET_NEGOTIATED_GROUP, TLSEXT_NID_UNKNOWN};

/// The groups whose negotiation can be checked exactly: OpenSSL's names and
/// the other spellings our provider also registers (oqsprovider's and
/// crypto-policies'; names compare without case, so `mlkem768` is
/// `MLKEM768`), the TLS code point and the NID libssl reports (`NID_undef` where it reports
/// [`TLSEXT_NID_UNKNOWN`] | the code point instead).
pub(crate) const KNOWN_GROUPS: [(&str, u16, c_int); 11] = [
    ("X25519", 0x001d, ffi::NID_X25519),
    ("X448", 0x001e, ffi::NID_X448),
    (
        "P-256 secp256r1 prime256v1",
        0x0017,
        ffi::NID_X9_62_prime256v1,
    ),
    ("P-384 secp384r1", 0x0018, ffi::NID_secp384r1),
    ("P-521 secp521r1", 0x0019, ffi::NID_secp521r1),
    ("MLKEM512", 0x0200, ffi::NID_undef),
    ("MLKEM768", 0x0201, ffi::NID_undef),
    ("MLKEM1024", 0x0202, ffi::NID_undef),
    ("SecP256r1MLKEM768 p256_mlkem768", 0x11eb, ffi::NID_undef),
    ("X25519MLKEM768 x25519_mlkem768", 0x11ec, ffi::NID_undef),
    ("SecP384r1MLKEM1024 p384_mlkem1024", 0x11ed, ffi::NID_undef),
];

/// A [`KNOWN_GROUPS`] entry's code point and NID.
pub(crate) type KnownGroup = (u16, c_int);

pub(crate) fn known_group(name: &str) -> Option<KnownGroup> {
    let names = |g: &&(&str, u16, c_int)| g.0.split(" ").any(|n| n.eq_ignore_ascii_case(name));
    let found = KNOWN_GROUPS.iter().find(names);
    found.map(|&(_, code_point, nid)| (code_point, nid))
}

/// Whether `SSL_get_negotiated_group` reported `group`.
pub(crate) fn reports((code_point, nid): KnownGroup, reported: c_long) -> bool {
    (nid != ffi::NID_undef && reported == c_long::from(nid))
        || reported == TLSEXT_NID_UNKNOWN | c_long::from(code_point)
}

/// Checks that a finished handshake (TLS 1.3: the contexts allow no other)
/// negotiated `known`'s group.
pub(crate) fn check_group(ssl: &SslRef, known: Option<KnownGroup>) -> Result<(), String> {
    let null = std::ptr::null_mut();
    // SAFETY: a live SSL (borrowed); this control reads state and takes no
    // pointer.
    let reported = unsafe { ffi::SSL_ctrl(ssl.as_ptr(), SSL_CTRL_GET_NEGOTIATED_GROUP, 0, null) };
    match known.is_some_and(|k| !reports(k, reported)) {
        true => Err(format!("negotiated group {reported:#x}")),
        false => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_groups_match_what_libssl_reports() {
        let x25519 = known_group("x25519").unwrap();
        assert!(reports(x25519, 1034) && reports(x25519, 0x100_001d));
        assert!(!reports(x25519, 0x100_0201));
        let mlkem768 = known_group("MLKEM768").unwrap();
        assert!(reports(mlkem768, 0x100_0201) && !reports(mlkem768, 0x201));
        assert!(!reports(mlkem768, 0), "NID_undef is no group");
        assert_eq!(known_group("prime256v1").unwrap().0, 0x17);
        assert_eq!(known_group("X25519MLKEM768").unwrap().0, 0x11ec);
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
            assert_eq!(known_group(alias).map(|g| g.0), Some(code_point), "{alias}");
        }
        assert!(known_group("FFDHE2048").is_none());
    }
}
