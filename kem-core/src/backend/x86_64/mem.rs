//! The AVX2 and AVX-512 code's unaligned loads and stores: the one place
//! where its vector code reads or writes memory through a pointer.
//!
//! Each function takes a slice of plain integers (`u8`, `i16`, `u32` or
//! `u64`), bounds-checks the first 8, 16, 32 or 64 bytes of it, and moves
//! those bytes with `vmovdqu`/`vmovdqu64`/`vmovq`, which need no alignment.
//! Callers of the 8- to 32-byte forms are `#[target_feature(enable = "avx2")]`
//! functions, so these are only ever reached on CPUs with AVX2 (see `avx2`);
//! the 64-byte forms need AVX-512F and are called only from functions that
//! enable it (`x86_64::ntt512`, `x86_64::keccak::x8`).

use core::arch::x86_64::{
    __m128i, __m256i, __m512i, _mm256_loadu_si256, _mm256_storeu_si256, _mm512_loadu_si512,
    _mm512_storeu_si512, _mm_loadu_si128, _mm_storel_epi64, _mm_storeu_si128,
};

/// Aligns the enclosing function's stack frame to 64 bytes, so that the
/// 32- and 64-byte slots the compiler spills vector registers to are
/// aligned. The ABI only guarantees 16, and the compiler realigns a frame
/// only for a local that needs more; a function whose vectors all live in
/// registers but still spills some (the Keccak rounds: 25 state lanes, the
/// next round's and the parities do not fit in 32 registers) otherwise
/// gets slots at 16 mod 32, which cross a cache line every other time and
/// a 4 KiB page wherever the frame spans one. Where that is depends on the
/// stack's address, random per process, so the speed of the Keccak rounds
/// changed from one run to the next (docs/performance.md, "Lab notes").
///
/// The anchor is a 64-byte-aligned local whose address escapes (so that it
/// exists); it is never written.
macro_rules! align_spill_slots {
    () => {
        #[repr(align(64))]
        #[allow(dead_code)] // never read: only its alignment counts
        struct FrameAnchor([u8; 64]);
        let mut anchor = core::mem::MaybeUninit::<FrameAnchor>::uninit();
        core::hint::black_box(&mut anchor);
    };
}
pub(super) use align_spill_slots;

/// Element types the loads and stores move bytes in and out of.
///
/// # Safety
///
/// Every bit pattern must be a valid value (vector bytes are stored into
/// them), and the size must divide 8 (so that a prefix of 8, 16 or 32 bytes
/// is a whole number of elements; also checked at compile time).
#[allow(unsafe_code)]
pub(super) unsafe trait Plain: Copy {}

// SAFETY: plain integers, of sizes 1, 2 and 8.
#[allow(unsafe_code)]
unsafe impl Plain for u8 {}
// SAFETY: as above.
#[allow(unsafe_code)]
unsafe impl Plain for i16 {}
// SAFETY: as above.
#[allow(unsafe_code)]
unsafe impl Plain for u64 {}
// SAFETY: a plain integer of size 4 (which divides 8).
#[allow(unsafe_code)]
unsafe impl Plain for u32 {}

/// The first `bytes` bytes of `s`, as a pointer range checked to be in
/// bounds (panics if `s` is shorter).
#[inline(always)]
fn prefix<T: Plain>(s: &[T], bytes: usize) -> *const T {
    const { assert!(8 % size_of::<T>() == 0) };
    s[..bytes / size_of::<T>()].as_ptr()
}

/// [`prefix`] for writing.
#[inline(always)]
fn prefix_mut<T: Plain>(s: &mut [T], bytes: usize) -> *mut T {
    const { assert!(8 % size_of::<T>() == 0) };
    s[..bytes / size_of::<T>()].as_mut_ptr()
}

/// The first 32 bytes of `s`.
#[allow(unsafe_code)]
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn load256<T: Plain>(s: &[T]) -> __m256i {
    // SAFETY: `prefix` checked that 32 bytes are readable; vmovdqu needs no
    // alignment, and AVX2 is enabled here.
    unsafe { _mm256_loadu_si256(prefix(s, 32).cast()) }
}

/// Stores `v` into the first 32 bytes of `s`.
#[allow(unsafe_code)]
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn store256<T: Plain>(s: &mut [T], v: __m256i) {
    // SAFETY: `prefix_mut` checked that 32 bytes are writable (and any bytes
    // are a valid `T`); vmovdqu needs no alignment, and AVX2 is enabled here.
    unsafe { _mm256_storeu_si256(prefix_mut(s, 32).cast(), v) }
}

/// The first 64 bytes of `s`.
#[allow(unsafe_code)]
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn load512<T: Plain>(s: &[T]) -> __m512i {
    // SAFETY: `prefix` checked that 64 bytes are readable; the unaligned
    // 512-bit load (vmovdqu64) needs no alignment, and AVX-512F is enabled
    // here.
    unsafe { _mm512_loadu_si512(prefix(s, 64).cast()) }
}

/// Stores `v` into the first 64 bytes of `s`.
#[allow(unsafe_code)]
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) fn store512<T: Plain>(s: &mut [T], v: __m512i) {
    // SAFETY: `prefix_mut` checked that 64 bytes are writable (and any bytes
    // are a valid `T`); the unaligned 512-bit store (vmovdqu64) needs no
    // alignment, and AVX-512F is enabled here.
    unsafe { _mm512_storeu_si512(prefix_mut(s, 64).cast(), v) }
}

/// The first 16 bytes of `s`.
#[allow(unsafe_code)]
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn load128<T: Plain>(s: &[T]) -> __m128i {
    // SAFETY: as in `load256`, for 16 bytes (AVX2 implies SSE2).
    unsafe { _mm_loadu_si128(prefix(s, 16).cast()) }
}

/// Stores `v` into the first 16 bytes of `s`.
#[allow(unsafe_code)]
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn store128<T: Plain>(s: &mut [T], v: __m128i) {
    // SAFETY: as in `store256`, for 16 bytes (AVX2 implies SSE2).
    unsafe { _mm_storeu_si128(prefix_mut(s, 16).cast(), v) }
}

/// Stores the low 8 bytes of `v` into the first 8 bytes of `s`.
#[allow(unsafe_code)]
#[inline]
#[target_feature(enable = "avx2")]
pub(super) fn store64<T: Plain>(s: &mut [T], v: __m128i) {
    // SAFETY: as in `store256`, for 8 bytes; vmovq needs no alignment.
    unsafe { _mm_storel_epi64(prefix_mut(s, 8).cast(), v) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[target_feature(enable = "avx2")]
    fn check() {
        let words: [u64; 4] = [1, 2, 3, u64::MAX];
        let mut out = [0i16; 17];
        store256(&mut out[1..], load256(&words));
        assert_eq!(out[0], 0, "nothing written before the slice");
        assert_eq!(&out[1..5], &[1, 0, 0, 0]);
        assert_eq!(&out[13..17], &[-1; 4]);
        let bytes: Vec<u8> = (0..16).collect();
        let mut copy = [0u8; 24];
        store128(&mut copy[4..], load128(&bytes));
        assert_eq!(&copy[4..20], &bytes[..]);
        let mut low = [0xffu8; 9];
        store64(&mut low, load128(&bytes));
        assert_eq!(&low[..8], &bytes[..8]);
        assert_eq!(low[8], 0xff, "only 8 bytes written");
    }

    #[test]
    fn loads_and_stores_move_exactly_their_bytes() {
        crate::backend::x86_64::run_if_avx2(check);
    }

    #[target_feature(enable = "avx512f")]
    fn check512() {
        let words: Vec<u64> = (1..=8).chain([u64::MAX]).collect();
        let mut out = [0i16; 34];
        store512(&mut out[1..], load512(&words[1..]));
        assert_eq!(out[0], 0, "nothing written before the slice");
        assert_eq!(&out[1..5], &[2, 0, 0, 0]);
        assert_eq!(&out[29..33], &[-1; 4]);
        assert_eq!(out[33], 0, "only 64 bytes written");
    }

    #[test]
    #[allow(unsafe_code)]
    fn wide_loads_and_stores_move_exactly_their_bytes() {
        if !is_x86_feature_detected!("avx512f") {
            eprintln!("AVX-512F not available; skipping");
            return;
        }
        // SAFETY: AVX-512F was detected, the only requirement of `check512`.
        unsafe { check512() }
    }

    #[test]
    #[should_panic]
    fn a_short_slice_panics_before_a_wide_load() {
        // 62 bytes are not 64.
        prefix(&[0i16; 31], 64);
    }

    #[test]
    #[should_panic]
    fn a_short_slice_panics_instead_of_reading_past_it() {
        // The bounds check every load and store goes through: 24 bytes are
        // not 32.
        prefix(&[0u64; 3], 32);
    }
}
