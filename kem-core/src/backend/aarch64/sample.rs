//! Sampling for the `neon` backend: the noise vectors two sponges at a time
//! on the two-way Keccak (`aarch64::keccak_x2`; Â's sponges run in
//! `aarch64::pool`), rejection sampling (Algorithm 7) and SamplePolyCBD
//! (Algorithm 8) on 128-bit vectors.
//!
//! The coefficients are the portable ones: each sponge sees the same input
//! and squeezes the same blocks, rejection keeps the first 256 candidates
//! below q in stream order, and CBD computes the same bit sums.
//!
//! Constant time: CBD works on secret bytes with lane arithmetic only.
//! Rejection sampling indexes a table with its acceptance mask and branches
//! on how many candidates it kept, both functions of the XOF output of ρ,
//! which is public (part of the encapsulation key), as in the portable and
//! AVX2 code. Secret sponge states and PRF output are wiped after use.

use core::arch::aarch64::{
    int16x8_t, int8x16_t, uint16x8_t, uint8x16_t, uint8x16x2_t, vaddq_u16, vaddq_u8, vaddvq_u16,
    vandq_u16, vandq_u8, vcltq_u16, vdupq_n_u16, vdupq_n_u8, veorq_u64, vget_low_s8, vmovl_high_s8,
    vmovl_s8, vqtbl1q_u8, vqtbl2q_u8, vreinterpretq_s16_u16, vreinterpretq_s16_u8,
    vreinterpretq_s8_u8, vreinterpretq_u16_u8, vreinterpretq_u64_u8, vreinterpretq_u8_u16,
    vshlq_u16, vshrq_n_u16, vshrq_n_u8, vsubq_s16, vsubq_s8, vzip1q_s16, vzip1q_s8, vzip2q_s16,
    vzip2q_s8,
};

use super::Neon;
use crate::backend::aarch64::keccak_x2::keccak_f1600_x2;
use crate::backend::aarch64::mem::{
    load_i16, load_u16, load_u64, load_u8, load_u8x2, store_i16, store_u64,
};
use crate::field::Q;
use crate::hash::{read_lanes, xor_bytes, xor_padding, SHAKE128_RATE, SHAKE256_RATE, SHAKE_DOMAIN};
use crate::poly::{Poly, N};
use crate::profile_hooks::{count, permutation_end, permutation_start, Primitive};
use crate::wipe::wipe;

/// `hash::xor_bytes` on 128-bit vectors: XORs `bytes` into the state's
/// bytes from `offset` on, 16 at a time while `offset` is a whole lane;
/// the rest (and any unaligned start) on the portable code.
#[target_feature(enable = "neon")]
pub(super) fn xor_into_state(state: &mut [u64; 25], offset: usize, bytes: &[u8]) {
    if offset % 8 != 0 {
        xor_bytes(state, offset, bytes);
        return;
    }
    let mut pairs = bytes.chunks_exact(16);
    let mut lane = offset / 8;
    for pair in &mut pairs {
        let lanes = veorq_u64(
            load_u64(state, lane),
            vreinterpretq_u64_u8(load_u8(pair, 0)),
        );
        store_u64(state, lane, lanes);
        lane += 2;
    }
    xor_bytes(state, 8 * lane, pairs.remainder());
}

/// Absorbs `input` (shorter than `RATE`) into the all-zero `state`, padded
/// with `domain` (`hash::SHA3_DOMAIN` or `hash::SHAKE_DOMAIN`).
pub(super) fn absorb_into<const RATE: usize>(state: &mut [u64; 25], input: &[&[u8]], domain: u8) {
    let mut len = 0;
    for part in input {
        xor_bytes(state, len, part);
        len += part.len();
    }
    xor_padding(state, len, domain, RATE);
}

/// Absorbs seed ‖ suffix (32 bytes, then fewer than 7) into the all-zero
/// `state` with the SHAKE padding of `RATE`: the one block of SampleNTT's
/// ρ ‖ j ‖ i and of the PRF's σ ‖ N, as [`absorb_into`] would, but
/// written a lane at a time.
#[inline]
pub(super) fn absorb_seed<const RATE: usize>(
    state: &mut [u64; 25],
    seed: &[u8; 32],
    suffix: &[u8],
) {
    debug_assert!(suffix.len() < 7 && RATE / 8 > 5 && state.iter().all(|&lane| lane == 0));
    for (lane, bytes) in state.iter_mut().zip(seed.chunks_exact(8)) {
        *lane = u64::from_le_bytes(bytes.try_into().expect("8-byte chunk"));
    }
    // Lane 4: the suffix, then the domain byte.
    state[4] = suffix
        .iter()
        .rev()
        .fold(u64::from(SHAKE_DOMAIN), |lane, &byte| {
            lane << 8 | u64::from(byte)
        });
    state[RATE / 8 - 1] = 0x80 << 56;
}

/// The two-way permutation on `a` and `b`, counted for profiling (every
/// two-way permutation of the backend goes through here).
#[target_feature(enable = "neon")]
pub(super) fn permute_pair(a: &mut [u64; 25], b: &mut [u64; 25]) {
    let start = permutation_start();
    keccak_f1600_x2(a, b);
    permutation_end(start, 2);
}

/// Byte shuffle spreading four 3-byte groups into eight u16 lanes: lane 2j
/// takes bytes 3j and 3j+1, lane 2j+1 bytes 3j+1 and 3j+2.
const SPREAD_12: [u8; 16] = [0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8, 9, 10, 10, 11];
/// Per-lane shifts after the spread: odd lanes drop their low nibble.
const SPREAD_SHIFTS: [i16; 8] = [0, -4, 0, -4, 0, -4, 0, -4];

/// The eight 12-bit values of 12 bytes (the first 12 lanes of `bytes`):
/// value 2j = bits 0-11 of group j, value 2j+1 = bits 12-23.
#[inline]
#[target_feature(enable = "neon")]
fn spread_12_bits(bytes: uint8x16_t) -> uint16x8_t {
    let pairs = vreinterpretq_u16_u8(vqtbl1q_u8(bytes, load_u8(&SPREAD_12, 0)));
    lower_12_bits(pairs)
}

/// The eight 12-bit values of bytes 12 to 23 of `bytes` (as
/// [`spread_12_bits`] of those 12 bytes).
#[inline]
#[target_feature(enable = "neon")]
fn spread_next_12_bits(bytes: uint8x16x2_t) -> uint16x8_t {
    let shuffle = vaddq_u8(load_u8(&SPREAD_12, 0), vdupq_n_u8(12));
    lower_12_bits(vreinterpretq_u16_u8(vqtbl2q_u8(bytes, shuffle)))
}

/// Each lane's 12 bits after [`SPREAD_12`]'s shuffle.
#[inline]
#[target_feature(enable = "neon")]
fn lower_12_bits(pairs: uint16x8_t) -> uint16x8_t {
    let shifted = vshlq_u16(pairs, load_i16(&SPREAD_SHIFTS, 0));
    vandq_u16(shifted, vdupq_n_u16(0x0fff))
}

/// Lane i's bit of an acceptance mask.
const LANE_BITS: [u16; 16] = [
    1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768,
];

/// How many lanes each 8-bit acceptance mask keeps (its population count).
const ACCEPTED: [u8; 256] = crate::sample::popcount_table();

/// For each 8-bit acceptance mask, the byte shuffle that moves the
/// accepted u16 lanes to the front, in order.
const COMPACT: [[u8; 16]; 256] = {
    let mut table = [[0xffu8; 16]; 256];
    let mut mask = 0;
    while mask < 256 {
        let mut out = 0;
        let mut lane = 0;
        while lane < 8 {
            if mask & (1 << lane) != 0 {
                table[mask][2 * out] = 2 * lane as u8;
                table[mask][2 * out + 1] = 2 * lane as u8 + 1;
                out += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    table
};

/// The lanes of `candidates` that `mask` (bit i: lane i) accepts, moved
/// to the front in order.
#[inline]
#[target_feature(enable = "neon")]
fn compact(candidates: uint16x8_t, mask: usize) -> int16x8_t {
    let shuffle = load_u8(&COMPACT[mask], 0);
    vreinterpretq_s16_u8(vqtbl1q_u8(vreinterpretq_u8_u16(candidates), shuffle))
}

/// Algorithm 7's inner loop on one squeezed SHAKE128 block, read from the
/// sponge `state`: as `sample::rejection_sample`, appends to
/// `coeffs[filled..]` the block's 12-bit candidates below q until the
/// polynomial is full, and returns the new count. Sixteen candidates (24
/// bytes) per step while sixteen more fit, then eight, loaded straight from
/// the state (its 200 bytes leave room for the last 16-byte load), the rest
/// on the portable code.
// Not inlined: inside a pool's loop, with the permutation's assembly
// clobbering every vector register, the compiler reloads the loop's
// constants in every step; on its own the loop keeps them in registers.
#[inline(never)]
#[target_feature(enable = "neon")]
pub(super) fn rejection_sample_block(
    coeffs: &mut [i16; N],
    mut filled: usize,
    state: &[u64; 25],
) -> usize {
    let bytes = state_bytes(state);
    let q = vdupq_n_u16(Q as u16);
    let (low_bits, high_bits) = (load_u16(&LANE_BITS, 0), load_u16(&LANE_BITS, 8));
    let mut at = 0;
    // `filled <= N - 16` rather than `filled + 16 <= N`: no wrap, so the
    // compiler drops the slice's own checks.
    while filled <= N - 16 && at <= SHAKE128_RATE - 24 {
        let loaded = load_u8x2(bytes, at);
        let (first, second) = (spread_12_bits(loaded.0), spread_next_12_bits(loaded));
        let lane_bits = vaddq_u16(
            vandq_u16(vcltq_u16(first, q), low_bits),
            vandq_u16(vcltq_u16(second, q), high_bits),
        );
        let mask = usize::from(vaddvq_u16(lane_bits));
        let (low, high) = (mask & 0xff, mask >> 8 & 0xff);
        let kept = usize::from(ACCEPTED[low]);
        let out = &mut coeffs[filled..filled + 16];
        store_i16(out, 0, compact(first, low));
        store_i16(out, kept, compact(second, high));
        filled += kept + usize::from(ACCEPTED[high]);
        at += 24;
    }
    while filled <= N - 8 && at <= SHAKE128_RATE - 12 {
        let candidates = spread_12_bits(load_u8(bytes, at));
        let mask = usize::from(vaddvq_u16(vandq_u16(vcltq_u16(candidates, q), low_bits))) & 0xff;
        store_i16(coeffs, filled, compact(candidates, mask));
        filled += usize::from(ACCEPTED[mask]);
        at += 12;
    }
    if at == SHAKE128_RATE {
        return filled;
    }
    crate::sample::rejection_sample(coeffs, filled, &bytes[at..SHAKE128_RATE])
}

/// The sponge state as the bytes the sponge squeezes: lanes little-endian,
/// which on a little-endian target is their layout in memory.
#[cfg(target_endian = "little")]
#[allow(unsafe_code)]
pub(super) fn state_bytes(state: &[u64; 25]) -> &[u8; 200] {
    // SAFETY: `[u64; 25]` and `[u8; 200]` have the same size, every byte
    // of a `u64` is an initialised `u8`, and `u8` needs no alignment; the
    // borrow keeps `state` alive and unchanged.
    unsafe { &*(state as *const [u64; 25]).cast::<[u8; 200]>() }
}

/// (b0 + b1) - (b2 + b3) of the 2-bit sums in each byte's low nibble.
#[inline]
#[target_feature(enable = "neon")]
fn nibble_value(nibbles: uint8x16_t) -> int8x16_t {
    vsubq_s8(
        vreinterpretq_s8_u8(vandq_u8(nibbles, vdupq_n_u8(3))),
        vreinterpretq_s8_u8(vshrq_n_u8::<2>(nibbles)),
    )
}

/// SamplePolyCBD_2 from 128 bytes: each byte gives two coefficients, one
/// per nibble, each (b0 + b1) - (b2 + b3) of its bits.
#[target_feature(enable = "neon")]
fn cbd2(bytes: &[u8], p: &mut Poly) {
    debug_assert_eq!(bytes.len(), 128);
    for step in 0..8 {
        let b = load_u8(bytes, 16 * step);
        let pairs = vdupq_n_u8(0x55);
        let sums = vaddq_u8(vandq_u8(b, pairs), vandq_u8(vshrq_n_u8::<1>(b), pairs));
        let low = nibble_value(vandq_u8(sums, vdupq_n_u8(0x0f)));
        let high = nibble_value(vshrq_n_u8::<4>(sums));
        let at = 32 * step;
        for (half, coeffs) in [vzip1q_s8(low, high), vzip2q_s8(low, high)]
            .into_iter()
            .enumerate()
        {
            store_i16(&mut p.coeffs, at + 16 * half, vmovl_s8(vget_low_s8(coeffs)));
            store_i16(&mut p.coeffs, at + 16 * half + 8, vmovl_high_s8(coeffs));
        }
    }
}

/// SamplePolyCBD_3 from 192 bytes: each 12-bit half of a 3-byte group gives
/// two coefficients, each (b0 + b1 + b2) - (b3 + b4 + b5) of its bits.
#[target_feature(enable = "neon")]
fn cbd3(bytes: &[u8], p: &mut Poly) {
    debug_assert_eq!(bytes.len(), 192);
    cbd3_groups(bytes, 16, 0, p);
}

/// SamplePolyCBD_3's 12-byte steps: step `first + g` (coefficients 16·(first
/// + g) onwards) from `bytes[12g..12g + 12]`, for g < `steps`. A step whose
/// 16-byte load would pass the end of `bytes` copies its 12 bytes first.
#[target_feature(enable = "neon")]
fn cbd3_groups(bytes: &[u8], steps: usize, first: usize, p: &mut Poly) {
    let bit_of_each_3 = vdupq_n_u16(0x0249);
    for step in 0..steps {
        let at = 12 * step;
        let loaded = if at + 16 <= bytes.len() {
            load_u8(bytes, at)
        } else {
            let mut tail = [0u8; 16];
            tail[..12].copy_from_slice(&bytes[at..at + 12]);
            let v = load_u8(&tail, 0);
            wipe(&mut tail, [0; 16]);
            v
        };
        let x = spread_12_bits(loaded);
        let sums = vaddq_u16(
            vaddq_u16(
                vandq_u16(x, bit_of_each_3),
                vandq_u16(vshrq_n_u16::<1>(x), bit_of_each_3),
            ),
            vandq_u16(vshrq_n_u16::<2>(x), bit_of_each_3),
        );
        let seven = vdupq_n_u16(7);
        let first_values = vsubq_s16(
            vreinterpretq_s16_u16(vandq_u16(sums, seven)),
            vreinterpretq_s16_u16(vandq_u16(vshrq_n_u16::<3>(sums), seven)),
        );
        let second_values = vsubq_s16(
            vreinterpretq_s16_u16(vandq_u16(vshrq_n_u16::<6>(sums), seven)),
            vreinterpretq_s16_u16(vandq_u16(vshrq_n_u16::<9>(sums), seven)),
        );
        let out = 16 * (first + step);
        store_i16(&mut p.coeffs, out, vzip1q_s16(first_values, second_values));
        store_i16(
            &mut p.coeffs,
            out + 8,
            vzip2q_s16(first_values, second_values),
        );
    }
}

/// SamplePolyCBD_eta straight from a PRF stream's squeezed blocks in its
/// sponge `state`: η = 2 takes the first 128 bytes of block 0; η = 3 the
/// 192 bytes of blocks 0 and 1, the 4 bytes of block 0 that the step
/// across the two needs kept in `carry`. Returns whether `p` is complete.
#[target_feature(enable = "neon")]
pub(super) fn cbd_from_block(
    eta: usize,
    block: usize,
    state: &[u64; 25],
    carry: &mut [u8; 4],
    p: &mut Poly,
) -> bool {
    let bytes = state_bytes(state);
    match (eta, block) {
        (2, _) => {
            cbd2(&bytes[..128], p);
            true
        }
        (_, 0) => {
            // Steps 0..11 are bytes 0..132; bytes 132..136 begin step 11.
            cbd3_groups(bytes, 11, 0, p);
            carry.copy_from_slice(&bytes[132..SHAKE256_RATE]);
            false
        }
        _ => {
            let mut across = [0u8; 12];
            across[..4].copy_from_slice(carry);
            across[4..].copy_from_slice(&bytes[..8]);
            cbd3_groups(&across, 1, 11, p);
            wipe(&mut across, [0; 12]);
            wipe(carry, [0; 4]);
            cbd3_groups(&bytes[8..], 4, 12, p);
            true
        }
    }
}

/// SamplePolyCBD_eta on 128-bit vectors.
#[target_feature(enable = "neon")]
pub(super) fn sample_poly_cbd<const ETA: usize>(bytes: &[u8], p: &mut Poly) {
    match ETA {
        2 => cbd2(bytes, p),
        3 => cbd3(bytes, p),
        _ => unreachable!("FIPS 203 uses eta = 2 or 3 only"),
    }
}

/// `Backend::sample_noise`: `out[i]` = SamplePolyCBD_eta(PRF_eta(seed,
/// nonce + i)), two PRF streams at a time (a lone last one on the one-way
/// permutation).
#[target_feature(enable = "neon")]
pub(super) fn sample_noise<const ETA: usize>(seed: &[u8; 32], nonce: u8, out: &mut [Poly]) {
    let len = 64 * ETA;
    let mut streams = [[0u8; 192]; 2];
    let mut pairs = out.chunks_exact_mut(2);
    let mut next_nonce = nonce;
    for pair in pairs.by_ref() {
        count(Primitive::Prf, 2);
        // Absorbed in place: a state built elsewhere and moved here (as
        // by an array `map`) would leave copies of σ ‖ N in frames that
        // nothing wipes.
        let (mut a, mut b) = ([0u64; 25], [0u64; 25]);
        absorb_seed::<SHAKE256_RATE>(&mut a, seed, &[next_nonce]);
        absorb_seed::<SHAKE256_RATE>(&mut b, seed, &[next_nonce.wrapping_add(1)]);
        for at in (0..len).step_by(SHAKE256_RATE) {
            let end = (at + SHAKE256_RATE).min(len);
            permute_pair(&mut a, &mut b);
            read_lanes(&a, &mut streams[0][at..end]);
            read_lanes(&b, &mut streams[1][at..end]);
        }
        for (p, stream) in pair.iter_mut().zip(&streams) {
            sample_poly_cbd::<ETA>(&stream[..len], p);
        }
        wipe(&mut a, [0; 25]);
        wipe(&mut b, [0; 25]);
        next_nonce = next_nonce.wrapping_add(2);
    }
    if let [last] = pairs.into_remainder() {
        crate::hash::prf::<Neon>(seed, next_nonce, &mut streams[0][..len]);
        sample_poly_cbd::<ETA>(&streams[0][..len], last);
    }
    wipe(&mut streams, [[0; 192]; 2]);
}

#[cfg(test)]
mod tests {
    use crate::backend::aarch64::Neon;
    use crate::backend::portable::Portable;
    use crate::backend::traits::Sampling;
    use crate::poly::Poly;

    #[test]
    fn cbd_and_noise_match_the_portable_ones() {
        for k in 2..=4 {
            let seed: [u8; 32] = core::array::from_fn(|i| (i * 151 + k * 29) as u8);
            let mut neon = vec![Poly::ZERO; k + 1];
            let mut portable = neon.clone();
            Neon::sample_noise::<2>(&seed, 3, &mut neon);
            Portable::sample_noise::<2>(&seed, 3, &mut portable);
            assert_eq!(neon, portable, "eta 2, k = {k}");
            Neon::sample_noise::<3>(&seed, 5, &mut neon[..k]);
            Portable::sample_noise::<3>(&seed, 5, &mut portable[..k]);
            assert_eq!(neon, portable, "eta 3, k = {k}");
        }
    }

    #[test]
    fn matrix_matches_the_portable_one() {
        for k in 2..=4 {
            for variant in 0..16u8 {
                let rho: [u8; 32] = core::array::from_fn(|i| (i as u8).wrapping_mul(7) ^ variant);
                let mut neon = vec![Poly::ZERO; k * k];
                let mut portable = neon.clone();
                Neon::sample_matrix(&rho, k, &mut neon);
                Portable::sample_matrix(&rho, k, &mut portable);
                assert_eq!(neon, portable, "k = {k}, variant {variant}");
            }
        }
    }
}
