//! The errors kem-core reports. Every malformed input maps to one of these;
//! none panics.

use core::fmt;

/// Why an ML-KEM operation or parse failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// An input had the wrong length for the parameter set.
    InvalidLength {
        /// What the input was ("encapsulation key", "ciphertext", ...).
        what: &'static str,
        /// The length the parameter set requires.
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// An encapsulation key failed the modulus check (FIPS 203, section
    /// 7.2): some encoded coefficient is not below q.
    EncapsulationKeyNotReduced,
    /// A decapsulation key failed the hash check (FIPS 203, section 7.3):
    /// the stored H(ek) does not match its embedded encapsulation key.
    DecapsulationKeyHashMismatch,
    /// A decapsulation key's secret vector has a coefficient not below q.
    DecapsulationKeyNotReduced,
    /// The caller's random source failed.
    RandomSource,
    /// The requested backend cannot run on this CPU.
    BackendUnavailable,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidLength {
                what,
                expected,
                actual,
            } => write!(
                f,
                "invalid {what} length: expected {expected} bytes, got {actual}"
            ),
            Error::EncapsulationKeyNotReduced => {
                f.write_str("encapsulation key failed the modulus check")
            }
            Error::DecapsulationKeyHashMismatch => {
                f.write_str("decapsulation key failed the hash check")
            }
            Error::DecapsulationKeyNotReduced => {
                f.write_str("decapsulation key has an unreduced coefficient")
            }
            Error::RandomSource => f.write_str("random source failed"),
            Error::BackendUnavailable => f.write_str("backend not available on this CPU"),
        }
    }
}

impl std::error::Error for Error {}

/// Checks that `bytes` is exactly `expected` long.
pub(crate) fn check_length(what: &'static str, bytes: &[u8], expected: usize) -> Result<(), Error> {
    if bytes.len() == expected {
        Ok(())
    } else {
        Err(Error::InvalidLength {
            what,
            expected,
            actual: bytes.len(),
        })
    }
}
