//! Polynomials of R_q = Z_q[X]/(X^256 + 1) and their NTT-domain counterparts
//! (FIPS 203, section 2.4.4), with coefficient-wise arithmetic.

use zeroize::Zeroize;

use crate::field::{barrett_reduce, fqmul, to_unsigned, MONT_SQUARED};

/// Number of coefficients of a polynomial (n in FIPS 203).
pub(crate) const N: usize = 256;

/// A polynomial, either in the normal or in the NTT domain; which one is up
/// to the code that holds it. Coefficients are signed representatives mod q
/// whose range each function documents.
///
/// Aligned to 16 bytes, no more: the SIMD backends load and store with
/// unaligned instructions, and a heap allocation of stricter alignment
/// (the keys' expanded parts) goes through `posix_memalign`, whose split
/// chunk leaves fragments that glibc consolidates on the next large
/// allocation, every key. With 32, that cost about 2 to 3% of ML-KEM-512
/// key generation and decapsulation; 64 measured the same as 32.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C, align(16))]
pub struct Poly {
    pub(crate) coeffs: [i16; N],
}

impl core::fmt::Debug for Poly {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Polynomials may be secret: never print their coefficients.
        f.write_str("Poly(..)")
    }
}

impl Zeroize for Poly {
    fn zeroize(&mut self) {
        crate::wipe::wipe(self, Self::ZERO);
    }
}

impl Default for Poly {
    fn default() -> Self {
        Self::ZERO
    }
}

impl Poly {
    /// The zero polynomial.
    pub(crate) const ZERO: Self = Self { coeffs: [0; N] };

    /// self += other, without reduction.
    #[inline]
    pub(crate) fn add_assign(&mut self, other: &Self) {
        for (a, b) in self.coeffs.iter_mut().zip(other.coeffs.iter()) {
            *a = a.wrapping_add(*b);
        }
    }

    /// self = other - self, without reduction.
    #[inline]
    pub(crate) fn sub_from(&mut self, other: &Self) {
        for (a, b) in self.coeffs.iter_mut().zip(other.coeffs.iter()) {
            *a = b.wrapping_sub(*a);
        }
    }

    /// Barrett-reduces every coefficient into [-(q-1)/2, (q-1)/2].
    #[inline]
    pub(crate) fn reduce(&mut self) {
        for a in self.coeffs.iter_mut() {
            *a = barrett_reduce(*a);
        }
    }

    /// Maps every coefficient from (-q, q) to its canonical value in [0, q).
    #[inline]
    pub(crate) fn make_canonical(&mut self) {
        for a in self.coeffs.iter_mut() {
            *a = to_unsigned(*a) as i16;
        }
    }

    /// Multiplies every coefficient by 2^16 (Montgomery form), leaving each in
    /// (-q, q).
    #[inline]
    pub(crate) fn scale_to_montgomery(&mut self) {
        for a in self.coeffs.iter_mut() {
            *a = fqmul(*a, MONT_SQUARED);
        }
    }
}

/// Transposes a k×k matrix of polynomials, stored row-major, in place.
pub(crate) fn transpose(k: usize, matrix: &mut [Poly]) {
    for i in 0..k {
        for j in i + 1..k {
            matrix.swap(i * k + j, j * k + i);
        }
    }
}

/// Zeroizes every polynomial of a slice (a secret vector).
pub(crate) fn zeroize_all(polys: &mut [Poly]) {
    for p in polys {
        p.zeroize();
    }
}
