//! ByteEncode_12 (FIPS 203 Algorithm 5, d = 12) on AVX2, with the same
//! output as [`crate::encode::encode_12`]: 16 coefficients to 24 bytes per
//! vector.
//!
//! `vpmaddwd` with the factors (1, 2^12) joins each pair of 12-bit values
//! into the low 24 bits of a 32-bit lane (d1 + 2^12·d2, the little-endian
//! bit order of Algorithm 5); a byte shuffle drops the top byte of each lane
//! within each 128-bit half, and a dword permutation joins the two 12-byte
//! halves into the vector's first 24 bytes.

use core::arch::x86_64::{
    _mm256_add_epi16, _mm256_and_si256, _mm256_castsi256_si128, _mm256_extracti128_si256,
    _mm256_madd_epi16, _mm256_permutevar8x32_epi32, _mm256_set1_epi16, _mm256_set1_epi32,
    _mm256_setr_epi32, _mm256_setr_epi8, _mm256_shuffle_epi8, _mm256_srai_epi16,
};

use super::mem_avx2::{load256, store128, store64};
use crate::field::Q;

/// ByteEncode_12 of `coeffs` (a multiple of 16 values in [0, q), or in
/// (-q, q) when `CANONICALIZE`, which maps them to [0, q) first) into
/// `out` (3/2 bytes per value).
#[target_feature(enable = "avx2")]
pub(crate) fn encode_12<const CANONICALIZE: bool>(coeffs: &[i16], out: &mut [u8]) {
    debug_assert!(coeffs.len().is_multiple_of(16) && out.len() == coeffs.len() * 3 / 2);
    let factors = _mm256_set1_epi32(1 | (1 << 28));
    // Bytes 0..3 of each dword, per 128-bit half (0x80: zero).
    let drop_top = _mm256_setr_epi8(
        0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -128, -128, -128, -128, //
        0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -128, -128, -128, -128,
    );
    let join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
    let q = _mm256_set1_epi16(Q);
    for (values, bytes) in coeffs.chunks_exact(16).zip(out.chunks_exact_mut(24)) {
        let mut v = load256(values);
        if CANONICALIZE {
            // `field::to_unsigned`: add q where negative.
            v = _mm256_add_epi16(v, _mm256_and_si256(_mm256_srai_epi16::<15>(v), q));
        }
        let pairs = _mm256_madd_epi16(v, factors);
        let packed = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(pairs, drop_top), join);
        store128(&mut bytes[..16], _mm256_castsi256_si128(packed));
        store64(&mut bytes[16..], _mm256_extracti128_si256::<1>(packed));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poly::Poly;

    #[target_feature(enable = "avx2")]
    fn check() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..100 {
            let mut p = Poly::ZERO;
            for c in p.coeffs.iter_mut() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *c = (state % (2 * Q as u64 - 1)) as i16 - (Q - 1);
            }
            if round == 0 {
                p.coeffs.fill(Q - 1);
            }
            let mut expected = [0u8; 384];
            crate::encode::encode_12(&p, &mut expected);
            let mut ours = [0u8; 384];
            encode_12::<true>(&p.coeffs, &mut ours);
            assert_eq!(ours, expected, "round {round}");
            // Already canonical values, on a slice.
            p.make_canonical();
            let mut part = [0u8; 48];
            encode_12::<false>(&p.coeffs[64..96], &mut part);
            assert_eq!(part, expected[96..144], "round {round}");
        }
    }

    #[test]
    fn encode_12_avx2_matches_portable() {
        crate::backend::run_if_avx2(check);
    }
}
