//! ByteEncode_d and ByteDecode_d (FIPS 203, Algorithms 5 and 6): packing 256
//! d-bit values into 32·d bytes, little-endian bit order.

use crate::field::{to_unsigned, Q};
use crate::poly::{Poly, N};

/// How many d-bit values to pack per group: the most (a power of two) whose
/// bits fill whole bytes of one 64-bit word, so most widths run on `u64`
/// (1: 64 values, 4: 16, 5: 8, 10: 4, 12: 4); 11 bits take 8 values in a
/// `u128`.
const fn group_len(d: usize) -> usize {
    let mut g = 64;
    while g >= 2 {
        if g * d <= 64 && (g * d).is_multiple_of(8) {
            return g;
        }
        g /= 2;
    }
    8
}

/// Packs the 256 coefficients of `p`, each mapped through `f` to a d-bit
/// value, into `out` (32·d bytes), little-endian bit order.
#[inline(always)]
pub(crate) fn pack<const D: usize>(p: &Poly, out: &mut [u8], f: impl Fn(i16) -> u16) {
    debug_assert_eq!(out.len(), 32 * D);
    let group = const { group_len(D) };
    let group_bytes = group * D / 8;
    let values = p.coeffs.chunks_exact(group);
    if group * D <= 64 {
        for (chunk, bytes) in values.zip(out.chunks_exact_mut(group_bytes)) {
            let mut acc = 0u64;
            for (i, &c) in chunk.iter().enumerate() {
                acc |= u64::from(f(c)) << (D * i);
            }
            bytes.copy_from_slice(&acc.to_le_bytes()[..group_bytes]);
        }
    } else {
        for (chunk, bytes) in values.zip(out.chunks_exact_mut(group_bytes)) {
            let mut acc = 0u128;
            for (i, &c) in chunk.iter().enumerate() {
                acc |= u128::from(f(c)) << (D * i);
            }
            bytes.copy_from_slice(&acc.to_le_bytes()[..group_bytes]);
        }
    }
}

/// Unpacks 32·d bytes into 256 d-bit values, each mapped through `f`.
#[inline(always)]
pub(crate) fn unpack<const D: usize>(bytes: &[u8], p: &mut Poly, f: impl Fn(u16) -> i16) {
    debug_assert_eq!(bytes.len(), 32 * D);
    let group = const { group_len(D) };
    let group_bytes = group * D / 8;
    let values = p.coeffs.chunks_exact_mut(group);
    if group * D <= 64 {
        let mask = (1u64 << D) - 1;
        for (chunk, input) in values.zip(bytes.chunks_exact(group_bytes)) {
            let mut buf = [0u8; 8];
            buf[..group_bytes].copy_from_slice(input);
            let acc = u64::from_le_bytes(buf);
            for (i, c) in chunk.iter_mut().enumerate() {
                *c = f(((acc >> (D * i)) & mask) as u16);
            }
        }
    } else {
        let mask = (1u128 << D) - 1;
        for (chunk, input) in values.zip(bytes.chunks_exact(group_bytes)) {
            let mut buf = [0u8; 16];
            buf[..group_bytes].copy_from_slice(input);
            let acc = u128::from_le_bytes(buf);
            for (i, c) in chunk.iter_mut().enumerate() {
                *c = f(((acc >> (D * i)) & mask) as u16);
            }
        }
    }
}

/// ByteEncode_12 of a polynomial with coefficients in (-q, q), written as
/// their canonical representatives.
pub(crate) fn encode_12(p: &Poly, out: &mut [u8]) {
    pack::<12>(p, out, to_unsigned);
}

/// ByteDecode_12 that also reports whether every 12-bit value was already
/// below q (the FIPS 203 section 7.2 modulus check when applied to an
/// encapsulation key). Returns `false` for a non-canonical encoding, in
/// constant time with respect to the values.
#[must_use]
pub(crate) fn decode_12_checked(bytes: &[u8], p: &mut Poly) -> bool {
    unpack::<12>(bytes, p, |v| v as i16);
    // Accumulates the sign bit of (v - q): 1 for each value below q.
    let all_below_q = p
        .coeffs
        .iter()
        .fold(1u16, |ok, &v| ok & ((v.wrapping_sub(Q) as u16) >> 15));
    all_below_q == 1
}

/// Number of bytes that ByteEncode_d writes for one polynomial.
pub(crate) const fn encoded_len(d: usize) -> usize {
    N * d / 8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FIPS 203 Algorithm 5, bit by bit.
    fn reference_encode(values: &[u16; N], d: usize) -> Vec<u8> {
        let mut bits = vec![0u8; N * d];
        for i in 0..N {
            let mut a = values[i];
            for j in 0..d {
                bits[i * d + j] = (a & 1) as u8;
                a >>= 1;
            }
        }
        bits.chunks(8)
            .map(|byte| byte.iter().enumerate().map(|(i, b)| b << i).sum())
            .collect()
    }

    fn round_trip<const D: usize>() {
        let modulus = if D == 12 { Q as u16 } else { 1 << D };
        let values: [u16; N] = core::array::from_fn(|i| {
            ((i as u32).wrapping_mul(2654435761) % u32::from(modulus)) as u16
        });
        let mut p = Poly::ZERO;
        for (c, v) in p.coeffs.iter_mut().zip(values) {
            *c = v as i16;
        }
        let mut out = vec![0u8; encoded_len(D)];
        pack::<D>(&p, &mut out, |c| c as u16);
        assert_eq!(out, reference_encode(&values, D), "d = {D}");
        let mut back = Poly::ZERO;
        unpack::<D>(&out, &mut back, |v| v as i16);
        assert_eq!(back, p, "d = {D}");
    }

    #[test]
    fn pack_matches_algorithm_5_and_unpack_inverts_it() {
        round_trip::<1>();
        round_trip::<4>();
        round_trip::<5>();
        round_trip::<10>();
        round_trip::<11>();
        round_trip::<12>();
    }

    #[test]
    fn groups_fill_whole_bytes() {
        for (d, g) in [(1, 64), (4, 16), (5, 8), (10, 4), (11, 8), (12, 4)] {
            assert_eq!(group_len(d), g, "d = {d}");
            assert!((g * d).is_multiple_of(8));
            assert!(N.is_multiple_of(g));
        }
    }

    #[test]
    fn decode_12_rejects_each_value_at_or_above_q() {
        let mut p = Poly::ZERO;
        let mut bytes = [0u8; 384];
        assert!(decode_12_checked(&bytes, &mut p));
        for value in [3328u16, 3329, 4095] {
            for position in [0usize, 1, 77, 255] {
                let mut q = Poly::ZERO;
                q.coeffs[position] = value as i16;
                pack::<12>(&q, &mut bytes, |c| c as u16);
                assert_eq!(decode_12_checked(&bytes, &mut p), value < 3329);
                assert_eq!(p.coeffs[position], value as i16);
            }
        }
    }

    #[test]
    fn message_round_trip() {
        let m: [u8; 32] = core::array::from_fn(|i| (i * 37 + 11) as u8);
        let mut p = Poly::ZERO;
        // Decompress_1(ByteDecode_1(m)), then ByteEncode_1(Compress_1(·)).
        unpack::<1>(&m, &mut p, crate::compress::decompress::<1>);
        assert!(p.coeffs.iter().all(|&c| c == 0 || c == 1665));
        let mut back = [0u8; 32];
        pack::<1>(&p, &mut back, crate::compress::compress::<1>);
        assert_eq!(back, m);
    }
}
