//! The backend seam: the hot spots of ML-KEM (the one-way Keccak, NTT,
//! base multiplication, matrix and noise sampling, compression and
//! encoding) as one trait whose methods default to the portable code. A SIMD backend overrides only what it accelerates; the
//! algorithm code in `pke` and `kem` is generic over the backend and
//! monomorphised once per backend. The backend is chosen once per process
//! (see `select`). All backends share one key representation (canonical
//! coefficients, FIPS 203 NTT order), so a key made under one backend works
//! under any other.

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx512;
#[cfg(target_arch = "x86_64")]
mod basemul_avx2;
#[cfg(target_arch = "x86_64")]
mod cbd_avx2;
#[cfg(target_arch = "x86_64")]
mod compress_avx2;
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod compress_neon;
#[cfg(target_arch = "x86_64")]
mod decaps_x86;
#[cfg(target_arch = "x86_64")]
mod encode_avx2;
#[cfg(target_arch = "x86_64")]
mod expand_avx2;
#[cfg(target_arch = "x86_64")]
mod keccak_f1600;
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
#[allow(unsafe_code)]
mod keccak_x2_neon;
#[cfg(target_arch = "x86_64")]
mod keccak_x4;
#[cfg(target_arch = "x86_64")]
mod keccak_x8;
#[cfg(target_arch = "x86_64")]
mod keygen_avx2;
#[cfg(target_arch = "x86_64")]
mod mem_avx2;
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
#[allow(unsafe_code)]
mod mem_neon;
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
#[allow(unsafe_code)]
mod neon;
#[cfg(target_arch = "x86_64")]
mod noise_x86;
#[cfg(target_arch = "x86_64")]
mod ntt_avx2;
#[cfg(target_arch = "x86_64")]
mod ntt_avx512;
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod ntt_neon;
mod portable;
#[cfg(target_arch = "x86_64")]
mod rej_avx2;
#[cfg(target_arch = "x86_64")]
mod rej_avx512;
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
mod sample_neon;
mod select;

#[cfg(target_arch = "x86_64")]
pub(crate) use avx2::Avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) use avx512::{Avx512, Avx512Keccak};
#[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
pub(crate) use neon::Neon;
pub(crate) use portable::Portable;
pub use select::{
    active_backend, available_backends, preferred_backend, set_backend, with_backend, BackendKind,
};

use crate::params::ParameterSet;
use crate::poly::{Poly, N};
use crate::{compress, encode, ntt, sample};

/// The sponge pools of an x86-64 SIMD backend (`keygen_avx2`, `expand_avx2`,
/// `decaps_x86`), `$width` sponges wide and compiled with `$features`: its
/// `generate_key`, `hash_and_sample_matrix` and `decaps_hashes`, defined in
/// its `with_*` module (whose imports they use). A backend type with a
/// `usize` const parameter names it last (`const BITS`); the functions then
/// take it first.
#[cfg(target_arch = "x86_64")]
macro_rules! sponge_pools {
    ($backend:ty, $features:literal, $width:literal $(, const $c:ident)?) => {
        /// Key generation as one pool of sponges (see `keygen_avx2`).
        #[target_feature(enable = $features)]
        pub(super) fn generate_key<$(const $c: usize,)? P: ParameterSet>(
            rho: &[u8; 32],
            sigma: &[u8; 32],
            out: &mut KeyBuffers<'_>,
        ) -> Option<[u8; 32]> {
            Some(crate::backend::keygen_avx2::generate_for::<$backend, P>(
                rho, sigma, out,
            ))
        }

        /// H(ek) and Â sharing the multi-way Keccak, and J(z ‖ c) as a
        /// second chain if asked (see `expand_avx2`).
        #[target_feature(enable = $features)]
        pub(super) fn hash_and_sample_matrix$(<const $c: usize>)?(
            ek: &[u8],
            rho: &[u8; 32],
            k: usize,
            out: &mut [Poly],
            rejection: Option<(&[u8; 32], &[u8])>,
        ) -> ([u8; 32], Option<[u8; 32]>) {
            let j = rejection.map(|(z, c)| crate::backend::expand_avx2::Rejection::new(z, c));
            crate::backend::expand_avx2::hash_and_sample_matrix::<$backend, $width>(
                ek, rho, k, out, j,
            )
        }

        /// G, J and the re-encryption's noise as one pool (see
        /// `decaps_x86`).
        #[target_feature(enable = $features)]
        pub(super) fn decaps_hashes<$(const $c: usize,)? P: ParameterSet>(
            input: &crate::backend::DecapsHashInput<'_>,
            y: &mut [Poly],
            e1_e2: &mut [Poly],
        ) -> ([u8; 32], [u8; 32]) {
            crate::backend::decaps_x86::decaps_hashes::<$backend, P, $width>(input, y, e1_e2)
        }
    };
}
#[cfg(target_arch = "x86_64")]
use sponge_pools;

/// What decapsulation hashes after K-PKE.Decrypt (see
/// [`Backend::decaps_hashes`]).
#[derive(Clone, Copy)]
pub(crate) struct DecapsHashInput<'a> {
    /// The decrypted message m'.
    pub(crate) m: &'a [u8; 32],
    /// H(ek).
    pub(crate) h: &'a [u8; 32],
    /// The implicit-rejection secret z.
    pub(crate) z: &'a [u8; 32],
    /// The ciphertext c.
    pub(crate) c: &'a [u8],
    /// J(z ‖ c), if it was computed while the key was parsed
    /// ([`Backend::hash_and_sample_matrix`]).
    pub(crate) rejection: Option<&'a [u8; 32]>,
}

/// Where key generation writes the key: `expanded` (Â^T ‖ t̂, see
/// `pke::expanded_key_len`), `s_hat` (ŝ, k polynomials) and `ek`
/// (ByteEncode_12(t̂) ‖ ρ, `P::EK_LEN` bytes).
pub(crate) struct KeyBuffers<'a> {
    pub(crate) expanded: &'a mut [Poly],
    pub(crate) s_hat: &'a mut [Poly],
    pub(crate) ek: &'a mut [u8],
}

/// The operations a backend provides. Every method has the portable
/// definition as its default.
pub(crate) trait Backend: Sized + 'static {
    /// Keccak-f[1600] for the one-way hashes (G, H, J, and any stream not
    /// batched four-wide).
    #[inline(always)]
    fn keccak_f1600(state: &mut [u64; 25]) {
        keccak::f1600(state);
    }

    /// The most sponges [`Backend::keccak_f1600_many`] permutes in one
    /// call: the width of the backend's multi-way permutation (1 if it has
    /// none). Pools of sponges (key generation, key parsing, decapsulation's
    /// hashes) choose up to this many per step.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // x86-64 pools only
    const KECCAK_WIDTH: usize = 1;

    /// Keccak-f[1600] on `states[i]` for each `i` in `chosen` (one to
    /// [`Backend::KECCAK_WIDTH`] distinct indices), as one multi-way
    /// permutation where the backend has one.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // x86-64 pools only
    #[inline(always)]
    fn keccak_f1600_many(states: &mut [[u64; 25]], chosen: &[usize]) {
        for &index in chosen {
            <Self as crate::hash::Permutation>::keccak_f1600(&mut states[index]);
        }
    }

    /// Algorithm 7's inner loop (SampleNTT) on one squeezed SHAKE128 block,
    /// read from the sponge `state` (its first 21 lanes): appends the
    /// candidates below q to `coeffs[filled..]` until all 256 are there and
    /// returns the new count. Entries from that count on may have been
    /// overwritten.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // x86-64 pools only
    #[inline(always)]
    fn rejection_sample_block(coeffs: &mut [i16; N], filled: usize, state: &[u64; 25]) -> usize {
        let mut block = [0u8; crate::hash::SHAKE128_RATE];
        crate::hash::read_lanes(state, &mut block);
        sample::rejection_sample(coeffs, filled, &block)
    }

    /// Algorithm 9: NTT in place; input below q in absolute value, output
    /// reduced into [-(q-1)/2, (q-1)/2].
    #[inline(always)]
    fn ntt(p: &mut Poly) {
        ntt::ntt(p);
    }

    /// Algorithm 10: NTT^-1 in place, times 2^16.
    #[inline(always)]
    fn inv_ntt(p: &mut Poly) {
        ntt::inv_ntt(p);
    }

    /// Algorithms 11 and 12: acc = Σ a_i ∘ b_i · 2^-16, reduced.
    #[inline(always)]
    fn multiply_accumulate(acc: &mut Poly, a: &[Poly], b: &[Poly]) {
        ntt::multiply_accumulate(acc, a, b);
    }

    /// Coefficients `start..start + acc.len()` of Algorithms 11 and 12's
    /// Σ a_i ∘ b_i · 2^-16, reduced as [`Backend::multiply_accumulate`]
    /// reduces them (`start` and the length multiples of 32): key
    /// generation's pools compute t̂ a slice at a time, as Â is sampled. The
    /// default computes the whole sum and keeps the slice.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // x86-64 pools only
    #[inline(always)]
    fn multiply_accumulate_range(acc: &mut [i16], a: &[&Poly], b: &[Poly], start: usize) {
        let mut sum = Poly::ZERO;
        ntt::multiply_accumulate(&mut sum, a, b);
        acc.copy_from_slice(&sum.coeffs[start..start + acc.len()]);
        // The rest of Â ∘ ŝ would give ê away beside the public t̂.
        zeroize::Zeroize::zeroize(&mut sum);
    }

    /// Â as a row-major k×k matrix: `out[i*k + j]` = SampleNTT(ρ ‖ j ‖ i).
    #[inline(always)]
    fn sample_matrix(rho: &[u8; 32], k: usize, out: &mut [Poly]) {
        for (index, entry) in out.iter_mut().enumerate() {
            let (i, j) = (index / k, index % k);
            sample::sample_ntt::<Self>(rho, j as u8, i as u8, entry);
        }
    }

    /// Algorithm 13 (K-PKE.KeyGen) after G, with ek = ByteEncode_12(t̂) ‖ ρ
    /// and H(ek), for a backend that runs it its own way (e.g. overlapping
    /// the hash with the sampling): fills `out` exactly as
    /// [`crate::pke::generate`] does and returns H(ek). The default,
    /// `None`, leaves it to that sequential algorithm.
    #[inline(always)]
    fn generate_key<P: ParameterSet>(
        _rho: &[u8; 32],
        _sigma: &[u8; 32],
        _out: &mut KeyBuffers<'_>,
    ) -> Option<[u8; 32]> {
        None
    }

    /// H(ek) and Â^T (`out[j*k + i]` = Â[i, j], the layout K-PKE.Encrypt
    /// reads) of an encapsulation key being parsed: both depend only on its
    /// bytes. With `rejection` = (z, c), for a decapsulation key parsed to
    /// decapsulate one ciphertext at once, J(z ‖ c) too; SIMD backends
    /// absorb its blocks in the same pool, beside the hash (`expand_avx2`).
    #[inline(always)]
    fn hash_and_sample_matrix(
        ek: &[u8],
        rho: &[u8; 32],
        k: usize,
        out: &mut [Poly],
        rejection: Option<(&[u8; 32], &[u8])>,
    ) -> ([u8; 32], Option<[u8; 32]>) {
        Self::sample_matrix(rho, k, out);
        crate::poly::transpose(k, out);
        let j = rejection.map(|(z, c)| crate::hash::j::<Self>(z, c));
        (crate::hash::h::<Self>(ek), j)
    }

    /// Noise vector: `out[i]` = SamplePolyCBD_eta(PRF_eta(seed, nonce + i)).
    #[inline(always)]
    fn sample_noise<const ETA: usize>(seed: &[u8; 32], nonce: u8, out: &mut [Poly]) {
        let mut prf_out = [0u8; 192];
        let bytes = &mut prf_out[..64 * ETA];
        for (i, p) in out.iter_mut().enumerate() {
            crate::hash::prf::<Self>(seed, nonce + i as u8, bytes);
            sample::sample_poly_cbd::<ETA>(bytes, p);
        }
        zeroize::Zeroize::zeroize(&mut prf_out);
    }

    /// The noise of K-PKE.Encrypt (Algorithm 14, lines 9-17) from its
    /// randomness r: y (k polynomials, eta1, PRF nonces 0..k) and e1 ‖ e2
    /// (k + 1 polynomials, eta2, nonces k..2k + 1).
    #[inline(always)]
    fn sample_encryption_noise<P: ParameterSet>(r: &[u8; 32], y: &mut [Poly], e1_e2: &mut [Poly]) {
        crate::pke::sample_encryption_noise::<P, Self>(r, y, e1_e2);
    }

    /// Decapsulation's hashes after K-PKE.Decrypt: (K', r') = G(m' ‖ h)
    /// and K̄ = J(z ‖ c) (Algorithm 18, lines 7-8), returned as (K', K̄),
    /// and the re-encryption's noise from r' (Algorithm 14, lines 9-17:
    /// y, k polynomials with eta1, and e1 ‖ e2, k + 1 with eta2) written to
    /// `y` and `e1_e2`; r' stays inside. The default runs them one after
    /// the other; SIMD backends overlap J's long absorption of c with G and
    /// the noise streams (`decaps_x86`).
    #[inline(always)]
    fn decaps_hashes<P: ParameterSet>(
        input: &DecapsHashInput<'_>,
        y: &mut [Poly],
        e1_e2: &mut [Poly],
    ) -> ([u8; 32], [u8; 32]) {
        let (shared, mut r) = crate::hash::g::<Self>(input.m, input.h);
        let rejection = match input.rejection {
            Some(computed) => *computed,
            None => crate::hash::j::<Self>(input.z, input.c),
        };
        Self::sample_encryption_noise::<P>(&r, y, e1_e2);
        zeroize::Zeroize::zeroize(&mut r);
        (shared, rejection)
    }

    /// ByteEncode_d(Compress_d(p)) into 32·d bytes.
    #[inline(always)]
    fn compress_encode<const D: usize>(p: &Poly, out: &mut [u8]) {
        encode::pack::<D>(p, out, compress::compress::<D>);
    }

    /// Decompress_d(ByteDecode_d(bytes)); coefficients in [0, q).
    #[inline(always)]
    fn decode_decompress<const D: usize>(bytes: &[u8], p: &mut Poly) {
        encode::unpack::<D>(bytes, p, compress::decompress::<D>);
    }

    /// ByteEncode_12 of a polynomial with coefficients in (-q, q).
    #[inline(always)]
    fn encode_12(p: &Poly, out: &mut [u8]) {
        encode::encode_12(p, out);
    }

    /// ByteDecode_12, reporting whether every value was below q.
    #[inline(always)]
    fn decode_12_checked(bytes: &[u8], p: &mut Poly) -> bool {
        encode::decode_12_checked(bytes, p)
    }
}

/// Runs an AVX2 test body if the CPU has AVX2, else reports the skip: the
/// one place the AVX2 unit tests turn the detection into the `unsafe` call.
/// Only for bodies that need AVX2 alone (not BMI1 or AVX-512).
#[cfg(all(test, target_arch = "x86_64"))]
#[allow(unsafe_code)]
pub(crate) fn run_if_avx2(check: unsafe fn()) {
    if !is_x86_feature_detected!("avx2") {
        eprintln!("AVX2 not available; skipping");
        return;
    }
    // SAFETY: AVX2 was detected, the only requirement of the test bodies.
    unsafe { check() }
}

/// The hash sponges run on the backend's one-way permutation.
impl<B: Backend> crate::hash::Permutation for B {
    #[inline(always)]
    fn keccak_f1600(state: &mut [u64; 25]) {
        let start = crate::profile_hooks::permutation_start();
        B::keccak_f1600(state);
        crate::profile_hooks::permutation_end(start, 1);
    }
}

/// Runs `$body` with `$b` bound to the active backend's type: the one
/// place where the backend choice becomes a monomorphised code path.
macro_rules! dispatch {
    ($b:ident => $body:expr) => {
        match $crate::backend::active_backend() {
            $crate::backend::BackendKind::Portable => {
                type $b = $crate::backend::Portable;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            $crate::backend::BackendKind::Avx2 => {
                type $b = $crate::backend::Avx2;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            $crate::backend::BackendKind::Avx512Keccak => {
                type $b = $crate::backend::Avx512Keccak;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            $crate::backend::BackendKind::Avx512 => {
                type $b = $crate::backend::Avx512;
                $body
            }
            #[cfg(all(target_arch = "aarch64", target_feature = "neon"))]
            $crate::backend::BackendKind::Neon => {
                type $b = $crate::backend::Neon;
                $body
            }
        }
    };
}
pub(crate) use dispatch;
