//! Key generation on AVX2 as one pool of Keccak sponges (for the AVX2 and
//! the AVX-512 backends, on their multi-way permutations).
//!
//! After G, K-PKE.KeyGen (Algorithm 13) and H(ek) (Algorithm 16) run
//! k² + 2k + 1 sponges: the XOF of SampleNTT for each entry of Â, the PRF
//! of each polynomial of ŝ and ê, and SHA3-256 over ek. Only the hash
//! depends on the others, and only on a prefix of ek at a time: t̂ = Â ∘ ŝ + ê
//! is computed coefficient by coefficient in the NTT domain, so the first
//! coefficients of row i of t̂ are known as soon as every entry of row i of Â
//! has its first coefficients (and ŝ and ê_i are sampled), and H can absorb a
//! block of ek as soon as its bytes are known.
//!
//! So all of them run as one pool on the backend's multi-way permutation.
//! Each step picks up to four sponges that can move (more on the AVX-512
//! backend while the work beside the hash needs them: see
//! `Pool::step_width`), in this order: the hash (the
//! longest chain), the noise of ŝ, then row by row the noise of ê_i and the
//! entries of row i, least advanced first (row 0's entries before its noise
//! where steps can be wider than four and the noise takes one block: see
//! `Pool::choose`). It permutes them together (a
//! lone sponge takes the one-way permutation, which costs a little less than
//! the four-way one), then each consumes its block. Between steps, t̂ is
//! computed and encoded into ek as far as Â allows, [`CHUNK`] coefficients
//! at a time. For ML-KEM-768 that is 10 four-way and 2 one-way permutations
//! after G, where sampling first and hashing afterwards took 11 four-way
//! and 9 one-way ones.
//!
//! The output is the sequential algorithm's (`pke::generate`),
//! byte for byte: every sponge sees the same input, and each coefficient of
//! t̂ is computed by the same formulas. The schedule depends only on how
//! many candidates each matrix block yields, which is public (ρ is part of
//! ek); the noise sponges and buffers, which are secret, are zeroized when
//! they are consumed.

use super::PoolKernels;
use crate::backend::traits::KeyBuffers;
use crate::backend::x86_64::basemul256::finish_public_key;
use crate::backend::x86_64::pools::expand::{padded_blocks, start_entry, transposed};
use crate::backend::x86_64::{cbd, encode};
use crate::hash::{
    read_lanes, xor_block, xor_bytes, xor_padded_block, xor_padding, SHA3_256_RATE, SHA3_DOMAIN,
    SHAKE256_RATE, SHAKE_DOMAIN,
};
use crate::params::ParameterSet;
use crate::poly::{zeroize_all, Poly, N};
use crate::profile_hooks::{count, Primitive};
use crate::wipe::wipe;

/// Coefficients of t̂ computed and encoded at a time (48 bytes of ek); the
/// hash waits for at most this many.
const CHUNK: usize = 32;

/// Where the hash sponge is in the pool; noise stream i is at 1 + i, and
/// matrix entry e (row-major) at 1 + 2k + e.
const HASH: usize = 0;

/// What one sponge of the pool is doing.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Job {
    /// H(ek), absorbing block `next_block` of ek next.
    Hash { next_block: usize },
    /// PRF stream `index` (nonce `index`: ŝ for index < k, then ê), with
    /// `squeezed` of its 64·eta bytes read.
    Noise { index: usize, squeezed: usize },
    /// SampleNTT for row-major entry `entry` of Â.
    Sample { entry: usize },
    /// Nothing left to do.
    Done,
}

/// The most sponges one step can permute (the widest backend's).
const MAX_STEP: usize = 8;

/// The sponges chosen for one permutation step: at most `width`.
struct Step {
    sponges: [usize; MAX_STEP],
    len: usize,
    width: usize,
}

impl Step {
    /// Adds sponge `index` if there is room; reports whether the step is full.
    fn push(&mut self, index: usize) -> bool {
        if self.len < self.width {
            self.sponges[self.len] = index;
            self.len += 1;
        }
        self.len == self.width
    }
}

/// The permutations [`Pool::step_width`] expects a matrix entry with
/// `blocks` blocks squeezed to need still, if it is not done: three blocks
/// nearly always fill an entry, and one more is rare.
fn sample_left(blocks: u8) -> usize {
    3usize.saturating_sub(usize::from(blocks)).max(1)
}

/// The indices of the bits set in `mask`, lowest first.
fn sponges(mut mask: u32) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        let index = mask.trailing_zeros() as usize;
        mask &= mask.wrapping_sub(1);
        (index < 32).then_some(index)
    })
}

/// The pool and the key being built.
///
/// `SPONGES` is 1 + 2k + k² and `NOISE_BUFFERS` is 2k when eta1 = 3 (a
/// PRF output spans two blocks), else 0: array lengths cannot be computed
/// from `K` on stable Rust, so the caller passes them (checked at compile
/// time).
struct Pool<
    'a,
    B: PoolKernels,
    const K: usize,
    const ETA1: usize,
    const SPONGES: usize,
    const NOISE_BUFFERS: usize,
> {
    states: [[u64; 25]; SPONGES],
    jobs: [Job; SPONGES],
    /// Blocks squeezed per sponge (a matrix entry's progress, for the
    /// priority).
    blocks: [u8; SPONGES],
    /// Coefficients sampled per matrix entry (indexed by entry, row-major;
    /// only the first k² are used).
    filled: [usize; SPONGES],
    /// Bit `i` set while sponge `i` has work left (its job is not `Done`).
    pending: u32,
    /// Permutations the noise and matrix sponges are still expected to
    /// need (see [`Pool::step_width`]), kept up to date by
    /// [`Pool::consume`].
    other_left: usize,
    /// PRF output of each noise stream that spans two blocks (eta1 = 3),
    /// until it is complete.
    noise_bytes: [[u8; 64 * 3]; NOISE_BUFFERS],
    /// Â^T (k² polynomials: Â[i, j] at j·k + i, the layout of
    /// `pke::expanded_key_len`) then t̂ (k).
    expanded: &'a mut [Poly],
    s_hat: &'a mut [Poly],
    e_hat: [Poly; K],
    ek: &'a mut [u8],
    /// The row of t̂ being computed, and its coefficients done so far.
    t_row: usize,
    t_done: usize,
    /// Bytes of ek known so far.
    ek_ready: usize,
    /// H(ek), once the hash has permuted its last block: there is no
    /// digest before (no all-zero placeholder that a schedule ending early
    /// could hand out as the hash).
    digest: Option<[u8; 32]>,
    _backend: core::marker::PhantomData<B>,
}

/// [`generate`] for the parameter set `P` on backend `B` (whose
/// `keccak_f1600_many` the pool runs on): the contract of
/// `Schedule::generate_key`.
#[target_feature(enable = "avx2")]
pub(crate) fn generate_for<B: PoolKernels, P: ParameterSet>(
    rho: &[u8; 32],
    sigma: &[u8; 32],
    out: &mut KeyBuffers<'_>,
) -> Option<[u8; 32]> {
    // (k, eta1) of the three parameter sets, with the pool's sizes.
    match (P::K, P::ETA1) {
        (2, 3) => generate::<B, 2, 3, 9, 4>(rho, sigma, out),
        (3, 2) => generate::<B, 3, 2, 16, 0>(rho, sigma, out),
        (4, 2) => generate::<B, 4, 2, 25, 0>(rho, sigma, out),
        _ => unreachable!("FIPS 203 has three parameter sets"),
    }
}

/// Algorithm 13 after G, with ek = ByteEncode_12(t̂) ‖ ρ and H(ek), for the
/// parameter set of rank `K` and eta1 = `ETA1` (`SPONGES` and
/// `NOISE_BUFFERS` as in [`Pool`]): the contract of
/// `Schedule::generate_key`. H(ek) is the hash sponge's output, read when
/// it permutes its last block, which needs all of ek (`hash_ready`): a
/// schedule that stopped before (it cannot: each step that leaves the hash
/// waiting finishes a noise stream or samples an entry, and once all are
/// done t̂ and ek are) gives `None`, on which the caller runs the
/// sequential algorithm, never a wrong hash.
#[target_feature(enable = "avx2")]
fn generate<
    B: PoolKernels,
    const K: usize,
    const ETA1: usize,
    const SPONGES: usize,
    const NOISE_BUFFERS: usize,
>(
    rho: &[u8; 32],
    sigma: &[u8; 32],
    out: &mut KeyBuffers<'_>,
) -> Option<[u8; 32]> {
    const {
        assert!(SPONGES == 1 + 2 * K + K * K && SPONGES < 32);
        assert!(NOISE_BUFFERS == if ETA1 == 3 { 2 * K } else { 0 });
    }
    count(Primitive::Xof, (K * K) as u64);
    count(Primitive::Prf, 2 * K as u64);
    count(Primitive::H, 1);
    let k = K;
    let mut pool = Pool::<B, K, ETA1, SPONGES, NOISE_BUFFERS>::new(out);
    pool.start(rho, sigma);
    while pool.step() {
        pool.advance_public_key();
    }
    debug_assert!(pool.t_row == k && pool.pending == 0 && pool.other_left == 0);
    debug_assert!(pool.jobs.iter().all(|&job| job == Job::Done));
    debug_assert!(
        pool.digest.is_some(),
        "key generation's pool left ek unfinished"
    );
    // Each noise stream's bytes and state were wiped when it was consumed
    // (all are, whenever the pool stops: a pending stream can always move).
    zeroize_all(&mut pool.e_hat);
    pool.digest
}

impl<
        B: PoolKernels,
        const K: usize,
        const ETA1: usize,
        const SPONGES: usize,
        const NOISE_BUFFERS: usize,
    > Pool<'_, B, K, ETA1, SPONGES, NOISE_BUFFERS>
{
    /// Hash blocks at the end that [`Pool::step_width`] leaves out of its
    /// count. A row of t̂ takes about 3k + 1 blocks beside the hash (k
    /// entries of about three blocks, and ê_i's noise) while the hash
    /// absorbs the row's 384 bytes of ek in about 2.8 blocks: 2.8 lanes a
    /// hash block for ML-KEM-512 (whose noise takes two), 3.5 for -768 and
    /// 4.6 for -1024. Three lanes beside the hash about keep up with the
    /// first two, but ML-KEM-1024's rows fall behind and the hash waits (17
    /// steps where 14 can do). Counting its last three blocks out (by then
    /// the last row is finished and nothing runs beside the hash) moves
    /// eight-way steps earlier: 14 steps on average over 200 seeds. For
    /// ML-KEM-512 and -768 the rule adds eight-way steps that shorten
    /// nothing, so they count every block (measured: docs/performance.md,
    /// "Lab notes").
    const HASH_TAIL: usize = if K == 4 { 3 } else { 0 };

    /// A pool writing the key into `out`, its sponges empty and idle
    /// ([`Pool::start`] starts them). Returned by value before any secret
    /// is in it: σ goes into the states where they live.
    #[inline(always)]
    fn new<'o>(out: &'o mut KeyBuffers<'_>) -> Pool<'o, B, K, ETA1, SPONGES, NOISE_BUFFERS> {
        let (expanded, s_hat, ek) = (&mut *out.expanded, &mut *out.s_hat, &mut *out.ek);
        let k = K;
        debug_assert!(expanded.len() == k * k + k);
        Pool {
            states: [[0; 25]; SPONGES],
            jobs: [Job::Done; SPONGES],
            blocks: [0; SPONGES],
            filled: [0; SPONGES],
            noise_bytes: [[0; 64 * 3]; NOISE_BUFFERS],
            pending: (1 << SPONGES) - 1,
            // A noise stream needs 64·eta1 bytes: one block, or two for eta1 = 3.
            other_left: 2 * k * (64 * ETA1).div_ceil(SHAKE256_RATE) + k * k * sample_left(0),
            expanded,
            s_hat,
            e_hat: [Poly::ZERO; K],
            ek,
            t_row: 0,
            t_done: 0,
            ek_ready: 0,
            digest: None,
            _backend: core::marker::PhantomData,
        }
    }

    /// Starts every sponge: the hash, the noise streams of ŝ and ê from σ,
    /// and the matrix entries from ρ (which also ends ek).
    fn start(&mut self, rho: &[u8; 32], sigma: &[u8; 32]) {
        let k = K;
        self.ek[384 * k..].copy_from_slice(rho);
        self.jobs[HASH] = Job::Hash { next_block: 0 };
        for index in 0..2 * k {
            // PRF(σ, index): σ ‖ index, padded.
            let state = &mut self.states[1 + index];
            xor_block(state, sigma);
            xor_bytes(state, 32, &[index as u8]);
            xor_padding(state, 33, SHAKE_DOMAIN, SHAKE256_RATE);
            self.jobs[1 + index] = Job::Noise { index, squeezed: 0 };
        }
        for entry in 0..k * k {
            start_entry(&mut self.states[1 + 2 * k + entry], rho, k, entry);
            self.jobs[1 + 2 * k + entry] = Job::Sample { entry };
        }
    }

    /// Whether the hash can absorb its next block now.
    fn hash_ready(&self) -> bool {
        match self.jobs[HASH] {
            // The last block is padded and needs the whole of ek.
            Job::Hash { next_block } => {
                self.ek_ready >= ((next_block + 1) * SHA3_256_RATE).min(self.ek.len())
            }
            _ => false,
        }
    }

    /// The sponges of the next step, in priority order.
    fn choose(&self) -> Step {
        let k = K;
        let mut step = Step {
            sponges: [0; MAX_STEP],
            len: 0,
            width: self.step_width(),
        };
        if self.hash_ready() && step.push(HASH) {
            return step;
        }
        let row_bits = (1u32 << k) - 1;
        for sponge in sponges(self.pending & (row_bits << 1)) {
            if step.push(sponge) {
                return step;
            }
        }
        for row in 0..k {
            let noise = 1 + k + row;
            let noise_pending = self.pending & (1 << noise) != 0;
            // The hash's first block (136 bytes of ek: 91 coefficients of
            // t̂, 96 at CHUNK's granularity) needs each entry of row 0 two
            // XOF blocks in, as one yields 91 on average; the first hash
            // block of each later row needs one. ê's noise streams need
            // one block (eta1 = 2) or two (eta1 = 3). So on a backend with
            // steps wider than four, row 0 with eta1 = 2 has its entries
            // before its noise: ML-KEM-768 and -1024's first (eight-way)
            // step then starts all of row 0 beside ŝ. Four-way steps
            // cannot, and keep the order.
            let noise_first = ETA1 == 3 || row > 0 || B::KECCAK_WIDTH <= 4;
            if noise_first && noise_pending && step.push(noise) {
                return step;
            }
            // The row's unfinished entries, least advanced first: entries
            // of a row are at most one block apart, so two passes suffice.
            let entries = self.pending & (row_bits << (1 + 2 * k + row * k));
            if let Some(least) = sponges(entries).map(|sponge| self.blocks[sponge]).min() {
                for pass_least in [true, false] {
                    for sponge in sponges(entries) {
                        if (self.blocks[sponge] == least) == pass_least && step.push(sponge) {
                            return step;
                        }
                    }
                }
            }
            if !noise_first && noise_pending && step.push(noise) {
                return step;
            }
        }
        step
    }

    /// How many sponges the next step may take: four, or more (up to the
    /// backend's width) only while the work left beside the hash exceeds
    /// what three lanes next to each of its remaining blocks, less the
    /// last [`Self::HASH_TAIL`], can do. Steps
    /// that carry the hash are as many as its blocks whatever their width,
    /// and a four-way permutation costs about what a one-way one does, so
    /// lanes next to the hash come free; a wider permutation costs more
    /// (see `PoolKernels::keccak_f1600_many`). The estimate reads only public
    /// progress: blocks squeezed per matrix entry and per noise stream.
    fn step_width(&self) -> usize {
        let widest = B::KECCAK_WIDTH.min(MAX_STEP);
        let hash_left = match self.jobs[HASH] {
            Job::Hash { next_block } => padded_blocks(self.ek.len(), SHA3_256_RATE) - next_block,
            _ => 0,
        };
        if self.other_left > 3 * hash_left.saturating_sub(Self::HASH_TAIL) + 4 {
            widest
        } else {
            widest.min(4)
        }
    }

    /// Runs one permutation step; false when every sponge is done.
    #[target_feature(enable = "avx2")]
    fn step(&mut self) -> bool {
        let step = self.choose();
        let chosen = &step.sponges[..step.len];
        if chosen.is_empty() {
            return false;
        }
        if let Job::Hash { next_block } = self.jobs[HASH] {
            // `choose` takes the hash first when it takes it at all.
            if chosen[0] == HASH {
                let state = &mut self.states[HASH];
                xor_padded_block::<SHA3_256_RATE>(state, self.ek, next_block, SHA3_DOMAIN);
            }
        }
        self.permute(chosen);
        for &sponge in chosen {
            self.consume(sponge);
        }
        true
    }

    /// Keccak-f[1600] on the chosen sponges, on the backend's multi-way
    /// permutation (which picks the one-way one for a single sponge).
    #[target_feature(enable = "avx2")]
    fn permute(&mut self, chosen: &[usize]) {
        B::keccak_f1600_many(&mut self.states, chosen);
    }

    /// Marks sponge `index` as done.
    fn finish(&mut self, index: usize) {
        self.jobs[index] = Job::Done;
        self.pending &= !(1 << index);
    }

    /// Lets sponge `index` use the block its permutation produced.
    #[target_feature(enable = "avx2")]
    fn consume(&mut self, index: usize) {
        let state = &mut self.states[index];
        match self.jobs[index] {
            Job::Hash { next_block } => {
                let next_block = next_block + 1;
                if next_block == padded_blocks(self.ek.len(), SHA3_256_RATE) {
                    let mut digest = [0u8; 32];
                    read_lanes(state, &mut digest);
                    self.digest = Some(digest);
                    self.finish(index);
                } else {
                    self.jobs[index] = Job::Hash { next_block };
                }
            }
            Job::Noise {
                index: stream,
                squeezed,
            } => {
                let len = 64 * ETA1;
                let k = K;
                // One block of the stream's share of `other_left`.
                self.other_left -= 1;
                let poly = if stream < k {
                    &mut self.s_hat[stream]
                } else {
                    &mut self.e_hat[stream - k]
                };
                if ETA1 == 2 {
                    // 128 bytes: the first 16 lanes of one block.
                    let words: &[u64; 16] = state[..16].try_into().expect("16 lanes");
                    cbd::sample_poly_cbd2(words, poly);
                } else {
                    let bytes = &mut self.noise_bytes[stream];
                    let end = (squeezed + SHAKE256_RATE).min(len);
                    read_lanes(state, &mut bytes[squeezed..end]);
                    if end < len {
                        self.jobs[index] = Job::Noise {
                            index: stream,
                            squeezed: end,
                        };
                        return;
                    }
                    cbd::sample_poly_cbd::<ETA1>(&bytes[..len], poly);
                    wipe(bytes, [0; 64 * 3]);
                }
                wipe(state, [0; 25]);
                B::ntt(poly);
                if stream < k {
                    // ŝ is stored canonical; t̂ does not depend on which
                    // representatives it is computed from.
                    poly.make_canonical();
                }
                self.finish(index);
            }
            Job::Sample { entry } => {
                let blocks = self.blocks[index];
                self.blocks[index] = blocks.saturating_add(1);
                // The entry's share of `other_left`, replaced below.
                self.other_left -= sample_left(blocks);
                let filled = &mut self.filled[entry];
                let coeffs = &mut self.expanded[transposed(K, entry)].coeffs;
                *filled = B::rejection_sample_block(coeffs, *filled, state);
                if *filled == N {
                    self.finish(index);
                } else {
                    self.other_left += sample_left(self.blocks[index]);
                }
            }
            Job::Done => unreachable!("a finished sponge is never chosen"),
        }
    }

    /// Computes and encodes t̂ as far as the sampled coefficients allow.
    #[target_feature(enable = "avx2")]
    fn advance_public_key(&mut self) {
        let k = K;
        let noise_pending = |stream: usize| self.pending & (1 << (1 + stream)) != 0;
        if (0..k).any(noise_pending) {
            return;
        }
        while self.t_row < k && !noise_pending(k + self.t_row) {
            let row = self.t_row;
            let sampled = self.filled[row * k..(row + 1) * k]
                .iter()
                .copied()
                .min()
                .unwrap_or(N);
            let target = if sampled == N {
                N
            } else {
                sampled / CHUNK * CHUNK
            };
            if target > self.t_done {
                let start = self.t_done;
                let (a_hat, t_hat) = self.expanded.split_at_mut(k * k);
                let t = &mut t_hat[row].coeffs[start..target];
                let a_row: [&Poly; K] =
                    core::array::from_fn(|j| &a_hat[transposed(K, row * K + j)]);
                B::multiply_accumulate_range(t, &a_row, self.s_hat, start);
                finish_public_key(t, &self.e_hat[row].coeffs[start..target]);
                let bytes = &mut self.ek[384 * row + start * 3 / 2..384 * row + target * 3 / 2];
                encode::encode_12::<false>(t, bytes);
                self.t_done = target;
            }
            if self.t_done < N {
                break;
            }
            self.t_row += 1;
            self.t_done = 0;
        }
        self.ek_ready = if self.t_row == k {
            self.ek.len()
        } else {
            384 * self.t_row + self.t_done * 3 / 2
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::select::BackendKind;
    use crate::backend::x86_64::Avx2;
    use sha3::{Digest, Sha3_256};

    /// ML-KEM-768's pool on AVX2, step by step: no digest while the hash
    /// sponge has blocks left (so a schedule stopped early has none to
    /// give), then H(ek) of the finished ek.
    #[target_feature(enable = "avx2")]
    fn check_digest_only_when_hashed() {
        let rho: [u8; 32] = core::array::from_fn(|i| (i * 13 + 5) as u8);
        let sigma: [u8; 32] = core::array::from_fn(|i| (i * 7 + 1) as u8);
        let mut expanded = vec![Poly::ZERO; 12];
        let mut s_hat = vec![Poly::ZERO; 3];
        let mut ek = vec![0u8; 384 * 3 + 32];
        let mut out = KeyBuffers {
            expanded: &mut expanded,
            s_hat: &mut s_hat,
            ek: &mut ek,
        };
        let mut pool = Pool::<Avx2, 3, 2, 16, 0>::new(&mut out);
        pool.start(&rho, &sigma);
        let mut steps = 0;
        while pool.step() {
            pool.advance_public_key();
            steps += 1;
            let hashing = pool.pending & (1 << HASH) != 0;
            assert_eq!(pool.digest.is_some(), !hashing, "step {steps}");
        }
        let digest = pool.digest.expect("the pool finished");
        zeroize_all(&mut pool.e_hat);
        assert_eq!(digest, <[u8; 32]>::from(Sha3_256::digest(&ek)));
    }

    #[test]
    fn the_digest_exists_only_once_ek_is_hashed() {
        if !BackendKind::Avx2.is_available() {
            eprintln!("avx2 not available; skipping");
            return;
        }
        // SAFETY: the CPU has AVX2 (just checked).
        #[allow(unsafe_code)]
        unsafe {
            check_digest_only_when_hashed()
        }
    }
}
