//! AVX-512 rejection sampling: the inner loop of FIPS 203 Algorithm 7
//! (SampleNTT), 32 candidates at a time, for CPUs with AVX-512 VBMI and
//! VBMI2 (Ice Lake, Sapphire Rapids, Zen 4 and later).
//!
//! Each step takes 48 XOF bytes (sixteen 3-byte chunks, 32 candidates of 12
//! bits). One byte permutation (`vpermb`, VBMI) places the two bytes of
//! each candidate in a 16-bit lane, a masked shift of the odd lanes plus a
//! mask with `0x0fff` leaves the candidates d1, d2, d1, d2, ...; comparing
//! with q gives a 32-bit acceptance mask, and `vpcompressw` (VBMI2) moves
//! the accepted lanes to the front of the vector in order. The vector is
//! stored as a whole (32 coefficients) at the current end of the
//! polynomial, which then advances by the number of accepted lanes; lanes
//! stored past that end are garbage that the next store overwrites. This is
//! the AVX2 code's step (`rej_avx2`) at twice the width, without its
//! shuffle and popcount tables.
//!
//! A squeezed SHAKE128 block is 168 bytes: three steps cover its first 144
//! bytes while 32 more coefficients fit, and the AVX2 code continues with
//! the rest (its 24-byte steps, then the scalar loop near the end), so the
//! result is exactly that of the scalar
//! [`crate::sample::rejection_sample`] on the whole block.
//!
//! Only the compressed store depends on the XOF output, which is public
//! (derived from ρ, part of the encapsulation key).
//!
//! No `unsafe` here: the intrinsics used are value-only, hence safe to call
//! in a `#[target_feature]` function enabling them, and bytes move in and
//! out of vectors through `mem_avx2`.

use core::arch::x86_64::{
    __m512i, _mm512_and_si512, _mm512_cmplt_epu16_mask, _mm512_mask_srli_epi16,
    _mm512_maskz_compress_epi16, _mm512_permutexvar_epi8, _mm512_set1_epi16,
};

use super::mem_avx2::{load512, store512};
use super::rej_avx2;
use crate::field::Q;
use crate::poly::N;

/// Lanes (8-byte words) of one vector step: 48 bytes, 32 candidates.
const STEP_WORDS: usize = 6;

/// Candidates a vector step can append, at most.
const STEP_LANES: usize = 32;

/// The vector steps per block: 3 × 48 of its 168 bytes (the last vector
/// load reads words 12..20 of the 25-word state).
const STEPS: usize = 3;

/// `vpermb` indices: 16-bit lane j takes bytes 3(j/2) + j%2 and
/// 3(j/2) + j%2 + 1 of the step's 48 bytes.
static SPREAD: [u8; 64] = spread();

const fn spread() -> [u8; 64] {
    let mut table = [0u8; 64];
    let mut lane = 0;
    while lane < STEP_LANES {
        let first = 3 * (lane / 2) + lane % 2;
        table[2 * lane] = first as u8;
        table[2 * lane + 1] = first as u8 + 1;
        lane += 1;
    }
    table
}

/// Whether the CPU has what this module needs beyond the AVX-512 backend's
/// features: VBMI (`vpermb`) and VBMI2 (`vpcompressw`). std caches the
/// detection, so this is a load and a test.
pub(crate) fn is_available() -> bool {
    std::is_x86_feature_detected!("avx512vbmi") && std::is_x86_feature_detected!("avx512vbmi2")
}

/// Appends to `coeffs[filled..]` the 12-bit candidates of one squeezed
/// SHAKE128 block that are below q, stopping when the polynomial is full;
/// returns the new count. The block is read straight from the sponge
/// `state` (its first 21 lanes, little-endian).
///
/// Same contract and exactly the same result as
/// [`rej_avx2::rejection_sample_block`]: entries at and after the returned
/// count may have been overwritten with garbage, but nothing past index
/// 255 is written.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
pub(crate) fn rejection_sample_block(
    coeffs: &mut [i16; N],
    mut filled: usize,
    state: &[u64; 25],
) -> usize {
    let spread = load512(&SPREAD);
    let mut lane = 0;
    while lane < STEPS * STEP_WORDS && filled + STEP_LANES <= N {
        let bytes = load512(&state[lane..lane + 8]);
        filled = sample_step(coeffs, filled, bytes, spread);
        lane += STEP_WORDS;
    }
    rej_avx2::rejection_sample_from(coeffs, filled, state, lane)
}

/// One vector step: appends the accepted ones of the 32 candidates in the
/// low 48 bytes of `bytes`; needs `filled + 32 <= N`. Returns the new count.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
fn sample_step(coeffs: &mut [i16; N], filled: usize, bytes: __m512i, spread: __m512i) -> usize {
    let v = _mm512_permutexvar_epi8(spread, bytes);
    // Even lanes (d1): low 12 bits. Odd lanes (d2): the top 12 bits.
    let v = _mm512_mask_srli_epi16::<4>(v, 0xaaaa_aaaa, v);
    let v = _mm512_and_si512(v, _mm512_set1_epi16(0x0fff));
    let accept = _mm512_cmplt_epu16_mask(v, _mm512_set1_epi16(Q));
    // filled + 32 <= N, so the 32-lane store is in bounds.
    store512(
        &mut coeffs[filled..],
        _mm512_maskz_compress_epi16(accept, v),
    );
    filled + accept.count_ones() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_table() {
        // Lanes 2c and 2c + 1 read chunk c's bytes (0, 1) and (1, 2).
        for c in 0..16 {
            let b = 3 * c as u8;
            assert_eq!(SPREAD[4 * c..4 * c + 4], [b, b + 1, b + 1, b + 2]);
        }
    }

    /// Runs `check` where the CPU has what this module needs.
    #[allow(unsafe_code)]
    fn run_if_vbmi2(check: unsafe fn()) {
        if !(crate::BackendKind::Avx512.is_available() && is_available()) {
            eprintln!("AVX-512 with VBMI and VBMI2 not available; skipping");
            return;
        }
        // SAFETY: the AVX-512 backend's features (AVX2, AVX-512F/VL/BW) and
        // VBMI/VBMI2 were detected: every feature the test body enables.
        unsafe { check() }
    }

    /// # Safety
    /// The CPU must have the features `rejection_sample_block` enables.
    #[allow(unsafe_code)]
    unsafe fn check() {
        // SAFETY: the caller's contract.
        unsafe { rej_avx2::tests::check_block_sampler(rejection_sample_block) }
    }

    #[test]
    fn rej_avx512_matches_scalar() {
        run_if_vbmi2(check);
    }
}
