//! AVX2 rejection sampling: the inner loop of FIPS 203 Algorithm 7
//! (SampleNTT), 16 candidates at a time.
//!
//! Each step takes 24 XOF bytes (eight 3-byte chunks, 16 candidates of 12
//! bits). The bytes 0..16 go to the low 128-bit half of a vector and the
//! bytes 8..24 to the high half; one byte shuffle then places the two bytes
//! of each candidate in a 16-bit lane, and a shift of the odd lanes plus a
//! mask with `0x0fff` leaves the candidates d1, d2, d1, d2, ... Comparing
//! with q gives one 8-bit acceptance mask per half; a 256-entry shuffle
//! table, indexed by that mask, moves the accepted lanes of the half to its
//! front, and the half is stored as a whole (eight coefficients) at the
//! current end of the polynomial, which then advances by the number of
//! accepted lanes. Lanes stored past that end are garbage that the next store
//! overwrites.
//!
//! The input is one squeezed SHAKE128 block, read from the sponge state:
//! 168 bytes, seven steps. A step runs only while 16 more coefficients fit,
//! so no store reaches past index 255; the last coefficients go to the
//! scalar [`crate::sample::rejection_sample`], which continues at the chunk
//! where the vector loop stopped. The result is exactly that of the scalar
//! function on the whole block.
//!
//! The table lookups depend on the XOF output, which is public (it is
//! derived from ρ, part of the encapsulation key), so they need not be
//! constant time.
//!
//! No `unsafe` here: the intrinsics used are value-only, hence safe to call
//! in a `#[target_feature(enable = "avx2")]` function, and bytes move in and
//! out of vectors through `x86_64::mem`.

use core::arch::x86_64::{
    __m128i, _mm256_and_si256, _mm256_blend_epi16, _mm256_castsi256_si128, _mm256_cmpgt_epi16,
    _mm256_extracti128_si256, _mm256_movemask_epi8, _mm256_packs_epi16, _mm256_set1_epi16,
    _mm256_set_m128i, _mm256_setr_epi8, _mm256_shuffle_epi8, _mm256_srli_epi16,
};

use crate::backend::x86_64::mem::{load128, store128};
use crate::field::Q;
use crate::hash::{read_lanes, SHAKE128_RATE};
use crate::poly::N;

/// Byte-shuffle control for one compaction: for an 8-bit acceptance mask
/// `m` (bit i set when 16-bit lane i is accepted), the byte indices that move
/// the accepted lanes, in order, to the front of a 128-bit half. Unused
/// entries are `0x80`, which makes `vpshufb` write zero. 16-byte aligned so
/// that an entry is one aligned load.
#[repr(C, align(16))]
struct CompactTable([[u8; 16]; 256]);

/// Builds [`COMPACT`] at compile time.
const fn compact_table() -> CompactTable {
    let mut table = [[0x80u8; 16]; 256];
    let mut mask = 0;
    while mask < 256 {
        let mut out = 0;
        let mut lane = 0;
        while lane < 8 {
            if (mask >> lane) & 1 == 1 {
                table[mask][2 * out] = 2 * lane as u8;
                table[mask][2 * out + 1] = 2 * lane as u8 + 1;
                out += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    CompactTable(table)
}

/// Compaction shuffles, indexed by an 8-bit acceptance mask.
static COMPACT: CompactTable = compact_table();

/// Accepted-lane counts, indexed by an 8-bit acceptance mask (AVX2 does
/// not imply the `popcnt` instruction, so a table instead of `count_ones`).
static POPCOUNT: [u8; 256] = crate::sample::popcount_table();

/// Bytes of one vector step: eight 3-byte chunks, 16 candidates.
const STEP_BYTES: usize = 24;

/// Candidates a vector step can append, at most.
const STEP_LANES: usize = 16;

/// The compaction shuffle for `mask` as a vector.
#[inline]
#[target_feature(enable = "avx2")]
fn compact_shuffle(mask: usize) -> __m128i {
    load128(&COMPACT.0[mask])
}

/// Appends to `coeffs[filled..]` the 12-bit candidates of one squeezed
/// SHAKE128 block that are below q, stopping when the polynomial is full;
/// returns the new count. The block is read straight from the sponge
/// `state`: its first 21 lanes are the 168 bytes, little-endian, and 168 is
/// seven 24-byte steps, so every step starts on a lane.
///
/// Same contract and exactly the same result as the scalar
/// [`crate::sample::rejection_sample`] on those 168 bytes: they are read in
/// 3-byte chunks, each giving d1 = b0 | (b1 & 0x0f) << 8 and
/// d2 = b1 >> 4 | b2 << 4, and every candidate below q is appended in
/// order. Entries at and after the returned count may have been
/// overwritten with garbage, but nothing past index 255 is written.
#[target_feature(enable = "avx2")]
pub(crate) fn rejection_sample_block(
    coeffs: &mut [i16; N],
    mut filled: usize,
    state: &[u64; 25],
) -> usize {
    const LANES: usize = SHAKE128_RATE / 8;
    const STEP_WORDS: usize = STEP_BYTES / 8;
    let mut lane = 0;
    while lane < LANES {
        if filled + STEP_LANES > N {
            // The last coefficients: the scalar loop on the rest.
            let mut rest = [0u8; SHAKE128_RATE];
            read_lanes(state, &mut rest);
            return crate::sample::rejection_sample(coeffs, filled, &rest[8 * lane..]);
        }
        let words = &state[lane..lane + STEP_WORDS];
        filled = sample_step(coeffs, filled, load128(words), load128(&words[1..]));
        lane += STEP_WORDS;
    }
    filled
}

/// One vector step: appends the accepted ones of the 16 candidates of 24
/// bytes, given as `lo` (their bytes 0..16) and `hi` (bytes 8..24);
/// needs `filled + 16 <= N`. Returns the new count.
#[inline]
#[target_feature(enable = "avx2")]
fn sample_step(coeffs: &mut [i16; N], mut filled: usize, lo: __m128i, hi: __m128i) -> usize {
    // Per 128-bit half: the candidate in 16-bit lane j is made of bytes
    // 3(j/2) + j%2 and 3(j/2) + j%2 + 1 of that half's chunks; the low half
    // holds the chunks at bytes 0..12, the high half those at bytes 12..24,
    // which are bytes 4..16 of the high half's input (bytes 8..24).
    let spread = _mm256_setr_epi8(
        0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8, 9, 10, 10, 11, //
        4, 5, 5, 6, 7, 8, 8, 9, 10, 11, 11, 12, 13, 14, 14, 15,
    );
    let v = _mm256_shuffle_epi8(_mm256_set_m128i(hi, lo), spread);
    // Even lanes (d1): low 12 bits. Odd lanes (d2): the top 12 bits.
    let v = _mm256_blend_epi16::<0xaa>(v, _mm256_srli_epi16::<4>(v));
    let v = _mm256_and_si256(v, _mm256_set1_epi16(0x0fff));

    // Accepted lanes are all-ones; packing to bytes puts the low half's
    // eight flags in mask bits 0..8 and the high half's in bits 16..24.
    let accept = _mm256_cmpgt_epi16(_mm256_set1_epi16(Q), v);
    let flags = _mm256_movemask_epi8(_mm256_packs_epi16(accept, accept)) as u32;
    let (m0, m1) = ((flags & 0xff) as usize, ((flags >> 16) & 0xff) as usize);

    let shuffle = _mm256_set_m128i(compact_shuffle(m1), compact_shuffle(m0));
    let packed = _mm256_shuffle_epi8(v, shuffle);

    // filled + 16 <= N, so both 8-lane stores are in bounds.
    store128(&mut coeffs[filled..], _mm256_castsi256_si128(packed));
    filled += usize::from(POPCOUNT[m0]);
    store128(&mut coeffs[filled..], _mm256_extracti128_si256::<1>(packed));
    filled + usize::from(POPCOUNT[m1])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// xorshift64* bytes, deterministic per seed.
    fn pseudo_random(seed: u64, len: usize) -> Vec<u8> {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..len)
            .map(|_| {
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
            })
            .collect()
    }

    /// Inputs: all rejected, all accepted, boundary values, and random.
    fn inputs(len: usize) -> Vec<Vec<u8>> {
        let mut all = vec![vec![0xff; len], vec![0; len]];
        // Every candidate q - 1 (accepted) or q (rejected), and a mix.
        for (d1, d2) in [(3328u16, 3328u16), (3329, 3329), (3328, 3329), (3329, 0)] {
            let chunk = [
                d1 as u8,
                ((d1 >> 8) as u8) | ((d2 as u8 & 0x0f) << 4),
                (d2 >> 4) as u8,
            ];
            all.push(chunk.iter().copied().cycle().take(len).collect());
        }
        for seed in 0..200 {
            all.push(pseudo_random(seed, len));
        }
        // Biased toward rejection: high nibbles set often.
        for seed in 200..260 {
            all.push(pseudo_random(seed, len).iter().map(|b| b | 0xc0).collect());
        }
        all
    }

    /// Checks a block sampler against the scalar loop on every input of
    /// [`inputs`] from fill levels around each vector width's last step.
    ///
    /// # Safety
    /// The CPU must have the target features `sample` enables.
    #[allow(unsafe_code)]
    pub(crate) unsafe fn check_block_sampler(
        sample: unsafe fn(&mut [i16; N], usize, &[u64; 25]) -> usize,
    ) {
        let mut cases = 0;
        for bytes in inputs(SHAKE128_RATE) {
            // The block as the first 21 lanes of a state; the capacity lanes
            // hold garbage that must not affect the result.
            let mut state = [0x0123_4567_89ab_cdefu64; 25];
            for (lane, chunk) in state.iter_mut().zip(bytes.chunks_exact(8)) {
                *lane = u64::from_le_bytes(chunk.try_into().unwrap());
            }
            for filled in [0, 1, 100, 200, 223, 224, 225, 240, 241, 250, 255, 256] {
                let prefill = pseudo_random(filled as u64 + 1000, 2 * N);
                let mut start = [0i16; N];
                for (c, b) in start.iter_mut().zip(prefill.chunks_exact(2)) {
                    *c = i16::from_le_bytes([b[0], b[1]]);
                }
                let mut expected = start;
                let want = crate::sample::rejection_sample(&mut expected, filled, &bytes);
                let mut got = start;
                // SAFETY: the caller's contract.
                let ret = unsafe { sample(&mut got, filled, &state) };
                assert_eq!(ret, want, "filled {filled}");
                assert_eq!(got[..ret], expected[..want], "filled {filled}");
                cases += 1;
            }
        }
        assert!(cases > 1000);
    }

    /// # Safety
    /// The CPU must have AVX2.
    #[allow(unsafe_code)]
    unsafe fn check() {
        // SAFETY: AVX2 (the caller's contract) is all the sampler needs.
        unsafe { check_block_sampler(rejection_sample_block) }
    }

    #[test]
    fn rej_avx2_matches_scalar() {
        crate::backend::x86_64::run_if_avx2(check);
    }

    #[test]
    fn rej_avx2_tables() {
        for (mask, (entry, &count)) in COMPACT.0.iter().zip(POPCOUNT.iter()).enumerate() {
            let lanes: Vec<u8> = (0..8u8).filter(|i| mask >> i & 1 == 1).collect();
            assert_eq!(usize::from(count), lanes.len());
            for (k, lane) in lanes.iter().enumerate() {
                assert_eq!([entry[2 * k], entry[2 * k + 1]], [2 * lane, 2 * lane + 1]);
            }
            assert!(entry[2 * lanes.len()..].iter().all(|&b| b == 0x80));
        }
    }
}
