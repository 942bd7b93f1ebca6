//! AVX-512 (F + BW) forward and inverse NTT and NTT-domain multiplication
//! (FIPS 203 Algorithms 9 to 12), for an AVX-512 backend.
//!
//! Every function computes exactly the same `i16` values, in the same
//! coefficient order, as its AVX2 counterpart ([`crate::backend::x86_64::ntt256::ntt`],
//! [`crate::backend::x86_64::ntt256::inv_ntt`], [`crate::backend::x86_64::basemul256::multiply_accumulate`])
//! and hence as the portable code in [`crate::ntt`]: each output coefficient
//! goes through the same lane-wise formulas (`fqmul` as two 16-bit half
//! products with the same operands, `barrett_reduce` with V = 20159, the same
//! Montgomery reduction of the same exact 32-bit sums), with wrapping 16-bit
//! arithmetic, on 32 lanes instead of 16. (Barrett's rounding step
//! `(t + 2^9) >> 10` is one `vpmulhrsw` by 2^5 here, which is equal for
//! every `i16` t.) Only the order in which independent butterflies run
//! differs, so a backend may switch between the two freely: the outputs
//! agree on the documented input domains (what the tests check), and by
//! construction on any other `i16` input as well.
//!
//! # Why the reduction schedule is the portable one
//!
//! The forward NTT and `multiply_accumulate` end in a Barrett reduction,
//! whose result is the unique representative in [-(q-1)/2, (q-1)/2]: any
//! correct schedule would give the same output. The forward NTT is already
//! fully lazy (no reduction before the last one, see the bounds in [`ntt`]),
//! so there is nothing left to postpone there. The inverse NTT, however, ends
//! in a Montgomery multiplication by `INV_NTT_SCALE`, whose output (in
//! (-q, q)) depends on the representative it is given, not just its class
//! mod q; and every Gentleman-Sande difference is itself a Montgomery
//! product of the exact `i16` difference of the layer before. So a lazier
//! inverse (skipping some Barrett reductions of the sums) would be correct
//! mod q but would change output coefficients by ±q now and then. To stay
//! bit-identical with the AVX2 code, [`inv_ntt`] Barrett-reduces every sum,
//! as the portable Algorithm 10 does.
//!
//! # Layout
//!
//! The 256 coefficients are 8 vectors of 32 lanes, all kept in registers;
//! vector `i` holds coefficients `32i..32i + 32`. The layers of distance
//! 128, 64 and 32 pair whole vectors, with one zeta broadcast per block. The
//! layers of distance 16, 8, 4 and 2 work on two adjacent vectors (64
//! coefficients, index bits `b5..b0`): such a pair `(A, B)` has a "vector
//! bit" `v` (A or B) and lane bits `l4..l0` (`l4` = 256-bit half, `l3` =
//! 128-bit quarter, `l2` = 64-bit, `l1` = 32-bit). Four involutions exchange
//! `v` with one lane bit, each one instruction per output vector:
//!
//! - [`swap_l4`] (`vshufi64x2`) exchanges `v` and `l4`,
//! - [`swap_l3`] (`vshufi64x2` with a merge mask) exchanges `v` and `l3`,
//! - [`swap_l2`] (`vpunpck{l,h}qdq`) exchanges `v` and `l2`,
//! - [`swap_l1`] (`vpshufd` with a merge mask) exchanges `v` and `l1`
//!
//! (LLVM may lower the masked shuffles to an equivalent `vpermt2q`/`vpermt2d`:
//! also one shuffle-port instruction each).
//!
//! From the natural layout (`v = b5`, `l4..l0 = b4..b0`), applying
//! `swap_l4`, `swap_l3`, `swap_l2`, `swap_l1` in turn makes `v` equal to
//! `b4`, `b3`, `b2`, `b1`: the partner bit of the layers of distance 16, 8,
//! 4, 2, with `l4..l1` = `b5..b2` at the end ("layout 1"). Between layout 1
//! and the natural one, [`from_layout1`] and [`to_layout1`] move in one step
//! (`vpermt2d` per output vector, instead of four swaps), so memory always
//! holds the portable order. In the layout of the layer of distance `2^s`,
//! lane `l` of the pair belongs to the local block `l >> s` (the lane bits
//! above `l_s` are `b5..b(s+1)`), which is how the per-lane zeta tables are
//! built.
//!
//! `multiply_accumulate` keeps the portable order too: a vector holds 16
//! coefficient pairs, and each pair's c0 and c1 are one `vpmaddwd` lane each,
//! as in `x86_64::basemul256` (the swap of a pair is a 16-bit `vprold`).
//!
//! Nothing here branches on or indexes by a coefficient value.

use core::arch::x86_64::{
    __m512i, _mm512_add_epi16, _mm512_add_epi32, _mm512_madd_epi16, _mm512_mask_blend_epi16,
    _mm512_mask_shuffle_epi32, _mm512_mask_shuffle_i64x2, _mm512_mulhi_epi16, _mm512_mulhrs_epi16,
    _mm512_mullo_epi16, _mm512_permutex2var_epi32, _mm512_rol_epi32, _mm512_set1_epi16,
    _mm512_setzero_si512, _mm512_shuffle_i64x2, _mm512_slli_epi32, _mm512_srli_epi32,
    _mm512_sub_epi16, _mm512_unpackhi_epi64, _mm512_unpacklo_epi64,
};

use core::borrow::Borrow;

use crate::backend::x86_64::mem::{load512, store512};
use crate::backend::x86_64::ntt256::Q_INV;
use crate::field::Q;
use crate::ntt::{GAMMAS, INV_NTT_SCALE, ZETAS};
use crate::poly::{Poly, N};

/// round(2^26 / q), the Barrett constant of `field::barrett_reduce`.
const BARRETT_V: i16 = 20159;

/// Lanes of one vector.
const LANES: usize = 32;

/// `ZETAS[i] · Q_INV mod 2^16`: the second factor of each Montgomery
/// product by a zeta, precomputed.
const ZETAS_QINV: [i16; 128] = {
    let mut table = [0i16; 128];
    let mut i = 0;
    while i < 128 {
        table[i] = ZETAS[i].wrapping_mul(Q_INV);
        i += 1;
    }
    table
};

/// 32 lanes of constants, aligned so that a load never splits a cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Lanes([i16; LANES]);

/// Per-lane zetas of one in-register layer for one pair of vectors, plus the
/// same zetas times q^-1 mod 2^16.
#[derive(Clone, Copy)]
struct Twiddles {
    /// The zetas, lane by lane.
    zeta: Lanes,
    /// `zeta · Q_INV mod 2^16`, lane by lane.
    zeta_qinv: Lanes,
}

/// The twiddles of the in-register layer of distance `1 << shift` (shift =
/// 4, 3, 2, 1) for the pair `m` of vectors (64 coefficients from 64m), in
/// the layout that layer runs in: lane `l` belongs to the local block
/// `l >> shift`, of which a pair holds `32 >> shift`. Forward layers take
/// zetas upwards from `128 >> shift` (as `ntt::forward_layer`), inverse
/// layers downwards from `(256 >> shift) - 1` (as `ntt::inverse_layer`).
const fn twiddles(shift: u32, m: usize, inverse: bool) -> Twiddles {
    let mut zeta = [0i16; LANES];
    let mut zeta_qinv = [0i16; LANES];
    let mut lane = 0;
    while lane < LANES {
        let block = m * (LANES >> shift) + (lane >> shift);
        let index = if inverse {
            (256 >> shift) - 1 - block
        } else {
            (128 >> shift) + block
        };
        zeta[lane] = ZETAS[index];
        zeta_qinv[lane] = ZETAS_QINV[index];
        lane += 1;
    }
    Twiddles {
        zeta: Lanes(zeta),
        zeta_qinv: Lanes(zeta_qinv),
    }
}

/// Twiddles of the four in-register layers, per pair of vectors:
/// `table[m][0]` for distance 16, `[1]` for 8, `[2]` for 4, `[3]` for 2.
const fn twiddle_table(inverse: bool) -> [[Twiddles; 4]; 4] {
    let empty = Twiddles {
        zeta: Lanes([0; LANES]),
        zeta_qinv: Lanes([0; LANES]),
    };
    let mut table = [[empty; 4]; 4];
    let mut m = 0;
    while m < 4 {
        table[m] = [
            twiddles(4, m, inverse),
            twiddles(3, m, inverse),
            twiddles(2, m, inverse),
            twiddles(1, m, inverse),
        ];
        m += 1;
    }
    table
}

/// In-register twiddles of the forward NTT (compile-time constants, in one
/// static so that each is stored once).
static FORWARD_TWIDDLES: [[Twiddles; 4]; 4] = twiddle_table(false);

/// In-register twiddles of the inverse NTT.
static INVERSE_TWIDDLES: [[Twiddles; 4]; 4] = twiddle_table(true);

/// 16 dword indices of a `vpermt2d` (bit 4 picks the second source),
/// aligned like [`Lanes`].
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Indices([u32; 16]);

/// The `vpermt2d` indices of the moves between layout 1 (`v = b1`,
/// `l4..l1 = b5..b2`) and the natural layout (`v = b5`, `l4..l1 =
/// b4..b1`); `l0 = b0` in both, so dwords (lane pairs) move as a whole.
/// `[0]`, `[1]`: the natural A and B from layout 1; `[2]`, `[3]`: layout
/// 1's A and B from the natural vectors.
static LAYOUT_MOVES: [Indices; 4] = {
    let mut table = [Indices([0; 16]); 4];
    let mut d = 0;
    while d < 16 {
        // Natural output dword d = (b4 b3 b2 b1), in vector b5: it sits in
        // layout 1's vector b1 = d & 1, at dword (b5 b4 b3 b2).
        table[0].0[d] = ((d as u32 & 1) << 4) | (d as u32 >> 1);
        table[1].0[d] = ((d as u32 & 1) << 4) | 8 | (d as u32 >> 1);
        // Layout 1 output dword d = (b5 b4 b3 b2), in vector b1: it sits in
        // the natural vector b5 = d >> 3, at dword (b4 b3 b2 b1).
        table[2].0[d] = ((d as u32 >> 3) << 4) | ((d as u32 & 7) << 1);
        table[3].0[d] = ((d as u32 >> 3) << 4) | ((d as u32 & 7) << 1) | 1;
        d += 1;
    }
    table
};

/// Lane-wise `field::fqmul(zeta, b)`, given `zeta_qinv = zeta · Q_INV`.
/// For |zeta| ≤ (q-1)/2 and any `b` the result is below q in absolute
/// value: |zeta·b| / 2^16 < 1664·2^15 / 2^16 = 832, plus at most q/2 for the
/// correction.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn fqmul(b: __m512i, zeta: __m512i, zeta_qinv: __m512i) -> __m512i {
    let t = _mm512_mullo_epi16(b, zeta_qinv);
    let high = _mm512_mulhi_epi16(b, zeta);
    let correction = _mm512_mulhi_epi16(t, _mm512_set1_epi16(Q));
    _mm512_sub_epi16(high, correction)
}

/// Lane-wise `field::fqmul(a, b)` of two variable vectors.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn fqmul_variable(a: __m512i, b: __m512i) -> __m512i {
    let t = _mm512_mullo_epi16(_mm512_mullo_epi16(a, b), _mm512_set1_epi16(Q_INV));
    let high = _mm512_mulhi_epi16(a, b);
    _mm512_sub_epi16(high, _mm512_mulhi_epi16(t, _mm512_set1_epi16(Q)))
}

/// Lane-wise `field::barrett_reduce`: for every `i16` input, the
/// representative in [-(q-1)/2, (q-1)/2]. With `high` = ⌊a·V / 2^16⌋,
/// `vpmulhrsw(high, 2^5)` = ⌊(32·high + 2^14) / 2^15⌋ = ⌊(high + 2^9) /
/// 2^10⌋, the portable rounding, in one instruction instead of an add and a
/// shift (the product 32·high is exact in 32 bits).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn barrett_reduce(a: __m512i) -> __m512i {
    let high = _mm512_mulhi_epi16(a, _mm512_set1_epi16(BARRETT_V));
    let t = _mm512_mulhrs_epi16(high, _mm512_set1_epi16(1 << 5));
    _mm512_sub_epi16(a, _mm512_mullo_epi16(t, _mm512_set1_epi16(Q)))
}

/// Forward (Cooley-Tukey) butterfly: `t = fqmul(zeta, b); (a + t, a - t)`.
/// With |a|, |b| < j·q, both outputs are below (j + 1)·q (|t| < q).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn forward_butterfly(
    a: __m512i,
    b: __m512i,
    zeta: __m512i,
    zeta_qinv: __m512i,
) -> (__m512i, __m512i) {
    let t = fqmul(b, zeta, zeta_qinv);
    (_mm512_add_epi16(a, t), _mm512_sub_epi16(a, t))
}

/// Inverse (Gentleman-Sande) butterfly:
/// `(barrett_reduce(a + b), fqmul(zeta, b - a))`. With |a|, |b| ≤ q (all
/// the inputs it gets: the inverse NTT's input, and Barrett or Montgomery
/// outputs after that), a + b and b - a stay within ±2q, and both outputs
/// are below q in absolute value (the sum at most (q-1)/2).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn inverse_butterfly(
    a: __m512i,
    b: __m512i,
    zeta: __m512i,
    zeta_qinv: __m512i,
) -> (__m512i, __m512i) {
    let sum = barrett_reduce(_mm512_add_epi16(a, b));
    let difference = fqmul(_mm512_sub_epi16(b, a), zeta, zeta_qinv);
    (sum, difference)
}

/// Exchanges the vector bit with lane bit 4 (the 256-bit halves):
/// `([a.lo, b.lo], [a.hi, b.hi])`. An involution.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn swap_l4(a: __m512i, b: __m512i) -> (__m512i, __m512i) {
    // 128-bit lanes (0, 1 of a; 0, 1 of b) and (2, 3 of a; 2, 3 of b).
    (
        _mm512_shuffle_i64x2::<0x44>(a, b),
        _mm512_shuffle_i64x2::<0xEE>(a, b),
    )
}

/// Exchanges the vector bit with lane bit 3 (the 128-bit lanes within each
/// 256-bit half): `([a0, b0, a2, b2], [a1, b1, a3, b3])` in 128-bit lanes.
/// An involution.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn swap_l3(a: __m512i, b: __m512i) -> (__m512i, __m512i) {
    // Lanes 1 and 3 (qwords 2, 3, 6, 7: mask 0xCC) of the first output are
    // lanes 0 and 2 of b (selectors 0 and 2 in imm fields 1 and 3: 0xA0);
    // lanes 0 and 2 (mask 0x33) of the second are lanes 1 and 3 of a
    // (selectors 1 and 3 in fields 0 and 2: 0xF5). The other lanes keep the
    // source operand's.
    (
        _mm512_mask_shuffle_i64x2::<0xA0>(a, 0xCC, b, b),
        _mm512_mask_shuffle_i64x2::<0xF5>(b, 0x33, a, a),
    )
}

/// Exchanges the vector bit with lane bit 2 (the 64-bit halves of each
/// 128-bit lane). An involution.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn swap_l2(a: __m512i, b: __m512i) -> (__m512i, __m512i) {
    (_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b))
}

/// Exchanges the vector bit with lane bit 1 (the 32-bit halves of each
/// 64-bit quarter). An involution.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn swap_l1(a: __m512i, b: __m512i) -> (__m512i, __m512i) {
    // The odd dwords (mask 0xAAAA) of the first output are b's even dwords
    // (dword selectors 0, 0, 2, 2: 0xA0); the even dwords (0x5555) of the
    // second are a's odd ones (selectors 1, 1, 3, 3: 0xF5).
    (
        _mm512_mask_shuffle_epi32::<0xA0>(a, 0xAAAA, b),
        _mm512_mask_shuffle_epi32::<0xF5>(b, 0x5555, a),
    )
}

/// From layout 1 back to the natural layout (the inverse of `swap_l4`,
/// `swap_l3`, `swap_l2`, `swap_l1` in turn).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn from_layout1(a: __m512i, b: __m512i) -> (__m512i, __m512i) {
    let [to_a, to_b, _, _] = &LAYOUT_MOVES;
    (
        _mm512_permutex2var_epi32(a, load512(&to_a.0), b),
        _mm512_permutex2var_epi32(a, load512(&to_b.0), b),
    )
}

/// From the natural layout to layout 1 (`swap_l4`, `swap_l3`, `swap_l2`,
/// `swap_l1` in turn).
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn to_layout1(a: __m512i, b: __m512i) -> (__m512i, __m512i) {
    let [_, _, to_a, to_b] = &LAYOUT_MOVES;
    (
        _mm512_permutex2var_epi32(a, load512(&to_a.0), b),
        _mm512_permutex2var_epi32(a, load512(&to_b.0), b),
    )
}

/// The polynomial's 8 vectors.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn load_poly(p: &Poly) -> [__m512i; 8] {
    let mut v = [_mm512_setzero_si512(); 8];
    for (v, c) in v.iter_mut().zip(p.coeffs.chunks_exact(LANES)) {
        *v = load512(c);
    }
    v
}

/// Stores the 8 vectors into the polynomial.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn store_poly(p: &mut Poly, v: &[__m512i; 8]) {
    for (v, c) in v.iter().zip(p.coeffs.chunks_exact_mut(LANES)) {
        store512(c, *v);
    }
}

/// A layer of distance `32 · d` (d = 4, 2, 1) on whole vectors, whose first
/// block takes zeta `ZETAS[first]` and the next ones upwards.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn forward_vector_layer(v: &mut [__m512i; 8], d: usize, first: usize) {
    for (k, block) in (first..).zip(v.chunks_exact_mut(2 * d)) {
        let zeta = _mm512_set1_epi16(ZETAS[k]);
        let zeta_qinv = _mm512_set1_epi16(ZETAS_QINV[k]);
        let (lo, hi) = block.split_at_mut(d);
        for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
            (*a, *b) = forward_butterfly(*a, *b, zeta, zeta_qinv);
        }
    }
}

/// A layer of distance `32 · d` (d = 1, 2, 4) on whole vectors, whose first
/// block takes zeta `ZETAS[last]` and the next ones downwards.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn inverse_vector_layer(v: &mut [__m512i; 8], d: usize, last: usize) {
    for (b, block) in v.chunks_exact_mut(2 * d).enumerate() {
        let zeta = _mm512_set1_epi16(ZETAS[last - b]);
        let zeta_qinv = _mm512_set1_epi16(ZETAS_QINV[last - b]);
        let (lo, hi) = block.split_at_mut(d);
        for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
            (*a, *b) = inverse_butterfly(*a, *b, zeta, zeta_qinv);
        }
    }
}

/// The layers of distance 16, 8, 4 and 2 and the final reduction on the
/// pair `m` of vectors (`x`, `y`: coefficients `64m..64m + 64`), in place.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn forward_pair(x: &mut __m512i, y: &mut __m512i, m: usize) {
    let [t16, t8, t4, t2] = &FORWARD_TWIDDLES[m];
    let (mut a, mut b) = swap_l4(*x, *y);
    (a, b) = forward_butterfly(a, b, load512(&t16.zeta.0), load512(&t16.zeta_qinv.0));
    (a, b) = swap_l3(a, b);
    (a, b) = forward_butterfly(a, b, load512(&t8.zeta.0), load512(&t8.zeta_qinv.0));
    (a, b) = swap_l2(a, b);
    (a, b) = forward_butterfly(a, b, load512(&t4.zeta.0), load512(&t4.zeta_qinv.0));
    (a, b) = swap_l1(a, b);
    (a, b) = forward_butterfly(a, b, load512(&t2.zeta.0), load512(&t2.zeta_qinv.0));
    // Below 8q = 26632 here (see `ntt`): Barrett is exact on all of i16.
    (a, b) = (barrett_reduce(a), barrett_reduce(b));
    (*x, *y) = from_layout1(a, b);
}

/// The layers of distance 2, 4, 8 and 16 on the pair `m` of vectors (`x`,
/// `y`: coefficients `64m..64m + 64`), in place.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn inverse_pair(x: &mut __m512i, y: &mut __m512i, m: usize) {
    let [t16, t8, t4, t2] = &INVERSE_TWIDDLES[m];
    let (mut a, mut b) = to_layout1(*x, *y);
    (a, b) = inverse_butterfly(a, b, load512(&t2.zeta.0), load512(&t2.zeta_qinv.0));
    (a, b) = swap_l1(a, b);
    (a, b) = inverse_butterfly(a, b, load512(&t4.zeta.0), load512(&t4.zeta_qinv.0));
    (a, b) = swap_l2(a, b);
    (a, b) = inverse_butterfly(a, b, load512(&t8.zeta.0), load512(&t8.zeta_qinv.0));
    (a, b) = swap_l3(a, b);
    (a, b) = inverse_butterfly(a, b, load512(&t16.zeta.0), load512(&t16.zeta_qinv.0));
    (*x, *y) = swap_l4(a, b);
}

/// Algorithm 9: NTT, in place, with the same output as
/// [`crate::backend::x86_64::ntt256::ntt`] and [`crate::ntt::ntt`]: input coefficients
/// below q in absolute value, output reduced into [-(q-1)/2, (q-1)/2], FIPS
/// 203 (portable) coefficient order.
///
/// Lazy reduction: no reduction until the end. Each layer adds at most one
/// Montgomery product (below q) to each coefficient's bound, so after layer
/// j (of 7) the coefficients are below (j + 1)·q, at most 8q - 1 = 26631 <
/// 2^15 before the final Barrett reduction: no lane ever wraps.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) fn ntt(p: &mut Poly) {
    let mut v = load_poly(p);
    // Distances 128, 64, 32 (bounds 2q, 3q, 4q after them).
    forward_vector_layer(&mut v, 4, 1);
    forward_vector_layer(&mut v, 2, 2);
    forward_vector_layer(&mut v, 1, 4);
    // Distances 16, 8, 4, 2 (bounds 5q to 8q) and the Barrett reduction.
    // Written out (not a loop) so that `v` stays in registers.
    let [v0, v1, v2, v3, v4, v5, v6, v7] = &mut v;
    forward_pair(v0, v1, 0);
    forward_pair(v2, v3, 1);
    forward_pair(v4, v5, 2);
    forward_pair(v6, v7, 3);
    store_poly(p, &v);
}

/// Algorithm 10: NTT^-1, in place, times 2^16, with the same output as
/// [`crate::backend::x86_64::ntt256::inv_ntt`] and [`crate::ntt::inv_ntt`]: input
/// coefficients at most q in absolute value, output below q in absolute
/// value, FIPS 203 (portable) coefficient order.
///
/// Every butterfly reduces both of its outputs (see the module docs for why
/// this one is not lazy): all values entering a layer are at most q in
/// absolute value, so no sum or difference exceeds 2q.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) fn inv_ntt(p: &mut Poly) {
    let mut v = load_poly(p);
    // Distances 2, 4, 8, 16, written out so that `v` stays in registers.
    let [v0, v1, v2, v3, v4, v5, v6, v7] = &mut v;
    inverse_pair(v0, v1, 0);
    inverse_pair(v2, v3, 1);
    inverse_pair(v4, v5, 2);
    inverse_pair(v6, v7, 3);
    // Distances 32, 64, 128.
    inverse_vector_layer(&mut v, 1, 7);
    inverse_vector_layer(&mut v, 2, 3);
    inverse_vector_layer(&mut v, 4, 1);
    // The scaling by 2^32 / 128 (Montgomery product: below q again).
    let scale = _mm512_set1_epi16(INV_NTT_SCALE);
    let scale_qinv = _mm512_set1_epi16(INV_NTT_SCALE.wrapping_mul(Q_INV));
    for x in v.iter_mut() {
        *x = fqmul(*x, scale, scale_qinv);
    }
    store_poly(p, &v);
}

/// Per coefficient, the gamma of its pair at the odd (a1) positions and 0 at
/// the even ones: blended into b's odd lanes for c0.
static GAMMA_LANES: [Lanes; N / LANES] = {
    let mut t = [Lanes([0; LANES]); N / LANES];
    let mut i = 0;
    while i < N / 2 {
        t[2 * i / LANES].0[(2 * i + 1) % LANES] = GAMMAS[i];
        i += 1;
    }
    t
};

/// The odd 16-bit lanes (a1, c1 positions of each coefficient pair).
const ODD_LANES: u32 = 0xAAAA_AAAA;

/// Σ a_i ∘ b_i on the 32 coefficients (16 pairs) of vector `index`, as the
/// two vectors of exact 32-bit sums (c0 of the 16 pairs, c1 of the 16
/// pairs), as in `x86_64::basemul256::pair_sums`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn pair_sums(a: &[impl Borrow<Poly>], b: &[Poly], index: usize) -> (__m512i, __m512i) {
    let range = LANES * index..LANES * (index + 1);
    let gamma = load512(&GAMMA_LANES[index].0);
    let mut c0 = _mm512_setzero_si512();
    let mut c1 = _mm512_setzero_si512();
    for (pa, pb) in a.iter().zip(b) {
        let va = load512(&pa.borrow().coeffs[range.clone()]);
        let vb = load512(&pb.coeffs[range.clone()]);
        // (a0, fqmul(a1, b1)) · (b0, gamma)
        let x = _mm512_mask_blend_epi16(ODD_LANES, va, fqmul_variable(va, vb));
        let y = _mm512_mask_blend_epi16(ODD_LANES, vb, gamma);
        c0 = _mm512_add_epi32(c0, _mm512_madd_epi16(x, y));
        // (a0, a1) · (b1, b0): the swap of each lane pair is a 16-bit
        // rotation of its dword.
        let swapped = _mm512_rol_epi32::<16>(vb);
        c1 = _mm512_add_epi32(c1, _mm512_madd_epi16(va, swapped));
    }
    (c0, c1)
}

/// `field::montgomery_reduce` of the 32-bit sums, back in pair order: lane
/// 2i of the result reduces `c0[i]`, lane 2i + 1 reduces `c1[i]`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn montgomery_reduce_pairs(c0: __m512i, c1: __m512i) -> __m512i {
    let low = _mm512_mask_blend_epi16(ODD_LANES, c0, _mm512_slli_epi32::<16>(c1));
    let high = _mm512_mask_blend_epi16(ODD_LANES, _mm512_srli_epi32::<16>(c0), c1);
    // The low halves of the sum and of t·q agree, so the high halves differ
    // by exactly (sum - t·q) / 2^16.
    let t = _mm512_mullo_epi16(low, _mm512_set1_epi16(Q_INV));
    _mm512_sub_epi16(high, _mm512_mulhi_epi16(t, _mm512_set1_epi16(Q)))
}

/// Algorithms 11 and 12: `acc` = Σ a_i ∘ b_i · 2^-16, reduced into
/// [-(q-1)/2, (q-1)/2], with the same output as
/// [`crate::backend::x86_64::basemul256::multiply_accumulate`] and
/// [`crate::ntt::multiply_accumulate`]. Inputs below q in absolute value,
/// k = `a.len()` = `b.len()` ≤ 4.
///
/// Bounds: per term, |a0·b0 + fqmul(a1, b1)·gamma| < q^2 + q·(q-1)/2 and
/// |a0·b1 + a1·b0| < 2q^2, so the k ≤ 4 exact 32-bit sums stay below
/// 8q^2 ≈ 8.9·10^7 < q·2^15 ≈ 1.09·10^8, the Montgomery reduction's domain
/// (result below q), which the Barrett reduction then centers.
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) fn multiply_accumulate(acc: &mut Poly, a: &[Poly], b: &[Poly]) {
    multiply_accumulate_range(&mut acc.coeffs, a, b, 0);
}

/// [`multiply_accumulate`] on coefficients `start..start + acc.len()`
/// only (multiples of 32): key generation's slices of t̂. `a` holds
/// polynomials or references to them (a row of the matrix).
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) fn multiply_accumulate_range(
    acc: &mut [i16],
    a: &[impl Borrow<Poly>],
    b: &[Poly],
    start: usize,
) {
    debug_assert_eq!(a.len(), b.len());
    debug_assert!(a.len() <= 4);
    debug_assert!(
        start.is_multiple_of(LANES) && acc.len().is_multiple_of(LANES) && start + acc.len() <= N
    );
    for (i, out) in acc.chunks_exact_mut(LANES).enumerate() {
        let (c0, c1) = pair_sums(a, b, start / LANES + i);
        store512(out, barrett_reduce(montgomery_reduce_pairs(c0, c1)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::x86_64::{basemul256, ntt256};

    /// Runs a test body if the CPU has AVX-512F and AVX-512BW, else reports
    /// the skip: the one place these tests turn the detection into the
    /// `unsafe` call.
    #[allow(unsafe_code)]
    fn run_if_avx512(check: unsafe fn()) {
        if !(is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw")) {
            eprintln!("AVX-512F/BW not available; skipping");
            return;
        }
        // SAFETY: AVX-512F and AVX-512BW were detected, the only
        // requirements of the test bodies (AVX-512F implies AVX2, which the
        // AVX2 functions they compare with need).
        unsafe { check() }
    }

    /// A SplitMix64 stream.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        /// A uniform value in [-bound, bound].
        fn uniform(&mut self, bound: i16) -> i16 {
            let width = 2 * u64::from(bound.unsigned_abs()) + 1;
            (self.next() % width) as i16 - bound
        }

        /// A value in [-bound, bound], half the time one of the extremes
        /// ±bound, ±(bound - 1) or 0.
        fn skewed(&mut self, bound: i16) -> i16 {
            match self.next() % 10 {
                0 => bound,
                1 => -bound,
                2 => bound - 1,
                3 => -(bound - 1),
                4 => 0,
                _ => self.uniform(bound),
            }
        }
    }

    /// Edge-case polynomials with coefficients at most `bound` in absolute
    /// value, then `count` uniform and `count` extreme-heavy random ones.
    fn inputs(bound: i16, count: usize, seed: u64) -> Vec<Poly> {
        let mut out = Vec::new();
        for value in [0, 1, -1, bound, -bound, bound - 1, -(bound - 1)] {
            out.push(Poly { coeffs: [value; N] });
        }
        for (x, y) in [(bound, -bound), (bound, 0), (-bound, 0), (1, -1)] {
            for period in [1, 2, 4, 8, 16, 32, 64, 128] {
                let mut p = Poly::ZERO;
                for (i, c) in p.coeffs.iter_mut().enumerate() {
                    *c = if (i / period) % 2 == 0 { x } else { y };
                }
                out.push(p);
            }
        }
        // Single spikes reveal any misplaced lane.
        for position in 0..N {
            let mut p = Poly::ZERO;
            p.coeffs[position] = if position % 2 == 0 { bound } else { -bound };
            out.push(p);
        }
        let mut rng = Rng(seed);
        for n in 0..2 * count {
            let mut p = Poly::ZERO;
            for c in p.coeffs.iter_mut() {
                *c = if n < count {
                    rng.uniform(bound)
                } else {
                    rng.skewed(bound)
                };
            }
            out.push(p);
        }
        out
    }

    #[test]
    fn tables_match_their_definition() {
        for (i, (z, zq)) in ZETAS.iter().zip(ZETAS_QINV.iter()).enumerate() {
            assert_eq!(z.wrapping_mul(Q_INV), *zq, "i = {i}");
        }
        // The two layout moves are inverse permutations of the 32 dwords of
        // (A, B) (index bit 4 = which vector): natural -> layout 1 ->
        // natural is the identity.
        let [from_a, from_b, to_a, to_b] = &LAYOUT_MOVES;
        let from: Vec<u32> = from_a.0.iter().chain(&from_b.0).copied().collect();
        let to: Vec<u32> = to_a.0.iter().chain(&to_b.0).copied().collect();
        for (e, source) in from.iter().enumerate() {
            assert_eq!(to[*source as usize] as usize, e);
        }
        let gammas: Vec<i16> = GAMMA_LANES.iter().flat_map(|l| l.0).collect();
        for (i, gamma) in GAMMAS.iter().enumerate() {
            assert_eq!((gammas[2 * i], gammas[2 * i + 1]), (0, *gamma));
        }
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    fn check_barrett_reduce() {
        // Exhaustive over i16, 32 values at a time.
        let all: Vec<i16> = (i16::MIN..=i16::MAX).collect();
        let mut out = [0i16; LANES];
        for chunk in all.chunks_exact(LANES) {
            store512(&mut out, barrett_reduce(load512(chunk)));
            for (x, y) in chunk.iter().zip(out) {
                assert_eq!(y, crate::field::barrett_reduce(*x), "input {x}");
            }
        }
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    fn check_ntt() {
        for (n, input) in inputs(Q - 1, 2500, 1).into_iter().enumerate() {
            let mut expect = input;
            ntt256::ntt(&mut expect);
            let mut got = input;
            ntt(&mut got);
            assert_eq!(got.coeffs, expect.coeffs, "input {n}");
        }
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    fn check_inv_ntt() {
        for (n, input) in inputs(Q, 2500, 2).into_iter().enumerate() {
            let mut expect = input;
            ntt256::inv_ntt(&mut expect);
            let mut got = input;
            inv_ntt(&mut got);
            assert_eq!(got.coeffs, expect.coeffs, "input {n}");
        }
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    fn check_round_trip() {
        for (n, input) in inputs(Q - 1, 500, 3).into_iter().enumerate() {
            let mut expect = input;
            crate::ntt::ntt(&mut expect);
            crate::ntt::inv_ntt(&mut expect);
            let mut got = input;
            ntt(&mut got);
            inv_ntt(&mut got);
            assert_eq!(got.coeffs, expect.coeffs, "input {n}");
            // inv_ntt(ntt(a)) = a · 2^16 mod q, below q.
            let q = i64::from(Q);
            for (x, y) in got.coeffs.iter().zip(input.coeffs.iter()) {
                assert!(x.abs() < Q);
                assert_eq!(
                    i64::from(*x).rem_euclid(q),
                    (i64::from(*y) << 16).rem_euclid(q)
                );
            }
        }
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    fn check_multiply_accumulate() {
        let mut rng = Rng(4);
        for k in 1..=4 {
            for n in 0..1500 {
                let mut polys = [Poly::ZERO; 8];
                for (i, p) in polys[..2 * k].iter_mut().enumerate() {
                    for (j, c) in p.coeffs.iter_mut().enumerate() {
                        *c = match n {
                            // All at the extremes, with every sign pattern.
                            0 => Q - 1,
                            1 => -(Q - 1),
                            2 => {
                                if i % 2 == 0 {
                                    Q - 1
                                } else {
                                    -(Q - 1)
                                }
                            }
                            3 => {
                                if j % 2 == 0 {
                                    Q - 1
                                } else {
                                    -(Q - 1)
                                }
                            }
                            _ if n % 2 == 0 => rng.uniform(Q - 1),
                            _ => rng.skewed(Q - 1),
                        };
                    }
                }
                let (a, b) = polys[..2 * k].split_at(k);
                let mut expect = Poly::ZERO;
                basemul256::multiply_accumulate(&mut expect, a, b);
                let mut got = Poly { coeffs: [7; N] };
                multiply_accumulate(&mut got, a, b);
                assert_eq!(got.coeffs, expect.coeffs, "k = {k}, input {n}");
                if n < 50 {
                    let mut portable = Poly::ZERO;
                    crate::ntt::multiply_accumulate(&mut portable, a, b);
                    assert_eq!(got.coeffs, portable.coeffs, "k = {k}, input {n}");
                }
                // Slices, from a row of references as key generation passes
                // them; the backend trait's default (whole sum, sliced)
                // agrees.
                let row: Vec<&Poly> = a.iter().collect();
                for (start, len) in [(0, 32), (64, 96), (224, 32)] {
                    let mut part = [0i16; 96];
                    multiply_accumulate_range(&mut part[..len], &row, b, start);
                    let expected = &expect.coeffs[start..start + len];
                    assert_eq!(part[..len], *expected, "k = {k}, input {n}, from {start}");
                    if n < 50 {
                        let mut portable = Poly::ZERO;
                        crate::ntt::multiply_accumulate(&mut portable, a, b);
                        assert_eq!(
                            portable.coeffs[start..start + len],
                            *expected,
                            "k = {k}, input {n}, from {start}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn barrett_reduce_avx512_matches_portable_on_all_i16() {
        run_if_avx512(check_barrett_reduce);
    }

    #[test]
    fn ntt_avx512_matches_avx2() {
        run_if_avx512(check_ntt);
    }

    #[test]
    fn inv_ntt_avx512_matches_avx2() {
        run_if_avx512(check_inv_ntt);
    }

    #[test]
    fn ntt_avx512_round_trip_matches_portable() {
        run_if_avx512(check_round_trip);
    }

    #[test]
    fn multiply_accumulate_avx512_matches_avx2() {
        run_if_avx512(check_multiply_accumulate);
    }
}
