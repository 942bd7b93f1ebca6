//! K-PKE, the CPA-secure public-key encryption scheme inside ML-KEM (FIPS
//! 203, section 5): KeyGen (Algorithm 13), Encrypt (Algorithm 14) and
//! Decrypt (Algorithm 15), generic over the parameter set and the backend.
//!
//! Every secret intermediate (noise, the message polynomial, uncompressed
//! ciphertext parts) is zeroized before returning.

use zeroize::Zeroize;

use crate::backend::Backend;
use crate::encode::{encoded_len, message_to_poly, poly_to_message};
use crate::params::{ParameterSet, PolyVec};
use crate::poly::{zeroize_all, Poly};

/// Algorithm 13 (K-PKE.KeyGen) after (ρ, σ) = G(d ‖ k): samples Â, ŝ and ê,
/// and computes t̂ = Â ∘ ŝ + ê. On return `a_hat_t` holds Â transposed
/// (row i is column i of Â, the layout Encrypt reads), and `s_hat` and `t_hat`
/// hold canonical coefficients in [0, q).
pub(crate) fn generate<P: ParameterSet, B: Backend>(
    rho: &[u8; 32],
    sigma: &[u8; 32],
    a_hat_t: &mut [Poly],
    s_hat: &mut P::PolyVec,
    t_hat: &mut P::PolyVec,
) {
    let k = P::K;
    // Row-major Â first: t̂_i is the product of row i with ŝ.
    B::sample_matrix(rho, k, a_hat_t);

    let mut e = P::PolyVec::zeroed();
    sample_noise::<B>(P::ETA1, sigma, 0, s_hat.as_mut());
    sample_noise::<B>(P::ETA1, sigma, k as u8, e.as_mut());
    for p in s_hat.as_mut().iter_mut().chain(e.as_mut().iter_mut()) {
        B::ntt(p);
    }

    for ((t, row), e) in t_hat
        .as_mut()
        .iter_mut()
        .zip(a_hat_t.chunks_exact(k))
        .zip(e.as_ref())
    {
        B::multiply_accumulate(t, row, s_hat.as_ref());
        t.scale_to_montgomery();
        t.add_assign(e);
        t.reduce();
        t.make_canonical();
    }
    for s in s_hat.as_mut() {
        s.make_canonical();
    }
    zeroize_all(e.as_mut());

    transpose(k, a_hat_t);
}

/// A zeroed k×k matrix on the heap (the one allocation a key makes).
pub(crate) fn new_matrix(k: usize) -> Box<[Poly]> {
    vec![Poly::ZERO; k * k].into_boxed_slice()
}

/// Â^T from ρ (Algorithm 13 lines 3-7, or 14 lines 4-8), in the layout
/// Encrypt reads: row i is column i of Â.
pub(crate) fn expand_matrix_transposed<B: Backend>(rho: &[u8; 32], k: usize) -> Box<[Poly]> {
    let mut matrix = new_matrix(k);
    B::sample_matrix(rho, k, &mut matrix);
    transpose(k, &mut matrix);
    matrix
}

/// Transposes a row-major k×k matrix in place.
fn transpose(k: usize, matrix: &mut [Poly]) {
    for i in 0..k {
        for j in i + 1..k {
            matrix.swap(i * k + j, j * k + i);
        }
    }
}

/// Algorithm 14: K-PKE.Encrypt(ek, m, r) into `ct` (`P::CT_LEN` bytes), with
/// the expanded key (Â transposed, t̂).
pub(crate) fn encrypt<P: ParameterSet, B: Backend>(
    a_hat_t: &[Poly],
    t_hat: &P::PolyVec,
    m: &[u8; 32],
    r: &[u8; 32],
    ct: &mut [u8],
) {
    let k = P::K;
    let mut y = P::PolyVec::zeroed();
    let mut e1 = P::PolyVec::zeroed();
    let mut e2 = [Poly::ZERO];
    sample_noise::<B>(P::ETA1, r, 0, y.as_mut());
    sample_noise::<B>(P::ETA2, r, k as u8, e1.as_mut());
    sample_noise::<B>(P::ETA2, r, 2 * k as u8, &mut e2);
    for p in y.as_mut() {
        B::ntt(p);
    }

    // u = NTT^-1(Â^T ∘ ŷ) + e1, compressed into c1.
    let (c1, c2) = ct.split_at_mut(k * encoded_len(P::DU));
    let mut u = Poly::ZERO;
    for ((row, e1), out) in a_hat_t
        .chunks_exact(k)
        .zip(e1.as_ref())
        .zip(c1.chunks_exact_mut(encoded_len(P::DU)))
    {
        B::multiply_accumulate(&mut u, row, y.as_ref());
        B::inv_ntt(&mut u);
        u.add_assign(e1);
        u.reduce();
        compress_encode::<B>(P::DU, &u, out);
    }

    // v = NTT^-1(t̂^T ∘ ŷ) + e2 + Decompress_1(ByteDecode_1(m)), into c2.
    let mut v = Poly::ZERO;
    let mut mu = Poly::ZERO;
    B::multiply_accumulate(&mut v, t_hat.as_ref(), y.as_ref());
    B::inv_ntt(&mut v);
    v.add_assign(&e2[0]);
    message_to_poly(m, &mut mu);
    v.add_assign(&mu);
    v.reduce();
    compress_encode::<B>(P::DV, &v, c2);

    zeroize_all(y.as_mut());
    zeroize_all(e1.as_mut());
    for p in [&mut e2[0], &mut u, &mut v, &mut mu] {
        p.zeroize();
    }
}

/// Algorithm 15: K-PKE.Decrypt(dk, c), writing the message to `m`.
pub(crate) fn decrypt<P: ParameterSet, B: Backend>(
    s_hat: &P::PolyVec,
    ct: &[u8],
    m: &mut [u8; 32],
) {
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
    let mut v = Poly::ZERO;
    decode_decompress::<B>(P::DV, c2, &mut v);

    // w = v - NTT^-1(ŝ^T ∘ NTT(u))
    let mut w = Poly::ZERO;
    B::multiply_accumulate(&mut w, s_hat.as_ref(), u.as_ref());
    B::inv_ntt(&mut w);
    w.sub_from(&v);
    w.reduce();
    poly_to_message(&w, m);
    w.zeroize();
}

/// Noise for each polynomial of `out`, with consecutive PRF nonces from
/// `nonce`; selects the backend's routine for the (compile-time) eta.
#[inline(always)]
fn sample_noise<B: Backend>(eta: usize, seed: &[u8; 32], nonce: u8, out: &mut [Poly]) {
    match eta {
        2 => B::sample_noise::<2>(seed, nonce, out),
        3 => B::sample_noise::<3>(seed, nonce, out),
        _ => unreachable!("FIPS 203 uses eta = 2 or 3 only"),
    }
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
