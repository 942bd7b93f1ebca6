//! The AArch64 Neon backend: 128-bit vectors for the arithmetic and a
//! two-way Keccak for the matrix and noise sponges.
//!
//! - NTT, inverse NTT and base multiplication: `aarch64::ntt`.
//! - SampleNTT and noise (vector rejection sampling and CBD):
//!   `aarch64::sample`, two sponges per step on `aarch64::keccak_x2`, which
//!   uses the SHA-3 extension's EOR3, RAX1, XAR and BCAX where the CPU has
//!   them (detected at run time) and plain Neon otherwise.
//! - Compression and coding: `aarch64::compress`.
//! - The one-way permutation (G, and any block without a partner): the
//!   `keccak` crate's SHA-3 assembly where the CPU has the extension, our
//!   scalar assembly (`aarch64::keccak_x1`) elsewhere: one state would
//!   fill only half of each 128-bit vector.
//! - Key generation, key parsing and decapsulation's hashes run their
//!   sponges two at a time on the two-way permutation (`aarch64::pool`).
//!
//! # Safety
//!
//! The Neon functions are `#[target_feature(enable = "neon")]`, so the
//! methods below call them in `unsafe` blocks. `Neon` is only ever used
//! through `dispatch!`, which selects it only when
//! `BackendKind::Neon.is_available()` (Neon detected) holds, and the
//! module is only compiled for targets whose baseline has Neon
//! (`target_feature = "neon"`, as on `aarch64-unknown-linux-gnu`). The
//! rest of the backend's `unsafe` is the vector loads and stores
//! (`aarch64::mem`), the call of the SHA-3 permutation after its run-time
//! detection (`aarch64::keccak_x2`), the Keccak inline assembly
//! (`aarch64::keccak_x2::asm`, `aarch64::keccak_x1`) and the view of a
//! sponge state as its bytes (`aarch64::sample`).

use crate::backend::traits::{
    DecapsHashInput, Keccak, KeyBuffers, PolyKernels, Sampling, Schedule,
};
use crate::params::ParameterSet;
use crate::poly::Poly;

/// The Neon backend (AArch64; see the module docs).
pub(crate) struct Neon;

/// Defines a `Backend` method that calls the Neon function `$path`.
macro_rules! neon_method {
    (fn $name:ident $(<const $c:ident: usize>)? ($($arg:ident: $ty:ty),*) $(-> $ret:ty)? = $($path:ident)::+) => {
        #[inline(always)]
        fn $name $(<const $c: usize>)? ($($arg: $ty),*) $(-> $ret)? {
            // SAFETY: `Neon` runs only where Neon is available (module docs).
            unsafe { $($path)::+ $(::<$c>)? ($($arg),*) }
        }
    };
}

/// The one-way permutation (G, H, J and lone sponges): the `keccak` crate's
/// SHA-3 assembly where the CPU has the extension, `aarch64::keccak_x1`
/// (scalar assembly) elsewhere.
impl Keccak for Neon {
    #[inline(always)]
    fn keccak_f1600(state: &mut [u64; 25]) {
        if crate::backend::aarch64::has_sha3() {
            keccak::f1600(state);
        } else {
            crate::backend::aarch64::keccak_x1::keccak_f1600(state);
        }
    }
}

impl PolyKernels for Neon {
    neon_method!(fn ntt(p: &mut Poly) = crate::backend::aarch64::ntt::ntt);
    neon_method!(fn inv_ntt(p: &mut Poly) = crate::backend::aarch64::ntt::inv_ntt);
    neon_method!(fn multiply_accumulate(acc: &mut Poly, a: &[Poly], b: &[Poly]) = crate::backend::aarch64::ntt::multiply_accumulate);
    neon_method!(fn add_reduce(acc: &mut Poly, e: &Poly) = crate::backend::aarch64::ntt::add_reduce);
    neon_method!(fn compress_encode<const D: usize>(p: &Poly, out: &mut [u8]) = crate::backend::aarch64::compress::compress_encode);
    neon_method!(fn decode_decompress<const D: usize>(bytes: &[u8], p: &mut Poly) = crate::backend::aarch64::compress::decode_decompress);
    neon_method!(fn encode_12(p: &Poly, out: &mut [u8]) = crate::backend::aarch64::compress::encode_12);
    neon_method!(fn decode_12_checked(bytes: &[u8], p: &mut Poly) -> bool = crate::backend::aarch64::compress::decode_12_checked);
}

impl Sampling for Neon {
    neon_method!(fn sample_matrix(rho: &[u8; 32], k: usize, out: &mut [Poly]) = crate::backend::aarch64::pool::sample_matrix);
    neon_method!(fn sample_noise<const ETA: usize>(seed: &[u8; 32], nonce: u8, out: &mut [Poly]) = crate::backend::aarch64::sample::sample_noise);
}

/// Key generation samples its noise two streams at a time, then Â row by
/// row beside H(ek), which absorbs t̂ as it is computed (`pool`); parsing
/// an encapsulation key runs H(ek) beside Â; decapsulation runs G, J(z ‖
/// c) and the re-encryption's noise two at a time.
impl Schedule for Neon {
    #[inline(always)]
    fn decaps_hashes<P: ParameterSet>(
        input: &DecapsHashInput<'_>,
        y: &mut [Poly],
        e1_e2: &mut [Poly],
    ) -> ([u8; 32], [u8; 32]) {
        // SAFETY: `Neon` runs only where Neon is available (module docs).
        unsafe { crate::backend::aarch64::pool::decaps_hashes::<P>(input, y, e1_e2) }
    }

    #[inline(always)]
    fn generate_key<P: ParameterSet>(
        rho: &[u8; 32],
        sigma: &[u8; 32],
        out: &mut KeyBuffers<'_>,
    ) -> Option<[u8; 32]> {
        // SAFETY: `Neon` runs only where Neon is available (module docs).
        unsafe { crate::backend::aarch64::pool::generate_key::<P>(rho, sigma, out) }
    }

    neon_method!(fn hash_and_sample_matrix(ek: &[u8], rho: &[u8; 32], k: usize, out: &mut [Poly], rejection: Option<(&[u8; 32], &[u8])>) -> ([u8; 32], Option<[u8; 32]>) = crate::backend::aarch64::pool::hash_and_sample_matrix);
}
