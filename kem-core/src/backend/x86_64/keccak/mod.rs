//! Keccak-f\[1600\] for the x86-64 backends: one state at a time
//! ([`x1`], unrolled scalar code), four at a time on 256-bit vectors
//! ([`x4`], AVX2 and AVX-512VL forms, the latter also the AVX-512 one-way
//! permutation), and eight at a time on 512-bit vectors ([`x8`]).

pub(crate) mod x1;
pub(crate) mod x4;
pub(crate) mod x8;
