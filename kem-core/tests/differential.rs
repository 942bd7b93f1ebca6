//! Differential test: every backend produces the same bytes as the portable
//! reference for 10,000 random cases per parameter set (see [`cases`]) — keys from random
//! seeds (generated and re-parsed), encapsulations with random messages
//! (from cached and from parsed keys), and decapsulations of the valid
//! ciphertext, of a copy with one random bit flipped, and of random bytes.

// The `pub fn`s are test entry points for `libtest_tests!` (the
// single-threaded runner calls them too); their names say what they check.
#![allow(missing_docs)]

mod backends;
mod libtest_tests;

use kem_core::{
    with_backend, BackendKind, Ciphertext, DecapsulationKey, EncapsulationKey, MlKem1024, MlKem512,
    MlKem768, ParameterSet,
};
use sha3::digest::{ExtendableOutput, Update, XofReader};
use sha3::Shake128;

/// Cases per parameter set: 10,000, or `MLKEM_DIFFERENTIAL_CASES` (the
/// emulated AArch64 run takes fewer).
fn cases() -> usize {
    std::env::var("MLKEM_DIFFERENTIAL_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000)
}

/// Everything one case produces, as bytes.
#[derive(Debug, PartialEq)]
struct Outputs {
    ek: Vec<u8>,
    dk: Vec<u8>,
    ct: Vec<u8>,
    shared: [u8; 32],
    from_parsed_key: (Vec<u8>, [u8; 32]),
    decaps_valid: [u8; 32],
    decaps_flipped: [u8; 32],
    decaps_random: [u8; 32],
}

fn run_case<P: ParameterSet>(seed: &[u8], m: &[u8; 32], flip: usize, random_ct: &[u8]) -> Outputs {
    let dk = DecapsulationKey::<P>::from_seed(seed).unwrap();
    let ek = dk.encapsulation_key();
    let (ct, shared) = ek.encapsulate_deterministic(m);
    let parsed_ek = EncapsulationKey::<P>::from_bytes(ek.as_bytes()).unwrap();
    let (ct2, shared2) = parsed_ek.encapsulate_deterministic(m);
    let parsed_dk = DecapsulationKey::<P>::from_bytes(dk.to_bytes().as_ref()).unwrap();
    let mut flipped = ct.as_bytes().to_vec();
    flipped[flip / 8 % P::CT_LEN] ^= 1 << (flip % 8);
    let decaps = |bytes: &[u8]| {
        *parsed_dk
            .decapsulate(&Ciphertext::from_bytes(bytes).unwrap())
            .as_bytes()
    };
    Outputs {
        ek: ek.as_bytes().to_vec(),
        dk: dk.to_bytes().as_ref().to_vec(),
        ct: ct.as_bytes().to_vec(),
        shared: *shared.as_bytes(),
        from_parsed_key: (ct2.as_bytes().to_vec(), *shared2.as_bytes()),
        decaps_valid: *dk.decapsulate(&ct).as_bytes(),
        decaps_flipped: decaps(&flipped),
        decaps_random: decaps(random_ct),
    }
}

fn compare_backends<P: ParameterSet>() {
    // On a CPU with portable alone this compares portable with itself:
    // MLKEM_EXPECT_BACKENDS (set by CI) says whether that is all it has.
    let backends = backends::backends_to_exercise();
    let mut stream = Shake128::default().chain(P::NAME.as_bytes()).finalize_xof();
    let mut seed = [0u8; 64];
    let mut m = [0u8; 32];
    let mut flip = [0u8; 4];
    let mut random_ct = vec![0u8; P::CT_LEN];
    for case in 0..cases() {
        stream.read(&mut seed);
        stream.read(&mut m);
        stream.read(&mut flip);
        stream.read(&mut random_ct);
        let flip = u32::from_le_bytes(flip) as usize;
        let run = |kind: BackendKind| {
            with_backend(kind, || run_case::<P>(&seed, &m, flip, &random_ct)).unwrap()
        };
        let reference = run(BackendKind::Portable);
        assert_eq!(reference.decaps_valid, reference.shared);
        assert_ne!(reference.decaps_flipped, reference.shared);
        for &kind in &backends[1..] {
            assert_eq!(
                run(kind),
                reference,
                "{} case {case}: {kind} differs",
                P::NAME
            );
        }
    }
    backends.into_iter().for_each(backends::record_exercised);
}

pub fn every_backend_matches_portable_ml_kem_512() {
    compare_backends::<MlKem512>();
}

pub fn every_backend_matches_portable_ml_kem_768() {
    compare_backends::<MlKem768>();
}

pub fn every_backend_matches_portable_ml_kem_1024() {
    compare_backends::<MlKem1024>();
}

libtest_tests::libtest_tests!(
    every_backend_matches_portable_ml_kem_512,
    every_backend_matches_portable_ml_kem_768,
    every_backend_matches_portable_ml_kem_1024,
);
