//! The portable backend: plain Rust on every target, and the reference that
//! every SIMD backend must match byte for byte.

use super::Backend;

/// Portable Rust; uses every default of [`Backend`].
pub(crate) struct Portable;

impl Backend for Portable {}
