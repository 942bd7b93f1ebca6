//! K-PKE, the CPA-secure public-key encryption scheme inside ML-KEM (FIPS
//! 203, section 5): KeyGen (Algorithm 13), Encrypt (Algorithm 14) and
//! Decrypt (Algorithm 15), generic over the parameter set and the backend.
//!
//! Every secret intermediate (noise, the message polynomial, uncompressed
//! ciphertext parts) is zeroized before returning.

use zeroize::{Zeroize, Zeroizing};

use crate::backend::{sample_noise_eta, Backend, KeyBuffers};
use crate::encode::encoded_len;
use crate::params::{ParameterSet, PolyVec};
use crate::poly::{transpose, zeroize_all, Poly};

/// The expanded public key as K-PKE uses it: Â transposed (k² polynomials,
/// row-major; row i is column i of Â, the layout Encrypt reads) followed by
/// t̂ (k polynomials), all with canonical coefficients in [0, q).
pub(crate) fn expanded_key_len(k: usize) -> usize {
    k * k + k
}

/// A zeroed heap vector of `len` polynomials (keys keep their expanded parts
/// on the heap, so that moving a key is cheap and operations stay within a
/// small stack).
pub(crate) fn new_polys(len: usize) -> Box<[Poly]> {
    vec![Poly::ZERO; len].into_boxed_slice()
}

/// Algorithm 13 (K-PKE.KeyGen) after (ρ, σ) = G(d ‖ k), with the encoding
/// of ek (Algorithm 13, line 19) and H(ek) (Algorithm 16, line 3): fills
/// `out` (Â^T ‖ t̂, ŝ and t̂ with canonical coefficients, and ek) and returns
/// H(ek). A backend may run it its own way (`Backend::generate_key`, which
/// must give the same bytes); else it runs one step after the other, as
/// here.
pub(crate) fn generate<P: ParameterSet, B: Backend>(
    rho: &[u8; 32],
    sigma: &[u8; 32],
    mut out: KeyBuffers<'_>,
) -> [u8; 32] {
    if let Some(h) = B::generate_key::<P>(rho, sigma, &mut out) {
        return h;
    }
    let KeyBuffers {
        expanded,
        s_hat,
        ek,
    } = out;
    let k = P::K;
    let (a_hat, t_hat) = expanded.split_at_mut(k * k);
    // Row-major Â first: t̂_i is the product of row i with ŝ.
    B::sample_matrix(rho, k, a_hat);

    // ŝ and ê with PRF nonces 0..k and k..2k.
    let mut e = P::PolyVec::zeroed();
    sample_noise_eta::<B>(P::ETA1, sigma, 0, s_hat);
    sample_noise_eta::<B>(P::ETA1, sigma, k as u8, e.as_mut());
    for p in s_hat.iter_mut().chain(e.as_mut().iter_mut()) {
        B::ntt(p);
    }
    let (t_bytes, rho_bytes) = ek.split_at_mut(384 * k);
    for (((t, row), e), bytes) in t_hat
        .iter_mut()
        .zip(a_hat.chunks_exact(k))
        .zip(e.as_ref())
        .zip(t_bytes.chunks_exact_mut(384))
    {
        B::multiply_accumulate(t, row, s_hat);
        t.scale_to_montgomery();
        t.add_assign(e);
        t.reduce();
        t.make_canonical();
        B::encode_12(t, bytes);
    }
    zeroize_all(e.as_mut());
    for s in s_hat.iter_mut() {
        s.make_canonical();
    }
    transpose(k, a_hat);
    rho_bytes.copy_from_slice(rho);
    crate::hash::h::<B>(ek)
}

/// The expanded form of an encapsulation key `ek` = ByteEncode_12(t̂) ‖ ρ
/// whose t̂ is already decoded: Â^T (Algorithm 14, lines 4-8) into the first
/// k² polynomials of `expanded`; returns H(ek), and with `rejection` =
/// (z, c) J(z ‖ c) too.
pub(crate) fn expand_key<B: Backend>(
    ek: &[u8],
    k: usize,
    expanded: &mut [Poly],
    rejection: Option<(&[u8; 32], &[u8])>,
) -> ([u8; 32], Option<Zeroizing<[u8; 32]>>) {
    let rho: &[u8; 32] = ek[384 * k..].try_into().expect("ek length checked");
    let (h, j) = B::hash_and_sample_matrix(ek, rho, k, &mut expanded[..k * k], rejection);
    (h, j.map(Zeroizing::new))
}

/// Algorithm 14: K-PKE.Encrypt(ek, m, r) into `ct` (`P::CT_LEN` bytes), with
/// the expanded key (see [`expanded_key_len`]).
pub(crate) fn encrypt<P: ParameterSet, B: Backend>(
    expanded: &[Poly],
    m: &[u8; 32],
    r: &[u8; 32],
    ct: &mut [u8],
) {
    let mut y = P::PolyVec::zeroed();
    let mut noise = P::NoiseVec::zeroed();
    B::sample_encryption_noise::<P>(r, y.as_mut(), noise.as_mut());
    encrypt_with_noise::<P, B>(expanded, m, y.as_mut(), noise.as_mut(), ct);
}

/// Algorithm 14 after its noise is sampled (see
/// `Schedule::sample_encryption_noise`): `y` (transformed here) and `noise` = e1 ‖
/// e2; both are zeroized before returning.
pub(crate) fn encrypt_with_noise<P: ParameterSet, B: Backend>(
    expanded: &[Poly],
    m: &[u8; 32],
    y: &mut [Poly],
    noise: &mut [Poly],
    ct: &mut [u8],
) {
    let k = P::K;
    let (a_hat_t, t_hat) = expanded.split_at(k * k);
    for p in y.iter_mut() {
        B::ntt(p);
    }
    let (e1, e2) = noise.split_at_mut(k);

    // u = NTT^-1(Â^T ∘ ŷ) + e1, one row at a time, compressed into c1.
    let (c1, c2) = ct.split_at_mut(k * encoded_len(P::DU));
    let mut acc = Poly::ZERO;
    for ((row, e1), out) in a_hat_t
        .chunks_exact(k)
        .zip(e1.iter())
        .zip(c1.chunks_exact_mut(encoded_len(P::DU)))
    {
        B::multiply_accumulate(&mut acc, row, y);
        B::inv_ntt(&mut acc);
        B::add_reduce(&mut acc, e1);
        compress_encode::<B>(P::DU, &acc, out);
    }

    // v = NTT^-1(t̂^T ∘ ŷ) + e2 + Decompress_1(ByteDecode_1(m)), into c2.
    B::multiply_accumulate(&mut acc, t_hat, y);
    B::inv_ntt(&mut acc);
    acc.add_assign(&e2[0]);
    B::decode_decompress::<1>(m, &mut e2[0]);
    B::add_reduce(&mut acc, &e2[0]);
    compress_encode::<B>(P::DV, &acc, c2);

    zeroize_all(y);
    zeroize_all(noise);
    acc.zeroize();
}

/// Algorithm 15: K-PKE.Decrypt(dk, c), writing the message to `m`.
pub(crate) fn decrypt<P: ParameterSet, B: Backend>(s_hat: &[Poly], ct: &[u8], m: &mut [u8; 32]) {
    let (c1, c2) = ct.split_at(P::K * encoded_len(P::DU));
    let mut u = P::PolyVec::zeroed();
    for (p, bytes) in u
        .as_mut()
        .iter_mut()
        .zip(c1.chunks_exact(encoded_len(P::DU)))
    {
        decode_decompress::<B>(P::DU, bytes, p);
        B::ntt(p);
    }
    // w = v - NTT^-1(ŝ^T ∘ NTT(u))
    let mut w = Poly::ZERO;
    B::multiply_accumulate(&mut w, s_hat, u.as_ref());
    B::inv_ntt(&mut w);
    let mut v = Poly::ZERO;
    decode_decompress::<B>(P::DV, c2, &mut v);
    w.sub_from(&v);
    w.reduce();
    B::compress_encode::<1>(&w, m);
    w.zeroize();
}

#[inline(always)]
fn compress_encode<B: Backend>(d: usize, p: &Poly, out: &mut [u8]) {
    match d {
        4 => B::compress_encode::<4>(p, out),
        5 => B::compress_encode::<5>(p, out),
        10 => B::compress_encode::<10>(p, out),
        11 => B::compress_encode::<11>(p, out),
        _ => unreachable!("FIPS 203 uses du, dv in {{4, 5, 10, 11}}"),
    }
}

#[inline(always)]
fn decode_decompress<B: Backend>(d: usize, bytes: &[u8], p: &mut Poly) {
    match d {
        4 => B::decode_decompress::<4>(bytes, p),
        5 => B::decode_decompress::<5>(bytes, p),
        10 => B::decode_decompress::<10>(bytes, p),
        11 => B::decode_decompress::<11>(bytes, p),
        _ => unreachable!("FIPS 203 uses du, dv in {{4, 5, 10, 11}}"),
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;
    use crate::backend::{available_backends, with_backend, Avx2, BackendKind, Portable};
    use crate::hash::{self, SHAKE128_RATE};
    use crate::params::{MlKem1024, MlKem512, MlKem768};
    use crate::poly::N;

    /// Whether some entry of Â(ρ) needs a fourth SHAKE128 block.
    fn needs_fourth_block(rho: &[u8; 32], k: usize) -> bool {
        (0..k * k).any(|entry| {
            let mut xof = hash::xof::<Portable>(rho, (entry % k) as u8, (entry / k) as u8);
            let mut bytes = [0u8; 3 * SHAKE128_RATE];
            for block in bytes.chunks_exact_mut(SHAKE128_RATE) {
                xof.squeeze_block(block);
            }
            crate::sample::rejection_sample(&mut [0; N], 0, &bytes) < N
        })
    }

    /// Everything key generation writes: Â^T ‖ t̂, ŝ, ek and H(ek).
    type Generated = (Box<[Poly]>, Box<[Poly]>, Vec<u8>, [u8; 32]);

    fn generate_with<P: ParameterSet, B: Backend>(rho: &[u8; 32], sigma: &[u8; 32]) -> Generated {
        let mut expanded = new_polys(expanded_key_len(P::K));
        let mut s_hat = new_polys(P::K);
        let mut ek = vec![0u8; P::EK_LEN];
        let buffers = KeyBuffers {
            expanded: &mut expanded,
            s_hat: &mut s_hat,
            ek: &mut ek,
        };
        let h = generate::<P, B>(rho, sigma, buffers);
        (expanded, s_hat, ek, h)
    }

    /// The AVX2 key generation (a pool of sponges, `x86_64::pools::keygen`) against
    /// the sequential one on 300 seeds, some of whose matrices need a
    /// fourth block.
    fn avx2_matches_sequential<P: ParameterSet>() {
        let mut fourth_blocks = 0;
        for seed in 0..300u32 {
            let (mut rho, mut sigma) = ([0u8; 32], [0u8; 32]);
            hash::g::<Portable>(&seed.to_le_bytes(), &[P::K as u8], &mut rho, &mut sigma);
            let expected = generate_with::<P, Portable>(&rho, &sigma);
            let got = generate_with::<P, Avx2>(&rho, &sigma);
            assert!(got == expected, "{} seed {seed}", P::NAME);
            fourth_blocks += usize::from(needs_fourth_block(&rho, P::K));
        }
        assert!(
            fourth_blocks > 0,
            "{}: no seed needed a fourth block",
            P::NAME
        );
    }

    #[test]
    fn simd_key_generation_matches_the_sequential_one() {
        // The AVX2 backend, and the AVX-512 one (the same code on other
        // Keccak instructions), where the CPU has them.
        for kind in available_backends() {
            if kind == BackendKind::Portable {
                continue;
            }
            with_backend(kind, || {
                avx2_matches_sequential::<MlKem512>();
                avx2_matches_sequential::<MlKem768>();
                avx2_matches_sequential::<MlKem1024>();
            })
            .expect("available backend");
        }
    }
}
