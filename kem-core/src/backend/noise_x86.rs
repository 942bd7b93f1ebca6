//! Noise sampling for the x86-64 SIMD backends: the PRF streams of a noise
//! vector, `Backend::KECCAK_WIDTH` at a time on the backend's multi-way
//! permutation, then SamplePolyCBD (FIPS 203, Algorithm 8) on AVX2.
//!
//! PRF_eta(s, b) = SHAKE256(s ‖ b, 64·eta) absorbs 33 bytes, one padded
//! block, so each sponge's state is written directly: the four words of s,
//! then b, the SHAKE domain byte, and the final padding bit at the end of
//! the rate. eta = 2 squeezes 128 bytes, the first 16 lanes of one block,
//! which the CBD reads straight from the state; eta = 3 squeezes 192 bytes,
//! two blocks. Everything here is secret: the states and the byte buffers
//! are wiped before returning.

use super::{cbd_avx2, Backend};
use crate::hash::{read_lanes, SHAKE256_RATE, SHAKE_DOMAIN};
use crate::poly::Poly;
use crate::profile_hooks::{count, Primitive};
use crate::wipe::wipe;

/// The state of SHAKE256 after absorbing `seed ‖ nonce` (one padded block).
#[inline(always)]
pub(super) fn prf_state(seed: &[u8; 32], nonce: u8) -> [u64; 25] {
    let mut state = [0u64; 25];
    for (lane, bytes) in state.iter_mut().zip(seed.chunks_exact(8)) {
        *lane = u64::from_le_bytes(bytes.try_into().expect("8-byte chunk"));
    }
    state[4] = u64::from(nonce) | u64::from(SHAKE_DOMAIN) << 8;
    state[SHAKE256_RATE / 8 - 1] = 1 << 63;
    state
}

/// `out[i]` = SamplePolyCBD_eta(PRF_eta(seed, nonce + i)), in batches of
/// `W` streams, at most `B::KECCAK_WIDTH` (a parameter, so that the
/// buffers are no larger than the batch: stack matters, see the stack
/// budget test).
#[target_feature(enable = "avx2")]
pub(super) fn sample_noise<B: Backend, const ETA: usize, const W: usize>(
    seed: &[u8; 32],
    nonce: u8,
    out: &mut [Poly],
) {
    const { assert!(W <= B::KECCAK_WIDTH) };
    count(Primitive::Prf, out.len() as u64);
    let mut nonce = nonce;
    for batch in out.chunks_mut(W) {
        match ETA {
            2 => batch_eta2::<B, W>(seed, nonce, batch),
            3 => batch_eta3::<B, W>(seed, nonce, batch),
            _ => unreachable!("FIPS 203 uses eta = 2 or 3 only"),
        }
        nonce = nonce.wrapping_add(batch.len() as u8);
    }
}

/// The indices `0..W`, for choosing the first sponges of a batch.
const fn first_indices<const W: usize>() -> [usize; W] {
    let mut all = [0; W];
    let mut i = 0;
    while i < W {
        all[i] = i;
        i += 1;
    }
    all
}

/// One batch for eta = 2: 128 bytes, the first 16 lanes of one block, read
/// by the CBD straight from the state.
#[target_feature(enable = "avx2")]
fn batch_eta2<B: Backend, const W: usize>(seed: &[u8; 32], nonce: u8, batch: &mut [Poly]) {
    let mut states = [[0u64; 25]; W];
    for (state, offset) in states.iter_mut().zip(0u8..).take(batch.len()) {
        *state = prf_state(seed, nonce.wrapping_add(offset));
    }
    B::keccak_f1600_many(&mut states, &first_indices::<W>()[..batch.len()]);
    for (poly, state) in batch.iter_mut().zip(&states) {
        let words: &[u64; 16] = state[..16].try_into().expect("16 lanes");
        cbd_avx2::sample_poly_cbd2(words, poly);
    }
    wipe(&mut states, [[0; 25]; W]);
}

/// One batch for eta = 3: 192 bytes, two blocks.
#[inline(never)]
#[target_feature(enable = "avx2")]
fn batch_eta3<B: Backend, const W: usize>(seed: &[u8; 32], nonce: u8, batch: &mut [Poly]) {
    let chosen = &first_indices::<W>()[..batch.len()];
    let mut states = [[0u64; 25]; W];
    let mut bytes = [[0u8; 64 * 3]; W];
    for (state, offset) in states.iter_mut().zip(0u8..).take(batch.len()) {
        *state = prf_state(seed, nonce.wrapping_add(offset));
    }
    B::keccak_f1600_many(&mut states, chosen);
    for (buffer, state) in bytes.iter_mut().zip(&states).take(batch.len()) {
        read_lanes(state, &mut buffer[..SHAKE256_RATE]);
    }
    B::keccak_f1600_many(&mut states, chosen);
    for ((poly, buffer), state) in batch.iter_mut().zip(bytes.iter_mut()).zip(&states) {
        read_lanes(state, &mut buffer[SHAKE256_RATE..]);
        cbd_avx2::sample_poly_cbd::<3>(buffer, poly);
    }
    wipe(&mut states, [[0; 25]; W]);
    wipe(&mut bytes, [[0; 64 * 3]; W]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Portable;

    #[test]
    fn prf_state_is_the_absorbed_sponge() {
        // Squeezing from the prepared state gives PRF's bytes.
        let seed: [u8; 32] = core::array::from_fn(|i| (7 * i + 1) as u8);
        for nonce in [0u8, 1, 200, 255] {
            let mut state = prf_state(&seed, nonce);
            keccak::f1600(&mut state);
            let mut ours = [0u8; 128];
            read_lanes(&state, &mut ours);
            let mut expected = [0u8; 128];
            crate::hash::prf::<Portable>(&seed, nonce, &mut expected);
            assert_eq!(ours, expected, "nonce {nonce}");
        }
    }
}
