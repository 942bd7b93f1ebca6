//! The three ML-KEM parameter sets of FIPS 203, section 8 (Table 2), as types.
//!
//! Every size and constant is derived from the set's constants, and the
//! fixed-size arrays that hold keys and ciphertexts are associated types, so
//! the algorithm code is written once and monomorphised per set.

use core::fmt::Debug;

use zeroize::Zeroize;

use crate::poly::Poly;

mod sealed {
    pub trait Sealed {}
}

/// A fixed-size byte array (`[u8; N]`), used for encoded keys and ciphertexts.
pub trait ByteArray:
    AsRef<[u8]> + AsMut<[u8]> + Clone + Debug + Send + Sync + Zeroize + 'static + sealed::Sealed
{
    /// The all-zero array.
    fn zeroed() -> Self;
}

impl<const N: usize> sealed::Sealed for [u8; N] {}
impl<const N: usize> ByteArray for [u8; N] {
    fn zeroed() -> Self {
        [0u8; N]
    }
}

/// A fixed-size vector of `k` polynomials (`[Poly; k]`).
pub trait PolyVec: AsRef<[Poly]> + AsMut<[Poly]> + Clone + Send + Sync + 'static {
    /// The all-zero vector.
    fn zeroed() -> Self;
}

impl<const N: usize> PolyVec for [Poly; N] {
    fn zeroed() -> Self {
        [Poly::ZERO; N]
    }
}

/// One of the ML-KEM parameter sets (FIPS 203, Table 2). Sealed: the three
/// sets below are the only ones.
pub trait ParameterSet:
    Copy + Clone + Debug + Default + Eq + Send + Sync + 'static + sealed::Sealed
{
    /// The name FIPS 203 gives the set, e.g. `"ML-KEM-768"`.
    const NAME: &'static str;
    /// Module rank k.
    const K: usize;
    /// CBD parameter for the secret and for the noise of key generation.
    const ETA1: usize;
    /// CBD parameter for the encryption noise.
    const ETA2: usize = 2;
    /// Bits per coefficient of the ciphertext's first part (u).
    const DU: usize;
    /// Bits per coefficient of the ciphertext's second part (v).
    const DV: usize;

    /// Length of the encapsulation key: 384k + 32.
    const EK_LEN: usize = 384 * Self::K + 32;
    /// Length of the expanded decapsulation key: 768k + 96.
    const DK_LEN: usize = 768 * Self::K + 96;
    /// Length of the ciphertext: 32 (du k + dv).
    const CT_LEN: usize = 32 * (Self::DU * Self::K + Self::DV);
    /// Claimed security strength in bits (NIST category 1, 3 or 5).
    const SECURITY_BITS: usize;

    /// `[Poly; k]`.
    type PolyVec: PolyVec;
    /// `[Poly; k + 1]`: the encryption noise e1 ‖ e2, sampled together.
    type NoiseVec: PolyVec;
    /// `[u8; EK_LEN]`.
    type EncapsKeyBytes: ByteArray;
    /// `[u8; DK_LEN]`.
    type DecapsKeyBytes: ByteArray;
    /// `[u8; CT_LEN]`.
    type CiphertextBytes: ByteArray;
}

macro_rules! parameter_set {
    ($(#[$doc:meta])* $name:ident, $label:literal, k = $k:literal, eta1 = $eta1:literal,
     du = $du:literal, dv = $dv:literal, bits = $bits:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        impl sealed::Sealed for $name {}

        impl ParameterSet for $name {
            const NAME: &'static str = $label;
            const K: usize = $k;
            const ETA1: usize = $eta1;
            const DU: usize = $du;
            const DV: usize = $dv;
            const SECURITY_BITS: usize = $bits;
            type PolyVec = [Poly; $k];
            type NoiseVec = [Poly; $k + 1];
            type EncapsKeyBytes = [u8; 384 * $k + 32];
            type DecapsKeyBytes = [u8; 768 * $k + 96];
            type CiphertextBytes = [u8; 32 * ($du * $k + $dv)];
        }
    };
}

parameter_set!(
    /// ML-KEM-512 (security category 1).
    MlKem512, "ML-KEM-512", k = 2, eta1 = 3, du = 10, dv = 4, bits = 128
);
parameter_set!(
    /// ML-KEM-768 (security category 3).
    MlKem768, "ML-KEM-768", k = 3, eta1 = 2, du = 10, dv = 4, bits = 192
);
parameter_set!(
    /// ML-KEM-1024 (security category 5).
    MlKem1024, "ML-KEM-1024", k = 4, eta1 = 2, du = 11, dv = 5, bits = 256
);

#[cfg(test)]
mod tests {
    use super::*;

    fn check<P: ParameterSet>(ek: usize, dk: usize, ct: usize) {
        assert_eq!(P::EK_LEN, ek, "{}", P::NAME);
        assert_eq!(P::DK_LEN, dk, "{}", P::NAME);
        assert_eq!(P::CT_LEN, ct, "{}", P::NAME);
        assert_eq!(P::EncapsKeyBytes::zeroed().as_ref().len(), ek);
        assert_eq!(P::DecapsKeyBytes::zeroed().as_ref().len(), dk);
        assert_eq!(P::CiphertextBytes::zeroed().as_ref().len(), ct);
        assert_eq!(P::PolyVec::zeroed().as_ref().len(), P::K);
        assert_eq!(P::NoiseVec::zeroed().as_ref().len(), P::K + 1);
    }

    #[test]
    fn sizes_match_fips_203_table_3() {
        check::<MlKem512>(800, 1632, 768);
        check::<MlKem768>(1184, 2400, 1088);
        check::<MlKem1024>(1568, 3168, 1568);
    }
}
