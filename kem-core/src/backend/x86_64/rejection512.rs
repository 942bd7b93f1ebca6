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
//! the AVX2 code's step (`x86_64::rejection256`) at twice the width, without its
//! shuffle and popcount tables. Where fewer than 32 coefficients are
//! missing, the step's vector is shifted into the polynomial's last 32
//! lanes (one masked permutation, no call to `memcpy`), so the polynomial
//! ends where the scalar loop would end it.
//!
//! A squeezed SHAKE128 block is 168 bytes: three steps cover its first 144
//! bytes, and a fourth, on 16 candidates, its last 24, so the result is
//! exactly that of the scalar [`crate::sample::rejection_sample`] on the
//! whole block.
//!
//! The compressed store, the count and the tail's merge depend on the XOF
//! output, which is public (derived from ρ, part of the encapsulation key).
//!
//! No `unsafe` here: the intrinsics used are value-only, hence safe to call
//! in a `#[target_feature]` function enabling them, and bytes move in and
//! out of vectors through `x86_64::mem`.

use core::arch::x86_64::{
    __m512i, _mm512_and_si512, _mm512_cmplt_epu16_mask, _mm512_mask_permutexvar_epi16,
    _mm512_mask_srli_epi16, _mm512_maskz_compress_epi16, _mm512_permutexvar_epi8,
    _mm512_set1_epi16, _mm512_sub_epi16,
};

use crate::backend::x86_64::mem::{load512, store512};
use crate::field::Q;
use crate::poly::N;

/// Lanes (8-byte words) of one vector step: 48 bytes, 32 candidates.
const STEP_WORDS: usize = 6;

/// Candidates a vector step can append, at most.
const STEP_LANES: usize = 32;

/// The whole steps per block: 3 × 48 of its 168 bytes (the last of their
/// loads reads words 12..20 of the 25-word state).
const STEPS: usize = 3;

/// The last step's load: words 17..25 of the state, whose bytes 8..32 are
/// the block's last 24 bytes (words 18..21), 16 candidates.
const LAST_WORD: usize = 17;

/// The candidates of the last step: its first 16 lanes.
const LAST_CANDIDATES: u32 = 0xffff;

// The last step starts where the whole steps end (byte 144) and its load
// ends with the 25-word state.
const _: () = assert!(8 * LAST_WORD + 8 == 8 * STEPS * STEP_WORDS && LAST_WORD + 8 == 25);

/// `vpermb` indices: 16-bit lane j takes bytes 3(j/2) + j%2 and
/// 3(j/2) + j%2 + 1 of the step's 48 bytes.
static SPREAD: [u8; 64] = spread(0, STEP_LANES);

/// The same for the last step: its 16 candidates start at byte 8 of the
/// load, and the other lanes read byte 0 (they are not candidates).
static SPREAD_LAST: [u8; 64] = spread(8, 16);

/// The index of each 16-bit lane, 0 to 31.
static LANE_INDEX: [i16; STEP_LANES] = {
    let mut index = [0; STEP_LANES];
    let mut lane = 0;
    while lane < STEP_LANES {
        index[lane] = lane as i16;
        lane += 1;
    }
    index
};

const fn spread(offset: usize, lanes: usize) -> [u8; 64] {
    let mut table = [0u8; 64];
    let mut lane = 0;
    while lane < lanes {
        let first = offset + 3 * (lane / 2) + lane % 2;
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
/// `state`: its first 21 lanes, little-endian (the last step's load also
/// reads words 21..25, whose bytes no candidate lane takes).
///
/// Same contract and exactly the same result as
/// [`crate::backend::x86_64::rejection256::rejection_sample_block`]: entries at and after the
/// returned count may have been overwritten with garbage, but nothing past
/// index 255 is written.
#[target_feature(enable = "avx2,avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
pub(crate) fn rejection_sample_block(
    coeffs: &mut [i16; N],
    mut filled: usize,
    state: &[u64; 25],
) -> usize {
    let spread = load512(&SPREAD);
    for step in 0..STEPS {
        if filled == N {
            return N;
        }
        let bytes = load512(&state[step * STEP_WORDS..]);
        filled = sample_step(coeffs, filled, bytes, spread, u32::MAX);
    }
    if filled < N {
        let bytes = load512(&state[LAST_WORD..]);
        let spread = load512(&SPREAD_LAST);
        filled = sample_step(coeffs, filled, bytes, spread, LAST_CANDIDATES);
    }
    filled
}

/// One vector step: appends the accepted ones of the candidates
/// (`candidates` masks their lanes) that `spread` picks from `bytes`, as
/// far as they fit below N. Returns the new count.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2")]
fn sample_step(
    coeffs: &mut [i16; N],
    filled: usize,
    bytes: __m512i,
    spread: __m512i,
    candidates: u32,
) -> usize {
    let v = _mm512_permutexvar_epi8(spread, bytes);
    // Even lanes (d1): low 12 bits. Odd lanes (d2): the top 12 bits.
    let v = _mm512_mask_srli_epi16::<4>(v, 0xaaaa_aaaa, v);
    let v = _mm512_and_si512(v, _mm512_set1_epi16(0x0fff));
    let accept = _mm512_cmplt_epu16_mask(v, _mm512_set1_epi16(Q)) & candidates;
    let packed = _mm512_maskz_compress_epi16(accept, v);
    let accepted = accept.count_ones() as usize;
    match coeffs.get_mut(filled..filled + STEP_LANES) {
        Some(room) => store512(room, packed),
        None => {
            // Fewer than 32 coefficients missing (filled is 225 to 255):
            // the polynomial's last 32 lanes keep those below `filled` and
            // take the packed lanes from there on, so the first accepted
            // ones complete the polynomial, as in the scalar loop.
            debug_assert!(filled < N, "callers stop at a full polynomial");
            let shift = filled - (N - STEP_LANES);
            let last = &mut coeffs[N - STEP_LANES..];
            let index = _mm512_sub_epi16(load512(&LANE_INDEX), _mm512_set1_epi16(shift as i16));
            let merged =
                _mm512_mask_permutexvar_epi16(load512(last), u32::MAX << shift, index, packed);
            store512(last, merged);
        }
    }
    (filled + accepted).min(N)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_tables() {
        // Lanes 2c and 2c + 1 read chunk c's bytes (0, 1) and (1, 2).
        for c in 0..16 {
            let b = 3 * c as u8;
            assert_eq!(SPREAD[4 * c..4 * c + 4], [b, b + 1, b + 1, b + 2]);
        }
        // The last step's eight chunks start at byte 8 of its load, which
        // is byte 144 of the block.
        for c in 0..8 {
            let b = 8 + 3 * c as u8;
            assert_eq!(SPREAD_LAST[4 * c..4 * c + 4], [b, b + 1, b + 1, b + 2]);
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
        unsafe {
            crate::backend::x86_64::rejection256::tests::check_block_sampler(rejection_sample_block)
        }
    }

    #[test]
    fn rej_avx512_matches_scalar() {
        run_if_vbmi2(check);
    }
}
