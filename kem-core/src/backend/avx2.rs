//! The x86-64 AVX2 backend.
//!
//! Every hot spot runs inside a `#[target_feature(enable = "avx2")]`
//! function, so the shared arithmetic (NTT, base multiplication, compression,
//! encoding, noise sampling) is compiled with 256-bit vectors. This module
//! holds the `unsafe` calls of those functions from the (feature-less)
//! `Backend` methods. The rest of kem-core's `unsafe` is the vector loads
//! and stores (`mem_avx2`), the AVX-512VL Keccak calls (`keccak_x4`) and
//! the volatile wipe (`crate::wipe`).
//!
//! # Safety
//!
//! `Avx2` is only ever used through `dispatch!`, which selects it only
//! when `BackendKind::Avx2.is_available()` (AVX2 and BMI1) holds: the process default is
//! chosen among available backends, and `set_backend` / `with_backend`
//! refuse an unavailable one. So whenever an `Avx2` method runs, the CPU
//! supports AVX2 and BMI1, the requirements of the `unsafe` calls below.

use super::Backend;
use crate::backend::KeyBuffers;
use crate::params::ParameterSet;
use crate::poly::Poly;

/// The AVX2 backend (selected only on CPUs with AVX2; see the module docs).
pub(crate) struct Avx2;

/// Defines a `Backend` method that calls the same-named AVX2-compiled
/// function in `with_avx2`.
macro_rules! avx2_method {
    ($(#[$attr:meta])* fn $name:ident $(<const $c:ident: usize>)? ($($arg:ident: $ty:ty),*) $(-> $ret:ty)?) => {
        $(#[$attr])*
        #[inline(always)]
        fn $name $(<const $c: usize>)? ($($arg: $ty),*) $(-> $ret)? {
            // SAFETY: `Avx2` runs only where AVX2 and BMI1 are available
            // (module docs).
            unsafe { with_avx2::$name $(::<$c>)? ($($arg),*) }
        }
    };
    // The same, generic over the parameter set.
    ($(#[$attr:meta])* fn $name:ident <$p:ident: ParameterSet> ($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        $(#[$attr])*
        #[inline(always)]
        fn $name<$p: ParameterSet>($($arg: $ty),*) -> $ret {
            // SAFETY: `Avx2` runs only where AVX2 and BMI1 are available
            // (module docs).
            unsafe { with_avx2::$name::<$p>($($arg),*) }
        }
    };
}

impl Backend for Avx2 {
    avx2_method!(fn keccak_f1600(state: &mut [u64; 25]));
    avx2_method!(fn ntt(p: &mut Poly));
    avx2_method!(fn inv_ntt(p: &mut Poly));
    avx2_method!(fn multiply_accumulate(acc: &mut Poly, a: &[Poly], b: &[Poly]));
    avx2_method!(fn generate_key<P: ParameterSet>(rho: &[u8; 32], sigma: &[u8; 32], out: &mut KeyBuffers<'_>) -> Option<[u8; 32]>);
    avx2_method!(fn hash_and_sample_matrix(ek: &[u8], rho: &[u8; 32], k: usize, out: &mut [Poly]) -> [u8; 32]);
    avx2_method!(fn sample_noise<const ETA: usize>(seed: &[u8; 32], nonce: u8, out: &mut [Poly]));
    avx2_method!(fn compress_encode<const D: usize>(p: &Poly, out: &mut [u8]));
    avx2_method!(fn decode_decompress<const D: usize>(bytes: &[u8], p: &mut Poly));
    avx2_method!(fn encode_12(p: &Poly, out: &mut [u8]));
    avx2_method!(fn decode_12_checked(bytes: &[u8], p: &mut Poly) -> bool);
}

/// The portable definitions, compiled for AVX2.
mod with_avx2 {
    use crate::backend::keccak_x4::SpongeX4;
    use crate::backend::ntt_avx2;
    use crate::backend::KeyBuffers;
    use crate::backend::{Backend, Portable};
    use crate::hash::{SHAKE256_RATE, SHAKE_DOMAIN};
    use crate::params::ParameterSet;
    use crate::poly::Poly;

    /// The unrolled one-way permutation, with BMI1's `andn` for chi.
    #[target_feature(enable = "avx2,bmi1")]
    pub(super) fn keccak_f1600(state: &mut [u64; 25]) {
        if crate::backend::keccak_x4::use_avx512vl() {
            // SAFETY: the AVX-512 backend is active only on CPUs with
            // AVX-512F and AVX-512VL (checked whenever a backend is chosen).
            #[allow(unsafe_code)]
            unsafe {
                crate::backend::keccak_x4::keccak_f1600_avx512vl(state)
            };
            return;
        }
        crate::backend::keccak_f1600::keccak_f1600(state);
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn ntt(p: &mut Poly) {
        ntt_avx2::ntt(p);
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn inv_ntt(p: &mut Poly) {
        ntt_avx2::inv_ntt(p);
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn multiply_accumulate(acc: &mut Poly, a: &[Poly], b: &[Poly]) {
        crate::backend::basemul_avx2::multiply_accumulate(acc, a, b);
    }

    /// Key generation as one pool of sponges (see `keygen_avx2`).
    #[target_feature(enable = "avx2")]
    pub(super) fn generate_key<P: ParameterSet>(
        rho: &[u8; 32],
        sigma: &[u8; 32],
        out: &mut KeyBuffers<'_>,
    ) -> Option<[u8; 32]> {
        use crate::backend::keygen_avx2::generate;
        // (k, eta1) of the three parameter sets, with the pool's sizes.
        match (P::K, P::ETA1) {
            (2, 3) => Some(generate::<2, 3, 9, 4>(rho, sigma, out)),
            (3, 2) => Some(generate::<3, 2, 16, 0>(rho, sigma, out)),
            (4, 2) => Some(generate::<4, 2, 25, 0>(rho, sigma, out)),
            _ => unreachable!("FIPS 203 has three parameter sets"),
        }
    }

    /// H(ek) and Â sharing one 4-way Keccak (see `expand_avx2`).
    #[target_feature(enable = "avx2")]
    pub(super) fn hash_and_sample_matrix(
        ek: &[u8],
        rho: &[u8; 32],
        k: usize,
        out: &mut [Poly],
    ) -> [u8; 32] {
        crate::backend::expand_avx2::hash_and_sample_matrix(ek, rho, k, out)
    }

    /// Noise with four PRF streams at a time (4-way SHAKE256); a single
    /// leftover polynomial takes the one-way sponge.
    #[target_feature(enable = "avx2")]
    pub(super) fn sample_noise<const ETA: usize>(seed: &[u8; 32], nonce: u8, out: &mut [Poly]) {
        let mut nonce = nonce;
        for batch in out.chunks_mut(4) {
            if batch.len() == 1 {
                Portable::sample_noise::<ETA>(seed, nonce, batch);
            } else {
                sample_noise_x4::<ETA>(seed, nonce, batch);
            }
            nonce = nonce.wrapping_add(4);
        }
    }

    /// Polynomials with PRF nonces `nonce..nonce + out.len()` (2 to 4).
    #[target_feature(enable = "avx2")]
    fn sample_noise_x4<const ETA: usize>(seed: &[u8; 32], nonce: u8, out: &mut [Poly]) {
        crate::profile_hooks::count(crate::profile_hooks::Primitive::Prf, out.len() as u64);
        let inputs: [[u8; 33]; 4] = core::array::from_fn(|lane| {
            let mut input = [0u8; 33];
            input[..32].copy_from_slice(seed);
            input[32] = nonce.wrapping_add(lane.min(out.len() - 1) as u8);
            input
        });
        let mut sponge =
            SpongeX4::<SHAKE256_RATE>::absorb(inputs.each_ref().map(|i| &i[..]), SHAKE_DOMAIN);
        // 64·eta bytes each: one block for eta = 2, two for eta = 3.
        let mut buffers = [[0u8; 64 * 3]; 4];
        let len = 64 * ETA;
        let mut offset = 0;
        while offset < len {
            let end = (offset + SHAKE256_RATE).min(len);
            let [b0, b1, b2, b3] = &mut buffers;
            sponge.squeeze_block([
                &mut b0[offset..end],
                &mut b1[offset..end],
                &mut b2[offset..end],
                &mut b3[offset..end],
            ]);
            offset = end;
        }
        for (poly, buffer) in out.iter_mut().zip(&buffers) {
            crate::backend::cbd_avx2::sample_poly_cbd::<ETA>(&buffer[..len], poly);
        }
        crate::wipe::wipe(&mut buffers, [[0; 64 * 3]; 4]);
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn compress_encode<const D: usize>(p: &Poly, out: &mut [u8]) {
        Portable::compress_encode::<D>(p, out);
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn decode_decompress<const D: usize>(bytes: &[u8], p: &mut Poly) {
        Portable::decode_decompress::<D>(bytes, p);
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn encode_12(p: &Poly, out: &mut [u8]) {
        crate::backend::encode_avx2::encode_12::<true>(&p.coeffs, out);
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn decode_12_checked(bytes: &[u8], p: &mut Poly) -> bool {
        Portable::decode_12_checked(bytes, p)
    }
}
