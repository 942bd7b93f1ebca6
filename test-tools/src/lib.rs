//! Shared code of the test-tools binaries: the measurement model
//! ([`measure`], timed with [`timer`]), its one renderer ([`table`]), the
//! command-line conventions ([`cli`]), machine facts ([`system_info`]), and
//! the pieces particular tools build on.
pub mod ci;
pub mod cli;
pub mod comparison;
pub mod elf_segments;
pub mod evp_harness;
pub mod kem_core_ops;
pub mod measure;
pub mod nist_drbg;
pub mod nist_kat;
pub mod openssl_cache;
#[cfg(feature = "peers")]
pub mod peers;
pub mod speed_output;
pub mod system_info;
pub mod table;
pub mod timer;
