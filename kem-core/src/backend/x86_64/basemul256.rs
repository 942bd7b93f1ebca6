//! AVX2 multiplication in the NTT domain (FIPS 203 Algorithms 11 and 12),
//! with the same output as [`crate::ntt::multiply_accumulate`], and the
//! pieces of key generation that finish t̂ = Â ∘ ŝ + ê a slice at a time.
//!
//! # Layout
//!
//! Coefficients stay in the FIPS 203 (portable) order, so one vector holds
//! 16 coefficients, that is eight pairs (a0, a1) of degree-one polynomials.
//! For each pair, Algorithm 12 needs
//!
//! - c0 = a0·b0 + (a1·b1·2^-16)·gamma, and
//! - c1 = a0·b1 + a1·b0.
//!
//! `vpmaddwd` multiplies 16-bit lanes and adds neighbours into 32 bits, so
//! c0 is one `vpmaddwd` of (a0, fqmul(a1, b1)) by (b0, gamma) and c1 one of
//! (a0, a1) by (b1, b0): the sums are exact, as in the portable code. After
//! the k terms, the 32-bit sums are split into their low and high 16-bit
//! halves, back in pair order, for a 16-bit Montgomery reduction that gives
//! the same value as `field::montgomery_reduce`, then Barrett-reduced.

use core::arch::x86_64::{
    __m256i, _mm256_add_epi16, _mm256_add_epi32, _mm256_and_si256, _mm256_blend_epi16,
    _mm256_madd_epi16, _mm256_mulhi_epi16, _mm256_mullo_epi16, _mm256_set1_epi16,
    _mm256_setzero_si256, _mm256_shufflehi_epi16, _mm256_shufflelo_epi16, _mm256_slli_epi32,
    _mm256_srai_epi16, _mm256_srli_epi32, _mm256_sub_epi16,
};

use core::borrow::Borrow;

use crate::backend::x86_64::mem::{load256, store256};
use crate::backend::x86_64::ntt256::{barrett_reduce, fqmul, Q_INV};
use crate::field::{MONT_SQUARED, Q};
use crate::ntt::GAMMAS;
use crate::poly::{Poly, N};

/// Per coefficient, the gamma of its pair at the odd (a1) positions and 0 at
/// the even ones: blended into b's odd lanes for c0.
static GAMMA_LANES: [i16; N] = {
    let mut t = [0i16; N];
    let mut i = 0;
    while i < N / 2 {
        t[2 * i + 1] = GAMMAS[i];
        i += 1;
    }
    t
};

/// Lane-wise `field::fqmul(a, b)` of two variable vectors.
#[inline]
#[target_feature(enable = "avx2")]
fn fqmul_variable(a: __m256i, b: __m256i) -> __m256i {
    let t = _mm256_mullo_epi16(_mm256_mullo_epi16(a, b), _mm256_set1_epi16(Q_INV));
    let high = _mm256_mulhi_epi16(a, b);
    _mm256_sub_epi16(high, _mm256_mulhi_epi16(t, _mm256_set1_epi16(Q)))
}

/// Σ a_i ∘ b_i on the 16 coefficients at `offset`, as the two vectors of
/// 32-bit sums (c0 of the eight pairs, c1 of the eight pairs).
#[inline]
#[target_feature(enable = "avx2")]
fn pair_sums(a: &[impl Borrow<Poly>], b: &[Poly], offset: usize) -> (__m256i, __m256i) {
    let gamma = load256(&GAMMA_LANES[offset..]);
    let mut c0 = _mm256_setzero_si256();
    let mut c1 = _mm256_setzero_si256();
    for (pa, pb) in a.iter().zip(b) {
        let pa: &Poly = pa.borrow();
        let va = load256(&pa.coeffs[offset..]);
        let vb = load256(&pb.coeffs[offset..]);
        // (a0, fqmul(a1, b1)) · (b0, gamma)
        let x = _mm256_blend_epi16::<0xAA>(va, fqmul_variable(va, vb));
        let y = _mm256_blend_epi16::<0xAA>(vb, gamma);
        c0 = _mm256_add_epi32(c0, _mm256_madd_epi16(x, y));
        // (a0, a1) · (b1, b0)
        let swapped = _mm256_shufflehi_epi16::<0xB1>(_mm256_shufflelo_epi16::<0xB1>(vb));
        c1 = _mm256_add_epi32(c1, _mm256_madd_epi16(va, swapped));
    }
    (c0, c1)
}

/// `field::montgomery_reduce` of the 32-bit sums, back in pair order: lane
/// 2i of the result reduces `c0[i]`, lane 2i + 1 reduces `c1[i]`.
#[inline]
#[target_feature(enable = "avx2")]
fn montgomery_reduce_pairs(c0: __m256i, c1: __m256i) -> __m256i {
    let low = _mm256_blend_epi16::<0xAA>(c0, _mm256_slli_epi32::<16>(c1));
    let high = _mm256_blend_epi16::<0xAA>(_mm256_srli_epi32::<16>(c0), c1);
    // The low halves of the sum and of t·q agree, so the high halves differ
    // by exactly (sum - t·q) / 2^16.
    let t = _mm256_mullo_epi16(low, _mm256_set1_epi16(Q_INV));
    _mm256_sub_epi16(high, _mm256_mulhi_epi16(t, _mm256_set1_epi16(Q)))
}

/// Algorithms 11 and 12 on coefficients `start..start + acc.len()` (a
/// multiple of 16, from a multiple of 16): `acc` = Σ a_i ∘ b_i · 2^-16,
/// reduced into [-(q-1)/2, (q-1)/2], exactly as
/// [`crate::ntt::multiply_accumulate`] computes those coefficients. `a`
/// holds polynomials or references to them (a column of a matrix).
#[target_feature(enable = "avx2")]
pub(crate) fn multiply_accumulate_range(
    acc: &mut [i16],
    a: &[impl Borrow<Poly>],
    b: &[Poly],
    start: usize,
) {
    debug_assert!(
        start.is_multiple_of(16) && acc.len().is_multiple_of(16) && start + acc.len() <= N
    );
    debug_assert_eq!(a.len(), b.len());
    for (i, out) in acc.chunks_exact_mut(16).enumerate() {
        let (c0, c1) = pair_sums(a, b, start + 16 * i);
        store256(out, barrett_reduce(montgomery_reduce_pairs(c0, c1)));
    }
}

/// The whole-polynomial form, [`crate::ntt::multiply_accumulate`].
#[target_feature(enable = "avx2")]
pub(crate) fn multiply_accumulate(acc: &mut Poly, a: &[Poly], b: &[Poly]) {
    multiply_accumulate_range(&mut acc.coeffs, a, b, 0);
}

/// Key generation's last steps for t̂ on a slice: `t` (from
/// [`multiply_accumulate_range`], so times 2^-16) becomes
/// canonical(reduce(t·2^16 + e)), as the portable `pke` computes it with
/// `scale_to_montgomery`, `add_assign`, `reduce` and `make_canonical`.
/// Lengths are multiples of 16.
#[target_feature(enable = "avx2")]
pub(crate) fn finish_public_key(t: &mut [i16], e: &[i16]) {
    debug_assert!(t.len().is_multiple_of(16) && t.len() == e.len());
    let mont_squared = _mm256_set1_epi16(MONT_SQUARED);
    let mont_squared_qinv = _mm256_set1_epi16(MONT_SQUARED.wrapping_mul(Q_INV));
    let q = _mm256_set1_epi16(Q);
    for (t, e) in t.chunks_exact_mut(16).zip(e.chunks_exact(16)) {
        let scaled = fqmul(load256(t), mont_squared, mont_squared_qinv);
        let reduced = barrett_reduce(_mm256_add_epi16(scaled, load256(e)));
        // Add q where negative: `field::to_unsigned`.
        let negative = _mm256_srai_epi16::<15>(reduced);
        store256(t, _mm256_add_epi16(reduced, _mm256_and_si256(negative, q)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ntt;

    /// Polynomials with coefficients in (-q, q) from a SplitMix64 stream.
    fn polys(count: usize, seed: u64) -> Vec<Poly> {
        let mut state = seed;
        let mut next = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        (0..count)
            .map(|_| {
                let mut p = Poly::ZERO;
                for c in p.coeffs.iter_mut() {
                    *c = (next() % (2 * Q as u64 - 1)) as i16 - (Q - 1);
                }
                p
            })
            .collect()
    }

    #[target_feature(enable = "avx2")]
    fn check_multiply_accumulate() {
        for k in 1..=4 {
            for seed in 0..50 {
                let a = polys(k, seed);
                let mut b = polys(k, seed + 1000);
                // Extremes of the input range too.
                if seed == 0 {
                    b.iter_mut().for_each(|p| p.coeffs.fill(-(Q - 1)));
                }
                let mut expected = Poly::ZERO;
                ntt::multiply_accumulate(&mut expected, &a, &b);
                let mut ours = Poly::ZERO;
                multiply_accumulate(&mut ours, &a, &b);
                assert_eq!(ours, expected, "k = {k}, seed {seed}");
                // A slice in the middle gives the same coefficients.
                let mut part = [0i16; 48];
                multiply_accumulate_range(&mut part, &a, &b, 96);
                assert_eq!(part[..], expected.coeffs[96..144]);
            }
        }
    }

    #[target_feature(enable = "avx2")]
    fn check_finish_public_key() {
        for seed in 0..50 {
            let [t, e] = <[Poly; 2]>::try_from(polys(2, seed)).expect("two");
            let mut expected = t;
            expected.scale_to_montgomery();
            expected.add_assign(&e);
            expected.reduce();
            expected.make_canonical();
            let mut ours = t;
            finish_public_key(&mut ours.coeffs, &e.coeffs);
            assert_eq!(ours, expected, "seed {seed}");
        }
    }

    #[test]
    fn multiply_accumulate_matches_portable() {
        crate::backend::x86_64::run_if_avx2(check_multiply_accumulate);
    }

    #[test]
    fn finish_public_key_matches_portable() {
        crate::backend::x86_64::run_if_avx2(check_finish_public_key);
    }
}
