//! ByteEncode_12 (FIPS 203 Algorithm 5, d = 12) on AVX2, with the same
//! output as [`crate::encode::encode_12`]: 16 coefficients to 24 bytes per
//! vector.
//!
//! `vpmaddwd` with the factors (1, 2^12) joins each pair of 12-bit values
//! into the low 24 bits of a 32-bit lane (d1 + 2^12·d2, the little-endian
//! bit order of Algorithm 5); a byte shuffle drops the top byte of each lane
//! within each 128-bit half, and a dword permutation joins the two 12-byte
//! halves into the vector's first 24 bytes.
//!
//! ByteDecode_12 with the modulus check ([`decode_12_checked`]) goes the
//! other way: the low 128-bit half is loaded from bytes 0..16 of a 24-byte
//! group and the high half from bytes 8..24, a byte shuffle gives each
//! 16-bit lane the two bytes holding its 12 bits, and the even lanes are
//! masked with `0x0fff`, the odd ones shifted down by 4.

use core::arch::x86_64::{
    _mm256_add_epi16, _mm256_and_si256, _mm256_blend_epi16, _mm256_castsi256_si128,
    _mm256_cmpgt_epi16, _mm256_extracti128_si256, _mm256_madd_epi16, _mm256_movemask_epi8,
    _mm256_permutevar8x32_epi32, _mm256_set1_epi16, _mm256_set1_epi32, _mm256_set_m128i,
    _mm256_setr_epi32, _mm256_setr_epi8, _mm256_shuffle_epi8, _mm256_srai_epi16, _mm256_srli_epi16,
};

use crate::backend::x86_64::mem::{load128, load256, store128, store256, store64};
use crate::field::Q;
use crate::poly::Poly;

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

/// ByteDecode_12 of 384 bytes into `p`, returning whether every value is
/// below q; the same as [`crate::encode::decode_12_checked`]. Constant time
/// in the bytes (they can be a decapsulation key): the check is a vector
/// comparison per group, accumulated, and one mask at the end.
#[must_use]
#[target_feature(enable = "avx2")]
pub(crate) fn decode_12_checked(bytes: &[u8], p: &mut Poly) -> bool {
    assert_eq!(bytes.len(), 384);
    // Value 2i takes bytes 3i, 3i + 1 (low 12 bits), value 2i + 1 bytes
    // 3i + 1, 3i + 2 (high 12 bits); the high half starts at byte 8, so its
    // values (from byte 12) start at its byte 4.
    let windows = _mm256_setr_epi8(
        0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8, 9, 10, 10, 11, //
        4, 5, 5, 6, 7, 8, 8, 9, 10, 11, 11, 12, 13, 14, 14, 15,
    );
    let low12 = _mm256_set1_epi16(0x0fff);
    let q = _mm256_set1_epi16(Q);
    // All ones in the lanes of the values so far that are below q.
    let mut below_q = _mm256_set1_epi16(-1);
    for (input, coeffs) in bytes.chunks_exact(24).zip(p.coeffs.chunks_exact_mut(16)) {
        let v = _mm256_set_m128i(load128(&input[8..]), load128(input));
        let words = _mm256_shuffle_epi8(v, windows);
        let values = _mm256_blend_epi16::<0xaa>(
            _mm256_and_si256(words, low12),
            _mm256_srli_epi16::<4>(words),
        );
        below_q = _mm256_and_si256(below_q, _mm256_cmpgt_epi16(q, values));
        store256(coeffs, values);
    }
    _mm256_movemask_epi8(below_q) == -1
}

#[cfg(test)]
mod tests {
    use super::*;

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
        crate::backend::x86_64::run_if_avx2(check);
    }

    /// Our decoding and check against the portable ones, for `bytes`;
    /// returns the check.
    #[target_feature(enable = "avx2")]
    fn compare_decode(bytes: &[u8; 384], what: &str) -> bool {
        let mut expected = Poly::ZERO;
        let expected_ok = crate::encode::decode_12_checked(bytes, &mut expected);
        let mut ours = Poly::ZERO;
        let ok = decode_12_checked(bytes, &mut ours);
        assert_eq!(ours.coeffs, expected.coeffs, "{what}");
        assert_eq!(ok, expected_ok, "{what}");
        ok
    }

    #[target_feature(enable = "avx2")]
    fn check_decode() {
        let mut state = 0x6a09_e667_f3bc_c908u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut bytes = [0u8; 384];
        let mut p = Poly::ZERO;
        for round in 0..1000 {
            // Valid encodings, values in [0, q).
            for c in p.coeffs.iter_mut() {
                *c = (next() % Q as u64) as i16;
            }
            crate::encode::encode_12(&p, &mut bytes);
            assert!(compare_decode(&bytes, &format!("valid round {round}")));
            // Any 12-bit values (almost all encodings invalid).
            for b in bytes.iter_mut() {
                *b = next() as u8;
            }
            compare_decode(&bytes, &format!("random bytes round {round}"));
        }
        // One value at or above q at each position among values below it.
        for value in [Q - 1, Q, 4095] {
            for position in 0..256 {
                for (i, c) in p.coeffs.iter_mut().enumerate() {
                    *c = (i as i16 * 13) % Q;
                }
                p.coeffs[position] = value;
                crate::encode::pack::<12>(&p, &mut bytes, |c| c as u16);
                let what = format!("{value} at {position}");
                assert_eq!(compare_decode(&bytes, &what), value < Q, "{what}");
            }
        }
        assert!(!compare_decode(&[0xff; 384], "all 0xff"));
        assert!(compare_decode(&[0; 384], "all 0"));
    }

    #[test]
    fn decode_12_checked_avx2_matches_portable() {
        crate::backend::x86_64::run_if_avx2(check_decode);
    }
}
