//! Key material: one parameter set's parsed key (public only, or the full
//! decapsulation key) behind the object-safe [`KeyData`], so the code above
//! needs no per-set copies, and the constructors the algorithm table stores.
//!
//! The bottom of the key stack: it knows kem-core, not the algorithm table
//! or the key objects built on it.

use kem_core::{
    Ciphertext, DecapsulationKey, EncapsulationKey, ParameterSet, MESSAGE_LEN, SEED_LEN,
    SHARED_SECRET_LEN,
};
use zeroize::Zeroizing;

use crate::error::{ProviderError, Reason, Result};

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
