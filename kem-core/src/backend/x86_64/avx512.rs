//! The x86-64 AVX-512 backends: the AVX2 backend's arithmetic, with its
//! sponges on AVX-512 Keccak. `Avx512` also runs the NTT, inverse NTT and
//! base multiplication on 512-bit vectors; `Avx512Keccak` keeps those on the
//! AVX2 code, so that it runs no 512-bit multiply (the default on Intel,
//! see `select::preferred_backend`). Both are `Avx512Backend`, whose const
//! parameter is the width of those three.
//!
//! - Pools of sponges (key generation, parsing an encapsulation key,
//!   decapsulation's hashes) and noise sampling run up to eight sponges per
//!   step on the eight-way permutation on 512-bit vectors (`x86_64::keccak::x8`), or
//!   two to four on the four-way permutation on AVX-512VL's rotate and
//!   ternary-logic instructions (256-bit vectors, about half the
//!   operations of the AVX2 one), whichever is cheaper for the step.
//! - The one-way permutation is that four-way one with the state broadcast
//!   to its four instances (`x86_64::keccak::x4::keccak_f1600_avx512vl`).
//! - On `Avx512`, NTT, inverse NTT and base multiplication run on 512-bit
//!   vectors (`x86_64::ntt512`; the same coefficients as the AVX2 code). On
//!   Intel this is the part that runs slower for about a millisecond after
//!   a pause (the power-state change for 512-bit multiplies), and the clock
//!   change it brings slows the code around it too, which is why
//!   `Avx512Keccak` exists (see `select::preferred_backend`).
//! - Rejection sampling of the matrix takes 32 candidates a step with
//!   VBMI's byte permutation and VBMI2's compression (`x86_64::rejection512`) where
//!   the CPU has them.
//! - Everything else is the AVX2 code (`avx2`).
//!
//! # Safety
//!
//! Both types are only ever used through `dispatch!`, which selects them
//! only when `BackendKind::Avx512.is_available()` (the same as
//! `BackendKind::Avx512Keccak`'s) holds: AVX2, BMI1, AVX-512F, AVX-512VL,
//! AVX-512BW. The process default is chosen among available backends, and
//! `set_backend` / `with_backend` refuse an unavailable one. So whenever an
//! `Avx512Backend` method runs, the CPU has those features, the
//! requirements of the `unsafe` calls below and of the AVX2 methods it
//! delegates to.

use super::pools::PoolKernels;
use super::Avx2;
use crate::backend::traits::{
    DecapsHashInput, Keccak, KeyBuffers, PolyKernels, Sampling, Schedule,
};
use crate::params::ParameterSet;
use crate::poly::{Poly, N};

/// The AVX-512 backends (selected only on CPUs with AVX-512F/BW/VL; see the
/// module docs), with NTT, inverse NTT and base multiplication on
/// `ARITHMETIC_BITS`-bit vectors: 512 or 256 (the AVX2 code).
pub(crate) struct Avx512Backend<const ARITHMETIC_BITS: usize>;

/// AVX-512 throughout, 512-bit NTT and base multiplication included.
pub(crate) type Avx512 = Avx512Backend<512>;

/// AVX-512 for the sponges, the AVX2 code for all the arithmetic.
pub(crate) type Avx512Keccak = Avx512Backend<256>;

/// Defines a `Backend` method that calls the same-named function in
/// `with_avx512`.
macro_rules! avx512_method {
    // `[BITS]` passes the arithmetic width to a pool (see `with_avx512`).
    ($(#[$attr:meta])* fn $name:ident $(<const $c:ident: usize>)? $([$bits:ident])? ($($arg:ident: $ty:ty),*) $(-> $ret:ty)?) => {
        $(#[$attr])*
        #[inline(always)]
        fn $name $(<const $c: usize>)? ($($arg: $ty),*) $(-> $ret)? {
            // SAFETY: `Avx512Backend` runs only where AVX2, BMI1,
            // AVX-512F, AVX-512VL and AVX-512BW are available (module docs).
            unsafe { with_avx512::$name::<$($bits)? $($c)?>($($arg),*) }
        }
    };
    // The same, generic over the parameter set.
    ($(#[$attr:meta])* fn $name:ident <$p:ident: ParameterSet> $([$bits:ident])? ($($arg:ident: $ty:ty),*) $(-> $ret:ty)?) => {
        $(#[$attr])*
        #[inline(always)]
        fn $name<$p: ParameterSet>($($arg: $ty),*) $(-> $ret)? {
            // SAFETY: as above.
            unsafe { with_avx512::$name::<$($bits,)? $p>($($arg),*) }
        }
    };
}

/// Defines an arithmetic `Backend` method: `x86_64::ntt512`'s on 512-bit
/// vectors, else the AVX2 backend's.
macro_rules! arithmetic_method {
    (fn $name:ident ($($arg:ident: $ty:ty),*)) => {
        #[inline(always)]
        fn $name($($arg: $ty),*) {
            if ARITHMETIC_BITS == 512 {
                // SAFETY: `Avx512Backend` runs only where AVX2, AVX-512F and
                // AVX-512BW are available (module docs).
                unsafe { with_avx512::$name($($arg),*) }
            } else {
                Avx2::$name($($arg),*)
            }
        }
    };
}

impl<const ARITHMETIC_BITS: usize> Keccak for Avx512Backend<ARITHMETIC_BITS> {
    avx512_method!(fn keccak_f1600(state: &mut [u64; 25]));
}

/// The arithmetic: [`arithmetic_method!`]'s three, and the AVX2 code for
/// the rest (AVX-512 implies AVX2 and BMI1 here: see
/// `BackendKind::is_available`).
impl<const ARITHMETIC_BITS: usize> PolyKernels for Avx512Backend<ARITHMETIC_BITS> {
    arithmetic_method!(fn ntt(p: &mut Poly));
    arithmetic_method!(fn inv_ntt(p: &mut Poly));
    arithmetic_method!(fn multiply_accumulate(acc: &mut Poly, a: &[Poly], b: &[Poly]));

    #[inline(always)]
    fn compress_encode<const D: usize>(p: &Poly, out: &mut [u8]) {
        Avx2::compress_encode::<D>(p, out);
    }

    #[inline(always)]
    fn decode_decompress<const D: usize>(bytes: &[u8], p: &mut Poly) {
        Avx2::decode_decompress::<D>(bytes, p);
    }

    #[inline(always)]
    fn encode_12(p: &Poly, out: &mut [u8]) {
        Avx2::encode_12(p, out);
    }

    #[inline(always)]
    fn decode_12_checked(bytes: &[u8], p: &mut Poly) -> bool {
        Avx2::decode_12_checked(bytes, p)
    }
}

impl<const ARITHMETIC_BITS: usize> Sampling for Avx512Backend<ARITHMETIC_BITS> {
    avx512_method!(fn sample_noise<const ETA: usize>(seed: &[u8; 32], nonce: u8, out: &mut [Poly]));
}

impl<const ARITHMETIC_BITS: usize> Schedule for Avx512Backend<ARITHMETIC_BITS> {
    avx512_method!(fn generate_key<P: ParameterSet> [ARITHMETIC_BITS] (rho: &[u8; 32], sigma: &[u8; 32], out: &mut KeyBuffers<'_>) -> Option<[u8; 32]>);
    avx512_method!(fn hash_and_sample_matrix [ARITHMETIC_BITS] (ek: &[u8], rho: &[u8; 32], k: usize, out: &mut [Poly], rejection: Option<(&[u8; 32], &[u8])>) -> ([u8; 32], Option<[u8; 32]>));
    avx512_method!(fn sample_encryption_noise<P: ParameterSet>(r: &[u8; 32], y: &mut [Poly], e1_e2: &mut [Poly]));
    avx512_method!(fn decaps_hashes<P: ParameterSet> [ARITHMETIC_BITS] (input: &DecapsHashInput<'_>, y: &mut [Poly], e1_e2: &mut [Poly]) -> ([u8; 32], [u8; 32]));
}

impl<const ARITHMETIC_BITS: usize> PoolKernels for Avx512Backend<ARITHMETIC_BITS> {
    const KECCAK_WIDTH: usize = crate::backend::x86_64::keccak::x8::WIDTH;

    avx512_method!(fn keccak_f1600_many(states: &mut [[u64; 25]], chosen: &[usize]));
    arithmetic_method!(fn multiply_accumulate_range(acc: &mut [i16], a: &[&Poly], b: &[Poly], start: usize));

    /// VBMI2's compressing store where the CPU has it (Ice Lake, Zen 4 and
    /// later), else the AVX2 code. The check is the standard library's
    /// cached detection, a load and a test per block; which code runs
    /// depends on the CPU only.
    #[inline(always)]
    fn rejection_sample_block(coeffs: &mut [i16; N], filled: usize, state: &[u64; 25]) -> usize {
        if crate::backend::x86_64::rejection512::is_available() {
            // SAFETY: `Avx512Backend` runs only where AVX2, AVX-512F and
            // AVX-512BW are available (module docs), and VBMI and VBMI2 were
            // just detected.
            unsafe {
                crate::backend::x86_64::rejection512::rejection_sample_block(coeffs, filled, state)
            }
        } else {
            Avx2::rejection_sample_block(coeffs, filled, state)
        }
    }
}

/// The sponge code, compiled for AVX-512. The pools take the backend's
/// arithmetic width (key generation's transforms and multiplies); noise
/// sampling only hashes, so it runs as `Avx512` on either backend.
mod with_avx512 {
    use super::{Avx512, Avx512Backend};
    use crate::backend::traits::KeyBuffers;
    use crate::backend::x86_64::keccak::{x4 as keccak_x4, x8 as keccak_x8};
    use crate::backend::x86_64::ntt512;
    use crate::params::ParameterSet;
    use crate::poly::Poly;

    /// The one-way permutation on AVX-512VL (see `x86_64::keccak::x4`).
    #[target_feature(enable = "avx2,avx512f,avx512vl")]
    pub(super) fn keccak_f1600(state: &mut [u64; 25]) {
        keccak_x4::keccak_f1600_avx512vl(state);
    }

    /// One sponge on the one-way permutation, two to four on the four-way
    /// one, five to eight on the eight-way one: each costs less than the
    /// next wider one, so a step takes the narrowest that holds it.
    #[target_feature(enable = "avx2,avx512f,avx512vl")]
    pub(super) fn keccak_f1600_many(states: &mut [[u64; 25]], chosen: &[usize]) {
        match chosen.len() {
            1 => {
                let start = crate::profile_hooks::permutation_start();
                keccak_f1600(&mut states[chosen[0]]);
                crate::profile_hooks::permutation_end(start, 1);
            }
            2..=4 => keccak_x4::permute_selected_avx512vl(states, chosen),
            _ => keccak_x8::permute_selected(states, chosen),
        }
    }

    #[target_feature(enable = "avx2,avx512f,avx512bw")]
    pub(super) fn ntt(p: &mut Poly) {
        ntt512::ntt(p);
    }

    #[target_feature(enable = "avx2,avx512f,avx512bw")]
    pub(super) fn inv_ntt(p: &mut Poly) {
        ntt512::inv_ntt(p);
    }

    #[target_feature(enable = "avx2,avx512f,avx512bw")]
    pub(super) fn multiply_accumulate(acc: &mut Poly, a: &[Poly], b: &[Poly]) {
        ntt512::multiply_accumulate(acc, a, b);
    }

    #[target_feature(enable = "avx2,avx512f,avx512bw")]
    pub(super) fn multiply_accumulate_range(
        acc: &mut [i16],
        a: &[&Poly],
        b: &[Poly],
        start: usize,
    ) {
        ntt512::multiply_accumulate_range(acc, a, b, start);
    }

    crate::backend::x86_64::pools::sponge_pools!(Avx512Backend<BITS>, "avx2,avx512f,avx512vl", 8, const BITS);

    /// Noise, eight PRF streams at a time on the eight-way permutation
    /// where a batch has more than four of eta = 2 (`x86_64::keccak::x8::prf2_x8`,
    /// which builds the states interleaved), else four at a time on the
    /// AVX-512VL four-way one (`x86_64::pools::noise`).
    #[target_feature(enable = "avx2,avx512f,avx512vl")]
    pub(super) fn sample_noise<const ETA: usize>(seed: &[u8; 32], nonce: u8, out: &mut [Poly]) {
        let mut nonce = nonce;
        for batch in out.chunks_mut(keccak_x8::WIDTH) {
            if ETA == 2 && batch.len() > 4 {
                crate::profile_hooks::count(
                    crate::profile_hooks::Primitive::Prf,
                    batch.len() as u64,
                );
                keccak_x8::prf2_x8(seed, nonce, batch.len(), |i, words| {
                    crate::backend::x86_64::cbd::sample_poly_cbd2(words, &mut batch[i]);
                });
            } else {
                crate::backend::x86_64::pools::noise::sample_noise::<Avx512, ETA, 4>(
                    seed, nonce, batch,
                );
            }
            nonce = nonce.wrapping_add(batch.len() as u8);
        }
    }

    /// K-PKE.Encrypt's noise: where every stream has eta = 2 and all
    /// 2k + 1 fit in one eight-way permutation (ML-KEM-768: their nonces
    /// 0..2k + 1 are consecutive), one `x86_64::keccak::x8::prf2_x8` for y and e1 ‖
    /// e2 together instead of a four-way permutation for each; else
    /// `x86_64::pools::noise`'s.
    #[target_feature(enable = "avx2,avx512f,avx512vl")]
    pub(super) fn sample_encryption_noise<P: ParameterSet>(
        r: &[u8; 32],
        y: &mut [Poly],
        e1_e2: &mut [Poly],
    ) {
        let streams = y.len() + e1_e2.len();
        if P::ETA1 == 2 && P::ETA2 == 2 && streams <= keccak_x8::WIDTH {
            crate::profile_hooks::count(crate::profile_hooks::Primitive::Prf, streams as u64);
            keccak_x8::prf2_x8(r, 0, streams, |i, words| {
                let poly = match i.checked_sub(y.len()) {
                    Some(e) => &mut e1_e2[e],
                    None => &mut y[i],
                };
                crate::backend::x86_64::cbd::sample_poly_cbd2(words, poly);
            });
        } else {
            crate::backend::x86_64::pools::noise::sample_encryption_noise::<Avx512, P>(r, y, e1_e2);
        }
    }
}
