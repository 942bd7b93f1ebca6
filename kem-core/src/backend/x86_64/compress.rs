//! ByteEncode_d(Compress_d(·)) and Decompress_d(ByteDecode_d(·)) (FIPS 203
//! section 4.2.1 and Algorithms 5 and 6) on AVX2 for d = 1 (the message
//! of K-PKE, Algorithms 14 and 15), 4, 5, 10 and 11,
//! with exactly the bytes and coefficients of the portable code
//! ([`crate::compress`], [`crate::encode`]) for every input: compression
//! takes coefficients in (-q, q), decompression any bytes.
//!
//! # Compress_d
//!
//! The portable code computes floor(n / q) for n = x·2^d + (q-1)/2, x the
//! canonical coefficient, by a 64-bit multiplication with ceil(2^36 / q).
//! Here 16 coefficients at a time, in 16-bit lanes:
//!
//! - d = 4, 5: with V = ceil(2^26 / q) = 20159 and V·q = 2^26 + 447,
//!   floor(n·V / 2^26) = floor(n / q) for every n < 2^26 / 447 (about
//!   150 000), and n < 2^17 here. As 2^d divides (q-1)/2 = 1664,
//!   n = 2^d·t with t = x + 1664 / 2^d < 2^12, so the quotient is
//!   floor(t·V / 2^(26-d)): the high half of the 16-bit product t·V
//!   (`vpmulhuw`), shifted right by 10 - d.
//! - d = 10, 11: y0 = floor(x·M / 2^16) with M = ceil(2^(16+d) / q) exceeds
//!   x·2^d / q by less than 0.014, and the +(q-1)/2 adds (q-1)/2q = 0.4998
//!   to n / q, so the quotient is y0 or y0 + 1. The remainder n - y0·q is
//!   then in [0, 2q), below 2^15, so it is exact in wrapping 16-bit
//!   arithmetic, and one comparison with q adds the missing 1. The result
//!   leaves a remainder in [0, q), which is what makes it floor(n / q).
//!
//! - d = 1: Compress_1(x) is 1 exactly for x in [833, 2496] (2x/q rounds
//!   to 1 there and to 0 or 2 elsewhere), that is when
//!   f = 1664 - x satisfies f' - 832 < 0, where f' is f with its bits
//!   flipped if it is negative (|f| for f ≥ 0, |f| - 1 below). The sign
//!   bits of 32 such lanes, packed to bytes with signed saturation (which
//!   keeps signs), are one `vpmovmskb`: 32 bits of the message.
//!
//! Then the mask with 2^d - 1 (the "mod 2^d"). Packing joins neighbouring
//! values with multiply-adds (`vpmaddubsw` for bytes, `vpmaddwd` for words:
//! the low value plus 2^d times the high one, the little-endian bit order of
//! Algorithm 5), two 32-bit halves of a 64-bit lane with a variable shift of
//! the low half up by 32 - 2d and a 64-bit shift back, and whole bytes of
//! the 64-bit lanes with a byte shuffle. Each 128-bit half ends up with the
//! bytes of its 8 (or 16) values at its front, and the two halves are
//! joined in registers (`store_halves`), so no store reaches past the
//! group's bytes.
//!
//! # Decompress_d
//!
//! For d = 1, each 16-bit lane of a group of 16 gets the group's two bytes
//! and keeps its own bit (mask 2^i, compared for equality with the mask):
//! all ones where the bit is set, which masked with (q + 1) / 2 is
//! Decompress_1.
//!
//! A byte shuffle gives each 16-bit lane the two bytes that hold its d bits
//! (for d = 11: each 32-bit lane the bytes of a pair of values, shifted
//! down to bit 0 with `vpsrlvd`); a multiplication by a power of two per lane
//! moves each value to the top of its lane. Shifted down by one and masked,
//! a lane is y·2^(15-d), and `vpmulhrsw` with q gives
//! (y·2^(15-d)·q + 2^14) >> 15 = (y·q + 2^(d-1)) >> d, the portable formula
//! exactly. Each 128-bit half is loaded from the group's bytes at an offset
//! chosen so that no load reads past the group.
//!
//! Constant time: only arithmetic, masks and shuffles with constant control
//! vectors; no branch or table index depends on a coefficient or byte.

use core::arch::x86_64::{
    __m256i, _mm256_add_epi16, _mm256_and_si256, _mm256_blend_epi16, _mm256_castsi256_si128,
    _mm256_cmpeq_epi16, _mm256_cmpgt_epi16, _mm256_extracti128_si256, _mm256_madd_epi16,
    _mm256_maddubs_epi16, _mm256_movemask_epi8, _mm256_mulhi_epu16, _mm256_mulhrs_epi16,
    _mm256_mullo_epi16, _mm256_or_si256, _mm256_packs_epi16, _mm256_packus_epi16,
    _mm256_permute4x64_epi64, _mm256_permutevar8x32_epi32, _mm256_set1_epi16, _mm256_set1_epi32,
    _mm256_set_m128i, _mm256_setr_epi32, _mm256_setr_epi64x, _mm256_setr_epi8, _mm256_shuffle_epi8,
    _mm256_slli_epi16, _mm256_slli_epi32, _mm256_sllv_epi32, _mm256_sllv_epi64, _mm256_srai_epi16,
    _mm256_srli_epi16, _mm256_srli_epi64, _mm256_srlv_epi32, _mm256_sub_epi16, _mm256_xor_si256,
    _mm_bslli_si128, _mm_bsrli_si128, _mm_or_si128,
};

use crate::backend::x86_64::mem::{load128, load256, store128, store256, store64};
use crate::field::Q;
use crate::poly::Poly;

/// (q - 1) / 2, the rounding term of Compress_d.
const HALF_Q: i16 = (Q - 1) / 2;

/// ceil(2^bits / q), as the unsigned 16-bit factor of `vpmulhuw`.
const fn ceil_recip(bits: u32) -> i16 {
    let r = (1u32 << bits).div_ceil(Q as u32);
    assert!(r < 1 << 16);
    r as u16 as i16
}

/// ByteEncode_d(Compress_d(p)) into `out` (32·d bytes), for d = 1, 4, 5,
/// 10, 11; coefficients in (-q, q).
#[target_feature(enable = "avx2")]
pub(crate) fn compress_encode<const D: usize>(p: &Poly, out: &mut [u8]) {
    assert_eq!(out.len(), 32 * D);
    match D {
        1 => compress_encode_1(p, out),
        4 => compress_encode_4(p, out),
        5 => compress_encode_5(p, out),
        10 => compress_encode_10(p, out),
        11 => compress_encode_11(p, out),
        _ => unreachable!("compress_avx2 has d = 1, 4, 5, 10, 11"),
    }
}

/// Decompress_d(ByteDecode_d(bytes)) (32·d bytes) into `p`, for d = 1, 4,
/// 5, 10, 11; coefficients in [0, q).
#[target_feature(enable = "avx2")]
pub(crate) fn decode_decompress<const D: usize>(bytes: &[u8], p: &mut Poly) {
    assert_eq!(bytes.len(), 32 * D);
    match D {
        1 => decode_decompress_1(bytes, p),
        4 => decode_decompress_4(bytes, p),
        5 => decode_decompress_5(bytes, p),
        10 => decode_decompress_10(bytes, p),
        11 => decode_decompress_11(bytes, p),
        _ => unreachable!("compress_avx2 has d = 1, 4, 5, 10, 11"),
    }
}

/// `field::to_unsigned` per lane: adds q where negative.
#[inline]
#[target_feature(enable = "avx2")]
fn canonical(v: __m256i) -> __m256i {
    _mm256_add_epi16(
        v,
        _mm256_and_si256(_mm256_srai_epi16::<15>(v), _mm256_set1_epi16(Q)),
    )
}

/// Compress_d for d = `D` ≤ 5 (`SHIFT` = 10 - d), 16 coefficients in
/// (-q, q); see the module docs.
#[inline]
#[target_feature(enable = "avx2")]
fn compress_low<const D: usize, const SHIFT: i32>(v: __m256i) -> __m256i {
    const { assert!(D <= 7 && SHIFT as usize == 10 - D && HALF_Q % (1 << D) == 0) };
    let t = _mm256_add_epi16(canonical(v), _mm256_set1_epi16(HALF_Q >> D));
    let y = _mm256_srli_epi16::<SHIFT>(_mm256_mulhi_epu16(t, _mm256_set1_epi16(ceil_recip(26))));
    _mm256_and_si256(y, _mm256_set1_epi16((1 << D) - 1))
}

/// Compress_d for d = `D` = 10 or 11, 16 coefficients in (-q, q); see the
/// module docs.
#[inline]
#[target_feature(enable = "avx2")]
fn compress_high<const D: usize>(v: __m256i) -> __m256i {
    let x = canonical(v);
    let (recip, shifted) = match D {
        10 => (ceil_recip(26), _mm256_slli_epi16::<10>(x)),
        11 => (ceil_recip(27), _mm256_slli_epi16::<11>(x)),
        _ => unreachable!("d = 10 or 11"),
    };
    let q = _mm256_set1_epi16(Q);
    let estimate = _mm256_mulhi_epu16(x, _mm256_set1_epi16(recip));
    // n - estimate·q mod 2^16, with n = x·2^d + (q-1)/2: in [0, 2q).
    let remainder = _mm256_sub_epi16(
        _mm256_add_epi16(shifted, _mm256_set1_epi16(HALF_Q)),
        _mm256_mullo_epi16(estimate, q),
    );
    // Minus -1 where the remainder is at least q.
    let y = _mm256_sub_epi16(
        estimate,
        _mm256_cmpgt_epi16(remainder, _mm256_set1_epi16(Q - 1)),
    );
    _mm256_and_si256(y, _mm256_set1_epi16((1 << D) - 1))
}

/// Stores the first `L` bytes of each 128-bit half of `v` (the rest of the
/// low half must be zero) as 2·`L` consecutive bytes, the whole of `out`:
/// one 16-byte store of the low half with the high half's start shifted in,
/// and one 8-byte store of the high half's last 8 bytes (`TAIL` = L - 8).
#[inline]
#[target_feature(enable = "avx2")]
fn store_halves<const L: i32, const TAIL: i32>(out: &mut [u8], v: __m256i) {
    const { assert!(8 <= L && L <= 12 && TAIL == L - 8) };
    debug_assert_eq!(out.len(), 2 * L as usize);
    let low = _mm256_castsi256_si128(v);
    let high = _mm256_extracti128_si256::<1>(v);
    store128(out, _mm_or_si128(low, _mm_bslli_si128::<L>(high)));
    store64(
        &mut out[2 * L as usize - 8..],
        _mm_bsrli_si128::<TAIL>(high),
    );
}

/// Four 20-bit values per 128-bit half, in the 32-bit lanes, to the 10
/// bytes of their 80 bits at the front of the half (zeros after them).
#[inline]
#[target_feature(enable = "avx2")]
fn pack_20_bits(v: __m256i) -> __m256i {
    // Each 64-bit lane: low + 2^20·high, 40 bits.
    let forty = _mm256_srli_epi64::<12>(_mm256_sllv_epi32(
        v,
        _mm256_setr_epi32(12, 0, 12, 0, 12, 0, 12, 0),
    ));
    let take = _mm256_setr_epi8(
        0, 1, 2, 3, 4, 8, 9, 10, 11, 12, -128, -128, -128, -128, -128, -128, //
        0, 1, 2, 3, 4, 8, 9, 10, 11, 12, -128, -128, -128, -128, -128, -128,
    );
    _mm256_shuffle_epi8(forty, take)
}

/// Compress_1 of 16 coefficients in (-q, q), as the sign of each lane
/// (negative for 1); see the module docs.
#[inline]
#[target_feature(enable = "avx2")]
fn compress_1_signs(v: __m256i) -> __m256i {
    let f = _mm256_sub_epi16(_mm256_set1_epi16(HALF_Q), canonical(v));
    let folded = _mm256_xor_si256(f, _mm256_srai_epi16::<15>(f));
    _mm256_sub_epi16(folded, _mm256_set1_epi16(HALF_Q / 2))
}

/// d = 1: 32 coefficients to 4 bytes per step.
#[target_feature(enable = "avx2")]
fn compress_encode_1(p: &Poly, out: &mut [u8]) {
    for (values, bytes) in p.coeffs.chunks_exact(32).zip(out.chunks_exact_mut(4)) {
        let low = compress_1_signs(load256(&values[..16]));
        let high = compress_1_signs(load256(&values[16..]));
        // vpacksswb works per 128-bit half: back to coefficient order.
        let signs = _mm256_permute4x64_epi64::<0xd8>(_mm256_packs_epi16(low, high));
        bytes.copy_from_slice(&_mm256_movemask_epi8(signs).to_le_bytes());
    }
}

/// d = 4: 64 coefficients to 32 bytes per step.
#[target_feature(enable = "avx2")]
fn compress_encode_4(p: &Poly, out: &mut [u8]) {
    // vpmaddubsw factors (1, 16): two 4-bit values to one byte.
    let nibbles = _mm256_set1_epi16(1 | (16 << 8));
    // The dwords of the final pack are groups of 8 values in the order
    // 0, 2, 4, 6, 1, 3, 5, 7.
    let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (values, bytes) in p.coeffs.chunks_exact(64).zip(out.chunks_exact_mut(32)) {
        let y0 = compress_low::<4, 6>(load256(&values[..16]));
        let y1 = compress_low::<4, 6>(load256(&values[16..32]));
        let y2 = compress_low::<4, 6>(load256(&values[32..48]));
        let y3 = compress_low::<4, 6>(load256(&values[48..]));
        let b0 = _mm256_maddubs_epi16(_mm256_packus_epi16(y0, y1), nibbles);
        let b1 = _mm256_maddubs_epi16(_mm256_packus_epi16(y2, y3), nibbles);
        store256(
            bytes,
            _mm256_permutevar8x32_epi32(_mm256_packus_epi16(b0, b1), order),
        );
    }
}

/// d = 5: 32 coefficients to 20 bytes per step.
#[target_feature(enable = "avx2")]
fn compress_encode_5(p: &Poly, out: &mut [u8]) {
    let pairs = _mm256_set1_epi16(1 | (32 << 8));
    let quads = _mm256_set1_epi32(1 | (1 << 26));
    for (values, bytes) in p.coeffs.chunks_exact(32).zip(out.chunks_exact_mut(20)) {
        let y0 = compress_low::<5, 5>(load256(&values[..16]));
        let y1 = compress_low::<5, 5>(load256(&values[16..]));
        // 32 bytes in coefficient order (vpackuswb works per 128-bit half).
        let y = _mm256_permute4x64_epi64::<0xd8>(_mm256_packus_epi16(y0, y1));
        let ten = _mm256_maddubs_epi16(y, pairs);
        store_halves::<10, 2>(bytes, pack_20_bits(_mm256_madd_epi16(ten, quads)));
    }
}

/// d = 10: 16 coefficients to 20 bytes per step.
#[target_feature(enable = "avx2")]
fn compress_encode_10(p: &Poly, out: &mut [u8]) {
    let pairs = _mm256_set1_epi32(1 | (1 << 26));
    for (values, bytes) in p.coeffs.chunks_exact(16).zip(out.chunks_exact_mut(20)) {
        let y = compress_high::<10>(load256(values));
        store_halves::<10, 2>(bytes, pack_20_bits(_mm256_madd_epi16(y, pairs)));
    }
}

/// d = 11: 16 coefficients to 22 bytes per step.
#[target_feature(enable = "avx2")]
fn compress_encode_11(p: &Poly, out: &mut [u8]) {
    let pairs = _mm256_set1_epi32(1 | (1 << 27));
    let join = _mm256_setr_epi32(10, 0, 10, 0, 10, 0, 10, 0);
    // The second 44-bit value of each half up by 4, to a byte boundary.
    let align = _mm256_setr_epi64x(0, 4, 0, 4);
    // Bytes 0..6 of the first 64-bit lane to bytes 0..6, bytes 0..6 of the
    // second to bytes 5..11; byte 5 takes the two nibbles.
    let first = _mm256_setr_epi8(
        0, 1, 2, 3, 4, 5, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128, //
        0, 1, 2, 3, 4, 5, -128, -128, -128, -128, -128, -128, -128, -128, -128, -128,
    );
    let second = _mm256_setr_epi8(
        -128, -128, -128, -128, -128, 8, 9, 10, 11, 12, 13, -128, -128, -128, -128, -128, //
        -128, -128, -128, -128, -128, 8, 9, 10, 11, 12, 13, -128, -128, -128, -128, -128,
    );
    for (values, bytes) in p.coeffs.chunks_exact(16).zip(out.chunks_exact_mut(22)) {
        let y = compress_high::<11>(load256(values));
        let pair = _mm256_madd_epi16(y, pairs);
        let four = _mm256_sllv_epi64(
            _mm256_srli_epi64::<10>(_mm256_sllv_epi32(pair, join)),
            align,
        );
        let packed = _mm256_or_si256(
            _mm256_shuffle_epi8(four, first),
            _mm256_shuffle_epi8(four, second),
        );
        store_halves::<11, 3>(bytes, packed);
    }
}

/// Byte-shuffle control giving 16-bit lane i of 128-bit half h the two
/// bytes (little-endian) that hold the d bits of value `first[h] + i` of a
/// group, where half h holds the group's bytes from `base[h]` on. A second
/// byte past the half, which the value must then not need, is 0x80 (zero).
const fn word_windows(d: usize, first: [usize; 2], base: [usize; 2]) -> [u8; 32] {
    let mut table = [0x80u8; 32];
    let mut half = 0;
    while half < 2 {
        let mut i = 0;
        while i < 8 {
            let bit = (first[half] + i) * d;
            assert!(bit / 8 >= base[half]);
            let byte = bit / 8 - base[half];
            assert!(byte < 16 && bit % 8 + d <= 16);
            table[16 * half + 2 * i] = byte as u8;
            if byte + 1 < 16 {
                table[16 * half + 2 * i + 1] = byte as u8 + 1;
            } else {
                assert!(bit % 8 + d <= 8);
            }
            i += 1;
        }
        half += 1;
    }
    table
}

/// As [`word_windows`], for the 32-bit lane j of each half: the four bytes
/// from the one holding the first bit of values `first[h] + 2j` and
/// `first[h] + 2j + 1`.
const fn pair_windows(d: usize, first: [usize; 2], base: [usize; 2]) -> [u8; 32] {
    let mut table = [0x80u8; 32];
    let mut half = 0;
    while half < 2 {
        let mut j = 0;
        while j < 4 {
            let bit = (first[half] + 2 * j) * d;
            assert!(bit / 8 >= base[half] && bit % 8 + 2 * d <= 32);
            let byte = bit / 8 - base[half];
            let mut k = 0;
            while k < 4 {
                if byte + k < 16 {
                    table[16 * half + 4 * j + k] = (byte + k) as u8;
                } else {
                    assert!(bit % 8 + 2 * d <= 8 * k);
                }
                k += 1;
            }
            j += 1;
        }
        half += 1;
    }
    table
}

/// Per 16-bit lane (value i mod 8 of a group of 8): the power of two that
/// moves a value at bit (i·d mod 8) of the lane to its top bits.
const fn top_factors(d: usize) -> [i16; 16] {
    let mut table = [0i16; 16];
    let mut k = 0;
    while k < 16 {
        table[k] = 1 << (16 - d - (k % 8) * d % 8);
        k += 1;
    }
    table
}

/// Decompress_d of 16-bit lanes holding a d-bit value in their top bits
/// (anything below it).
#[inline]
#[target_feature(enable = "avx2")]
fn decompress_top<const D: usize>(v: __m256i) -> __m256i {
    // y·2^(15-d), then (y·2^(15-d)·q + 2^14) >> 15.
    let mask = _mm256_set1_epi16((((1 << D) - 1) << (15 - D)) as i16);
    let scaled = _mm256_and_si256(_mm256_srli_epi16::<1>(v), mask);
    _mm256_mulhrs_epi16(scaled, _mm256_set1_epi16(Q))
}

/// Decompress_d of the 16 values that `windows` picks from `v`, with
/// `factors` = `top_factors(D)`.
#[inline]
#[target_feature(enable = "avx2")]
fn decompress_words<const D: usize>(v: __m256i, windows: __m256i, factors: __m256i) -> __m256i {
    decompress_top::<D>(_mm256_mullo_epi16(_mm256_shuffle_epi8(v, windows), factors))
}

/// d = 1: 2 bytes to 16 coefficients per step.
#[target_feature(enable = "avx2")]
fn decode_decompress_1(bytes: &[u8], p: &mut Poly) {
    const BITS: [i16; 16] = {
        let mut bits = [0i16; 16];
        let mut i = 0;
        while i < 16 {
            bits[i] = (1u16 << i) as i16;
            i += 1;
        }
        bits
    };
    let bits = load256(&BITS);
    let half = _mm256_set1_epi16(HALF_Q + 1);
    for (pair, coeffs) in bytes.chunks_exact(2).zip(p.coeffs.chunks_exact_mut(16)) {
        let word = _mm256_set1_epi16(u16::from_le_bytes([pair[0], pair[1]]) as i16);
        let set = _mm256_cmpeq_epi16(_mm256_and_si256(word, bits), bits);
        store256(coeffs, _mm256_and_si256(set, half));
    }
}

/// d = 4: 16 bytes to 32 coefficients per step, both halves loaded with
/// the same 16 bytes.
#[target_feature(enable = "avx2")]
fn decode_decompress_4(bytes: &[u8], p: &mut Poly) {
    const FIRST: [u8; 32] = word_windows(4, [0, 8], [0, 0]);
    const SECOND: [u8; 32] = word_windows(4, [16, 24], [0, 0]);
    const TOP: [i16; 16] = top_factors(4);
    let (first, second, top) = (load256(&FIRST), load256(&SECOND), load256(&TOP));
    for (input, coeffs) in bytes.chunks_exact(16).zip(p.coeffs.chunks_exact_mut(32)) {
        let half = load128(input);
        let v = _mm256_set_m128i(half, half);
        store256(&mut coeffs[..16], decompress_words::<4>(v, first, top));
        store256(&mut coeffs[16..], decompress_words::<4>(v, second, top));
    }
}

/// d = 5: 20 bytes to 32 coefficients per step; the halves hold bytes 0..16
/// and 4..20.
#[target_feature(enable = "avx2")]
fn decode_decompress_5(bytes: &[u8], p: &mut Poly) {
    const FIRST: [u8; 32] = word_windows(5, [0, 8], [0, 4]);
    const SECOND: [u8; 32] = word_windows(5, [16, 24], [0, 4]);
    const TOP: [i16; 16] = top_factors(5);
    let (first, second, top) = (load256(&FIRST), load256(&SECOND), load256(&TOP));
    for (input, coeffs) in bytes.chunks_exact(20).zip(p.coeffs.chunks_exact_mut(32)) {
        let v = _mm256_set_m128i(load128(&input[4..]), load128(input));
        store256(&mut coeffs[..16], decompress_words::<5>(v, first, top));
        store256(&mut coeffs[16..], decompress_words::<5>(v, second, top));
    }
}

/// d = 10: 20 bytes to 16 coefficients per step; the halves hold bytes
/// 0..16 and 4..20.
#[target_feature(enable = "avx2")]
fn decode_decompress_10(bytes: &[u8], p: &mut Poly) {
    const WINDOWS: [u8; 32] = word_windows(10, [0, 8], [0, 4]);
    const TOP: [i16; 16] = top_factors(10);
    let (windows, top) = (load256(&WINDOWS), load256(&TOP));
    for (input, coeffs) in bytes.chunks_exact(20).zip(p.coeffs.chunks_exact_mut(16)) {
        let v = _mm256_set_m128i(load128(&input[4..]), load128(input));
        store256(coeffs, decompress_words::<10>(v, windows, top));
    }
}

/// d = 11: 22 bytes to 16 coefficients per step; the halves hold bytes
/// 0..16 and 6..22. An 11-bit value can span three bytes, so each 32-bit
/// lane takes the bytes of a pair of values (22 bits at bit offset
/// 22·j mod 8 = 0, 6, 4, 2), shifted down to bit 0.
#[target_feature(enable = "avx2")]
fn decode_decompress_11(bytes: &[u8], p: &mut Poly) {
    const WINDOWS: [u8; 32] = pair_windows(11, [0, 8], [0, 6]);
    let windows = load256(&WINDOWS);
    let offsets = _mm256_setr_epi32(0, 6, 4, 2, 0, 6, 4, 2);
    for (input, coeffs) in bytes.chunks_exact(22).zip(p.coeffs.chunks_exact_mut(16)) {
        let v = _mm256_set_m128i(load128(&input[6..]), load128(input));
        let pairs = _mm256_srlv_epi32(_mm256_shuffle_epi8(v, windows), offsets);
        // The first value (bits 0..11) to the top of the low 16 bits, the
        // second (bits 11..22) to the top of the high 16 bits.
        let top = _mm256_blend_epi16::<0xaa>(
            _mm256_slli_epi32::<5>(pairs),
            _mm256_slli_epi32::<10>(pairs),
        );
        store256(coeffs, decompress_top::<11>(top));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::portable::Portable;
    use crate::backend::traits::PolyKernels;

    /// The number of values in (-q, q).
    const VALUES: usize = 2 * Q as usize - 1;

    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// Both directions against the portable code, for one polynomial: its
    /// compression, and the decompression of that encoding.
    #[target_feature(enable = "avx2")]
    fn compare<const D: usize>(p: &Poly, what: &str) {
        let mut expected = [0u8; 352];
        let mut ours = [0xa5u8; 352];
        Portable::compress_encode::<D>(p, &mut expected[..32 * D]);
        compress_encode::<D>(p, &mut ours[..32 * D]);
        assert_eq!(
            ours[..32 * D],
            expected[..32 * D],
            "compress, d = {D}, {what}"
        );
        assert!(
            ours[32 * D..].iter().all(|&b| b == 0xa5),
            "nothing written past the end"
        );
        compare_decode::<D>(&expected[..32 * D], what);
    }

    #[target_feature(enable = "avx2")]
    fn compare_decode<const D: usize>(bytes: &[u8], what: &str) {
        let mut expected = Poly::ZERO;
        let mut ours = Poly::ZERO;
        Portable::decode_decompress::<D>(bytes, &mut expected);
        decode_decompress::<D>(bytes, &mut ours);
        assert_eq!(ours.coeffs, expected.coeffs, "decompress, d = {D}, {what}");
    }

    #[target_feature(enable = "avx2")]
    fn check<const D: usize>() {
        // Every value of (-q, q) at every position: polynomial `shift` has
        // value (shift + i) mod (2q - 1), shifted into (-q, q), at i.
        let mut p = Poly::ZERO;
        for shift in 0..VALUES {
            for (i, c) in p.coeffs.iter_mut().enumerate() {
                *c = ((shift + i) % VALUES) as i16 - (Q - 1);
            }
            compare::<D>(&p, "all values");
        }
        // Random polynomials, and constant ones at the edges.
        let mut state = 0x2545_f491_4f6c_dd1du64 ^ D as u64;
        for round in 0..2000 {
            for c in p.coeffs.iter_mut() {
                *c = (next(&mut state) % VALUES as u64) as i16 - (Q - 1);
            }
            compare::<D>(&p, &format!("random round {round}"));
        }
        for value in [0, 1, -1, Q - 1, 1 - Q, HALF_Q, -HALF_Q, HALF_Q + 1] {
            p.coeffs.fill(value);
            compare::<D>(&p, &format!("all {value}"));
        }
        // Decompression of any bytes.
        let mut bytes = [0u8; 352];
        for round in 0..2000 {
            for b in bytes.iter_mut() {
                *b = next(&mut state) as u8;
            }
            compare_decode::<D>(&bytes[..32 * D], &format!("random bytes {round}"));
        }
        compare_decode::<D>(&[0xff; 352][..32 * D], "all 0xff");
        compare_decode::<D>(&[0; 352][..32 * D], "all 0");
    }

    #[test]
    fn compress_encode_and_decode_decompress_avx2_match_portable() {
        crate::backend::x86_64::run_if_avx2(check::<1>);
        crate::backend::x86_64::run_if_avx2(check::<4>);
        crate::backend::x86_64::run_if_avx2(check::<5>);
        crate::backend::x86_64::run_if_avx2(check::<10>);
        crate::backend::x86_64::run_if_avx2(check::<11>);
    }

    #[test]
    fn shuffle_tables_pick_the_bytes_of_each_value() {
        // d = 11, second half (loaded from byte 6): values 8 and 9 are bits
        // 88..110, from byte 11 (its byte 5); values 14 and 15 are bits
        // 154..176, bytes 19..22 (13..16), of which byte 22 is not needed.
        let pairs = pair_windows(11, [0, 8], [0, 6]);
        assert_eq!(pairs[16..20], [5, 6, 7, 8]);
        assert_eq!(pairs[28..32], [13, 14, 15, 0x80]);
        let words = word_windows(10, [0, 8], [0, 4]);
        assert_eq!(words[..4], [0, 1, 1, 2]);
        assert_eq!(words[30..32], [14, 15]);
        assert_eq!(top_factors(5)[..8], [2048, 64, 512, 16, 128, 1024, 32, 256]);
    }
}
