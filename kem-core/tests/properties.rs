//! Properties of the public API for all three parameter sets: round trips,
//! implicit rejection of corrupted ciphertexts, the FIPS 203 input checks
//! and their typed errors, and the use of the caller's random source.

// The `pub fn`s are test entry points for `libtest_tests!` (the
// single-threaded runner calls them too); their names say what they check.
#![allow(missing_docs)]

mod backends;
mod libtest_tests;

use backends::for_each_backend;
use kem_core::{
    Ciphertext, DecapsulationKey, EncapsulationKey, Error, MlKem1024, MlKem512, MlKem768,
    ParameterSet,
};
use sha3::digest::{ExtendableOutput, Update, XofReader};
use sha3::{Shake128, Shake256};

/// A deterministic random source: one SHAKE-128 stream per label.
fn stream(label: &str) -> impl FnMut(&mut [u8]) -> Result<(), Error> {
    let mut xof = Shake128::default();
    xof.update(label.as_bytes());
    let mut reader = xof.finalize_xof();
    move |buf: &mut [u8]| {
        reader.read(buf);
        Ok(())
    }
}

/// J(z ‖ c) = SHAKE256(z ‖ c, 32), computed independently of kem-core.
fn implicit_rejection_secret(z: &[u8], c: &[u8]) -> [u8; 32] {
    let mut xof = Shake256::default();
    xof.update(z);
    xof.update(c);
    let mut out = [0u8; 32];
    xof.finalize_xof().read(&mut out);
    out
}

fn round_trips<P: ParameterSet>() {
    let mut rng = stream(P::NAME);
    for _ in 0..200 {
        let dk = DecapsulationKey::<P>::generate(&mut rng).unwrap();
        let ek = EncapsulationKey::<P>::from_bytes(dk.encapsulation_key().as_bytes()).unwrap();
        assert_eq!(&ek, dk.encapsulation_key());
        let (ct, k) = ek.encapsulate(&mut rng).unwrap();
        assert_eq!(ct.as_bytes().len(), P::CT_LEN);
        let ct = Ciphertext::<P>::from_bytes(ct.as_bytes()).unwrap();
        assert_eq!(dk.decapsulate(&ct), k);

        // The expanded form parses back to an equivalent key without a seed.
        let bytes = dk.to_bytes();
        let parsed = DecapsulationKey::<P>::from_bytes(bytes.as_ref()).unwrap();
        assert!(dk.seed().is_some());
        assert!(parsed.seed().is_none());
        assert_eq!(parsed.to_bytes().as_ref(), bytes.as_ref());
        assert_eq!(parsed.decapsulate(&ct), k);
        assert_eq!(parsed.encapsulation_key(), dk.encapsulation_key());
    }
}

pub fn keys_and_ciphertexts_round_trip() {
    for_each_backend(|| {
        round_trips::<MlKem512>();
        round_trips::<MlKem768>();
        round_trips::<MlKem1024>();
    });
}

fn corrupted_ciphertexts_are_implicitly_rejected<P: ParameterSet>() {
    let dk = DecapsulationKey::<P>::from_seed_parts(&[0x11; 32], &[0x22; 32]);
    let z = &dk.to_bytes().as_ref()[P::DK_LEN - 32..].to_vec();
    assert_eq!(z, &[0x22; 32]);
    let (ct, k) = dk
        .encapsulation_key()
        .encapsulate_deterministic(&[0x33; 32]);
    // Every byte position class: first, inside c1, c1/c2 boundary, last.
    let c1_len = P::CT_LEN - 32 * P::DV;
    for position in [0, 1, c1_len / 2, c1_len - 1, c1_len, P::CT_LEN - 1] {
        for bit in [0u8, 3, 7] {
            let mut bytes = ct.as_bytes().to_vec();
            bytes[position] ^= 1 << bit;
            let bad = Ciphertext::<P>::from_bytes(&bytes).unwrap();
            let k1 = dk.decapsulate(&bad);
            let k2 = dk.decapsulate(&bad);
            assert_eq!(k1, k2, "rejection must be deterministic");
            assert_ne!(k1, k, "{} byte {position} bit {bit}", P::NAME);
            assert_eq!(k1.as_bytes(), &implicit_rejection_secret(z, &bytes));
        }
    }
}

pub fn flipped_ciphertext_bits_yield_the_implicit_rejection_secret() {
    for_each_backend(|| {
        corrupted_ciphertexts_are_implicitly_rejected::<MlKem512>();
        corrupted_ciphertexts_are_implicitly_rejected::<MlKem768>();
        corrupted_ciphertexts_are_implicitly_rejected::<MlKem1024>();
    });
}

fn length_error(what: &'static str, expected: usize, actual: usize) -> Error {
    Error::InvalidLength {
        what,
        expected,
        actual,
    }
}

fn parsers_reject_bad_inputs<P: ParameterSet>() {
    // Wrong lengths: empty, and one off either side.
    let wrong = |len: usize| [0, len - 1, len + 1];
    for len in wrong(P::EK_LEN) {
        assert_eq!(
            EncapsulationKey::<P>::from_bytes(&vec![0; len]).unwrap_err(),
            length_error("encapsulation key", P::EK_LEN, len)
        );
    }
    for len in wrong(P::DK_LEN) {
        assert_eq!(
            DecapsulationKey::<P>::from_bytes(&vec![0; len]).unwrap_err(),
            length_error("decapsulation key", P::DK_LEN, len)
        );
    }
    for len in wrong(P::CT_LEN) {
        assert_eq!(
            Ciphertext::<P>::from_bytes(&vec![0; len]).unwrap_err(),
            length_error("ciphertext", P::CT_LEN, len)
        );
    }
    for len in [0, 32, 63, 65] {
        assert_eq!(
            DecapsulationKey::<P>::from_seed(&vec![0; len]).unwrap_err(),
            length_error("seed", 64, len)
        );
    }

    let dk = DecapsulationKey::<P>::from_seed_parts(&[1; 32], &[2; 32]);
    let ek = dk.encapsulation_key().as_bytes().to_vec();
    let dk_bytes = dk.to_bytes().as_ref().to_vec();
    let t_len = 384 * P::K;

    // Section 7.2: a coefficient equal to q (0xD01 in 12 bits) fails.
    let mut bad_ek = ek.clone();
    bad_ek[t_len - 3] = 0x01;
    bad_ek[t_len - 2] = (bad_ek[t_len - 2] & 0xf0) | 0x0d;
    assert_eq!(
        EncapsulationKey::<P>::from_bytes(&bad_ek).unwrap_err(),
        Error::EncapsulationKeyNotReduced
    );
    // ρ is not checked: any value is valid.
    let mut other_rho = ek.clone();
    other_rho[P::EK_LEN - 1] ^= 0xff;
    assert!(EncapsulationKey::<P>::from_bytes(&other_rho).is_ok());

    // Section 7.3: the stored H(ek) must match the embedded ek.
    let h_at = 2 * t_len + 32;
    let mut bad_hash = dk_bytes.clone();
    bad_hash[h_at] ^= 1;
    assert_eq!(
        DecapsulationKey::<P>::from_bytes(&bad_hash).unwrap_err(),
        Error::DecapsulationKeyHashMismatch
    );
    let mut bad_embedded_ek = dk_bytes.clone();
    bad_embedded_ek[t_len + 5] ^= 1;
    assert_eq!(
        DecapsulationKey::<P>::from_bytes(&bad_embedded_ek).unwrap_err(),
        Error::DecapsulationKeyHashMismatch
    );
    // An unreduced secret coefficient (4095) is refused.
    let mut bad_secret = dk_bytes.clone();
    bad_secret[0] = 0xff;
    bad_secret[1] |= 0x0f;
    assert_eq!(
        DecapsulationKey::<P>::from_bytes(&bad_secret).unwrap_err(),
        Error::DecapsulationKeyNotReduced
    );
    // z is not checked.
    let mut other_z = dk_bytes.clone();
    other_z[P::DK_LEN - 1] ^= 0xff;
    assert!(DecapsulationKey::<P>::from_bytes(&other_z).is_ok());

    // The one-shot decapsulation applies the same checks, with the same
    // errors, and otherwise gives parse-then-decapsulate's secret, for a
    // valid and a modified (implicitly rejected) ciphertext.
    let ct = dk.encapsulation_key().encapsulate_deterministic(&[3; 32]).0;
    let mut modified = ct.as_bytes().to_vec();
    modified[7] ^= 0x40;
    let modified = Ciphertext::<P>::from_bytes(&modified).unwrap();
    let once = |dk: &[u8], ct: &Ciphertext<P>| DecapsulationKey::<P>::decapsulate_bytes(dk, ct);
    for bad in [&bad_hash, &bad_embedded_ek, &bad_secret] {
        assert_eq!(
            once(bad, &ct).unwrap_err(),
            DecapsulationKey::<P>::from_bytes(bad).unwrap_err()
        );
    }
    assert_eq!(
        once(&dk_bytes[1..], &ct).unwrap_err(),
        length_error("decapsulation key", P::DK_LEN, P::DK_LEN - 1)
    );
    for key in [&dk_bytes, &other_z] {
        let parsed = DecapsulationKey::<P>::from_bytes(key).unwrap();
        for c in [&ct, &modified] {
            let got = once(key, c).unwrap();
            assert_eq!(got.as_bytes(), parsed.decapsulate(c).as_bytes());
        }
    }
}

pub fn parsers_apply_the_fips_203_input_checks() {
    for_each_backend(|| {
        parsers_reject_bad_inputs::<MlKem512>();
        parsers_reject_bad_inputs::<MlKem768>();
        parsers_reject_bad_inputs::<MlKem1024>();
    });
}

pub fn parsers_never_panic_on_arbitrary_bytes() {
    for_each_backend(|| {
        let mut rng = stream("arbitrary");
        for len in (0..3200)
            .step_by(7)
            .chain([800, 1184, 1568, 1632, 2400, 3168, 768, 1088])
        {
            let mut bytes = vec![0u8; len];
            rng(&mut bytes).unwrap();
            let _ = EncapsulationKey::<MlKem768>::from_bytes(&bytes);
            let _ = DecapsulationKey::<MlKem1024>::from_bytes(&bytes);
            let _ = DecapsulationKey::<MlKem512>::from_seed(&bytes);
            if let Ok(ct) = Ciphertext::<MlKem768>::from_bytes(&bytes) {
                let dk = DecapsulationKey::<MlKem768>::from_seed_parts(&[0; 32], &[0; 32]);
                let _ = dk.decapsulate(&ct);
            }
        }
    });
}

pub fn randomness_comes_from_the_caller_in_fips_203_order() {
    for_each_backend(|| {
        // KeyGen draws d ‖ z in one 64-byte call; Encaps draws m in one call.
        let mut requests = Vec::new();
        let mut inner = stream("order");
        let mut recording = |buf: &mut [u8]| {
            requests.push(buf.len());
            inner(buf)
        };
        let dk = DecapsulationKey::<MlKem768>::generate(&mut recording).unwrap();
        let (ct, k) = dk.encapsulation_key().encapsulate(&mut recording).unwrap();
        assert_eq!(requests, [64, 32]);

        let mut replay = stream("order");
        let mut seed = [0u8; 64];
        let mut m = [0u8; 32];
        replay(&mut seed).unwrap();
        replay(&mut m).unwrap();
        let expected = DecapsulationKey::<MlKem768>::from_seed(&seed).unwrap();
        assert_eq!(expected.seed(), Some(&seed));
        assert_eq!(expected.to_bytes().as_ref(), dk.to_bytes().as_ref());
        let (ct2, k2) = expected.encapsulation_key().encapsulate_deterministic(&m);
        assert_eq!((ct2, k2), (ct, k));
    });
}

pub fn a_failing_random_source_is_reported() {
    for_each_backend(|| {
        let mut failing = |_: &mut [u8]| Err(Error::RandomSource);
        assert_eq!(
            DecapsulationKey::<MlKem512>::generate(&mut failing).unwrap_err(),
            Error::RandomSource
        );
        let dk = DecapsulationKey::<MlKem512>::from_seed_parts(&[0; 32], &[0; 32]);
        assert_eq!(
            dk.encapsulation_key()
                .encapsulate(&mut failing)
                .unwrap_err(),
            Error::RandomSource
        );
    });
}

pub fn errors_explain_themselves() {
    let message = length_error("ciphertext", 1088, 5).to_string();
    assert_eq!(
        message,
        "invalid ciphertext length: expected 1088 bytes, got 5"
    );
    assert!(Error::EncapsulationKeyNotReduced
        .to_string()
        .contains("modulus check"));
    assert!(Error::DecapsulationKeyHashMismatch
        .to_string()
        .contains("hash check"));
}

libtest_tests::libtest_tests!(
    keys_and_ciphertexts_round_trip,
    flipped_ciphertext_bits_yield_the_implicit_rejection_secret,
    parsers_apply_the_fips_203_input_checks,
    parsers_never_panic_on_arbitrary_bytes,
    randomness_comes_from_the_caller_in_fips_203_order,
    a_failing_random_source_is_reported,
    errors_explain_themselves,
);
