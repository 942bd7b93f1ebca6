//! The hybrid TLS groups of draft-ietf-tls-ecdhe-mlkem, as OpenSSL 3.5
//! names and lays them out: X25519MLKEM768 (ML-KEM part first),
//! SecP256r1MLKEM768 and SecP384r1MLKEM1024 (EC point first). Public key,
//! ciphertext and shared secret are the two parts' concatenations in that
//! order; the private key is ML-KEM's expanded dk and the classical private
//! key, in the same order.
//!
//! The ML-KEM half runs on kem-core directly; the classical half through
//! EVP in the child library context ([`ClassicalKey`]), built once per key.

use core::ffi::CStr;
use std::borrow::Cow;

use kem_core::{MESSAGE_LEN, SEED_LEN, SHARED_SECRET_LEN};
use zeroize::{Zeroize, Zeroizing};

use crate::algorithms::{Algorithm, TlsGroup, ML_KEM};
use crate::classical::{ClassicalKey, Curve, P256, P384, SM2, X25519, X448};
use crate::context::ProvCtx;
use crate::error::{check_length, ProviderError, Reason, Result};
use crate::ffi::names;
use crate::ffi::params::{describe_octets, describe_utf8, END};
use crate::ffi::sys::OSSL_PARAM;
use crate::key::{Given, KeyKind, KeyParts};
use crate::material::KeyData;

/// One hybrid group.
pub(crate) struct Hybrid {
    /// The algorithm (and TLS group) name.
    pub(crate) name: &'static CStr,
    /// The ML-KEM half (index into `ML_KEM`).
    pub(crate) ml_kem: usize,
    /// The classical half.
    pub(crate) curve: &'static Curve,
    /// Whether the ML-KEM part comes first in every encoding.
    pub(crate) ml_kem_first: bool,
    /// The TLS 1.3 group, if it is one (OpenSSL's X448MLKEM1024 is a KEM
    /// only).
    pub(crate) tls_group: Option<&'static TlsGroup>,
}

impl Hybrid {
    fn ml_kem(&self) -> &'static Algorithm {
        &ML_KEM[self.ml_kem]
    }

    /// Whether an OpenSSL of major version `core_major` has the classical
    /// half in EVP, so that this provider can offer the hybrid there.
    pub(crate) fn available_on(&self, core_major: u32) -> bool {
        core_major >= self.curve.since_major
    }

    /// Splits a concatenation of an ML-KEM part of `ml_kem_len` bytes and a
    /// classical part into (ML-KEM, classical).
    fn split<'a>(&self, bytes: &'a [u8], ml_kem_len: usize) -> (&'a [u8], &'a [u8]) {
        if self.ml_kem_first {
            bytes.split_at(ml_kem_len)
        } else {
            let (classical, ml_kem) = bytes.split_at(bytes.len() - ml_kem_len);
            (ml_kem, classical)
        }
    }

    /// The same split, mutable.
    fn split_mut<'a>(
        &self,
        bytes: &'a mut [u8],
        ml_kem_len: usize,
    ) -> (&'a mut [u8], &'a mut [u8]) {
        if self.ml_kem_first {
            bytes.split_at_mut(ml_kem_len)
        } else {
            let at = bytes.len() - ml_kem_len;
            let (classical, ml_kem) = bytes.split_at_mut(at);
            (ml_kem, classical)
        }
    }

    /// Concatenates the two parts in this group's order.
    fn join(&self, ml_kem: &[u8], classical: &[u8]) -> Zeroizing<Vec<u8>> {
        let mut out = Zeroizing::new(Vec::with_capacity(ml_kem.len() + classical.len()));
        let (first, second) = if self.ml_kem_first {
            (ml_kem, classical)
        } else {
            (classical, ml_kem)
        };
        out.extend_from_slice(first);
        out.extend_from_slice(second);
        out
    }

    fn public_len(&self) -> usize {
        self.ml_kem().layout.ek_len + self.curve.public_len
    }

    fn private_len(&self) -> usize {
        self.ml_kem().layout.dk_len + self.curve.private_len
    }
}

/// The hybrids, in OpenSSL's terms: the three TLS groups of OpenSSL 3.5,
/// its X448MLKEM1024 KEM and OpenSSL 4.0's curveSM2MLKEM768 group (a
/// `const` for the compile-time algorithm tables; [`HYBRIDS`] is the same as
/// a `static`). Layouts as OpenSSL's `mlx` keymgmt: ML-KEM first with X25519
/// and X448, the EC point first with P-256, P-384 and SM2.
pub(crate) const HYBRID_TABLE: [Hybrid; HYBRID_COUNT] = [
    Hybrid {
        name: c"X25519MLKEM768",
        ml_kem: 1,
        curve: &X25519,
        ml_kem_first: true,
        tls_group: Some(&tls_groups::X25519_MLKEM768),
    },
    Hybrid {
        name: c"SecP256r1MLKEM768",
        ml_kem: 1,
        curve: &P256,
        ml_kem_first: false,
        tls_group: Some(&tls_groups::SECP256R1_MLKEM768),
    },
    Hybrid {
        name: c"SecP384r1MLKEM1024",
        ml_kem: 2,
        curve: &P384,
        ml_kem_first: false,
        tls_group: Some(&tls_groups::SECP384R1_MLKEM1024),
    },
    Hybrid {
        name: c"X448MLKEM1024",
        ml_kem: 2,
        curve: &X448,
        ml_kem_first: true,
        tls_group: None,
    },
    Hybrid {
        name: c"curveSM2MLKEM768",
        ml_kem: 1,
        curve: &SM2,
        ml_kem_first: false,
        tls_group: Some(&tls_groups::CURVE_SM2_MLKEM768),
    },
];

/// How many hybrids the provider knows.
pub(crate) const HYBRID_COUNT: usize = 5;

/// How many hybrids every OpenSSL 3 can run: those before curveSM2MLKEM768,
/// the last of the table (the provider's tables are prefixes of it).
pub(crate) const OPENSSL_3_HYBRIDS: usize = HYBRID_COUNT - 1;

/// The hybrid groups, for keys to hold `&'static Hybrid`.
pub(crate) static HYBRIDS: [Hybrid; HYBRID_COUNT] = HYBRID_TABLE;

/// A hybrid key's material: the ML-KEM half and the classical half, each
/// parsed (or generated) once.
pub(crate) struct HybridParts {
    /// The group, whose order the encodings follow.
    hybrid: &'static Hybrid,
    ml_kem: Box<dyn KeyData>,
    classical: ClassicalKey,
}

impl Hybrid {
    /// Parses the concatenated private key (the public key is needed for
    /// the EC groups, whose import OpenSSL does not derive it in), and
    /// checks the pair against a given public key.
    fn private_parts(
        &'static self,
        prov: &ProvCtx,
        private: &[u8],
        public: Option<&[u8]>,
    ) -> Result<HybridParts> {
        check_length(
            self.name(),
            "private key",
            private.len(),
            self.private_len(),
        )?;
        let (dk, x_private) = self.split(private, self.ml_kem().layout.dk_len);
        let ml_kem = (self.ml_kem().from_private)(dk)?;
        let x_public = match public {
            Some(public) if public.len() == self.public_len() => {
                Some(self.split(public, self.ml_kem().layout.ek_len).1)
            }
            _ => None,
        };
        let classical = ClassicalKey::from_private(prov, self.curve, x_private, x_public)?;
        let parts = HybridParts {
            hybrid: self,
            ml_kem,
            classical,
        };
        parts.check_consistency(self, prov, public)?;
        Ok(parts)
    }
}

impl KeyKind for Hybrid {
    type Parts = HybridParts;

    const HAS_SEED: bool = false;
    const CMS_KEM_RECIPIENT: bool = false;
    const GETTABLE: &'static [OSSL_PARAM] = &[
        crate::ffi::params::describe_int(names::PKEY_BITS),
        crate::ffi::params::describe_int(names::PKEY_SECURITY_BITS),
        crate::ffi::params::describe_int(names::PKEY_MAX_SIZE),
        describe_octets(names::PKEY_ENCODED_PUBLIC_KEY),
        describe_octets(names::PKEY_PUB_KEY),
        describe_octets(names::PKEY_PRIV_KEY),
        END,
    ];
    const GEN_SETTABLE: &'static [OSSL_PARAM] = &[describe_utf8(names::PKEY_PROPERTIES), END];
    const KEY_TYPES: &'static [OSSL_PARAM] = &[
        describe_octets(names::PKEY_PUB_KEY),
        describe_octets(names::PKEY_PRIV_KEY),
        END,
    ];

    fn table() -> &'static [Self] {
        &HYBRIDS
    }

    fn name(&self) -> &'static str {
        match self.name.to_str() {
            Ok(name) => name,
            Err(_) => "hybrid",
        }
    }

    /// The ML-KEM half's, as in OpenSSL.
    fn bits(&self) -> u32 {
        self.ml_kem().bits
    }

    fn security_bits(&self) -> u32 {
        self.ml_kem().security_bits
    }

    fn security_category(&self) -> Option<u32> {
        None
    }

    fn ciphertext_len(&self) -> usize {
        self.ml_kem().ct_len + self.curve.public_len
    }

    fn secret_len(&self) -> usize {
        SHARED_SECRET_LEN + self.curve.secret_len
    }

    fn import(&'static self, prov: &'static ProvCtx, given: Given<'_>) -> Result<HybridParts> {
        match (given.private, given.public) {
            (Some(private), public) if !private.is_empty() => {
                self.private_parts(prov, private, public)
            }
            (_, Some(public)) if !public.is_empty() => self.public_parts(prov, public),
            _ => Err(ProviderError::new(Reason::MissingPublicKey)
                .with_detail("no public or private key given")),
        }
    }

    fn public_parts(&'static self, prov: &'static ProvCtx, public: &[u8]) -> Result<HybridParts> {
        check_length(self.name(), "public key", public.len(), self.public_len())?;
        let (ek, x) = self.split(public, self.ml_kem().layout.ek_len);
        let ml_kem = (self.ml_kem().from_public)(ek)?;
        let classical = ClassicalKey::from_public(prov, self.curve, x)?;
        Ok(HybridParts {
            hybrid: self,
            ml_kem,
            classical,
        })
    }

    fn generate(
        &'static self,
        prov: &'static ProvCtx,
        seed: &[u8; SEED_LEN],
    ) -> Result<HybridParts> {
        let ml_kem = (self.ml_kem().from_seed)(seed)?;
        let classical = ClassicalKey::generate(prov, self.curve)?;
        Ok(HybridParts {
            hybrid: self,
            ml_kem,
            classical,
        })
    }
}

impl HybridParts {
    /// Checks an imported key pair: a given public key must be this key's
    /// (ML-KEM's ek is embedded in dk; an EC import takes the point as
    /// given), and the classical pair must agree, tested by key agreement
    /// with a fresh ephemeral key from both sides.
    fn check_consistency(
        &self,
        hybrid: &Hybrid,
        prov: &ProvCtx,
        public: Option<&[u8]>,
    ) -> Result<()> {
        let own = &self.classical;
        let mismatch = || {
            ProviderError::new(Reason::InvalidKey).with_detail(format!(
                "explicit {} public key does not match private",
                hybrid.name()
            ))
        };
        if let Some(public) = public.filter(|p| !p.is_empty()) {
            if *hybrid.join(self.ml_kem.as_ref().public_key(), own.public_key()) != *public {
                return Err(mismatch());
            }
        }
        let ephemeral = ClassicalKey::generate(prov, hybrid.curve)?;
        let peer = ClassicalKey::from_public(prov, hybrid.curve, own.public_key())?;
        if *ephemeral.derive(prov, &peer)? != *own.derive(prov, &ephemeral)? {
            return Err(mismatch());
        }
        Ok(())
    }

    /// The ML-KEM half of a secret buffer, as its fixed-size array.
    fn ml_kem_secret<'a>(
        hybrid: &Hybrid,
        secret: &'a mut [u8],
    ) -> Result<(&'a mut [u8; SHARED_SECRET_LEN], &'a mut [u8])> {
        let (ss_m, ss_x) = hybrid.split_mut(secret, SHARED_SECRET_LEN);
        let ss_m = ss_m
            .try_into()
            .map_err(|_| ProviderError::new(Reason::InternalError).with_detail("secret split"))?;
        Ok((ss_m, ss_x))
    }
}

/// Runs `operation` on `secret`, wiping it if the operation fails: no
/// half-made secret is left behind.
fn wiping_on_error(
    secret: &mut [u8],
    operation: impl FnOnce(&mut [u8]) -> Result<()>,
) -> Result<()> {
    let result = operation(secret);
    if result.is_err() {
        secret.zeroize();
    }
    result
}

impl KeyParts for HybridParts {
    type Kind = Hybrid;

    fn has_private(&self) -> bool {
        self.ml_kem.as_ref().has_private() && self.classical.has_private()
    }

    fn public_key(&self) -> Cow<'_, [u8]> {
        let public = self.hybrid.join(
            self.ml_kem.as_ref().public_key(),
            self.classical.public_key(),
        );
        Cow::Owned(public.to_vec())
    }

    fn private_key(&self) -> Result<Option<Zeroizing<Vec<u8>>>> {
        if !self.has_private() {
            return Ok(None);
        }
        let dk = self.ml_kem.as_ref().private_key().unwrap_or_default();
        Ok(Some(self.hybrid.join(&dk, &self.classical.private_key()?)))
    }

    fn seed(&self) -> Option<&[u8; SEED_LEN]> {
        None
    }

    fn duplicate(&self, private: bool) -> Self {
        Self {
            hybrid: self.hybrid,
            ml_kem: self.ml_kem.as_ref().duplicate(private),
            classical: self.classical.clone(),
        }
    }

    fn check_pair(&self, kind: &Hybrid, prov: &ProvCtx) -> Result<()> {
        self.check_consistency(kind, prov, None)
    }

    fn encapsulate(
        &self,
        hybrid: &Hybrid,
        prov: &ProvCtx,
        m: &[u8; MESSAGE_LEN],
        ct: &mut [u8],
        secret: &mut [u8],
    ) -> Result<()> {
        wiping_on_error(secret, |secret| {
            let (ct_m, ct_x) = hybrid.split_mut(ct, hybrid.ml_kem().ct_len);
            let (ss_m, ss_x) = Self::ml_kem_secret(hybrid, secret)?;
            self.ml_kem.as_ref().encapsulate(m, ct_m, ss_m);
            // The classical "ciphertext" is an ephemeral public key; the
            // secret is the key agreement with the peer's public key.
            let ephemeral = ClassicalKey::generate(prov, hybrid.curve)?;
            ct_x.copy_from_slice(ephemeral.public_key());
            ss_x.copy_from_slice(&ephemeral.derive(prov, &self.classical)?);
            Ok(())
        })
    }

    fn decapsulate(
        &self,
        hybrid: &Hybrid,
        prov: &ProvCtx,
        ct: &[u8],
        secret: &mut [u8],
    ) -> Result<()> {
        wiping_on_error(secret, |secret| {
            let (ct_m, ct_x) = hybrid.split(ct, hybrid.ml_kem().ct_len);
            let (ss_m, ss_x) = Self::ml_kem_secret(hybrid, secret)?;
            self.ml_kem.as_ref().decapsulate(ct_m, ss_m)?;
            let ephemeral = ClassicalKey::from_public(prov, hybrid.curve, ct_x)?;
            ss_x.copy_from_slice(&self.classical.derive(prov, &ephemeral)?);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The provider's tables for OpenSSL 3 are a prefix of the full ones:
    /// every hybrid OpenSSL 3 cannot run comes after those it can.
    #[test]
    fn openssl_3_hybrids_are_a_prefix() {
        for (i, h) in HYBRIDS.iter().enumerate() {
            assert_eq!(h.available_on(3), i < OPENSSL_3_HYBRIDS, "{}", h.name());
            assert!(h.available_on(4), "{}", h.name());
        }
    }

    /// Layouts as OpenSSL's `mlx` keymgmt (`hybrid_vtable` in
    /// `mlx_kmgmt.c`): sizes of the classical half and the ML-KEM order.
    #[test]
    fn layouts_match_openssl() {
        let expected = [
            ("X25519MLKEM768", 32, 32, 32, true, 768, Some(0x11EC)),
            ("SecP256r1MLKEM768", 65, 32, 32, false, 768, Some(0x11EB)),
            ("SecP384r1MLKEM1024", 97, 48, 48, false, 1024, Some(0x11ED)),
            ("X448MLKEM1024", 56, 56, 56, true, 1024, None),
            ("curveSM2MLKEM768", 65, 32, 32, false, 768, Some(0x11EE)),
        ];
        for (h, (name, public, private, secret, first, set, id)) in HYBRIDS.iter().zip(expected) {
            assert_eq!(h.name(), name);
            let c = h.curve;
            assert_eq!(
                (c.public_len, c.private_len, c.secret_len),
                (public, private, secret)
            );
            assert_eq!(h.ml_kem_first, first, "{name}");
            assert_eq!([512, 768, 1024][h.ml_kem], set, "{name}");
            assert_eq!(h.tls_group.map(|g| g.code_point), id, "{name}");
            if let Some(group) = h.tls_group {
                assert_eq!(group.names[0], h.name, "{name}");
                // The table's OpenSSL major is the one the curve needs.
                let since = group.mlkem_provider.expect("offered by the provider");
                assert!(
                    h.available_on(since) && !h.available_on(since - 1),
                    "{name}"
                );
            }
        }
        let aliases: Vec<_> = HYBRIDS
            .iter()
            .filter_map(|h| h.tls_group)
            .flat_map(|g| g.aliases())
            .collect();
        assert_eq!(
            aliases,
            ["x25519_mlkem768", "p256_mlkem768", "p384_mlkem1024"]
        );
    }
}
