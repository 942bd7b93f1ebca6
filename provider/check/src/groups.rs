//! TLS 1.3 named groups by IANA code point: the names an administrator
//! reads, and which ones are post-quantum.

/// A TLS named group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    /// OpenSSL's name for it (the one `Groups =` lines take).
    pub name: &'static str,
    /// Its IANA code point, as it appears on the wire.
    pub codepoint: u16,
    /// Whether its key exchange includes ML-KEM.
    pub post_quantum: bool,
    /// The other spelling the mlkem provider registers for it (oqsprovider's
    /// and crypto-policies'), if any.
    pub alias: Option<&'static str>,
}

const fn group(name: &'static str, codepoint: u16, post_quantum: bool) -> Group {
    Group {
        name,
        codepoint,
        post_quantum,
        alias: None,
    }
}

const fn aliased(name: &'static str, alias: &'static str, codepoint: u16) -> Group {
    Group {
        alias: Some(alias),
        ..group(name, codepoint, true)
    }
}

/// The post-quantum groups the mlkem provider offers, hybrids first: the
/// order the check tries them in and the order of preference in its
/// conclusion.
pub const POST_QUANTUM: [Group; 6] = [
    aliased("X25519MLKEM768", "x25519_mlkem768", 0x11ec),
    aliased("SecP256r1MLKEM768", "p256_mlkem768", 0x11eb),
    aliased("SecP384r1MLKEM1024", "p384_mlkem1024", 0x11ed),
    aliased("MLKEM768", "mlkem768", 0x0201),
    aliased("MLKEM1024", "mlkem1024", 0x0202),
    aliased("MLKEM512", "mlkem512", 0x0200),
];

const CLASSICAL: [Group; 13] = [
    group("P-256", 0x0017, false),
    group("P-384", 0x0018, false),
    group("P-521", 0x0019, false),
    group("X25519", 0x001d, false),
    group("X448", 0x001e, false),
    group("brainpoolP256r1tls13", 0x001f, false),
    group("brainpoolP384r1tls13", 0x0020, false),
    group("brainpoolP512r1tls13", 0x0021, false),
    group("ffdhe2048", 0x0100, false),
    group("ffdhe3072", 0x0101, false),
    group("ffdhe4096", 0x0102, false),
    group("ffdhe6144", 0x0103, false),
    group("ffdhe8192", 0x0104, false),
];

/// OpenSSL 4.0's SM2 hybrid, which the provider also offers there.
const OTHER_POST_QUANTUM: [Group; 1] = [group("curveSM2MLKEM768", 0x11ee, true)];

/// The group with this code point, if it is one this table knows.
pub fn by_codepoint(codepoint: u16) -> Option<Group> {
    POST_QUANTUM
        .iter()
        .chain(&CLASSICAL)
        .chain(&OTHER_POST_QUANTUM)
        .find(|g| g.codepoint == codepoint)
        .copied()
}

/// The post-quantum group a `Groups` entry names: OpenSSL's name or the
/// alias, in any case, with a leading `?` (OpenSSL 3.3+: "if known") or `*`
/// (3.5+: "send a key share") ignored.
pub fn post_quantum_named(entry: &str) -> Option<Group> {
    let name = entry.trim().trim_start_matches(['?', '*']);
    POST_QUANTUM
        .iter()
        .find(|g| {
            g.name.eq_ignore_ascii_case(name)
                || g.alias.is_some_and(|a| a.eq_ignore_ascii_case(name))
        })
        .copied()
}

/// The group's name, or its code point in hex (`0x2f3a`) when unknown.
pub fn name(codepoint: u16) -> String {
    by_codepoint(codepoint).map_or_else(|| format!("{codepoint:#06x}"), |g| g.name.to_owned())
}

/// Whether the group with this code point is post-quantum (unknown code
/// points count as classical: nothing says otherwise).
pub fn is_post_quantum(codepoint: u16) -> bool {
    by_codepoint(codepoint).is_some_and(|g| g.post_quantum)
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
                post_quantum_named(entry).map(|g| g.codepoint),
                Some(codepoint),
                "{entry}"
            );
        }
        assert!(post_quantum_named("X25519").is_none());
        assert!(post_quantum_named("p521_mlkem1024").is_none());
    }

    #[test]
    fn code_points_are_unique() {
        let all: Vec<u16> = POST_QUANTUM
            .iter()
            .chain(&CLASSICAL)
            .chain(&OTHER_POST_QUANTUM)
            .map(|g| g.codepoint)
            .collect();
        for (i, a) in all.iter().enumerate() {
            assert!(!all[i + 1..].contains(a), "{a:#06x} twice");
        }
    }
}
