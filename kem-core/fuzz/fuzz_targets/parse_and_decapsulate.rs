//! Fuzz target: arbitrary bytes as ML-KEM encapsulation keys, decapsulation
//! keys, seeds and ciphertexts, run on every backend this CPU has.
//!
//! Input layout: one selector byte, then a body.
//!
//! - `selector % 3` picks the parameter set (ML-KEM-512, -768, -1024);
//! - `selector / 3 % 3` says what the body holds, each field taken in order
//!   at its length for the set (a short body leaves the last field short):
//!   - 0: `ek ‖ m`: `EncapsulationKey::from_bytes`, then
//!     `encapsulate_deterministic(m)`;
//!   - 1: `dk ‖ ct ‖ m`: `DecapsulationKey::from_bytes`, then
//!     `decapsulate(ct)` and `decapsulate(encapsulate(m))`;
//!   - 2: `seed ‖ ct ‖ m`: `DecapsulationKey::from_seed`, its expanded form
//!     parsed back, then the same operations.
//!
//! `m` is zero-padded to 32 bytes. Checked, besides "never panics":
//!
//! - a parse succeeds exactly when FIPS 203's input checks (sections 7.2
//!   and 7.3, recomputed here independently: lengths, coefficients below q,
//!   SHA3-256 of the embedded ek) pass, and fails with the error they name;
//! - a parsed key re-encodes to the input bytes;
//! - `decapsulate(encapsulate(m))` gives the sender's secret for every key
//!   made from a seed (and the result is recorded for parsed keys, which
//!   need not be consistent pairs);
//! - every backend (portable, AVX2, AVX-512) gives the same bytes as the
//!   portable one, for every outcome above.

#![no_main]

use kem_core::{
    available_backends, with_backend, BackendKind, Ciphertext, DecapsulationKey, EncapsulationKey,
    Error, MlKem1024, MlKem512, MlKem768, ParameterSet, MESSAGE_LEN, SEED_LEN, SHARED_SECRET_LEN,
};
use libfuzzer_sys::fuzz_target;
use sha3::{Digest, Sha3_256};

/// The modulus q of FIPS 203.
const Q: u16 = 3329;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let mode = Mode::from_selector(selector);
    match selector % 3 {
        0 => check_all_backends::<MlKem512>(mode, body),
        1 => check_all_backends::<MlKem768>(mode, body),
        _ => check_all_backends::<MlKem1024>(mode, body),
    }
});

/// What the body holds.
#[derive(Clone, Copy, Debug)]
enum Mode {
    EncapsulationKey,
    DecapsulationKey,
    Seed,
}

impl Mode {
    fn from_selector(selector: u8) -> Self {
        match selector / 3 % 3 {
            0 => Self::EncapsulationKey,
            1 => Self::DecapsulationKey,
            _ => Self::Seed,
        }
    }
}

/// Everything a run observed, compared byte for byte between backends.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// The key input was rejected with this error.
    Rejected(Error),
    /// An encapsulation key parsed; the deterministic encapsulation.
    Encapsulated {
        ct: Vec<u8>,
        secret: [u8; SHARED_SECRET_LEN],
    },
    /// A decapsulation key parsed or was generated.
    Decapsulated(Decapsulation),
}

/// What was done with a decapsulation key.
#[derive(Debug, PartialEq, Eq)]
struct Decapsulation {
    /// The key's expanded encoding.
    dk: Vec<u8>,
    /// The encapsulation to its ek with m.
    ct: Vec<u8>,
    secret: [u8; SHARED_SECRET_LEN],
    /// Whether decapsulating `ct` gave back `secret`.
    round_trip: bool,
    /// The secret decapsulated from the input ciphertext, if it had the
    /// right length.
    input_ct_secret: Option<[u8; SHARED_SECRET_LEN]>,
}

/// Runs the input on the portable backend, then on every other available
/// one, and requires the same outcome from each.
fn check_all_backends<P: ParameterSet>(mode: Mode, body: &[u8]) {
    let run = |kind: BackendKind| {
        with_backend(kind, || outcome::<P>(mode, body)).expect("listed as available")
    };
    let reference = run(BackendKind::Portable);
    for kind in available_backends() {
        if kind != BackendKind::Portable {
            assert_eq!(
                run(kind),
                reference,
                "{} {mode:?}: {kind} differs from portable",
                P::NAME
            );
        }
    }
}

fn outcome<P: ParameterSet>(mode: Mode, body: &[u8]) -> Outcome {
    match mode {
        Mode::EncapsulationKey => encapsulation_key::<P>(body),
        Mode::DecapsulationKey => decapsulation_key::<P>(body),
        Mode::Seed => seed::<P>(body),
    }
}

fn encapsulation_key<P: ParameterSet>(body: &[u8]) -> Outcome {
    let (ek_bytes, rest) = take(body, P::EK_LEN);
    let parsed = EncapsulationKey::<P>::from_bytes(ek_bytes);
    assert_eq!(
        parsed.as_ref().err().copied(),
        expected_ek_error::<P>(ek_bytes),
        "{} encapsulation key checks",
        P::NAME
    );
    let ek = match parsed {
        Ok(ek) => ek,
        Err(error) => return Outcome::Rejected(error),
    };
    assert_eq!(ek.as_bytes(), ek_bytes, "ek re-encodes to its input");
    assert_eq!(ek.hash(), sha3_256(ek_bytes).as_slice(), "H(ek)");
    let (ct, secret) = ek.encapsulate_deterministic(&message(rest));
    Outcome::Encapsulated {
        ct: ct.as_bytes().to_vec(),
        secret: *secret.as_bytes(),
    }
}

fn decapsulation_key<P: ParameterSet>(body: &[u8]) -> Outcome {
    let (dk_bytes, rest) = take(body, P::DK_LEN);
    let parsed = DecapsulationKey::<P>::from_bytes(dk_bytes);
    assert_eq!(
        parsed.as_ref().err().copied(),
        expected_dk_error::<P>(dk_bytes),
        "{} decapsulation key checks",
        P::NAME
    );
    let dk = match parsed {
        Ok(dk) => dk,
        Err(error) => return Outcome::Rejected(error),
    };
    assert_eq!(
        dk.to_bytes().as_ref(),
        dk_bytes,
        "dk re-encodes to its input"
    );
    assert_eq!(dk.seed(), None, "a parsed expanded key has no seed");
    let ek_at = 384 * P::K;
    assert_eq!(
        dk.encapsulation_key().as_bytes(),
        &dk_bytes[ek_at..ek_at + P::EK_LEN],
        "the embedded ek"
    );
    Outcome::Decapsulated(use_decapsulation_key(&dk, rest))
}

fn seed<P: ParameterSet>(body: &[u8]) -> Outcome {
    let (seed, rest) = take(body, SEED_LEN);
    let dk = match DecapsulationKey::<P>::from_seed(seed) {
        Ok(dk) => dk,
        Err(error) => {
            assert_ne!(seed.len(), SEED_LEN, "a full seed is always accepted");
            return Outcome::Rejected(error);
        }
    };
    assert_eq!(dk.seed().map(|s| s.as_slice()), Some(seed));
    // The expanded form of a generated key must parse back to the same key.
    let expanded = dk.to_bytes();
    assert_eq!(expected_dk_error::<P>(expanded.as_ref()), None);
    let reparsed = DecapsulationKey::<P>::from_bytes(expanded.as_ref())
        .expect("a generated key's expanded form parses");
    assert_eq!(reparsed.to_bytes().as_ref(), expanded.as_ref());
    assert!(reparsed.encapsulation_key() == dk.encapsulation_key());

    let decapsulation = use_decapsulation_key(&dk, rest);
    assert!(
        decapsulation.round_trip,
        "decaps(encaps(m)) with a key from a seed"
    );
    assert_eq!(
        use_decapsulation_key(&reparsed, rest),
        decapsulation,
        "the reparsed expanded key behaves as the generated one"
    );
    Outcome::Decapsulated(decapsulation)
}

/// Encapsulates to the key's ek with m, decapsulates that, and decapsulates
/// the input ciphertext (the first `CT_LEN` bytes of `rest`).
fn use_decapsulation_key<P: ParameterSet>(dk: &DecapsulationKey<P>, rest: &[u8]) -> Decapsulation {
    let (ct_bytes, rest) = take(rest, P::CT_LEN);
    let (ct, secret) = dk
        .encapsulation_key()
        .encapsulate_deterministic(&message(rest));
    let round_trip = dk.decapsulate(&ct) == secret;
    let input_ct_secret = match Ciphertext::<P>::from_bytes(ct_bytes) {
        Ok(input_ct) => {
            assert_eq!(input_ct.as_bytes(), ct_bytes);
            let decapsulated = dk.decapsulate(&input_ct);
            if input_ct == ct {
                assert_eq!(decapsulated == secret, round_trip);
            }
            Some(*decapsulated.as_bytes())
        }
        Err(error) => {
            assert_eq!(
                error,
                Error::InvalidLength {
                    what: "ciphertext",
                    expected: P::CT_LEN,
                    actual: ct_bytes.len(),
                }
            );
            None
        }
    };
    Decapsulation {
        dk: dk.to_bytes().as_ref().to_vec(),
        ct: ct.as_bytes().to_vec(),
        secret: *secret.as_bytes(),
        round_trip,
        input_ct_secret,
    }
}

// ------------------------------------------------------------ the oracle
//
// FIPS 203's input checks, written out again from the standard, to tell
// what kem-core's parsers must answer.

/// The error `EncapsulationKey::from_bytes` must give for `ek`, if any.
fn expected_ek_error<P: ParameterSet>(ek: &[u8]) -> Option<Error> {
    if ek.len() != P::EK_LEN {
        return Some(Error::InvalidLength {
            what: "encapsulation key",
            expected: P::EK_LEN,
            actual: ek.len(),
        });
    }
    (!all_below_q(&ek[..384 * P::K])).then_some(Error::EncapsulationKeyNotReduced)
}

/// The error `DecapsulationKey::from_bytes` must give for `dk`, if any:
/// the hash check first, then the embedded ek's modulus check, then ŝ's.
fn expected_dk_error<P: ParameterSet>(dk: &[u8]) -> Option<Error> {
    if dk.len() != P::DK_LEN {
        return Some(Error::InvalidLength {
            what: "decapsulation key",
            expected: P::DK_LEN,
            actual: dk.len(),
        });
    }
    let (dk_pke, rest) = dk.split_at(384 * P::K);
    let (ek, rest) = rest.split_at(P::EK_LEN);
    let stored_hash = &rest[..32];
    if sha3_256(ek).as_slice() != stored_hash {
        return Some(Error::DecapsulationKeyHashMismatch);
    }
    if !all_below_q(&ek[..384 * P::K]) {
        return Some(Error::EncapsulationKeyNotReduced);
    }
    (!all_below_q(dk_pke)).then_some(Error::DecapsulationKeyNotReduced)
}

/// Whether every 12-bit little-endian coefficient of `encoded`
/// (ByteEncode_12 output, a multiple of 3 bytes) is below q.
fn all_below_q(encoded: &[u8]) -> bool {
    encoded.chunks_exact(3).all(|b| {
        let low = u16::from(b[0]) | (u16::from(b[1] & 0x0f) << 8);
        let high = u16::from(b[1] >> 4) | (u16::from(b[2]) << 4);
        low < Q && high < Q
    })
}

fn sha3_256(data: &[u8]) -> [u8; 32] {
    Sha3_256::digest(data).into()
}

// ------------------------------------------------------------ input helpers

/// The first `len` bytes of `input` (all of it if shorter) and the rest.
fn take(input: &[u8], len: usize) -> (&[u8], &[u8]) {
    input.split_at(len.min(input.len()))
}

/// The encapsulation randomness m: `rest`'s first 32 bytes, zero-padded.
fn message(rest: &[u8]) -> [u8; MESSAGE_LEN] {
    let mut m = [0u8; MESSAGE_LEN];
    let (given, _) = take(rest, MESSAGE_LEN);
    m[..given.len()].copy_from_slice(given);
    m
}
