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
//! ALU throughput. Measured on an AMD EPYC (Zen 4) with rdtsc: about 950
//! cycles for the four permutations, against about 870 for one scalar
//! `keccak::f1600`.
//!
//! With AVX-512VL (the AVX-512 backend), rotations are one `vprolq` and chi
//! one `vpternlogq`, about 40% fewer operations per round on the same
//! 256-bit vectors; measured on Zen 4 that makes key generation and
//! encapsulation about 17% faster. The AVX-512 backend also runs its
//! one-way Keccak here, broadcast to the four instances: faster than the
//! scalar permutation.
//!
//! # Safety
//!
//! Since Rust 1.87 the value-only intrinsics are safe to call inside a
//! `#[target_feature]` function with their features. The `unsafe` here
//! calls the AVX-512VL permutation, only when the AVX-512 backend (checked
//! available when chosen) is active; states move in and out through
//! `mem_avx2`. Callers outside an AVX2 function need
//! `unsafe` and the AVX2 check.

use core::arch::x86_64::{
    __m256i, _mm256_add_epi64, _mm256_andnot_si256, _mm256_extract_epi64, _mm256_or_si256,
    _mm256_permute2x128_si256, _mm256_rol_epi64, _mm256_set1_epi64x, _mm256_set_epi64x,
    _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_slli_epi64, _mm256_srli_epi64,
    _mm256_ternarylogic_epi64, _mm256_unpackhi_epi64, _mm256_unpacklo_epi64, _mm256_xor_si256,
};

use zeroize::Zeroize;

use super::keccak_f1600::ROUND_CONSTANTS;
use super::mem_avx2::{load256, store256};

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

/// One round from state `$a` into state `$e`, given the column parities
/// `$c` of `$a`, which are replaced by those of `$e`; `$rc` is the round
/// constant as a vector.
///
/// Output lane E[x, y] is chi over B[x..x+2, y], where B[y, 2x + 3y] =
/// rotl(A[x, y] ^ D[x], r[x, y]) (rho and pi) and D[x] = C[x - 1] ^
/// rotl(C[x + 1], 1) (theta). The index and rotation of every B below
/// follow from these formulas and the rho offsets r of FIPS 202, Table 2.
macro_rules! round {
    ($xor:ident, $chi:ident, $rol:ident; $a:ident, $e:ident, $c:ident, $rc:expr) => {{
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
        $c = [$e[0], $e[1], $e[2], $e[3], $e[4]];

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
        accumulate_parity!($xor; $c, $e, 5);

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
        accumulate_parity!($xor; $c, $e, 10);

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
        accumulate_parity!($xor; $c, $e, 15);

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
        accumulate_parity!($xor; $c, $e, 20);
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

/// Keccak-f[1600] (24 rounds) on each of the four interleaved states.
#[target_feature(enable = "avx2")]
fn keccak_f1600_x4(state: &mut [__m256i; 25]) {
    let start = crate::profile_hooks::permutation_start();
    keccak_f1600_x4_dispatch(state);
    crate::profile_hooks::permutation_end(start, true);
}

/// The four-way permutation on the active backend's instructions.
#[target_feature(enable = "avx2")]
fn keccak_f1600_x4_dispatch(state: &mut [__m256i; 25]) {
    if use_avx512vl() {
        // SAFETY: the AVX-512 backend is active only on CPUs with AVX-512F
        // and AVX-512VL (`BackendKind::is_available`, checked whenever a
        // backend is chosen).
        #[allow(unsafe_code)]
        unsafe {
            keccak_f1600_x4_avx512vl(state)
        };
        return;
    }
    let mut a = *state;
    let mut e = [_mm256_setzero_si256(); 25];
    let mut c = [_mm256_setzero_si256(); 5];
    accumulate_parity!(xor; c, a, 0);
    accumulate_parity!(xor; c, a, 5);
    accumulate_parity!(xor; c, a, 10);
    accumulate_parity!(xor; c, a, 15);
    accumulate_parity!(xor; c, a, 20);
    for rc in ROUND_CONSTANTS.chunks_exact(2) {
        round!(xor, chi, rol; a, e, c, _mm256_set1_epi64x(rc[0] as i64));
        round!(xor, chi, rol; e, a, c, _mm256_set1_epi64x(rc[1] as i64));
    }
    *state = a;
}

/// Whether the running operation uses the AVX-512 backend: its Keccak is
/// this module's AVX-512VL permutation, the rest is the AVX2 code. Read per
/// permutation (a thread-local and an atomic load, well under 1% of one)
/// rather than threading a type parameter through every AVX2 routine.
pub(crate) fn use_avx512vl() -> bool {
    crate::backend::active_backend() == crate::backend::BackendKind::Avx512
}

/// Chi on one lane with AVX-512VL: `a ^ (!b & c)` is one ternary-logic
/// instruction (truth table 0xD2).
macro_rules! chi_ternary {
    ($a:expr, $b:expr, $c:expr) => {
        _mm256_ternarylogic_epi64::<0xD2>($a, $b, $c)
    };
}

/// A 64-bit rotation with AVX-512VL: one instruction.
macro_rules! rol_native {
    ($x:expr, $n:literal) => {
        _mm256_rol_epi64::<$n>($x)
    };
}

/// As [`keccak_f1600_x4`], with AVX-512VL's rotate and ternary-logic
/// instructions on the same 256-bit vectors: about 40% fewer operations.
#[target_feature(enable = "avx2,avx512f,avx512vl")]
fn keccak_f1600_x4_avx512vl(state: &mut [__m256i; 25]) {
    let mut a = *state;
    let mut e = [_mm256_setzero_si256(); 25];
    let mut c = [_mm256_setzero_si256(); 5];
    accumulate_parity!(xor; c, a, 0);
    accumulate_parity!(xor; c, a, 5);
    accumulate_parity!(xor; c, a, 10);
    accumulate_parity!(xor; c, a, 15);
    accumulate_parity!(xor; c, a, 20);
    for rc in ROUND_CONSTANTS.chunks_exact(2) {
        round!(xor, chi_ternary, rol_native; a, e, c, _mm256_set1_epi64x(rc[0] as i64));
        round!(xor, chi_ternary, rol_native; e, a, c, _mm256_set1_epi64x(rc[1] as i64));
    }
    *state = a;
}

/// One Keccak-f[1600] on AVX-512VL: the state broadcast to all four
/// instances of the four-way permutation, which with AVX-512VL's rotate and
/// ternary-logic instructions is faster than the scalar permutation.
#[target_feature(enable = "avx2,avx512f,avx512vl")]
pub(crate) fn keccak_f1600_avx512vl(state: &mut [u64; 25]) {
    let mut vectors: [__m256i; 25] =
        core::array::from_fn(|lane| _mm256_set1_epi64x(state[lane] as i64));
    keccak_f1600_x4_avx512vl(&mut vectors);
    for (word, v) in state.iter_mut().zip(vectors.iter()) {
        *word = _mm256_extract_epi64::<0>(*v) as u64;
    }
    vectors.zeroize();
}

/// XORs `words[i]` (a multiple of 8 bytes, the same length for all four)
/// into the first lanes of instance `i`, little-endian.
#[target_feature(enable = "avx2")]
fn xor_words(state: &mut [__m256i; 25], words: [&[u8]; 4]) {
    let word = |bytes: &[u8], i: usize| {
        u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().expect("8-byte chunk")) as i64
    };
    for (i, lane) in state.iter_mut().enumerate().take(words[0].len() / 8) {
        let v = _mm256_set_epi64x(
            word(words[3], i),
            word(words[2], i),
            word(words[1], i),
            word(words[0], i),
        );
        *lane = xor!(*lane, v);
    }
}

/// XORs the final partial block `tails[i]` (shorter than RATE, the same
/// length for all four) of each instance and the padding (`domain`, then
/// pad10*1) into the state, without copying the input to a buffer.
#[target_feature(enable = "avx2")]
fn xor_padded_tails<const RATE: usize>(state: &mut [__m256i; 25], tails: [&[u8]; 4], domain: u8) {
    let len = tails[0].len();
    let (full, partial) = (len / 8, len % 8);
    xor_words(state, tails.map(|tail| &tail[..8 * full]));
    if partial != 0 {
        // Little-endian word of the last 1..=7 bytes.
        let word = |tail: &[u8]| {
            tail[8 * full..]
                .iter()
                .rev()
                .fold(0u64, |w, &b| (w << 8) | u64::from(b)) as i64
        };
        let v = _mm256_set_epi64x(
            word(tails[3]),
            word(tails[2]),
            word(tails[1]),
            word(tails[0]),
        );
        state[full] = xor!(state[full], v);
    }
    // The padding is the same for all four instances: their lengths agree.
    let pad = _mm256_set1_epi64x(i64::from(domain) << (8 * partial));
    state[full] = xor!(state[full], pad);
    let last = RATE / 8 - 1;
    state[last] = xor!(state[last], _mm256_set1_epi64x(i64::MIN));
}

/// Writes element `I` of the first lanes of `state` to `out`,
/// little-endian: the first `out.len()` bytes of instance `I`'s rate.
#[target_feature(enable = "avx2")]
fn write_instance<const I: i32>(state: &[__m256i; 25], out: &mut [u8]) {
    let tail_lane = out.len() / 8;
    let mut chunks = out.chunks_exact_mut(8);
    for (chunk, lane) in chunks.by_ref().zip(state) {
        chunk.copy_from_slice(&(_mm256_extract_epi64::<I>(*lane) as u64).to_le_bytes());
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let word = _mm256_extract_epi64::<I>(state[tail_lane]) as u64;
        tail.copy_from_slice(&word.to_le_bytes()[..tail.len()]);
    }
}

/// Keccak-f[1600] on four independent states held lane-major (`states[i]`
/// is instance i, lane x + 5y at index x + 5y), for callers that drive each
/// instance differently between permutations.
#[target_feature(enable = "avx2")]
pub(crate) fn permute_states(states: &mut [[u64; 25]; 4]) {
    permute_lanes(states.each_mut());
}

/// [`permute_states`] on four separately borrowed states. The interleaved
/// copy is zeroized, as the states may be secret (key generation's noise);
/// what the permutation itself spills to the stack is not (best effort, as
/// for every permutation here).
#[target_feature(enable = "avx2")]
pub(crate) fn permute_lanes(states: [&mut [u64; 25]; 4]) {
    let [s0, s1, s2, s3] = states;
    // Lanes 4g..4g + 4 of the four states are a 4×4 matrix of words: its
    // transpose is the four interleaved lanes. Written straight into the one
    // array that is zeroized below.
    let mut vectors = [_mm256_setzero_si256(); 25];
    for (group, out) in vectors.chunks_exact_mut(4).enumerate() {
        let at = 4 * group;
        out.copy_from_slice(&transpose4(
            load256(&s0[at..]),
            load256(&s1[at..]),
            load256(&s2[at..]),
            load256(&s3[at..]),
        ));
    }
    vectors[24] = _mm256_set_epi64x(s3[24] as i64, s2[24] as i64, s1[24] as i64, s0[24] as i64);
    keccak_f1600_x4(&mut vectors);
    for (group, lanes) in vectors.chunks_exact(4).enumerate() {
        let at = 4 * group;
        let [w0, w1, w2, w3] = transpose4(lanes[0], lanes[1], lanes[2], lanes[3]);
        store256(&mut s0[at..], w0);
        store256(&mut s1[at..], w1);
        store256(&mut s2[at..], w2);
        store256(&mut s3[at..], w3);
    }
    s0[24] = _mm256_extract_epi64::<0>(vectors[24]) as u64;
    s1[24] = _mm256_extract_epi64::<1>(vectors[24]) as u64;
    s2[24] = _mm256_extract_epi64::<2>(vectors[24]) as u64;
    s3[24] = _mm256_extract_epi64::<3>(vectors[24]) as u64;
    vectors.zeroize();
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

/// Four Keccak sponges of rate `RATE` bytes, run in lockstep, that have
/// absorbed their whole inputs and are ready to squeeze: the four-way form
/// of `crate::hash::Sponge`.
pub(crate) struct SpongeX4<const RATE: usize> {
    /// Lane `x + 5·y` of instance `i` is element `i` of `state[x + 5·y]`.
    state: [__m256i; 25],
}

impl<const RATE: usize> SpongeX4<RATE> {
    /// Absorbs `inputs[i]` into instance `i`, then pads each with `domain`
    /// and the final bit (FIPS 202 pad10*1).
    ///
    /// # Panics
    ///
    /// If the four inputs differ in length.
    #[target_feature(enable = "avx2")]
    pub(crate) fn absorb(inputs: [&[u8]; 4], domain: u8) -> Self {
        const { assert!(RATE.is_multiple_of(8) && RATE < 200) };
        let len = inputs[0].len();
        // A real check, not a debug one: three comparisons, and a length
        // mismatch would otherwise silently truncate the longer inputs.
        assert!(inputs.iter().all(|input| input.len() == len));
        let mut state = [_mm256_setzero_si256(); 25];
        let full = len / RATE;
        for k in 0..full {
            xor_words(
                &mut state,
                inputs.map(|input| &input[k * RATE..(k + 1) * RATE]),
            );
            keccak_f1600_x4(&mut state);
        }
        xor_padded_tails::<RATE>(
            &mut state,
            inputs.map(|input| &input[full * RATE..]),
            domain,
        );
        Self { state }
    }

    /// Squeezes the next block of every instance (permuting first) into
    /// `out[i]`; a slice shorter than `RATE` takes the block's first bytes.
    ///
    /// # Panics
    ///
    /// If the four slices differ in length or are longer than `RATE`.
    #[target_feature(enable = "avx2")]
    pub(crate) fn squeeze_block(&mut self, out: [&mut [u8]; 4]) {
        let len = out[0].len();
        // Never squeeze the capacity, whatever the caller passes.
        assert!(len <= RATE && out.iter().all(|o| o.len() == len));
        keccak_f1600_x4(&mut self.state);
        let [out0, out1, out2, out3] = out;
        write_instance::<0>(&self.state, out0);
        write_instance::<1>(&self.state, out1);
        write_instance::<2>(&self.state, out2);
        write_instance::<3>(&self.state, out3);
    }
}

impl<const RATE: usize> Drop for SpongeX4<RATE> {
    fn drop(&mut self) {
        // zeroize (1.9) implements Zeroize for __m256i with a volatile write,
        // so this is not optimised away.
        self.state.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha3::digest::{ExtendableOutput, Update, XofReader};

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
        crate::backend::run_if_avx2(check_permutation);
    }

    /// Four different inputs of each length 0..=300, five blocks squeezed
    /// (the last one short), against `reference` on each input.
    #[target_feature(enable = "avx2")]
    fn check_shake<const RATE: usize>(reference: impl Fn(&[u8], &mut [u8])) {
        let mut rng = Rng(RATE as u64);
        for len in 0..=300 {
            let inputs: [Vec<u8>; 4] =
                core::array::from_fn(|_| (0..len).map(|_| rng.next() as u8).collect());
            let mut sponge = SpongeX4::<RATE>::absorb(inputs.each_ref().map(|v| &v[..]), 0x1f);
            let mut ours = [[0u8; 5 * 168]; 4];
            for block in 0..5 {
                // The last block is squeezed short, ending inside a lane.
                let take = if block == 4 { RATE - 5 } else { RATE };
                let out = ours
                    .each_mut()
                    .map(|o| &mut o[block * RATE..block * RATE + take]);
                sponge.squeeze_block(out);
            }
            for (input, ours) in inputs.iter().zip(&ours) {
                let mut expected = vec![0u8; 5 * RATE];
                reference(input, &mut expected);
                expected[5 * RATE - 5..].fill(0);
                assert_eq!(
                    &ours[..5 * RATE],
                    &expected[..],
                    "rate {RATE}, length {len}"
                );
            }
        }
    }

    #[target_feature(enable = "avx2")]
    fn check_shake128() {
        check_shake::<168>(|input, out| {
            sha3::Shake128::default()
                .chain(input)
                .finalize_xof()
                .read(out)
        });
    }

    #[target_feature(enable = "avx2")]
    fn check_shake256() {
        check_shake::<136>(|input, out| {
            sha3::Shake256::default()
                .chain(input)
                .finalize_xof()
                .read(out)
        });
    }

    #[test]
    fn shake128_matches_sha3_crate() {
        crate::backend::run_if_avx2(check_shake128);
    }

    #[test]
    fn shake256_matches_sha3_crate() {
        crate::backend::run_if_avx2(check_shake256);
    }
}
