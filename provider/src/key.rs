//! Key objects: what keymgmt hands OpenSSL as a `void *` key, for every
//! kind of key the provider serves.
//!
//! A [`Key`] is one row of a key table (a [`KeyKind`]: an ML-KEM parameter
//! set, or a hybrid group), the provider context that made it, and its
//! [`KeyParts`], or none: the "empty" state that `new` and TLS's paramgen
//! create. Key management and the KEM operation are written once, over
//! `Key<K>`; the kinds say only what differs.

use std::borrow::Cow;

use kem_core::{MESSAGE_LEN, SEED_LEN};
use zeroize::Zeroizing;

use crate::context::ProvCtx;
use crate::error::{ProviderError, Reason, Result};
use crate::ffi::object::Object;
use crate::ffi::sys::OSSL_PARAM;
use crate::ffi::upcalls::Instance;

/// A row of a key table: one ML-KEM parameter set, or one hybrid group.
pub(crate) trait KeyKind: Sized + Sync + 'static {
    /// The material of a (non-empty) key of this kind.
    type Parts: KeyParts<Kind = Self>;

    /// Whether keys of this kind have ML-KEM's seed form: import, export,
    /// `get_params` and generation take the `seed` parameter.
    const HAS_SEED: bool;
    /// Whether keys of this kind are CMS KEM recipients (RFC 9629): as
    /// OpenSSL 3.6's ML-KEM keymgmt, `get_params` then answers `ri-type`
    /// and `kemri-kdf-alg`.
    const CMS_KEM_RECIPIENT: bool;
    /// Parameters `get_params` answers.
    const GETTABLE: &'static [OSSL_PARAM];
    /// Parameters generation takes.
    const GEN_SETTABLE: &'static [OSSL_PARAM];
    /// Parameters import takes and export gives.
    const KEY_TYPES: &'static [OSSL_PARAM];

    /// The whole table, in dispatch-table order.
    fn table() -> &'static [Self];
    /// The algorithm's name, for errors.
    fn name(&self) -> &'static str;
    /// `bits` as OpenSSL reports it.
    fn bits(&self) -> u32;
    /// Security strength, for `security-bits` and the DRBG request.
    fn security_bits(&self) -> u32;
    /// NIST security category, where OpenSSL reports one.
    fn security_category(&self) -> Option<u32>;
    /// Ciphertext length.
    fn ciphertext_len(&self) -> usize;
    /// Shared-secret length.
    fn secret_len(&self) -> usize;

    /// Key material from imported parts (OpenSSL 3.5's rules for the kind),
    /// checked.
    fn import(&'static self, prov: &'static ProvCtx, given: Given<'_>) -> Result<Self::Parts>;
    /// Key material from an encoded public key.
    fn public_parts(&'static self, prov: &'static ProvCtx, public: &[u8]) -> Result<Self::Parts>;
    /// A fresh key pair from ML-KEM's seed d ‖ z (and, for a hybrid, a
    /// fresh classical key).
    fn generate(
        &'static self,
        prov: &'static ProvCtx,
        seed: &[u8; SEED_LEN],
    ) -> Result<Self::Parts>;
}

/// The parameters an import was given (empty ones count as absent).
#[derive(Clone, Copy, Default)]
pub(crate) struct Given<'a> {
    /// ML-KEM's seed d ‖ z.
    pub(crate) seed: Option<&'a [u8]>,
    /// The private key.
    pub(crate) private: Option<&'a [u8]>,
    /// The public key.
    pub(crate) public: Option<&'a [u8]>,
}

/// The material of a key: a public key, or a key pair.
pub(crate) trait KeyParts: Sized + Send + Sync + 'static {
    /// The table the key belongs to.
    type Kind: KeyKind<Parts = Self>;

    /// Whether the private part is present.
    fn has_private(&self) -> bool;
    /// The encoded public key.
    fn public_key(&self) -> Cow<'_, [u8]>;
    /// The encoded private key, if this is a key pair.
    fn private_key(&self) -> Result<Option<Zeroizing<Vec<u8>>>>;
    /// ML-KEM's seed, if the key came from one and keeps it.
    fn seed(&self) -> Option<&[u8; SEED_LEN]>;
    /// A copy, with the private part only if `private`.
    fn duplicate(&self, private: bool) -> Self;
    /// Checks that the private part belongs to the public part.
    fn check_pair(&self, kind: &Self::Kind, prov: &ProvCtx) -> Result<()>;
    /// Encapsulates to the public part; `m` is ML-KEM's random message
    /// (fresh randomness, or a test's `ikme`). `ct` and `secret` have the
    /// kind's lengths.
    fn encapsulate(
        &self,
        kind: &Self::Kind,
        prov: &ProvCtx,
        m: &[u8; MESSAGE_LEN],
        ct: &mut [u8],
        secret: &mut [u8],
    ) -> Result<()>;
    /// Decapsulates `ct` (of the kind's length) with the private part.
    fn decapsulate(
        &self,
        kind: &Self::Kind,
        prov: &ProvCtx,
        ct: &[u8],
        secret: &mut [u8],
    ) -> Result<()>;
}

/// The key object behind OpenSSL's `void *keydata`.
pub(crate) struct Key<K: KeyKind> {
    /// The table row.
    pub(crate) kind: &'static K,
    /// The provider instance that made the key: errors go through it, and
    /// its library context serves a hybrid's classical half.
    pub(crate) prov: &'static ProvCtx,
    /// `None` for an empty key (from `new` or paramgen).
    pub(crate) parts: Option<K::Parts>,
}

impl<K: KeyKind> Object for Key<K> {
    fn instance(&self) -> Instance {
        self.prov.instance()
    }
}

impl<K: KeyKind> Key<K> {
    /// An empty key of `kind`.
    pub(crate) fn empty(kind: &'static K, prov: &'static ProvCtx) -> Self {
        Self {
            kind,
            prov,
            parts: None,
        }
    }

    /// Whether the public part is present.
    pub(crate) fn has_public(&self) -> bool {
        self.parts.is_some()
    }

    /// Whether the private part is present.
    pub(crate) fn has_private(&self) -> bool {
        self.parts.as_ref().is_some_and(KeyParts::has_private)
    }

    /// The key material, or `MissingPublicKey`.
    pub(crate) fn public(&self) -> Result<&K::Parts> {
        self.parts.as_ref().ok_or_else(|| {
            ProviderError::new(Reason::MissingPublicKey)
                .with_detail(format!("empty {} key", self.kind.name()))
        })
    }

    /// The key material with its private part, or `MissingPrivateKey`.
    pub(crate) fn private(&self) -> Result<&K::Parts> {
        match &self.parts {
            Some(parts) if parts.has_private() => Ok(parts),
            _ => Err(ProviderError::new(Reason::MissingPrivateKey)
                .with_detail(format!("{} key has no private part", self.kind.name()))),
        }
    }
}
