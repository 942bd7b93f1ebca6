//! # kem-core
//!
//! ML-KEM, the module-lattice-based key-encapsulation mechanism of FIPS 203
//! (final, August 2024), for the `mlkem` OpenSSL provider.
//!
//! - All three parameter sets: [`MlKem512`], [`MlKem768`], [`MlKem1024`].
//! - KeyGen, Encaps and Decaps, plus the deterministic internal forms
//!   ([`DecapsulationKey::from_seed_parts`] is KeyGen_internal(d, z),
//!   [`EncapsulationKey::encapsulate_deterministic`] is Encaps_internal(ek, m)).
//! - Parsing applies the FIPS 203 input checks: the modulus check for
//!   encapsulation keys (section 7.2) and the hash check for decapsulation
//!   keys (section 7.3), with exact lengths. Errors are [`Error`]; no input
//!   panics.
//! - Keys are expanded once (Â, t̂, H(ek), ŝ) and then reused, so repeated
//!   operations with one key are cheaper and allocate nothing.
//! - Constant time: no secret-dependent branch, index or division; implicit
//!   rejection selects J(z ‖ c) without a branch; secrets are zeroized on drop.
//! - Randomness comes from the caller through [`RandomSource`].
//! - Backends: portable Rust, and on x86-64 an AVX2 one (4-way Keccak,
//!   vectorised NTT, sampling, compression and coding) and an AVX-512 one
//!   (8-way Keccak on 512-bit vectors, 512-bit NTT and base
//!   multiplication, the rest AVX2), and on AArch64 a Neon one (128-bit
//!   NTT, sampling, compression and coding, 2-way Keccak with the SHA-3
//!   extension where present), chosen once at run time; see
//!   [`active_backend`], [`set_backend`], [`with_backend`] and the
//!   `MLKEM_BACKEND` environment variable. All give the same bytes.
//!
//! ```
//! use kem_core::{Ciphertext, DecapsulationKey, Error, MlKem768};
//!
//! # fn rng(buf: &mut [u8]) -> Result<(), Error> { buf.fill(7); Ok(()) }
//! let dk = DecapsulationKey::<MlKem768>::generate(&mut rng)?;
//! let (ct, sender_secret) = dk.encapsulation_key().encapsulate(&mut rng)?;
//! let ct = Ciphertext::<MlKem768>::from_bytes(ct.as_bytes())?;
//! assert_eq!(dk.decapsulate(&ct), sender_secret);
//! # Ok::<(), Error>(())
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod backend;
mod compress;
#[cfg(feature = "ct-taint")]
pub mod ct_taint;
mod encode;
mod error;
mod field;
mod hash;
mod kem;
mod keys;
mod ntt;
mod params;
mod pke;
mod poly;
mod profile_hooks;
#[cfg(feature = "profiling")]
pub mod profiling;
mod sample;
mod wipe;

pub use backend::{
    active_backend, available_backends, preferred_backend, set_backend, with_backend, BackendKind,
};
pub use error::Error;
pub use keys::{
    Ciphertext, DecapsulationKey, EncapsulationKey, RandomSource, SharedSecret, MESSAGE_LEN,
    SEED_LEN, SHARED_SECRET_LEN,
};
pub use params::{ByteArray, MlKem1024, MlKem512, MlKem768, ParameterSet, PolyVec};
pub use poly::Poly;
