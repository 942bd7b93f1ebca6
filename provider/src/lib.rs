//! `mlkem`: an OpenSSL 3 provider for ML-KEM (FIPS 203), on kem-core.
//!
//! OpenSSL loads the module (`mlkem.so`) and calls [`OSSL_provider_init`].
//! The provider then serves, for ML-KEM-512/768/1024 under OpenSSL 3.5's
//! names and OIDs: key management, the KEM operation, DER/PEM/text encoders,
//! DER decoders, and the pure ML-KEM TLS 1.3 groups.
//!
//! Layout, from the bottom up (every import points down):
//!
//! - [`error`], `codec` (pure Rust DER/PEM/text) and `ffi`, the only place
//!   with raw pointers: bindings, the C face of each operation, owning
//!   types for libcrypto objects, `OSSL_PARAM` helpers, the error guard;
//! - `context`, the provider context, and `material`, parsed key material;
//! - `algorithms`, the table that drives the provider, and `classical`,
//!   the hybrids' EC/X25519 half;
//! - `key`, the key object of every kind, and its two kinds, `ml_kem` and
//!   `hybrid`;
//! - the operations, `keymgmt`, `kem`, `encoder` and `decoder`;
//! - `provider`: the entry point and the algorithm tables.
//!
//! Everything above `ffi` is safe Rust (`unsafe_code` is denied there),
//! but for the one line of `OSSL_provider_init` that hands over to `ffi`.
#![deny(unsafe_code)]

pub(crate) mod algorithms;
pub(crate) mod classical;
#[cfg(not(feature = "fuzzing"))]
pub(crate) mod codec;
/// The pure-Rust key codec (DER, PEM, text), public only with the `fuzzing`
/// feature, for the fuzz targets in `provider/fuzz`.
#[cfg(feature = "fuzzing")]
pub mod codec;
pub(crate) mod context;
pub mod error;
#[allow(unsafe_code)]
pub(crate) mod ffi;
pub(crate) mod hybrid;
pub(crate) mod key;
pub(crate) mod material;
pub(crate) mod ml_kem;
pub(crate) mod provider;

mod decoder;
mod encoder;
mod kem;
mod keymgmt;

pub use error::{ProviderError, Reason, Result};
pub use provider::OSSL_provider_init;
