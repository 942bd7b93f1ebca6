//! ML-KEM's internal algorithms (FIPS 203, section 6): KeyGen_internal
//! (Algorithm 16), Encaps_internal (Algorithm 17) and Decaps_internal
//! (Algorithm 18), on expanded keys, generic over the parameter set and the
//! backend.

use subtle::{ConditionallySelectable, ConstantTimeEq};
use zeroize::Zeroize;

use crate::backend::Backend;
use crate::hash;
use crate::keys::{Ciphertext, DecapsulationKey, EncapsulationKey, SharedSecret};
use crate::params::{ByteArray, ParameterSet};
use crate::pke;

/// Algorithm 16: ML-KEM.KeyGen_internal(d, z).
pub(crate) fn keygen_internal<P: ParameterSet, B: Backend>(
    d: &[u8; 32],
    z: &[u8; 32],
) -> DecapsulationKey<P> {
    // Algorithm 13, line 1: (ρ, σ) = G(d ‖ k).
    let (rho, mut sigma) = hash::g(d, &[P::K as u8]);
    let mut expanded = pke::new_polys(pke::expanded_key_len(P::K));
    let mut s_hat = pke::new_polys(P::K);
    pke::generate::<P, B>(&rho, &sigma, &mut expanded, &mut s_hat);
    sigma.zeroize();

    let ek = EncapsulationKey::from_expanded::<B>(expanded, &rho);
    let mut seed = [0u8; 64];
    seed[..32].copy_from_slice(d);
    seed[32..].copy_from_slice(z);
    DecapsulationKey::from_parts(ek, s_hat, *z, Some(seed))
}

/// Algorithm 17: ML-KEM.Encaps_internal(ek, m).
pub(crate) fn encaps_internal<P: ParameterSet, B: Backend>(
    ek: &EncapsulationKey<P>,
    m: &[u8; 32],
) -> (Ciphertext<P>, SharedSecret) {
    // (K, r) = G(m ‖ H(ek))
    let (shared, mut r) = hash::g(m, ek.hash());
    let mut ct = Ciphertext::from_array(P::CiphertextBytes::zeroed());
    pke::encrypt::<P, B>(ek.expanded(), m, &r, ct.as_mut_bytes());
    r.zeroize();
    (ct, SharedSecret::new(shared))
}

/// Algorithm 18: ML-KEM.Decaps_internal(dk, c), with implicit rejection in
/// constant time: the re-encryption is compared with `c` without an early
/// exit, and K' or K̄ is selected without a branch.
pub(crate) fn decaps_internal<P: ParameterSet, B: Backend>(
    dk: &DecapsulationKey<P>,
    ct: &Ciphertext<P>,
) -> SharedSecret {
    let c = ct.as_bytes();
    let ek = dk.encapsulation_key();
    let mut m = [0u8; 32];
    pke::decrypt::<P, B>(&dk.s_hat, c, &mut m);

    // (K', r') = G(m' ‖ h); K̄ = J(z ‖ c); c' = K-PKE.Encrypt(ek, m', r').
    let (mut shared, mut r) = hash::g(&m, ek.hash());
    let mut rejection = hash::j(&dk.z, c);
    let mut c_prime = P::CiphertextBytes::zeroed();
    pke::encrypt::<P, B>(ek.expanded(), &m, &r, c_prime.as_mut());

    // If c ≠ c', K' = K̄.
    let mismatch = !c.ct_eq(c_prime.as_ref());
    for (k, k_bar) in shared.iter_mut().zip(rejection.iter()) {
        k.conditional_assign(k_bar, mismatch);
    }

    m.zeroize();
    r.zeroize();
    rejection.zeroize();
    c_prime.zeroize();
    SharedSecret::new(shared)
}
