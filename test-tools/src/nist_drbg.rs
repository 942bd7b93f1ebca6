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

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02X}")).collect()
    }

    fn kat_entropy() -> [u8; ENTROPY_LEN] {
        core::array::from_fn(|i| i as u8)
    }

    /// Draws seed, then (d ‖ z) and m from a DRBG re-seeded with it, the way
    /// kat_kem does for one count.
    fn draw(outer: &mut NistDrbg) -> (String, String, String, String) {
        let seed: [u8; ENTROPY_LEN] = outer.random_array();
        let mut inner = NistDrbg::new(&seed);
        let dz: [u8; 64] = inner.random_array();
        let m: [u8; 32] = inner.random_array();
        (hex(&seed), hex(&dz[..32]), hex(&dz[32..]), hex(&m))
    }

    #[test]
    fn count_0_and_1_sanity_values() {
        let mut outer = NistDrbg::new(&kat_entropy());

        let (seed, d, z, m) = draw(&mut outer);
        assert_eq!(
            seed,
            "061550234D158C5EC95595FE04EF7A25767F2E24CC2BC479D09D86DC9ABCFDE7\
             056A8C266F9EF97ED08541DBD2E1FFA1"
        );
        assert_eq!(
            d,
            "7C9935A0B07694AA0C6D10E4DB6B1ADD2FD81A25CCB148032DCD739936737F2D"
        );
        assert_eq!(
            z,
            "B505D7CFAD1B497499323C8686325E4792F267AAFA3F87CA60D01CB54F29202A"
        );
        assert_eq!(
            m,
            "EB4A7C66EF4EBA2DDB38C88D8BC706B1D639002198172A7B1942ECA8F6C001BA"
        );

        let (seed, d, z, m) = draw(&mut outer);
        assert_eq!(
            seed,
            "D81C4D8D734FCBFBEADE3D3F8A039FAA2A2C9957E835AD55B22E75BF57BB556A\
             C81ADDE6AEEB4A5A875C3BFCADFA958F"
        );
        assert_eq!(
            d,
            "D60B93492A1D8C1C7BA6FC0B733137F3406CEE8110A93F170E7A78658AF326D9"
        );
        assert_eq!(
            z,
            "588522D326E7F105F11C4E8D97E119E193AF42DC28409F4F7572ADA538B52C1F"
        );
        assert_eq!(
            m,
            "46401015603C5E2174CB94AC742E836B516E2D570F15DE0B9D0204D79AC64BA3"
        );
    }

    #[test]
    fn one_update_per_call() {
        // One 64-byte call is not two 32-byte calls, but its first block
        // equals the first block of a 32-byte call from the same state.
        let mut a = NistDrbg::new(&kat_entropy());
        let mut b = a.clone();
        let whole: [u8; 64] = a.random_array();
        let first: [u8; 32] = b.random_array();
        let second: [u8; 32] = b.random_array();
        assert_eq!(whole[..32], first);
        assert_ne!(whole[32..], second);
    }

    #[test]
    fn partial_block_is_a_prefix() {
        let mut a = NistDrbg::new(&kat_entropy());
        let mut b = a.clone();
        let short: [u8; 5] = a.random_array();
        let block: [u8; 16] = b.random_array();
        assert_eq!(short, block[..5]);
        // Both calls consumed one block and ran one Update: same state after.
        assert_eq!(a.random_array::<16>(), b.random_array::<16>());
    }

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
            hex(&aes256_ecb_encrypt(&key, &pt)),
            "8EA2B7CA516745BFEAFC49904B496089"
        );
    }
}
