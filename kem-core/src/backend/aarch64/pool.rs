//! The sponges of ML-KEM's operations, two at a time on the two-way Keccak
//! (each sponge a chain of permutations: an absorption block by block, or a
//! squeeze block by block), so that the one-way permutation runs only
//! where a chain has no partner left:
//!
//! - key generation samples the noise ŝ ‖ ê two streams at a time
//!   ([`noise_pairs`]), then runs Â row by row beside H(ek), which absorbs
//!   t̂ as it is computed (a [`Pool`]);
//! - parsing an encapsulation key runs H(ek) beside Â (a [`Pool`]);
//! - decapsulation's hashes ([`decaps_hashes`]) run G, J(z ‖ c) and the
//!   re-encryption's noise two at a time.
//!
//! Each sponge sees the blocks, padding and squeeze of its one-way form
//! (`hash::g`, `hash::h`, `hash::j`, `hash::prf`, `sample::sample_ntt`), so
//! the bytes are the portable backend's. What is scheduled when depends on
//! message lengths and on the rejection sampling of Â, both public; the
//! states and buffers that hold secrets (noise, G's m', J's z) are
//! wiped.

use crate::backend::aarch64::ntt::{key_row, ntt, ntt_canonical};
use crate::backend::aarch64::sample::{
    absorb_into, absorb_seed, cbd_from_block, permute_pair, rejection_sample_block, xor_into_state,
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
    /// H(ek), once its last block is permuted: there is no digest before
    /// (no all-zero placeholder that a schedule ending early could hand
    /// out as the hash).
    h: Option<[u8; 32]>,
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

/// Â's entries in flight at once: two, so that they pair with each other,
/// or the earlier one with the chain.
const SLOTS: usize = 2;

/// A slot with no entry.
const FREE: usize = usize::MAX;

/// A pool: Â's entries, sampled in the order of its [`Layout`] two at a
/// time, beside at most one long chain (a hash of bytes, or key
/// generation's H(ek), which absorbs ek as its rows are encoded). Each step
/// permutes the chain, if it can take a block now, with the earliest entry
/// not yet done; else the two earliest entries; else what is left alone
/// (the one-way permutation). Entries are always ready until done, so the
/// two earliest are the two in flight; an entry starts when a slot frees.
/// Its sponges hold only public bytes (ρ, Â, ek), so none is wiped.
struct Pool<'a, 'b> {
    chain: [u64; 25],
    hash: Option<&'a mut Hash<'b>>,
    keygen: Option<KeyGen<'a>>,
    /// The entries in flight: their states, their places in the order of
    /// sampling (`FREE` if none) and in `out`.
    slots: [[u64; 25]; SLOTS],
    order: [usize; SLOTS],
    at: [usize; SLOTS],
    /// The next entry to start, in the order of sampling.
    next: usize,
    rho: &'a [u8; 32],
    k: usize,
    layout: Layout,
    out: &'a mut [Poly],
    filled: [usize; 16],
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

impl<'a, 'b> Pool<'a, 'b> {
    /// A pool sampling Â (k² entries into `out`, see [`Layout`]) from
    /// `rho`, beside `hash` or `keygen`'s H(ek) if given.
    #[inline(always)]
    fn new(
        rho: &'a [u8; 32],
        k: usize,
        layout: Layout,
        out: &'a mut [Poly],
        hash: Option<&'a mut Hash<'b>>,
        keygen: Option<KeyGen<'a>>,
    ) -> Self {
        debug_assert!(out.len() == k * k && (hash.is_none() || keygen.is_none()));
        // Key generation counts each row's entries by their place in Â^T.
        debug_assert!(keygen.is_none() || matches!(layout, Layout::RowsIntoTransposed));
        count(Primitive::Xof, out.len() as u64);
        Pool {
            chain: [0; 25],
            hash,
            keygen,
            slots: [[0; 25]; SLOTS],
            order: [FREE; SLOTS],
            at: [0; SLOTS],
            next: 0,
            rho,
            k,
            layout,
            out,
            filled: [0; 16],
        }
    }

    /// Starts the next entries in free slots while any are left: Â[i, j] =
    /// SampleNTT(ρ ‖ j ‖ i), the n-th in the order of the layout.
    fn start_entries(&mut self) {
        for slot in 0..SLOTS {
            let n = self.next;
            if self.order[slot] != FREE || n == self.out.len() {
                continue;
            }
            let k = self.k;
            let (outer, inner) = (n / k, n % k);
            // (i, j, where Â[i, j] goes)
            let (i, j, at) = match self.layout {
                Layout::RowMajor => (outer, inner, n),
                Layout::Transposed => (inner, outer, n),
                Layout::RowsIntoTransposed => (outer, inner, inner * k + outer),
            };
            let state = &mut self.slots[slot];
            *state = [0; 25];
            absorb_seed::<SHAKE128_RATE>(state, self.rho, &[j as u8, i as u8]);
            (self.order[slot], self.at[slot]) = (n, at);
            self.next += 1;
        }
    }

    /// The slots in flight, the earlier entry first.
    fn in_flight(&self) -> (Option<usize>, Option<usize>) {
        match self.order {
            [FREE, FREE] => (None, None),
            [_, FREE] => (Some(0), None),
            [FREE, _] => (Some(1), None),
            [a, b] if a < b => (Some(0), Some(1)),
            _ => (Some(1), Some(0)),
        }
    }

    /// Whether the chain can take a block now, and if so absorbs it into
    /// `chain`.
    #[target_feature(enable = "neon")]
    fn prepare_chain(&mut self) -> bool {
        if let Some(hash) = self.hash.as_mut() {
            return hash.next(&mut self.chain);
        }
        match self.keygen.as_mut() {
            Some(g) if g.block < g.blocks() && g.hash_ready() => {
                g.absorb(&mut self.chain);
                true
            }
            _ => false,
        }
    }

    /// Takes what the chain's permutation gave.
    fn chain_permuted(&mut self) {
        if let Some(hash) = self.hash.as_mut() {
            hash.permuted(&self.chain);
        } else if let Some(g) = self.keygen.as_mut() {
            if g.block == g.blocks() {
                let mut h = [0u8; 32];
                read_lanes(&self.chain, &mut h);
                g.h = Some(h);
            }
        }
    }

    /// Samples the block slot `slot`'s permutation gave; true once its
    /// entry is full, which frees the slot.
    #[target_feature(enable = "neon")]
    fn sampled(&mut self, slot: usize) -> bool {
        let at = self.at[slot];
        let filled =
            rejection_sample_block(&mut self.out[at].coeffs, self.filled[at], &self.slots[slot]);
        self.filled[at] = filled;
        let done = filled == N;
        if done {
            self.order[slot] = FREE;
            if let Some(g) = self.keygen.as_mut() {
                // Key generation's Â^T index j·k + i: an entry of row i.
                g.entries_left[at % g.k] -= 1;
            }
        }
        done
    }

    /// Key generation's H(ek) once the pool has run: any rows of t̂ and
    /// blocks of H the schedule left (none: the pool ends only once every
    /// entry of Â is sampled, and its last entry finishes the rows, which
    /// makes every block of H ready), then the digest. `None` only if a
    /// row still lacks an entry of Â, so that H cannot absorb it: never a
    /// digest of part of ek.
    #[target_feature(enable = "neon")]
    fn finish_key(&mut self) -> Option<[u8; 32]> {
        let g = self.keygen.as_mut()?;
        g.finish_rows(self.out, &self.filled);
        while g.block < g.blocks() && g.hash_ready() {
            g.absorb(&mut self.chain);
            permute_one(&mut self.chain);
            if g.block == g.blocks() {
                let mut h = [0u8; 32];
                read_lanes(&self.chain, &mut h);
                g.h = Some(h);
            }
        }
        g.h
    }

    /// Runs the pool to its end (see [`Pool`]). Key generation's rows are
    /// finished as soon as they can be, which makes H(ek) ready for more.
    #[target_feature(enable = "neon")]
    fn run(&mut self) {
        loop {
            self.start_entries();
            let chain = self.prepare_chain();
            let retired = match (chain, self.in_flight()) {
                (true, (Some(a), _)) => {
                    permute_pair(&mut self.chain, &mut self.slots[a]);
                    self.chain_permuted();
                    self.sampled(a)
                }
                (true, (None, _)) => {
                    permute_one(&mut self.chain);
                    self.chain_permuted();
                    false
                }
                (false, (Some(a), Some(b))) => {
                    let [x, y] = &mut self.slots;
                    permute_pair(x, y);
                    // Both sampled, whichever is done.
                    self.sampled(a) | self.sampled(b)
                }
                (false, (Some(a), None)) => {
                    permute_one(&mut self.slots[a]);
                    self.sampled(a)
                }
                (false, (None, _)) => return,
            };
            if let Some(g) = self.keygen.as_mut() {
                // A row of t̂ can grow only once one of its entries is
                // done, but the last row (done in pieces) with every block
                // of its entries.
                if retired || g.rows_done + 1 >= g.k {
                    g.finish_rows(self.out, &self.filled);
                }
            }
        }
    }
}

/// `Schedule::generate_key`: K-PKE.KeyGen (Algorithm 13, lines 3-20): the
/// noise ŝ ‖ ê two streams at a time ([`noise_pairs`]), then one pool of Â
/// row by row and H(ek), which absorbs each row of t̂ as soon as its row of
/// Â is in, so that only H's last blocks (those of the last row and ρ) run
/// without a partner. Fills `out` as `pke::generate` does and returns
/// H(ek); `None` (the contract of `Schedule::generate_key`: the caller
/// then runs the sequential algorithm, which rewrites `out`) if the
/// schedule could not finish ek, which [`Pool::finish_key`] rules out.
#[target_feature(enable = "neon")]
pub(crate) fn generate_key<P: ParameterSet>(
    rho: &[u8; 32],
    sigma: &[u8; 32],
    out: &mut KeyBuffers<'_>,
) -> Option<[u8; 32]> {
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
        h: None,
    };
    let h = {
        let mut pool = Pool::new(
            rho,
            k,
            Layout::RowsIntoTransposed,
            a_hat_t,
            None,
            Some(keygen),
        );
        pool.run();
        pool.finish_key()
    };
    debug_assert!(h.is_some(), "key generation's pool left ek unfinished");
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
            permute_pair(a, b);
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
    Pool::new(rho, k, Layout::RowMajor, out, None, None).run();
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
        permute_pair(&mut g, &mut j_state);
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
                permute_pair(&mut j_state, &mut states[i]);
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
                        permute_pair(a, b);
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
    let mut hash = Hash::new([ek, &[]], SHA3_DOMAIN);
    Pool::new(rho, k, Layout::Transposed, out, Some(&mut hash), None).run();
    (hash.out, None)
}

#[cfg(test)]
#[allow(unsafe_code)]
mod tests {
    use super::*;
    use sha3::{Digest, Sha3_256};

    /// ML-KEM-512's key generation pool: no digest before it has run (ek
    /// unwritten, so H cannot absorb it), then H(ek) of the ek it wrote.
    #[target_feature(enable = "neon")]
    fn check_digest_only_of_the_whole_ek() {
        let k = 2;
        let rho: [u8; 32] = core::array::from_fn(|i| (i * 13 + 5) as u8);
        let s_hat: Vec<Poly> = (0..k as i16)
            .map(|i| Poly {
                coeffs: core::array::from_fn(|j| (j as i16 * 7 + i) % 3329),
            })
            .collect();
        let e = vec![Poly::ZERO; k];
        let mut a_hat_t = vec![Poly::ZERO; k * k];
        let mut t_hat = vec![Poly::ZERO; k];
        let mut ek = vec![0u8; 384 * k + 32];
        let keygen = KeyGen {
            k,
            rho: &rho,
            s_hat: &s_hat,
            e: &e,
            t_hat: &mut t_hat,
            entries_left: [k as u8; 4],
            rows_done: 0,
            row_done: 0,
            ek: &mut ek,
            written: 0,
            block: 0,
            h: None,
        };
        let mut pool = Pool::new(
            &rho,
            k,
            Layout::RowsIntoTransposed,
            &mut a_hat_t,
            None,
            Some(keygen),
        );
        assert_eq!(pool.finish_key(), None, "a pool that has not run");
        pool.run();
        let h = pool.finish_key().expect("the pool ran to its end");
        assert_eq!(h, <[u8; 32]>::from(Sha3_256::digest(&ek)));
    }

    #[test]
    fn the_digest_is_of_the_whole_ek() {
        // SAFETY: Neon is part of the AArch64 baseline this module needs.
        unsafe { check_digest_only_of_the_whole_ek() }
    }
}
