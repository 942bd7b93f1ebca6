//! Decapsulation's hashes on the x86-64 SIMD backends, as one pool of
//! sponges on the backend's multi-way permutation.
//!
//! After K-PKE.Decrypt, ML-KEM.Decaps_internal (Algorithm 18) hashes three
//! things: G(m' ‖ h) (one SHA3-512 block), J(z ‖ c) (SHAKE256 over the
//! whole ciphertext: 6, 9 and 12 blocks for the three parameter sets) and,
//! inside the re-encryption, the 2k + 1 PRF streams of the noise (one
//! SHAKE256 block each, two for eta1 = 3), which need r' from G. Run one
//! after the other, J's permutations alone cost about as much as the rest
//! of the re-encryption. Here J's chain carries the others: its first block
//! is permuted beside G, its next ones beside the noise streams (up to
//! `W - 1` at a time), and only its remaining blocks run alone, on the
//! one-way permutation. For ML-KEM-768 on AVX-512 that is one four-way, one
//! eight-way and seven one-way permutations, where G, J and the noise took
//! ten one-way and two four-way ones. Where J was computed while the key
//! was parsed (`DecapsulationKey::decapsulate_bytes`, see `x86_64::pools::expand`,
//! which also holds J's sponge, [`Rejection`]), the pool is G and the noise
//! alone.
//!
//! The schedule depends only on the lengths (public); every state and
//! buffer holds secrets (m', z, r', the noise) and is wiped before
//! returning. The results are those of the sequential default
//! (`Schedule::decaps_hashes`), byte for byte: each sponge absorbs the same
//! blocks.

use super::PoolKernels;
use crate::backend::traits::DecapsHashInput;
use crate::backend::x86_64::cbd;
use crate::backend::x86_64::pools::expand::Rejection;
use crate::backend::x86_64::pools::noise::set_prf_state;
use crate::hash::{
    read_lanes, xor_block, xor_bytes, xor_padding, SHA3_512_RATE, SHA3_DOMAIN, SHAKE256_RATE,
};
use crate::params::ParameterSet;
use crate::poly::Poly;
use crate::profile_hooks::{count, Primitive};
use crate::wipe::wipe;

/// Where J's sponge sits in the pool; G and the noise streams use the
/// states after it.
const J: usize = 0;

/// The pool for parameter set `P` on backend `B`, `W` states wide (at
/// least two, at most `B::KECCAK_WIDTH`): the contract of
/// `Schedule::decaps_hashes`.
#[target_feature(enable = "avx2")]
pub(crate) fn decaps_hashes<B: PoolKernels, P: ParameterSet, const W: usize>(
    input: &DecapsHashInput<'_>,
    y: &mut [Poly],
    e1_e2: &mut [Poly],
) -> ([u8; 32], [u8; 32]) {
    let DecapsHashInput {
        m,
        h,
        z,
        c,
        rejection: computed,
    } = *input;
    const { assert!(W >= 2 && W <= B::KECCAK_WIDTH) };
    count(Primitive::G, 1);
    count(Primitive::Prf, (y.len() + e1_e2.len()) as u64);
    let mut states = [[0u64; 25]; W];
    let mut j = match computed {
        Some(_) => Rejection::computed(z, c),
        None => {
            count(Primitive::J, 1);
            Rejection::new(z, c)
        }
    };

    // G(m' ‖ h) beside J's first block.
    xor_block(&mut states[1], m);
    xor_bytes(&mut states[1], 32, h);
    xor_padding(&mut states[1], 64, SHA3_DOMAIN, SHA3_512_RATE);
    if j.pending() {
        j.absorb_next(&mut states[J]);
        B::keccak_f1600_many(&mut states, &[J, 1]);
    } else {
        B::keccak_f1600_many(&mut states, &[1]);
    }
    let mut g = [0u8; 64];
    read_lanes(&states[1], &mut g);
    let mut shared = [0u8; 32];
    let mut r = [0u8; 32];
    shared.copy_from_slice(&g[..32]);
    r.copy_from_slice(&g[32..]);

    // The noise beside J's next blocks, then J alone.
    const { assert!(P::ETA2 == 2 && (P::ETA1 == 2 || P::ETA1 == 3)) };
    match P::ETA1 {
        3 => sample_beside::<B, W, 3>(&mut states, &mut j, &r, 0, y),
        _ => sample_beside::<B, W, 2>(&mut states, &mut j, &r, 0, y),
    }
    sample_beside::<B, W, 2>(&mut states, &mut j, &r, P::K as u8, e1_e2);
    while j.pending() {
        j.absorb_next(&mut states[J]);
        B::keccak_f1600_many(&mut states, &[J]);
    }
    let mut rejection = [0u8; 32];
    match computed {
        Some(value) => rejection = *value,
        None => read_lanes(&states[J], &mut rejection),
    }

    wipe(&mut states, [[0; 25]; W]);
    wipe(&mut g, [0; 64]);
    wipe(&mut r, [0; 32]);
    (shared, rejection)
}

/// `out[i]` = SamplePolyCBD_eta(PRF_eta(r, nonce + i)), `W - 1` streams per
/// permutation in states `1..W`, each permutation also carrying J's next
/// block while J has one. (`ETA` is a constant so that the eta = 3 branch
/// and its buffers stay out of the other sets' stack frames.)
#[target_feature(enable = "avx2")]
fn sample_beside<B: PoolKernels, const W: usize, const ETA: usize>(
    states: &mut [[u64; 25]; W],
    j: &mut Rejection<'_>,
    r: &[u8; 32],
    nonce: u8,
    out: &mut [Poly],
) {
    let all: [usize; W] = core::array::from_fn(|i| i);
    let mut nonce = nonce;
    for batch in out.chunks_mut(W - 1) {
        let n = batch.len();
        for (state, offset) in states[1..].iter_mut().zip(0u8..).take(n) {
            set_prf_state(state, r, nonce.wrapping_add(offset));
        }
        permute_with_j::<B, W>(states, j, &all[1..=n]);
        if ETA == 2 {
            for (poly, state) in batch.iter_mut().zip(&states[1..]) {
                let words: &[u64; 16] = state[..16].try_into().expect("16 lanes");
                cbd::sample_poly_cbd2(words, poly);
            }
        } else {
            // eta = 3 (ML-KEM-512's y: two streams): 192 bytes, two blocks.
            assert!(n <= 2, "eta = 3 only for k = 2");
            let mut bytes = [[0u8; 64 * 3]; 2];
            for (buffer, state) in bytes.iter_mut().zip(&states[1..]).take(n) {
                read_lanes(state, &mut buffer[..SHAKE256_RATE]);
            }
            permute_with_j::<B, W>(states, j, &all[1..=n]);
            for ((poly, buffer), state) in batch.iter_mut().zip(bytes.iter_mut()).zip(&states[1..])
            {
                read_lanes(state, &mut buffer[SHAKE256_RATE..]);
                cbd::sample_poly_cbd::<3>(buffer, poly);
            }
            wipe(&mut bytes, [[0; 64 * 3]; 2]);
        }
        nonce = nonce.wrapping_add(n as u8);
    }
}

/// Permutes the states `others` (indices `1..W`), and J's with them after
/// absorbing its next block while it has one.
#[target_feature(enable = "avx2")]
fn permute_with_j<B: PoolKernels, const W: usize>(
    states: &mut [[u64; 25]; W],
    j: &mut Rejection<'_>,
    others: &[usize],
) {
    if j.pending() {
        j.absorb_next(&mut states[J]);
        let mut chosen = [J; W];
        chosen[1..=others.len()].copy_from_slice(others);
        B::keccak_f1600_many(states, &chosen[..=others.len()]);
    } else {
        B::keccak_f1600_many(states, others);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::portable::Portable;
    use crate::backend::select::{available_backends, with_backend, BackendKind};
    use crate::params::{MlKem1024, MlKem512, MlKem768};

    /// The pool against the sequential default, for many inputs.
    fn pool_matches_default<P: ParameterSet, B: PoolKernels, const W: usize>() {
        for seed in 0..40u8 {
            let m = [seed; 32];
            let h = [seed ^ 0x5a; 32];
            let z = [seed.wrapping_mul(7); 32];
            let c: Vec<u8> = (0..P::CT_LEN).map(|i| (i as u8) ^ seed).collect();
            let (mut y0, mut e0) = (vec![Poly::ZERO; P::K], vec![Poly::ZERO; P::K + 1]);
            let (mut y1, mut e1) = (y0.clone(), e0.clone());
            let input = DecapsHashInput {
                m: &m,
                h: &h,
                z: &z,
                c: &c,
                rejection: None,
            };
            let expected = <Portable as crate::backend::traits::Schedule>::decaps_hashes::<P>(
                &input, &mut y0, &mut e0,
            );
            // SAFETY: the caller checked that the backend is available.
            #[allow(unsafe_code)]
            let got = unsafe { decaps_hashes::<B, P, W>(&input, &mut y1, &mut e1) };
            assert!(
                got == expected && y1 == y0 && e1 == e0,
                "{} seed {seed}",
                P::NAME
            );
            // With J given (computed while the key was parsed): the pool
            // skips it and returns it as it is.
            let computed = [seed ^ 0xc3; 32];
            let given = DecapsHashInput {
                rejection: Some(&computed),
                ..input
            };
            let (mut y2, mut e2) = (y0.clone(), e0.clone());
            // SAFETY: as above.
            #[allow(unsafe_code)]
            let got = unsafe { decaps_hashes::<B, P, W>(&given, &mut y2, &mut e2) };
            assert!(
                got == (expected.0, computed) && y2 == y0 && e2 == e0,
                "{} seed {seed}, J given",
                P::NAME
            );
        }
    }

    #[test]
    fn pool_matches_the_sequential_hashes() {
        for kind in available_backends() {
            match kind {
                BackendKind::Avx2 => {
                    pool_matches_default::<MlKem512, crate::backend::x86_64::Avx2, 4>();
                    pool_matches_default::<MlKem768, crate::backend::x86_64::Avx2, 4>();
                    pool_matches_default::<MlKem1024, crate::backend::x86_64::Avx2, 4>();
                }
                BackendKind::Avx512 => with_backend(kind, || {
                    pool_matches_default::<MlKem512, crate::backend::x86_64::Avx512, 8>();
                    pool_matches_default::<MlKem768, crate::backend::x86_64::Avx512, 8>();
                    pool_matches_default::<MlKem1024, crate::backend::x86_64::Avx512, 8>();
                    pool_matches_default::<MlKem768, crate::backend::x86_64::Avx512, 4>();
                })
                .expect("available"),
                _ => {}
            }
        }
    }
}
