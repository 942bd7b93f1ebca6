//! Noise sampling for the x86-64 SIMD backends: the PRF streams of a noise
//! vector, `PoolKernels::KECCAK_WIDTH` at a time on the backend's multi-way
//! permutation, then SamplePolyCBD (FIPS 203, Algorithm 8) on AVX2; and
//! K-PKE.Encrypt's two noise vectors, which for ML-KEM-512 run as one pool
//! ([`sample_encryption_noise`]).
//!
//! PRF_eta(s, b) = SHAKE256(s ‖ b, 64·eta) absorbs 33 bytes, one padded
//! block, so each sponge's state is written directly: the four words of s,
//! then b, the SHAKE domain byte, and the final padding bit at the end of
//! the rate. eta = 2 squeezes 128 bytes, the first 16 lanes of one block,
//! which the CBD reads straight from the state; eta = 3 squeezes 192 bytes,
//! two blocks. Everything here is secret: the states and the byte buffers
//! are wiped before returning.

use super::PoolKernels;
use crate::backend::x86_64::cbd;
use crate::hash::{read_lanes, SHAKE256_RATE, SHAKE_DOMAIN};
use crate::params::ParameterSet;
use crate::poly::Poly;
use crate::profile_hooks::{count, Primitive};
use crate::wipe::wipe;

/// Sets `state` (whatever it held) to SHAKE256's after absorbing `seed ‖
/// nonce` (one padded block). In place: a state built elsewhere and moved
/// or copied here (as by a function returning it, or `array::from_fn`)
/// could leave a copy of the secret seed in a frame that nothing wipes.
#[inline(always)]
pub(crate) fn set_prf_state(state: &mut [u64; 25], seed: &[u8; 32], nonce: u8) {
    *state = [0; 25];
    for (lane, bytes) in state.iter_mut().zip(seed.chunks_exact(8)) {
        *lane = u64::from_le_bytes(bytes.try_into().expect("8-byte chunk"));
    }
    state[4] = u64::from(nonce) | u64::from(SHAKE_DOMAIN) << 8;
    state[SHAKE256_RATE / 8 - 1] = 1 << 63;
}

/// `out[i]` = SamplePolyCBD_eta(PRF_eta(seed, nonce + i)), in batches of
/// `W` streams, at most `B::KECCAK_WIDTH` (a parameter, so that the
/// buffers are no larger than the batch: stack matters, see the stack
/// budget test).
#[target_feature(enable = "avx2")]
pub(crate) fn sample_noise<B: PoolKernels, const ETA: usize, const W: usize>(
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
fn batch_eta2<B: PoolKernels, const W: usize>(seed: &[u8; 32], nonce: u8, batch: &mut [Poly]) {
    let mut states = [[0u64; 25]; W];
    for (state, offset) in states.iter_mut().zip(0u8..).take(batch.len()) {
        set_prf_state(state, seed, nonce.wrapping_add(offset));
    }
    B::keccak_f1600_many(&mut states, &first_indices::<W>()[..batch.len()]);
    for (poly, state) in batch.iter_mut().zip(&states) {
        let words: &[u64; 16] = state[..16].try_into().expect("16 lanes");
        cbd::sample_poly_cbd2(words, poly);
    }
    wipe(&mut states, [[0; 25]; W]);
}

/// One batch for eta = 3: 192 bytes, two blocks.
#[inline(never)]
#[target_feature(enable = "avx2")]
fn batch_eta3<B: PoolKernels, const W: usize>(seed: &[u8; 32], nonce: u8, batch: &mut [Poly]) {
    let chosen = &first_indices::<W>()[..batch.len()];
    let mut states = [[0u64; 25]; W];
    let mut bytes = [[0u8; 64 * 3]; W];
    for (state, offset) in states.iter_mut().zip(0u8..).take(batch.len()) {
        set_prf_state(state, seed, nonce.wrapping_add(offset));
    }
    B::keccak_f1600_many(&mut states, chosen);
    for (buffer, state) in bytes.iter_mut().zip(&states).take(batch.len()) {
        read_lanes(state, &mut buffer[..SHAKE256_RATE]);
    }
    B::keccak_f1600_many(&mut states, chosen);
    for ((poly, buffer), state) in batch.iter_mut().zip(bytes.iter_mut()).zip(&states) {
        read_lanes(state, &mut buffer[SHAKE256_RATE..]);
        cbd::sample_poly_cbd::<3>(buffer, poly);
    }
    wipe(&mut states, [[0; 25]; W]);
    wipe(&mut bytes, [[0; 64 * 3]; W]);
}

/// The noise of K-PKE.Encrypt (Algorithm 14, lines 9-17), the contract of
/// `Schedule::sample_encryption_noise`: the k PRF streams of y (eta1,
/// nonces 0..k) and the k + 1 of e1 ‖ e2 (eta2 = 2, nonces k..2k + 1).
///
/// With eta1 = 2 that is the default, [`sample_noise`] on each vector.
/// With eta1 = 3 (ML-KEM-512, k = 2) y's two streams span two blocks each,
/// and batched per vector they take three four-way permutations, two of
/// them with two lanes. Here they take two: y's and e1's first blocks, then
/// y's second blocks beside e2. The schedule is fixed; the states and
/// buffers are secret and wiped.
#[target_feature(enable = "avx2")]
pub(crate) fn sample_encryption_noise<B: PoolKernels, P: ParameterSet>(
    r: &[u8; 32],
    y: &mut [Poly],
    e1_e2: &mut [Poly],
) {
    const { assert!(P::ETA2 == 2 && (P::ETA1 == 2 || P::K == 2) && B::KECCAK_WIDTH >= 4) };
    if P::ETA1 == 2 {
        crate::backend::traits::sequential_encryption_noise::<P, B>(r, y, e1_e2);
        return;
    }
    debug_assert!(y.len() == 2 && e1_e2.len() == 3);
    count(Primitive::Prf, 5);
    // Streams 0 and 1 are y (nonces 0, 1), 2 to 4 are e1 ‖ e2 (nonces 2..5).
    let mut states = [[0u64; 25]; 5];
    for (state, nonce) in states.iter_mut().zip(0u8..) {
        set_prf_state(state, r, nonce);
    }
    let eta2_from = |state: &[u64; 25], poly: &mut Poly| {
        // eta = 2: 128 bytes, the first 16 lanes of the block.
        let words: &[u64; 16] = state[..16].try_into().expect("16 lanes");
        cbd::sample_poly_cbd2(words, poly);
    };
    // Step 1: y's first blocks, kept until their second ones come, and e1.
    B::keccak_f1600_many(&mut states, &[0, 1, 2, 3]);
    let mut bytes = [[0u8; 64 * 3]; 2];
    for (buffer, state) in bytes.iter_mut().zip(&states) {
        read_lanes(state, &mut buffer[..SHAKE256_RATE]);
    }
    eta2_from(&states[2], &mut e1_e2[0]);
    eta2_from(&states[3], &mut e1_e2[1]);
    // Step 2: y's second blocks, and e2.
    B::keccak_f1600_many(&mut states, &[0, 1, 4]);
    for ((poly, buffer), state) in y.iter_mut().zip(bytes.iter_mut()).zip(&states) {
        read_lanes(state, &mut buffer[SHAKE256_RATE..]);
        cbd::sample_poly_cbd::<3>(buffer, poly);
    }
    eta2_from(&states[4], &mut e1_e2[2]);
    wipe(&mut states, [[0; 25]; 5]);
    wipe(&mut bytes, [[0; 64 * 3]; 2]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::portable::Portable;
    use crate::backend::traits::Schedule;
    use crate::backend::x86_64::{Avx2, Avx512};

    /// A backend's `sample_encryption_noise`.
    type EncryptionNoise = fn(&[u8; 32], &mut [Poly], &mut [Poly]);

    /// The encryption noise of every x86 backend this CPU has, against the
    /// portable default (one vector after the other), for each parameter
    /// set and several seeds.
    fn check_encryption_noise<P: ParameterSet>() {
        use crate::backend::select::BackendKind;
        let k = P::K;
        for seed in 0..8u8 {
            let r: [u8; 32] = core::array::from_fn(|i| (i as u8).wrapping_mul(29) ^ seed);
            let mut expected = [Poly::ZERO; 9];
            let (y, e1_e2) = expected[..2 * k + 1].split_at_mut(k);
            crate::backend::traits::sequential_encryption_noise::<P, Portable>(&r, y, e1_e2);
            let backends: [(BackendKind, EncryptionNoise); 2] = [
                (
                    BackendKind::Avx2,
                    <Avx2 as Schedule>::sample_encryption_noise::<P>,
                ),
                (
                    BackendKind::Avx512,
                    <Avx512 as Schedule>::sample_encryption_noise::<P>,
                ),
            ];
            for (kind, sample) in backends {
                // The backends' methods may run only where the CPU has
                // their features (see `avx2`, `avx512`).
                if !kind.is_available() {
                    eprintln!("{kind} not available; skipping");
                    continue;
                }
                let mut got = [Poly {
                    coeffs: [7; crate::poly::N],
                }; 9];
                let (y, e1_e2) = got[..2 * k + 1].split_at_mut(k);
                sample(&r, y, e1_e2);
                assert!(
                    got[..2 * k + 1] == expected[..2 * k + 1],
                    "{kind}, {}, seed {seed}",
                    P::NAME
                );
            }
        }
    }

    #[test]
    fn encryption_noise_matches_portable() {
        check_encryption_noise::<crate::MlKem512>();
        check_encryption_noise::<crate::MlKem768>();
        check_encryption_noise::<crate::MlKem1024>();
    }

    #[test]
    fn set_prf_state_gives_the_absorbed_sponge() {
        // Squeezing from the prepared state gives PRF's bytes.
        let seed: [u8; 32] = core::array::from_fn(|i| (7 * i + 1) as u8);
        for nonce in [0u8, 1, 200, 255] {
            let mut state = [0x5au64; 25];
            set_prf_state(&mut state, &seed, nonce);
            keccak::f1600(&mut state);
            let mut ours = [0u8; 128];
            read_lanes(&state, &mut ours);
            let mut expected = [0u8; 128];
            crate::hash::prf::<Portable>(&seed, nonce, &mut expected);
            assert_eq!(ours, expected, "nonce {nonce}");
        }
    }
}
