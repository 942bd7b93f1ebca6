//! Eight Keccak-f[1600] permutations at once on AVX-512F, for the AVX-512
//! backend's pools of sponges.
//!
//! # Layout and permutation
//!
//! As in `x86_64::keccak::x4`, one vector per lane: vector `x + 5·y` holds lane
//! A[x, y] of all eight instances, instance `i` in 64-bit element `i`. The
//! round is `x86_64::keccak::x4`'s (theta, rho, pi, chi and iota fused plane by
//! plane) on 512-bit vectors, with AVX-512F's `vprolq` for the rotations
//! and `vpternlogq` for chi. The 25 lanes, the column parities and theta's
//! D nearly fit in the 32 zmm registers: LLVM spills a few per round (see
//! `x86_64::keccak::x4` for why D is one vector a column). It costs 1.4 to
//! 1.9 times the four-way permutation on AVX-512VL, depending on the core,
//! so it pays when more than four sponges can move at once.
//!
//! # Moving states in and out
//!
//! The pools keep each sponge's state lane-major (`[u64; 25]`, as the
//! one-way sponges do) and choose, step by step, which sponges to permute
//! ([`permute_selected`]). Lanes 8g..8g + 8 of eight states form an 8×8
//! matrix of words whose transpose is the eight interleaved lanes: three
//! transposes of 24 shuffles each per direction, about a sixth of the
//! permutation's cost. Lanes of the permutation that no sponge uses hold
//! zeros, and their results are dropped.
//!
//! # Safety
//!
//! No `unsafe` here: the intrinsics are value-only, hence safe inside
//! `#[target_feature(enable = "avx512f")]` functions, and memory moves
//! through `x86_64::mem`. Callers outside such a function need `unsafe` and
//! the AVX-512F check (see `avx512`).

use core::arch::x86_64::{
    __m512i, _mm512_permutex2var_epi64, _mm512_rol_epi64, _mm512_set1_epi64, _mm512_set_epi64,
    _mm512_setzero_si512, _mm512_shuffle_i64x2, _mm512_ternarylogic_epi64, _mm512_unpackhi_epi64,
    _mm512_unpacklo_epi64, _mm512_xor_si512,
};

use zeroize::Zeroize;

use crate::backend::x86_64::keccak::x1::ROUND_CONSTANTS;
use crate::backend::x86_64::keccak::x4::{keccak_f1600_rounds, round, theta_parity};
use crate::backend::x86_64::mem::{load512, store512};

/// The widest permutation: eight states.
pub(crate) const WIDTH: usize = 8;

/// `a ^ b` on 512-bit vectors.
macro_rules! xor512 {
    ($a:expr, $b:expr) => {
        _mm512_xor_si512($a, $b)
    };
}

/// Chi on one lane, `a ^ (!b & c)`: one ternary-logic instruction (truth
/// table 0xD2).
macro_rules! chi512 {
    ($a:expr, $b:expr, $c:expr) => {
        _mm512_ternarylogic_epi64::<0xD2>($a, $b, $c)
    };
}

/// `a ^ b ^ c`: one ternary-logic instruction (truth table 0x96).
macro_rules! xor3_512 {
    ($a:expr, $b:expr, $c:expr) => {
        _mm512_ternarylogic_epi64::<0x96>($a, $b, $c)
    };
}

/// A 64-bit rotation: one `vprolq`.
macro_rules! rol512 {
    ($x:expr, $n:literal) => {
        _mm512_rol_epi64::<$n>($x)
    };
}

/// Keccak-f[1600] (24 rounds) on each of the eight interleaved states in
/// `$a` (a local `[__m512i; 25]`), in place. A macro rather than a
/// function so that [`permute_selected`] runs it on the very array it
/// interleaves into: one state array and the round's second one on the
/// stack, not three (see the stack budget test).
macro_rules! keccak_f1600_x8 {
    ($a:ident) => {{
        let start = crate::profile_hooks::permutation_start();
        keccak_f1600_rounds!(
            xor512, chi512, rol512, from_state xor3_512,
            _mm512_setzero_si512(), _mm512_set1_epi64; $a
        );
        crate::profile_hooks::permutation_end(start, 8);
    }};
}

/// The transpose of the 8×8 matrix of 64-bit words whose rows are `r`.
#[inline]
#[target_feature(enable = "avx512f")]
fn transpose8(r: [__m512i; 8]) -> [__m512i; 8] {
    // Pairs of rows: t[2i] holds the even columns of rows 2i and 2i + 1,
    // interleaved, t[2i + 1] the odd columns.
    let t: [__m512i; 8] = core::array::from_fn(|j| {
        let (a, b) = (r[j & !1], r[j | 1]);
        if j % 2 == 0 {
            _mm512_unpacklo_epi64(a, b)
        } else {
            _mm512_unpackhi_epi64(a, b)
        }
    });
    // Quadruples of rows: 128-bit pairs from two such vectors. Columns
    // (c, c + 4) of rows 4h..4h + 4 for c = 0, 2 (from the even vectors) and
    // c = 1, 3 (from the odd ones).
    let even = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
    let odd = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    let u: [__m512i; 8] = core::array::from_fn(|j| {
        // j = 4h + 2p + s: rows 4h.., parity p of the column, s picks the
        // column pair (0: columns p, p + 4; 1: columns p + 2, p + 6).
        let (h, p, s) = (j / 4, (j / 2) % 2, j % 2);
        let (a, b) = (t[4 * h + p], t[4 * h + 2 + p]);
        _mm512_permutex2var_epi64(a, if s == 0 { even } else { odd }, b)
    });
    // Halves: column c of all eight rows.
    core::array::from_fn(|c| {
        // Column c = p + 2s + 4half sits in u[2p + s] (rows 0..4) and
        // u[4 + 2p + s] (rows 4..8), in the half `half`.
        let (p, s, half) = (c % 2, (c / 2) % 2, c / 4);
        let (a, b) = (u[2 * p + s], u[4 + 2 * p + s]);
        if half == 0 {
            _mm512_shuffle_i64x2::<0x44>(a, b)
        } else {
            _mm512_shuffle_i64x2::<0xEE>(a, b)
        }
    })
}

/// Keccak-f[1600] on `states[i]` for each `i` in `chosen` (one to eight
/// distinct indices) as one eight-way permutation. The interleaved copy is
/// zeroized (the states may be secret); what the permutation spills, if
/// anything, is not (best effort, as for every permutation here).
#[inline(never)]
#[target_feature(enable = "avx512f")]
pub(crate) fn permute_selected(states: &mut [[u64; 25]], chosen: &[usize]) {
    assert!((1..=WIDTH).contains(&chosen.len()));
    debug_assert!(chosen
        .iter()
        .enumerate()
        .all(|(i, a)| !chosen[..i].contains(a)));
    let mut vectors = [_mm512_setzero_si512(); 25];
    for group in 0..3 {
        let rows: [__m512i; 8] = core::array::from_fn(|i| match chosen.get(i) {
            Some(&index) => load512(&states[index][8 * group..]),
            None => _mm512_setzero_si512(),
        });
        vectors[8 * group..8 * group + 8].copy_from_slice(&transpose8(rows));
    }
    let last = |i: usize| chosen.get(i).map_or(0, |&index| states[index][24] as i64);
    vectors[24] = _mm512_set_epi64(
        last(7),
        last(6),
        last(5),
        last(4),
        last(3),
        last(2),
        last(1),
        last(0),
    );
    keccak_f1600_x8!(vectors);
    let mut last_lane = [0u64; 8];
    store512(&mut last_lane, vectors[24]);
    for group in 0..3 {
        let lanes: [__m512i; 8] = vectors[8 * group..8 * group + 8]
            .try_into()
            .expect("eight lanes");
        for (&index, row) in chosen.iter().zip(transpose8(lanes)) {
            store512(&mut states[index][8 * group..], row);
        }
    }
    for (&index, &word) in chosen.iter().zip(&last_lane) {
        states[index][24] = word;
    }
    vectors.zeroize();
    last_lane.zeroize();
}

/// PRF_2(seed, nonce + i) = SHAKE256(seed ‖ nonce + i, 128 bytes) for
/// `i < count` (1 to 8) on one eight-way permutation, handing instance i's
/// 16 words to `sink(i, words)`. The eight states differ only in the nonce,
/// so they are built interleaved (broadcast seed words, one vector of
/// nonces), with no state array or transpose on the way in. The words are
/// secret: the copies here are zeroized. Never inlined: its frame (the
/// state and the round's second array) stays off its callers' (see the
/// stack budget test); likewise [`permute_selected`].
#[inline(never)]
#[target_feature(enable = "avx512f")]
pub(crate) fn prf2_x8(
    seed: &[u8; 32],
    nonce: u8,
    count: usize,
    mut sink: impl FnMut(usize, &[u64; 16]),
) {
    assert!((1..=WIDTH).contains(&count));
    let mut vectors = [_mm512_setzero_si512(); 25];
    for (lane, bytes) in vectors.iter_mut().zip(seed.chunks_exact(8)) {
        *lane = _mm512_set1_epi64(i64::from_le_bytes(bytes.try_into().expect("8 bytes")));
    }
    let word = |i: u8| i64::from(nonce.wrapping_add(i)) | i64::from(crate::hash::SHAKE_DOMAIN) << 8;
    vectors[4] = _mm512_set_epi64(
        word(7),
        word(6),
        word(5),
        word(4),
        word(3),
        word(2),
        word(1),
        word(0),
    );
    vectors[crate::hash::SHAKE256_RATE / 8 - 1] = _mm512_set1_epi64(i64::MIN);
    keccak_f1600_x8!(vectors);
    // The squeezed words, instance by instance: PRF output, so wiped too
    // (by reference, not through an iterator that would copy them).
    let mut low = transpose8(vectors[..8].try_into().expect("eight lanes"));
    let mut high = transpose8(vectors[8..16].try_into().expect("eight lanes"));
    let mut words = [0u64; 16];
    for (i, (lo, hi)) in low.iter().zip(&high).enumerate().take(count) {
        store512(&mut words[..8], *lo);
        store512(&mut words[8..], *hi);
        sink(i, &words);
    }
    vectors.zeroize();
    low.zeroize();
    high.zeroize();
    words.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SplitMix64: a deterministic stream of test words.
    fn words(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    #[target_feature(enable = "avx512f")]
    fn check_transpose() {
        let rows: [[u64; 8]; 8] =
            core::array::from_fn(|i| core::array::from_fn(|j| (10 * i + j) as u64));
        let vectors = rows.map(|row| load512(&row));
        for (c, column) in transpose8(vectors).into_iter().enumerate() {
            let mut out = [0u64; 8];
            store512(&mut out, column);
            assert_eq!(
                out,
                core::array::from_fn(|i| (10 * i + c) as u64),
                "column {c}"
            );
        }
    }

    /// Every subset size, with the chosen states scattered among others
    /// that must stay untouched, against the `keccak` crate.
    #[target_feature(enable = "avx512f")]
    fn check_permute_selected() {
        let mut next = words(8);
        for len in 1..=WIDTH {
            let mut states: Vec<[u64; 25]> =
                (0..13).map(|_| core::array::from_fn(|_| next())).collect();
            let chosen: Vec<usize> = (0..len).map(|i| (5 * i + 3) % 13).collect();
            let mut expected = states.clone();
            for round in 0..50 {
                for &i in &chosen {
                    keccak::f1600(&mut expected[i]);
                }
                permute_selected(&mut states, &chosen);
                assert_eq!(states, expected, "{len} states, round {round}");
            }
        }
    }

    fn run_if_avx512f(check: unsafe fn()) {
        if !is_x86_feature_detected!("avx512f") {
            eprintln!("AVX-512F not available; skipping");
            return;
        }
        // SAFETY: AVX-512F was detected, the only requirement of the bodies.
        #[allow(unsafe_code)]
        unsafe {
            check()
        }
    }

    #[target_feature(enable = "avx512f")]
    fn check_prf2() {
        let seed: [u8; 32] = core::array::from_fn(|i| (3 * i + 5) as u8);
        for (nonce, count) in [(0u8, 8), (250, 8), (3, 5)] {
            let mut seen = 0;
            prf2_x8(&seed, nonce, count, |i, words| {
                let mut expected = [0u8; 128];
                crate::hash::prf::<crate::backend::portable::Portable>(
                    &seed,
                    nonce.wrapping_add(i as u8),
                    &mut expected,
                );
                let ours: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                assert_eq!(ours, expected, "nonce {nonce} + {i}");
                seen += 1;
            });
            assert_eq!(seen, count);
        }
    }

    #[test]
    fn prf2_matches_the_one_way_prf() {
        run_if_avx512f(check_prf2);
    }

    #[test]
    fn transpose_moves_every_word() {
        run_if_avx512f(check_transpose);
    }

    #[test]
    fn selected_states_match_the_keccak_crate() {
        run_if_avx512f(check_permute_selected);
    }
}
