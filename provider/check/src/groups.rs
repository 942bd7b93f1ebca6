//! TLS 1.3 named groups by IANA code point: the names an administrator
//! reads, and which ones are post-quantum (the table is the `tls-groups`
//! crate's, which the provider registers its groups from).

use tls_groups::Group;

/// The post-quantum groups the mlkem provider offers on every OpenSSL 3,
/// hybrids first: the order the check tries them in and the order of
/// preference in its conclusion.
pub fn post_quantum() -> impl Iterator<Item = &'static Group> {
    tls_groups::offered_everywhere()
}

/// The post-quantum group a `Groups` entry names: OpenSSL's name or an
/// alias, in any case, with a leading `?` (OpenSSL 3.3+: "if known") or `*`
/// (3.5+: "send a key share") ignored.
pub fn post_quantum_named(entry: &str) -> Option<&'static Group> {
    let name = entry.trim().trim_start_matches(['?', '*']);
    post_quantum().find(|g| g.is_named(name))
}

/// The group's name, or its code point in hex (`0x2f3a`) when unknown.
pub fn name(codepoint: u16) -> String {
    tls_groups::by_code_point(codepoint)
        .map_or_else(|| format!("{codepoint:#06x}"), |g| g.name().to_owned())
}

/// Whether the group with this code point is post-quantum (unknown code
/// points count as classical: nothing says otherwise).
pub fn is_post_quantum(codepoint: u16) -> bool {
    tls_groups::by_code_point(codepoint).is_some_and(Group::post_quantum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_code_points_agree_with_iana() {
        assert_eq!(name(0x11ec), "X25519MLKEM768");
        assert_eq!(name(0x001d), "X25519");
        assert_eq!(name(0x0200), "MLKEM512");
        assert_eq!(name(0x2f3a), "0x2f3a");
        assert!(is_post_quantum(0x11ed));
        assert!(!is_post_quantum(0x0017));
        assert!(!is_post_quantum(0xabcd));
    }

    #[test]
    fn aliases_name_the_iana_groups() {
        for (entry, codepoint) in [
            ("x25519_mlkem768", 0x11ec),
            ("?p256_mlkem768", 0x11eb),
            ("P384_MLKEM1024", 0x11ed),
            ("mlkem512", 0x0200),
            ("*MLKEM768", 0x0201),
            ("mlkem1024", 0x0202),
        ] {
            assert_eq!(
                post_quantum_named(entry).map(|g| g.code_point),
                Some(codepoint),
                "{entry}"
            );
        }
        assert!(post_quantum_named("X25519").is_none());
        assert!(post_quantum_named("p521_mlkem1024").is_none());
        assert!(post_quantum_named("curveSM2MLKEM768").is_none());
    }
}
