//! Shared code of the test-tools binaries.
pub mod cli;
pub mod comparison;
pub mod csv_read;
pub mod cycles;
pub mod elf_segments;
pub mod evp_harness;
pub mod kem_core_ops;
pub mod nist_drbg;
pub mod nist_kat;
#[cfg(feature = "peers")]
pub mod peers;
pub mod speed_output;
pub mod svg_chart;
pub mod system_info;
pub mod table;
