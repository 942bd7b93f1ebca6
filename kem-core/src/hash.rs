//! The hash functions of FIPS 203, section 4.1: G = SHA3-512, H = SHA3-256,
//! J = SHAKE256 to 32 bytes, PRF_eta = SHAKE256 to 64·eta bytes and
//! XOF = SHAKE128, as a minimal one-shot Keccak sponge (FIPS 202) over
//! Keccak-f[1600] from the `keccak` crate, the permutation the `sha3` crate
//! is built on.
//!
//! The permutation is a parameter (`Permutation`, provided by each backend):
//! the portable backend uses `keccak::f1600`, SIMD backends may compile a
//! faster one-way permutation for their CPU.
//!
//! Why not the `sha3` hashers themselves: their incremental buffering costs
//! about a third on top of the permutations on these short inputs (see
//! docs/performance.md, "Lab notes"). Every function here is tested byte for byte against
//! `sha3`. Sponge states are zeroized on drop: most inputs are secret.

use crate::profile_hooks::{count, Primitive};

/// Rate of SHAKE128 in bytes: one Keccak-f[1600] call squeezes this much.
pub(crate) const SHAKE128_RATE: usize = 168;
/// Rate of SHAKE256 in bytes.
pub(crate) const SHAKE256_RATE: usize = 136;
/// Rate of SHA3-256 (H) in bytes.
pub(crate) const SHA3_256_RATE: usize = 136;
/// Rate of SHA3-512 (G) in bytes.
pub(crate) const SHA3_512_RATE: usize = 72;

/// Domain-separation and first padding bits of SHA3-* (01) and SHAKE* (1111).
pub(crate) const SHA3_DOMAIN: u8 = 0x06;
pub(crate) const SHAKE_DOMAIN: u8 = 0x1f;

/// The Keccak-f[1600] permutation a sponge runs on (each backend provides
/// one; the portable one is `keccak::f1600`).
pub(crate) trait Permutation {
    /// Applies Keccak-f[1600] to `state` (lane x + 5y at index x + 5y).
    fn keccak_f1600(state: &mut [u64; 25]);
}

/// A Keccak sponge of rate `RATE` bytes on permutation `F`: created empty
/// ([`Sponge::new`]), then absorbing its whole input in place
/// ([`Sponge::absorb`]) and squeezing.
///
/// The state is absorbed where it lives, in a sponge the caller owns and
/// that its drop wipes: a sponge absorbed inside a constructor and returned
/// by value may be copied on the way out, and the copy left in a frame
/// that nothing wipes would hold the input's last block in the clear (σ ‖
/// N for the PRF, m ‖ H(ek) for G, z ‖ c for J).
pub(crate) struct Sponge<const RATE: usize, F: Permutation> {
    state: [u64; 25],
    _permutation: core::marker::PhantomData<F>,
}

impl<const RATE: usize, F: Permutation> Sponge<RATE, F> {
    /// The empty sponge (the all-zero state).
    fn new() -> Self {
        Self {
            state: [0; 25],
            _permutation: core::marker::PhantomData,
        }
    }

    /// Absorbs the concatenation of `parts` into the empty sponge, then
    /// pads with `domain` and the final bit (FIPS 202 pad10*1).
    fn absorb(&mut self, parts: &[&[u8]], domain: u8) {
        let state = &mut self.state;
        let mut filled = 0;
        for part in parts {
            let mut rest = *part;
            while !rest.is_empty() {
                let take = (RATE - filled).min(rest.len());
                xor_bytes(state, filled, &rest[..take]);
                filled += take;
                rest = &rest[take..];
                if filled == RATE {
                    F::keccak_f1600(state);
                    filled = 0;
                }
            }
        }
        xor_padding(state, filled, domain, RATE);
    }

    /// Squeezes the next block (permuting first) into `out`, at most `RATE`
    /// bytes; a shorter `out` takes the block's first bytes.
    pub(crate) fn squeeze_block(&mut self, out: &mut [u8]) {
        debug_assert!(out.len() <= RATE);
        F::keccak_f1600(&mut self.state);
        read_lanes(&self.state, out);
    }

    /// Squeezes `out.len()` bytes, block after block.
    fn squeeze(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(RATE) {
            self.squeeze_block(chunk);
        }
    }
}

impl<const RATE: usize, F: Permutation> Drop for Sponge<RATE, F> {
    fn drop(&mut self) {
        crate::wipe::wipe(&mut self.state, [0; 25]);
    }
}

/// XORs one block of input (whole 8-byte words) into the first lanes,
/// little-endian. For the x86-64 sponge pools, which absorb lane by lane
/// (the AArch64 pools XOR 16 bytes at a time with Neon instead).
#[cfg(any(target_arch = "x86_64", test))]
#[inline(always)]
pub(crate) fn xor_block(state: &mut [u64; 25], block: &[u8]) {
    for (lane, bytes) in state.iter_mut().zip(block.chunks_exact(8)) {
        *lane ^= u64::from_le_bytes(bytes.try_into().expect("8-byte chunk"));
    }
}

/// XORs `bytes` into the state from byte `offset` on (lanes little-endian),
/// assembling partial lanes in a register: a byte buffer read back as
/// 8-byte words would make each read wait for the byte writes before it
/// (a failed store-to-load forward, a dozen cycles or more each). The loops
/// depend only on `offset` and the length.
#[inline(always)]
pub(crate) fn xor_bytes(state: &mut [u64; 25], offset: usize, bytes: &[u8]) {
    let (mut lane, mut shift) = (offset / 8, offset % 8);
    let mut rest = bytes;
    // A lane begun by earlier bytes, byte by byte.
    while shift != 0 {
        let Some((&byte, tail)) = rest.split_first() else {
            return;
        };
        state[lane] ^= u64::from(byte) << (8 * shift);
        rest = tail;
        shift = (shift + 1) % 8;
        lane += usize::from(shift == 0);
    }
    let words = rest.chunks_exact(8);
    let tail = words.remainder();
    for word in words {
        state[lane] ^= u64::from_le_bytes(word.try_into().expect("8-byte chunk"));
        lane += 1;
    }
    if !tail.is_empty() {
        let word = tail
            .iter()
            .enumerate()
            .fold(0u64, |word, (i, &byte)| word | u64::from(byte) << (8 * i));
        state[lane] ^= word;
    }
}

/// Pads the last block of a message at rate `rate` whose `filled` bytes are
/// absorbed (FIPS 202 pad10*1): `domain` (the domain bits and the first
/// padding bit) after them, the final bit in the block's last byte.
#[inline(always)]
pub(crate) fn xor_padding(state: &mut [u64; 25], filled: usize, domain: u8, rate: usize) {
    debug_assert!(filled < rate && rate.is_multiple_of(8));
    state[filled / 8] ^= u64::from(domain) << (8 * (filled % 8));
    state[rate / 8 - 1] ^= 0x80 << 56;
}

/// XORs block `index` of the padded message `data` (rate `RATE`) into the
/// state: whole blocks as they are, the last one (block `data.len() /
/// RATE`, possibly with no data) padded. For the sponge pools, as
/// [`xor_block`].
#[cfg(any(target_arch = "x86_64", test))]
#[inline(always)]
pub(crate) fn xor_padded_block<const RATE: usize>(
    state: &mut [u64; 25],
    data: &[u8],
    index: usize,
    domain: u8,
) {
    let start = index * RATE;
    match data.get(start..start + RATE) {
        Some(block) => xor_block(state, block),
        None => {
            let tail = &data[start..];
            xor_bytes(state, 0, tail);
            xor_padding(state, tail.len(), domain, RATE);
        }
    }
}

/// Writes the first `out.len()` bytes of the state (lanes little-endian).
#[inline]
pub(crate) fn read_lanes(state: &[u64; 25], out: &mut [u8]) {
    // Whole lanes as fixed 8-byte copies, then the partial one: one loop
    // over chunks of varying length would be a memcpy call per lane.
    let whole = out.len() / 8;
    let mut chunks = out.chunks_exact_mut(8);
    for (chunk, lane) in (&mut chunks).zip(state) {
        chunk.copy_from_slice(&lane.to_le_bytes());
    }
    let tail = chunks.into_remainder();
    if let Some(lane) = state.get(whole) {
        tail.copy_from_slice(&lane.to_le_bytes()[..tail.len()]);
    }
}

/// G(a ‖ b) = SHA3-512, its two 32-byte halves written to `first` and
/// `second`: into the caller's buffers, which it wipes, since both halves
/// may be secret (σ, K, r). Returned as a pair, they passed through a
/// temporary in the caller's frame that nothing wiped.
pub(crate) fn g<F: Permutation>(a: &[u8], b: &[u8], first: &mut [u8; 32], second: &mut [u8; 32]) {
    count(Primitive::G, 1);
    let mut out = [0u8; 64];
    let mut sponge = Sponge::<SHA3_512_RATE, F>::new();
    sponge.absorb(&[a, b], SHA3_DOMAIN);
    sponge.squeeze(&mut out);
    first.copy_from_slice(&out[..32]);
    second.copy_from_slice(&out[32..]);
    crate::wipe::wipe(&mut out, [0; 64]);
}

/// H(s) = SHA3-256.
pub(crate) fn h<F: Permutation>(s: &[u8]) -> [u8; 32] {
    count(Primitive::H, 1);
    let mut out = [0u8; 32];
    let mut sponge = Sponge::<SHA3_256_RATE, F>::new();
    sponge.absorb(&[s], SHA3_DOMAIN);
    sponge.squeeze(&mut out);
    out
}

/// J(a ‖ b) = SHAKE256(a ‖ b, 8·32).
pub(crate) fn j<F: Permutation>(a: &[u8], b: &[u8]) -> [u8; 32] {
    count(Primitive::J, 1);
    let mut out = [0u8; 32];
    let mut sponge = Sponge::<SHAKE256_RATE, F>::new();
    sponge.absorb(&[a, b], SHAKE_DOMAIN);
    sponge.squeeze(&mut out);
    out
}

/// PRF_eta(s, b) = SHAKE256(s ‖ b, 8·64·eta), written to `out` (64·eta bytes).
pub(crate) fn prf<F: Permutation>(s: &[u8; 32], b: u8, out: &mut [u8]) {
    count(Primitive::Prf, 1);
    let mut sponge = Sponge::<SHAKE256_RATE, F>::new();
    sponge.absorb(&[s, &[b]], SHAKE_DOMAIN);
    sponge.squeeze(out);
}

/// XOF(ρ, i, j): SHAKE128 absorbing ρ ‖ i ‖ j (FIPS 203 Algorithm 7 input),
/// ready to be squeezed block by block. Returned by value: ρ is public.
pub(crate) fn xof<F: Permutation>(rho: &[u8; 32], i: u8, j: u8) -> Sponge<SHAKE128_RATE, F> {
    count(Primitive::Xof, 1);
    let mut sponge = Sponge::new();
    sponge.absorb(&[rho, &[i, j]], SHAKE_DOMAIN);
    sponge
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha3::digest::{Digest, ExtendableOutput, Update, XofReader};
    use sha3::{Sha3_256, Sha3_512, Shake128, Shake256};

    #[test]
    fn read_lanes_writes_the_state_bytes_in_order() {
        let state: [u64; 25] = core::array::from_fn(|i| 0x0102_0304_0506_0708 * (i as u64 + 1));
        let bytes: Vec<u8> = state.iter().flat_map(|l| l.to_le_bytes()).collect();
        for len in 0..=200 {
            let mut out = vec![0xee; len + 1];
            read_lanes(&state, &mut out[..len]);
            assert_eq!(out[..len], bytes[..len], "length {len}");
            assert_eq!(out[len], 0xee, "length {len}: wrote past the end");
        }
    }

    /// The state as bytes, lanes little-endian.
    fn state_bytes(state: &[u64; 25]) -> Vec<u8> {
        state.iter().flat_map(|lane| lane.to_le_bytes()).collect()
    }

    #[test]
    fn xor_bytes_matches_a_byte_view_of_the_state() {
        let start: [u64; 25] =
            core::array::from_fn(|i| 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i as u64 + 3));
        let data: Vec<u8> = (0..200u32).map(|i| (i * 37 + 11) as u8).collect();
        for offset in 0..=168 {
            for len in 0..=(200 - offset).min(40) {
                let mut state = start;
                xor_bytes(&mut state, offset, &data[..len]);
                let mut expected = state_bytes(&start);
                for (byte, &d) in expected[offset..offset + len].iter_mut().zip(&data) {
                    *byte ^= d;
                }
                assert_eq!(
                    state_bytes(&state),
                    expected,
                    "offset {offset}, length {len}"
                );
            }
        }
    }

    #[test]
    fn padded_blocks_match_fips_202_padding() {
        // Messages that end inside a block, fill it, or end one byte short
        // of it (domain and final bit in the same byte).
        for (len, rate) in [(140, 136), (136, 136), (135, 136), (33, 72), (0, 168)] {
            let data: Vec<u8> = (0..len as u32).map(|i| (i * 7 + 1) as u8).collect();
            let mut padded = data.clone();
            padded.push(0x1f);
            padded.resize(padded.len().div_ceil(rate) * rate, 0);
            *padded.last_mut().expect("a block") ^= 0x80;
            for index in 0..padded.len() / rate {
                let mut state = [0u64; 25];
                match rate {
                    136 => xor_padded_block::<136>(&mut state, &data, index, 0x1f),
                    72 => xor_padded_block::<72>(&mut state, &data, index, 0x1f),
                    _ => xor_padded_block::<168>(&mut state, &data, index, 0x1f),
                }
                let mut expected = padded[index * rate..(index + 1) * rate].to_vec();
                expected.resize(200, 0);
                assert_eq!(state_bytes(&state), expected, "length {len}, block {index}");
            }
        }
    }

    /// The permutation of the `keccak` crate, for these tests.
    struct KeccakCrate;

    impl Permutation for KeccakCrate {
        fn keccak_f1600(state: &mut [u64; 25]) {
            keccak::f1600(state);
        }
    }

    fn g(a: &[u8], b: &[u8]) -> ([u8; 32], [u8; 32]) {
        let (mut first, mut second) = ([0; 32], [0; 32]);
        super::g::<KeccakCrate>(a, b, &mut first, &mut second);
        (first, second)
    }

    fn h(s: &[u8]) -> [u8; 32] {
        super::h::<KeccakCrate>(s)
    }

    fn j(a: &[u8], b: &[u8]) -> [u8; 32] {
        super::j::<KeccakCrate>(a, b)
    }

    fn prf(s: &[u8; 32], b: u8, out: &mut [u8]) {
        super::prf::<KeccakCrate>(s, b, out)
    }

    fn xof(rho: &[u8; 32], i: u8, j: u8) -> Sponge<SHAKE128_RATE, KeccakCrate> {
        super::xof::<KeccakCrate>(rho, i, j)
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Inputs of every length around the block boundaries, split in two.
    fn inputs() -> impl Iterator<Item = (Vec<u8>, usize)> {
        (0..400usize).map(|len| {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 31 + len) as u8).collect();
            (bytes, len / 3)
        })
    }

    #[test]
    fn known_answers_for_empty_input() {
        // FIPS 202 test values for the empty message.
        assert_eq!(
            hex(&h(b"")),
            "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"
        );
        let (a, b) = g(b"", b"");
        assert_eq!(
            hex(&a) + &hex(&b),
            "a69f73cca23a9ac5c8b567dc185a756e97c982164fe25859e0d1dcc1475c80a6\
             15b2123af1f5f94c11e3e9402c3ac558f500199d95b6d3e301758586281dcd26"
        );
        assert_eq!(
            hex(&j(b"", b"")),
            "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762f"
        );
    }

    #[test]
    fn sha3_functions_match_the_sha3_crate() {
        for (input, split) in inputs() {
            let (a, b) = input.split_at(split);
            let expected: [u8; 64] = Sha3_512::digest(&input).into();
            let (g1, g2) = g(a, b);
            assert_eq!([g1, g2].concat(), expected, "G, length {}", input.len());
            let expected: [u8; 32] = Sha3_256::digest(&input).into();
            assert_eq!(h(&input), expected, "H, length {}", input.len());
        }
    }

    #[test]
    fn shake_functions_match_the_sha3_crate() {
        for (input, split) in inputs() {
            let (a, b) = input.split_at(split);
            let mut expected = [0u8; 32];
            Shake256::default()
                .chain(&input)
                .finalize_xof()
                .read(&mut expected);
            assert_eq!(j(a, b), expected, "J, length {}", input.len());
        }
        for eta in [2, 3] {
            let mut ours = vec![0u8; 64 * eta];
            let mut expected = vec![0u8; 64 * eta];
            prf(&[7; 32], 3, &mut ours);
            Shake256::default()
                .chain([7; 32])
                .chain([3])
                .finalize_xof()
                .read(&mut expected);
            assert_eq!(ours, expected, "PRF, eta {eta}");
        }
        // XOF(ρ, i, j) absorbs ρ ‖ i ‖ j in that order; several blocks.
        let mut expected = [0u8; 5 * SHAKE128_RATE];
        Shake128::default()
            .chain([9; 32])
            .chain([1, 2])
            .finalize_xof()
            .read(&mut expected);
        let mut sponge = xof(&[9; 32], 1, 2);
        for block in expected.chunks(SHAKE128_RATE) {
            let mut ours = [0u8; SHAKE128_RATE];
            sponge.squeeze_block(&mut ours);
            assert_eq!(&ours[..], block);
        }
    }
}
