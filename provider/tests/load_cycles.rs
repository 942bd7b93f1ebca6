//! Provider load/unload cycles, in a process of their own.
//!
//! OpenSSL gives every loaded provider instance a fresh error-library
//! number, and those are 8 bits wide: after about 127 loads in one process
//! the numbers wrap, two instances share one, and unloading either drops
//! the other's reason strings. (An OpenSSL limitation, not this
//! provider's.) So these cycles must not run next to the tests that check
//! reason strings (`in_process`, `hybrid_in_process`).

mod common;

use std::sync::PoisonError;

use openssl_sys as ffi;

use common::evp::{assert_bytes_eq, take_errors, Lib, Pkey, LIFECYCLE};

/// Name, encapsulation key and ciphertext length of each parameter set.
const SETS: [(&str, usize, usize); 3] = [
    ("ML-KEM-512", 800, 768),
    ("ML-KEM-768", 1184, 1088),
    ("ML-KEM-1024", 1568, 1568),
];

/// Encapsulates to `key` and checks decapsulation gives the same secret.
fn round_trip(lib: &Lib, key: &Pkey<'_>, ct_len: usize, what: &str) {
    let (ct, secret) = lib
        .encapsulator(key, None)
        .try_encapsulate_into(ct_len, 32)
        .unwrap_or_else(|e| panic!("{what}: encapsulate failed:\n{e}"));
    let received = lib
        .decapsulator(key)
        .try_decapsulate_into(&ct, 32)
        .unwrap_or_else(|e| panic!("{what}: decapsulate failed:\n{e}"));
    assert_bytes_eq!(received, secret, "{what}");
}

#[test]
fn provider_load_unload_cycles() {
    for cycle in 0..200 {
        let lib = Lib::new();
        let (name, ek_len, ct_len) = SETS[cycle % 3];
        let key = lib.keygen(name, None);
        assert_eq!(key.public().len(), ek_len, "cycle {cycle}");
        if cycle % 20 == 0 {
            round_trip(&lib, &key, ct_len, &format!("cycle {cycle}"));
        }
    }
}

#[test]
fn reload_in_one_library_context() {
    let lib = Lib::new();
    for cycle in 0..50 {
        // A second activation of the same provider, then its release.
        let exclusive = LIFECYCLE.write().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: a live context and a NUL-terminated name.
        let extra = unsafe { ffi::OSSL_PROVIDER_load(lib.ctx, c"mlkem".as_ptr()) };
        drop(exclusive);
        assert!(!extra.is_null(), "cycle {cycle}: {}", take_errors());
        let key = lib.keygen("ML-KEM-768", None);
        {
            let _exclusive = LIFECYCLE.write().unwrap_or_else(PoisonError::into_inner);
            // SAFETY: the reference loaded above, released once.
            assert_eq!(unsafe { ffi::OSSL_PROVIDER_unload(extra) }, 1);
        }
        // The key outlives the extra activation.
        round_trip(&lib, &key, 1088, &format!("cycle {cycle}"));
    }
}
