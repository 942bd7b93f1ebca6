//! `test_tools::evp_harness` against the built provider (`bash
//! scripts/build-provider.sh` first) and the linked libcrypto's `default`.

use std::path::PathBuf;

use test_tools::evp_harness::{clear_openssl_errors, take_openssl_errors, Library};

/// The directory of the built provider, `target/provider`.
fn module_dir() -> PathBuf {
    let dir = test_tools::cli::default_provider_dir();
    test_tools::cli::require_provider(&dir).unwrap_or_else(|e| panic!("{e}"));
    dir
}

fn ours() -> Library {
    Library::load(Some(&module_dir()), "mlkem").unwrap_or_else(|e| panic!("{e}"))
}

/// (algorithm, ciphertext bytes, shared-secret bytes), as in FIPS 203
/// and OpenSSL 3.5 (the hybrid's secret is ML-KEM's then X25519's).
const SIZES: [(&str, usize, usize); 4] = [
    ("ML-KEM-512", 768, 32),
    ("ML-KEM-768", 1088, 32),
    ("ML-KEM-1024", 1568, 32),
    ("X25519MLKEM768", 1088 + 32, 32 + 32),
];

#[test]
fn round_trips_give_equal_secrets() {
    let lib = ours();
    assert_eq!(lib.propquery(), c"provider=mlkem");
    assert!(!lib.as_ptr().is_null());
    for (algorithm, ciphertext_len, secret_len) in SIZES {
        let mut kem = lib.kem(algorithm).unwrap();
        // More keys from the one reused keygen context, as the benchmark makes.
        kem.keygen().unwrap();
        kem.keygen().unwrap();
        let mut secrets = Vec::new();
        for _ in 0..2 {
            let (ciphertext, sent) = kem.encapsulate().unwrap();
            assert_eq!(ciphertext.len(), ciphertext_len, "{algorithm}");
            assert_eq!(sent.len(), secret_len, "{algorithm}");
            let (ciphertext, sent) = (ciphertext.to_vec(), sent.to_vec());
            let received = kem.decapsulate(&ciphertext).unwrap();
            assert_eq!(sent, received, "{algorithm}: decaps(encaps) differs");
            secrets.push(sent);
        }
        assert_ne!(secrets[0], secrets[1], "{algorithm}: repeated secret");
        // Another key cannot recover the secret.
        let (ciphertext, sent) = kem.encapsulate().unwrap();
        let (ciphertext, sent) = (ciphertext.to_vec(), sent.to_vec());
        let mut other = lib.kem(algorithm).unwrap();
        let recovered = other.decapsulate(&ciphertext).map(<[u8]>::to_vec);
        assert_ne!(
            recovered.ok(),
            Some(sent),
            "{algorithm}: wrong key decapsulated"
        );
    }
}

#[test]
fn a_ciphertext_of_the_wrong_length_is_refused() {
    let lib = ours();
    let mut kem = lib.kem("ML-KEM-768").unwrap();
    let ciphertext = kem.encapsulate().unwrap().0.to_vec();
    let err = kem.decapsulate(&ciphertext[..1000]).unwrap_err();
    assert!(err.starts_with("EVP_PKEY_decapsulate: "), "{err}");
    assert!(kem.decapsulate(&ciphertext).is_ok());
}

#[test]
fn unknown_algorithm_is_an_error_naming_it() {
    let lib = ours();
    let err = lib.kem("ML-KEM-999").err().unwrap();
    assert!(err.starts_with("ML-KEM-999: "), "{err}");
    assert!(err.contains("no such algorithm in provider mlkem"), "{err}");
    assert!(!lib.supports("ML-KEM-999"));
    assert!(lib.supports("ML-KEM-768"));
    // `supports` leaves nothing on the error queue.
    assert_eq!(take_openssl_errors(), "(OpenSSL's error queue is empty)");
    assert!(lib.kem("ML\0KEM").err().unwrap().contains("NUL"));
}

#[test]
fn default_provider_has_ml_kem_from_openssl_3_5() {
    let native = Library::load(None, "default").unwrap();
    assert_eq!(native.propquery(), c"provider=default");
    let has_ml_kem = openssl::version::number() >= 0x3050_0000;
    assert_eq!(native.supports("ML-KEM-768"), has_ml_kem);
}

#[test]
fn missing_provider_is_an_error_naming_it() {
    let dir = module_dir();
    let err = Library::load(Some(&dir), "no-such-provider").err().unwrap();
    assert!(
        err.starts_with("loading provider \"no-such-provider\" from "),
        "{err}"
    );
    assert!(err.contains(&dir.display().to_string()), "{err}");
    let err = Library::load(None, "a\0b").err().unwrap();
    assert!(err.contains("contains a NUL byte"), "{err}");
    clear_openssl_errors();
}
