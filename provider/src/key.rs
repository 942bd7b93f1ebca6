//! Key objects: what keymgmt hands OpenSSL as a `void *` key.
//!
//! [`KeyData`] is the object-safe face of one parameter set's parsed key
//! (public only, or the full decapsulation key), so the FFI code needs no
//! per-set copies; [`MlKemKey`] adds the algorithm and the "empty" state
//! that `new` and TLS's paramgen create.

use kem_core::{
    Ciphertext, DecapsulationKey, EncapsulationKey, ParameterSet, MESSAGE_LEN, SEED_LEN,
    SHARED_SECRET_LEN,
};
use zeroize::Zeroizing;

use crate::algorithms::Algorithm;
use crate::error::{ProviderError, Reason, Result};
use crate::ffi::upcalls::Instance;
use crate::provider::ProvCtx;

/// The operations the provider needs from one parameter set's key.
pub(crate) trait KeyData: Send + Sync {
    /// The encoded encapsulation key.
    fn public_key(&self) -> &[u8];
    /// The expanded decapsulation key dk, if this is a private key.
    fn private_key(&self) -> Option<Zeroizing<Vec<u8>>>;
    /// The seed d ‖ z, if the key came from one (and keeps it).
    fn seed(&self) -> Option<&[u8; SEED_LEN]>;
    /// Whether the private part is present.
    fn has_private(&self) -> bool;
    /// Algorithm 17 into caller buffers of exactly the right sizes.
    fn encapsulate(
        &self,
        m: &[u8; MESSAGE_LEN],
        ct: &mut [u8],
        secret: &mut [u8; SHARED_SECRET_LEN],
    );
    /// Algorithm 21; fails only on a ciphertext of the wrong length or a
    /// public-only key.
    fn decapsulate(&self, ct: &[u8], secret: &mut [u8; SHARED_SECRET_LEN]) -> Result<()>;
    /// A copy with the parts `selection` asks for.
    fn duplicate(&self, private: bool) -> Box<dyn KeyData>;
    /// A copy without the seed (config `ml-kem.retain_seed = no`).
    fn without_seed(&self) -> Box<dyn KeyData>;
}

enum Material<P: ParameterSet> {
    Public(EncapsulationKey<P>),
    Private(DecapsulationKey<P>),
}

impl<P: ParameterSet> Material<P> {
    fn ek(&self) -> &EncapsulationKey<P> {
        match self {
            Material::Public(ek) => ek,
            Material::Private(dk) => dk.encapsulation_key(),
        }
    }
}

impl<P: ParameterSet> KeyData for Material<P> {
    fn public_key(&self) -> &[u8] {
        self.ek().as_bytes()
    }

    fn private_key(&self) -> Option<Zeroizing<Vec<u8>>> {
        match self {
            Material::Public(_) => None,
            Material::Private(dk) => Some(Zeroizing::new(dk.to_bytes().as_ref().to_vec())),
        }
    }

    fn seed(&self) -> Option<&[u8; SEED_LEN]> {
        match self {
            Material::Public(_) => None,
            Material::Private(dk) => dk.seed(),
        }
    }

    fn has_private(&self) -> bool {
        matches!(self, Material::Private(_))
    }

    fn encapsulate(
        &self,
        m: &[u8; MESSAGE_LEN],
        ct: &mut [u8],
        secret: &mut [u8; SHARED_SECRET_LEN],
    ) {
        let (c, k) = self.ek().encapsulate_deterministic(m);
        ct.copy_from_slice(c.as_bytes());
        secret.copy_from_slice(k.as_bytes());
    }

    fn decapsulate(&self, ct: &[u8], secret: &mut [u8; SHARED_SECRET_LEN]) -> Result<()> {
        let Material::Private(dk) = self else {
            return Err(ProviderError::new(Reason::MissingPrivateKey));
        };
        let ct = Ciphertext::<P>::from_bytes(ct)?;
        secret.copy_from_slice(dk.decapsulate(&ct).as_bytes());
        Ok(())
    }

    fn duplicate(&self, private: bool) -> Box<dyn KeyData> {
        match self {
            Material::Private(dk) if private => Box::new(Material::Private(dk.clone())),
            _ => Box::new(Material::Public(self.ek().clone())),
        }
    }

    fn without_seed(&self) -> Box<dyn KeyData> {
        match self {
            Material::Private(dk) if dk.seed().is_some() => {
                let bytes = dk.to_bytes();
                match DecapsulationKey::<P>::from_bytes(bytes.as_ref()) {
                    Ok(dk) => Box::new(Material::Private(dk)),
                    // Our own encoding always parses; keep the key as is.
                    Err(_) => Box::new(Material::Private(dk.clone())),
                }
            }
            _ => self.duplicate(true),
        }
    }
}

/// Algorithm 16 from the 64-byte seed d ‖ z.
pub(crate) fn from_seed<P: ParameterSet>(seed: &[u8]) -> Result<Box<dyn KeyData>> {
    Ok(Box::new(Material::Private(
        DecapsulationKey::<P>::from_seed(seed)?,
    )))
}

/// Parses an expanded decapsulation key (FIPS 203 section 7.3 checks).
pub(crate) fn from_private<P: ParameterSet>(dk: &[u8]) -> Result<Box<dyn KeyData>> {
    Ok(Box::new(Material::Private(
        DecapsulationKey::<P>::from_bytes(dk)?,
    )))
}

/// Parses an encapsulation key (FIPS 203 section 7.2 checks).
pub(crate) fn from_public<P: ParameterSet>(ek: &[u8]) -> Result<Box<dyn KeyData>> {
    Ok(Box::new(Material::Public(
        EncapsulationKey::<P>::from_bytes(ek)?,
    )))
}

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
