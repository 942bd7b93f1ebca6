//! Hand-written AVX2 forward and inverse NTT (FIPS 203 Algorithms 9 and 10).
//!
//! Both functions compute exactly the same `i16` values, in the same
//! coefficient order, as the portable [`crate::ntt::ntt`] and
//! [`crate::ntt::inv_ntt`]: every butterfly uses the same formulas
//! (`fqmul` as two 16-bit half products, `barrett_reduce` with V = 20159),
//! applied lane-wise with wrapping 16-bit arithmetic, so each output
//! coefficient is bit-for-bit the portable one. Only the order in which
//! independent butterflies run differs.
//!
//! # Layout
//!
//! The 256 coefficients are 16 vectors of 16 lanes; vector `i` holds
//! coefficients `16i..16i + 16`. Layers of distance 128, 64, 32 and 16 pair
//! whole vectors, with one zeta broadcast per block. The layers of distance
//! 8, 4 and 2 work on two adjacent vectors `x`, `y` (32 coefficients, index
//! bits `b4..b0`, `b4` selecting the vector): a pair of vectors `(A, B)` has
//! a "vector bit" `v` (A or B) and lane bits `l3..l0` (`l3` = 128-bit half).
//! Three involutions exchange `v` with one lane bit:
//!
//! - [`swap_l3`] (`vperm2i128`) exchanges `v` and `l3`,
//! - [`swap_l2`] (`vpunpck{l,h}qdq`) exchanges `v` and `l2`,
//! - [`swap_l1`] (64-bit shifts and `vpblendd`) exchanges `v` and `l1`.
//!
//! Starting from the natural layout (`v = b4`, `l3..l0 = b3..b0`), applying
//! `swap_l3`, `swap_l2`, `swap_l1` in turn makes `v` equal to `b3`, `b2`,
//! `b1`: exactly the partner bit of the layers of distance 8, 4, 2, with
//! `l3 l2 l1 = b4 b3 b2` from then on. Undoing the swaps in reverse order
//! restores the natural layout, so memory always holds the portable order.
//! The per-lane zetas of those three layers come from precomputed tables,
//! together with their products by q^-1 mod 2^16 (which saves one
//! multiplication per Montgomery product).

use core::arch::x86_64::{
    __m256i, _mm256_add_epi16, _mm256_blend_epi32, _mm256_mulhi_epi16, _mm256_mullo_epi16,
    _mm256_permute2x128_si256, _mm256_set1_epi16, _mm256_slli_epi64, _mm256_srai_epi16,
    _mm256_srli_epi64, _mm256_sub_epi16, _mm256_unpackhi_epi64, _mm256_unpacklo_epi64,
};

use crate::backend::x86_64::mem::{load256, store256};
use crate::field::Q;
use crate::ntt::{INV_NTT_SCALE, ZETAS};
use crate::poly::{Poly, N};

/// q^-1 mod 2^16, as a signed value (as in `field`).
pub(super) const Q_INV: i16 = -3327;

/// round(2^26 / q), the Barrett constant of `field::barrett_reduce`.
const BARRETT_V: i16 = 20159;

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

/// 16 lanes of constants, aligned for a split-free load.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Lanes([i16; 16]);

/// Per-lane zetas of one in-register layer for one pair of vectors, plus the
/// same zetas times q^-1 mod 2^16.
#[derive(Clone, Copy)]
struct Twiddles {
    /// The zetas, lane by lane.
    zeta: Lanes,
    /// `zeta · Q_INV mod 2^16`, lane by lane.
    zeta_qinv: Lanes,
}

/// Builds the twiddles of the in-register layer `shift` (distance
/// `1 << shift`, for shift = 3, 2, 1) for the pair `m` of vectors (32
/// coefficients starting at 32m), in the layout that layer runs in: lane `l`
/// belongs to local block `l >> shift`. Forward layers take zetas upwards
/// from `128 >> shift`, inverse layers downwards from `(256 >> shift) - 1`.
const fn twiddles(shift: u32, m: usize, inverse: bool) -> Twiddles {
    let blocks_per_pair = 16 >> shift;
    let mut zeta = [0i16; 16];
    let mut zeta_qinv = [0i16; 16];
    let mut lane = 0;
    while lane < 16 {
        let block = m * blocks_per_pair + (lane >> shift);
        let index = if inverse {
            (256 >> shift) - 1 - block
        } else {
            (128 >> shift) + block
        };
        zeta[lane] = ZETAS[index];
        zeta_qinv[lane] = ZETAS[index].wrapping_mul(Q_INV);
        lane += 1;
    }
    Twiddles {
        zeta: Lanes(zeta),
        zeta_qinv: Lanes(zeta_qinv),
    }
}

/// Twiddles of the three in-register layers, per pair of vectors:
/// `table[m][0]` for distance 8, `[1]` for 4, `[2]` for 2.
const fn twiddle_table(inverse: bool) -> [[Twiddles; 3]; 8] {
    let empty = Twiddles {
        zeta: Lanes([0; 16]),
        zeta_qinv: Lanes([0; 16]),
    };
    let mut table = [[empty; 3]; 8];
    let mut m = 0;
    while m < 8 {
        table[m] = [
            twiddles(3, m, inverse),
            twiddles(2, m, inverse),
            twiddles(1, m, inverse),
        ];
        m += 1;
    }
    table
}

/// In-register twiddles of the forward NTT.
static FORWARD_TWIDDLES: [[Twiddles; 3]; 8] = twiddle_table(false);

/// In-register twiddles of the inverse NTT.
static INVERSE_TWIDDLES: [[Twiddles; 3]; 8] = twiddle_table(true);

/// Lane-wise `field::fqmul(zeta, b)`, given `zeta_qinv = zeta · Q_INV`.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn fqmul(b: __m256i, zeta: __m256i, zeta_qinv: __m256i) -> __m256i {
    let t = _mm256_mullo_epi16(b, zeta_qinv);
    let high = _mm256_mulhi_epi16(b, zeta);
    let correction = _mm256_mulhi_epi16(t, _mm256_set1_epi16(Q));
    _mm256_sub_epi16(high, correction)
}

/// Lane-wise `field::barrett_reduce`.
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn barrett_reduce(a: __m256i) -> __m256i {
    let high = _mm256_mulhi_epi16(a, _mm256_set1_epi16(BARRETT_V));
    let t = _mm256_srai_epi16::<10>(_mm256_add_epi16(high, _mm256_set1_epi16(1 << 9)));
    _mm256_sub_epi16(a, _mm256_mullo_epi16(t, _mm256_set1_epi16(Q)))
}

/// Forward (Cooley-Tukey) butterfly: `t = fqmul(zeta, b); (a + t, a - t)`.
#[inline]
#[target_feature(enable = "avx2")]
fn forward_butterfly(
    a: __m256i,
    b: __m256i,
    zeta: __m256i,
    zeta_qinv: __m256i,
) -> (__m256i, __m256i) {
    let t = fqmul(b, zeta, zeta_qinv);
    (_mm256_add_epi16(a, t), _mm256_sub_epi16(a, t))
}

/// Inverse (Gentleman-Sande) butterfly:
/// `(barrett_reduce(a + b), fqmul(zeta, b - a))`.
#[inline]
#[target_feature(enable = "avx2")]
fn inverse_butterfly(
    a: __m256i,
    b: __m256i,
    zeta: __m256i,
    zeta_qinv: __m256i,
) -> (__m256i, __m256i) {
    let sum = barrett_reduce(_mm256_add_epi16(a, b));
    let difference = fqmul(_mm256_sub_epi16(b, a), zeta, zeta_qinv);
    (sum, difference)
}

/// Exchanges the vector bit with lane bit 3 (the 128-bit halves):
/// `([a.lo, b.lo], [a.hi, b.hi])`. An involution.
#[inline]
#[target_feature(enable = "avx2")]
fn swap_l3(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
    (
        _mm256_permute2x128_si256::<0x20>(a, b),
        _mm256_permute2x128_si256::<0x31>(a, b),
    )
}

/// Exchanges the vector bit with lane bit 2 (64-bit halves of each 128-bit
/// half). An involution.
#[inline]
#[target_feature(enable = "avx2")]
fn swap_l2(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
    (_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b))
}

/// Exchanges the vector bit with lane bit 1 (32-bit halves of each 64-bit
/// quarter). An involution.
#[inline]
#[target_feature(enable = "avx2")]
fn swap_l1(a: __m256i, b: __m256i) -> (__m256i, __m256i) {
    (
        _mm256_blend_epi32::<0xAA>(a, _mm256_slli_epi64::<32>(b)),
        _mm256_blend_epi32::<0xAA>(_mm256_srli_epi64::<32>(a), b),
    )
}

/// A layer of distance `16 · d` (d = 8, 4, 2, 1) on the whole vectors of
/// `v`, whose first block takes zeta `ZETAS[first]` and the next ones
/// upwards.
#[inline]
#[target_feature(enable = "avx2")]
fn forward_vector_layer(v: &mut [__m256i], d: usize, first: usize) {
    for (k, block) in (first..).zip(v.chunks_exact_mut(2 * d)) {
        let zeta = _mm256_set1_epi16(ZETAS[k]);
        let zeta_qinv = _mm256_set1_epi16(ZETAS_QINV[k]);
        let (lo, hi) = block.split_at_mut(d);
        for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
            (*a, *b) = forward_butterfly(*a, *b, zeta, zeta_qinv);
        }
    }
}

/// A layer of distance `16 · d` (d = 1, 2, 4, 8) on the whole vectors of
/// `v`, whose first block takes zeta `ZETAS[last]` and the next ones
/// downwards.
#[inline]
#[target_feature(enable = "avx2")]
fn inverse_vector_layer(v: &mut [__m256i], d: usize, last: usize) {
    for (b, block) in v.chunks_exact_mut(2 * d).enumerate() {
        let zeta = _mm256_set1_epi16(ZETAS[last - b]);
        let zeta_qinv = _mm256_set1_epi16(ZETAS_QINV[last - b]);
        let (lo, hi) = block.split_at_mut(d);
        for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
            (*a, *b) = inverse_butterfly(*a, *b, zeta, zeta_qinv);
        }
    }
}

/// The layers of distance 8, 4 and 2 and the final reduction on the pair
/// `m` of vectors (`x`, `y`), in place.
#[inline]
#[target_feature(enable = "avx2")]
fn forward_pair(x: &mut __m256i, y: &mut __m256i, m: usize) {
    let [t8, t4, t2] = &FORWARD_TWIDDLES[m];
    let (mut a, mut b) = swap_l3(*x, *y);
    (a, b) = forward_butterfly(a, b, load256(&t8.zeta.0), load256(&t8.zeta_qinv.0));
    (a, b) = swap_l2(a, b);
    (a, b) = forward_butterfly(a, b, load256(&t4.zeta.0), load256(&t4.zeta_qinv.0));
    (a, b) = swap_l1(a, b);
    (a, b) = forward_butterfly(a, b, load256(&t2.zeta.0), load256(&t2.zeta_qinv.0));
    (a, b) = (barrett_reduce(a), barrett_reduce(b));
    (a, b) = swap_l1(a, b);
    (a, b) = swap_l2(a, b);
    (*x, *y) = swap_l3(a, b);
}

/// The layers of distance 2, 4 and 8 on the pair `m` of vectors (`x`, `y`),
/// in place.
#[inline]
#[target_feature(enable = "avx2")]
fn inverse_pair(x: &mut __m256i, y: &mut __m256i, m: usize) {
    let [t8, t4, t2] = &INVERSE_TWIDDLES[m];
    let (mut a, mut b) = swap_l3(*x, *y);
    (a, b) = swap_l2(a, b);
    (a, b) = swap_l1(a, b);
    (a, b) = inverse_butterfly(a, b, load256(&t2.zeta.0), load256(&t2.zeta_qinv.0));
    (a, b) = swap_l1(a, b);
    (a, b) = inverse_butterfly(a, b, load256(&t4.zeta.0), load256(&t4.zeta_qinv.0));
    (a, b) = swap_l2(a, b);
    (a, b) = inverse_butterfly(a, b, load256(&t8.zeta.0), load256(&t8.zeta_qinv.0));
    (*x, *y) = swap_l3(a, b);
}

/// Algorithm 9: NTT, in place, with the same output as
/// [`crate::ntt::ntt`]: input coefficients below q in absolute value, output
/// reduced into [-(q-1)/2, (q-1)/2], FIPS 203 (portable) coefficient order.
#[target_feature(enable = "avx2")]
pub(crate) fn ntt(p: &mut Poly) {
    // Distance 128 pairs the two halves of the polynomial; everything after
    // stays inside one half of 8 vectors, which is kept in registers.
    let (lo, hi) = p.coeffs.split_at_mut(N / 2);
    let zeta = _mm256_set1_epi16(ZETAS[1]);
    let zeta_qinv = _mm256_set1_epi16(ZETAS_QINV[1]);
    for (a, b) in lo.chunks_exact_mut(16).zip(hi.chunks_exact_mut(16)) {
        let (x, y) = forward_butterfly(load256(a), load256(b), zeta, zeta_qinv);
        store256(a, x);
        store256(b, y);
    }
    forward_half::<0>(lo);
    forward_half::<1>(hi);
}

/// The layers of distance 64 down to 2 and the final reduction on half `H`
/// (coefficients `128H..128H + 128`), kept in registers.
#[inline]
#[target_feature(enable = "avx2")]
fn forward_half<const H: usize>(half: &mut [i16]) {
    let mut v = [_mm256_set1_epi16(0); 8];
    for (v, c) in v.iter_mut().zip(half.chunks_exact(16)) {
        *v = load256(c);
    }
    forward_vector_layer(&mut v, 4, 2 + H);
    forward_vector_layer(&mut v, 2, 4 + 2 * H);
    forward_vector_layer(&mut v, 1, 8 + 4 * H);
    // Written out (not a loop) so that `v` stays in registers.
    let [v0, v1, v2, v3, v4, v5, v6, v7] = &mut v;
    forward_pair(v0, v1, 4 * H);
    forward_pair(v2, v3, 4 * H + 1);
    forward_pair(v4, v5, 4 * H + 2);
    forward_pair(v6, v7, 4 * H + 3);
    for (v, c) in v.iter().zip(half.chunks_exact_mut(16)) {
        store256(c, *v);
    }
}

/// Algorithm 10: NTT^-1, in place, times 2^16, with the same output as
/// [`crate::ntt::inv_ntt`]: input coefficients at most q in absolute value,
/// output below q in absolute value, FIPS 203 (portable) coefficient order.
#[target_feature(enable = "avx2")]
pub(crate) fn inv_ntt(p: &mut Poly) {
    let (lo, hi) = p.coeffs.split_at_mut(N / 2);
    inverse_half::<0>(lo);
    inverse_half::<1>(hi);
    // Distance 128, fused with the final scaling by 2^32 / 128.
    let zeta = _mm256_set1_epi16(ZETAS[1]);
    let zeta_qinv = _mm256_set1_epi16(ZETAS_QINV[1]);
    let scale = _mm256_set1_epi16(INV_NTT_SCALE);
    let scale_qinv = _mm256_set1_epi16(INV_NTT_SCALE.wrapping_mul(Q_INV));
    for (a, b) in lo.chunks_exact_mut(16).zip(hi.chunks_exact_mut(16)) {
        let (sum, difference) = inverse_butterfly(load256(a), load256(b), zeta, zeta_qinv);
        store256(a, fqmul(sum, scale, scale_qinv));
        store256(b, fqmul(difference, scale, scale_qinv));
    }
}

/// The layers of distance 2 up to 64 on half `H` (coefficients
/// `128H..128H + 128`), kept in registers.
#[inline]
#[target_feature(enable = "avx2")]
fn inverse_half<const H: usize>(half: &mut [i16]) {
    let mut v = [_mm256_set1_epi16(0); 8];
    for (v, c) in v.iter_mut().zip(half.chunks_exact(16)) {
        *v = load256(c);
    }
    // Written out (not a loop) so that `v` stays in registers.
    let [v0, v1, v2, v3, v4, v5, v6, v7] = &mut v;
    inverse_pair(v0, v1, 4 * H);
    inverse_pair(v2, v3, 4 * H + 1);
    inverse_pair(v4, v5, 4 * H + 2);
    inverse_pair(v6, v7, 4 * H + 3);
    inverse_vector_layer(&mut v, 1, 15 - 4 * H);
    inverse_vector_layer(&mut v, 2, 7 - 2 * H);
    inverse_vector_layer(&mut v, 4, 3 - H);
    for (v, c) in v.iter().zip(half.chunks_exact_mut(16)) {
        store256(c, *v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (64-bit LCG).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }

        /// A value in [-bound, bound].
        fn coefficient(&mut self, bound: i16) -> i16 {
            let width = 2 * u64::from(bound.unsigned_abs()) + 1;
            (self.next() % width) as i16 - bound
        }
    }

    /// Edge-case polynomials whose coefficients are all at most `bound` in
    /// absolute value, then `count` pseudo-random ones.
    fn inputs(bound: i16, count: usize, seed: u64) -> Vec<Poly> {
        let mut out = Vec::new();
        for value in [0, 1, -1, bound, -bound, bound - 1, -(bound - 1)] {
            out.push(Poly { coeffs: [value; N] });
        }
        for (x, y) in [(bound, -bound), (bound, 0), (-bound, 0), (1, -1)] {
            let mut p = Poly::ZERO;
            for (i, c) in p.coeffs.iter_mut().enumerate() {
                *c = if i % 2 == 0 { x } else { y };
            }
            out.push(p);
            for (i, c) in p.coeffs.iter_mut().enumerate() {
                *c = if (i / 16) % 2 == 0 { x } else { y };
            }
            out.push(p);
        }
        // Single spikes reveal any misplaced lane.
        for position in [0, 1, 2, 7, 8, 15, 16, 17, 31, 100, 128, 255] {
            let mut p = Poly::ZERO;
            p.coeffs[position] = bound;
            out.push(p);
        }
        let mut rng = Lcg(seed);
        for _ in 0..count {
            let mut p = Poly::ZERO;
            for c in p.coeffs.iter_mut() {
                *c = rng.coefficient(bound);
            }
            out.push(p);
        }
        out
    }

    #[test]
    fn zeta_tables_match_the_definition() {
        // ZETAS[i] = 17^BitRev7(i) · 2^16 mod q, centered (FIPS 203
        // Appendix A: 1, 1729, 2580, 3289, ... before the Montgomery factor).
        let q = i64::from(Q);
        for (i, (z, zq)) in ZETAS.iter().zip(ZETAS_QINV.iter()).enumerate() {
            let mut power = 1i64;
            for _ in 0..crate::ntt::bit_rev7(i) {
                power = power * 17 % q;
            }
            assert_eq!(i64::from(*z).rem_euclid(q), (power << 16) % q, "i = {i}");
            assert!(z.abs() <= Q / 2);
            assert_eq!(z.wrapping_mul(Q_INV), *zq);
        }
        assert_eq!(&ZETAS[..4], &[-1044, -758, -359, -1517]);
        assert_eq!(ZETAS[127], 1628);
    }

    #[target_feature(enable = "avx2")]
    fn check_ntt() {
        for (n, input) in inputs(Q - 1, 2000, 1).into_iter().enumerate() {
            let mut expect = input;
            crate::ntt::ntt(&mut expect);
            let mut got = input;
            ntt(&mut got);
            assert_eq!(got.coeffs, expect.coeffs, "input {n}");
        }
    }

    #[target_feature(enable = "avx2")]
    fn check_inv_ntt() {
        for (n, input) in inputs(Q, 2000, 2).into_iter().enumerate() {
            let mut expect = input;
            crate::ntt::inv_ntt(&mut expect);
            let mut got = input;
            inv_ntt(&mut got);
            assert_eq!(got.coeffs, expect.coeffs, "input {n}");
        }
    }

    #[target_feature(enable = "avx2")]
    fn check_round_trip() {
        for input in inputs(Q - 1, 100, 3) {
            let mut p = input;
            ntt(&mut p);
            inv_ntt(&mut p);
            // inv_ntt(ntt(a)) = a · 2^16 mod q.
            for (x, y) in p.coeffs.iter().zip(input.coeffs.iter()) {
                assert!(x.abs() < Q);
                let expect = (i64::from(*y) << 16).rem_euclid(i64::from(Q));
                assert_eq!(i64::from(*x).rem_euclid(i64::from(Q)), expect);
            }
        }
    }

    #[test]
    fn ntt_avx2_matches_portable() {
        crate::backend::x86_64::run_if_avx2(check_ntt);
    }

    #[test]
    fn inv_ntt_avx2_matches_portable() {
        crate::backend::x86_64::run_if_avx2(check_inv_ntt);
    }

    #[test]
    fn ntt_avx2_round_trip() {
        crate::backend::x86_64::run_if_avx2(check_round_trip);
    }
}
