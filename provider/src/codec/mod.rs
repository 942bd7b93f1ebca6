//! Key encodings for ML-KEM: PKCS#8, `SubjectPublicKeyInfo`, PEM and text.
//!
//! Byte-compatible with OpenSSL 3.5's ML-KEM codecs
//! (`providers/implementations/encode_decode/ml_kem_codecs.c`):
//!
//! - [`encode_private_key_info`] and [`decode_private_key_info`] handle the
//!   PKCS#8 `PrivateKeyInfo` (and, on input, the version-2
//!   `OneAsymmetricKey`) whose `privateKey` holds one of the six
//!   [`PrivateKeyFormat`]s, chosen from an OpenSSL-style preference list
//!   ([`parse_format_list`]).
//! - [`encode_spki`] and [`decode_spki`] handle the `SubjectPublicKeyInfo`.
//! - [`pem_encode`] armours DER; [`key_to_text`] is the layout of
//!   `openssl pkey -text`.
//!
//! The module knows nothing about the rest of the crate: every function takes
//! the parameter set's facts as a [`KeyLayout`]. Parsing is strict DER, works
//! on borrowed input, and never panics; buffers that hold secrets are
//! [`Zeroizing`].

mod algorithm;
mod der;
mod format;
mod payload;
mod pem;
mod private_key;
mod public_key;
mod text;

#[cfg(test)]
mod testutil;

use core::fmt;

use zeroize::Zeroizing;

pub use format::{parse_format_list, PrivateKeyFormat};
#[cfg(feature = "fuzzing")]
pub use pem::pem_decode;
pub use pem::pem_encode;
pub use private_key::{
    algorithm_oid_of_private_key_info, decode_private_key_info, encode_private_key_info,
};
pub use public_key::{algorithm_oid_of_spki, decode_spki, encode_spki};
pub use text::{bytes_per_line, key_to_text};

/// Length in bytes of an ML-KEM seed, `d || z` (FIPS 203, section 7.1).
pub const SEED_LEN: usize = 64;

/// What the codec needs to know about one ML-KEM parameter set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyLayout {
    /// The algorithm name, as in `"ML-KEM-768"`.
    pub name: &'static str,
    /// The DER content bytes of the algorithm's object identifier, as in
    /// `60 86 48 01 65 03 04 04 02` for 2.16.840.1.101.3.4.4.2.
    pub oid: &'static [u8],
    /// Length in bytes of an encapsulation (public) key.
    pub ek_len: usize,
    /// Length in bytes of a decapsulation (private) key.
    pub dk_len: usize,
}

/// The key material a PKCS#8 payload held.
///
/// At least one of the two fields is present. A seed and a decapsulation
/// key found together are returned as found: checking that they agree is
/// the caller's job.
#[derive(Clone)]
pub struct DecodedPrivateKey {
    /// The 64-byte seed `d || z`, if the format carries it.
    pub seed: Option<Zeroizing<[u8; SEED_LEN]>>,
    /// The decapsulation key, exactly `dk_len` bytes, if the format carries it.
    pub dk: Option<Zeroizing<Vec<u8>>>,
}

impl fmt::Debug for DecodedPrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecodedPrivateKey")
            .field("seed", &self.seed.as_ref().map(|_| "<redacted>"))
            .field("dk", &self.dk.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Why an encoding or decoding failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CodecError {
    /// The input is not the strict DER (or PEM) it should be.
    Malformed,
    /// The input is a key for some other algorithm or parameter set.
    WrongAlgorithm,
    /// The algorithm identifier carries parameters, which ML-KEM forbids.
    UnexpectedParameters,
    /// No enabled private key format fits the input, or the key on output.
    NoFormat,
    /// A key has the wrong length for its parameter set.
    WrongKeyLength,
    /// There is no key material to encode.
    MissingKey,
    /// The private key format list enables no known format.
    NoFormatsEnabled,
}

impl CodecError {
    /// A short human-readable reason, suitable as OpenSSL error reason text.
    #[must_use]
    pub fn reason(self) -> &'static str {
        match self {
            Self::Malformed => "malformed ML-KEM key encoding",
            Self::WrongAlgorithm => "key is not for the expected ML-KEM parameter set",
            Self::UnexpectedParameters => {
                "unexpected parameters in the ML-KEM algorithm identifier"
            }
            Self::NoFormat => "no matching enabled ML-KEM private key format",
            Self::WrongKeyLength => "ML-KEM key has the wrong length",
            Self::MissingKey => "no ML-KEM key material available",
            Self::NoFormatsEnabled => "no ML-KEM private key formats are enabled",
        }
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

impl std::error::Error for CodecError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_the_reason() {
        let all = [
            CodecError::Malformed,
            CodecError::WrongAlgorithm,
            CodecError::UnexpectedParameters,
            CodecError::NoFormat,
            CodecError::WrongKeyLength,
            CodecError::MissingKey,
            CodecError::NoFormatsEnabled,
        ];
        for error in all {
            assert_eq!(error.to_string(), error.reason());
        }
        assert_eq!(
            CodecError::NoFormat.to_string(),
            "no matching enabled ML-KEM private key format"
        );
    }
}
