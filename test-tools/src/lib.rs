//! Shared code of the test-tools binaries.
pub mod cycles;
pub mod kem_core_ops;
pub mod nist_drbg;
pub mod nist_kat;
#[cfg(feature = "peers")]
pub mod peers;
pub mod table;
