//! NTT, inverse NTT and base multiplication on 128-bit Neon vectors (eight
//! 16-bit lanes), for the `neon` backend.
//!
//! The outputs are those of the portable code, value for value, except the
//! inverse NTT's, which are congruent and as bounded (its callers reduce
//! them to the centred representative at once; see [`inv_ntt`]). The NTT
//! multiplies by Barrett multiplication ([`barrett_mul`]) and ends with
//! the portable reduction to the centred representative, which is unique;
//! the rest computes exactly the portable formulas of `field` and `ntt`:
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
    int16x8_t, int16x8x2_t, int32x4_t, uint16x8_t, vaddq_s16, vcombine_s16, vdup_n_s16,
    vdupq_n_s16, vdupq_n_s32, vget_low_s16, vhsubq_s16, vmlal_high_s16, vmlal_s16, vmlsl_high_s16,
    vmlsl_s16, vmlsq_s16, vmovn_s32, vmulq_laneq_s16, vmulq_s16, vqdmulhq_s16, vqrdmulhq_laneq_s16,
    vqrdmulhq_s16, vreinterpretq_s16_s32, vreinterpretq_s16_s64, vreinterpretq_s16_u16,
    vreinterpretq_s32_s16, vreinterpretq_s64_s16, vrshrq_n_s16, vshrn_n_s32, vsubq_s16, vtrn1q_s32,
    vtrn2q_s32, vuzp1q_s32, vuzp2q_s32, vzip1q_s32, vzip1q_s64, vzip2q_s32, vzip2q_s64,
};

use crate::backend::aarch64::compress::{pack_12, to_unsigned};
use crate::backend::aarch64::mem::{load_i16, load_pairs, store_i16, store_pairs, store_triples};
use crate::field::{MONT_SQUARED, Q};
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
/// backwards.
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

const FORWARD_4: [i16; 128] = lane_zetas::<4>(32, false);
const FORWARD_2: [i16; 128] = lane_zetas::<2>(64, false);
const INVERSE_2: [i16; 128] = lane_zetas::<2>(127, true);
const INVERSE_4: [i16; 128] = lane_zetas::<4>(63, true);

/// 2^-16 mod q: a Montgomery-form zeta (ζ·2^16 mod q, as in `ZETAS`) times
/// this is ζ.
const MONT_INV: i32 = 169;

/// Each Montgomery-form zeta of `table` as ζ itself, in (-q/2, q/2).
const fn plain<const LEN: usize>(table: [i16; LEN]) -> [i16; LEN] {
    let q = Q as i32;
    let mut out = [0i16; LEN];
    let mut i = 0;
    while i < LEN {
        let mut z = (table[i] as i32 * MONT_INV).rem_euclid(q);
        if z > q / 2 {
            z -= q;
        }
        out[i] = z as i16;
        i += 1;
    }
    out
}

/// round(ζ · 2^15 / q) for each ζ of `table` (from [`plain`]): the
/// multiplier of Barrett multiplication by ζ (see [`barrett_mul`]).
const fn twisted<const LEN: usize>(table: [i16; LEN]) -> [i16; LEN] {
    let q = Q as i32;
    let mut out = [0i16; LEN];
    let mut i = 0;
    while i < LEN {
        let n = table[i] as i32 * 32768;
        out[i] = ((n + if n < 0 { -q / 2 } else { q / 2 }) / q) as i16;
        i += 1;
    }
    out
}

/// The zetas for each 32 coefficients (chunk c) of a pass over the four
/// inner layers, 80 lanes: 0-7 the distance-16 and distance-8 zetas of
/// `inner` (as [`inner_zetas`] lays them out) and 8-15 their [`twisted`]
/// multipliers, then for each half h (steps 2c + h) the zetas of the
/// half's first narrow layer (`first`, as [`lane_zetas`] lays them out),
/// their multipliers, those of its second (`second`) and theirs. All as ζ
/// itself ([`plain`]).
const fn chunk_zetas(inner: [i16; 64], first: [i16; 128], second: [i16; 128]) -> [[i16; 80]; 8] {
    let inner = plain(inner);
    let inner_twisted = twisted(inner);
    let first = plain(first);
    let first_twisted = twisted(first);
    let second = plain(second);
    let second_twisted = twisted(second);
    let mut table = [[0i16; 80]; 8];
    let mut c = 0;
    while c < 8 {
        let mut i = 0;
        while i < 8 {
            table[c][i] = inner[8 * c + i];
            table[c][8 + i] = inner_twisted[8 * c + i];
            let mut h = 0;
            while h < 2 {
                let (at, step) = (16 + 32 * h, 2 * c + h);
                table[c][at + i] = first[8 * step + i];
                table[c][at + 8 + i] = first_twisted[8 * step + i];
                table[c][at + 16 + i] = second[8 * step + i];
                table[c][at + 24 + i] = second_twisted[8 * step + i];
                h += 1;
            }
            i += 1;
        }
        c += 1;
    }
    table
}

/// The forward NTT's [`chunk_zetas`]: distance 4, then distance 2.
const FORWARD_CHUNKS: [[i16; 80]; 8] = chunk_zetas(inner_zetas(true), FORWARD_4, FORWARD_2);

/// The inverse NTT's [`chunk_zetas`]: distance 2, then distance 4.
const INVERSE_CHUNKS: [[i16; 80]; 8] = chunk_zetas(inner_zetas(false), INVERSE_2, INVERSE_4);

/// The outer layers' zetas (both directions): lanes 0-7 ζ (lane j from
/// `ZETAS[j]`), 8-15 their [`twisted`] multipliers.
const OUTER_ZETAS: [i16; 16] = {
    let zetas = plain(OUTER);
    let twisted = twisted(zetas);
    let mut table = [0i16; 16];
    let mut j = 0;
    while j < 8 {
        table[j] = zetas[j];
        table[8 + j] = twisted[j];
        j += 1;
    }
    table
};

/// [`OUTER_ZETAS`] in two registers, for the outer pass's loop. Opaque
/// to the optimizer, which would otherwise see constants and rebuild the
/// twelve lanes as splats (MOV and DUP) in every iteration.
#[inline]
#[target_feature(enable = "neon")]
fn outer_zetas() -> (int16x8_t, int16x8_t) {
    core::hint::black_box((load_i16(&OUTER_ZETAS, 0), load_i16(&OUTER_ZETAS, 8)))
}

/// The zetas of the three outer layers (distances 128, 64, 32) as vector
/// lanes: lane j is `ZETAS[j]` (j = 1..7), in both directions.
const OUTER: [i16; 8] = {
    let mut table = [0i16; 8];
    let mut j = 1;
    while j < 8 {
        table[j] = ZETAS[j];
        j += 1;
    }
    table
};

/// Per 32 coefficients (chunk c), the zetas of the distance-16 and the two
/// distance-8 blocks as vector lanes 0, 1 and 2: forward `ZETAS[8 + c]`,
/// `ZETAS[16 + 2c]`, `ZETAS[17 + 2c]`; inverse `ZETAS[15 - c]`,
/// `ZETAS[31 - 2c]`, `ZETAS[30 - 2c]`.
const fn inner_zetas(forward: bool) -> [i16; 64] {
    let mut table = [0i16; 64];
    let mut c = 0;
    while c < 8 {
        let (wide, narrow) = if forward {
            (8 + c, 16 + 2 * c)
        } else {
            (15 - c, 31 - 2 * c)
        };
        table[8 * c] = ZETAS[wide];
        table[8 * c + 1] = ZETAS[narrow];
        table[8 * c + 2] = if forward {
            ZETAS[narrow + 1]
        } else {
            ZETAS[narrow - 1]
        };
        c += 1;
    }
    table
}

/// b·ζ mod q by Barrett multiplication, in [-q, q] for every i16 b: with
/// z' = round(ζ·2^15 / q), h = round(b·z' / 2^15) (`sqrdmulh`) is b·ζ/q
/// within 1, and b·ζ - h·q is computed exactly in 16 bits. Congruent to
/// `fqmul(b, ζ·2^16)`, not always equal: the NTT's final reduction makes
/// its output the portable one again, and the inverse NTT's callers
/// reduce its output (see [`inv_ntt`]).
#[inline]
#[target_feature(enable = "neon")]
fn barrett_mul(b: int16x8_t, zetas: int16x8_t, twisted: int16x8_t) -> int16x8_t {
    let h = vqrdmulhq_s16(b, twisted);
    vmlsq_s16(vmulq_s16(b, zetas), h, vdupq_n_s16(Q))
}

/// [`barrett_mul`] by lane L of `zetas` (its multiplier lane L of
/// `twisted`).
#[inline]
#[target_feature(enable = "neon")]
fn barrett_mul_lane<const L: i32>(b: int16x8_t, zetas: int16x8_t, twisted: int16x8_t) -> int16x8_t {
    let h = vqrdmulhq_laneq_s16::<L>(b, twisted);
    vmlsq_s16(vmulq_laneq_s16::<L>(b, zetas), h, vdupq_n_s16(Q))
}

/// Forward (Cooley-Tukey) butterfly (a, b) -> (a + ζb, a - ζb) of two
/// vectors, ζ a lane of `z` (see [`barrett_mul_lane`]).
#[inline]
#[target_feature(enable = "neon")]
fn forward_lane<const L: i32>(
    v: &mut [int16x8_t],
    (i, j): (usize, usize),
    z: int16x8_t,
    zt: int16x8_t,
) {
    let t = barrett_mul_lane::<L>(v[j], z, zt);
    (v[i], v[j]) = (vaddq_s16(v[i], t), vsubq_s16(v[i], t));
}

/// Inverse (Gentleman-Sande) butterfly (a, b) -> (a + b, ζ(b - a)) of two
/// vectors, ζ a lane of `z` (see [`barrett_mul_lane`]). The sum is not
/// reduced: [`inv_ntt`] reduces after three layers.
#[inline]
#[target_feature(enable = "neon")]
fn inverse_lane<const L: i32>(
    v: &mut [int16x8_t],
    (i, j): (usize, usize),
    z: int16x8_t,
    zt: int16x8_t,
) {
    let (a, b) = (v[i], v[j]);
    v[i] = vaddq_s16(a, b);
    v[j] = barrett_mul_lane::<L>(vsubq_s16(b, a), z, zt);
}

/// Forward (Cooley-Tukey) butterflies on matching lanes:
/// (a, b) -> (a + ζb, a - ζb), by [`barrett_mul`].
#[inline]
#[target_feature(enable = "neon")]
fn forward_butterfly(
    a: int16x8_t,
    b: int16x8_t,
    zeta: int16x8_t,
    twisted: int16x8_t,
) -> (int16x8_t, int16x8_t) {
    let t = barrett_mul(b, zeta, twisted);
    (vaddq_s16(a, t), vsubq_s16(a, t))
}

/// Inverse (Gentleman-Sande) butterflies on matching lanes:
/// (a, b) -> (a + b, ζ(b - a)), by [`barrett_mul`], the sum not reduced.
#[inline]
#[target_feature(enable = "neon")]
fn inverse_butterfly(
    a: int16x8_t,
    b: int16x8_t,
    zeta: int16x8_t,
    twisted: int16x8_t,
) -> (int16x8_t, int16x8_t) {
    (vaddq_s16(a, b), barrett_mul(vsubq_s16(b, a), zeta, twisted))
}

/// 32-bit lane views, for the regrouping shuffles.
#[inline]
#[target_feature(enable = "neon")]
fn words(v: int16x8_t) -> int32x4_t {
    vreinterpretq_s32_s16(v)
}

/// 64-bit zips: (c0..7, c8..15) <-> (c0..3 c8..11, c4..7 c12..15), the
/// halves of the distance-4 blocks (its own inverse).
#[inline]
#[target_feature(enable = "neon")]
fn zip_halves(v0: int16x8_t, v1: int16x8_t) -> (int16x8_t, int16x8_t) {
    let (v0, v1) = (vreinterpretq_s64_s16(v0), vreinterpretq_s64_s16(v1));
    (
        vreinterpretq_s16_s64(vzip1q_s64(v0, v1)),
        vreinterpretq_s16_s64(vzip2q_s64(v0, v1)),
    )
}

/// 32-bit transposes: between the distance-4 form of [`zip_halves`] and
/// the distance-2 form (c0c1 c4c5 c8c9 c12c13, c2c3 c6c7 c10c11 c14c15),
/// both ways.
#[inline]
#[target_feature(enable = "neon")]
fn trn_words(lo: int16x8_t, hi: int16x8_t) -> (int16x8_t, int16x8_t) {
    (
        vreinterpretq_s16_s32(vtrn1q_s32(words(lo), words(hi))),
        vreinterpretq_s16_s32(vtrn2q_s32(words(lo), words(hi))),
    )
}

/// Algorithm 9 (as `ntt::ntt`): input below q in absolute value, output
/// reduced into [-(q-1)/2, (q-1)/2]. Two passes over the polynomial: the
/// three outer layers on eight vectors 32 coefficients apart, then the four
/// inner layers and the final reduction on each 32 coefficients.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn ntt(p: &mut Poly) {
    transform::<false>(p);
}

/// [`ntt`], output canonical (in [0, q)): the reduction's sign fix-up
/// folded into the last pass, for key generation's ŝ, which the key keeps
/// canonical.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn ntt_canonical(p: &mut Poly) {
    transform::<true>(p);
}

/// [`ntt`], then (CANONICAL) each output's representative in [0, q).
#[inline]
#[target_feature(enable = "neon")]
fn transform<const CANONICAL: bool>(p: &mut Poly) {
    let reduce = |v| {
        let v = barrett(v);
        if CANONICAL {
            vreinterpretq_s16_u16(to_unsigned(v))
        } else {
            v
        }
    };
    let r = &mut p.coeffs;
    let (z, zt) = outer_zetas();
    for column in (0..32).step_by(8) {
        let mut v: [int16x8_t; 8] = core::array::from_fn(|m| load_i16(r, column + 32 * m));
        for m in 0..4 {
            forward_lane::<1>(&mut v, (m, m + 4), z, zt);
        }
        for m in [0, 1] {
            forward_lane::<2>(&mut v, (m, m + 2), z, zt);
            forward_lane::<3>(&mut v, (m + 4, m + 6), z, zt);
        }
        forward_lane::<4>(&mut v, (0, 1), z, zt);
        forward_lane::<5>(&mut v, (2, 3), z, zt);
        forward_lane::<6>(&mut v, (4, 5), z, zt);
        forward_lane::<7>(&mut v, (6, 7), z, zt);
        for (m, x) in v.iter().enumerate() {
            store_i16(r, column + 32 * m, *x);
        }
    }
    for (chunk, zetas) in FORWARD_CHUNKS.iter().enumerate() {
        let at = 32 * chunk;
        let (z, zt) = (load_i16(zetas, 0), load_i16(zetas, 8));
        let mut v: [int16x8_t; 4] = core::array::from_fn(|m| load_i16(r, at + 8 * m));
        forward_lane::<0>(&mut v, (0, 2), z, zt);
        forward_lane::<0>(&mut v, (1, 3), z, zt);
        forward_lane::<1>(&mut v, (0, 1), z, zt);
        forward_lane::<2>(&mut v, (2, 3), z, zt);
        for half in 0..2 {
            let table = 16 + 32 * half;
            let (lo, hi) = zip_halves(v[2 * half], v[2 * half + 1]);
            let (lo, hi) =
                forward_butterfly(lo, hi, load_i16(zetas, table), load_i16(zetas, table + 8));
            let (lo, hi) = trn_words(lo, hi);
            let (lo, hi) = forward_butterfly(
                lo,
                hi,
                load_i16(zetas, table + 16),
                load_i16(zetas, table + 24),
            );
            let (v0, v1) = (
                vreinterpretq_s16_s32(vzip1q_s32(words(lo), words(hi))),
                vreinterpretq_s16_s32(vzip2q_s32(words(lo), words(hi))),
            );
            store_i16(r, at + 16 * half, reduce(v0));
            store_i16(r, at + 16 * half + 8, reduce(v1));
        }
    }
}

/// Algorithm 10 (as `ntt::inv_ntt`): times 2^16, output below q in
/// absolute value. The passes of [`ntt`] backwards: the four inner layers
/// on each 32 coefficients, then the three outer layers and the scaling.
///
/// Congruent to the portable output, not always equal: the butterflies
/// multiply by Barrett multiplication and leave sums unreduced, with one
/// Barrett reduction after the first three layers. Bounds, from inputs
/// below q in absolute value: a sum at most doubles per layer (products are
/// within q), so after three layers it is below 8q < 2^15, as is each
/// difference of the third layer (two values below 4q); the reduction
/// brings them within q/2, so after the four other layers they are below
/// 16 · q/2 = 8q again. Every caller adds
/// to the output and reduces it to the centred representative, so the
/// bytes are the portable ones.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn inv_ntt(p: &mut Poly) {
    let r = &mut p.coeffs;
    for (chunk, zetas) in INVERSE_CHUNKS.iter().enumerate() {
        let at = 32 * chunk;
        let mut v = [vdupq_n_s16(0); 4];
        for half in 0..2 {
            let table = 16 + 32 * half;
            let (v0, v1) = (load_i16(r, at + 16 * half), load_i16(r, at + 16 * half + 8));
            let (lo, hi) = (
                vreinterpretq_s16_s32(vuzp1q_s32(words(v0), words(v1))),
                vreinterpretq_s16_s32(vuzp2q_s32(words(v0), words(v1))),
            );
            let (lo, hi) =
                inverse_butterfly(lo, hi, load_i16(zetas, table), load_i16(zetas, table + 8));
            let (lo, hi) = trn_words(lo, hi);
            let (lo, hi) = inverse_butterfly(
                lo,
                hi,
                load_i16(zetas, table + 16),
                load_i16(zetas, table + 24),
            );
            (v[2 * half], v[2 * half + 1]) = zip_halves(lo, hi);
        }
        let (z, zt) = (load_i16(zetas, 0), load_i16(zetas, 8));
        inverse_lane::<1>(&mut v, (0, 1), z, zt);
        inverse_lane::<2>(&mut v, (2, 3), z, zt);
        v = v.map(|x| barrett(x));
        inverse_lane::<0>(&mut v, (0, 2), z, zt);
        inverse_lane::<0>(&mut v, (1, 3), z, zt);
        for (m, x) in v.iter().enumerate() {
            store_i16(r, at + 8 * m, *x);
        }
    }
    let (z, zt) = outer_zetas();
    let scale = vdupq_n_s16(INV_NTT_SCALE);
    let scale_qinv = vdupq_n_s16(INV_NTT_SCALE.wrapping_mul(Q_INV));
    for column in (0..32).step_by(8) {
        let mut v: [int16x8_t; 8] = core::array::from_fn(|m| load_i16(r, column + 32 * m));
        inverse_lane::<7>(&mut v, (0, 1), z, zt);
        inverse_lane::<6>(&mut v, (2, 3), z, zt);
        inverse_lane::<5>(&mut v, (4, 5), z, zt);
        inverse_lane::<4>(&mut v, (6, 7), z, zt);
        for m in [0, 1] {
            inverse_lane::<3>(&mut v, (m, m + 2), z, zt);
            inverse_lane::<2>(&mut v, (m + 4, m + 6), z, zt);
        }
        for m in 0..4 {
            inverse_lane::<1>(&mut v, (m, m + 4), z, zt);
        }
        for (m, x) in v.iter().enumerate() {
            store_i16(r, column + 32 * m, fqmul(*x, scale, scale_qinv));
        }
    }
}

/// Algorithms 11 and 12 on coefficient pairs `at..at + 16`: Σ_j a[j] ∘
/// b[j] · 2^-16, Montgomery-reduced into (-q, q), the even and the odd
/// coefficients in separate vectors. K is known, so the sum is unrolled.
/// Inputs below q in absolute value (centred or canonical) keep each of
/// the 2K terms of a sum below q², so K ≤ 4 sums stay below 8q² < q·2^15,
/// Montgomery reduction's bound.
#[inline]
#[target_feature(enable = "neon")]
fn products<const K: usize>(a: [&Poly; K], b: [&Poly; K], at: usize) -> (int16x8_t, int16x8_t) {
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
    (
        montgomery_reduce(even_lo, even_hi),
        montgomery_reduce(odd_lo, odd_hi),
    )
}

/// The polynomials `polys[0]`, `polys[stride]`, ..., K of them.
fn strided<const K: usize>(polys: &[Poly], stride: usize) -> [&Poly; K] {
    core::array::from_fn(|j| &polys[j * stride])
}

/// Algorithms 11 and 12 (as `ntt::multiply_accumulate`): acc = Σ a_i ∘ b_i
/// · 2^-16, reduced into [-(q-1)/2, (q-1)/2]; eight coefficient pairs at a
/// time. Unrolled for ML-KEM's k (2, 3 or 4); other lengths, which ML-KEM
/// never asks for, take the portable code (the same values).
#[target_feature(enable = "neon")]
pub(super) fn multiply_accumulate(acc: &mut Poly, a: &[Poly], b: &[Poly]) {
    debug_assert_eq!(a.len(), b.len());
    match b.len() {
        2 => accumulate(acc, strided::<2>(a, 1), strided(b, 1)),
        3 => accumulate(acc, strided::<3>(a, 1), strided(b, 1)),
        4 => accumulate(acc, strided::<4>(a, 1), strided(b, 1)),
        _ => crate::ntt::multiply_accumulate(acc, a, b),
    }
}

/// [`multiply_accumulate`] for K polynomials.
#[inline]
#[target_feature(enable = "neon")]
fn accumulate<const K: usize>(acc: &mut Poly, a: [&Poly; K], b: [&Poly; K]) {
    for at in (0..N).step_by(16) {
        let (even, odd) = products(a, b, at);
        store_pairs(
            &mut acc.coeffs,
            at,
            int16x8x2_t(barrett(even), barrett(odd)),
        );
    }
}

/// `PolyKernels::add_reduce`: acc = barrett(acc + e), lane by lane (the
/// portable add and reduction in one pass).
#[target_feature(enable = "neon")]
pub(super) fn add_reduce(acc: &mut Poly, e: &Poly) {
    for at in (0..N).step_by(8) {
        let sum = vaddq_s16(load_i16(&acc.coeffs, at), load_i16(&e.coeffs, at));
        store_i16(&mut acc.coeffs, at, barrett(sum));
    }
}

/// `x · 2^16 + e`, reduced and canonical: the end of a row of t̂.
#[inline]
#[target_feature(enable = "neon")]
fn to_montgomery_plus(x: int16x8_t, e: int16x8_t) -> uint16x8_t {
    let mont = vdupq_n_s16(MONT_SQUARED);
    let mont_qinv = vdupq_n_s16(MONT_SQUARED.wrapping_mul(Q_INV));
    to_unsigned(barrett(vaddq_s16(fqmul(x, mont, mont_qinv), e)))
}

/// Key generation's t̂_i = Σ_j Â[i, j] ∘ ŝ_j + ê_i (Algorithm 13, line 18)
/// into `t`, canonical, and ByteEncode_12 of it into the 384 bytes of
/// `ek_row` (line 19), with Â^T in `a_hat_t` (Â[i, j] at j·k + i): the
/// values of `pke::generate`'s steps (`multiply_accumulate`,
/// `scale_to_montgomery`, `add_assign`, `reduce`, `make_canonical`,
/// `encode_12`), since canonical values are unique. Only the coefficients
/// `coeffs` (a range of multiples of 16) and their bytes.
#[target_feature(enable = "neon")]
pub(super) fn key_row(
    t: &mut Poly,
    a_hat_t: &[Poly],
    i: usize,
    s_hat: &[Poly],
    e: &Poly,
    ek_row: &mut [u8],
    coeffs: core::ops::Range<usize>,
) {
    let k = s_hat.len();
    let row = (t, e, ek_row, coeffs);
    match k {
        2 => key_row_of(strided::<2>(&a_hat_t[i..], k), strided(s_hat, 1), row),
        3 => key_row_of(strided::<3>(&a_hat_t[i..], k), strided(s_hat, 1), row),
        4 => key_row_of(strided::<4>(&a_hat_t[i..], k), strided(s_hat, 1), row),
        _ => unreachable!("ML-KEM's k is 2, 3 or 4"),
    }
}

/// [`key_row`] for K polynomials: row `a` of Â, ŝ in `s_hat`.
#[inline]
#[target_feature(enable = "neon")]
fn key_row_of<const K: usize>(
    a: [&Poly; K],
    s_hat: [&Poly; K],
    (t, e, ek_row, coeffs): (&mut Poly, &Poly, &mut [u8], core::ops::Range<usize>),
) {
    debug_assert_eq!(ek_row.len(), 384);
    for at in coeffs.step_by(16) {
        let (even, odd) = products(a, s_hat, at);
        let int16x8x2_t(e_even, e_odd) = load_pairs(&e.coeffs, at);
        let (even, odd) = (
            to_montgomery_plus(even, e_even),
            to_montgomery_plus(odd, e_odd),
        );
        let pairs = int16x8x2_t(vreinterpretq_s16_u16(even), vreinterpretq_s16_u16(odd));
        store_pairs(&mut t.coeffs, at, pairs);
        store_triples(ek_row, at / 16 * 24, pack_12(even, odd));
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
            // The inverse: congruent, below q in absolute value.
            Neon::inv_ntt(&mut neon);
            Portable::inv_ntt(&mut portable);
            for (n, p) in neon.coeffs.iter().zip(&portable.coeffs) {
                assert!(n.unsigned_abs() < Q as u16, "inv_ntt, seed {seed}: {n}");
                assert_eq!((n - p).rem_euclid(Q), 0, "inv_ntt, seed {seed}: {n} vs {p}");
            }

            // The canonical NTT: the portable NTT made canonical.
            let mut canonical = input;
            // SAFETY: Neon is part of the AArch64 baseline this module needs.
            unsafe { ntt_canonical(&mut canonical) };
            let mut expected = input;
            Portable::ntt(&mut expected);
            expected.make_canonical();
            assert_eq!(canonical, expected, "ntt_canonical, seed {seed}");

            // Every k (unrolled) and a length ML-KEM never uses (portable).
            for len in 1..=4 {
                let a: Vec<Poly> = (0..len).map(|i| pseudo_random_poly(seed * 8 + i)).collect();
                let b: Vec<Poly> = (4..4 + len)
                    .map(|i| pseudo_random_poly(seed * 8 + i))
                    .collect();
                let (mut neon, mut portable) = (Poly::ZERO, Poly::ZERO);
                Neon::multiply_accumulate(&mut neon, &a, &b);
                Portable::multiply_accumulate(&mut portable, &a, &b);
                assert_eq!(
                    neon, portable,
                    "multiply_accumulate, {len} polynomials, seed {seed}"
                );
            }
        }
    }
}
