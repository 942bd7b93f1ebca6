//! Secret residue on the stack: after an operation returns, the stack it
//! used (below the caller's frame) must not hold a copy of the secrets its
//! sponges absorbed: σ after key generation (the noise seed, which every
//! PRF state absorbs in the clear), m and r after encapsulation and
//! decapsulation. (Not d and z: a `DecapsulationKey` holds them inline, in
//! its seed and z, and a move of the key value leaves a copy of them in the
//! frame it left, as for any value the compiler moves.)
//!
//! Each operation runs on a fresh thread (whose stack starts zeroed), from
//! a frame beside the scanner's; the scanner then searches the 32 KiB below
//! its own frame, where the operation's frames were, with libc's `memmem`
//! (C code, where reading any byte as `unsigned char` is defined; the
//! memory is mapped: it is this thread's stack). What the compiler spills
//! of a permutation's registers is not covered by the wipes (see
//! `x86_64::keccak`), so the check looks for whole 32-byte secrets and
//! their 16-byte halves only, which a state or a buffer holds and a spilled
//! register of a permutation round does not. Release builds only: debug
//! builds keep every temporary in its own stack slot.

#![allow(unsafe_code)]

mod backends;

use core::ffi::c_void;
use std::hint::black_box;

use kem_core::{
    with_backend, BackendKind, Ciphertext, DecapsulationKey, EncapsulationKey, MlKem1024, MlKem512,
    MlKem768, ParameterSet,
};
use sha3::{Digest, Sha3_256, Sha3_512};

extern "C" {
    fn memmem(
        haystack: *const c_void,
        haystack_len: usize,
        needle: *const c_void,
        needle_len: usize,
    ) -> *mut c_void;
}

/// How far below the scanner's frame it looks: twice the stack budget of
/// an operation (`stack_usage.rs`).
const SCAN: usize = 32 * 1024;

/// The offsets below the scanner's frame at which each needle (name,
/// bytes) or its 16-byte halves occur.
#[inline(never)]
fn scan(needles: &[(&'static str, Vec<u8>)]) -> Vec<String> {
    let marker = 0u8;
    let top = black_box(core::ptr::addr_of!(marker)) as usize;
    // Leave room for this frame's callees (memmem's own frame).
    let end = top - 1024;
    let start = end - SCAN;
    let mut found = Vec::new();
    for (name, needle) in needles {
        for (part, bytes) in [
            ("", &needle[..]),
            (" (first half)", &needle[..16]),
            (" (second half)", &needle[16..]),
        ] {
            // SAFETY: [start, end) lies in this thread's stack, mapped and
            // below every live frame but memmem's (at most the last 1 KiB
            // above `end`, which is not searched); memmem reads it as bytes.
            let hit = unsafe {
                memmem(
                    start as *const c_void,
                    end - start,
                    bytes.as_ptr().cast(),
                    bytes.len(),
                )
            };
            if !hit.is_null() {
                found.push(format!(
                    "{name}{part} at {} bytes below ({hit:p})",
                    top - hit as usize
                ));
                break;
            }
        }
    }
    found
}

/// G(a ‖ b) = SHA3-512, as (first half, second half).
fn g(a: &[u8], b: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let out = Sha3_512::new().chain_update(a).chain_update(b).finalize();
    (out[..32].to_vec(), out[32..].to_vec())
}

/// Runs `op` of set P on its inputs (a frame beside the scanner's).
#[inline(never)]
fn run<P: ParameterSet>(op: &str, seed: &([u8; 32], [u8; 32], [u8; 32]), bytes: &[Vec<u8>; 3]) {
    let (d, z, m) = seed;
    let [ek, dk, ct] = bytes;
    match op {
        "keygen" => {
            let key = DecapsulationKey::<P>::from_seed_parts(d, z);
            black_box(key.encapsulation_key().as_bytes()[0]);
        }
        "encaps" => {
            let ek = EncapsulationKey::<P>::from_bytes(ek).unwrap();
            black_box(ek.encapsulate_deterministic(m).1.as_bytes()[0]);
        }
        _ => {
            let ct = Ciphertext::<P>::from_bytes(ct).unwrap();
            let key = DecapsulationKey::<P>::from_bytes(dk).unwrap();
            black_box(key.decapsulate(&ct).as_bytes()[0]);
        }
    }
}

/// The operation `op` of set P on `backend`, on a fresh thread (its inputs
/// prepared on this one, so that only the operation ran there); what the
/// scan found of its secrets.
fn residue<P: ParameterSet>(backend: BackendKind, op: &'static str) -> Vec<String> {
    let seed = Box::new(([0x11u8; 32], [0x22u8; 32], [0x33u8; 32]));
    let (d, z, m) = *seed;
    let dk = DecapsulationKey::<P>::from_seed_parts(&d, &z);
    let ek = dk.encapsulation_key().as_bytes().to_vec();
    let (ct, _) = dk.encapsulation_key().encapsulate_deterministic(&m);
    let bytes = Box::new([ek, dk.to_bytes().as_ref().to_vec(), ct.as_bytes().to_vec()]);
    let (_, sigma) = g(&d, &[P::K as u8]);
    let (_, r) = g(&m, &Sha3_256::digest(&bytes[0]));
    let needles: Vec<(&'static str, Vec<u8>)> = match op {
        "keygen" => vec![("σ", sigma)],
        _ => vec![("m", m.to_vec()), ("r", r)],
    };
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            with_backend(backend, || {
                run::<P>(op, &seed, &bytes);
                scan(&needles)
            })
            .unwrap()
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn no_secret_is_left_on_the_stack() {
    if cfg!(debug_assertions) {
        eprintln!("release builds only: skipped");
        return;
    }
    let mut failures = Vec::new();
    // STACK_RESIDUE_ONLY="<backend> <operation>" narrows the check (to
    // find where a residue comes from, e.g. under a debugger).
    let only = std::env::var("STACK_RESIDUE_ONLY").unwrap_or_default();
    for backend in backends::backends_to_exercise() {
        for op in ["keygen", "encaps", "decaps"] {
            if !only.is_empty() && only != format!("{backend} {op}") {
                continue;
            }
            for (set, found) in [
                ("ML-KEM-512", residue::<MlKem512>(backend, op)),
                ("ML-KEM-768", residue::<MlKem768>(backend, op)),
                ("ML-KEM-1024", residue::<MlKem1024>(backend, op)),
            ] {
                for hit in found {
                    failures.push(format!("{backend} {set} {op}: {hit}"));
                }
            }
        }
        if only.is_empty() {
            backends::record_exercised(backend);
        }
    }
    assert!(
        failures.is_empty(),
        "secrets left on the stack:\n{}",
        failures.join("\n")
    );
}
