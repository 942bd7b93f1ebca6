//! The backend interface, in four parts, each method with the portable code
//! as its default, so that a backend overrides only what it accelerates:
//!
//! - [`Keccak`]: the one-way Keccak-f\[1600\] under G, H, J and any lone
//!   XOF or PRF stream;
//! - [`PolyKernels`]: the polynomial hot spots (NTT, inverse NTT, base
//!   multiplication, compression and coding);
//! - [`Sampling`]: Â and the noise vectors, where a backend brings its
//!   many-way Keccak and vector samplers;
//! - [`Schedule`]: how a whole step runs (key generation, parsing an
//!   encapsulation key, the encryption noise, decapsulation's hashes); the
//!   defaults run FIPS 203's steps one after the other, and a backend with
//!   sponge pools overlaps them.
//!
//! [`Backend`] is all four; the algorithm code in `pke` and `kem` is
//! generic over it.

use crate::params::ParameterSet;
use crate::poly::Poly;
use crate::{compress, encode, ntt, sample};

/// Keccak-f\[1600\] for the one-way hashes.
pub(crate) trait Keccak: Sized + 'static {
    /// Keccak-f\[1600\] on one state (G, H, J, and any stream a backend
    /// does not batch).
    #[inline(always)]
    fn keccak_f1600(state: &mut [u64; 25]) {
        keccak::f1600(state);
    }
}

/// The hash sponges run on the backend's one-way permutation.
impl<B: Keccak> crate::hash::Permutation for B {
    #[inline(always)]
    fn keccak_f1600(state: &mut [u64; 25]) {
        let start = crate::profile_hooks::permutation_start();
        <B as Keccak>::keccak_f1600(state);
        crate::profile_hooks::permutation_end(start, 1);
    }
}

/// The polynomial arithmetic and coding.
pub(crate) trait PolyKernels {
    /// Algorithm 9: NTT in place; input below q in absolute value, output
    /// reduced into [-(q-1)/2, (q-1)/2].
    #[inline(always)]
    fn ntt(p: &mut Poly) {
        ntt::ntt(p);
    }

    /// Algorithm 10: NTT^-1 in place, times 2^16.
    #[inline(always)]
    fn inv_ntt(p: &mut Poly) {
        ntt::inv_ntt(p);
    }

    /// Algorithms 11 and 12: acc = Σ a_i ∘ b_i · 2^-16, reduced.
    #[inline(always)]
    fn multiply_accumulate(acc: &mut Poly, a: &[Poly], b: &[Poly]) {
        ntt::multiply_accumulate(acc, a, b);
    }

    /// acc = Barrett-reduced acc + e (the end of each part of
    /// K-PKE.Encrypt's u and v): `Poly::add_assign` then `Poly::reduce`.
    #[inline(always)]
    fn add_reduce(acc: &mut Poly, e: &Poly) {
        acc.add_assign(e);
        acc.reduce();
    }

    /// ByteEncode_d(Compress_d(p)) into 32·d bytes.
    #[inline(always)]
    fn compress_encode<const D: usize>(p: &Poly, out: &mut [u8]) {
        encode::pack::<D>(p, out, compress::compress::<D>);
    }

    /// Decompress_d(ByteDecode_d(bytes)); coefficients in [0, q).
    #[inline(always)]
    fn decode_decompress<const D: usize>(bytes: &[u8], p: &mut Poly) {
        encode::unpack::<D>(bytes, p, compress::decompress::<D>);
    }

    /// ByteEncode_12 of a polynomial with coefficients in (-q, q).
    #[inline(always)]
    fn encode_12(p: &Poly, out: &mut [u8]) {
        encode::encode_12(p, out);
    }

    /// ByteDecode_12, reporting whether every value was below q.
    #[inline(always)]
    fn decode_12_checked(bytes: &[u8], p: &mut Poly) -> bool {
        encode::decode_12_checked(bytes, p)
    }
}

/// Sampling Â and the noise vectors.
pub(crate) trait Sampling: Keccak {
    /// Â as a row-major k×k matrix: `out[i*k + j]` = SampleNTT(ρ ‖ j ‖ i)
    /// (Algorithm 7).
    #[inline(always)]
    fn sample_matrix(rho: &[u8; 32], k: usize, out: &mut [Poly]) {
        for (index, entry) in out.iter_mut().enumerate() {
            let (i, j) = (index / k, index % k);
            sample::sample_ntt::<Self>(rho, j as u8, i as u8, entry);
        }
    }

    /// Noise vector: `out[i]` = SamplePolyCBD_eta(PRF_eta(seed, nonce + i))
    /// (Algorithm 8).
    #[inline(always)]
    fn sample_noise<const ETA: usize>(seed: &[u8; 32], nonce: u8, out: &mut [Poly]) {
        let mut prf_out = [0u8; 192];
        let bytes = &mut prf_out[..64 * ETA];
        for (i, p) in out.iter_mut().enumerate() {
            crate::hash::prf::<Self>(seed, nonce + i as u8, bytes);
            sample::sample_poly_cbd::<ETA>(bytes, p);
        }
        zeroize::Zeroize::zeroize(&mut prf_out);
    }
}

/// Noise for each polynomial of `out`, with consecutive PRF nonces from
/// `nonce`: the backend's [`Sampling::sample_noise`] for the (run-time)
/// eta of a parameter set.
#[inline(always)]
pub(crate) fn sample_noise_eta<B: Sampling>(
    eta: usize,
    seed: &[u8; 32],
    nonce: u8,
    out: &mut [Poly],
) {
    match eta {
        2 => B::sample_noise::<2>(seed, nonce, out),
        3 => B::sample_noise::<3>(seed, nonce, out),
        _ => unreachable!("FIPS 203 uses eta = 2 or 3 only"),
    }
}

/// The noise of K-PKE.Encrypt (Algorithm 14, lines 9-17) one vector after
/// the other: the default of [`Schedule::sample_encryption_noise`], and the
/// fallback of the backends that override it.
#[inline(always)]
pub(crate) fn sequential_encryption_noise<P: ParameterSet, B: Sampling>(
    r: &[u8; 32],
    y: &mut [Poly],
    e1_e2: &mut [Poly],
) {
    sample_noise_eta::<B>(P::ETA1, r, 0, y);
    sample_noise_eta::<B>(P::ETA2, r, P::K as u8, e1_e2);
}

/// What decapsulation hashes after K-PKE.Decrypt (see
/// [`Schedule::decaps_hashes`]).
#[derive(Clone, Copy)]
pub(crate) struct DecapsHashInput<'a> {
    /// The decrypted message m'.
    pub(crate) m: &'a [u8; 32],
    /// H(ek).
    pub(crate) h: &'a [u8; 32],
    /// The implicit-rejection secret z.
    pub(crate) z: &'a [u8; 32],
    /// The ciphertext c.
    pub(crate) c: &'a [u8],
    /// J(z ‖ c), if it was computed while the key was parsed
    /// ([`Schedule::hash_and_sample_matrix`]).
    pub(crate) rejection: Option<&'a [u8; 32]>,
}

/// Where key generation writes the key: `expanded` (Â^T ‖ t̂, see
/// `pke::expanded_key_len`), `s_hat` (ŝ, k polynomials) and `ek`
/// (ByteEncode_12(t̂) ‖ ρ, `P::EK_LEN` bytes).
pub(crate) struct KeyBuffers<'a> {
    pub(crate) expanded: &'a mut [Poly],
    pub(crate) s_hat: &'a mut [Poly],
    pub(crate) ek: &'a mut [u8],
}

/// How the steps of key generation, key parsing, encryption and
/// decapsulation are scheduled. The defaults run them one after the other;
/// a backend with pools of sponges overlaps them, with the same bytes out.
pub(crate) trait Schedule: Sampling {
    /// Algorithm 13 (K-PKE.KeyGen) after G, with ek = ByteEncode_12(t̂) ‖ ρ
    /// and H(ek), for a backend that runs it its own way (e.g. overlapping
    /// the hash with the sampling): fills `out` exactly as
    /// `pke::generate` does and returns H(ek). The default, `None`, leaves
    /// it to that sequential algorithm, which then writes all of `out`: a
    /// backend whose schedule could not finish (its pools cannot stall,
    /// but they return `None` rather than a hash of part of ek if one
    /// did) may leave `out` half written.
    #[inline(always)]
    fn generate_key<P: ParameterSet>(
        _rho: &[u8; 32],
        _sigma: &[u8; 32],
        _out: &mut KeyBuffers<'_>,
    ) -> Option<[u8; 32]> {
        None
    }

    /// H(ek) and Â^T (`out[j*k + i]` = Â[i, j], the layout K-PKE.Encrypt
    /// reads) of an encapsulation key being parsed: both depend only on its
    /// bytes. With `rejection` = (z, c), for a decapsulation key parsed to
    /// decapsulate one ciphertext at once, J(z ‖ c) too, or `None` for it if
    /// the backend leaves J to [`Schedule::decaps_hashes`].
    #[inline(always)]
    fn hash_and_sample_matrix(
        ek: &[u8],
        rho: &[u8; 32],
        k: usize,
        out: &mut [Poly],
        rejection: Option<(&[u8; 32], &[u8])>,
    ) -> ([u8; 32], Option<[u8; 32]>) {
        Self::sample_matrix(rho, k, out);
        crate::poly::transpose(k, out);
        let j = rejection.map(|(z, c)| crate::hash::j::<Self>(z, c));
        (crate::hash::h::<Self>(ek), j)
    }

    /// The noise of K-PKE.Encrypt (Algorithm 14, lines 9-17) from its
    /// randomness r: y (k polynomials, eta1, PRF nonces 0..k) and e1 ‖ e2
    /// (k + 1 polynomials, eta2, nonces k..2k + 1).
    #[inline(always)]
    fn sample_encryption_noise<P: ParameterSet>(r: &[u8; 32], y: &mut [Poly], e1_e2: &mut [Poly]) {
        sequential_encryption_noise::<P, Self>(r, y, e1_e2);
    }

    /// Decapsulation's hashes after K-PKE.Decrypt: (K', r') = G(m' ‖ h)
    /// and K̄ = J(z ‖ c) (Algorithm 18, lines 7-8), returned as (K', K̄),
    /// and the re-encryption's noise from r' (Algorithm 14, lines 9-17:
    /// y, k polynomials with eta1, and e1 ‖ e2, k + 1 with eta2) written to
    /// `y` and `e1_e2`; r' stays inside.
    #[inline(always)]
    fn decaps_hashes<P: ParameterSet>(
        input: &DecapsHashInput<'_>,
        y: &mut [Poly],
        e1_e2: &mut [Poly],
    ) -> ([u8; 32], [u8; 32]) {
        let (mut shared, mut r) = ([0u8; 32], [0u8; 32]);
        crate::hash::g::<Self>(input.m, input.h, &mut shared, &mut r);
        let rejection = match input.rejection {
            Some(computed) => *computed,
            None => crate::hash::j::<Self>(input.z, input.c),
        };
        Self::sample_encryption_noise::<P>(&r, y, e1_e2);
        zeroize::Zeroize::zeroize(&mut r);
        (shared, rejection)
    }
}

/// A complete backend: every part of the interface.
pub(crate) trait Backend: Keccak + PolyKernels + Sampling + Schedule {}

impl<B: Keccak + PolyKernels + Sampling + Schedule> Backend for B {}
