//! `test_tools::evp_harness` against the built provider (`bash
//! scripts/build-provider.sh` first) and the linked libcrypto's `default`.

use std::path::PathBuf;

use test_tools::evp_harness::Library;

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
    assert_eq!(lib.provider(), "mlkem");
    assert_eq!(lib.propquery(), c"provider=mlkem");
    for (algorithm, ciphertext_len, secret_len) in SIZES {
        let mut generator = lib.key_generator(algorithm).unwrap();
        assert_eq!(generator.algorithm(), algorithm);
        // Two keys from the one reused context, as the benchmark does.
        let first = generator.generate().unwrap();
        let key = generator.generate().unwrap();
        let mut encapsulator = key.encapsulator().unwrap();
        assert_eq!(encapsulator.ciphertext_len(), ciphertext_len, "{algorithm}");
        assert_eq!(encapsulator.secret_len(), secret_len, "{algorithm}");
        let mut decapsulator = key.decapsulator().unwrap();
        let mut secrets = Vec::new();
        for _ in 0..2 {
            let (ciphertext, sent) = encapsulator.encapsulate_to_vec().unwrap();
            assert_eq!(ciphertext.len(), ciphertext_len, "{algorithm}");
            let received = decapsulator.decapsulate_to_vec(&ciphertext).unwrap();
            assert_eq!(sent.len(), secret_len, "{algorithm}");
            assert_eq!(sent, received, "{algorithm}: decaps(encaps) differs");
            secrets.push(sent);
        }
        assert_ne!(secrets[0], secrets[1], "{algorithm}: repeated secret");
        // The other key cannot recover the secret.
        let (ciphertext, sent) = encapsulator.encapsulate_to_vec().unwrap();
        let other = first
            .decapsulator()
            .unwrap()
            .decapsulate_to_vec(&ciphertext);
        assert_ne!(
            other.ok(),
            Some(sent),
            "{algorithm}: wrong key decapsulated"
        );
    }
}

#[test]
fn reused_buffers_and_short_buffers() {
    let lib = ours();
    let key = lib.key_generator("ML-KEM-768").unwrap().generate().unwrap();
    let mut encapsulator = key.encapsulator().unwrap();
    let mut decapsulator = key.decapsulator().unwrap();
    let (mut ciphertext, mut sent, mut received) = ([0u8; 1088], [0u8; 32], [0u8; 32]);
    assert_eq!(
        encapsulator.encapsulate(&mut ciphertext, &mut sent),
        Ok((1088, 32))
    );
    assert_eq!(decapsulator.decapsulate(&ciphertext, &mut received), Ok(32));
    assert_eq!(sent, received);
    let short = encapsulator
        .encapsulate(&mut ciphertext[..1087], &mut sent)
        .unwrap_err();
    assert!(short.contains("need 1088 and 32"), "{short}");
    // A ciphertext of the wrong length is refused by the provider.
    assert!(decapsulator
        .decapsulate(&ciphertext[..1000], &mut received)
        .is_err());
}

#[test]
fn unknown_algorithm_is_an_error_naming_it() {
    let lib = ours();
    let err = lib.key_generator("ML-KEM-999").err().unwrap();
    assert!(err.starts_with("ML-KEM-999: "), "{err}");
    assert!(err.contains("provider mlkem"), "{err}");
    assert!(!lib.supports("ML-KEM-999"));
    assert!(lib.supports("ML-KEM-768"));
    assert!(lib.key_generator("ML\0KEM").err().unwrap().contains("NUL"));
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
    let err = Library::load(Some(&dir), "no-such-provider").unwrap_err();
    assert!(err.contains("\"no-such-provider\""), "{err}");
    assert!(err.contains(&dir.display().to_string()), "{err}");
}
