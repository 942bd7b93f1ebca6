//! A pool of sponges on the two-way Keccak: each sponge is a chain of
//! permutations (an absorption block by block, or a squeeze block by
//! block), and every step permutes the first two chains that still need
//! one, so the two-way permutation runs full while two chains are left and
//! the one-way permutation only for a last one. Parsing an encapsulation
//! key runs H(ek) (and, for a decapsulation key parsed for one ciphertext,
//! J(z ‖ c)) beside Â's entries; key generation runs Â's entries.
//!
//! Each sponge sees the blocks, padding and squeeze of its one-way form
//! (`hash::h`, `hash::j`, `sample::sample_ntt`), so the bytes are the
//! portable backend's. What is scheduled when depends on message lengths
//! and on the rejection sampling of Â, both public; J's state holds z and
//! is wiped.

use crate::backend::aarch64::keccak_x2::keccak_f1600_x2;
use crate::backend::aarch64::sample::{absorbed, rejection_sample_block};
use crate::hash::{
    read_lanes, xor_bytes, xor_padding, SHA3_256_RATE, SHA3_DOMAIN, SHAKE128_RATE, SHAKE256_RATE,
    SHAKE_DOMAIN,
};
use crate::poly::{Poly, N};
use crate::profile_hooks::{count, permutation_end, permutation_start, Primitive};
use crate::wipe::wipe;

/// The rate of H (SHA3-256) and J (SHAKE256), which is the same.
const HASH_RATE: usize = SHA3_256_RATE;
const _: () = assert!(SHA3_256_RATE == SHAKE256_RATE);

/// The most sponges in one pool: H, J and Â's k² ≤ 16 entries.
const MAX_SPONGES: usize = 18;

/// A hash absorbing `parts` (their concatenation) block by block, then
/// squeezing 32 bytes.
struct Hash<'a> {
    parts: [&'a [u8]; 2],
    domain: u8,
    block: usize,
    blocks: usize,
    out: [u8; 32],
}

impl<'a> Hash<'a> {
    fn new(parts: [&'a [u8]; 2], domain: u8) -> Self {
        let len = parts[0].len() + parts[1].len();
        Hash {
            parts,
            domain,
            block: 0,
            // The padded last block included.
            blocks: len / HASH_RATE + 1,
            out: [0; 32],
        }
    }

    /// XORs the next block into `state`; false once all are absorbed.
    fn next(&mut self, state: &mut [u64; 25]) -> bool {
        if self.block == self.blocks {
            return false;
        }
        let (start, end) = (self.block * HASH_RATE, (self.block + 1) * HASH_RATE);
        let mut offset = 0;
        for part in self.parts {
            let (from, to) = (offset.max(start), (offset + part.len()).min(end));
            if from < to {
                xor_bytes(state, from - start, &part[from - offset..to - offset]);
            }
            offset += part.len();
        }
        if offset < end {
            xor_padding(state, offset - start, self.domain, HASH_RATE);
        }
        self.block += 1;
        true
    }

    /// Takes the digest once the last block is permuted.
    fn permuted(&mut self, state: &[u64; 25]) {
        if self.block == self.blocks {
            read_lanes(state, &mut self.out);
        }
    }
}

/// What a sponge of the pool computes.
#[derive(Clone, Copy)]
enum Job {
    /// `hashes[i]`.
    Hash(usize),
    /// SampleNTT (Algorithm 7) into `out[i]`, a block at a time.
    Entry(usize),
}

/// The sponges of one pool and what each computes.
struct Pool<'a, 'b> {
    states: [[u64; 25]; MAX_SPONGES],
    jobs: [Job; MAX_SPONGES],
    len: usize,
    hashes: &'a mut [Hash<'b>],
    out: &'a mut [Poly],
    filled: [usize; 16],
}

impl Pool<'_, '_> {
    fn push(&mut self, state: [u64; 25], job: Job) {
        self.states[self.len] = state;
        self.jobs[self.len] = job;
        self.len += 1;
    }

    /// Readies sponge `s` for its next permutation; false once it is done.
    fn next(&mut self, s: usize) -> bool {
        match self.jobs[s] {
            Job::Hash(h) => self.hashes[h].next(&mut self.states[s]),
            Job::Entry(e) => self.filled[e] < N,
        }
    }

    /// Takes what sponge `s`'s permutation gave.
    #[target_feature(enable = "neon")]
    fn permuted(&mut self, s: usize) {
        match self.jobs[s] {
            Job::Hash(h) => self.hashes[h].permuted(&self.states[s]),
            Job::Entry(e) => {
                self.filled[e] = rejection_sample_block(
                    &mut self.out[e].coeffs,
                    self.filled[e],
                    &self.states[s],
                );
            }
        }
    }

    /// Runs every sponge to its end: each step permutes the first two that
    /// have a permutation left (in the order pushed), on the two-way
    /// permutation, or a last one on the one-way permutation.
    #[target_feature(enable = "neon")]
    fn run(&mut self) {
        let mut first_live = 0;
        loop {
            let mut picked = [0; 2];
            let mut found = 0;
            let mut s = first_live;
            while found < 2 && s < self.len {
                if self.next(s) {
                    picked[found] = s;
                    found += 1;
                } else if s == first_live {
                    first_live += 1;
                }
                s += 1;
            }
            let start = permutation_start();
            match found {
                0 => return,
                1 => {
                    keccak::f1600(&mut self.states[picked[0]]);
                    permutation_end(start, 1);
                }
                _ => {
                    let (head, tail) = self.states.split_at_mut(picked[1]);
                    keccak_f1600_x2(&mut head[picked[0]], &mut tail[0]);
                    permutation_end(start, 2);
                }
            }
            for &s in &picked[..found] {
                self.permuted(s);
            }
        }
    }
}

impl Drop for Pool<'_, '_> {
    fn drop(&mut self) {
        // J's state holds z; Â's sponges hold only the public ρ's XOF.
        for s in 0..self.len {
            if let Job::Hash(_) = self.jobs[s] {
                wipe(&mut self.states[s], [0; 25]);
            }
        }
    }
}

/// A pool of Â's entries: `out[i*k + j]` = SampleNTT(ρ ‖ j ‖ i) (row-major
/// Â) or, `transposed`, `out[j*k + i]` = SampleNTT(ρ ‖ j ‖ i) (Â^T); the
/// hashes `hashes` are pushed first (the long chains lead).
fn pool<'a, 'b>(
    rho: &[u8; 32],
    k: usize,
    out: &'a mut [Poly],
    transposed: bool,
    hashes: &'a mut [Hash<'b>],
) -> Pool<'a, 'b> {
    count(Primitive::Xof, out.len() as u64);
    let entries = out.len();
    let mut pool = Pool {
        states: [[0; 25]; MAX_SPONGES],
        jobs: [Job::Entry(0); MAX_SPONGES],
        len: 0,
        hashes,
        out,
        filled: [0; 16],
    };
    for h in 0..pool.hashes.len() {
        pool.push([0; 25], Job::Hash(h));
    }
    for index in 0..entries {
        let (outer, inner) = ((index / k) as u8, (index % k) as u8);
        let ji = if transposed {
            [outer, inner]
        } else {
            [inner, outer]
        };
        pool.push(absorbed::<SHAKE128_RATE>(&[rho, &ji]), Job::Entry(index));
    }
    pool
}

/// `Sampling::sample_matrix`: Â row-major, `out[i*k + j]` = SampleNTT(ρ ‖
/// j ‖ i).
#[target_feature(enable = "neon")]
pub(crate) fn sample_matrix(rho: &[u8; 32], k: usize, out: &mut [Poly]) {
    pool(rho, k, out, false, &mut []).run();
}

/// `Schedule::hash_and_sample_matrix`: H(ek), J(z ‖ c) if asked, and Â^T
/// (`out[j*k + i]` = Â[i, j] = SampleNTT(ρ ‖ j ‖ i)) in one pool, the long
/// hashes first.
#[target_feature(enable = "neon")]
pub(crate) fn hash_and_sample_matrix(
    ek: &[u8],
    rho: &[u8; 32],
    k: usize,
    out: &mut [Poly],
    rejection: Option<(&[u8; 32], &[u8])>,
) -> ([u8; 32], Option<[u8; 32]>) {
    count(Primitive::H, 1);
    let h = Hash::new([ek, &[]], SHA3_DOMAIN);
    match rejection {
        Some((z, c)) => {
            count(Primitive::J, 1);
            let mut hashes = [h, Hash::new([z, c], SHAKE_DOMAIN)];
            pool(rho, k, out, true, &mut hashes).run();
            (hashes[0].out, Some(hashes[1].out))
        }
        None => {
            let mut hashes = [h];
            pool(rho, k, out, true, &mut hashes).run();
            (hashes[0].out, None)
        }
    }
}
