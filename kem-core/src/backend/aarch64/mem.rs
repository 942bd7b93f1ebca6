//! Loads and stores of 128-bit Neon vectors from and to fixed-size pieces
//! of slices: the only `unsafe` of the Neon arithmetic. Each helper takes
//! its piece by bounds-checked slicing, so the pointer it passes is valid
//! for the whole vector.

use core::arch::aarch64::{
    int16x8_t, int16x8x2_t, int32x4_t, uint16x8_t, uint64x2_t, uint8x16_t, uint8x16x2_t, uint8x8_t,
    uint8x8x3_t, vld1_u8, vld1q_s16, vld1q_s32, vld1q_u16, vld1q_u64, vld1q_u8, vld1q_u8_x2,
    vld2q_s16, vld3_u8, vst1_u8, vst1q_s16, vst1q_u64, vst1q_u8, vst2q_s16, vst3_u8,
};

/// The 8 coefficients `c[at..at + 8]`.
#[inline(always)]
pub(super) fn load_i16(c: &[i16], at: usize) -> int16x8_t {
    let piece = &c[at..at + 8];
    // SAFETY: `piece` holds 8 readable i16 (Neon is part of the AArch64
    // target baseline).
    unsafe { vld1q_s16(piece.as_ptr()) }
}

/// The 8 values `c[at..at + 8]`.
#[inline(always)]
pub(super) fn load_u16(c: &[u16], at: usize) -> uint16x8_t {
    let piece = &c[at..at + 8];
    // SAFETY: `piece` holds 8 readable u16.
    unsafe { vld1q_u16(piece.as_ptr()) }
}

/// The 32 bytes `b[at..at + 32]` as two vectors.
#[inline(always)]
pub(super) fn load_u8x2(b: &[u8], at: usize) -> uint8x16x2_t {
    let piece = &b[at..at + 32];
    // SAFETY: `piece` holds 32 readable bytes.
    unsafe { vld1q_u8_x2(piece.as_ptr()) }
}

/// Writes `v` to `c[at..at + 8]`.
#[inline(always)]
pub(super) fn store_i16(c: &mut [i16], at: usize, v: int16x8_t) {
    let piece = &mut c[at..at + 8];
    // SAFETY: `piece` holds 8 writable i16.
    unsafe { vst1q_s16(piece.as_mut_ptr(), v) }
}

/// The 8 pairs `c[at..at + 16]` split into their first and second
/// elements (`.0` = c[at], c[at + 2], …; `.1` = c[at + 1], c[at + 3], …).
#[inline(always)]
pub(super) fn load_pairs(c: &[i16], at: usize) -> int16x8x2_t {
    let piece = &c[at..at + 16];
    // SAFETY: `piece` holds 16 readable i16.
    unsafe { vld2q_s16(piece.as_ptr()) }
}

/// Writes the 8 pairs (`v.0[i]`, `v.1[i]`) to `c[at..at + 16]`.
#[inline(always)]
pub(super) fn store_pairs(c: &mut [i16], at: usize, v: int16x8x2_t) {
    let piece = &mut c[at..at + 16];
    // SAFETY: `piece` holds 16 writable i16.
    unsafe { vst2q_s16(piece.as_mut_ptr(), v) }
}

/// The 16 bytes `b[at..at + 16]`.
#[inline(always)]
pub(super) fn load_u8(b: &[u8], at: usize) -> uint8x16_t {
    let piece = &b[at..at + 16];
    // SAFETY: `piece` holds 16 readable bytes.
    unsafe { vld1q_u8(piece.as_ptr()) }
}

/// The 8 bytes `b[at..at + 8]`.
#[inline(always)]
pub(super) fn load_u8x8(b: &[u8], at: usize) -> uint8x8_t {
    let piece = &b[at..at + 8];
    // SAFETY: `piece` holds 8 readable bytes.
    unsafe { vld1_u8(piece.as_ptr()) }
}

/// Writes `v` to `b[at..at + 8]`.
#[inline(always)]
pub(super) fn store_u8x8(b: &mut [u8], at: usize, v: uint8x8_t) {
    let piece = &mut b[at..at + 8];
    // SAFETY: `piece` holds 8 writable bytes.
    unsafe { vst1_u8(piece.as_mut_ptr(), v) }
}

/// The 8 byte triples `b[at..at + 24]` split by position (`.0` = b[at],
/// b[at + 3], …).
#[inline(always)]
pub(super) fn load_triples(b: &[u8], at: usize) -> uint8x8x3_t {
    let piece = &b[at..at + 24];
    // SAFETY: `piece` holds 24 readable bytes.
    unsafe { vld3_u8(piece.as_ptr()) }
}

/// Writes the 8 triples (`v.0[i]`, `v.1[i]`, `v.2[i]`) to `b[at..at + 24]`.
#[inline(always)]
pub(super) fn store_triples(b: &mut [u8], at: usize, v: uint8x8x3_t) {
    let piece = &mut b[at..at + 24];
    // SAFETY: `piece` holds 24 writable bytes.
    unsafe { vst3_u8(piece.as_mut_ptr(), v) }
}

/// The two lanes `state[at..at + 2]`.
#[inline(always)]
pub(super) fn load_u64(state: &[u64], at: usize) -> uint64x2_t {
    let piece = &state[at..at + 2];
    // SAFETY: `piece` holds 2 readable u64.
    unsafe { vld1q_u64(piece.as_ptr()) }
}

/// Writes `v` to `state[at..at + 2]`.
#[inline(always)]
pub(super) fn store_u64(state: &mut [u64], at: usize, v: uint64x2_t) {
    let piece = &mut state[at..at + 2];
    // SAFETY: `piece` holds 2 writable u64.
    unsafe { vst1q_u64(piece.as_mut_ptr(), v) }
}

/// Writes `v` to `b[at..at + 16]`.
#[inline(always)]
pub(super) fn store_u8(b: &mut [u8], at: usize, v: uint8x16_t) {
    let piece = &mut b[at..at + 16];
    // SAFETY: `piece` holds 16 writable bytes.
    unsafe { vst1q_u8(piece.as_mut_ptr(), v) }
}

/// The 4 values `c[at..at + 4]`.
#[inline(always)]
pub(super) fn load_i32(c: &[i32], at: usize) -> int32x4_t {
    let piece = &c[at..at + 4];
    // SAFETY: `piece` holds 4 readable i32.
    unsafe { vld1q_s32(piece.as_ptr()) }
}
