//! ML-KEM's internal algorithms (FIPS 203, section 6): KeyGen_internal
//! (Algorithm 16), Encaps_internal (Algorithm 17) and Decaps_internal
//! (Algorithm 18), on expanded key parts and bytes, generic over the
//! parameter set and the backend. The key types of `keys` wrap them.

use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};

use crate::backend::Backend;
use crate::hash;
use crate::params::{ByteArray, ParameterSet, PolyVec};
use crate::pke;
use crate::poly::Poly;
use crate::wipe::{wipe, wipe_bytes};

/// A freshly generated key pair in expanded form (see `pke`): Â^T ‖ t̂ and
/// ŝ, with the encoded ek and H(ek).
pub(crate) struct GeneratedKey {
    pub(crate) expanded: Box<[Poly]>,
    pub(crate) s_hat: Box<[Poly]>,
    pub(crate) ek: Box<[u8]>,
    pub(crate) ek_hash: [u8; 32],
}

/// Algorithm 16: ML-KEM.KeyGen_internal(d, z), up to the assembly of dk:
/// the caller keeps z.
// One frame per backend: `dispatch!` instantiates every backend in the
// caller, and inlined they would share (and add up) its stack frame.
#[inline(never)]
pub(crate) fn keygen_internal<P: ParameterSet, B: Backend>(d: &[u8; 32]) -> GeneratedKey {
    // Algorithm 13, line 1: (ρ, σ) = G(d ‖ k).
    let (mut rho, mut sigma) = ([0u8; 32], [0u8; 32]);
    hash::g::<B>(d, &[P::K as u8], &mut rho, &mut sigma);
    // ρ is public (it is part of ek), although derived from the secret d;
    // the matrix sampled from it may branch on its bytes.
    #[cfg(feature = "ct-taint")]
    crate::ct_taint::declassify(&rho);
    let mut expanded = pke::new_polys(pke::expanded_key_len(P::K));
    let mut s_hat = pke::new_polys(P::K);
    // Allocated, then zeroed: `vec![0; n]` calls calloc, which in glibc
    // skips the thread cache and costs about twice malloc and a memset of
    // this size. `black_box` keeps the compiler from folding the two back
    // into calloc.
    let mut ek = core::hint::black_box(Vec::with_capacity(P::EK_LEN));
    ek.resize(P::EK_LEN, 0u8);
    let mut ek = ek.into_boxed_slice();
    let buffers = crate::backend::KeyBuffers {
        expanded: &mut expanded,
        s_hat: &mut s_hat,
        ek: &mut ek,
    };
    let ek_hash = pke::generate::<P, B>(&rho, &sigma, buffers);
    wipe(&mut sigma, [0; 32]);
    GeneratedKey {
        expanded,
        s_hat,
        ek,
        ek_hash,
    }
}

/// Algorithm 17: ML-KEM.Encaps_internal(ek, m), with the expanded ek and
/// H(ek): writes c to `ct` and returns K.
#[inline(never)]
pub(crate) fn encaps_internal<P: ParameterSet, B: Backend>(
    expanded: &[Poly],
    ek_hash: &[u8; 32],
    m: &[u8; 32],
    ct: &mut [u8],
) -> [u8; 32] {
    // (K, r) = G(m ‖ H(ek))
    let (mut shared, mut r) = ([0u8; 32], [0u8; 32]);
    hash::g::<B>(m, ek_hash, &mut shared, &mut r);
    pke::encrypt::<P, B>(expanded, m, &r, ct);
    wipe(&mut r, [0; 32]);
    shared
}

/// The parts of a decapsulation key that Decaps reads.
pub(crate) struct DecapsKeyParts<'a> {
    /// ŝ.
    pub(crate) s_hat: &'a [Poly],
    /// Â^T ‖ t̂ of the embedded ek.
    pub(crate) expanded: &'a [Poly],
    /// H(ek).
    pub(crate) ek_hash: &'a [u8; 32],
    /// The implicit-rejection secret.
    pub(crate) z: &'a [u8; 32],
    /// J(z ‖ c) for the ciphertext to decapsulate, if the key was parsed
    /// for it and computed it then.
    pub(crate) rejection: Option<&'a [u8; 32]>,
}

/// Algorithm 18: ML-KEM.Decaps_internal(dk, c), with implicit rejection in
/// constant time: the re-encryption is compared with `c` without an early
/// exit, and K' or K̄ is selected without a branch.
#[inline(never)]
pub(crate) fn decaps_internal<P: ParameterSet, B: Backend>(
    dk: DecapsKeyParts<'_>,
    c: &[u8],
) -> [u8; 32] {
    let mut m = [0u8; 32];
    pke::decrypt::<P, B>(dk.s_hat, c, &mut m);

    // (K', r') = G(m' ‖ h); K̄ = J(z ‖ c); c' = K-PKE.Encrypt(ek, m', r'),
    // whose noise the backend samples with the two hashes.
    let mut y = P::PolyVec::zeroed();
    let mut noise = P::NoiseVec::zeroed();
    let input = crate::backend::DecapsHashInput {
        m: &m,
        h: dk.ek_hash,
        z: dk.z,
        c,
        rejection: dk.rejection,
    };
    let (mut shared, mut rejection) = B::decaps_hashes::<P>(&input, y.as_mut(), noise.as_mut());
    let mut c_prime = P::CiphertextBytes::zeroed();
    pke::encrypt_with_noise::<P, B>(
        dk.expanded,
        &m,
        y.as_mut(),
        noise.as_mut(),
        c_prime.as_mut(),
    );

    // If c ≠ c', K' = K̄.
    let mismatch = !ct_eq_bytes(c, c_prime.as_ref());
    for (k, k_bar) in shared.chunks_exact_mut(8).zip(rejection.chunks_exact(8)) {
        let word = u64::conditional_select(&word_of(k), &word_of(k_bar), mismatch);
        k.copy_from_slice(&word.to_le_bytes());
    }

    // Block writes: `zeroize` would store the 768- to 1,568-byte c' a byte
    // at a time.
    wipe(&mut m, [0; 32]);
    wipe(&mut rejection, [0; 32]);
    wipe_bytes(c_prime.as_mut());
    shared
}

/// Constant-time equality of two equal-length byte strings (ciphertexts
/// and hashes, whose lengths are multiples of 8): the OR of the XORs of
/// their 8-byte words, compared with zero by `subtle`. Every byte is read
/// whatever the data; unlike a per-byte `subtle` comparison it costs one
/// optimisation barrier instead of one per byte.
pub(crate) fn ct_eq_bytes(a: &[u8], b: &[u8]) -> Choice {
    // Lengths are public: a mismatch is a bug, not a difference.
    assert_eq!(a.len(), b.len());
    debug_assert_eq!(a.len() % 8, 0);
    let diff = a
        .chunks_exact(8)
        .zip(b.chunks_exact(8))
        .fold(0u64, |acc, (x, y)| acc | (word_of(x) ^ word_of(y)));
    diff.ct_eq(&0)
}

/// An 8-byte chunk as a little-endian word.
#[inline(always)]
fn word_of(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().expect("8-byte chunk"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ct_eq_bytes_sees_every_byte() {
        let a: Vec<u8> = (0..1088u32).map(|i| (i * 7) as u8).collect();
        assert!(bool::from(ct_eq_bytes(&a, &a)));
        for position in [0, 1, 7, 8, 543, 1080, 1087] {
            for bit in 0..8 {
                let mut b = a.clone();
                b[position] ^= 1 << bit;
                assert!(
                    !bool::from(ct_eq_bytes(&a, &b)),
                    "byte {position} bit {bit}"
                );
            }
        }
    }
}
