//! The AArch64 backend ([`Neon`]): its kernels (`ntt`, `compress`,
//! `sample`), the pool of sponges on the two-way Keccak (`pool`: Â, H(ek), J(z ‖ c)), the two-way Keccak (`keccak_x2`, with the SHA-3 extension
//! where the CPU has it) and the vector loads and stores (`mem`).

mod compress;
#[allow(unsafe_code)]
mod keccak_x2;
#[allow(unsafe_code)]
mod mem;
#[allow(unsafe_code)]
mod neon;
mod ntt;
#[allow(unsafe_code)]
mod pool;
mod sample;

pub(crate) use keccak_x2::has_sha3;
pub(crate) use neon::Neon;
