//! The provider's errors: a reason code (with the text OpenSSL prints) and
//! an optional detail, raised onto OpenSSL's error stack by `ffi::guard`.

use core::fmt;

/// Why an operation failed: the reason codes this provider registers with
/// the core (`get_reason_strings`). Codes start at 1 and never change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Reason {
    /// A Rust panic was caught at the FFI boundary (a bug).
    InternalError = 1,
    /// A NULL pointer where an object or buffer is required.
    NullArgument = 2,
    /// A parameter has the wrong type, size or value.
    InvalidParameter = 3,
    /// The key has no public part where one is needed.
    MissingPublicKey = 4,
    /// The key has no private part where one is needed.
    MissingPrivateKey = 5,
    /// A key, seed or ciphertext has the wrong length.
    InvalidLength = 6,
    /// A key failed the FIPS 203 input checks or its consistency checks.
    InvalidKey = 7,
    /// An output buffer is too small.
    OutputBufferTooSmall = 8,
    /// OpenSSL's random generator failed.
    RandomFailure = 9,
    /// A DER or PEM input is malformed.
    BadEncoding = 10,
    /// No enabled private-key format fits.
    NoKeyFormat = 11,
    /// The key belongs to another algorithm or parameter set.
    WrongKeyType = 12,
    /// The operation was called before its init, or on the wrong kind of
    /// context.
    CallOutOfOrder = 13,
    /// A key object cannot be changed once it holds key material.
    KeyImmutable = 14,
    /// A libcrypto function the provider needs is missing or failed.
    LibcryptoFailure = 15,
    /// The configured or requested kem-core backend cannot run here.
    BackendUnavailable = 16,
    /// Encrypting a private key failed (no passphrase, unknown cipher).
    EncryptionFailure = 17,
}

impl Reason {
    /// Every reason, for the reason-strings table.
    pub const ALL: [Reason; 17] = [
        Reason::InternalError,
        Reason::NullArgument,
        Reason::InvalidParameter,
        Reason::MissingPublicKey,
        Reason::MissingPrivateKey,
        Reason::InvalidLength,
        Reason::InvalidKey,
        Reason::OutputBufferTooSmall,
        Reason::RandomFailure,
        Reason::BadEncoding,
        Reason::NoKeyFormat,
        Reason::WrongKeyType,
        Reason::CallOutOfOrder,
        Reason::KeyImmutable,
        Reason::LibcryptoFailure,
        Reason::BackendUnavailable,
        Reason::EncryptionFailure,
    ];

    /// The code registered with the core.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// The text OpenSSL prints for the code (NUL-terminated for the table).
    pub const fn text(self) -> &'static core::ffi::CStr {
        match self {
            Reason::InternalError => c"internal error (caught panic)",
            Reason::NullArgument => c"null argument",
            Reason::InvalidParameter => c"invalid parameter",
            Reason::MissingPublicKey => c"missing public key",
            Reason::MissingPrivateKey => c"missing private key",
            Reason::InvalidLength => c"invalid length",
            Reason::InvalidKey => c"invalid key",
            Reason::OutputBufferTooSmall => c"output buffer too small",
            Reason::RandomFailure => c"random generator failure",
            Reason::BadEncoding => c"bad encoding",
            Reason::NoKeyFormat => c"no matching key format",
            Reason::WrongKeyType => c"wrong key type",
            Reason::CallOutOfOrder => c"operation not initialised",
            Reason::KeyImmutable => c"key cannot be modified",
            Reason::LibcryptoFailure => c"libcrypto call failed",
            Reason::BackendUnavailable => c"backend unavailable",
            Reason::EncryptionFailure => c"private key encryption failed",
        }
    }
}

/// An error on its way to OpenSSL's error stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderError {
    /// The reason code.
    pub reason: Reason,
    /// Extra text shown after the reason (which key, which length).
    pub detail: Option<String>,
}

impl ProviderError {
    /// An error with only a reason.
    pub fn new(reason: Reason) -> Self {
        Self {
            reason,
            detail: None,
        }
    }

    /// Adds the detail text.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason.text().to_string_lossy())?;
        if let Some(detail) = &self.detail {
            write!(f, ": {detail}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ProviderError {}

impl From<kem_core::Error> for ProviderError {
    fn from(error: kem_core::Error) -> Self {
        let reason = match error {
            kem_core::Error::InvalidLength { .. } => Reason::InvalidLength,
            kem_core::Error::RandomSource => Reason::RandomFailure,
            kem_core::Error::BackendUnavailable => Reason::BackendUnavailable,
            _ => Reason::InvalidKey,
        };
        ProviderError::new(reason).with_detail(error.to_string())
    }
}

/// Fails with [`Reason::InvalidLength`] and the detail
/// "`{owner} {what}` must be `{expected}` bytes, got `{actual}`" unless the
/// lengths agree.
pub fn check_length(owner: &str, what: &str, actual: usize, expected: usize) -> Result<()> {
    if actual == expected {
        return Ok(());
    }
    Err(
        ProviderError::new(Reason::InvalidLength).with_detail(format!(
            "{owner} {what} must be {expected} bytes, got {actual}"
        )),
    )
}

/// The provider's result type.
pub type Result<T> = core::result::Result<T, ProviderError>;
