//! The x86-64 backends' pools of sponges: many independent Keccak sponges
//! advanced together on the backend's multi-way permutation, so that a
//! step of key generation ([`keygen`]), key parsing ([`expand`]),
//! decapsulation ([`decaps`]) or noise sampling ([`noise`]) leaves no lane
//! of the permutation idle where another sponge could use it. Each pool
//! gives the bytes of the sequential schedule (`traits::Schedule`'s
//! defaults); the tests compare them.

pub(crate) mod decaps;
pub(crate) mod expand;
pub(crate) mod keygen;
pub(crate) mod noise;

use crate::backend::traits::Backend;
use crate::poly::{Poly, N};

/// What a pool needs of a backend beyond [`Backend`]: its multi-way
/// permutation and the kernels that consume a sponge's output in place.
pub(crate) trait PoolKernels: Backend {
    /// The most sponges [`PoolKernels::keccak_f1600_many`] permutes in one
    /// call: the width of the backend's multi-way permutation. Pools choose
    /// up to this many per step.
    const KECCAK_WIDTH: usize;

    /// Keccak-f\[1600\] on `states[i]` for each `i` in `chosen` (one to
    /// [`PoolKernels::KECCAK_WIDTH`] distinct indices), as one multi-way
    /// permutation.
    fn keccak_f1600_many(states: &mut [[u64; 25]], chosen: &[usize]);

    /// Algorithm 7's inner loop (SampleNTT) on one squeezed SHAKE128 block,
    /// read from the sponge `state` (its first 21 lanes): appends the
    /// candidates below q to `coeffs[filled..]` until all 256 are there and
    /// returns the new count. Entries from that count on may have been
    /// overwritten.
    fn rejection_sample_block(coeffs: &mut [i16; N], filled: usize, state: &[u64; 25]) -> usize;

    /// Coefficients `start..start + acc.len()` of Algorithms 11 and 12's
    /// Σ a_i ∘ b_i · 2^-16, reduced as `PolyKernels::multiply_accumulate`
    /// reduces them (`start` and the length multiples of 32): key
    /// generation's pool computes t̂ a slice at a time, as Â is sampled.
    fn multiply_accumulate_range(acc: &mut [i16], a: &[&Poly], b: &[Poly], start: usize);
}

/// The sponge pools of an x86-64 SIMD backend (`keygen`, `expand`,
/// `decaps`), `$width` sponges wide and compiled with `$features`: its
/// `generate_key`, `hash_and_sample_matrix` and `decaps_hashes`, defined in
/// its `with_*` module (whose imports they use). A backend type with a
/// `usize` const parameter names it last (`const BITS`); the functions then
/// take it first.
macro_rules! sponge_pools {
    ($backend:ty, $features:literal, $width:literal $(, const $c:ident)?) => {
        /// Key generation as one pool of sponges (see `keygen`).
        #[target_feature(enable = $features)]
        pub(super) fn generate_key<$(const $c: usize,)? P: ParameterSet>(
            rho: &[u8; 32],
            sigma: &[u8; 32],
            out: &mut KeyBuffers<'_>,
        ) -> Option<[u8; 32]> {
            crate::backend::x86_64::pools::keygen::generate_for::<$backend, P>(rho, sigma, out)
        }

        /// H(ek) and Â sharing the multi-way Keccak, and J(z ‖ c) as a
        /// second chain if asked (see `expand`).
        #[target_feature(enable = $features)]
        pub(super) fn hash_and_sample_matrix$(<const $c: usize>)?(
            ek: &[u8],
            rho: &[u8; 32],
            k: usize,
            out: &mut [Poly],
            rejection: Option<(&[u8; 32], &[u8])>,
        ) -> ([u8; 32], Option<[u8; 32]>) {
            let j = rejection.map(|(z, c)| crate::backend::x86_64::pools::expand::Rejection::new(z, c));
            crate::backend::x86_64::pools::expand::hash_and_sample_matrix::<$backend, $width>(
                ek, rho, k, out, j,
            )
        }

        /// G, J and the re-encryption's noise as one pool (see
        /// `decaps`).
        #[target_feature(enable = $features)]
        pub(super) fn decaps_hashes<$(const $c: usize,)? P: ParameterSet>(
            input: &crate::backend::traits::DecapsHashInput<'_>,
            y: &mut [Poly],
            e1_e2: &mut [Poly],
        ) -> ([u8; 32], [u8; 32]) {
            crate::backend::x86_64::pools::decaps::decaps_hashes::<$backend, P, $width>(input, y, e1_e2)
        }
    };
}
pub(crate) use sponge_pools;
