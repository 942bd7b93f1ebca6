//! The TLS 1.3 named groups the mlkem provider and its tools know, in one
//! table: OpenSSL's name and the other spellings of each, its IANA code
//! point, its kind of key exchange, and whether the mlkem provider offers it.
//!
//! The provider registers its TLS groups from here, `mlkem-provider-check`
//! names what it sees on the wire from here, and `tls-bench` checks every
//! handshake's group against it. `groups.tsv` beside this crate is the same
//! table for the scripts (`scripts/compat/tlswatch.py`, `scripts/groups.sh`);
//! it is written from [`GROUPS`] ([`tsv`]), and this crate's tests fail while
//! it is stale: `TLS_GROUPS_WRITE=1 cargo test -p tls-groups` rewrites it.
//! A new group or spelling is one entry here.

use core::ffi::CStr;

/// What a group's key exchange is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Elliptic-curve or finite-field Diffie-Hellman alone.
    Classical,
    /// ML-KEM alone.
    MlKem,
    /// ML-KEM and an elliptic-curve Diffie-Hellman together.
    Hybrid,
}

impl Kind {
    /// The name `groups.tsv` writes.
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::Classical => "classical",
            Kind::MlKem => "ml-kem",
            Kind::Hybrid => "hybrid",
        }
    }
}

/// A TLS named group.
#[derive(Debug, PartialEq, Eq)]
pub struct Group {
    /// OpenSSL's name (OpenSSL 3.5's, the one `Groups =` lines take), then
    /// the other spellings of the same group that configurations use:
    /// oqsprovider's and crypto-policies' for the post-quantum groups (which
    /// the mlkem provider registers too), OpenSSL's older names for the
    /// curves. Names compare without case.
    pub names: &'static [&'static CStr],
    /// Its IANA code point, as it appears on the wire.
    pub code_point: u16,
    /// Its kind of key exchange.
    pub kind: Kind,
    /// The first OpenSSL major version on which the mlkem provider offers it
    /// as a TLS group; `None` where it never does (OpenSSL's own groups).
    pub mlkem_provider: Option<u32>,
}

impl Group {
    /// OpenSSL's name.
    pub const fn name(&self) -> &'static str {
        utf8(self.names[0])
    }

    /// The other spellings.
    pub fn aliases(&self) -> impl Iterator<Item = &'static str> {
        self.names[1..].iter().map(|&n| utf8(n))
    }

    /// Whether `name` is one of its spellings (compared without case).
    pub fn is_named(&self, name: &str) -> bool {
        self.names
            .iter()
            .any(|&n| utf8(n).eq_ignore_ascii_case(name))
    }

    /// Whether its key exchange includes ML-KEM.
    pub const fn post_quantum(&self) -> bool {
        !matches!(self.kind, Kind::Classical)
    }

    /// Whether the mlkem provider offers it on every OpenSSL 3 and later.
    pub const fn offered_everywhere(&self) -> bool {
        matches!(self.mlkem_provider, Some(3))
    }
}

const fn utf8(name: &'static CStr) -> &'static str {
    match name.to_str() {
        Ok(name) => name,
        Err(_) => panic!("group names are ASCII"),
    }
}

const fn group(
    names: &'static [&'static CStr],
    code_point: u16,
    kind: Kind,
    mlkem_provider: Option<u32>,
) -> Group {
    Group {
        names,
        code_point,
        kind,
        mlkem_provider,
    }
}

const fn classical(names: &'static [&'static CStr], code_point: u16) -> Group {
    group(names, code_point, Kind::Classical, None)
}

/// X25519MLKEM768 (draft-ietf-tls-ecdhe-mlkem).
pub const X25519_MLKEM768: Group = group(
    &[c"X25519MLKEM768", c"x25519_mlkem768"],
    0x11ec,
    Kind::Hybrid,
    Some(3),
);
/// SecP256r1MLKEM768 (draft-ietf-tls-ecdhe-mlkem).
pub const SECP256R1_MLKEM768: Group = group(
    &[c"SecP256r1MLKEM768", c"p256_mlkem768"],
    0x11eb,
    Kind::Hybrid,
    Some(3),
);
/// SecP384r1MLKEM1024 (draft-ietf-tls-ecdhe-mlkem).
pub const SECP384R1_MLKEM1024: Group = group(
    &[c"SecP384r1MLKEM1024", c"p384_mlkem1024"],
    0x11ed,
    Kind::Hybrid,
    Some(3),
);
/// OpenSSL 4.0's SM2 hybrid, which the provider offers there.
pub const CURVE_SM2_MLKEM768: Group = group(&[c"curveSM2MLKEM768"], 0x11ee, Kind::Hybrid, Some(4));
/// ML-KEM-512 alone (draft-ietf-tls-mlkem).
pub const MLKEM512: Group = group(&[c"MLKEM512", c"mlkem512"], 0x0200, Kind::MlKem, Some(3));
/// ML-KEM-768 alone (draft-ietf-tls-mlkem).
pub const MLKEM768: Group = group(&[c"MLKEM768", c"mlkem768"], 0x0201, Kind::MlKem, Some(3));
/// ML-KEM-1024 alone (draft-ietf-tls-mlkem).
pub const MLKEM1024: Group = group(&[c"MLKEM1024", c"mlkem1024"], 0x0202, Kind::MlKem, Some(3));

/// Every group, the post-quantum ones first in the order of preference
/// (hybrids first, the order `mlkem-provider-check` tries them in), then
/// the classical ones by code point.
pub static GROUPS: [Group; 20] = [
    X25519_MLKEM768,
    SECP256R1_MLKEM768,
    SECP384R1_MLKEM1024,
    MLKEM768,
    MLKEM1024,
    MLKEM512,
    CURVE_SM2_MLKEM768,
    classical(&[c"P-256", c"secp256r1", c"prime256v1"], 0x0017),
    classical(&[c"P-384", c"secp384r1"], 0x0018),
    classical(&[c"P-521", c"secp521r1"], 0x0019),
    classical(&[c"X25519"], 0x001d),
    classical(&[c"X448"], 0x001e),
    classical(&[c"brainpoolP256r1tls13"], 0x001f),
    classical(&[c"brainpoolP384r1tls13"], 0x0020),
    classical(&[c"brainpoolP512r1tls13"], 0x0021),
    classical(&[c"ffdhe2048"], 0x0100),
    classical(&[c"ffdhe3072"], 0x0101),
    classical(&[c"ffdhe4096"], 0x0102),
    classical(&[c"ffdhe6144"], 0x0103),
    classical(&[c"ffdhe8192"], 0x0104),
];

/// The group with this code point.
pub fn by_code_point(code_point: u16) -> Option<&'static Group> {
    GROUPS.iter().find(|g| g.code_point == code_point)
}

/// The group one of whose spellings is `name` (compared without case).
pub fn named(name: &str) -> Option<&'static Group> {
    GROUPS.iter().find(|g| g.is_named(name))
}

/// The post-quantum groups the mlkem provider offers on every OpenSSL 3, in
/// the order of preference.
pub fn offered_everywhere() -> impl Iterator<Item = &'static Group> {
    GROUPS.iter().filter(|g| g.offered_everywhere())
}

/// [`GROUPS`] as `groups.tsv` writes it: a comment, then one line per group
/// of tab-separated name, code point (`0x11ec`), kind, the OpenSSL major
/// from which the mlkem provider offers it (`-`: never) and the other
/// spellings (comma-separated, `-`: none).
pub fn tsv() -> String {
    let mut out = String::from(
        "# Written from tls-groups/src/lib.rs (TLS_GROUPS_WRITE=1 cargo test -p tls-groups);\n\
         # edit that, not this. Tab-separated; names compare without case.\n\
         # name\tcode_point\tkind\tmlkem_provider\taliases\n",
    );
    for g in &GROUPS {
        let since = g.mlkem_provider.map_or("-".to_owned(), |v| v.to_string());
        let aliases: Vec<&str> = g.aliases().collect();
        let aliases = match aliases.is_empty() {
            true => "-".to_owned(),
            false => aliases.join(","),
        };
        out.push_str(&format!(
            "{}\t{:#06x}\t{}\t{since}\t{aliases}\n",
            g.name(),
            g.code_point,
            g.kind.as_str()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_code_points_are_unique() {
        for (i, a) in GROUPS.iter().enumerate() {
            for b in &GROUPS[i + 1..] {
                assert_ne!(a.code_point, b.code_point, "{}", a.name());
                for name in b.names {
                    assert!(!a.is_named(utf8(name)), "{name:?} twice");
                }
            }
        }
    }

    #[test]
    fn lookups() {
        assert_eq!(by_code_point(0x11ec), Some(&X25519_MLKEM768));
        assert_eq!(named("p384_MLKEM1024").map(|g| g.code_point), Some(0x11ed));
        assert_eq!(named("prime256v1").map(Group::name), Some("P-256"));
        assert_eq!(named("mlkem512").map(|g| g.kind), Some(Kind::MlKem));
        assert!(named("p521_mlkem1024").is_none() && by_code_point(0x2f3a).is_none());
        let offered: Vec<&str> = offered_everywhere().map(Group::name).collect();
        assert_eq!(
            offered,
            [
                "X25519MLKEM768",
                "SecP256r1MLKEM768",
                "SecP384r1MLKEM1024",
                "MLKEM768",
                "MLKEM1024",
                "MLKEM512"
            ]
        );
        assert!(X25519_MLKEM768.post_quantum() && !named("X25519").unwrap().post_quantum());
    }

    /// `groups.tsv` is [`tsv`]; `TLS_GROUPS_WRITE=1` rewrites it.
    #[test]
    fn groups_tsv_is_up_to_date() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/groups.tsv");
        let written = std::fs::read_to_string(path).unwrap_or_default();
        if written != tsv() && std::env::var_os("TLS_GROUPS_WRITE").is_some() {
            std::fs::write(path, tsv()).expect("write groups.tsv");
            return;
        }
        assert!(
            written == tsv(),
            "{path} is stale: run `TLS_GROUPS_WRITE=1 cargo test -p tls-groups`"
        );
    }
}
