//! NIST-format ML-KEM known-answer tests, byte for byte as liboqs
//! `tests/kat_kem <alg> [--all]` prints them (the PQCgenKAT_kem response
//! format without its `# <name>` header), and the SHA-256 digests liboqs
//! publishes for that text in `tests/KATs/kem/kats.json`.
//!
//! For each count the outer [`NistDrbg`] (seeded with the bytes 0..47) gives
//! a 48-byte `seed`; a DRBG seeded with it gives d ‖ z (one 64-byte call)
//! for KeyGen_internal, then m (one 32-byte call) for Encaps_internal. Each
//! entry is six lines, `count = N` then `seed`, `pk`, `sk` (the expanded
//! dk), `ct` and `ss` as `label = <uppercase hex>`; entries are separated
//! by one empty line, and the text ends with the last `ss` line.

use core::fmt::Write as _;

use kem_core::{DecapsulationKey, ParameterSet, SEED_LEN};

use crate::nist_drbg::{NistDrbg, ENTROPY_LEN};
use crate::with_set;

/// Number of entries in liboqs's "all" output for ML-KEM (`max_kats`).
pub const KAT_COUNT: usize = 100;

/// Generates the first `count` entries of the NIST-format KAT for `P`,
/// exactly as liboqs `kat_kem` prints them (`count` = 1 is its "single"
/// output, [`KAT_COUNT`] its `--all` output, 0 the empty string).
///
/// # Panics
///
/// If decapsulating an entry's ciphertext does not give back its shared
/// secret (a bug in kem-core).
pub fn generate_kat<P: ParameterSet>(count: usize) -> String {
    let mut out = String::new();
    // The outer DRBG's entropy input is the bytes 0, 1, ..., 47.
    let mut outer = NistDrbg::new(&core::array::from_fn(|i| i as u8));
    for i in 0..count {
        let seed: [u8; ENTROPY_LEN] = outer.random_array();
        let mut drbg = NistDrbg::new(&seed);
        let dz: [u8; SEED_LEN] = drbg.random_array();
        let dk = DecapsulationKey::<P>::from_seed(&dz).expect("64-byte seed");
        let ek = dk.encapsulation_key();
        let (ct, ss) = ek.encapsulate_deterministic(&drbg.random_array());
        let name = P::NAME;
        assert!(
            dk.decapsulate(&ct) == ss,
            "{name} KAT count {i}: Decaps(sk, ct) differs from the Encaps shared secret"
        );
        let separator = if i > 0 { "\n" } else { "" };
        let _ = writeln!(out, "{separator}count = {i}\nseed = {}", hex_upper(&seed));
        let sk = dk.to_bytes();
        let fields: [(&str, &[u8]); 4] = [
            ("pk", ek.as_bytes()),
            ("sk", sk.as_ref()),
            ("ct", ct.as_bytes()),
            ("ss", ss.as_bytes()),
        ];
        for (label, bytes) in fields {
            let _ = writeln!(out, "{label} = {}", hex_upper(bytes));
        }
    }
    out
}

/// `bytes` as uppercase hex without separators.
pub fn hex_upper(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02X}");
        out
    })
}

/// The SHA-256 digest of `text` (its UTF-8 bytes) as lowercase hex, the
/// form `sha256sum` and liboqs's `kats.json` use.
pub fn sha256_hex(text: &str) -> String {
    hex_upper(&openssl::sha::sha256(text.as_bytes())).to_ascii_lowercase()
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
        let named = |set: &Self| name == &set.name()[7..] || name.eq_ignore_ascii_case(set.name());
        Self::ALL.into_iter().find(named)
    }

    /// The FIPS 203 name, e.g. `"ML-KEM-768"` (also liboqs's name).
    pub fn name(self) -> &'static str {
        with_set!(self, P => P::NAME)
    }

    /// The SHA-256 liboqs publishes in `tests/KATs/kem/kats.json` (FIPS 203
    /// final entries, liboqs commit dc4deaa4e194, 2024-08-27) for this set's
    /// `count`-entry text: count 1 (`kat_kem <alg>`) and [`KAT_COUNT`]
    /// (`kat_kem <alg> --all`) only.
    pub fn expected_digest(self, count: usize) -> Option<&'static str> {
        let [single, all] = match self {
            Self::MlKem512 => [
                "c70041a761e01cd6426fa60e9fd6a4412c2be817386c8d0f3334898082512782",
                "74b470e797cbdbd589a31d387d36c72aad5033446ab5159bf4014c24652b1173",
            ],
            Self::MlKem768 => [
                "5352539586b6c3df58be6158a6250aeff402bd73060b0a3de68850ac074c17c3",
                "e5d6911117c708d8342702db222f66bef5ac5b0314fb8bc36eb22a536c9b34fb",
            ],
            Self::MlKem1024 => [
                "f580d851e5fb27e6876e5e203fa18be4cdbfd49e05d48fec3d3992c8f43a13e6",
                "81d1ae0468f62154885b6f2a293c0eb48f9339645357a88bbbc186c57ab0ace0",
            ],
        };
        match count {
            1 => Some(single),
            KAT_COUNT => Some(all),
            _ => None,
        }
    }

    /// [`generate_kat`] for this set.
    pub fn generate(self, count: usize) -> String {
        with_set!(self, P => generate_kat::<P>(count))
    }
}
