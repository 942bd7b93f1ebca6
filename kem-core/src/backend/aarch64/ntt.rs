//! NTT, inverse NTT and base multiplication on 128-bit Neon vectors (eight
//! 16-bit lanes), for the `neon` backend.
//!
//! Every lane computes exactly the portable formulas of `field` and `ntt`
//! (the same products, reductions and layer order), so the coefficients
//! are those of the portable code, value for value:
//!
//! - `fqmul`'s high halves come from `sqdmulh` (the doubled high half):
//!   the low halves of a·b and t·q are equal, so both doubled high halves
//!   carry the same extra bit and `shsub` (halving subtract) of the two is
//!   the portable `high - correction` exactly;
//! - Barrett's `(⌊a·V / 2^16⌋ + 2^9) >> 10` is `srshr #11` of the doubled
//!   high half (rounding shift; equal for every i16, see [`barrett`]);
//! - base multiplication accumulates the same 32-bit sums
//!   (`smlal`) and Montgomery-reduces them like `field::montgomery_reduce`.
//!
//! Layers of distance 8 and more pair whole vectors; the distance-4 and
//! distance-2 layers regroup two vectors with 64-bit or 32-bit zips so that
//! each butterfly's halves sit in matching lanes. Nothing depends on
//! coefficient values but the arithmetic: constant time.

use core::arch::aarch64::{
    int16x8_t, int16x8x2_t, int32x4_t, vaddq_s16, vcombine_s16, vdup_n_s16, vdupq_n_s16,
    vdupq_n_s32, vget_low_s16, vhsubq_s16, vmlal_high_s16, vmlal_s16, vmlsl_high_s16, vmlsl_s16,
    vmlsq_s16, vmovn_s32, vmulq_s16, vqdmulhq_s16, vreinterpretq_s16_s32, vreinterpretq_s16_s64,
    vreinterpretq_s32_s16, vreinterpretq_s64_s16, vrshrq_n_s16, vshrn_n_s32, vsubq_s16, vuzp1q_s32,
    vuzp2q_s32, vzip1q_s32, vzip1q_s64, vzip2q_s32, vzip2q_s64,
};

use crate::backend::aarch64::mem::{load_i16, load_pairs, store_i16, store_pairs};
use crate::field::Q;
use crate::ntt::{GAMMAS, INV_NTT_SCALE, ZETAS};
use crate::poly::{Poly, N};

/// q^-1 mod 2^16, signed (as in `field`).
const Q_INV: i16 = -3327;

/// round(2^26 / q), Barrett's multiplier (as in `field`).
const BARRETT_V: i16 = 20159;

/// Lane-wise `field::fqmul(a, b)`, given `b_qinv = b · Q_INV mod 2^16`.
#[inline]
#[target_feature(enable = "neon")]
fn fqmul(a: int16x8_t, b: int16x8_t, b_qinv: int16x8_t) -> int16x8_t {
    let t = vmulq_s16(a, b_qinv);
    let high = vqdmulhq_s16(a, b);
    let correction = vqdmulhq_s16(t, vdupq_n_s16(Q));
    vhsubq_s16(high, correction)
}

/// Lane-wise `field::fqmul(a, b)` of two variable vectors.
#[inline]
#[target_feature(enable = "neon")]
fn fqmul_vectors(a: int16x8_t, b: int16x8_t) -> int16x8_t {
    fqmul(a, b, vmulq_s16(b, vdupq_n_s16(Q_INV)))
}

/// Lane-wise `field::barrett_reduce`. With x = ⌊a·V / 2^15⌋ = 2h + e
/// (h = ⌊a·V / 2^16⌋, e ∈ {0, 1}), `srshr #11` gives
/// ⌊(h + 2^9 + e/2) / 2^10⌋ = ⌊(h + 2^9) / 2^10⌋, the portable t.
#[inline]
#[target_feature(enable = "neon")]
fn barrett(a: int16x8_t) -> int16x8_t {
    let t = vrshrq_n_s16::<11>(vqdmulhq_s16(a, vdupq_n_s16(BARRETT_V)));
    vmlsq_s16(a, t, vdupq_n_s16(Q))
}

/// `field::montgomery_reduce` of eight 32-bit sums (`low`: lanes 0-3,
/// `high`: lanes 4-7).
#[inline]
#[target_feature(enable = "neon")]
fn montgomery_reduce(low: int32x4_t, high: int32x4_t) -> int16x8_t {
    let t = vmulq_s16(
        vcombine_s16(vmovn_s32(low), vmovn_s32(high)),
        vdupq_n_s16(Q_INV),
    );
    let low = vmlsl_s16(low, vget_low_s16(t), vdup_n_s16(Q));
    let high = vmlsl_high_s16(high, t, vdupq_n_s16(Q));
    vcombine_s16(vshrn_n_s32::<16>(low), vshrn_n_s32::<16>(high))
}

/// The twiddle factors of a distance-`LEN` layer (LEN = 4 or 2) as the
/// lanes of its regrouped vectors see them, 128 per table: block b's zeta
/// repeated LEN times, blocks in the order the layer runs them. `first` is
/// the index of block 0's zeta in `ZETAS`; the inverse layers take them
/// backwards (`step` = -1).
const fn lane_zetas<const LEN: usize>(first: usize, backwards: bool) -> [i16; 128] {
    let mut table = [0i16; 128];
    let mut lane = 0;
    while lane < 128 {
        let block = lane / LEN;
        let index = if backwards {
            first - block
        } else {
            first + block
        };
        table[lane] = ZETAS[index];
        lane += 1;
    }
    table
}

/// `table[i] · Q_INV mod 2^16` for each entry.
const fn times_qinv(table: [i16; 128]) -> [i16; 128] {
    let mut out = [0i16; 128];
    let mut i = 0;
    while i < 128 {
        out[i] = table[i].wrapping_mul(Q_INV);
        i += 1;
    }
    out
}

const FORWARD_4: [i16; 128] = lane_zetas::<4>(32, false);
const FORWARD_4_QINV: [i16; 128] = times_qinv(FORWARD_4);
const FORWARD_2: [i16; 128] = lane_zetas::<2>(64, false);
const FORWARD_2_QINV: [i16; 128] = times_qinv(FORWARD_2);
const INVERSE_2: [i16; 128] = lane_zetas::<2>(127, true);
const INVERSE_2_QINV: [i16; 128] = times_qinv(INVERSE_2);
const INVERSE_4: [i16; 128] = lane_zetas::<4>(63, true);
const INVERSE_4_QINV: [i16; 128] = times_qinv(INVERSE_4);

/// Forward (Cooley-Tukey) butterflies on matching lanes:
/// (a, b) -> (a + ζb, a - ζb).
#[inline]
#[target_feature(enable = "neon")]
fn forward_butterfly(
    a: int16x8_t,
    b: int16x8_t,
    zeta: int16x8_t,
    zeta_qinv: int16x8_t,
) -> (int16x8_t, int16x8_t) {
    let t = fqmul(b, zeta, zeta_qinv);
    (vaddq_s16(a, t), vsubq_s16(a, t))
}

/// Inverse (Gentleman-Sande) butterflies on matching lanes:
/// (a, b) -> (barrett(a + b), ζ(b - a)).
#[inline]
#[target_feature(enable = "neon")]
fn inverse_butterfly(
    a: int16x8_t,
    b: int16x8_t,
    zeta: int16x8_t,
    zeta_qinv: int16x8_t,
) -> (int16x8_t, int16x8_t) {
    (
        barrett(vaddq_s16(a, b)),
        fqmul(vsubq_s16(b, a), zeta, zeta_qinv),
    )
}

/// The forward or the inverse butterfly.
#[inline]
#[target_feature(enable = "neon")]
fn butterfly<const FORWARD: bool>(
    a: int16x8_t,
    b: int16x8_t,
    zeta: int16x8_t,
    zeta_qinv: int16x8_t,
) -> (int16x8_t, int16x8_t) {
    if FORWARD {
        forward_butterfly(a, b, zeta, zeta_qinv)
    } else {
        inverse_butterfly(a, b, zeta, zeta_qinv)
    }
}

/// Splits 16 coefficients (two vectors) of blocks of 2·LEN into the blocks'
/// low and high halves (LEN = 4: 64-bit zips; LEN = 2: 32-bit unzips).
#[inline]
#[target_feature(enable = "neon")]
fn regroup<const LEN: usize>(v0: int16x8_t, v1: int16x8_t) -> (int16x8_t, int16x8_t) {
    if LEN == 4 {
        let (v0, v1) = (vreinterpretq_s64_s16(v0), vreinterpretq_s64_s16(v1));
        (
            vreinterpretq_s16_s64(vzip1q_s64(v0, v1)),
            vreinterpretq_s16_s64(vzip2q_s64(v0, v1)),
        )
    } else {
        let (v0, v1) = (vreinterpretq_s32_s16(v0), vreinterpretq_s32_s16(v1));
        (
            vreinterpretq_s16_s32(vuzp1q_s32(v0, v1)),
            vreinterpretq_s16_s32(vuzp2q_s32(v0, v1)),
        )
    }
}

/// The inverse of [`regroup`].
#[inline]
#[target_feature(enable = "neon")]
fn ungroup<const LEN: usize>(lo: int16x8_t, hi: int16x8_t) -> (int16x8_t, int16x8_t) {
    if LEN == 4 {
        let (lo, hi) = (vreinterpretq_s64_s16(lo), vreinterpretq_s64_s16(hi));
        (
            vreinterpretq_s16_s64(vzip1q_s64(lo, hi)),
            vreinterpretq_s16_s64(vzip2q_s64(lo, hi)),
        )
    } else {
        let (lo, hi) = (vreinterpretq_s32_s16(lo), vreinterpretq_s32_s16(hi));
        (
            vreinterpretq_s16_s32(vzip1q_s32(lo, hi)),
            vreinterpretq_s16_s32(vzip2q_s32(lo, hi)),
        )
    }
}

/// A layer of distance LEN ≥ 8: block b (2·LEN coefficients) uses
/// `zeta_of(b)`, its halves are whole vectors.
#[inline]
#[target_feature(enable = "neon")]
fn wide_layer<const LEN: usize, const FORWARD: bool>(
    r: &mut [i16; N],
    zeta_of: impl Fn(usize) -> i16,
) {
    for block in 0..N / (2 * LEN) {
        let zeta = zeta_of(block);
        let (z, zq) = (vdupq_n_s16(zeta), vdupq_n_s16(zeta.wrapping_mul(Q_INV)));
        let start = block * 2 * LEN;
        for at in (start..start + LEN).step_by(8) {
            let (a, b) = butterfly::<FORWARD>(load_i16(r, at), load_i16(r, at + LEN), z, zq);
            store_i16(r, at, a);
            store_i16(r, at + LEN, b);
        }
    }
}

/// A layer of distance LEN = 4 or 2, 16 coefficients at a time, with the
/// lane tables `zetas` / `zetas_qinv` (see [`lane_zetas`]).
#[inline]
#[target_feature(enable = "neon")]
fn narrow_layer<const LEN: usize, const FORWARD: bool>(
    r: &mut [i16; N],
    zetas: &[i16; 128],
    zetas_qinv: &[i16; 128],
) {
    for step in 0..N / 16 {
        let at = 16 * step;
        let (lo, hi) = regroup::<LEN>(load_i16(r, at), load_i16(r, at + 8));
        let z = load_i16(zetas, 8 * step);
        let zq = load_i16(zetas_qinv, 8 * step);
        let (lo, hi) = butterfly::<FORWARD>(lo, hi, z, zq);
        let (v0, v1) = ungroup::<LEN>(lo, hi);
        store_i16(r, at, v0);
        store_i16(r, at + 8, v1);
    }
}

/// Algorithm 9 (as `ntt::ntt`): input below q in absolute value, output
/// reduced into [-(q-1)/2, (q-1)/2].
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn ntt(p: &mut Poly) {
    let r = &mut p.coeffs;
    wide_layer::<128, true>(r, |b| ZETAS[1 + b]);
    wide_layer::<64, true>(r, |b| ZETAS[2 + b]);
    wide_layer::<32, true>(r, |b| ZETAS[4 + b]);
    wide_layer::<16, true>(r, |b| ZETAS[8 + b]);
    wide_layer::<8, true>(r, |b| ZETAS[16 + b]);
    narrow_layer::<4, true>(r, &FORWARD_4, &FORWARD_4_QINV);
    narrow_layer::<2, true>(r, &FORWARD_2, &FORWARD_2_QINV);
    for at in (0..N).step_by(8) {
        let reduced = barrett(load_i16(r, at));
        store_i16(r, at, reduced);
    }
}

/// Algorithm 10 (as `ntt::inv_ntt`): times 2^16, output below q in
/// absolute value.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn inv_ntt(p: &mut Poly) {
    let r = &mut p.coeffs;
    narrow_layer::<2, false>(r, &INVERSE_2, &INVERSE_2_QINV);
    narrow_layer::<4, false>(r, &INVERSE_4, &INVERSE_4_QINV);
    wide_layer::<8, false>(r, |b| ZETAS[31 - b]);
    wide_layer::<16, false>(r, |b| ZETAS[15 - b]);
    wide_layer::<32, false>(r, |b| ZETAS[7 - b]);
    wide_layer::<64, false>(r, |b| ZETAS[3 - b]);
    wide_layer::<128, false>(r, |b| ZETAS[1 - b]);
    let scale = vdupq_n_s16(INV_NTT_SCALE);
    let scale_qinv = vdupq_n_s16(INV_NTT_SCALE.wrapping_mul(Q_INV));
    for at in (0..N).step_by(8) {
        let scaled = fqmul(load_i16(r, at), scale, scale_qinv);
        store_i16(r, at, scaled);
    }
}

/// Algorithms 11 and 12 (as `ntt::multiply_accumulate`): acc = Σ a_i ∘ b_i
/// · 2^-16, reduced into [-(q-1)/2, (q-1)/2]; eight coefficient pairs at a
/// time, the even and odd coefficients in separate vectors.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn multiply_accumulate(acc: &mut Poly, a: &[Poly], b: &[Poly]) {
    debug_assert_eq!(a.len(), b.len());
    for at in (0..N).step_by(16) {
        let gamma = load_i16(&GAMMAS, at / 2);
        let zero = vdupq_n_s32(0);
        let (mut even_lo, mut even_hi, mut odd_lo, mut odd_hi) = (zero, zero, zero, zero);
        for (pa, pb) in a.iter().zip(b) {
            let int16x8x2_t(a0, a1) = load_pairs(&pa.coeffs, at);
            let int16x8x2_t(b0, b1) = load_pairs(&pb.coeffs, at);
            let a1b1 = fqmul_vectors(a1, b1);
            // s0 += a0·b0 + fqmul(a1, b1)·γ
            even_lo = vmlal_s16(even_lo, vget_low_s16(a0), vget_low_s16(b0));
            even_hi = vmlal_high_s16(even_hi, a0, b0);
            even_lo = vmlal_s16(even_lo, vget_low_s16(a1b1), vget_low_s16(gamma));
            even_hi = vmlal_high_s16(even_hi, a1b1, gamma);
            // s1 += a0·b1 + a1·b0
            odd_lo = vmlal_s16(odd_lo, vget_low_s16(a0), vget_low_s16(b1));
            odd_hi = vmlal_high_s16(odd_hi, a0, b1);
            odd_lo = vmlal_s16(odd_lo, vget_low_s16(a1), vget_low_s16(b0));
            odd_hi = vmlal_high_s16(odd_hi, a1, b0);
        }
        let even = barrett(montgomery_reduce(even_lo, even_hi));
        let odd = barrett(montgomery_reduce(odd_lo, odd_hi));
        store_pairs(&mut acc.coeffs, at, int16x8x2_t(even, odd));
    }
}

#[cfg(test)]
#[allow(unsafe_code)]
mod tests {
    use super::*;
    use crate::backend::aarch64::Neon;
    use crate::backend::portable::Portable;
    use crate::backend::traits::PolyKernels;
    use crate::field;

    fn lanes(v: int16x8_t) -> [i16; 8] {
        let mut out = [0i16; 8];
        store_i16(&mut out, 0, v);
        out
    }

    #[target_feature(enable = "neon")]
    fn check_lane_arithmetic() {
        for chunk in (i16::MIN..=i16::MAX).collect::<Vec<_>>().chunks_exact(8) {
            let a = load_i16(chunk, 0);
            let want: Vec<i16> = chunk.iter().map(|&x| field::barrett_reduce(x)).collect();
            assert_eq!(lanes(barrett(a)).to_vec(), want);
            for zeta in [ZETAS[1], ZETAS[77], -1664, 1664, INV_NTT_SCALE] {
                let got = lanes(fqmul_vectors(a, vdupq_n_s16(zeta)));
                let want: Vec<i16> = chunk.iter().map(|&x| field::fqmul(x, zeta)).collect();
                assert_eq!(got.to_vec(), want);
            }
        }
    }

    #[test]
    fn lane_arithmetic_matches_field_for_every_i16() {
        // SAFETY: Neon is part of the AArch64 baseline this module needs.
        unsafe { check_lane_arithmetic() }
    }

    fn pseudo_random_poly(seed: u32) -> Poly {
        let mut state = seed;
        let mut p = Poly::ZERO;
        for c in p.coeffs.iter_mut() {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            *c = ((state >> 16) % 6657) as i16 - 3328;
        }
        p
    }

    #[test]
    fn transforms_match_the_portable_ones() {
        for seed in 0..64 {
            let input = pseudo_random_poly(seed);
            let (mut neon, mut portable) = (input, input);
            Neon::ntt(&mut neon);
            Portable::ntt(&mut portable);
            assert_eq!(neon, portable, "ntt, seed {seed}");
            Neon::inv_ntt(&mut neon);
            Portable::inv_ntt(&mut portable);
            assert_eq!(neon, portable, "inv_ntt, seed {seed}");

            let a: Vec<Poly> = (0..4).map(|i| pseudo_random_poly(seed * 8 + i)).collect();
            let b: Vec<Poly> = (4..8).map(|i| pseudo_random_poly(seed * 8 + i)).collect();
            let (mut neon, mut portable) = (Poly::ZERO, Poly::ZERO);
            Neon::multiply_accumulate(&mut neon, &a, &b);
            Portable::multiply_accumulate(&mut portable, &a, &b);
            assert_eq!(neon, portable, "multiply_accumulate, seed {seed}");
        }
    }
}
