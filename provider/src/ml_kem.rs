//! Pure ML-KEM keys: the [`KeyKind`] of the algorithm table's rows, with
//! OpenSSL 3.5's import rules and the FIPS 203 pairwise test.

use std::borrow::Cow;

use kem_core::{MESSAGE_LEN, SEED_LEN, SHARED_SECRET_LEN};
use zeroize::Zeroizing;

use crate::algorithms::{Algorithm, ML_KEM};
use crate::context::ProvCtx;
use crate::error::{check_length, ProviderError, Reason, Result};
use crate::ffi::names;
use crate::ffi::params::{describe_int, describe_octets, describe_utf8, END};
use crate::ffi::sys::OSSL_PARAM;
use crate::key::{Given, Key, KeyKind, KeyParts};
use crate::material::KeyData;

/// A pure ML-KEM key object.
pub(crate) type MlKemKey = Key<Algorithm>;

impl Algorithm {
    /// Key material from `seed` / `dk` / `ek`, with OpenSSL 3.5's rules:
    /// the seed wins (its derived dk must equal a given dk), then the
    /// private key, then the public key; a given public key must match the
    /// private key's.
    pub(crate) fn key_data(&self, given: Given<'_>) -> Result<Box<dyn KeyData>> {
        let layout = &self.layout;
        let seed = given.seed.filter(|s| !s.is_empty());
        let dk = given.private.filter(|d| !d.is_empty());
        let ek = given.public.filter(|e| !e.is_empty());
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
        match (seed, dk, ek) {
            (Some(seed), dk, _) => {
                let data = (self.from_seed)(seed)?;
                if let Some(dk) = dk {
                    let derived = data.as_ref().private_key().unwrap_or_default();
                    if derived.as_slice() != dk {
                        return Err(ProviderError::new(Reason::InvalidKey).with_detail(format!(
                            "explicit {} private key does not match seed",
                            layout.name
                        )));
                    }
                }
                Ok(data)
            }
            (None, Some(dk), _) => (self.from_private)(dk),
            (None, None, Some(ek)) => (self.from_public)(ek),
            (None, None, None) => Err(ProviderError::new(Reason::MissingPublicKey).with_detail(
                format!("no {} seed, private or public key given", layout.name),
            )),
        }
    }

    /// The FIPS 203 pairwise-consistency test: encapsulate to the public
    /// part with a fixed m and decapsulate with the private part.
    pub(crate) fn pairwise_check(&self, data: &dyn KeyData) -> Result<()> {
        let m = [0x55u8; MESSAGE_LEN];
        let mut ct = vec![0u8; self.ct_len];
        let mut sent = Zeroizing::new([0u8; SHARED_SECRET_LEN]);
        let mut received = Zeroizing::new([0u8; SHARED_SECRET_LEN]);
        data.encapsulate(&m, &mut ct, &mut sent);
        data.decapsulate(&ct, &mut received)?;
        if *sent == *received {
            Ok(())
        } else {
            Err(ProviderError::new(Reason::InvalidKey).with_detail(format!(
                "public part of {} private key fails to match private",
                self.layout.name
            )))
        }
    }
}

impl KeyKind for Algorithm {
    type Parts = Box<dyn KeyData>;

    const HAS_SEED: bool = true;
    const CMS_KEM_RECIPIENT: bool = true;
    const GETTABLE: &'static [OSSL_PARAM] = &[
        describe_int(names::PKEY_BITS),
        describe_int(names::PKEY_SECURITY_BITS),
        describe_int(names::PKEY_SECURITY_CATEGORY),
        describe_int(names::PKEY_MAX_SIZE),
        describe_octets(names::PKEY_ML_KEM_SEED),
        describe_octets(names::PKEY_PRIV_KEY),
        describe_octets(names::PKEY_PUB_KEY),
        describe_octets(names::PKEY_ENCODED_PUBLIC_KEY),
        describe_int(names::PKEY_CMS_RI_TYPE),
        describe_octets(names::PKEY_CMS_KEMRI_KDF_ALGORITHM),
        END,
    ];
    const GEN_SETTABLE: &'static [OSSL_PARAM] = &[
        describe_octets(names::PKEY_ML_KEM_SEED),
        describe_utf8(names::PKEY_PROPERTIES),
        END,
    ];
    const KEY_TYPES: &'static [OSSL_PARAM] = &[
        describe_octets(names::PKEY_ML_KEM_SEED),
        describe_octets(names::PKEY_PRIV_KEY),
        describe_octets(names::PKEY_PUB_KEY),
        END,
    ];

    fn table() -> &'static [Self] {
        &ML_KEM
    }

    fn name(&self) -> &'static str {
        self.layout.name
    }

    fn bits(&self) -> u32 {
        self.bits
    }

    fn security_bits(&self) -> u32 {
        self.security_bits
    }

    fn security_category(&self) -> Option<u32> {
        Some(self.security_category)
    }

    fn ciphertext_len(&self) -> usize {
        self.ct_len
    }

    fn secret_len(&self) -> usize {
        SHARED_SECRET_LEN
    }

    fn import(&'static self, prov: &'static ProvCtx, given: Given<'_>) -> Result<Self::Parts> {
        let data = self.key_data(given)?;
        if data.as_ref().has_private() {
            self.pairwise_check(data.as_ref())?;
        }
        Ok(seed_as_configured(prov, data))
    }

    fn public_parts(&'static self, _prov: &'static ProvCtx, public: &[u8]) -> Result<Self::Parts> {
        let layout = &self.layout;
        check_length(layout.name, "public key", public.len(), layout.ek_len)?;
        (self.from_public)(public)
    }

    fn generate(
        &'static self,
        prov: &'static ProvCtx,
        seed: &[u8; SEED_LEN],
    ) -> Result<Self::Parts> {
        Ok(seed_as_configured(prov, (self.from_seed)(seed)?))
    }
}

/// `data`, without its seed when the configuration says
/// `ml-kem.retain_seed = no`: as in OpenSSL 3.5, whose keys made from a seed
/// (generated, imported or decoded) all go through `ossl_ml_kem_genkey`,
/// which keeps d only when asked to.
pub(crate) fn seed_as_configured(prov: &ProvCtx, data: Box<dyn KeyData>) -> Box<dyn KeyData> {
    match prov.retain_seed {
        true => data,
        false => data.without_seed(),
    }
}

/// The secret buffer as ML-KEM's fixed-size array.
fn secret_array(secret: &mut [u8]) -> Result<&mut [u8; SHARED_SECRET_LEN]> {
    secret
        .try_into()
        .map_err(|_| ProviderError::new(Reason::InternalError).with_detail("secret length"))
}

impl KeyParts for Box<dyn KeyData> {
    type Kind = Algorithm;

    fn has_private(&self) -> bool {
        KeyData::has_private(self.as_ref())
    }

    fn public_key(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(KeyData::public_key(self.as_ref()))
    }

    fn private_key(&self) -> Result<Option<Zeroizing<Vec<u8>>>> {
        Ok(KeyData::private_key(self.as_ref()))
    }

    fn seed(&self) -> Option<&[u8; SEED_LEN]> {
        KeyData::seed(self.as_ref())
    }

    fn duplicate(&self, private: bool) -> Self {
        KeyData::duplicate(self.as_ref(), private)
    }

    fn check_pair(&self, kind: &Algorithm, _prov: &ProvCtx) -> Result<()> {
        kind.pairwise_check(self.as_ref())
    }

    fn encapsulate(
        &self,
        _kind: &Algorithm,
        _prov: &ProvCtx,
        m: &[u8; MESSAGE_LEN],
        ct: &mut [u8],
        secret: &mut [u8],
    ) -> Result<()> {
        KeyData::encapsulate(self.as_ref(), m, ct, secret_array(secret)?);
        Ok(())
    }

    fn decapsulate(
        &self,
        _kind: &Algorithm,
        _prov: &ProvCtx,
        ct: &[u8],
        secret: &mut [u8],
    ) -> Result<()> {
        KeyData::decapsulate(self.as_ref(), ct, secret_array(secret)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key made from a seed keeps it only under `ml-kem.retain_seed =
    /// yes`, whether it was generated or imported (the decoder's keys are
    /// checked by the CLI tests), and is the same key either way.
    #[test]
    fn keys_from_a_seed_keep_it_only_when_configured() {
        let seed = [7u8; SEED_LEN];
        let alg = &ML_KEM[1];
        let reference = alg.generate(ProvCtx::for_tests(), &seed).unwrap();
        for retain in [true, false] {
            let prov = ProvCtx::for_tests_retaining_seeds(retain);
            let generated = alg.generate(prov, &seed).unwrap();
            let given = Given {
                seed: Some(&seed),
                private: None,
                public: None,
            };
            let imported = alg.import(prov, given).unwrap();
            for (how, parts) in [("generated", generated), ("imported", imported)] {
                let kept = parts.seed().map(|s| s.as_slice());
                assert_eq!(kept, retain.then_some(&seed[..]), "{how}, retain {retain}");
                assert_eq!(parts.public_key(), reference.public_key(), "{how}");
                assert_eq!(
                    parts.private_key().unwrap(),
                    reference.private_key().unwrap(),
                    "{how}"
                );
            }
        }
    }
}
