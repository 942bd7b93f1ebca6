//! Shared test fixtures: the three ML-KEM layouts, fake key material and a
//! tiny deterministic generator for mutation tests.

use super::{KeyLayout, PrivateKeyFormat, SEED_LEN};

/// ML-KEM-512, 2.16.840.1.101.3.4.4.1.
pub(super) const ML_KEM_512: KeyLayout = KeyLayout {
    name: "ML-KEM-512",
    oid: &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x04, 0x01],
    ek_len: 800,
    dk_len: 1632,
};

/// ML-KEM-768, 2.16.840.1.101.3.4.4.2.
pub(super) const ML_KEM_768: KeyLayout = KeyLayout {
    name: "ML-KEM-768",
    oid: &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x04, 0x02],
    ek_len: 1184,
    dk_len: 2400,
};

/// ML-KEM-1024, 2.16.840.1.101.3.4.4.3.
pub(super) const ML_KEM_1024: KeyLayout = KeyLayout {
    name: "ML-KEM-1024",
    oid: &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x04, 0x03],
    ek_len: 1568,
    dk_len: 3168,
};

/// All three parameter sets.
pub(super) const LAYOUTS: [KeyLayout; 3] = [ML_KEM_512, ML_KEM_768, ML_KEM_1024];

/// The seed 00 01 02 ... 3f, as in the IETF examples.
pub(super) fn seed() -> [u8; SEED_LEN] {
    core::array::from_fn(|i| i as u8)
}

/// `len` bytes counting up from `start`, wrapping: stand-in key material.
pub(super) fn pattern(len: usize, start: u8) -> Vec<u8> {
    (0..len).map(|i| start.wrapping_add(i as u8)).collect()
}

/// Fake decapsulation and encapsulation keys of the right lengths.
pub(super) fn keys(layout: &KeyLayout) -> (Vec<u8>, Vec<u8>) {
    (pattern(layout.dk_len, 0x80), pattern(layout.ek_len, 0x40))
}

/// Whether `format` carries the seed.
pub(super) fn has_seed(format: PrivateKeyFormat) -> bool {
    use PrivateKeyFormat::*;
    matches!(format, SeedPriv | SeedOnly | BareSeed)
}

/// Whether `format` carries the decapsulation key.
pub(super) fn has_dk(format: PrivateKeyFormat) -> bool {
    !matches!(
        format,
        PrivateKeyFormat::SeedOnly | PrivateKeyFormat::BareSeed
    )
}

/// Marsaglia's xorshift64: enough randomness to mutate test inputs.
pub(super) struct XorShift(u64);

impl XorShift {
    /// A generator with a fixed nonzero state.
    pub(super) fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    /// The next 64 pseudo-random bits.
    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A pseudo-random value below `bound` (which must be nonzero).
    pub(super) fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound as u64) as usize
    }

    /// A pseudo-random byte.
    pub(super) fn byte(&mut self) -> u8 {
        self.next_u64().to_le_bytes()[0]
    }

    /// `len` pseudo-random bytes.
    pub(super) fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.byte()).collect()
    }

    /// A copy of `input` with one random structural mutation, biased
    /// towards the first bytes, where the tags and lengths are.
    pub(super) fn mutate(&mut self, input: &[u8]) -> Vec<u8> {
        let mut out = input.to_vec();
        let hot = out.len().clamp(1, 48);
        let at = if self.below(4) == 0 {
            self.below(out.len().max(1))
        } else {
            self.below(hot)
        };
        match self.below(7) {
            0 => out.truncate(at),
            1 => {
                if let Some(byte) = out.get_mut(at) {
                    *byte ^= 1 << self.below(8);
                }
            }
            2 => {
                if let Some(byte) = out.get_mut(at) {
                    *byte = self.byte();
                }
            }
            3 => {
                let at = at.min(out.len());
                out.insert(at, self.byte());
            }
            4 => {
                if at < out.len() {
                    out.remove(at);
                }
            }
            5 => {
                let len = self.below(4) + 1;
                let junk = self.bytes(len);
                out.extend_from_slice(&junk);
            }
            _ => {
                // Interesting values for a length octet.
                const LENGTHS: [u8; 8] = [0x00, 0x7f, 0x80, 0x81, 0x82, 0x84, 0x88, 0xff];
                if let Some(byte) = out.get_mut(at) {
                    *byte = LENGTHS[self.below(LENGTHS.len())];
                }
            }
        }
        out
    }
}
