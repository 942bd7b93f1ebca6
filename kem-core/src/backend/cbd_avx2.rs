//! SamplePolyCBD_2 (FIPS 203 Algorithm 8, eta = 2) on AVX2, 64
//! coefficients per 32 input bytes, with the same output as
//! [`crate::sample::sample_poly_cbd`]; eta = 3 (ML-KEM-512's eta1) stays
//! on that portable code.
//!
//! Coefficient i takes the four bits 4i..4i + 4, that is one nibble: the
//! low nibble of byte j is coefficient 2j, the high one 2j + 1. Within each
//! nibble, adding the odd bits to the even ones leaves x = b0 + b1 and
//! y = b2 + b3 in two 2-bit fields; x + 3 - y is then in [1, 5] and never
//! borrows from the neighbouring nibble. The two nibbles of each byte are
//! split, 3 subtracted, and the bytes interleaved and sign-extended to 16
//! bits in coefficient order. Only shifts, masks and additions: no branch or
//! table lookup on the (secret) input.

use core::arch::x86_64::{
    _mm256_add_epi8, _mm256_and_si256, _mm256_castsi256_si128, _mm256_cvtepi8_epi16,
    _mm256_extracti128_si256, _mm256_set1_epi8, _mm256_srli_epi16, _mm256_sub_epi8,
    _mm256_unpackhi_epi8, _mm256_unpacklo_epi8,
};

use super::mem_avx2::{load256, store256};
use crate::poly::Poly;

/// Algorithm 8 for eta = `ETA` from 64·eta bytes.
#[target_feature(enable = "avx2")]
pub(crate) fn sample_poly_cbd<const ETA: usize>(bytes: &[u8], p: &mut Poly) {
    if ETA == 2 {
        debug_assert_eq!(bytes.len(), 128);
        let mut words = [0u64; 16];
        for (word, chunk) in words.iter_mut().zip(bytes.chunks_exact(8)) {
            *word = u64::from_le_bytes(chunk.try_into().expect("8-byte chunk"));
        }
        sample_poly_cbd2(&words, p);
        crate::wipe::wipe(&mut words, [0; 16]);
    } else {
        crate::sample::sample_poly_cbd::<ETA>(bytes, p);
    }
}

/// Algorithm 8 for eta = 2 from 128 bytes given as 16 little-endian words
/// (such as the first lanes of a SHAKE256 state).
#[target_feature(enable = "avx2")]
pub(crate) fn sample_poly_cbd2(words: &[u64; 16], p: &mut Poly) {
    let mask55 = _mm256_set1_epi8(0x55);
    let mask33 = _mm256_set1_epi8(0x33);
    let mask0f = _mm256_set1_epi8(0x0f);
    let three = _mm256_set1_epi8(3);
    for (input, out) in words.chunks_exact(4).zip(p.coeffs.chunks_exact_mut(64)) {
        let v = load256(input);
        // Each 2-bit field: the sum of its two bits.
        let sums = _mm256_add_epi8(
            _mm256_and_si256(v, mask55),
            _mm256_and_si256(_mm256_srli_epi16::<1>(v), mask55),
        );
        // Each nibble: x + 3 - y.
        let x = _mm256_and_si256(sums, mask33);
        let y = _mm256_and_si256(_mm256_srli_epi16::<2>(sums), mask33);
        let nibbles = _mm256_sub_epi8(_mm256_add_epi8(x, mask33), y);
        let even = _mm256_sub_epi8(_mm256_and_si256(nibbles, mask0f), three);
        let odd = _mm256_sub_epi8(
            _mm256_and_si256(_mm256_srli_epi16::<4>(nibbles), mask0f),
            three,
        );
        // Per 128-bit half: bytes 0..8 (low) and 8..16 (high) of the half,
        // interleaved even/odd, are 16 consecutive coefficients each.
        let low = _mm256_unpacklo_epi8(even, odd);
        let high = _mm256_unpackhi_epi8(even, odd);
        store256(
            &mut out[..16],
            _mm256_cvtepi8_epi16(_mm256_castsi256_si128(low)),
        );
        store256(
            &mut out[16..32],
            _mm256_cvtepi8_epi16(_mm256_castsi256_si128(high)),
        );
        store256(
            &mut out[32..48],
            _mm256_cvtepi8_epi16(_mm256_extracti128_si256::<1>(low)),
        );
        store256(
            &mut out[48..],
            _mm256_cvtepi8_epi16(_mm256_extracti128_si256::<1>(high)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[target_feature(enable = "avx2")]
    fn check() {
        let mut state = 0x1234_5678_9abc_def0u64;
        for round in 0..200 {
            let bytes: Vec<u8> = (0..192)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            let bytes = match round {
                0 => vec![0u8; 192],
                1 => vec![0xff; 192],
                _ => bytes,
            };
            for eta in [2, 3] {
                let input = &bytes[..64 * eta];
                let (mut ours, mut expected) = (Poly::ZERO, Poly::ZERO);
                if eta == 2 {
                    sample_poly_cbd::<2>(input, &mut ours);
                    crate::sample::sample_poly_cbd::<2>(input, &mut expected);
                } else {
                    sample_poly_cbd::<3>(input, &mut ours);
                    crate::sample::sample_poly_cbd::<3>(input, &mut expected);
                }
                assert_eq!(ours, expected, "round {round}, eta {eta}");
            }
        }
    }

    #[test]
    fn cbd_avx2_matches_portable() {
        crate::backend::run_if_avx2(check);
    }
}
