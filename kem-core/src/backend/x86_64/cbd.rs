//! SamplePolyCBD_eta (FIPS 203 Algorithm 8) on AVX2, with the same output
//! as [`crate::sample::sample_poly_cbd`].
//!
//! eta = 2: 64 coefficients per 32 input bytes.
//! Coefficient i takes the four bits 4i..4i + 4, that is one nibble: the
//! low nibble of byte j is coefficient 2j, the high one 2j + 1. Within each
//! nibble, adding the odd bits to the even ones leaves x = b0 + b1 and
//! y = b2 + b3 in two 2-bit fields; x + 3 - y is then in [1, 5] and never
//! borrows from the neighbouring nibble. The two nibbles of each byte are
//! split, 3 subtracted, and the bytes interleaved and sign-extended to 16
//! bits in coefficient order.
//!
//! eta = 3 (ML-KEM-512's eta1): 32 coefficients per 24 input bytes. Each
//! 32-bit lane takes three bytes (24 bits, four coefficients of 3 + 3
//! bits); adding the bits of each 3-bit field gives its popcount in place,
//! and coefficient k of the lane is field 2k minus field 2k + 1. The four
//! coefficients of each lane are packed to 16 bits and put in order with
//! unpacks and one cross-half permute.
//!
//! Only shifts, masks, additions and fixed shuffles: no branch or table
//! lookup on the (secret) input.

use core::arch::x86_64::{
    _mm256_add_epi32, _mm256_add_epi8, _mm256_and_si256, _mm256_castsi256_si128,
    _mm256_cvtepi8_epi16, _mm256_extracti128_si256, _mm256_or_si256, _mm256_permute2x128_si256,
    _mm256_set1_epi32, _mm256_set1_epi8, _mm256_set_m128i, _mm256_setr_epi8, _mm256_shuffle_epi8,
    _mm256_slli_epi32, _mm256_srli_epi16, _mm256_srli_epi32, _mm256_sub_epi32, _mm256_sub_epi8,
    _mm256_unpackhi_epi32, _mm256_unpackhi_epi8, _mm256_unpacklo_epi32, _mm256_unpacklo_epi8,
};

use crate::backend::x86_64::mem::{load128, load256, store256};
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
        sample_poly_cbd3(bytes, p);
    }
}

/// Algorithm 8 for eta = 3 from 192 bytes.
#[target_feature(enable = "avx2")]
fn sample_poly_cbd3(bytes: &[u8], p: &mut Poly) {
    assert_eq!(bytes.len(), 192);
    // Per 128-bit half: four 3-byte groups into the four 32-bit lanes (top
    // byte zero). The low half reads input bytes 0..12 (of a 16-byte load at
    // the step's start), the high half bytes 12..24 (bytes 4..16 of a load
    // 8 bytes in), so no load reaches past the input.
    let spread = _mm256_setr_epi8(
        0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1, //
        4, 5, 6, -1, 7, 8, 9, -1, 10, 11, 12, -1, 13, 14, 15, -1,
    );
    let fields = _mm256_set1_epi32(0x0024_9249);
    let three_bits = _mm256_set1_epi32(7);
    let low_half = _mm256_set1_epi32(0xffff);
    for (step, out) in p.coeffs.chunks_exact_mut(32).enumerate() {
        let at = 24 * step;
        let v = _mm256_set_m128i(load128(&bytes[at + 8..]), load128(&bytes[at..]));
        let t = _mm256_shuffle_epi8(v, spread);
        // Each 3-bit field: the number of its bits that are set.
        let d = _mm256_add_epi32(
            _mm256_add_epi32(
                _mm256_and_si256(t, fields),
                _mm256_and_si256(_mm256_srli_epi32::<1>(t), fields),
            ),
            _mm256_and_si256(_mm256_srli_epi32::<2>(t), fields),
        );
        // Coefficient k of a lane: field 2k - field 2k + 1, in [-3, 3].
        let coefficient = |a: core::arch::x86_64::__m256i, b: core::arch::x86_64::__m256i| {
            _mm256_sub_epi32(
                _mm256_and_si256(a, three_bits),
                _mm256_and_si256(b, three_bits),
            )
        };
        let c0 = coefficient(d, _mm256_srli_epi32::<3>(d));
        let c1 = coefficient(_mm256_srli_epi32::<6>(d), _mm256_srli_epi32::<9>(d));
        let c2 = coefficient(_mm256_srli_epi32::<12>(d), _mm256_srli_epi32::<15>(d));
        let c3 = coefficient(_mm256_srli_epi32::<18>(d), _mm256_srli_epi32::<21>(d));
        // Lane l: (c0, c1) and (c2, c3) as 16-bit pairs, then the four as
        // one 64-bit group: coefficients 4l..4l + 4.
        let c01 = _mm256_or_si256(_mm256_and_si256(c0, low_half), _mm256_slli_epi32::<16>(c1));
        let c23 = _mm256_or_si256(_mm256_and_si256(c2, low_half), _mm256_slli_epi32::<16>(c3));
        // Per half: lanes 0, 1 (low) and 2, 3 (high) of that half.
        let low = _mm256_unpacklo_epi32(c01, c23);
        let high = _mm256_unpackhi_epi32(c01, c23);
        store256(&mut out[..16], _mm256_permute2x128_si256::<0x20>(low, high));
        store256(&mut out[16..], _mm256_permute2x128_si256::<0x31>(low, high));
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
        crate::backend::x86_64::run_if_avx2(check);
    }
}
