//! `mlkem`: an OpenSSL 3 provider for ML-KEM (FIPS 203), on kem-core.
//!
//! OpenSSL loads the module (`mlkem.so`) and calls [`OSSL_provider_init`].
//! The provider then serves, for ML-KEM-512/768/1024 under OpenSSL 3.5's
//! names and OIDs: key management, the KEM operation, DER/PEM/text encoders,
//! DER decoders, and the pure ML-KEM TLS 1.3 groups.
//!
//! Layout: [`ffi`] is the only place with raw pointers (bindings, dispatch
//! tables, `OSSL_PARAM` helpers, the error guard); `keymgmt`, `kem`,
//! `encoder` and `decoder` are the operations; [`algorithms`] is the table
//! that drives them; `codec` is pure Rust DER/PEM/text.

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
pub(crate) mod ffi;
pub(crate) mod hybrid;
pub(crate) mod key;
pub(crate) mod material;
pub(crate) mod provider;

mod decoder;
mod encoder;
mod kem;
mod keymgmt;

pub use error::{ProviderError, Reason, Result};
pub use provider::OSSL_provider_init;
