//! NIST-format ML-KEM known-answer tests, byte for byte as liboqs
//! `tests/kat_kem <alg> [--all]` prints them (the PQCgenKAT_kem response
//! format without its `# <name>` header), and the SHA-256 digests liboqs
//! publishes for that text in `tests/KATs/kem/kats.json`.
//!
//! For each count the outer [`NistDrbg`] (seeded with the bytes 0..47) gives
//! a 48-byte `seed`. A DRBG seeded with it gives d ‖ z (one 64-byte call) for
//! KeyGen_internal and then m (one 32-byte call) for Encaps_internal. Each
//! entry is six lines:
//!
//! ```text
//! count = 0
//! seed = <96 hex>
//! pk = <ek>
//! sk = <expanded dk>
//! ct = <ciphertext>
//! ss = <K>
//! ```
//!
//! Hex is uppercase, lines end in `\n`, entries are separated by one empty
//! line, and the text ends with the last `ss` line.

use core::fmt::Write as _;

use kem_core::{DecapsulationKey, MlKem1024, MlKem512, MlKem768, ParameterSet, SEED_LEN};

use crate::nist_drbg::{NistDrbg, ENTROPY_LEN};

/// Number of entries in liboqs's "all" output for ML-KEM (`max_kats`).
pub const KAT_COUNT: usize = 100;

/// The entropy input of the outer DRBG: the bytes 0, 1, …, 47.
pub const KAT_ENTROPY_INPUT: [u8; ENTROPY_LEN] = {
    let mut e = [0u8; ENTROPY_LEN];
    let mut i = 0;
    while i < ENTROPY_LEN {
        e[i] = i as u8;
        i += 1;
    }
    e
};

/// Generates the first `count` entries of the NIST-format KAT for `P`,
/// exactly as liboqs `kat_kem` prints them (`count` = 1 is its "single"
/// output, `count` = [`KAT_COUNT`] its `--all` output). `count` = 0 gives
/// the empty string.
///
/// # Panics
///
/// If decapsulating an entry's ciphertext does not give back its shared
/// secret (a bug in kem-core).
pub fn generate_kat<P: ParameterSet>(count: usize) -> String {
    // Every entry is "count = ", six labels, the hex values and newlines.
    let entry_len = 96 + 2 * (P::EK_LEN + P::DK_LEN + P::CT_LEN + 32) + 48;
    let mut out = String::with_capacity(count * entry_len);
    let mut outer = NistDrbg::new(&KAT_ENTROPY_INPUT);
    for i in 0..count {
        if i > 0 {
            out.push('\n');
        }
        let seed: [u8; ENTROPY_LEN] = outer.random_array();
        write_entry::<P>(&mut out, i, &seed);
    }
    out
}

/// Appends the entry numbered `count` whose per-entry DRBG seed is `seed`.
fn write_entry<P: ParameterSet>(out: &mut String, count: usize, seed: &[u8; ENTROPY_LEN]) {
    let mut drbg = NistDrbg::new(seed);
    let dz: [u8; SEED_LEN] = drbg.random_array();
    let dk = DecapsulationKey::<P>::from_seed(&dz).expect("64-byte seed");
    let ek = dk.encapsulation_key();
    let m: [u8; 32] = drbg.random_array();
    let (ct, ss) = ek.encapsulate_deterministic(&m);
    assert!(
        dk.decapsulate(&ct) == ss,
        "{} KAT count {count}: Decaps(sk, ct) differs from the Encaps shared secret",
        P::NAME
    );

    writeln!(out, "count = {count}").expect("writing to a String");
    push_line(out, "seed", seed);
    push_line(out, "pk", ek.as_bytes());
    push_line(out, "sk", dk.to_bytes().as_ref());
    push_line(out, "ct", ct.as_bytes());
    push_line(out, "ss", ss.as_bytes());
}

/// Appends `label = <HEX>\n`.
fn push_line(out: &mut String, label: &str, bytes: &[u8]) {
    out.push_str(label);
    out.push_str(" = ");
    push_hex_upper(out, bytes);
    out.push('\n');
}

/// Appends `bytes` as uppercase hex without separators.
fn push_hex_upper(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    out.reserve(2 * bytes.len());
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0F)]));
    }
}

/// `bytes` as uppercase hex without separators.
pub fn hex_upper(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(2 * bytes.len());
    push_hex_upper(&mut s, bytes);
    s
}

/// The SHA-256 digest of `text` (its UTF-8 bytes) as lowercase hex, the
/// form `sha256sum` and liboqs's `kats.json` use.
pub fn sha256_hex(text: &str) -> String {
    openssl::sha::sha256(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The digests liboqs publishes for one parameter set in
/// `tests/KATs/kem/kats.json` (FIPS 203 final entries, added in liboqs
/// commit dc4deaa4e194, 2024-08-27).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiboqsDigests {
    /// SHA-256 of the count-0 entry alone (`kat_kem <alg>`).
    pub single: &'static str,
    /// SHA-256 of counts 0..99 (`kat_kem <alg> --all`).
    pub all: &'static str,
}

/// One of the three ML-KEM parameter sets, chosen at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KatParams {
    /// ML-KEM-512.
    MlKem512,
    /// ML-KEM-768.
    MlKem768,
    /// ML-KEM-1024.
    MlKem1024,
}

impl KatParams {
    /// All three sets, in increasing order of security.
    pub const ALL: [KatParams; 3] = [Self::MlKem512, Self::MlKem768, Self::MlKem1024];

    /// The set for `"512"`, `"768"` or `"1024"` (also accepted with an
    /// `ML-KEM-` prefix, case-insensitive).
    pub fn from_name(name: &str) -> Option<Self> {
        let bare = if name.len() >= 7 && name[..7].eq_ignore_ascii_case("ML-KEM-") {
            &name[7..]
        } else {
            name
        };
        match bare {
            "512" => Some(Self::MlKem512),
            "768" => Some(Self::MlKem768),
            "1024" => Some(Self::MlKem1024),
            _ => None,
        }
    }

    /// The FIPS 203 name, e.g. `"ML-KEM-768"` (also liboqs's name).
    pub fn name(self) -> &'static str {
        match self {
            Self::MlKem512 => MlKem512::NAME,
            Self::MlKem768 => MlKem768::NAME,
            Self::MlKem1024 => MlKem1024::NAME,
        }
    }

    /// The published liboqs digests of this set's KAT text.
    pub fn liboqs_digests(self) -> LiboqsDigests {
        match self {
            Self::MlKem512 => LiboqsDigests {
                single: "c70041a761e01cd6426fa60e9fd6a4412c2be817386c8d0f3334898082512782",
                all: "74b470e797cbdbd589a31d387d36c72aad5033446ab5159bf4014c24652b1173",
            },
            Self::MlKem768 => LiboqsDigests {
                single: "5352539586b6c3df58be6158a6250aeff402bd73060b0a3de68850ac074c17c3",
                all: "e5d6911117c708d8342702db222f66bef5ac5b0314fb8bc36eb22a536c9b34fb",
            },
            Self::MlKem1024 => LiboqsDigests {
                single: "f580d851e5fb27e6876e5e203fa18be4cdbfd49e05d48fec3d3992c8f43a13e6",
                all: "81d1ae0468f62154885b6f2a293c0eb48f9339645357a88bbbc186c57ab0ace0",
            },
        }
    }

    /// The published digest for a `count`-entry text: `single` for 1, `all`
    /// for [`KAT_COUNT`], none otherwise.
    pub fn expected_digest(self, count: usize) -> Option<&'static str> {
        let digests = self.liboqs_digests();
        match count {
            1 => Some(digests.single),
            KAT_COUNT => Some(digests.all),
            _ => None,
        }
    }

    /// [`generate_kat`] for this set.
    pub fn generate(self, count: usize) -> String {
        match self {
            Self::MlKem512 => generate_kat::<MlKem512>(count),
            Self::MlKem768 => generate_kat::<MlKem768>(count),
            Self::MlKem1024 => generate_kat::<MlKem1024>(count),
        }
    }
}
