//! The classical half of the hybrids (X25519, X448, P-256, P-384 and the
//! SM2 curve), through OpenSSL's EVP in the provider's child library
//! context: whatever provider the application configured for them (the
//! default one, or a FIPS module) does the arithmetic.
//!
//! A [`ClassicalKey`] owns one `EVP_PKEY`, built once per key (generated,
//! or parsed from its encoding) with its encoded public key cached next to
//! it; operations reuse it, never re-parse it.

use core::ffi::{c_int, CStr};

use zeroize::Zeroizing;

use crate::context::ProvCtx;
use crate::error::{check_length, ProviderError, Reason, Result};
use crate::ffi::evp::{Pkey, PkeyCtx};
use crate::ffi::names;
use crate::ffi::params::ParamList;
use crate::ffi::sys::{OSSL_PARAM_OCTET_STRING, OSSL_PARAM_UNSIGNED_INTEGER};

/// `EVP_PKEY_PUBLIC_KEY` and `EVP_PKEY_KEYPAIR` selections for fromdata.
const SELECT_PUBLIC: c_int = 0x86;
const SELECT_KEYPAIR: c_int = 0x87;

/// One classical algorithm of a hybrid group.
pub(crate) struct Curve {
    /// The name shown in errors.
    pub(crate) name: &'static str,
    /// The EVP key type (`X25519`, `X448`, `EC`, `curveSM2`).
    pub(crate) key_type: &'static CStr,
    /// The EC group, for `EC` and `curveSM2` keys.
    pub(crate) group: Option<&'static CStr>,
    /// Encoded public key (raw, or the uncompressed point) length.
    pub(crate) public_len: usize,
    /// Private key length (raw, or the big-endian scalar).
    pub(crate) private_len: usize,
    /// Shared secret length.
    pub(crate) secret_len: usize,
    /// The first OpenSSL major version whose EVP has this key type.
    pub(crate) since_major: u32,
}

pub(crate) const X25519: Curve = Curve {
    name: "X25519",
    key_type: c"X25519",
    group: None,
    public_len: 32,
    private_len: 32,
    secret_len: 32,
    since_major: 3,
};

pub(crate) const X448: Curve = Curve {
    name: "X448",
    key_type: c"X448",
    group: None,
    public_len: 56,
    private_len: 56,
    secret_len: 56,
    since_major: 3,
};

pub(crate) const P256: Curve = Curve {
    name: "P-256",
    key_type: c"EC",
    group: Some(c"P-256"),
    public_len: 65,
    private_len: 32,
    secret_len: 32,
    since_major: 3,
};

pub(crate) const P384: Curve = Curve {
    name: "P-384",
    key_type: c"EC",
    group: Some(c"P-384"),
    public_len: 97,
    private_len: 48,
    secret_len: 48,
    since_major: 3,
};

/// ECDH on the SM2 curve: OpenSSL 4.0's `curveSM2` key type (group SM2,
/// key exchange by ECDH). OpenSSL 3's EC keymgmt refuses the SM2 curve and
/// its `SM2` key type has no key exchange, so before 4.0 EVP cannot do it.
pub(crate) const SM2: Curve = Curve {
    name: "SM2",
    key_type: c"curveSM2",
    group: Some(c"SM2"),
    public_len: 65,
    private_len: 32,
    secret_len: 32,
    since_major: 4,
};

fn failure(curve: &Curve, what: &str) -> ProviderError {
    ProviderError::new(Reason::LibcryptoFailure).with_detail(format!("{} {what}", curve.name))
}

/// A classical key pair or public key, owned.
#[derive(Clone)]
pub(crate) struct ClassicalKey {
    curve: &'static Curve,
    pkey: Pkey,
    public: Box<[u8]>,
    has_private: bool,
}

impl ClassicalKey {
    /// Takes `pkey` and reads its encoded public key.
    fn adopt(curve: &'static Curve, pkey: Pkey, has_private: bool) -> Result<Self> {
        let mut public = vec![0u8; curve.public_len].into_boxed_slice();
        let written = pkey.get_param(
            names::PKEY_ENCODED_PUBLIC_KEY,
            OSSL_PARAM_OCTET_STRING,
            &mut public,
        );
        if written != Some(curve.public_len) {
            return Err(failure(curve, "public key encoding failed"));
        }
        Ok(Self {
            curve,
            pkey,
            public,
            has_private,
        })
    }

    /// A fresh key pair.
    pub(crate) fn generate(prov: &ProvCtx, curve: &'static Curve) -> Result<Self> {
        let pkey = PkeyCtx::for_type(&prov.libctx, curve.key_type)
            .ok_or_else(|| failure(curve, "is not available"))?
            .generate(curve.group)
            .ok_or_else(|| failure(curve, "key generation failed"))?;
        Self::adopt(curve, pkey, true)
    }

    fn from_data(
        prov: &ProvCtx,
        curve: &'static Curve,
        selection: c_int,
        list: &mut ParamList<'_>,
    ) -> Result<Pkey> {
        PkeyCtx::for_type(&prov.libctx, curve.key_type)
            .ok_or_else(|| failure(curve, "is not available"))?
            .key_from_data(selection, list)
            .ok_or_else(|| {
                ProviderError::new(Reason::InvalidKey)
                    .with_detail(format!("invalid {} key", curve.name))
            })
    }

    /// Parses an encoded public key (checked by OpenSSL: on the curve, the
    /// right length).
    pub(crate) fn from_public(
        prov: &ProvCtx,
        curve: &'static Curve,
        public: &[u8],
    ) -> Result<Self> {
        check_length(curve.name, "public key", public.len(), curve.public_len)?;
        // TLS (RFC 8446, section 4.2.8.2) and the hybrid draft allow only
        // the uncompressed form; OpenSSL would also take the "hybrid"
        // 0x06/0x07 form of the same point.
        if curve.group.is_some() && public.first() != Some(&0x04) {
            return Err(ProviderError::new(Reason::InvalidKey).with_detail(format!(
                "{} public key must be an uncompressed point",
                curve.name
            )));
        }
        let mut list = ParamList::new().octets(names::PKEY_PUB_KEY, public);
        if let Some(group) = curve.group {
            list = list.utf8(names::PKEY_GROUP_NAME, group);
        }
        let pkey = Self::from_data(prov, curve, SELECT_PUBLIC, &mut list)?;
        // OpenSSL took exactly these bytes (an uncompressed point, or the
        // raw X25519 key), so they are the encoding: no need to ask for it.
        Ok(Self {
            curve,
            pkey,
            public: public.into(),
            has_private: false,
        })
    }

    /// Parses a private key (raw X25519 bytes, or a big-endian EC scalar,
    /// with `public` for EC keys, whose public point OpenSSL does not
    /// derive on import).
    pub(crate) fn from_private(
        prov: &ProvCtx,
        curve: &'static Curve,
        private: &[u8],
        public: Option<&[u8]>,
    ) -> Result<Self> {
        check_length(curve.name, "private key", private.len(), curve.private_len)?;
        // OpenSSL's BIGNUM parameters are native-endian unsigned integers.
        let mut scalar = Zeroizing::new(private.to_vec());
        if cfg!(target_endian = "little") {
            scalar.reverse();
        }
        let mut list = match curve.group {
            None => ParamList::new().octets(names::PKEY_PRIV_KEY, private),
            Some(group) => {
                let public = public.ok_or_else(|| {
                    ProviderError::new(Reason::MissingPublicKey).with_detail(format!(
                        "{} private key import needs the public key",
                        curve.name
                    ))
                })?;
                ParamList::new()
                    .utf8(names::PKEY_GROUP_NAME, group)
                    .unsigned_bytes(names::PKEY_PRIV_KEY, &scalar)
                    .octets(names::PKEY_PUB_KEY, public)
            }
        };
        let pkey = Self::from_data(prov, curve, SELECT_KEYPAIR, &mut list)?;
        Self::adopt(curve, pkey, true)
    }

    /// The encoded public key.
    pub(crate) fn public_key(&self) -> &[u8] {
        &self.public
    }

    /// Whether the private part is present.
    pub(crate) fn has_private(&self) -> bool {
        self.has_private
    }

    /// The private key (raw X25519 bytes, or the big-endian EC scalar).
    pub(crate) fn private_key(&self) -> Result<Zeroizing<Vec<u8>>> {
        let curve = self.curve;
        let mut out = Zeroizing::new(vec![0u8; curve.private_len]);
        let data_type = if curve.group.is_some() {
            OSSL_PARAM_UNSIGNED_INTEGER
        } else {
            OSSL_PARAM_OCTET_STRING
        };
        self.pkey
            .get_param(names::PKEY_PRIV_KEY, data_type, &mut out)
            .ok_or_else(|| failure(curve, "private key export failed"))?;
        if curve.group.is_some() && cfg!(target_endian = "little") {
            out.reverse();
        }
        Ok(out)
    }

    /// ECDH / X25519 with `peer`'s public key.
    ///
    /// The peer is not validated again here: every `ClassicalKey` was
    /// generated, or parsed by OpenSSL, which puts an EC point on the curve
    /// (P-256, P-384 and SM2 have cofactor 1, so that is the whole
    /// public-key check, and the full check's extra scalar multiplication
    /// would only repeat it); X25519's and X448's derive rejects the
    /// all-zero result of a low-order point.
    pub(crate) fn derive(&self, prov: &ProvCtx, peer: &ClassicalKey) -> Result<Zeroizing<Vec<u8>>> {
        let ctx = PkeyCtx::for_key(&prov.libctx, &self.pkey)
            .ok_or_else(|| failure(self.curve, "context failed"))?;
        let mut secret = Zeroizing::new(vec![0u8; self.curve.secret_len]);
        if ctx.derive(&peer.pkey, &mut secret) != Some(self.curve.secret_len) {
            return Err(ProviderError::new(Reason::InvalidKey)
                .with_detail(format!("{} key agreement failed", self.curve.name)));
        }
        Ok(secret)
    }
}

impl PartialEq for ClassicalKey {
    fn eq(&self, other: &Self) -> bool {
        core::ptr::eq(self.curve, other.curve) && self.public == other.public
    }
}
