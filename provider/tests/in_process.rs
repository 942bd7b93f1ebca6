//! In-process tests: the provider loaded into a fresh `OSSL_LIB_CTX` of this
//! process's libcrypto (the system OpenSSL 3.0, which has the EVP KEM API
//! but no ML-KEM of its own) and driven through EVP (the wrappers of
//! `common::evp`), with kem-core as the reference for every deterministic
//! value.
//!
//! Error checks read OpenSSL's (per-thread) error queue. The provider raises
//! each error through the instance that made the failing object
//! (`errors_are_raised_through_the_callers_instance` checks that with two
//! library contexts). `LIFECYCLE` additionally orders provider loading and
//! teardown against the EVP calls whose errors a test reads, so no test's
//! assertions depend on what other tests load at the same time.

mod common;

use std::collections::HashSet;
use std::ffi::c_int;
use std::ptr;
use std::sync::PoisonError;

use kem_core::{
    Ciphertext, DecapsulationKey, EncapsulationKey, MlKem1024, MlKem512, MlKem768, ParameterSet,
};
use openssl_sys as ffi;

use common::evp::{
    assert_bytes_eq, assert_bytes_ne, checked, clear_errors, cstring, message, reason_text,
    EVP_PKEY_CTX_new_from_pkey, Lib, MustFail, Pkey, PkeyCtx, LIFECYCLE,
};

// ------------------------------------------------------------------ contexts

/// ML-KEM's encapsulation and decapsulation: a 32-byte shared secret.
impl PkeyCtx<'_> {
    /// Encapsulates with buffers of the sizes the size query reports.
    #[track_caller]
    fn encapsulate(&self, ct_len: usize) -> (Vec<u8>, Vec<u8>) {
        self.try_encapsulate_into(ct_len, 32)
            .unwrap_or_else(|e| panic!("encapsulate failed:\n{e}"))
    }

    #[track_caller]
    fn decapsulate(&self, ct: &[u8]) -> Vec<u8> {
        self.try_decapsulate_into(ct, 32)
            .unwrap_or_else(|e| panic!("decapsulate failed:\n{e}"))
    }
}

// ------------------------------------------------------------------ expectations

/// One parameter set: names and the FIPS 203 / OpenSSL 3.5 figures.
struct Set {
    name: &'static str,
    alias: &'static str,
    oid: &'static str,
    ek_len: usize,
    dk_len: usize,
    ct_len: usize,
    bits: c_int,
    security_bits: c_int,
    category: c_int,
}

const SETS: [Set; 3] = [
    Set {
        name: "ML-KEM-512",
        alias: "MLKEM512",
        oid: "2.16.840.1.101.3.4.4.1",
        ek_len: 800,
        dk_len: 1632,
        ct_len: 768,
        bits: 512,
        security_bits: 128,
        category: 1,
    },
    Set {
        name: "ML-KEM-768",
        alias: "MLKEM768",
        oid: "2.16.840.1.101.3.4.4.2",
        ek_len: 1184,
        dk_len: 2400,
        ct_len: 1088,
        bits: 768,
        security_bits: 192,
        category: 3,
    },
    Set {
        name: "ML-KEM-1024",
        alias: "MLKEM1024",
        oid: "2.16.840.1.101.3.4.4.3",
        ek_len: 1568,
        dk_len: 3168,
        ct_len: 1568,
        bits: 1024,
        security_bits: 256,
        category: 5,
    },
];

const ML_KEM_768: &Set = &SETS[1];

/// A fixed 64-byte seed d ‖ z.
fn seed(fill: u8) -> [u8; 64] {
    std::array::from_fn(|i| (i as u8).wrapping_mul(31).wrapping_add(fill))
}

// ------------------------------------------------------------------ 1. round trip

#[test]
fn keygen_encapsulate_decapsulate_every_set() {
    let lib = Lib::new();
    for set in &SETS {
        let key = lib.keygen(set.name, None);
        assert!(key.is_a(set.name), "{} key is_a", set.name);
        assert_eq!(key.public().len(), set.ek_len, "{} ek length", set.name);
        assert_eq!(
            key.octets(c"priv").expect("priv").len(),
            set.dk_len,
            "{} dk length",
            set.name
        );

        let enc = lib.encapsulator(&key, None);
        assert_eq!(
            enc.encapsulate_sizes(),
            (set.ct_len, 32),
            "{} size query",
            set.name
        );
        let (ct, secret) = enc.encapsulate(set.ct_len);
        assert_eq!(ct.len(), set.ct_len);
        assert_eq!(secret.len(), 32);

        let dec = lib.decapsulator(&key);
        assert_eq!(
            dec.decapsulate_size(&ct),
            32,
            "{} decapsulate size query",
            set.name
        );
        assert_bytes_eq!(dec.decapsulate(&ct), secret, "{} shared secrets", set.name);

        // A second encapsulation draws fresh randomness.
        let (ct2, secret2) = enc.encapsulate(set.ct_len);
        assert_bytes_ne!(ct2, ct, "{} repeated ciphertext", set.name);
        assert_bytes_ne!(secret2, secret);
        assert_bytes_eq!(dec.decapsulate(&ct2), secret2);

        // Two generations give two keys.
        assert_bytes_ne!(lib.keygen(set.name, None).public(), key.public());
    }
}

#[test]
fn algorithm_found_by_alias_and_oid() {
    let lib = Lib::new();
    for set in &SETS {
        for name in [set.alias, set.oid, &set.name.to_ascii_lowercase()] {
            let key = lib
                .try_keygen(name, None)
                .unwrap_or_else(|e| panic!("keygen by '{name}' failed:\n{e}"));
            assert!(
                key.is_a(set.name),
                "key made by '{name}' is not {}",
                set.name
            );
            assert!(key.is_a(set.alias));
            assert_eq!(key.public().len(), set.ek_len, "key made by '{name}'");
            let (ct, secret) = lib.encapsulator(&key, None).encapsulate(set.ct_len);
            assert_eq!(ct.len(), set.ct_len);
            assert_bytes_eq!(lib.decapsulator(&key).decapsulate(&ct), secret);
        }
    }
    // A name no provider serves.
    assert!(lib.ctx_for("ML-KEM-2048").is_err());
}

// ------------------------------------------------------------------ 2. determinism

fn seeded_matches_kem_core<P: ParameterSet>(lib: &Lib, set: &Set) {
    assert_eq!(
        (P::EK_LEN, P::DK_LEN, P::CT_LEN),
        (set.ek_len, set.dk_len, set.ct_len)
    );
    let seed = seed(set.ct_len as u8);
    let reference = DecapsulationKey::<P>::from_seed(&seed).expect("kem-core key");

    let key = lib.keygen(set.name, Some(&seed));
    assert_bytes_eq!(
        key.public(),
        reference.encapsulation_key().as_bytes(),
        "{} pub",
        set.name
    );
    assert_bytes_eq!(
        key.octets(c"encoded-pub-key").expect("encoded-pub-key"),
        reference.encapsulation_key().as_bytes(),
        "{} encoded-pub-key",
        set.name
    );
    assert_bytes_eq!(
        key.octets(c"priv").expect("priv"),
        reference.to_bytes().as_ref(),
        "{} priv",
        set.name
    );
    assert_bytes_eq!(
        key.octets(c"seed").expect("seed"),
        seed,
        "{} seed",
        set.name
    );

    // ikme: a known m gives kem-core's ciphertext and secret.
    let m = message(set.bits as u8);
    let (ref_ct, ref_secret) = reference.encapsulation_key().encapsulate_deterministic(&m);
    let enc = lib.encapsulator(&key, Some(&m));
    let (ct, secret) = enc.encapsulate(set.ct_len);
    assert_bytes_eq!(ct, ref_ct.as_bytes(), "{} ikme ciphertext", set.name);
    assert_bytes_eq!(secret, ref_secret.as_bytes(), "{} ikme secret", set.name);

    // One-shot: the next encapsulation on the context is random again.
    let (ct2, secret2) = enc.encapsulate(set.ct_len);
    assert_bytes_ne!(ct2, ct, "{}: ikme was reused", set.name);
    assert_bytes_ne!(secret2, secret);
    let dec = lib.decapsulator(&key);
    assert_bytes_eq!(dec.decapsulate(&ct2), secret2);
    assert_bytes_eq!(dec.decapsulate(&ct), secret);

    // ikme set with EVP_PKEY_CTX_set_params after init works the same way.
    enc.set_params(&[(c"ikme", &m)]).expect("set ikme");
    let (ct3, secret3) = enc.encapsulate(set.ct_len);
    assert_bytes_eq!(ct3, ct, "{} ikme via set_params", set.name);
    assert_bytes_eq!(secret3, secret);

    // The generation seed is single use too: a context re-used for a second
    // generation makes a fresh key.
    let gen = lib.ctx_for(set.name).expect("context");
    // SAFETY: a live context.
    checked(|| unsafe { ffi::EVP_PKEY_keygen_init(gen.0) }).expect("keygen_init");
    gen.set_params(&[(c"seed", &seed)]).expect("set seed");
    let mut first = ptr::null_mut();
    let mut second = ptr::null_mut();
    // SAFETY: a live, initialised context and out-pointers.
    checked(|| unsafe { ffi::EVP_PKEY_keygen(gen.0, &mut first) }).expect("keygen");
    let first = Pkey::wrap(first);
    // SAFETY: as above.
    checked(|| unsafe { ffi::EVP_PKEY_keygen(gen.0, &mut second) }).expect("keygen");
    let second = Pkey::wrap(second);
    assert_bytes_eq!(first.public(), reference.encapsulation_key().as_bytes());
    assert_bytes_ne!(second.public(), first.public(), "{}: seed reused", set.name);
}

#[test]
fn seeded_keygen_and_ikme_match_kem_core() {
    let lib = Lib::new();
    seeded_matches_kem_core::<MlKem512>(&lib, &SETS[0]);
    seeded_matches_kem_core::<MlKem768>(&lib, &SETS[1]);
    seeded_matches_kem_core::<MlKem1024>(&lib, &SETS[2]);
}

#[test]
fn wrong_length_seed_and_ikme_rejected() {
    let lib = Lib::new();
    let set = ML_KEM_768;
    let errors = lib
        .try_keygen(set.name, Some(&[7u8; 63]))
        .must_fail("a 63-byte seed was accepted");
    errors.assert_reason("invalid length", Some("seed must be 64 bytes, got 63"));

    let key = lib.keygen(set.name, None);
    let errors = lib
        .try_encapsulator(&key, Some(&[1u8; 31]))
        .must_fail("a 31-byte ikme was accepted");
    errors.assert_reason("invalid length", Some("ikme must be 32 bytes, got 31"));
    let enc = lib.encapsulator(&key, None);
    enc.set_params(&[(c"ikme", &[1u8; 33])])
        .expect_err("a 33-byte ikme was accepted")
        .assert_reason("invalid length", Some("got 33"));

    // A rejected value clears an earlier good one, as in OpenSSL 3.5: the
    // encapsulation is random again, and the key is fresh.
    let m = message(1);
    let (fixed, _) = lib.encapsulator(&key, Some(&m)).encapsulate(set.ct_len);
    enc.set_params(&[(c"ikme", &m)]).expect("set ikme");
    enc.set_params(&[(c"ikme", &[1u8; 31])])
        .expect_err("a 31-byte ikme was accepted");
    let (ct, _) = enc.encapsulate(set.ct_len);
    assert_bytes_ne!(ct, fixed, "the rejected ikme left the earlier one in place");
    let seeded = lib.keygen(set.name, Some(&seed(5)));
    let gen = lib.ctx_for(set.name).expect("context");
    // SAFETY: a live context.
    checked(|| unsafe { ffi::EVP_PKEY_keygen_init(gen.0) }).expect("keygen_init");
    gen.set_params(&[(c"seed", &seed(5))]).expect("set seed");
    gen.set_params(&[(c"seed", &[7u8; 63])])
        .expect_err("a 63-byte seed was accepted");
    let mut fresh = ptr::null_mut();
    // SAFETY: a live, initialised context and an out-pointer.
    checked(|| unsafe { ffi::EVP_PKEY_keygen(gen.0, &mut fresh) }).expect("keygen");
    let fresh = Pkey::wrap(fresh);
    assert_bytes_ne!(
        fresh.public(),
        seeded.public(),
        "the rejected seed left the earlier one"
    );
}

/// OpenSSL 3.5 (`ml_kem_encapsulate`) answers the size query before it
/// touches the one-shot `ikme`, so the usual query-then-encapsulate sequence
/// after `EVP_PKEY_encapsulate_init(ctx, {ikme})` is deterministic.
#[test]

fn ikme_survives_size_query() {
    let lib = Lib::new();
    let seed = seed(3);
    let m = message(9);
    let reference = DecapsulationKey::<MlKem768>::from_seed(&seed).expect("kem-core key");
    let (ref_ct, ref_secret) = reference.encapsulation_key().encapsulate_deterministic(&m);

    let key = lib.keygen(ML_KEM_768.name, Some(&seed));
    let enc = lib.encapsulator(&key, Some(&m));
    let (ct_len, secret_len) = enc.encapsulate_sizes();
    let (ct, secret) = enc
        .try_encapsulate_into(ct_len, secret_len)
        .expect("encapsulate");
    assert_bytes_eq!(
        ct,
        ref_ct.as_bytes(),
        "ikme was dropped by the size query: the ciphertext is random"
    );
    assert_bytes_eq!(secret, ref_secret.as_bytes());
}

// ------------------------------------------------------------------ 3. import / export

/// A seeded key, its kem-core twin, and one encapsulation to it.
fn reference_768(fill: u8) -> (DecapsulationKey<MlKem768>, Vec<u8>, Vec<u8>) {
    let dk = DecapsulationKey::<MlKem768>::from_seed(&seed(fill)).expect("kem-core key");
    let (ct, secret) = dk
        .encapsulation_key()
        .encapsulate_deterministic(&message(fill));
    let (ct, secret) = (ct.as_bytes().to_vec(), secret.as_bytes().to_vec());
    (dk, ct, secret)
}

#[test]
fn import_public_only() {
    let lib = Lib::new();
    let (dk, _, _) = reference_768(1);
    let ek = dk.encapsulation_key().as_bytes();
    let original = lib.keygen(ML_KEM_768.name, Some(&seed(1)));

    let public = lib
        .fromdata(ML_KEM_768.name, ffi::EVP_PKEY_PUBLIC_KEY, &[(c"pub", ek)])
        .unwrap_or_else(|e| panic!("public import failed:\n{e}"));
    assert_bytes_eq!(public.public(), ek);
    assert!(
        public.octets(c"priv").is_none(),
        "a public key exports priv"
    );
    assert!(
        public.octets(c"seed").is_none(),
        "a public key exports seed"
    );
    // SAFETY: two live keys.
    assert_eq!(unsafe { ffi::EVP_PKEY_eq(public.0, original.0) }, 1);

    // It encapsulates (deterministically, to kem-core's values)...
    let m = message(5);
    let (ref_ct, ref_secret) = dk.encapsulation_key().encapsulate_deterministic(&m);
    let (ct, secret) = lib
        .encapsulator(&public, Some(&m))
        .encapsulate(ML_KEM_768.ct_len);
    assert_bytes_eq!(ct, ref_ct.as_bytes());
    assert_bytes_eq!(secret, ref_secret.as_bytes());
    let (ct, secret) = lib
        .encapsulator(&public, None)
        .encapsulate(ML_KEM_768.ct_len);
    assert_bytes_eq!(lib.decapsulator(&original).decapsulate(&ct), secret);

    // ...but cannot decapsulate.
    let errors = lib
        .try_decapsulator(&public)
        .must_fail("decapsulate_init accepted a public key");
    errors.assert_reason(
        "missing private key",
        Some("ML-KEM-768 key has no private part"),
    );

    // A keypair import of only `pub` is a public key too.
    let keypair_selected = lib
        .fromdata(ML_KEM_768.name, ffi::EVP_PKEY_KEYPAIR, &[(c"pub", ek)])
        .expect("keypair-selection import of pub");
    assert!(keypair_selected.octets(c"priv").is_none());
}

#[test]
fn import_private_only() {
    let lib = Lib::new();
    let (dk, _, _) = reference_768(2);
    let original = lib.keygen(ML_KEM_768.name, Some(&seed(2)));
    let priv_bytes = original.octets(c"priv").expect("priv");
    assert_bytes_eq!(priv_bytes, dk.to_bytes().as_ref());

    let private = lib
        .fromdata(
            ML_KEM_768.name,
            ffi::EVP_PKEY_KEYPAIR,
            &[(c"priv", &priv_bytes)],
        )
        .unwrap_or_else(|e| panic!("private import failed:\n{e}"));
    assert_bytes_eq!(private.public(), original.public(), "pub derived from priv");
    assert_bytes_eq!(private.octets(c"priv").expect("priv"), priv_bytes);
    assert!(
        private.octets(c"seed").is_none(),
        "a key from priv has no seed"
    );

    // It decapsulates what the original's public key encapsulated.
    for _ in 0..3 {
        let (ct, secret) = lib
            .encapsulator(&original, None)
            .encapsulate(ML_KEM_768.ct_len);
        assert_bytes_eq!(lib.decapsulator(&private).decapsulate(&ct), secret);
    }

    // priv with a matching pub is fine; with another key's pub it is not.
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_KEYPAIR,
        &[(c"priv", &priv_bytes), (c"pub", &original.public())],
    )
    .expect("priv + matching pub");
    let other = lib.keygen(ML_KEM_768.name, Some(&seed(99)));
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_KEYPAIR,
        &[(c"priv", &priv_bytes), (c"pub", &other.public())],
    )
    .must_fail("priv + mismatching pub accepted")
    .assert_reason("invalid key", Some("public key does not match private"));

    // A private key whose stored H(ek) is wrong fails the FIPS 203 check.
    let mut bad = priv_bytes.clone();
    let h_at = ML_KEM_768.dk_len - 64;
    bad[h_at] ^= 1;
    lib.fromdata(ML_KEM_768.name, ffi::EVP_PKEY_KEYPAIR, &[(c"priv", &bad)])
        .must_fail("a dk with a wrong H(ek) was accepted")
        .assert_reason("invalid key", None);
}

#[test]
fn import_seed_only_and_seed_with_mismatching_priv() {
    let lib = Lib::new();
    let original = lib.keygen(ML_KEM_768.name, Some(&seed(3)));
    let from_seed = lib
        .fromdata(
            ML_KEM_768.name,
            ffi::EVP_PKEY_KEYPAIR,
            &[(c"seed", &seed(3))],
        )
        .unwrap_or_else(|e| panic!("seed import failed:\n{e}"));
    assert_bytes_eq!(from_seed.public(), original.public());
    assert_bytes_eq!(
        from_seed.octets(c"priv").expect("priv"),
        original.octets(c"priv").expect("priv")
    );
    assert_bytes_eq!(from_seed.octets(c"seed").expect("seed"), seed(3));
    // SAFETY: two live keys.
    assert_eq!(unsafe { ffi::EVP_PKEY_eq(from_seed.0, original.0) }, 1);
    let (ct, secret) = lib
        .encapsulator(&original, None)
        .encapsulate(ML_KEM_768.ct_len);
    assert_bytes_eq!(lib.decapsulator(&from_seed).decapsulate(&ct), secret);

    // seed + its own priv is accepted.
    let priv_bytes = original.octets(c"priv").expect("priv");
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_KEYPAIR,
        &[(c"seed", &seed(3)), (c"priv", &priv_bytes)],
    )
    .expect("seed + matching priv");

    // seed + another (valid) key's priv is not.
    let other = lib.keygen(ML_KEM_768.name, Some(&seed(4)));
    let other_priv = other.octets(c"priv").expect("priv");
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_KEYPAIR,
        &[(c"seed", &seed(3)), (c"priv", &other_priv)],
    )
    .must_fail("seed + mismatching priv accepted")
    .assert_reason("invalid key", Some("private key does not match seed"));

    // A public-key selection ignores the seed: nothing left to import.
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_PUBLIC_KEY,
        &[(c"seed", &seed(3))],
    )
    .must_fail("public selection with only a seed accepted")
    .assert_reason("missing public key", None);
}

#[test]
fn import_wrong_lengths_rejected() {
    let lib = Lib::new();
    let key = lib.keygen(ML_KEM_768.name, None);
    let ek = key.public();
    let dk = key.octets(c"priv").expect("priv");

    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_PUBLIC_KEY,
        &[(c"pub", &ek[..1183])],
    )
    .must_fail("1183-byte pub accepted")
    .assert_reason(
        "invalid length",
        Some("ML-KEM-768 public key must be 1184 bytes, got 1183"),
    );

    let mut long = ek.clone();
    long.push(0);
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_PUBLIC_KEY,
        &[(c"pub", &long)],
    )
    .must_fail("1185-byte pub accepted")
    .assert_reason("invalid length", Some("got 1185"));

    // An ML-KEM-512 public key is not an ML-KEM-768 one.
    let small = lib.keygen("ML-KEM-512", None);
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_PUBLIC_KEY,
        &[(c"pub", &small.public())],
    )
    .must_fail("ML-KEM-512 pub imported as ML-KEM-768")
    .assert_reason("invalid length", Some("got 800"));

    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_KEYPAIR,
        &[(c"priv", &dk[..2399])],
    )
    .must_fail("2399-byte priv accepted")
    .assert_reason(
        "invalid length",
        Some("private key must be 2400 bytes, got 2399"),
    );

    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_KEYPAIR,
        &[(c"seed", &[0u8; 32])],
    )
    .must_fail("32-byte seed accepted")
    .assert_reason("invalid length", Some("seed must be 64 bytes, got 32"));

    // A public key with a coefficient >= q fails the FIPS 203 check.
    let mut unreduced = ek.clone();
    unreduced[0] = 0xff;
    unreduced[1] |= 0x0f;
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_PUBLIC_KEY,
        &[(c"pub", &unreduced)],
    )
    .must_fail("an unreduced ek was accepted")
    .assert_reason("invalid key", None);
}

#[test]
fn key_parameters_every_set() {
    let lib = Lib::new();
    for set in &SETS {
        let key = lib.keygen(set.name, None);
        assert_eq!(key.int(c"bits"), Some(set.bits), "{} bits", set.name);
        assert_eq!(
            key.int(c"security-bits"),
            Some(set.security_bits),
            "{} security-bits",
            set.name
        );
        assert_eq!(
            key.int(c"max-size"),
            Some(set.ct_len as c_int),
            "{} max-size",
            set.name
        );
        assert_eq!(
            key.int(c"security-category"),
            Some(set.category),
            "{} security-category",
            set.name
        );
        // The same figures through libcrypto's cached accessors.
        // SAFETY: a live key (each call).
        unsafe {
            assert_eq!(ffi::EVP_PKEY_get_bits(key.0), set.bits);
            assert_eq!(ffi::EVP_PKEY_get_security_bits(key.0), set.security_bits);
            assert_eq!(ffi::EVP_PKEY_get_size(key.0), set.ct_len as c_int);
        }
        assert_bytes_eq!(
            key.octets(c"encoded-pub-key").expect("encoded-pub-key"),
            key.public(),
            "{} encoded-pub-key",
            set.name
        );
        assert_eq!(
            key.octets(c"seed").map(|s| s.len()),
            Some(64),
            "{} seed kept",
            set.name
        );
        // CMS (OpenSSL 3.6+): a KEMRecipientInfo recipient (CMS_RECIPINFO_KEM
        // = 5) whose default KDF is HKDF-SHA256, as OpenSSL's own keymgmt.
        assert_eq!(key.int(c"ri-type"), Some(5), "{} ri-type", set.name);
        assert_bytes_eq!(
            key.octets(c"kemri-kdf-alg").expect("kemri-kdf-alg"),
            [
                0x30, 0x0d, 0x06, 0x0b, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x10, 0x03,
                0x1c
            ],
            "{} kemri-kdf-alg (id-alg-hkdf-with-sha256)",
            set.name
        );
    }
    let key = lib.keygen(ML_KEM_768.name, None);
    assert_eq!(key.int(c"bits"), Some(768));
    assert_eq!(key.int(c"security-bits"), Some(192));
    assert_eq!(key.int(c"max-size"), Some(1088));
}

// ------------------------------------------------------------------ 4. bad input

#[test]
fn decapsulate_wrong_length_ciphertext() {
    let lib = Lib::new();
    let key = lib.keygen(ML_KEM_768.name, None);
    let (ct, secret) = lib.encapsulator(&key, None).encapsulate(ML_KEM_768.ct_len);
    let dec = lib.decapsulator(&key);
    for len in [1, 768, 1087, 1089, 1568] {
        let mut bad = ct.clone();
        bad.resize(len, 0);
        let errors = dec
            .try_decapsulate_into(&bad, 32)
            .err()
            .unwrap_or_else(|| panic!("a {len}-byte ciphertext was decapsulated"));
        errors.assert_reason(
            "invalid length",
            Some(&format!(
                "ML-KEM-768 ciphertext must be 1088 bytes, got {len}"
            )),
        );
    }
    // The context still works afterwards.
    assert_bytes_eq!(dec.decapsulate(&ct), secret);
}

fn implicit_rejection<P: ParameterSet>(lib: &Lib, set: &Set) {
    let seed = seed(7);
    let reference = DecapsulationKey::<P>::from_seed(&seed).expect("kem-core key");
    let key = lib.keygen(set.name, Some(&seed));
    let (ct, secret) = lib.encapsulator(&key, None).encapsulate(set.ct_len);
    let dec = lib.decapsulator(&key);
    for at in [0, set.ct_len / 2, set.ct_len - 1] {
        let mut corrupted = ct.clone();
        corrupted[at] ^= 0x01;
        let rejected = dec.decapsulate(&corrupted);
        assert_eq!(rejected.len(), 32);
        assert_bytes_ne!(
            rejected,
            secret,
            "{}: corrupted ciphertext accepted",
            set.name
        );
        let expected = reference
            .decapsulate(&Ciphertext::<P>::from_bytes(&corrupted).expect("kem-core ciphertext"));
        assert_bytes_eq!(rejected, expected.as_bytes(), "{}: J(z ‖ c)", set.name);
        // Deterministic: the same corrupted ciphertext, the same secret.
        assert_bytes_eq!(dec.decapsulate(&corrupted), rejected);
    }
    // kem-core agrees on the genuine one too.
    let genuine = reference.decapsulate(&Ciphertext::<P>::from_bytes(&ct).expect("ciphertext"));
    assert_bytes_eq!(secret, genuine.as_bytes());
    // And a public key parsed by kem-core encapsulates to our key.
    let ek = EncapsulationKey::<P>::from_bytes(&key.public()).expect("kem-core ek");
    let (ct, secret) = ek.encapsulate_deterministic(&message(1));
    assert_bytes_eq!(dec.decapsulate(ct.as_bytes()), secret.as_bytes());
}

#[test]
fn corrupted_ciphertext_gives_implicit_rejection_secret() {
    let lib = Lib::new();
    implicit_rejection::<MlKem512>(&lib, &SETS[0]);
    implicit_rejection::<MlKem768>(&lib, &SETS[1]);
    implicit_rejection::<MlKem1024>(&lib, &SETS[2]);
}

#[test]
fn output_buffers_too_small() {
    let lib = Lib::new();
    let key = lib.keygen(ML_KEM_768.name, None);
    let enc = lib.encapsulator(&key, None);
    enc.try_encapsulate_into(1087, 32)
        .must_fail("1087-byte ciphertext buffer accepted")
        .assert_reason(
            "output buffer too small",
            Some("ciphertext buffer too small"),
        );
    enc.try_encapsulate_into(1088, 31)
        .must_fail("31-byte secret buffer accepted")
        .assert_reason(
            "output buffer too small",
            Some("shared-secret buffer too small"),
        );
    // Larger buffers are fine; the lengths come back exact.
    let (ct, secret) = enc.try_encapsulate_into(4096, 64).expect("large buffers");
    assert_eq!((ct.len(), secret.len()), (1088, 32));

    let dec = lib.decapsulator(&key);
    dec.try_decapsulate_into(&ct, 31)
        .must_fail("31-byte secret buffer accepted")
        .assert_reason(
            "output buffer too small",
            Some("shared-secret buffer too small"),
        );
    assert_bytes_eq!(
        dec.try_decapsulate_into(&ct, 64).expect("large buffer"),
        secret
    );
}

#[test]
fn encoded_public_key_only_on_empty_key() {
    let lib = Lib::new();
    let key = lib.keygen(ML_KEM_768.name, None);
    let other = lib.keygen(ML_KEM_768.name, None);
    let before = key.public();

    // A key with material is immutable.
    key.set_encoded_public_key(&other.public())
        .must_fail("encoded public key replaced a key's material")
        .assert_reason("key cannot be modified", None);
    assert_bytes_eq!(key.public(), before);
    let public = lib
        .fromdata(
            ML_KEM_768.name,
            ffi::EVP_PKEY_PUBLIC_KEY,
            &[(c"pub", &before)],
        )
        .expect("public import");
    public
        .set_encoded_public_key(&other.public())
        .must_fail("encoded public key replaced a public key")
        .assert_reason("key cannot be modified", None);

    // An empty key (paramgen, as a TLS server makes) takes a public key
    // once, of the right length, and can then encapsulate to it.
    let empty = lib.paramgen(ML_KEM_768.name);
    assert!(
        empty.octets(c"pub").is_none(),
        "paramgen key has a public key"
    );
    assert_eq!(empty.int(c"bits"), Some(768));
    empty
        .set_encoded_public_key(&before[..1000])
        .must_fail("short encoded public key accepted")
        .assert_reason("invalid length", Some("got 1000"));
    empty
        .set_encoded_public_key(&before)
        .unwrap_or_else(|e| panic!("set encoded public key failed:\n{e}"));
    assert_bytes_eq!(empty.public(), before);
    let (ct, secret) = lib.encapsulator(&empty, None).encapsulate(1088);
    assert_bytes_eq!(lib.decapsulator(&key).decapsulate(&ct), secret);
    empty
        .set_encoded_public_key(&other.public())
        .must_fail("second encoded public key accepted")
        .assert_reason("key cannot be modified", None);

    // An empty key neither encapsulates nor decapsulates.
    let empty = lib.paramgen(ML_KEM_768.name);
    lib.try_encapsulator(&empty, None)
        .must_fail("encapsulate_init on an empty key")
        .assert_reason("missing public key", None);
    lib.try_decapsulator(&empty)
        .must_fail("decapsulate_init on an empty key")
        .assert_reason("missing private key", None);

    // Two empty keys are equal, as in OpenSSL 3.5 (`ossl_ml_kem_pubkey_cmp`).
    let other_empty = lib.paramgen(ML_KEM_768.name);
    // SAFETY: two live keys.
    assert_eq!(unsafe { ffi::EVP_PKEY_eq(empty.0, other_empty.0) }, 1);
}

// ------------------------------------------------------------------ 5. threads

#[test]
fn one_key_shared_by_eight_threads() {
    const THREADS: usize = 8;
    let rounds = if cfg!(debug_assertions) { 50 } else { 500 };
    let lib = Lib::new();
    let key = lib.keygen(ML_KEM_768.name, None);
    let ciphertexts = common::on_threads(THREADS, |_| {
        let enc = lib.encapsulator(&key, None);
        let dec = lib.decapsulator(&key);
        let mut seen = Vec::with_capacity(rounds);
        for round in 0..rounds {
            let (ct, secret) = enc.encapsulate(1088);
            assert_bytes_eq!(dec.decapsulate(&ct), secret, "round {round}");
            seen.push(ct);
        }
        seen
    });
    let all: HashSet<&Vec<u8>> = ciphertexts.iter().flatten().collect();
    assert_eq!(
        all.len(),
        THREADS * rounds,
        "repeated ciphertexts across threads"
    );
}

// Load / unload cycles live in tests/load_cycles.rs, in a process of their
// own (see there why).

/// Errors go through the instance whose object failed: with two library
/// contexts, an error from the first carries the first instance's library
/// code and keeps its reason text after the second instance is unloaded.
#[test]
fn errors_are_raised_through_the_callers_instance() {
    // Hold off every other test's loading and teardown while this test
    // compares two instances.
    let exclusive = LIFECYCLE.write().unwrap_or_else(PoisonError::into_inner);
    let first = Lib::new_with(false);
    let key = first.keygen_unguarded(ML_KEM_768.name);
    // Decapsulates a 10-byte ciphertext with the first instance's key and
    // leaves the error on the queue: its library code and reason text.
    let fail_in_first = || -> (c_int, Option<String>) {
        let ctx = first.raw_ctx_for_key(&key);
        clear_errors();
        let short = [0u8; 10];
        let mut secret = [0u8; 32];
        let mut len = secret.len();
        // SAFETY: a live context initialised for decapsulation, a writable
        // 32-byte buffer and a readable 10-byte ciphertext.
        let rc = unsafe {
            ffi::EVP_PKEY_decapsulate(
                ctx,
                secret.as_mut_ptr(),
                &mut len,
                short.as_ptr(),
                short.len(),
            )
        };
        assert!(rc <= 0);
        // SAFETY: ours, freed once.
        unsafe { ffi::EVP_PKEY_CTX_free(ctx) };
        // SAFETY: reads this thread's queue.
        let code = unsafe { ffi::ERR_peek_last_error() };
        (ffi::ERR_GET_LIB(code), reason_text(code))
    };
    let (alone_lib, alone_reason) = fail_in_first();
    assert_eq!(alone_reason.as_deref(), Some("invalid length"));

    // Load a second instance, fail in the first again, and unload the
    // second while that error is still queued.
    let second = Lib::new_with(false);
    let (raised_lib, _) = fail_in_first();
    drop(second);
    // SAFETY: reads this thread's queue.
    let code = unsafe { ffi::ERR_peek_last_error() };
    let reason = reason_text(code);
    clear_errors();
    drop(key);
    drop(first);
    drop(exclusive);
    assert!(
        raised_lib == alone_lib && reason.as_deref() == Some("invalid length"),
        "an error of the first instance's key was raised with library code {raised_lib} \
         (the second instance's; the first's is {alone_lib}), and once the second instance \
         was unloaded its reason text was {reason:?}"
    );
}

impl Lib {
    /// Keygen without [`LIFECYCLE`] (for a caller holding it exclusively).
    fn keygen_unguarded(&self, alg: &str) -> Pkey<'_> {
        let name = cstring(alg);
        // SAFETY: a live context, a NUL-terminated name; the generation
        // context is freed below, the key handed to the caller.
        unsafe {
            let ctx = ffi::EVP_PKEY_CTX_new_from_name(self.ctx, name.as_ptr(), ptr::null());
            assert!(!ctx.is_null());
            assert_eq!(ffi::EVP_PKEY_keygen_init(ctx), 1);
            let mut key = ptr::null_mut();
            assert_eq!(ffi::EVP_PKEY_keygen(ctx, &mut key), 1);
            ffi::EVP_PKEY_CTX_free(ctx);
            Pkey::wrap(key)
        }
    }

    /// A raw decapsulation context (the caller frees it), without
    /// [`LIFECYCLE`].
    fn raw_ctx_for_key(&self, key: &Pkey<'_>) -> *mut ffi::EVP_PKEY_CTX {
        // SAFETY: a live context and key; NULL propquery and parameters.
        unsafe {
            let ctx = EVP_PKEY_CTX_new_from_pkey(self.ctx, key.0, ptr::null());
            assert!(!ctx.is_null());
            assert_eq!(ffi::EVP_PKEY_decapsulate_init(ctx, ptr::null()), 1);
            ctx
        }
    }
}
