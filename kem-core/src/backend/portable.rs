//! The portable backend: plain Rust on every target, and the reference that
//! every SIMD backend must match byte for byte.

use super::traits::{Keccak, PolyKernels, Sampling, Schedule};

/// Portable Rust: every default of the backend interface.
pub(crate) struct Portable;

impl Keccak for Portable {}
impl PolyKernels for Portable {}
impl Sampling for Portable {}
impl Schedule for Portable {}
