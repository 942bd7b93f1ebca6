//! Expanding an encapsulation key on AVX2: H(ek) (SHA3-256, rate 136) and
//! the k² SampleNTT streams of Â (SHAKE128, rate 168) share one multi-way
//! Keccak (four-way on AVX2; on AVX-512 eight-way while the matrix has the
//! work for it, see the step loop). Each of the instances runs its own job between
//! permutations: one starts on H(ek) and absorbs a block of ek per
//! permutation; the others sample matrix entries, each absorbing ρ ‖ j ‖ i
//! and squeezing 168-byte blocks until the entry has 256 coefficients, then
//! starting the next entry; an instance whose job ends takes the next
//! entry. For ML-KEM-768 that is 9 four-way permutations instead of six
//! four-way and twelve one-way ones. Key generation, whose ek is not known
//! yet, has its own pool (`x86_64::pools::keygen`), built from the pieces here.
//!
//! A decapsulation key parsed to decapsulate one ciphertext at once
//! (`DecapsulationKey::decapsulate_bytes`) adds a second chain beside the
//! hash: J(z ‖ c), whose blocks would otherwise mostly run alone on the
//! one-way permutation after decryption (see `x86_64::pools::decaps`). That chain
//! holds secrets (z), which its [`Rejection`] wipes; the rest of the pool
//! is public data.

use super::PoolKernels;
use crate::hash::{
    read_lanes, xor_block, xor_bytes, xor_padded_block, xor_padding, SHA3_256_RATE, SHA3_DOMAIN,
    SHAKE128_RATE, SHAKE256_RATE, SHAKE_DOMAIN,
};
use crate::poly::{Poly, N};
use crate::profile_hooks::{count, Primitive};
use crate::wipe::wipe;

/// What one Keccak instance is doing.
#[derive(Clone, Copy)]
enum Job {
    /// Absorbing ek for H(ek); the next block to absorb.
    Hash {
        next_block: usize,
    },
    /// Sampling matrix entry `entry`, with `filled` coefficients so far.
    Sample {
        entry: usize,
        filled: usize,
    },
    /// Absorbing z ‖ c for J (its progress is in the [`Rejection`]).
    Reject,
    Idle,
}

/// J(z ‖ c) = SHAKE256(z ‖ c, 32 bytes), absorbed one block per
/// permutation of its state, beside other sponges (here and in
/// `x86_64::pools::decaps`).
pub(crate) struct Rejection<'a> {
    z: &'a [u8; 32],
    c: &'a [u8],
    /// The block to absorb before J's next permutation.
    next: usize,
    blocks: usize,
}

impl<'a> Rejection<'a> {
    pub(crate) fn new(z: &'a [u8; 32], c: &'a [u8]) -> Self {
        Self {
            z,
            c,
            next: 0,
            blocks: padded_blocks(32 + c.len(), SHAKE256_RATE),
        }
    }

    /// A J that was computed elsewhere: it needs no permutation.
    pub(crate) fn computed(z: &'a [u8; 32], c: &'a [u8]) -> Self {
        let mut j = Self::new(z, c);
        j.next = j.blocks;
        j
    }

    /// Whether J still needs a permutation.
    pub(crate) fn pending(&self) -> bool {
        self.next < self.blocks
    }

    /// The permutations J still needs.
    fn left(&self) -> usize {
        self.blocks - self.next
    }

    /// XORs J's next block of z ‖ c (padded, if it is the last) into
    /// `state`, before a permutation that carries J.
    pub(crate) fn absorb_next(&mut self, state: &mut [u64; 25]) {
        let start = self.next * SHAKE256_RATE;
        let total = 32 + self.c.len();
        let end = (start + SHAKE256_RATE).min(total);
        self.next += 1;
        if start < 32 {
            xor_bytes(state, 0, &self.z[start..]);
        }
        let from_c = start.max(32);
        xor_bytes(state, from_c - start, &self.c[from_c - 32..end - 32]);
        if !self.pending() {
            xor_padding(state, end - start, SHAKE_DOMAIN, SHAKE256_RATE);
        }
    }
}

/// Number of blocks of a padded message of `len` bytes at rate `rate`.
pub(crate) fn padded_blocks(len: usize, rate: usize) -> usize {
    len / rate + 1
}

/// Where Â[i, j], row-major entry `entry` = i·k + j, is stored in Â^T.
pub(crate) fn transposed(k: usize, entry: usize) -> usize {
    (entry % k) * k + entry / k
}

/// Starts SampleNTT(ρ ‖ j ‖ i) for matrix entry `entry` (row-major k×k
/// index) on a fresh state.
pub(crate) fn start_entry(state: &mut [u64; 25], rho: &[u8; 32], k: usize, entry: usize) {
    *state = [0; 25];
    xor_block(state, rho);
    xor_bytes(state, 32, &[(entry % k) as u8, (entry / k) as u8]);
    xor_padding(state, 34, SHAKE_DOMAIN, SHAKE128_RATE);
}

/// H(ek), and Â^T (`out[j·k + i]` = Â[i, j] = SampleNTT(ρ ‖ j ‖ i)), on
/// `W` = `B::KECCAK_WIDTH` (3 or more) instances of `B`'s multi-way
/// permutation; with `rejection`, J(z ‖ c) too, as (H(ek), J).
#[target_feature(enable = "avx2")]
pub(crate) fn hash_and_sample_matrix<B: PoolKernels, const W: usize>(
    ek: &[u8],
    rho: &[u8; 32],
    k: usize,
    out: &mut [Poly],
    mut rejection: Option<Rejection<'_>>,
) -> ([u8; 32], Option<[u8; 32]>) {
    let entries = k * k;
    count(Primitive::Xof, entries as u64);
    count(Primitive::H, 1);
    const { assert!(W == B::KECCAK_WIDTH && W >= 3) };
    let mut states = [[0u64; 25]; W];
    let mut jobs = [Job::Idle; W];
    let mut next_entry = 0;
    let mut digest = [0u8; 32];
    let mut j_digest = None;

    // The last instance hashes, the one before it absorbs J if asked; the
    // others take the first entries.
    let hasher = W - 1;
    xor_padded_block::<SHA3_256_RATE>(&mut states[hasher], ek, 0, SHA3_DOMAIN);
    jobs[hasher] = Job::Hash { next_block: 1 };
    let hash_blocks = padded_blocks(ek.len(), SHA3_256_RATE);
    let rejecter = W - 2;
    if let Some(j) = rejection.as_mut() {
        count(Primitive::J, 1);
        j.absorb_next(&mut states[rejecter]);
        jobs[rejecter] = Job::Reject;
    }
    let chains = 1 + usize::from(rejection.is_some());
    for (state, job) in states.iter_mut().zip(jobs.iter_mut()).take(W - chains) {
        if next_entry < entries {
            start_entry(state, rho, k, next_entry);
            *job = Job::Sample {
                entry: next_entry,
                filled: 0,
            };
            next_entry += 1;
        }
    }

    let mut chosen = [0usize; W];
    let mut moving = [false; W];
    loop {
        // Which instances move this step: all of them while the matrix has
        // more work left than the lanes beside the chains (the hash, and J
        // if asked) in a four-way step can do in the chains' remaining
        // permutations, else the chains and entries to fill four lanes, so
        // that a backend whose widest permutation costs more than its
        // four-way one uses it only where it shortens the pool.
        let hash_left = match jobs[hasher] {
            Job::Hash { next_block } => hash_blocks + 1 - next_block,
            _ => 0,
        };
        let j_left = match (jobs[rejecter], &rejection) {
            (Job::Reject, Some(j)) => j.left() + 1,
            _ => 0,
        };
        let chain_left = hash_left.max(j_left);
        let matrix_left = 3 * (entries - next_entry)
            + jobs
                .iter()
                .map(|job| match job {
                    Job::Sample { filled, .. } => (N - filled).div_ceil(100),
                    _ => 0,
                })
                .sum::<usize>();
        let beside = 4usize.saturating_sub(chains);
        let lanes = if chain_left == 0 || matrix_left > beside * chain_left {
            W
        } else {
            W.min(4)
        };
        let mut len = 0;
        for (index, job) in jobs.iter().enumerate().rev() {
            moving[index] = len < lanes && !matches!(job, Job::Idle);
            if moving[index] {
                chosen[len] = index;
                len += 1;
            }
        }
        if len == 0 {
            break;
        }
        B::keccak_f1600_many(&mut states, &chosen[..len]);
        for ((state, job), _) in states
            .iter_mut()
            .zip(jobs.iter_mut())
            .zip(moving)
            .filter(|(_, moving)| *moving)
        {
            let finished = match job {
                Job::Hash { next_block } if *next_block < hash_blocks => {
                    xor_padded_block::<SHA3_256_RATE>(state, ek, *next_block, SHA3_DOMAIN);
                    *next_block += 1;
                    false
                }
                Job::Hash { .. } => {
                    read_lanes(state, &mut digest);
                    true
                }
                Job::Reject => match rejection.as_mut() {
                    Some(j) if j.pending() => {
                        j.absorb_next(state);
                        false
                    }
                    _ => {
                        let mut value = [0u8; 32];
                        read_lanes(state, &mut value);
                        j_digest = Some(value);
                        wipe(&mut value, [0; 32]);
                        // J's state holds secrets (z); the slot now samples.
                        wipe(state, [0; 25]);
                        true
                    }
                },
                Job::Sample { entry, filled } => {
                    *filled = B::rejection_sample_block(
                        &mut out[transposed(k, *entry)].coeffs,
                        *filled,
                        state,
                    );
                    *filled == N
                }
                Job::Idle => false,
            };
            if finished {
                *job = Job::Idle;
                if next_entry < entries {
                    start_entry(state, rho, k, next_entry);
                    *job = Job::Sample {
                        entry: next_entry,
                        filled: 0,
                    };
                    next_entry += 1;
                }
            }
        }
    }
    // J's state, if it still has one, was wiped when J finished; the other
    // states are public.
    (digest, j_digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_block_count() {
        // pad10*1 always adds at least one byte: a message that fills its
        // last block takes one more.
        assert_eq!(padded_blocks(0, 136), 1);
        assert_eq!(padded_blocks(135, 136), 1);
        assert_eq!(padded_blocks(136, 136), 2);
        assert_eq!(padded_blocks(140, 136), 2);
    }
}
