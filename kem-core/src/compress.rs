//! Compress_d and Decompress_d (FIPS 203, section 4.2.1, equations 4.7 and
//! 4.8), without division: the rounding division by q is a multiplication by
//! a precomputed reciprocal and a shift (no KyberSlash timing leak).

use crate::field::{to_unsigned, Q};

/// ceil(2^36 / q): x · RECIP_Q >> 36 = floor(x / q) for every x < 2^24
/// (the error term x · (RECIP_Q · q - 2^36) stays below 2^36).
const RECIP_Q: u64 = (1u64 << 36).div_ceil(Q as u64);

/// Compress_d(x) = round(2^d / q · x) mod 2^d, for a coefficient in (-q, q)
/// (taken mod q) and d ≤ 11.
#[inline(always)]
pub(crate) fn compress<const D: usize>(x: i16) -> u16 {
    let x = u64::from(to_unsigned(x));
    // round(x 2^d / q) = floor((x 2^d + (q - 1) / 2) / q), as q is odd.
    let numerator = (x << D) + (Q as u64 - 1) / 2;
    (((numerator * RECIP_Q) >> 36) as u16) & ((1u16 << D) - 1)
}

/// Decompress_d(y) = round(q / 2^d · y), for y < 2^d; the result is in [0, q).
#[inline(always)]
pub(crate) fn decompress<const D: usize>(y: u16) -> i16 {
    ((u32::from(y) * Q as u32 + (1 << (D - 1))) >> D) as i16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference_compress(x: u32, d: u32) -> u32 {
        // Exact rational rounding, as FIPS 203 defines it.
        let q = Q as u32;
        ((x << d) * 2 + q) / (2 * q) % (1 << d)
    }

    fn exhaustive<const D: usize>() {
        for x in 0..Q {
            let expected = reference_compress(x as u32, D as u32);
            assert_eq!(u32::from(compress::<D>(x)), expected, "d = {D}, x = {x}");
            // Negative representatives compress like their canonical value.
            if x > 0 {
                assert_eq!(compress::<D>(x - Q), compress::<D>(x), "d = {D}, x = {x}");
            }
        }
        for y in 0..(1u16 << D) {
            let q = Q as u32;
            let expected = ((u32::from(y) * q * 2 + (1 << D)) / (2 << D)) as i16;
            let x = decompress::<D>(y);
            assert_eq!(x, expected, "d = {D}, y = {y}");
            assert!((0..Q).contains(&x));
            // Decompression followed by compression is the identity.
            assert_eq!(compress::<D>(x), y, "d = {D}, y = {y}");
        }
    }

    #[test]
    fn compress_and_decompress_match_definition_for_every_input() {
        exhaustive::<1>();
        exhaustive::<4>();
        exhaustive::<5>();
        exhaustive::<10>();
        exhaustive::<11>();
    }
}
