//! Four Keccak-f[1600] permutations at once on AVX2, and the one-shot
//! SHAKE sponge of `crate::hash` on top of them, four instances wide.
//!
//! # Layout
//!
//! The state is `[__m256i; 25]`, one vector per lane: vector `x + 5·y`
//! holds lane A[x, y] of all four instances, instance `i` in the `i`-th
//! 64-bit element (instance 0 in the lowest 64 bits). Every step of the
//! permutation is then the scalar step applied to four lanes at once with
//! the 64-bit vector instructions, so the four instances never mix.
//!
//! # Permutation
//!
//! One round is theta, rho, pi, chi and iota fused plane by plane as in the
//! XKCP "times4" code: the five vectors that land in an output plane after
//! rho and pi are rotated, combined by chi and written out, and the column
//! parities C for the next round's theta are accumulated as the output
//! planes are produced. Two rounds per loop iteration alternate between two
//! state arrays, so nothing is copied between rounds; all indices are
//! constants, so LLVM keeps the lanes in registers (with some unavoidable
//! spilling: 25 lanes do not fit in 16 ymm registers).
//!
//! Rotations are two shifts and an OR, except by 8 and 56 (one byte
//! shuffle) and by 1, whose left shift is an addition, which runs on more
//! execution ports than a shift. Per round that is about 190 vector
//! operations plus one load and one store per lane, so the loop is bound by
//! ALU throughput: the four permutations cost about as much as one scalar
//! `keccak::f1600`.
//!
//! The AVX-512 backends have their own form here: with AVX-512VL,
//! rotations are one `vprolq` and chi one `vpternlogq`, about half the
//! operations per round on the same 256-bit vectors. It also runs their
//! one-way Keccak, broadcast to the four instances, at about the cost of
//! the scalar permutation.
//!
//! On AVX-512 the column parities C of theta are recomputed at the start
//! of each round with three-way XORs (`vpternlogq` 0x96, two a column)
//! rather than accumulated with two-input XORs as the output planes are
//! produced, as the AVX2 form does: 10 instructions a round instead of 20
//! (see [`theta_parity`]).
//!
//! Theta's D[x] is one vector per column, applied to each lane with one
//! XOR. Keeping it as the pair (C[x - 1], rotl(C[x + 1], 1)) would save
//! five XORs a round but keeps ten vectors live instead of five, and LLVM
//! then spills twice as often on some cores (the measurements of these
//! choices: docs/performance.md, "Lab notes").
//!
//! The pools of sponges keep each sponge lane-major and permute the ones
//! that can move ([`permute_selected`]): two 4×4 transposes per group of
//! four lanes move them in and out.
//!
//! # Safety
//!
//! Since Rust 1.87 the value-only intrinsics are safe to call inside a
//! `#[target_feature]` function with their features, and states move in
//! and out through `x86_64::mem`: no `unsafe` here. Callers outside an AVX2
//! function (AVX-512VL for the `_avx512vl` forms) need `unsafe` and the
//! feature check.

use core::arch::x86_64::{
    __m256i, _mm256_add_epi64, _mm256_andnot_si256, _mm256_extract_epi64, _mm256_or_si256,
    _mm256_permute2x128_si256, _mm256_rol_epi64, _mm256_set1_epi64x, _mm256_set_epi64x,
    _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_slli_epi64, _mm256_srli_epi64,
    _mm256_ternarylogic_epi64, _mm256_unpackhi_epi64, _mm256_unpacklo_epi64, _mm256_xor_si256,
};

use zeroize::Zeroize;

use crate::backend::x86_64::keccak::x1::ROUND_CONSTANTS;
use crate::backend::x86_64::mem::{load256, store256};

/// `a ^ b`.
macro_rules! xor {
    ($a:expr, $b:expr) => {
        _mm256_xor_si256($a, $b)
    };
}

/// Chi on one lane: `a ^ (!b & c)`.
macro_rules! chi {
    ($a:expr, $b:expr, $c:expr) => {
        _mm256_xor_si256($a, _mm256_andnot_si256($b, $c))
    };
}

/// Rotates each 64-bit element left by a literal amount.
macro_rules! rol {
    ($x:expr, 1) => {{
        let x = $x;
        _mm256_or_si256(_mm256_add_epi64(x, x), _mm256_srli_epi64::<63>(x))
    }};
    // Byte-granular rotations are one byte shuffle: output byte k of each
    // 64-bit element takes input byte k - 1 (left by 8) or k + 1 (left by
    // 56), modulo 8.
    ($x:expr, 8) => {
        _mm256_shuffle_epi8(
            $x,
            _mm256_set_epi64x(
                0x0e0d_0c0b_0a09_080f,
                0x0605_0403_0201_0007,
                0x0e0d_0c0b_0a09_080f,
                0x0605_0403_0201_0007,
            ),
        )
    };
    ($x:expr, 56) => {
        _mm256_shuffle_epi8(
            $x,
            _mm256_set_epi64x(
                0x080f_0e0d_0c0b_0a09,
                0x0007_0605_0403_0201,
                0x080f_0e0d_0c0b_0a09,
                0x0007_0605_0403_0201,
            ),
        )
    };
    ($x:expr, $n:literal) => {{
        let x = $x;
        _mm256_or_si256(
            _mm256_slli_epi64::<$n>(x),
            _mm256_srli_epi64::<{ 64 - $n }>(x),
        )
    }};
}

/// One round from state `$a` into state `$e`; `$rc` is the round constant
/// as a vector; `$xor`, `$chi` and `$rol` are the vector XOR, chi and
/// rotation. Theta's column parities `$c` come from `$parity $pxor` (see
/// [`theta_parity`]): with `by_plane` they are those of `$a` on entry and
/// are replaced by those of `$e`; with `from_state` the round computes
/// them from `$a` itself.
///
/// Output lane E[x, y] is chi over B[x..x+2, y], where B[y, 2x + 3y] =
/// rotl(A[x, y] ^ D[x], r[x, y]) (rho and pi) and D[x] = C[x - 1] ^
/// rotl(C[x + 1], 1) (theta). The index and rotation of every B below
/// follow from these formulas and the rho offsets r of FIPS 202, Table 2.
macro_rules! round {
    ($xor:ident, $chi:ident, $rol:ident, $parity:ident $pxor:ident;
     $a:ident, $e:ident, $c:ident, $rc:expr) => {{
        theta_parity!($parity $pxor; start, $c, $a);
        let d0 = $xor!($c[4], $rol!($c[1], 1));
        let d1 = $xor!($c[0], $rol!($c[2], 1));
        let d2 = $xor!($c[1], $rol!($c[3], 1));
        let d3 = $xor!($c[2], $rol!($c[4], 1));
        let d4 = $xor!($c[3], $rol!($c[0], 1));

        // Plane y = 0.
        let b0 = $xor!($a[0], d0);
        let b1 = $rol!($xor!($a[6], d1), 44);
        let b2 = $rol!($xor!($a[12], d2), 43);
        let b3 = $rol!($xor!($a[18], d3), 21);
        let b4 = $rol!($xor!($a[24], d4), 14);
        $e[0] = $xor!($chi!(b0, b1, b2), $rc);
        $e[1] = $chi!(b1, b2, b3);
        $e[2] = $chi!(b2, b3, b4);
        $e[3] = $chi!(b3, b4, b0);
        $e[4] = $chi!(b4, b0, b1);
        theta_parity!($parity $pxor; plane, $c, $e, 0);

        // Plane y = 1.
        let b0 = $rol!($xor!($a[3], d3), 28);
        let b1 = $rol!($xor!($a[9], d4), 20);
        let b2 = $rol!($xor!($a[10], d0), 3);
        let b3 = $rol!($xor!($a[16], d1), 45);
        let b4 = $rol!($xor!($a[22], d2), 61);
        $e[5] = $chi!(b0, b1, b2);
        $e[6] = $chi!(b1, b2, b3);
        $e[7] = $chi!(b2, b3, b4);
        $e[8] = $chi!(b3, b4, b0);
        $e[9] = $chi!(b4, b0, b1);
        theta_parity!($parity $pxor; plane, $c, $e, 5);

        // Plane y = 2.
        let b0 = $rol!($xor!($a[1], d1), 1);
        let b1 = $rol!($xor!($a[7], d2), 6);
        let b2 = $rol!($xor!($a[13], d3), 25);
        let b3 = $rol!($xor!($a[19], d4), 8);
        let b4 = $rol!($xor!($a[20], d0), 18);
        $e[10] = $chi!(b0, b1, b2);
        $e[11] = $chi!(b1, b2, b3);
        $e[12] = $chi!(b2, b3, b4);
        $e[13] = $chi!(b3, b4, b0);
        $e[14] = $chi!(b4, b0, b1);
        theta_parity!($parity $pxor; plane, $c, $e, 10);

        // Plane y = 3.
        let b0 = $rol!($xor!($a[4], d4), 27);
        let b1 = $rol!($xor!($a[5], d0), 36);
        let b2 = $rol!($xor!($a[11], d1), 10);
        let b3 = $rol!($xor!($a[17], d2), 15);
        let b4 = $rol!($xor!($a[23], d3), 56);
        $e[15] = $chi!(b0, b1, b2);
        $e[16] = $chi!(b1, b2, b3);
        $e[17] = $chi!(b2, b3, b4);
        $e[18] = $chi!(b3, b4, b0);
        $e[19] = $chi!(b4, b0, b1);
        theta_parity!($parity $pxor; plane, $c, $e, 15);

        // Plane y = 4.
        let b0 = $rol!($xor!($a[2], d2), 62);
        let b1 = $rol!($xor!($a[8], d3), 55);
        let b2 = $rol!($xor!($a[14], d4), 39);
        let b3 = $rol!($xor!($a[15], d0), 41);
        let b4 = $rol!($xor!($a[21], d1), 2);
        $e[20] = $chi!(b0, b1, b2);
        $e[21] = $chi!(b1, b2, b3);
        $e[22] = $chi!(b2, b3, b4);
        $e[23] = $chi!(b3, b4, b0);
        $e[24] = $chi!(b4, b0, b1);
        theta_parity!($parity $pxor; plane, $c, $e, 20);
    }};
}

/// `$c[x] ^= $s[$base + x]` for the five lanes of one plane.
macro_rules! accumulate_parity {
    ($xor:ident; $c:ident, $s:ident, $base:literal) => {
        $c = [
            $xor!($c[0], $s[$base]),
            $xor!($c[1], $s[$base + 1]),
            $xor!($c[2], $s[$base + 2]),
            $xor!($c[3], $s[$base + 3]),
            $xor!($c[4], $s[$base + 4]),
        ];
    };
}

/// Theta's column parities C, in one of two ways, each with its own XOR:
///
/// - `by_plane xor`: accumulated with two-input XORs as each output plane
///   of a round is produced (`plane`), so they are ready for the next
///   round without reading the state again; `init` declares them, from
///   the input. 20 XORs a round, as many as recomputing them would take,
///   and no state lane is read twice.
/// - `from_state xor3`: recomputed from the state at the start of each
///   round (`start`, which declares them) with three-way XORs, two a
///   column: 10 instructions a round instead of 20 where the three-way XOR
///   is one instruction (`vpternlogq` 0x96 on AVX-512), about a tenth of a
///   round's work. The state's 25 lanes are live at that point anyway.
macro_rules! theta_parity {
    (by_plane $xor:ident; init, $c:ident, $a:ident) => {
        let mut $c = [$a[0], $a[1], $a[2], $a[3], $a[4]];
        accumulate_parity!($xor; $c, $a, 5);
        accumulate_parity!($xor; $c, $a, 10);
        accumulate_parity!($xor; $c, $a, 15);
        accumulate_parity!($xor; $c, $a, 20);
    };
    (by_plane $xor:ident; start, $c:ident, $a:ident) => {};
    (by_plane $xor:ident; plane, $c:ident, $e:ident, 0) => {
        $c = [$e[0], $e[1], $e[2], $e[3], $e[4]];
    };
    (by_plane $xor:ident; plane, $c:ident, $e:ident, $base:literal) => {
        accumulate_parity!($xor; $c, $e, $base);
    };
    (from_state $xor3:ident; init, $c:ident, $a:ident) => {};
    (from_state $xor3:ident; start, $c:ident, $a:ident) => {
        let $c = [
            $xor3!($xor3!($a[0], $a[5], $a[10]), $a[15], $a[20]),
            $xor3!($xor3!($a[1], $a[6], $a[11]), $a[16], $a[21]),
            $xor3!($xor3!($a[2], $a[7], $a[12]), $a[17], $a[22]),
            $xor3!($xor3!($a[3], $a[8], $a[13]), $a[18], $a[23]),
            $xor3!($xor3!($a[4], $a[9], $a[14]), $a[19], $a[24]),
        ];
    };
    (from_state $xor3:ident; plane, $c:ident, $e:ident, $base:literal) => {};
}

/// The 24 rounds of Keccak-f[1600] on `$a`, a local array of 25 vectors
/// of interleaved lanes, in place: `$xor`, `$chi` and `$rol` are the
/// vector XOR, chi and rotation, `$parity $pxor` how theta's column
/// parities are kept and with which XOR (see [`theta_parity`]), `$zero` a
/// zero vector and `$broadcast` the function that fills a vector with a
/// round constant. Two rounds per iteration alternate between `$a` and a
/// second array, so nothing is copied between rounds.
macro_rules! keccak_f1600_rounds {
    ($xor:ident, $chi:ident, $rol:ident, $parity:ident $pxor:ident, $zero:expr, $broadcast:path;
     $a:ident) => {{
        let mut e = [$zero; 25];
        theta_parity!($parity $pxor; init, c, $a);
        for rc in ROUND_CONSTANTS.chunks_exact(2) {
            round!($xor, $chi, $rol, $parity $pxor; $a, e, c, $broadcast(rc[0] as i64));
            round!($xor, $chi, $rol, $parity $pxor; e, $a, c, $broadcast(rc[1] as i64));
        }
    }};
}

// The rounds, for the eight-way permutation on 512-bit vectors.
pub(crate) use {keccak_f1600_rounds, round, theta_parity};

/// Keccak-f[1600] (24 rounds) on each of the four interleaved states.
#[inline]
#[target_feature(enable = "avx2")]
fn keccak_f1600_x4(state: &mut [__m256i; 25]) {
    let start = crate::profile_hooks::permutation_start();
    let mut a = *state;
    keccak_f1600_rounds!(xor, chi, rol, by_plane xor, _mm256_setzero_si256(), _mm256_set1_epi64x; a);
    *state = a;
    crate::profile_hooks::permutation_end(start, 4);
}

/// Chi on one lane with AVX-512VL: `a ^ (!b & c)` is one ternary-logic
/// instruction (truth table 0xD2).
macro_rules! chi_ternary {
    ($a:expr, $b:expr, $c:expr) => {
        _mm256_ternarylogic_epi64::<0xD2>($a, $b, $c)
    };
}

/// `a ^ b ^ c` with AVX-512VL: one ternary-logic instruction (truth table
/// 0x96).
macro_rules! xor3_ternary {
    ($a:expr, $b:expr, $c:expr) => {
        _mm256_ternarylogic_epi64::<0x96>($a, $b, $c)
    };
}

/// A 64-bit rotation with AVX-512VL: one instruction.
macro_rules! rol_native {
    ($x:expr, $n:literal) => {
        _mm256_rol_epi64::<$n>($x)
    };
}

/// The 24 rounds of Keccak-f[1600] on the four interleaved states at
/// `$state` (a `&mut [__m256i; 25]`) with AVX-512VL's rotate and
/// ternary-logic instructions: [`keccak_f1600_x4`]'s rounds in about half
/// the operations. A macro, so that both permutations on it run the rounds
/// in their own frame, on a copy LLVM keeps in registers: as a function of
/// its own (never inlined, with two callers), the state went through memory
/// once more each way (about a tenth of a step of three sponges). Its
/// callers align their frames for the
/// rounds' spills (`x86_64::mem::align_spill_slots`).
macro_rules! keccak_f1600_x4_avx512vl_rounds {
    ($state:expr) => {{
        let state: &mut [__m256i; 25] = $state;
        let mut a = *state;
        keccak_f1600_rounds!(
            xor, chi_ternary, rol_native, from_state xor3_ternary,
            _mm256_setzero_si256(), _mm256_set1_epi64x; a
        );
        *state = a;
    }};
}

/// As [`keccak_f1600_x4`], with AVX-512VL's rotate and ternary-logic
/// instructions on the same 256-bit vectors: about half the operations.
#[inline]
#[target_feature(enable = "avx2,avx512f,avx512vl")]
fn keccak_f1600_x4_avx512vl(state: &mut [__m256i; 25]) {
    let start = crate::profile_hooks::permutation_start();
    keccak_f1600_x4_avx512vl_rounds!(state);
    crate::profile_hooks::permutation_end(start, 4);
}

/// One Keccak-f[1600] on AVX-512VL: the state broadcast to all four
/// instances of the four-way permutation, which with AVX-512VL's rotate and
/// ternary-logic instructions is faster than the scalar permutation.
/// Never inlined, as [`permute_selected_avx512vl`].
#[inline(never)]
#[target_feature(enable = "avx2,avx512f,avx512vl")]
pub(crate) fn keccak_f1600_avx512vl(state: &mut [u64; 25]) {
    crate::backend::x86_64::mem::align_spill_slots!();
    let mut vectors: [__m256i; 25] =
        core::array::from_fn(|lane| _mm256_set1_epi64x(state[lane] as i64));
    keccak_f1600_x4_avx512vl_rounds!(&mut vectors);
    for (word, v) in state.iter_mut().zip(vectors.iter()) {
        *word = _mm256_extract_epi64::<0>(*v) as u64;
    }
    vectors.zeroize();
}

/// The body of the `permute_selected` functions: interleaves the chosen
/// states, runs `$permute` on them and writes them back. A macro rather
/// than a function taking the permutation, so that each form compiles with
/// its own features and the permutation inlines into it. The interleaved
/// copy is zeroized, as the states may be secret (key generation's noise,
/// decapsulation's J); what the permutation itself spills to the stack is
/// not (best effort, as for every permutation here).
macro_rules! permute_selected_with {
    ($states:ident, $chosen:ident, $permute:ident) => {{
        assert!((1..=4).contains(&$chosen.len()));
        debug_assert!($chosen
            .iter()
            .enumerate()
            .all(|(i, a)| !$chosen[..i].contains(a)));
        // Lanes 4g..4g + 4 of the four states are a 4×4 matrix of words:
        // its transpose is the four interleaved lanes.
        let mut vectors = [_mm256_setzero_si256(); 25];
        for (group, out) in vectors.chunks_exact_mut(4).enumerate() {
            let at = 4 * group;
            let row = |i: usize| {
                $chosen.get(i).map_or(_mm256_setzero_si256(), |&index| {
                    load256(&$states[index][at..])
                })
            };
            out.copy_from_slice(&transpose4(row(0), row(1), row(2), row(3)));
        }
        let last = |i: usize| $chosen.get(i).map_or(0, |&index| $states[index][24] as i64);
        vectors[24] = _mm256_set_epi64x(last(3), last(2), last(1), last(0));
        $permute(&mut vectors);
        let mut last = [0u64; 4];
        store256(&mut last, vectors[24]);
        for (group, lanes) in vectors.chunks_exact(4).enumerate() {
            let at = 4 * group;
            let rows = transpose4(lanes[0], lanes[1], lanes[2], lanes[3]);
            for (&index, row) in $chosen.iter().zip(rows) {
                store256(&mut $states[index][at..], row);
            }
        }
        for (&index, &word) in $chosen.iter().zip(&last) {
            $states[index][24] = word;
        }
        vectors.zeroize();
        last.zeroize();
    }};
}

/// Keccak-f[1600] on `states[i]` for each `i` in `chosen` (one to four
/// distinct indices; the pools keep their sponges lane-major and permute
/// the ones that can move), as one four-way permutation. Lanes no sponge
/// uses permute zeros, whose results are dropped.
#[target_feature(enable = "avx2")]
pub(crate) fn permute_selected(states: &mut [[u64; 25]], chosen: &[usize]) {
    permute_selected_with!(states, chosen, keccak_f1600_x4);
}

/// [`permute_selected`] on AVX-512VL's instructions (the AVX-512 backends,
/// for steps of two to four sponges). Never inlined: its interleaved copy
/// (800 bytes, 64-byte aligned) would otherwise sit in the frame of every
/// pool that calls it, beside the eight-way permutation's, and the pools
/// are the deepest frames of key generation and decapsulation (see the
/// stack budget test); a call costs nothing beside a permutation.
#[inline(never)]
#[target_feature(enable = "avx2,avx512f,avx512vl")]
pub(crate) fn permute_selected_avx512vl(states: &mut [[u64; 25]], chosen: &[usize]) {
    crate::backend::x86_64::mem::align_spill_slots!();
    permute_selected_with!(states, chosen, keccak_f1600_x4_avx512vl);
}

/// The transpose of the 4×4 matrix of 64-bit words whose rows are `r0..r3`.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose4(r0: __m256i, r1: __m256i, r2: __m256i, r3: __m256i) -> [__m256i; 4] {
    let t0 = _mm256_unpacklo_epi64(r0, r1);
    let t1 = _mm256_unpackhi_epi64(r0, r1);
    let t2 = _mm256_unpacklo_epi64(r2, r3);
    let t3 = _mm256_unpackhi_epi64(r2, r3);
    [
        _mm256_permute2x128_si256::<0x20>(t0, t2),
        _mm256_permute2x128_si256::<0x20>(t1, t3),
        _mm256_permute2x128_si256::<0x31>(t0, t2),
        _mm256_permute2x128_si256::<0x31>(t1, t3),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The four 64-bit elements of `v`, element 0 first.
    #[target_feature(enable = "avx2")]
    fn to_words(v: __m256i) -> [u64; 4] {
        [
            _mm256_extract_epi64::<0>(v) as u64,
            _mm256_extract_epi64::<1>(v) as u64,
            _mm256_extract_epi64::<2>(v) as u64,
            _mm256_extract_epi64::<3>(v) as u64,
        ]
    }

    /// SplitMix64: a deterministic stream of test words.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    #[target_feature(enable = "avx2")]
    fn interleave(states: &[[u64; 25]; 4]) -> [__m256i; 25] {
        core::array::from_fn(|j| {
            _mm256_set_epi64x(
                states[3][j] as i64,
                states[2][j] as i64,
                states[1][j] as i64,
                states[0][j] as i64,
            )
        })
    }

    #[target_feature(enable = "avx2")]
    fn deinterleave(state: &[__m256i; 25]) -> [[u64; 25]; 4] {
        let mut out = [[0u64; 25]; 4];
        for (j, lane) in state.iter().enumerate() {
            for (instance, word) in out.iter_mut().zip(to_words(*lane)) {
                instance[j] = word;
            }
        }
        out
    }

    #[target_feature(enable = "avx2")]
    fn check_permutation() {
        let mut rng = Rng(1);
        let mut states: [[u64; 25]; 4] =
            core::array::from_fn(|_| core::array::from_fn(|_| rng.next()));
        let mut x4 = interleave(&states);
        for iteration in 0..1000 {
            for s in states.iter_mut() {
                keccak::f1600(s);
            }
            keccak_f1600_x4(&mut x4);
            assert_eq!(deinterleave(&x4), states, "iteration {iteration}");
        }
        // The all-zero state, against the FIPS 202 known answer.
        let mut zero = [_mm256_setzero_si256(); 25];
        keccak_f1600_x4(&mut zero);
        for instance in deinterleave(&zero) {
            assert_eq!(instance[0], 0xf125_8f79_40e1_dde7);
            assert_eq!(instance[24], 0xeaf1_ff7b_5cec_a249);
        }
    }

    #[test]
    fn permutation_matches_keccak_crate() {
        crate::backend::x86_64::run_if_avx2(check_permutation);
    }

    /// Every subset size, the chosen states scattered among others that
    /// must stay untouched, against the `keccak` crate; on AVX2 and, where
    /// the CPU has it, on AVX-512VL.
    #[target_feature(enable = "avx2")]
    fn check_permute_selected(permute: fn(&mut [[u64; 25]], &[usize])) {
        let mut rng = Rng(4);
        for len in 1..=4 {
            let mut states: Vec<[u64; 25]> = (0..9)
                .map(|_| core::array::from_fn(|_| rng.next()))
                .collect();
            let chosen: Vec<usize> = (0..len).map(|i| (5 * i + 2) % 9).collect();
            let mut expected = states.clone();
            for round in 0..50 {
                for &i in &chosen {
                    keccak::f1600(&mut expected[i]);
                }
                permute(&mut states, &chosen);
                assert_eq!(states, expected, "{len} states, round {round}");
            }
        }
    }

    #[target_feature(enable = "avx2")]
    fn check_permute_selected_avx2() {
        // (A closure in an AVX2 function has AVX2 too.)
        check_permute_selected(|states, chosen| permute_selected(states, chosen));
    }

    #[test]
    fn selected_states_match_the_keccak_crate() {
        crate::backend::x86_64::run_if_avx2(check_permute_selected_avx2);
        if !(is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512vl")) {
            eprintln!("AVX-512VL not available; skipping its permutation");
            return;
        }
        // SAFETY: AVX2, AVX-512F and AVX-512VL were detected.
        #[allow(unsafe_code)]
        unsafe {
            check_permute_selected(|states, chosen| permute_selected_avx512vl(states, chosen))
        };
        let mut one = [[7u64; 25]];
        let mut expected = one[0];
        keccak::f1600(&mut expected);
        // SAFETY: as above.
        #[allow(unsafe_code)]
        unsafe {
            keccak_f1600_avx512vl(&mut one[0])
        };
        assert_eq!(one[0], expected, "one-way on AVX-512VL");
    }
}
