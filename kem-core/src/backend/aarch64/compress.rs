//! Compress_d / Decompress_d and ByteEncode / ByteDecode for the `neon`
//! backend, on 128-bit vectors.
//!
//! - Compress_d and Decompress_d run on vectors for every d, with the
//!   portable formulas of `compress` (the rounding division by q as a
//!   multiplication by ceil(2^36 / q) and a shift, on 64-bit lanes).
//! - Packing and unpacking run on vectors too: d = 1's unpacking (the
//!   message) a byte per vector by a bit test, d = 4 as nibble pairs,
//!   d = 12 as `ld3`/`st3` byte triples holding two 12-bit values, and
//!   d = 5, 10 and 11 eight values (d bytes) at a time ([`pack_8`],
//!   [`unpack_8`]).
//!
//! Only lane arithmetic on the coefficients: constant time. The modulus
//! check of ByteDecode_12 accumulates its verdict in a vector and reports
//! it once.

use core::arch::aarch64::{
    int16x8_t, int16x8x2_t, uint16x8_t, uint32x4_t, uint8x16_t, uint8x8x3_t, vaddq_s16, vaddq_u32,
    vand_u8, vandq_s16, vandq_u16, vandq_u32, vandq_u64, vcltq_u16, vcombine_s64, vcombine_u16,
    vcombine_u32, vcombine_u64, vcreate_s64, vcreate_u64, vdup_n_u32, vdup_n_u8, vdupq_laneq_u64,
    vdupq_n_s16, vdupq_n_s32, vdupq_n_s64, vdupq_n_u16, vdupq_n_u32, vdupq_n_u64, vget_low_u16,
    vget_low_u32, vminvq_u16, vmovl_high_u16, vmovl_u16, vmovl_u8, vmovn_u16, vmovn_u32, vmovn_u64,
    vmull_high_u16, vmull_high_u32, vmull_u16, vmull_u32, vorrq_u16, vorrq_u32, vorrq_u64,
    vqtbl1q_u8, vreinterpretq_s16_u16, vreinterpretq_u16_s16, vreinterpretq_u32_u16,
    vreinterpretq_u32_u8, vreinterpretq_u64_u32, vreinterpretq_u8_u64, vrshlq_u32, vshlq_n_u16,
    vshlq_u32, vshlq_u64, vshr_n_u8, vshrq_n_s16, vshrq_n_u16, vshrq_n_u32, vshrq_n_u64, vtstq_u16,
};

use crate::backend::aarch64::mem::{
    load_i16, load_i32, load_pairs, load_triples, load_u16, load_u8, load_u8x8, store_i16,
    store_pairs, store_triples, store_u8, store_u8x8,
};
use crate::encode;
use crate::field::Q;
use crate::poly::{Poly, N};

/// ceil(2^36 / q), as in `compress`.
const RECIP_Q: u32 = (1u64 << 36).div_ceil(Q as u64) as u32;

/// `field::to_unsigned` lane by lane: (-q, q) to [0, q).
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn to_unsigned(x: int16x8_t) -> uint16x8_t {
    vreinterpretq_u16_s16(vaddq_s16(
        x,
        vandq_s16(vshrq_n_s16::<15>(x), vdupq_n_s16(Q)),
    ))
}

/// ⌊n · RECIP_Q / 2^36⌋ for four 32-bit n < 2^24: ⌊n / q⌋.
#[inline]
#[target_feature(enable = "neon")]
fn divide_by_q(n: uint32x4_t) -> uint32x4_t {
    let low = vmull_u32(vget_low_u32(n), vdup_n_u32(RECIP_Q));
    let high = vmull_high_u32(n, vdupq_n_u32(RECIP_Q));
    vcombine_u32(
        vmovn_u64(vshrq_n_u64::<36>(low)),
        vmovn_u64(vshrq_n_u64::<36>(high)),
    )
}

/// `compress::compress::<D>` lane by lane, for coefficients in (-q, q).
#[inline]
#[target_feature(enable = "neon")]
fn compress<const D: usize>(x: int16x8_t) -> uint16x8_t {
    let x = to_unsigned(x);
    let shift = vdupq_n_s32(D as i32);
    let half_q = vdupq_n_u32((Q as u32 - 1) / 2);
    let low = divide_by_q(vaddq_u32(
        vshlq_u32(vmovl_u16(vget_low_u16(x)), shift),
        half_q,
    ));
    let high = divide_by_q(vaddq_u32(vshlq_u32(vmovl_high_u16(x), shift), half_q));
    vandq_u16(
        vcombine_u16(vmovn_u32(low), vmovn_u32(high)),
        vdupq_n_u16((1 << D) - 1),
    )
}

/// `compress::decompress::<D>` lane by lane: ⌊(y·q + 2^(D-1)) / 2^D⌋.
#[inline]
#[target_feature(enable = "neon")]
fn decompress<const D: usize>(y: uint16x8_t) -> int16x8_t {
    let q = vdupq_n_u16(Q as u16);
    let shift = vdupq_n_s32(-(D as i32));
    let low = vrshlq_u32(vmull_u16(vget_low_u16(y), vget_low_u16(q)), shift);
    let high = vrshlq_u32(vmull_high_u16(y, q), shift);
    vreinterpretq_s16_u16(vcombine_u16(vmovn_u32(low), vmovn_u32(high)))
}

/// Eight d-bit values (u16 lanes) as the 8·d bits of ByteEncode_d, in the
/// first d bytes of the result (the rest zero): pairs merged into 2d-bit
/// u32 lanes, those into 4d-bit u64 lanes, and the high u64 shifted onto
/// the low one across the lane boundary.
#[inline]
#[target_feature(enable = "neon")]
fn pack_8<const D: usize>(values: uint16x8_t) -> uint8x16_t {
    let x = vreinterpretq_u32_u16(values);
    let pairs = vorrq_u32(
        vandq_u32(x, vdupq_n_u32(0xffff)),
        vshlq_u32(vshrq_n_u32::<16>(x), vdupq_n_s32(D as i32)),
    );
    let y = vreinterpretq_u64_u32(pairs);
    let quads = vorrq_u64(
        vandq_u64(y, vdupq_n_u64(0xffff_ffff)),
        vshlq_u64(vshrq_n_u64::<32>(y), vdupq_n_s64(2 * D as i64)),
    );
    let high = vdupq_laneq_u64::<1>(quads);
    let shifts = vcombine_s64(
        vcreate_s64(4 * D as u64),
        vcreate_s64((4 * D as i64 - 64) as u64),
    );
    let low = vandq_u64(quads, vcombine_u64(vcreate_u64(u64::MAX), vcreate_u64(0)));
    vreinterpretq_u8_u64(vorrq_u64(low, vshlq_u64(high, shifts)))
}

/// For [`unpack_8`]: the `TBL` indices that put bytes ⌊d·i / 8⌋ .. +3 of a
/// group into u32 lane i (values `4·half` .. `4·half + 3`), and the right
/// shifts (negative) that bring value i to the bottom of its lane.
const fn unpack_tables(d: usize, half: usize) -> ([u8; 16], [i32; 4]) {
    let mut indices = [0u8; 16];
    let mut shifts = [0i32; 4];
    let mut lane = 0;
    while lane < 4 {
        let bit = d * (4 * half + lane);
        let mut byte = 0;
        while byte < 4 {
            indices[4 * lane + byte] = (bit / 8 + byte) as u8;
            byte += 1;
        }
        shifts[lane] = -((bit % 8) as i32);
        lane += 1;
    }
    (indices, shifts)
}

/// The eight d-bit values of ByteDecode_d whose d bytes start `bytes`.
#[inline]
#[target_feature(enable = "neon")]
fn unpack_8<const D: usize>(bytes: uint8x16_t) -> uint16x8_t {
    let mask = vdupq_n_u32((1 << D) - 1);
    let (low_indices, low_shifts) = const { unpack_tables(D, 0) };
    let (high_indices, high_shifts) = const { unpack_tables(D, 1) };
    let low = vreinterpretq_u32_u8(vqtbl1q_u8(bytes, load_u8(&low_indices, 0)));
    let high = vreinterpretq_u32_u8(vqtbl1q_u8(bytes, load_u8(&high_indices, 0)));
    let low = vandq_u32(vshlq_u32(low, load_i32(&low_shifts, 0)), mask);
    let high = vandq_u32(vshlq_u32(high, load_i32(&high_shifts, 0)), mask);
    vcombine_u16(vmovn_u32(low), vmovn_u32(high))
}

/// ByteEncode_d of 256 values < 2^d (u16 lanes of `values`), 8 at a time;
/// each step writes 16 bytes, d of them its own (the next step overwrites
/// the rest), except the last ones, which go through a buffer.
#[inline]
#[target_feature(enable = "neon")]
fn pack<const D: usize>(values: &[i16; N], out: &mut [u8]) {
    for group in 0..N / 8 {
        let packed = pack_8::<D>(vreinterpretq_u16_s16(load_i16(values, 8 * group)));
        let at = D * group;
        if at + 16 <= out.len() {
            store_u8(out, at, packed);
        } else {
            let mut last = [0u8; 16];
            store_u8(&mut last, 0, packed);
            out[at..at + D].copy_from_slice(&last[..D]);
        }
    }
}

/// ByteDecode_d into u16 lanes, 8 values (d bytes) at a time; the last
/// groups are read through a buffer (a 16-byte load would pass the end).
#[inline]
#[target_feature(enable = "neon")]
fn unpack<const D: usize>(bytes: &[u8], values: &mut [i16; N]) {
    for group in 0..N / 8 {
        let at = D * group;
        let loaded = if at + 16 <= bytes.len() {
            load_u8(bytes, at)
        } else {
            let mut last = [0u8; 16];
            last[..D].copy_from_slice(&bytes[at..at + D]);
            load_u8(&last, 0)
        };
        store_i16(
            values,
            8 * group,
            vreinterpretq_s16_u16(unpack_8::<D>(loaded)),
        );
    }
}

/// `Backend::compress_encode`: ByteEncode_d(Compress_d(p)) into 32·d bytes.
#[target_feature(enable = "neon")]
pub(super) fn compress_encode<const D: usize>(p: &Poly, out: &mut [u8]) {
    debug_assert_eq!(out.len(), 32 * D);
    if D == 4 {
        // 16 coefficients (8 pairs) to 8 bytes: low nibble first.
        for at in (0..N).step_by(16) {
            let int16x8x2_t(even, odd) = load_pairs(&p.coeffs, at);
            let bytes = vorrq_u16(compress::<4>(even), vshlq_n_u16::<4>(compress::<4>(odd)));
            store_u8x8(out, at / 2, vmovn_u16(bytes));
        }
        return;
    }
    let mut compressed = Poly::ZERO;
    for at in (0..N).step_by(8) {
        let values = vreinterpretq_s16_u16(compress::<D>(load_i16(&p.coeffs, at)));
        store_i16(&mut compressed.coeffs, at, values);
    }
    match D {
        5 | 10 | 11 => pack::<D>(&compressed.coeffs, out),
        _ => encode::pack::<D>(&compressed, out, |c| c as u16),
    }
}

/// Lane i's bit of a byte.
const BIT_OF_LANE: [u16; 8] = [1, 2, 4, 8, 16, 32, 64, 128];

/// `Backend::decode_decompress`: Decompress_d(ByteDecode_d(bytes)), in
/// [0, q).
#[target_feature(enable = "neon")]
pub(super) fn decode_decompress<const D: usize>(bytes: &[u8], p: &mut Poly) {
    debug_assert_eq!(bytes.len(), 32 * D);
    if D == 1 {
        // The message: bit i of byte j is coefficient 8j + i, each
        // Decompress_1(bit), selected by a mask (no branch on the bit).
        let one = decompress::<1>(vdupq_n_u16(1));
        let bit_of_lane = load_u16(&BIT_OF_LANE, 0);
        for (j, &byte) in bytes.iter().enumerate() {
            let set = vtstq_u16(vdupq_n_u16(u16::from(byte)), bit_of_lane);
            store_i16(
                &mut p.coeffs,
                8 * j,
                vandq_s16(vreinterpretq_s16_u16(set), one),
            );
        }
        return;
    }
    if D == 4 {
        for at in (0..N).step_by(16) {
            let packed = load_u8x8(bytes, at / 2);
            let low = vmovl_u8(vand_u8(packed, vdup_n_u8(0x0f)));
            let high = vmovl_u8(vshr_n_u8::<4>(packed));
            let pairs = int16x8x2_t(decompress::<4>(low), decompress::<4>(high));
            store_pairs(&mut p.coeffs, at, pairs);
        }
        return;
    }
    match D {
        5 | 10 | 11 => unpack::<D>(bytes, &mut p.coeffs),
        _ => encode::unpack::<D>(bytes, p, |v| v as i16),
    }
    for at in (0..N).step_by(8) {
        let values = decompress::<D>(vreinterpretq_u16_s16(load_i16(&p.coeffs, at)));
        store_i16(&mut p.coeffs, at, values);
    }
}

/// Two 12-bit values per byte triple: (e, o) -> e, e >> 8 | o << 4, o >> 4.
#[inline]
#[target_feature(enable = "neon")]
pub(super) fn pack_12(even: uint16x8_t, odd: uint16x8_t) -> uint8x8x3_t {
    uint8x8x3_t(
        vmovn_u16(even),
        vmovn_u16(vorrq_u16(vshrq_n_u16::<8>(even), vshlq_n_u16::<4>(odd))),
        vmovn_u16(vshrq_n_u16::<4>(odd)),
    )
}

/// `Backend::encode_12`: ByteEncode_12 of coefficients in (-q, q), as
/// their canonical values; 16 coefficients to 24 bytes per step.
#[target_feature(enable = "neon")]
pub(super) fn encode_12(p: &Poly, out: &mut [u8]) {
    debug_assert_eq!(out.len(), 384);
    for step in 0..N / 16 {
        let int16x8x2_t(even, odd) = load_pairs(&p.coeffs, 16 * step);
        store_triples(out, 24 * step, pack_12(to_unsigned(even), to_unsigned(odd)));
    }
}

/// `Backend::decode_12_checked`: ByteDecode_12, reporting whether every
/// value was below q.
#[target_feature(enable = "neon")]
pub(super) fn decode_12_checked(bytes: &[u8], p: &mut Poly) -> bool {
    debug_assert_eq!(bytes.len(), 384);
    let q = vdupq_n_u16(Q as u16);
    let mut all_below_q = vdupq_n_u16(u16::MAX);
    for step in 0..N / 16 {
        let uint8x8x3_t(b0, b1, b2) = load_triples(bytes, 24 * step);
        let (b0, b1, b2) = (vmovl_u8(b0), vmovl_u8(b1), vmovl_u8(b2));
        let even = vorrq_u16(b0, vshlq_n_u16::<8>(vandq_u16(b1, vdupq_n_u16(0x0f))));
        let odd = vorrq_u16(vshrq_n_u16::<4>(b1), vshlq_n_u16::<4>(b2));
        all_below_q = vandq_u16(
            all_below_q,
            vandq_u16(vcltq_u16(even, q), vcltq_u16(odd, q)),
        );
        let pairs = int16x8x2_t(vreinterpretq_s16_u16(even), vreinterpretq_s16_u16(odd));
        store_pairs(&mut p.coeffs, 16 * step, pairs);
    }
    vminvq_u16(all_below_q) == u16::MAX
}

#[cfg(test)]
mod tests {
    use crate::backend::aarch64::Neon;
    use crate::backend::portable::Portable;
    use crate::backend::traits::PolyKernels;
    use crate::field::Q;
    use crate::poly::{Poly, N};

    fn poly_from(f: impl Fn(usize) -> i16) -> Poly {
        let mut p = Poly::ZERO;
        for (i, c) in p.coeffs.iter_mut().enumerate() {
            *c = f(i);
        }
        p
    }

    fn check_width<const D: usize>() {
        // Every representative in (-q, q), in polynomials of 256.
        for start in (-(Q as i32 - 1)..Q as i32).step_by(N) {
            let p = poly_from(|i| (start + i as i32).min(Q as i32 - 1) as i16);
            let (mut neon, mut portable) = (vec![0u8; 32 * D], vec![0u8; 32 * D]);
            Neon::compress_encode::<D>(&p, &mut neon);
            Portable::compress_encode::<D>(&p, &mut portable);
            assert_eq!(neon, portable, "compress d = {D}, from {start}");
            let (mut back, mut want) = (Poly::ZERO, Poly::ZERO);
            Neon::decode_decompress::<D>(&neon, &mut back);
            Portable::decode_decompress::<D>(&portable, &mut want);
            assert_eq!(back, want, "decompress d = {D}, from {start}");
        }
    }

    #[test]
    fn compression_matches_the_portable_one_for_every_input() {
        check_width::<1>();
        check_width::<4>();
        check_width::<5>();
        check_width::<10>();
        check_width::<11>();
    }

    #[test]
    fn twelve_bit_coding_matches_the_portable_one() {
        for start in (-(Q as i32 - 1)..Q as i32).step_by(N) {
            let p = poly_from(|i| (start + i as i32).min(Q as i32 - 1) as i16);
            let (mut neon, mut portable) = ([0u8; 384], [0u8; 384]);
            Neon::encode_12(&p, &mut neon);
            Portable::encode_12(&p, &mut portable);
            assert_eq!(neon, portable);
        }
        let bytes: Vec<u8> = (0..384u32).map(|i| (i * 97 + 13) as u8).collect();
        let (mut neon, mut portable) = (Poly::ZERO, Poly::ZERO);
        let verdict = Neon::decode_12_checked(&bytes, &mut neon);
        assert_eq!(verdict, Portable::decode_12_checked(&bytes, &mut portable));
        assert_eq!(neon, portable);
        let canonical = [0u8; 384];
        assert!(Neon::decode_12_checked(&canonical, &mut neon));
    }
}
