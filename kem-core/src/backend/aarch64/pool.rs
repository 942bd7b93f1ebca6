//! Pools of sponges on the two-way Keccak: each sponge is a chain of
//! permutations (an absorption block by block, or a squeeze block by
//! block), and every step permutes the first two chains that can take one,
//! so the two-way permutation runs full while two chains are left and the
//! one-way permutation only for a last one. Key generation samples the
//! noise ŝ ‖ ê two streams at a time ([`noise_pairs`]), then runs Â row by
//! row and H(ek), which absorbs t̂ as it is computed;
//! parsing an encapsulation key runs H(ek) beside Â; decapsulation's
//! hashes ([`decaps_hashes`]) run G, J(z ‖ c) and the re-encryption's
//! noise two at a time.
//!
//! Each sponge sees the blocks, padding and squeeze of its one-way form
//! (`hash::g`, `hash::h`, `hash::j`, `hash::prf`, `sample::sample_ntt`), so
//! the bytes are the portable backend's. What is scheduled when depends on
//! message lengths and on the rejection sampling of Â, both public; the
//! states and buffers that hold secrets (noise, G's m', J's z) are
//! wiped.

use crate::backend::aarch64::keccak_x2::keccak_f1600_x2;
use crate::backend::aarch64::ntt::{key_row, ntt, ntt_canonical};
use crate::backend::aarch64::sample::{
    absorb_into, absorb_seed, cbd_from_block, rejection_sample_block, xor_into_state,
};
use crate::backend::aarch64::Neon;
use crate::backend::traits::{DecapsHashInput, Keccak, KeyBuffers};
use crate::hash::{
    read_lanes, xor_padding, SHA3_256_RATE, SHA3_512_RATE, SHA3_DOMAIN, SHAKE128_RATE,
    SHAKE256_RATE, SHAKE_DOMAIN,
};
use crate::params::{ParameterSet, PolyVec};
use crate::poly::{zeroize_all, Poly, N};
use crate::profile_hooks::{count, permutation_end, permutation_start, Primitive};
use crate::wipe::wipe;

/// The rate of H (SHA3-256) and J (SHAKE256), which is the same.
const HASH_RATE: usize = SHA3_256_RATE;
const _: () = assert!(SHA3_256_RATE == SHAKE256_RATE);

/// The most sponges in one pool: H(ek) and Â's k² ≤ 16 entries.
const MAX_SPONGES: usize = 17;
const _: () = assert!(MAX_SPONGES <= 32, "Pool::live is a u32");

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
    #[target_feature(enable = "neon")]
    fn next(&mut self, state: &mut [u64; 25]) -> bool {
        if self.block == self.blocks {
            return false;
        }
        let (start, end) = (self.block * HASH_RATE, (self.block + 1) * HASH_RATE);
        let mut offset = 0;
        for part in self.parts {
            let (from, to) = (offset.max(start), (offset + part.len()).min(end));
            if from < to {
                xor_into_state(state, from - start, &part[from - offset..to - offset]);
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

/// Key generation's part of a pool: t̂ row by row once its row of Â is in
/// (the noise is, before the pool runs), and H(ek) absorbing ek as the rows
/// are encoded into it.
struct KeyGen<'a> {
    k: usize,
    rho: &'a [u8; 32],
    s_hat: &'a [Poly],
    e: &'a [Poly],
    t_hat: &'a mut [Poly],
    /// Per row of Â, its entries not yet fully sampled.
    entries_left: [u8; 4],
    /// The rows of t̂ done, and the coefficients done of the next.
    rows_done: usize,
    row_done: usize,
    ek: &'a mut [u8],
    /// How many bytes of `ek` are written.
    written: usize,
    /// H(ek)'s next block.
    block: usize,
    h: [u8; 32],
}

impl KeyGen<'_> {
    /// H(ek)'s blocks, the padded last one included.
    fn blocks(&self) -> usize {
        self.ek.len() / HASH_RATE + 1
    }

    /// Whether H(ek)'s next block is written, so that it can be absorbed
    /// now (once all are absorbed, H(ek) is no longer live and the answer
    /// no longer read).
    fn hash_ready(&self) -> bool {
        self.written >= ((self.block + 1) * HASH_RATE).min(self.ek.len())
    }

    /// XORs H(ek)'s next block into `state` (see [`Self::hash_ready`]).
    #[target_feature(enable = "neon")]
    fn absorb(&mut self, state: &mut [u64; 25]) {
        let start = self.block * HASH_RATE;
        let end = (start + HASH_RATE).min(self.ek.len());
        xor_into_state(state, 0, &self.ek[start..end]);
        if end - start < HASH_RATE {
            xor_padding(state, end - start, SHA3_DOMAIN, HASH_RATE);
        }
        self.block += 1;
    }

    /// t̂_i = Â[i] ∘ ŝ + ê_i, encoded into ek, row after row as its entries
    /// of Â^T (`a_hat_t`) are sampled (`filled`); the
    /// last row 16 coefficients at a time, so that H(ek) can absorb its
    /// start while its entries are still being sampled.
    #[target_feature(enable = "neon")]
    fn finish_rows(&mut self, a_hat_t: &[Poly], filled: &[usize]) {
        let k = self.k;
        while self.rows_done < k {
            let i = self.rows_done;
            // Rows before the last only whole: H(ek) has other sponges to
            // pair with until the last row, and fewer calls cost less.
            let ready = if self.entries_left[i] == 0 {
                N
            } else if i + 1 == k {
                // Row i of Â is Â^T's entries i, k + i, ...
                (0..k)
                    .map(|j| filled[j * k + i])
                    .min()
                    .map_or(0, |f| f & !15)
            } else {
                return;
            };
            if ready <= self.row_done {
                return;
            }
            key_row(
                &mut self.t_hat[i],
                a_hat_t,
                i,
                self.s_hat,
                &self.e[i],
                &mut self.ek[384 * i..384 * (i + 1)],
                self.row_done..ready,
            );
            self.written = 384 * i + ready / 16 * 24;
            self.row_done = ready;
            if ready == N {
                self.rows_done += 1;
                self.row_done = 0;
                if self.rows_done == k {
                    self.ek[384 * k..].copy_from_slice(self.rho);
                    self.written = self.ek.len();
                }
            }
        }
    }
}

/// Where a pool puts Â's entries and in which order it samples them.
#[derive(Clone, Copy)]
enum Layout {
    /// Â row-major (`out[i*k + j]` = Â[i, j]), rows in order.
    RowMajor,
    /// Â^T (`out[j*k + i]` = Â[i, j]), its rows (Â's columns) in order.
    Transposed,
    /// Â^T, but Â's rows in order (key generation, whose t̂ is row by row).
    RowsIntoTransposed,
}

/// What a sponge of the pool computes.
#[derive(Clone, Copy)]
enum Job {
    /// `hashes[i]`.
    Hash(usize),
    /// SampleNTT (Algorithm 7) into `out[i]`, a block at a time.
    Entry(usize),
    /// Key generation's H(ek).
    EkHash,
}

/// The sponges of one pool and what each computes.
struct Pool<'a, 'b> {
    states: [[u64; 25]; MAX_SPONGES],
    jobs: [Job; MAX_SPONGES],
    len: usize,
    /// The sponges not yet done, bit s for sponge s (the order pushed is the
    /// order of preference). Every live sponge can take its next
    /// permutation at once, but for key generation's H(ek) (bit `gated`),
    /// which waits for the rows of t̂: `waiting` has its bit while it does.
    live: u32,
    gated: u32,
    waiting: u32,
    hashes: &'a mut [Hash<'b>],
    out: &'a mut [Poly],
    filled: [usize; 16],
    keygen: Option<KeyGen<'a>>,
}

/// The two-way permutation on `a` and `b`, counted for profiling.
#[target_feature(enable = "neon")]
fn permute_two(a: &mut [u64; 25], b: &mut [u64; 25]) {
    let start = permutation_start();
    keccak_f1600_x2(a, b);
    permutation_end(start, 2);
}

/// The one-way permutation on `state`, counted for profiling.
#[target_feature(enable = "neon")]
fn permute_one(state: &mut [u64; 25]) {
    let start = permutation_start();
    <Neon as Keccak>::keccak_f1600(state);
    permutation_end(start, 1);
}

/// The two different states `states[a]` and `states[b]`, mutably (in
/// index order: the permutations do not care which is which).
fn two_states(states: &mut [[u64; 25]], a: usize, b: usize) -> (&mut [u64; 25], &mut [u64; 25]) {
    debug_assert_ne!(a, b);
    let (head, tail) = states.split_at_mut(a.max(b));
    (&mut head[a.min(b)], &mut tail[0])
}

/// The noise polynomial of stream `i` of 2k (or 2k + 1): `first[i]` for
/// i < k, then `rest[i - k]`.
fn noise_poly<'p>(i: usize, k: usize, first: &'p mut [Poly], rest: &'p mut [Poly]) -> &'p mut Poly {
    match i.checked_sub(k) {
        None => &mut first[i],
        Some(r) => &mut rest[r],
    }
}

/// A pool's permutations on the two-way Keccak when two sponges are ready
/// and on the one-way Keccak for a lone one.
#[target_feature(enable = "neon")]
fn permute(states: &mut [[u64; 25]; MAX_SPONGES], picked: &[usize]) {
    match *picked {
        [s] => permute_one(&mut states[s]),
        [a, b] => {
            let (a, b) = two_states(states, a, b);
            permute_two(a, b);
        }
        _ => {}
    }
}

impl<'a, 'b> Pool<'a, 'b> {
    #[inline(always)]
    fn new(hashes: &'a mut [Hash<'b>], out: &'a mut [Poly], keygen: Option<KeyGen<'a>>) -> Self {
        Pool {
            states: [[0; 25]; MAX_SPONGES],
            jobs: [Job::Entry(0); MAX_SPONGES],
            len: 0,
            live: 0,
            gated: 0,
            waiting: 0,
            hashes,
            out,
            filled: [0; 16],
            keygen,
        }
    }

    /// A sponge for `job`, its state (all zero) absorbing `input` with
    /// the SHAKE padding of `RATE` if given.
    fn push<const RATE: usize>(&mut self, input: Option<(&[u8; 32], &[u8])>, job: Job) {
        if let Some((seed, suffix)) = input {
            absorb_seed::<RATE>(&mut self.states[self.len], seed, suffix);
        }
        self.jobs[self.len] = job;
        self.live |= 1 << self.len;
        self.len += 1;
    }

    /// Pushes the sponges, in the order of preference: the hashes (the
    /// long chains lead), then key generation's H(ek), then Â's entries
    /// Â[i, j] = SampleNTT(ρ ‖ j ‖ i) (see [`Layout`]).
    fn push_all(&mut self, rho: &[u8; 32], k: usize, layout: Layout) {
        count(Primitive::Xof, self.out.len() as u64);
        for h in 0..self.hashes.len() {
            self.push::<0>(None, Job::Hash(h));
        }
        if self.keygen.is_some() {
            self.gated = 1 << self.len;
            self.push::<0>(None, Job::EkHash);
        }
        for index in 0..self.out.len() {
            let (outer, inner) = (index / k, index % k);
            // (i, j, where Â[i, j] goes)
            let (i, j, at) = match layout {
                Layout::RowMajor => (outer, inner, index),
                Layout::Transposed => (inner, outer, index),
                Layout::RowsIntoTransposed => (outer, inner, inner * k + outer),
            };
            let ji = [j as u8, i as u8];
            self.push::<SHAKE128_RATE>(Some((rho, &ji)), Job::Entry(at));
        }
    }

    /// Sets `waiting` from key generation's H(ek): to be called whenever
    /// H(ek) absorbs a block or a row of t̂ grows.
    fn update_waiting(&mut self) {
        self.waiting = match &self.keygen {
            Some(g) if !g.hash_ready() => self.gated,
            _ => 0,
        };
    }

    /// Absorbs what sponge `s` takes before its permutation.
    #[target_feature(enable = "neon")]
    fn prepare(&mut self, s: usize) {
        match self.jobs[s] {
            Job::Hash(h) => {
                self.hashes[h].next(&mut self.states[s]);
            }
            Job::EkHash => {
                if let Some(g) = self.keygen.as_mut() {
                    g.absorb(&mut self.states[s]);
                }
            }
            Job::Entry(_) => {}
        }
    }

    /// Takes what sponge `s`'s permutation gave; once the sponge is done
    /// for good, drops it from the live ones and returns true.
    #[target_feature(enable = "neon")]
    fn permuted(&mut self, s: usize) -> bool {
        let done = match self.jobs[s] {
            Job::Hash(h) => {
                let hash = &mut self.hashes[h];
                hash.permuted(&self.states[s]);
                hash.block == hash.blocks
            }
            Job::Entry(e) => {
                let filled = rejection_sample_block(
                    &mut self.out[e].coeffs,
                    self.filled[e],
                    &self.states[s],
                );
                self.filled[e] = filled;
                let done = filled == N;
                if let (true, Some(g)) = (done, self.keygen.as_mut()) {
                    // Key generation's Â^T index j·k + i: an entry of row i.
                    g.entries_left[e % g.k] -= 1;
                }
                done
            }
            Job::EkHash => self.keygen.as_mut().is_none_or(|g| {
                let done = g.block == g.blocks();
                if done {
                    read_lanes(&self.states[s], &mut g.h);
                }
                done
            }),
        };
        if done {
            self.live &= !(1 << s);
        }
        done
    }

    /// Runs every sponge to its end: each step permutes the first two
    /// that can take a permutation (in the order pushed), on the two-way
    /// permutation, or a last one on the one-way permutation. Key
    /// generation's rows are finished as soon as they can be, which makes
    /// H(ek) ready for more.
    #[target_feature(enable = "neon")]
    fn run(&mut self) {
        self.update_waiting();
        loop {
            let ready = self.live & !self.waiting;
            if ready == 0 {
                return;
            }
            let rest = ready & (ready - 1);
            let picked = [
                ready.trailing_zeros() as usize,
                rest.trailing_zeros() as usize,
            ];
            let found = if rest == 0 { 1 } else { 2 };
            for &s in &picked[..found] {
                self.prepare(s);
            }
            permute(&mut self.states, &picked[..found]);
            let mut retired = false;
            for &s in &picked[..found] {
                retired |= self.permuted(s);
            }
            if let Some(g) = self.keygen.as_mut() {
                // A row of t̂ can grow only once one of its entries is
                // done, but the last row (done in pieces) with every block
                // of its entries.
                let rows = retired || g.rows_done + 1 >= g.k;
                if rows {
                    g.finish_rows(self.out, &self.filled);
                }
                let picked_mask = ready & !(rest & rest.wrapping_sub(1));
                if rows || picked_mask & self.gated != 0 {
                    self.update_waiting();
                }
            }
        }
    }
}

impl Drop for Pool<'_, '_> {
    fn drop(&mut self) {
        // A hash's input may be secret; Â's sponges and key generation's
        // H(ek) hold only public bytes.
        for s in 0..self.len {
            if let Job::Hash(_) = self.jobs[s] {
                wipe(&mut self.states[s], [0; 25]);
            }
        }
    }
}

/// `Schedule::generate_key`: K-PKE.KeyGen (Algorithm 13, lines 3-20): the
/// noise ŝ ‖ ê two streams at a time ([`noise_pairs`]), then one pool of Â
/// row by row and H(ek), which absorbs each row of t̂ as soon as its row of
/// Â is in, so that only H's last blocks (those of the last row and ρ) run
/// without a partner. Fills `out` as `pke::generate` does and returns
/// H(ek).
#[target_feature(enable = "neon")]
pub(crate) fn generate_key<P: ParameterSet>(
    rho: &[u8; 32],
    sigma: &[u8; 32],
    out: &mut KeyBuffers<'_>,
) -> [u8; 32] {
    let k = P::K;
    count(Primitive::Prf, 2 * k as u64);
    count(Primitive::H, 1);
    let (a_hat_t, rest) = out.expanded.split_at_mut(k * k);
    let mut e = P::PolyVec::zeroed();
    noise_pairs(P::ETA1, sigma, out.s_hat, e.as_mut());
    let keygen = KeyGen {
        k,
        rho,
        s_hat: out.s_hat,
        e: e.as_ref(),
        t_hat: &mut rest[..k],
        entries_left: [k as u8; 4],
        rows_done: 0,
        row_done: 0,
        ek: out.ek,
        written: 0,
        block: 0,
        h: [0; 32],
    };
    let h = {
        let mut pool = Pool::new(&mut [], a_hat_t, Some(keygen));
        pool.push_all(rho, k, Layout::RowsIntoTransposed);
        pool.run();
        pool.keygen.as_ref().map_or([0; 32], |g| {
            debug_assert!(g.rows_done == k && g.block == g.blocks());
            g.h
        })
    };
    zeroize_all(e.as_mut());
    h
}

/// Key generation's noise (Algorithm 13, lines 8-15): ŝ_i = NTT(CBD_η(PRF(σ,
/// i))) and ê_i from nonce k + i, canonical for ŝ (the key keeps it so, and
/// [`key_row`]'s sums stay in range for inputs below q), the streams two
/// at a time on the two-way permutation (nonces 2m and 2m + 1). Each
/// stream squeezes 64η bytes: one block for η = 2, two for η = 3.
#[target_feature(enable = "neon")]
fn noise_pairs(eta: usize, sigma: &[u8; 32], s_hat: &mut [Poly], e: &mut [Poly]) {
    let k = s_hat.len();
    let mut states = [[0u64; 25]; 2];
    let mut carry = [[0u8; 4]; 2];
    for pair in 0..k {
        let nonces = [2 * pair, 2 * pair + 1];
        for (state, nonce) in states.iter_mut().zip(nonces) {
            *state = [0; 25];
            absorb_seed::<SHAKE256_RATE>(state, sigma, &[nonce as u8]);
        }
        for block in 0..eta - 1 {
            let [a, b] = &mut states;
            permute_two(a, b);
            for ((state, carry), nonce) in states.iter().zip(&mut carry).zip(nonces) {
                let p = noise_poly(nonce, k, s_hat, e);
                if cbd_from_block(eta, block, state, carry, p) {
                    if nonce < k {
                        ntt_canonical(p);
                    } else {
                        ntt(p);
                    }
                }
            }
        }
    }
    // σ's output.
    for state in &mut states {
        wipe(state, [0; 25]);
    }
    wipe(&mut carry, [[0; 4]; 2]);
}

/// `Sampling::sample_matrix`: Â row-major, `out[i*k + j]` = SampleNTT(ρ ‖
/// j ‖ i).
#[target_feature(enable = "neon")]
pub(crate) fn sample_matrix(rho: &[u8; 32], k: usize, out: &mut [Poly]) {
    let mut pool = Pool::new(&mut [], out, None);
    pool.push_all(rho, k, Layout::RowMajor);
    pool.run();
}

/// `Schedule::decaps_hashes`: (K', r') = G(m' ‖ h), K̄ = J(z ‖ c) unless
/// the key's parsing computed it, and the re-encryption's noise from r' (y:
/// η1, PRF nonces 0..k; e1 ‖ e2: η2, nonces k..2k + 1), on the two-way
/// permutation: G beside J's first block, then each noise block beside
/// J's next; J's last blocks (one chain) then run alone, or the noise's
/// last blocks in pairs. Returns (K', K̄).
#[target_feature(enable = "neon")]
pub(crate) fn decaps_hashes<P: ParameterSet>(
    input: &DecapsHashInput<'_>,
    y: &mut [Poly],
    e1_e2: &mut [Poly],
) -> ([u8; 32], [u8; 32]) {
    count(Primitive::G, 1);
    let mut j = Hash::new([input.z, input.c], SHAKE_DOMAIN);
    let mut j_state = [0u64; 25];
    if input.rejection.is_some() {
        j.block = j.blocks;
    } else {
        count(Primitive::J, 1);
    }

    // G(m' ‖ h): one padded SHA3-512 block, beside J's first.
    let mut g = [0u64; 25];
    absorb_into::<SHA3_512_RATE>(&mut g, &[input.m, input.h], SHA3_DOMAIN);
    if j.next(&mut j_state) {
        permute_two(&mut g, &mut j_state);
        j.permuted(&j_state);
    } else {
        permute_one(&mut g);
    }
    let mut out = [0u8; 64];
    read_lanes(&g, &mut out);
    wipe(&mut g, [0; 25]);
    let mut shared = [0u8; 32];
    shared.copy_from_slice(&out[..32]);

    // The noise streams' blocks in an order that keeps each stream's
    // blocks in sequence: every stream's first, then (η = 3) the seconds.
    let k = P::K;
    let streams = 2 * k + 1;
    count(Primitive::Prf, streams as u64);
    let eta = |i: usize| if i < k { P::ETA1 } else { P::ETA2 };
    let mut states = [[0u64; 25]; 9];
    let mut carry = [[0u8; 4]; 9];
    let r: &[u8; 32] = out[32..].try_into().expect("G's second half");
    for (i, state) in states.iter_mut().enumerate().take(streams) {
        absorb_seed::<SHAKE256_RATE>(state, r, &[i as u8]);
    }
    wipe(&mut out, [0; 64]);
    let mut blocks = [(0, 0); 18];
    let mut len = 0;
    for block in 0..2 {
        for i in 0..streams {
            if block < eta(i) - 1 {
                blocks[len] = (i, block);
                len += 1;
            }
        }
    }
    let mut next = 0;
    let mut squeezed = |states: &mut [[u64; 25]; 9], (i, block): (usize, usize)| {
        let p = noise_poly(i, k, y, e1_e2);
        cbd_from_block(eta(i), block, &states[i], &mut carry[i], p);
    };
    loop {
        let j_live = j.next(&mut j_state);
        match (j_live, next < len) {
            (true, true) => {
                let (i, _) = blocks[next];
                permute_two(&mut j_state, &mut states[i]);
                j.permuted(&j_state);
                squeezed(&mut states, blocks[next]);
                next += 1;
            }
            (true, false) => {
                permute_one(&mut j_state);
                j.permuted(&j_state);
            }
            (false, true) => {
                let (i, _) = blocks[next];
                match blocks.get(next + 1).filter(|_| next + 1 < len) {
                    // Two first blocks, or two second ones: never a
                    // stream's two blocks at once.
                    Some(&(i2, _)) if i2 != i => {
                        let (a, b) = two_states(&mut states, i, i2);
                        permute_two(a, b);
                        squeezed(&mut states, blocks[next]);
                        squeezed(&mut states, blocks[next + 1]);
                        next += 2;
                    }
                    _ => {
                        permute_one(&mut states[i]);
                        squeezed(&mut states, blocks[next]);
                        next += 1;
                    }
                }
            }
            (false, false) => break,
        }
    }
    // One state at a time: a wipe of the whole array would put a zeroed
    // copy of it on the stack.
    for state in &mut states {
        wipe(state, [0; 25]);
    }
    wipe(&mut carry, [[0; 4]; 9]);
    wipe(&mut j_state, [0; 25]);
    let rejection = match input.rejection {
        Some(computed) => *computed,
        None => j.out,
    };
    wipe(&mut j.out, [0; 32]);
    (shared, rejection)
}

/// `Schedule::hash_and_sample_matrix`: H(ek) and Â^T (`out[j*k + i]` =
/// Â[i, j] = SampleNTT(ρ ‖ j ‖ i)) in one pool, the long hash first. J(z ‖
/// c) is left to [`decaps_hashes`] even when asked for (`_rejection`): there
/// its blocks pair with G and the re-encryption's noise, where here they
/// would only move the pool's odd block to its end.
#[target_feature(enable = "neon")]
pub(crate) fn hash_and_sample_matrix(
    ek: &[u8],
    rho: &[u8; 32],
    k: usize,
    out: &mut [Poly],
    _rejection: Option<(&[u8; 32], &[u8])>,
) -> ([u8; 32], Option<[u8; 32]>) {
    count(Primitive::H, 1);
    let mut hashes = [Hash::new([ek, &[]], SHA3_DOMAIN)];
    {
        let mut pool = Pool::new(&mut hashes, out, None);
        pool.push_all(rho, k, Layout::Transposed);
        pool.run();
    }
    (hashes[0].out, None)
}
