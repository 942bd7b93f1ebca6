//! The AArch64 backend ([`Neon`]): its kernels (`ntt`, `compress`,
//! `sample`), the sponges run two at a time on the two-way Keccak (`pool`:
//! key generation's noise, Â and H(ek); a key's H(ek) and Â;
//! decapsulation's G, J(z ‖ c) and noise), the
//! two-way Keccak (`keccak_x2`, with the SHA-3 extension where the CPU has
//! it), the one-way Keccak for cores without it (`keccak_x1`) and the
//! vector loads and stores (`mem`). `keccak_x2::asm` and `keccak_x1` are
//! written by `scripts/gen-keccak-asm.py`.

mod compress;
#[allow(unsafe_code)]
mod keccak_x1;
#[allow(unsafe_code)]
mod keccak_x2;
#[allow(unsafe_code)]
mod mem;
#[allow(unsafe_code)]
mod neon;
mod ntt;
mod pool;
mod sample;

pub(crate) use keccak_x2::has_sha3;
pub(crate) use neon::Neon;
