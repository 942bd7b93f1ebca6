//! Key objects: what keymgmt hands OpenSSL as a `void *` key.
//!
//! [`MlKemKey`] is a pure ML-KEM key: its algorithm, the instance that made
//! it, and its [`KeyData`] (or none: the "empty" state that `new` and TLS's
//! paramgen create). [`KemKey`] is what the KEM operation needs from any key
//! object, ML-KEM or hybrid.

use kem_core::{MESSAGE_LEN, SEED_LEN, SHARED_SECRET_LEN};
use zeroize::Zeroizing;

use crate::algorithms::Algorithm;
use crate::context::ProvCtx;
use crate::error::{check_length, ProviderError, Reason, Result};
use crate::ffi::upcalls::Instance;
use crate::material::KeyData;

/// What the KEM operation needs from a key object: pure ML-KEM keys and
/// the hybrid keys both implement it, so `kem` has one implementation.
pub(crate) trait KemKey: Sized + Send + Sync + 'static {
    /// The provider instance that made the key.
    fn instance(&self) -> Instance;
    /// Whether the public part is present.
    fn has_public(&self) -> bool;
    /// Whether the private part is present.
    fn has_private(&self) -> bool;
    /// Fails unless the public part is present.
    fn require_public(&self) -> Result<()>;
    /// Fails unless the private part is present.
    fn require_private(&self) -> Result<()>;
    /// The algorithm's name, for error details.
    fn name(&self) -> &'static str;
    /// Ciphertext length.
    fn ciphertext_len(&self) -> usize;
    /// Shared-secret length.
    fn secret_len(&self) -> usize;
    /// Security strength, for the DRBG request.
    fn security_bits(&self) -> u32;
    /// Encapsulates to the public part; `m` is ML-KEM's random message
    /// (fresh randomness, or a test's `ikme`). `ct` and `secret` have
    /// exactly the lengths above.
    fn encapsulate(
        &self,
        prov: &ProvCtx,
        m: &[u8; MESSAGE_LEN],
        ct: &mut [u8],
        secret: &mut [u8],
    ) -> Result<()>;
    /// Decapsulates `ct` (already checked to have the right length).
    fn decapsulate(&self, prov: &ProvCtx, ct: &[u8], secret: &mut [u8]) -> Result<()>;
}

/// Borrows a key object OpenSSL hands back, and records its instance for
/// errors.
///
/// # Safety
/// `ptr` is NULL or a live `K` boxed by this provider.
pub(crate) unsafe fn key_ref<'a, K: KemKey>(ptr: *const core::ffi::c_void) -> Result<&'a K> {
    crate::ffi::guard::non_null(ptr, "key")?;
    // SAFETY: the caller's contract.
    let key = unsafe { &*ptr.cast::<K>() };
    key.instance().enter();
    Ok(key)
}

impl KemKey for MlKemKey {
    fn instance(&self) -> Instance {
        self.instance
    }

    fn has_public(&self) -> bool {
        MlKemKey::has_public(self)
    }

    fn has_private(&self) -> bool {
        MlKemKey::has_private(self)
    }

    fn require_public(&self) -> Result<()> {
        self.public().map(drop)
    }

    fn require_private(&self) -> Result<()> {
        self.private().map(drop)
    }

    fn name(&self) -> &'static str {
        self.alg.layout.name
    }

    fn ciphertext_len(&self) -> usize {
        self.alg.ct_len
    }

    fn secret_len(&self) -> usize {
        SHARED_SECRET_LEN
    }

    fn security_bits(&self) -> u32 {
        self.alg.security_bits
    }

    fn encapsulate(
        &self,
        _prov: &ProvCtx,
        m: &[u8; MESSAGE_LEN],
        ct: &mut [u8],
        secret: &mut [u8],
    ) -> Result<()> {
        let secret: &mut [u8; SHARED_SECRET_LEN] = secret
            .try_into()
            .map_err(|_| ProviderError::new(Reason::InternalError).with_detail("secret length"))?;
        self.public()?.encapsulate(m, ct, secret);
        Ok(())
    }

    fn decapsulate(&self, _prov: &ProvCtx, ct: &[u8], secret: &mut [u8]) -> Result<()> {
        let secret: &mut [u8; SHARED_SECRET_LEN] = secret
            .try_into()
            .map_err(|_| ProviderError::new(Reason::InternalError).with_detail("secret length"))?;
        self.private()?.decapsulate(ct, secret)
    }
}

/// The key object behind OpenSSL's `void *keydata`.
pub(crate) struct MlKemKey {
    /// The parameter set.
    pub(crate) alg: &'static Algorithm,
    /// The provider instance that made the key (errors go through it).
    pub(crate) instance: Instance,
    /// `None` for an empty key (from `new` or paramgen).
    pub(crate) data: Option<Box<dyn KeyData>>,
}

impl MlKemKey {
    /// An empty key of `alg`.
    pub(crate) fn empty(alg: &'static Algorithm, instance: Instance) -> Self {
        Self {
            alg,
            instance,
            data: None,
        }
    }

    /// Whether the public part is present.
    pub(crate) fn has_public(&self) -> bool {
        self.data.is_some()
    }

    /// Whether the private part is present.
    pub(crate) fn has_private(&self) -> bool {
        self.data.as_ref().is_some_and(|d| d.has_private())
    }

    /// The key material, or `MissingPublicKey`.
    pub(crate) fn public(&self) -> Result<&dyn KeyData> {
        self.data.as_deref().ok_or_else(|| {
            ProviderError::new(Reason::MissingPublicKey)
                .with_detail(format!("empty {} key", self.alg.layout.name))
        })
    }

    /// The key material with its private part, or `MissingPrivateKey`.
    pub(crate) fn private(&self) -> Result<&dyn KeyData> {
        match self.data.as_deref() {
            Some(data) if data.has_private() => Ok(data),
            _ => Err(ProviderError::new(Reason::MissingPrivateKey)
                .with_detail(format!("{} key has no private part", self.alg.layout.name))),
        }
    }

    /// Builds key material from `seed` / `priv` / `pub`, with OpenSSL 3.5's
    /// rules: the seed wins (its derived dk must equal a given dk), then the
    /// private key, then the public key; a given public key must match the
    /// private key's.
    pub(crate) fn from_parts(
        alg: &'static Algorithm,
        instance: Instance,
        seed: Option<&[u8]>,
        dk: Option<&[u8]>,
        ek: Option<&[u8]>,
    ) -> Result<Self> {
        let layout = &alg.layout;
        let seed = seed.filter(|s| !s.is_empty());
        let dk = dk.filter(|d| !d.is_empty());
        let ek = ek.filter(|e| !e.is_empty());
        for (what, given, expected) in [
            ("seed", seed, SEED_LEN),
            ("private key", dk, layout.dk_len),
            ("public key", ek, layout.ek_len),
        ] {
            if let Some(bytes) = given {
                check_length(layout.name, what, bytes.len(), expected)?;
            }
        }
        if let (Some(ek), Some(dk)) = (ek, dk) {
            // dk = dk_PKE ‖ ek ‖ H(ek) ‖ z
            let offset = layout.dk_len - 64 - layout.ek_len;
            if dk[offset..offset + layout.ek_len] != *ek {
                return Err(ProviderError::new(Reason::InvalidKey).with_detail(format!(
                    "explicit {} public key does not match private",
                    layout.name
                )));
            }
        }
        let data = match (seed, dk, ek) {
            (Some(seed), dk, _) => {
                let data = (alg.from_seed)(seed)?;
                if let Some(dk) = dk {
                    let derived = data.private_key().unwrap_or_default();
                    if derived.as_slice() != dk {
                        return Err(ProviderError::new(Reason::InvalidKey).with_detail(format!(
                            "explicit {} private key does not match seed",
                            layout.name
                        )));
                    }
                }
                data
            }
            (None, Some(dk), _) => (alg.from_private)(dk)?,
            (None, None, Some(ek)) => (alg.from_public)(ek)?,
            (None, None, None) => {
                return Err(
                    ProviderError::new(Reason::MissingPublicKey).with_detail(format!(
                        "no {} seed, private or public key given",
                        layout.name
                    )),
                )
            }
        };
        Ok(Self {
            alg,
            instance,
            data: Some(data),
        })
    }

    /// The FIPS 203 pairwise-consistency test: encapsulate to the public
    /// part with a fixed m and decapsulate with the private part.
    pub(crate) fn pairwise_check(&self) -> Result<()> {
        let data = self.private()?;
        let m = [0x55u8; MESSAGE_LEN];
        let mut ct = vec![0u8; self.alg.ct_len];
        let mut sent = Zeroizing::new([0u8; SHARED_SECRET_LEN]);
        let mut received = Zeroizing::new([0u8; SHARED_SECRET_LEN]);
        data.encapsulate(&m, &mut ct, &mut sent);
        data.decapsulate(&ct, &mut received)?;
        if *sent == *received {
            Ok(())
        } else {
            Err(ProviderError::new(Reason::InvalidKey).with_detail(format!(
                "public part of {} private key fails to match private",
                self.alg.layout.name
            )))
        }
    }
}
