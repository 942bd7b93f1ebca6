//! The AES-256-CTR DRBG of NIST's PQC `rng.c` (also liboqs
//! `src/common/rand/rand_nist.c`), which draws the seeds and the KeyGen and
//! Encaps randomness of the NIST-format known-answer tests. It is SP 800-90A
//! CTR_DRBG with AES-256 **without** a derivation function, reseeding or
//! prediction resistance; a test-vector generator, not an RNG for real keys.

use openssl::symm::{Cipher, Crypter, Mode};

/// Length of the entropy input (and of the seed material) in bytes.
pub const ENTROPY_LEN: usize = 48;

const BLOCK: usize = 16;

/// The DRBG state. `Clone` saves it, so that a caller can re-seed and
/// restore it the way `kat_kem` does.
#[derive(Clone)]
pub struct NistDrbg {
    key: [u8; 32],
    v: [u8; BLOCK],
}

impl NistDrbg {
    /// `randombytes_init(entropy_input, NULL, 256)`: Key = 0³², V = 0¹⁶,
    /// then `Update(entropy_input)`.
    pub fn new(entropy_input: &[u8; ENTROPY_LEN]) -> Self {
        let mut drbg = Self {
            key: [0; 32],
            v: [0; BLOCK],
        };
        drbg.update(Some(entropy_input));
        drbg
    }

    /// `N` fresh bytes, as `randombytes(out, N)`: AES(Key, ++V) for
    /// `ceil(N/16)` blocks, truncated to `N` bytes, then one `Update` with no
    /// data. Two calls of 32 bytes therefore give different output from one
    /// call of 64 bytes.
    pub fn random_array<const N: usize>(&mut self) -> [u8; N] {
        let stream = self.keystream(N.div_ceil(BLOCK));
        self.update(None);
        core::array::from_fn(|i| stream[i])
    }

    /// `AES256_CTR_DRBG_Update`: three blocks of AES(Key, ++V), XORed with
    /// `data` if given, become Key ‖ V.
    fn update(&mut self, data: Option<&[u8; ENTROPY_LEN]>) {
        let mut temp = self.keystream(ENTROPY_LEN / BLOCK);
        for (t, d) in temp.iter_mut().zip(data.into_iter().flatten()) {
            *t ^= d;
        }
        self.key.copy_from_slice(&temp[..32]);
        self.v.copy_from_slice(&temp[32..ENTROPY_LEN]);
    }

    /// Increments V (128-bit big-endian) `blocks` times, encrypting each new
    /// V under Key (AES-256-ECB over the concatenated counter blocks).
    fn keystream(&mut self, blocks: usize) -> Vec<u8> {
        let mut counters = Vec::with_capacity(blocks * BLOCK);
        for _ in 0..blocks {
            self.v = u128::from_be_bytes(self.v).wrapping_add(1).to_be_bytes();
            counters.extend_from_slice(&self.v);
        }
        let cipher = Cipher::aes_256_ecb();
        let mut crypter =
            Crypter::new(cipher, Mode::Encrypt, &self.key, None).expect("OpenSSL AES-256-ECB init");
        crypter.pad(false);
        let mut out = vec![0u8; counters.len() + cipher.block_size()];
        let n = crypter.update(&counters, &mut out).expect("AES-256-ECB");
        out.truncate(n);
        assert_eq!(n, counters.len(), "AES-256-ECB output length");
        out
    }
}

impl core::fmt::Debug for NistDrbg {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("NistDrbg").finish_non_exhaustive()
    }
}
