//! The x86-64 backends: [`Avx2`] and the two AVX-512 ones
//! ([`Avx512`], [`Avx512Keccak`]), their kernels, their Keccak
//! ([`keccak`]) and their pools of sponges ([`pools`]).
//!
//! A file is named for what it holds for every backend that uses it:
//! `ntt256`/`basemul256` are the 256-bit arithmetic (AVX2, and the AVX-512
//! backends where they keep it), `ntt512` the 512-bit one, and
//! `compress`, `encode`, `cbd`, `rejection256` and `mem` serve all three.

#[allow(unsafe_code)]
mod avx2;
#[allow(unsafe_code)]
mod avx512;
mod basemul256;
mod cbd;
mod compress;
mod encode;
mod keccak;
mod mem;
mod ntt256;
mod ntt512;
mod pools;
mod rejection256;
mod rejection512;

pub(crate) use avx2::Avx2;
pub(crate) use avx512::{Avx512, Avx512Keccak};

/// Runs an AVX2 test body if the CPU has AVX2, else reports the skip: the
/// one place the AVX2 unit tests turn the detection into the `unsafe` call.
/// Only for bodies that need AVX2 alone (not BMI1 or AVX-512).
#[cfg(test)]
#[allow(unsafe_code)]
pub(crate) fn run_if_avx2(check: unsafe fn()) {
    if !is_x86_feature_detected!("avx2") {
        eprintln!("AVX2 not available; skipping");
        return;
    }
    // SAFETY: AVX2 was detected, the only requirement of the test bodies.
    unsafe { check() }
}
