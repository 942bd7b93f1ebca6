//! The AES-256-CTR DRBG of NIST's PQC `rng.c` (also liboqs
//! `src/common/rand/rand_nist.c`), used to draw the seeds and the KeyGen and
//! Encaps randomness of the NIST-format known-answer tests.
//!
//! It is SP 800-90A CTR_DRBG with AES-256, **without** a derivation function,
//! reseeding or prediction resistance:
//!
//! * `Update(data)`: three times add 1 to V (128-bit big-endian) and encrypt
//!   it under Key; XOR the 48 bytes with `data` if given; Key is the first 32
//!   bytes, V the last 16.
//! * `Init(entropy)`: Key = 0³², V = 0¹⁶, then `Update(entropy)`.
//! * `randombytes(n)`: output `ceil(n/16)` blocks of AES(Key, ++V),
//!   truncated to n bytes, then one `Update(none)`, whatever n was.
//!
//! This is a test-vector generator, not a cryptographic RNG for real keys.

use openssl::symm::{Cipher, Crypter, Mode};

/// Length of the entropy input (and of the seed material) in bytes.
pub const ENTROPY_LEN: usize = 48;

const BLOCK: usize = 16;

/// The NIST PQC AES-256-CTR DRBG state. `Clone` saves the state, so that a
/// caller can re-seed and restore it the way `kat_kem` does.
#[derive(Clone)]
pub struct NistDrbg {
    key: [u8; 32],
    v: [u8; BLOCK],
    reseed_counter: u64,
}

impl NistDrbg {
    /// `randombytes_init(entropy_input, NULL, 256)`: instantiates the DRBG
    /// from 48 bytes of entropy with no personalization string.
    pub fn new(entropy_input: &[u8; ENTROPY_LEN]) -> Self {
        let mut drbg = Self {
            key: [0u8; 32],
            v: [0u8; BLOCK],
            reseed_counter: 0,
        };
        drbg.update(Some(entropy_input));
        drbg.reseed_counter = 1;
        drbg
    }

    /// `randombytes(out, out.len())`: fills `out` from the DRBG, then runs one
    /// `Update` with no provided data. Two calls of 32 bytes therefore give
    /// different output from one call of 64 bytes.
    pub fn randombytes(&mut self, out: &mut [u8]) {
        let blocks = out.len().div_ceil(BLOCK);
        let stream = self.keystream(blocks);
        out.copy_from_slice(&stream[..out.len()]);
        self.update(None);
        self.reseed_counter = self.reseed_counter.wrapping_add(1);
    }

    /// Returns `N` fresh bytes (one `randombytes` call of `N` bytes).
    pub fn random_array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        self.randombytes(&mut out);
        out
    }

    /// `AES256_CTR_DRBG_Update`.
    fn update(&mut self, provided_data: Option<&[u8; ENTROPY_LEN]>) {
        let mut temp = self.keystream(ENTROPY_LEN / BLOCK);
        if let Some(data) = provided_data {
            for (t, d) in temp.iter_mut().zip(data) {
                *t ^= d;
            }
        }
        self.key.copy_from_slice(&temp[..32]);
        self.v.copy_from_slice(&temp[32..ENTROPY_LEN]);
    }

    /// Increments V `blocks` times, encrypting each new V under Key
    /// (AES-256-ECB over the concatenated counter blocks).
    fn keystream(&mut self, blocks: usize) -> Vec<u8> {
        let mut counters = Vec::with_capacity(blocks * BLOCK);
        for _ in 0..blocks {
            increment_be(&mut self.v);
            counters.extend_from_slice(&self.v);
        }
        aes256_ecb_encrypt(&self.key, &counters)
    }
}

impl core::fmt::Debug for NistDrbg {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("NistDrbg")
            .field("reseed_counter", &self.reseed_counter)
            .finish_non_exhaustive()
    }
}

/// Adds 1 to a 128-bit big-endian integer, wrapping around.
fn increment_be(v: &mut [u8; BLOCK]) {
    *v = u128::from_be_bytes(*v).wrapping_add(1).to_be_bytes();
}

/// AES-256-ECB encryption of whole blocks, no padding.
///
/// # Panics
///
/// If OpenSSL fails to run AES-256-ECB, which only happens when the library
/// is unusable.
fn aes256_ecb_encrypt(key: &[u8; 32], data: &[u8]) -> Vec<u8> {
    debug_assert_eq!(data.len() % BLOCK, 0);
    let cipher = Cipher::aes_256_ecb();
    let mut crypter =
        Crypter::new(cipher, Mode::Encrypt, key, None).expect("OpenSSL AES-256-ECB init");
    crypter.pad(false);
    let mut out = vec![0u8; data.len() + cipher.block_size()];
    let mut n = crypter.update(data, &mut out).expect("AES-256-ECB update");
    n += crypter
        .finalize(&mut out[n..])
        .expect("AES-256-ECB finalize");
    assert_eq!(n, data.len(), "AES-256-ECB output length");
    out.truncate(n);
    out
}

/// The private helpers; the DRBG's output is tested in `tests/nist_drbg.rs`.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::nist_kat::hex_upper;

    #[test]
    fn counter_carries_across_bytes() {
        let mut v = [0xFFu8; BLOCK];
        v[0] = 0x00;
        increment_be(&mut v);
        let mut expected = [0u8; BLOCK];
        expected[0] = 0x01;
        assert_eq!(v, expected);
        let mut all = [0xFFu8; BLOCK];
        increment_be(&mut all);
        assert_eq!(all, [0u8; BLOCK]);
    }

    #[test]
    fn aes256_fips197_vector() {
        // FIPS 197 Appendix C.3.
        let key: [u8; 32] = core::array::from_fn(|i| i as u8);
        let pt: Vec<u8> = (0..16u8).map(|i| i * 0x11).collect();
        assert_eq!(
            hex_upper(&aes256_ecb_encrypt(&key, &pt)),
            "8EA2B7CA516745BFEAFC49904B496089"
        );
    }
}
