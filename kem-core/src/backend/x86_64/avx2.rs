//! The x86-64 AVX2 backend.
//!
//! Every hot spot runs inside a `#[target_feature(enable = "avx2")]`
//! function, so the shared arithmetic (NTT, base multiplication, compression,
//! encoding, noise sampling) is compiled with 256-bit vectors. This module
//! holds the `unsafe` calls of those functions from the (feature-less)
//! `Backend` methods. The rest of kem-core's `unsafe` is the vector loads
//! and stores (`x86_64::mem`), the AVX-512VL Keccak calls (`x86_64::keccak::x4`) and
//! the volatile wipe (`crate::wipe`).
//!
//! # Safety
//!
//! `Avx2` is only ever used through `dispatch!`, which selects it only
//! when `BackendKind::Avx2.is_available()` (AVX2 and BMI1) holds: the process default is
//! chosen among available backends, and `set_backend` / `with_backend`
//! refuse an unavailable one. So whenever an `Avx2` method runs, the CPU
//! supports AVX2 and BMI1, the requirements of the `unsafe` calls below.

use super::pools::PoolKernels;
use crate::backend::traits::{
    DecapsHashInput, Keccak, KeyBuffers, PolyKernels, Sampling, Schedule,
};
use crate::params::ParameterSet;
use crate::poly::{Poly, N};

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
    ($(#[$attr:meta])* fn $name:ident <$p:ident: ParameterSet> ($($arg:ident: $ty:ty),*) $(-> $ret:ty)?) => {
        $(#[$attr])*
        #[inline(always)]
        fn $name<$p: ParameterSet>($($arg: $ty),*) $(-> $ret)? {
            // SAFETY: `Avx2` runs only where AVX2 and BMI1 are available
            // (module docs).
            unsafe { with_avx2::$name::<$p>($($arg),*) }
        }
    };
}

impl Keccak for Avx2 {
    avx2_method!(fn keccak_f1600(state: &mut [u64; 25]));
}

impl PolyKernels for Avx2 {
    avx2_method!(fn ntt(p: &mut Poly));
    avx2_method!(fn inv_ntt(p: &mut Poly));
    avx2_method!(fn multiply_accumulate(acc: &mut Poly, a: &[Poly], b: &[Poly]));
    avx2_method!(fn compress_encode<const D: usize>(p: &Poly, out: &mut [u8]));
    avx2_method!(fn decode_decompress<const D: usize>(bytes: &[u8], p: &mut Poly));
    avx2_method!(fn encode_12(p: &Poly, out: &mut [u8]));
    avx2_method!(fn decode_12_checked(bytes: &[u8], p: &mut Poly) -> bool);
}

impl Sampling for Avx2 {
    avx2_method!(fn sample_noise<const ETA: usize>(seed: &[u8; 32], nonce: u8, out: &mut [Poly]));
}

impl Schedule for Avx2 {
    avx2_method!(fn generate_key<P: ParameterSet>(rho: &[u8; 32], sigma: &[u8; 32], out: &mut KeyBuffers<'_>) -> Option<[u8; 32]>);
    avx2_method!(fn hash_and_sample_matrix(ek: &[u8], rho: &[u8; 32], k: usize, out: &mut [Poly], rejection: Option<(&[u8; 32], &[u8])>) -> ([u8; 32], Option<[u8; 32]>));
    avx2_method!(fn sample_encryption_noise<P: ParameterSet>(r: &[u8; 32], y: &mut [Poly], e1_e2: &mut [Poly]));
    avx2_method!(fn decaps_hashes<P: ParameterSet>(input: &DecapsHashInput<'_>, y: &mut [Poly], e1_e2: &mut [Poly]) -> ([u8; 32], [u8; 32]));
}

impl PoolKernels for Avx2 {
    const KECCAK_WIDTH: usize = 4;

    avx2_method!(fn keccak_f1600_many(states: &mut [[u64; 25]], chosen: &[usize]));
    avx2_method!(fn rejection_sample_block(coeffs: &mut [i16; N], filled: usize, state: &[u64; 25]) -> usize);
    avx2_method!(fn multiply_accumulate_range(acc: &mut [i16], a: &[&Poly], b: &[Poly], start: usize));
}

/// The portable definitions, compiled for AVX2.
mod with_avx2 {
    use super::Avx2;
    use crate::backend::portable::Portable;
    use crate::backend::traits::KeyBuffers;
    use crate::backend::traits::PolyKernels;
    use crate::backend::x86_64::keccak::x4 as keccak_x4;
    use crate::backend::x86_64::ntt256;
    use crate::params::ParameterSet;
    use crate::poly::{Poly, N};

    /// The unrolled one-way permutation, with BMI1's `andn` for chi.
    #[target_feature(enable = "avx2,bmi1")]
    pub(super) fn keccak_f1600(state: &mut [u64; 25]) {
        crate::backend::x86_64::keccak::x1::keccak_f1600(state);
    }

    /// One sponge on the one-way permutation, two to four on the four-way
    /// one (which costs about twice the one-way).
    #[target_feature(enable = "avx2,bmi1")]
    pub(super) fn keccak_f1600_many(states: &mut [[u64; 25]], chosen: &[usize]) {
        match chosen {
            [one] => {
                let start = crate::profile_hooks::permutation_start();
                keccak_f1600(&mut states[*one]);
                crate::profile_hooks::permutation_end(start, 1);
            }
            _ => keccak_x4::permute_selected(states, chosen),
        }
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn ntt(p: &mut Poly) {
        ntt256::ntt(p);
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn inv_ntt(p: &mut Poly) {
        ntt256::inv_ntt(p);
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn multiply_accumulate(acc: &mut Poly, a: &[Poly], b: &[Poly]) {
        crate::backend::x86_64::basemul256::multiply_accumulate(acc, a, b);
    }

    /// K-PKE.Encrypt's noise (see `x86_64::pools::noise`).
    #[target_feature(enable = "avx2")]
    pub(super) fn sample_encryption_noise<P: ParameterSet>(
        r: &[u8; 32],
        y: &mut [Poly],
        e1_e2: &mut [Poly],
    ) {
        crate::backend::x86_64::pools::noise::sample_encryption_noise::<Avx2, P>(r, y, e1_e2);
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn multiply_accumulate_range(
        acc: &mut [i16],
        a: &[&Poly],
        b: &[Poly],
        start: usize,
    ) {
        crate::backend::x86_64::basemul256::multiply_accumulate_range(acc, a, b, start);
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn rejection_sample_block(
        coeffs: &mut [i16; N],
        filled: usize,
        state: &[u64; 25],
    ) -> usize {
        crate::backend::x86_64::rejection256::rejection_sample_block(coeffs, filled, state)
    }

    crate::backend::x86_64::pools::sponge_pools!(Avx2, "avx2", 4);

    /// Noise with four PRF streams at a time (see `x86_64::pools::noise`).
    #[target_feature(enable = "avx2")]
    pub(super) fn sample_noise<const ETA: usize>(seed: &[u8; 32], nonce: u8, out: &mut [Poly]) {
        crate::backend::x86_64::pools::noise::sample_noise::<Avx2, ETA, 4>(seed, nonce, out);
    }

    /// The widths of the ciphertext (see `x86_64::compress`); any other d
    /// takes the portable code.
    #[target_feature(enable = "avx2")]
    pub(super) fn compress_encode<const D: usize>(p: &Poly, out: &mut [u8]) {
        match D {
            1 | 4 | 5 | 10 | 11 => crate::backend::x86_64::compress::compress_encode::<D>(p, out),
            _ => Portable::compress_encode::<D>(p, out),
        }
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn decode_decompress<const D: usize>(bytes: &[u8], p: &mut Poly) {
        match D {
            1 | 4 | 5 | 10 | 11 => {
                crate::backend::x86_64::compress::decode_decompress::<D>(bytes, p)
            }
            _ => Portable::decode_decompress::<D>(bytes, p),
        }
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn encode_12(p: &Poly, out: &mut [u8]) {
        crate::backend::x86_64::encode::encode_12::<true>(&p.coeffs, out);
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn decode_12_checked(bytes: &[u8], p: &mut Poly) -> bool {
        crate::backend::x86_64::encode::decode_12_checked(bytes, p)
    }
}
