//! The accumulated test (CCTV / pq-crystals recipe, "Recipe A" in
//! `../shared/vectors/ACCUMULATED.md`): N rounds of KeyGen_internal,
//! Encaps_internal and Decaps (valid and random ciphertexts) on inputs drawn
//! from one SHAKE-128 stream, every output absorbed into a second SHAKE-128
//! whose first 32 bytes must equal the published FIPS 203 final digest.
//! The digests are copied here from that file, so this test needs no files.

// The `pub fn`s are test entry points for `libtest_tests!` (the
// single-threaded runner calls them too); their names say what they check.
#![allow(missing_docs)]

mod backends;
mod libtest_tests;

use backends::for_each_backend;
use kem_core::{Ciphertext, DecapsulationKey, MlKem1024, MlKem512, MlKem768, ParameterSet};
use sha3::digest::{ExtendableOutput, Update, XofReader};
use sha3::Shake128;

fn accumulate<P: ParameterSet>(iterations: usize) -> String {
    let mut stream = Shake128::default().finalize_xof();
    let mut acc = Shake128::default();
    let mut d = [0u8; 32];
    let mut z = [0u8; 32];
    let mut m = [0u8; 32];
    let mut ct_rand = vec![0u8; P::CT_LEN];
    for _ in 0..iterations {
        stream.read(&mut d);
        stream.read(&mut z);
        let dk = DecapsulationKey::<P>::from_seed_parts(&d, &z);
        let ek = dk.encapsulation_key();
        stream.read(&mut m);
        let (ct, k) = ek.encapsulate_deterministic(&m);
        assert_eq!(
            dk.decapsulate(&ct),
            k,
            "{}: decapsulation disagrees",
            P::NAME
        );
        stream.read(&mut ct_rand);
        let k_rejected = dk.decapsulate(&Ciphertext::from_bytes(&ct_rand).unwrap());

        acc.update(ek.as_bytes());
        acc.update(dk.to_bytes().as_ref());
        acc.update(ct.as_bytes());
        acc.update(k.as_bytes());
        acc.update(k_rejected.as_bytes());
    }
    let mut digest = [0u8; 32];
    acc.finalize_xof().read(&mut digest);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn accumulated_100() {
    for_each_backend(|| {
        assert_eq!(
            accumulate::<MlKem512>(100),
            "449120c6e320ef3e9fbfa2316e5f2d2e1e6dd37d8ff5d086d5d2db7d42aff0a1"
        );
        assert_eq!(
            accumulate::<MlKem768>(100),
            "8d65b902f28edc683cebee2872962fd165a4d197c9e24ec74caa4470270df0b7"
        );
        assert_eq!(
            accumulate::<MlKem1024>(100),
            "c3ffe9ebecfa479c142656cbfbc6417efa05b77e994fe538eef4daed166363df"
        );
    });
}

pub fn accumulated_10k_ml_kem_512() {
    for_each_backend(|| {
        assert_eq!(
            accumulate::<MlKem512>(10_000),
            "705dcffc87f4e67e35a09dcaa31772e86f3341bd3ccf1e78a5fef99ae6a35a13"
        );
    });
}

pub fn accumulated_10k_ml_kem_768() {
    for_each_backend(|| {
        assert_eq!(
            accumulate::<MlKem768>(10_000),
            "f959d18d3d1180121433bf0e05f11e7908cf9d03edc150b2b07cb90bef5bc1c1"
        );
    });
}

pub fn accumulated_10k_ml_kem_1024() {
    for_each_backend(|| {
        assert_eq!(
            accumulate::<MlKem1024>(10_000),
            "e3bf82b013307b2e9d47dde791ff6dfc82e694e6382404abdb948b908b75bad5"
        );
    });
}

pub fn accumulated_1m_ml_kem_768() {
    for_each_backend(|| {
        assert_eq!(
            accumulate::<MlKem768>(1_000_000),
            "3b108396a277f2952ff3243a985c9709bcb95788c39b7b36a2c4e19d1a41e51e"
        );
    });
}

libtest_tests::libtest_tests!(
    accumulated_100,
    accumulated_10k_ml_kem_512,
    accumulated_10k_ml_kem_768,
    accumulated_10k_ml_kem_1024;
    ignored("1,000,000 rounds: run with --ignored (a few minutes in release)"):
    accumulated_1m_ml_kem_768,
);
