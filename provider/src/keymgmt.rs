//! Key management (`OSSL_OP_KEYMGMT`) for every kind of key: key objects,
//! generation, import and export, parameters — with OpenSSL 3.5's
//! behaviour (`ml_kem_kmgmt.c`, `mlx_kmgmt.c`), written once over
//! [`Key<K>`](Key).

use core::ffi::{c_int, CStr};
use core::marker::PhantomData;
use std::ffi::CString;

use kem_core::SEED_LEN;
use zeroize::Zeroizing;

use crate::context::ProvCtx;
use crate::error::{ProviderError, Reason, Result};
use crate::ffi::keymgmt::{keymgmt_functions, Keymgmt};
use crate::ffi::names;
use crate::ffi::object::Object;
use crate::ffi::params::{describe_octets, ParamCallback, ParamList, Params, ParamsMut, END};
use crate::ffi::sys::{OSSL_DISPATCH, OSSL_PARAM};
use crate::ffi::upcalls::Instance;
use crate::ffi::Selection;
use crate::key::{Given, Key, KeyKind, KeyParts};

/// Key management for row `I` of `K`'s table.
pub(crate) struct KeyManagement<K, const I: usize>(PhantomData<K>);

/// A generation context: the key kind, the selection, and an optional
/// one-shot seed.
pub(crate) struct GenCtx<K: KeyKind> {
    prov: &'static ProvCtx,
    kind: &'static K,
    selection: Selection,
    seed: Option<Zeroizing<[u8; SEED_LEN]>>,
    _properties: Option<CString>,
}

/// `CMS_RECIPINFO_KEM` of OpenSSL's `cms.h`.
const CMS_RECIPINFO_KEM: i64 = 5;

/// DER of the AlgorithmIdentifier of id-alg-hkdf-with-sha256
/// (1.2.840.113549.1.9.16.3.28, RFC 8619), parameters absent.
const HKDF_SHA256_ALGORITHM_ID: [u8; 15] = [
    0x30, 0x0d, 0x06, 0x0b, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x10, 0x03, 0x1c,
];

impl<K: KeyKind> Object for GenCtx<K> {
    fn instance(&self) -> Instance {
        self.prov.instance()
    }
}

impl<K: KeyKind> GenCtx<K> {
    /// Takes ML-KEM's generation parameters: `properties` (checked; the key
    /// is made here, with nothing to fetch) and the one-shot `seed`. A
    /// hybrid's generation takes none: both halves use the provider's own
    /// properties.
    fn set(&mut self, params: Params<'_>) -> Result<()> {
        if !K::HAS_SEED {
            return Ok(());
        }
        if let Some(p) = params.find(names::PKEY_PROPERTIES) {
            self._properties = p
                .utf8_or_null()?
                .map(|s| CString::new(s).unwrap_or_default());
        }
        if let Some(p) = params.find(names::PKEY_ML_KEM_SEED) {
            // A rejected seed clears the one set before, as in OpenSSL 3.5.
            self.seed = None;
            let seed: [u8; SEED_LEN] = p.octet_array()?;
            self.seed = Some(Zeroizing::new(seed));
        }
        Ok(())
    }
}

/// Fails when `key` already holds key material.
fn require_empty<K: KeyKind>(key: &Key<K>, what: &str) -> Result<()> {
    if key.has_public() {
        return Err(ProviderError::new(Reason::KeyImmutable).with_detail(what.to_owned()));
    }
    Ok(())
}

impl<K: KeyKind, const I: usize> Keymgmt for KeyManagement<K, I> {
    type Prov = ProvCtx;
    type Key = Key<K>;
    type GenCtx = GenCtx<K>;

    const GETTABLE: &'static [OSSL_PARAM] = K::GETTABLE;
    const SETTABLE: &'static [OSSL_PARAM] = &[describe_octets(names::PKEY_ENCODED_PUBLIC_KEY), END];
    const GEN_SETTABLE: &'static [OSSL_PARAM] = K::GEN_SETTABLE;
    const KEY_TYPES: &'static [OSSL_PARAM] = K::KEY_TYPES;

    fn new(prov: &'static ProvCtx) -> Result<Key<K>> {
        Ok(Key::empty(&K::table()[I], prov))
    }

    fn has(key: &Key<K>, selection: Selection) -> bool {
        if selection.private() {
            key.has_private()
        } else if selection.public() {
            key.has_public()
        } else {
            true
        }
    }

    fn matches(a: &Key<K>, b: &Key<K>, selection: Selection) -> bool {
        if !core::ptr::eq(a.kind, b.kind) {
            return false;
        }
        if !selection.key() {
            return true;
        }
        match (&a.parts, &b.parts) {
            (Some(x), Some(y)) => x.public_key() == y.public_key(),
            // Two keys without material match, as in OpenSSL 3.5's ML-KEM
            // (`ossl_ml_kem_pubkey_cmp`) and hybrid (`mlx_kem_match`)
            // keymgmts.
            (None, None) => true,
            _ => false,
        }
    }

    fn validate(key: &Key<K>, selection: Selection) -> Result<bool> {
        if !Self::has(key, selection) {
            return Ok(false);
        }
        // The FIPS 203 section 7.2/7.3 checks ran when the key was parsed;
        // a key pair also gets the pairwise test, as OpenSSL does.
        if selection.private() && selection.public() {
            key.private()?.check_pair(key.kind, key.prov)?;
        }
        Ok(true)
    }

    fn get_params(key: &Key<K>, params: &mut ParamsMut<'_>) -> Result<()> {
        let kind = key.kind;
        let category = kind.security_category();
        for (name, value) in [
            (names::PKEY_BITS, Some(kind.bits())),
            (names::PKEY_SECURITY_BITS, Some(kind.security_bits())),
            (names::PKEY_SECURITY_CATEGORY, category),
            (
                names::PKEY_MAX_SIZE,
                u32::try_from(kind.ciphertext_len()).ok(),
            ),
        ] {
            if let (Some(mut p), Some(value)) = (params.find(name), value) {
                p.set_int(i64::from(value))?;
            }
        }
        if K::CMS_KEM_RECIPIENT {
            // RFC 9629 KEMRecipientInfo, with RFC 9936's default KDF: what
            // OpenSSL 3.6's ML-KEM keymgmt answers, empty keys included.
            if let Some(mut p) = params.find(names::PKEY_CMS_RI_TYPE) {
                p.set_int(CMS_RECIPINFO_KEM)?;
            }
            if let Some(mut p) = params.find(names::PKEY_CMS_KEMRI_KDF_ALGORITHM) {
                p.set_octets(&HKDF_SHA256_ALGORITHM_ID)?;
            }
        }
        let Some(parts) = &key.parts else {
            return Ok(());
        };
        let public = parts.public_key();
        for name in [names::PKEY_PUB_KEY, names::PKEY_ENCODED_PUBLIC_KEY] {
            if let Some(mut p) = params.find(name) {
                p.set_octets(&public)?;
            }
        }
        if let Some(mut p) = params.find(names::PKEY_PRIV_KEY) {
            if let Some(private) = parts.private_key()? {
                p.set_octets(&private)?;
            }
        }
        if let (Some(mut p), Some(seed)) = (params.find(names::PKEY_ML_KEM_SEED), parts.seed()) {
            p.set_octets(seed)?;
        }
        Ok(())
    }

    fn set_params(key: &mut Key<K>, params: Params<'_>) -> Result<()> {
        let Some(p) = params.find(names::PKEY_ENCODED_PUBLIC_KEY) else {
            return Ok(());
        };
        let public = p.octets()?;
        require_empty(key, &format!("{} keys cannot be mutated", key.kind.name()))?;
        key.parts = Some(key.kind.public_parts(key.prov, public)?);
        Ok(())
    }

    fn gen_init(
        prov: &'static ProvCtx,
        selection: Selection,
        params: Params<'_>,
    ) -> Result<GenCtx<K>> {
        let mut ctx = GenCtx {
            prov,
            kind: &K::table()[I],
            selection,
            seed: None,
            _properties: None,
        };
        ctx.set(params)?;
        Ok(ctx)
    }

    fn gen_set_params(ctx: &mut GenCtx<K>, params: Params<'_>) -> Result<()> {
        ctx.set(params)
    }

    fn generate(ctx: &mut GenCtx<K>) -> Result<Key<K>> {
        let (prov, kind) = (ctx.prov, ctx.kind);
        if !ctx.selection.key() {
            // Parameter generation: an empty key (TLS servers fill it with
            // the peer's public key).
            return Ok(Key::empty(kind, prov));
        }
        // The seed is single use: a re-call on the same context (as
        // `openssl speed` does) makes a fresh random key.
        let seed = match ctx.seed.take() {
            Some(seed) => seed,
            None => {
                let mut seed = Zeroizing::new([0u8; SEED_LEN]);
                prov.secret_random(seed.as_mut_slice(), kind.security_bits())?;
                seed
            }
        };
        Ok(Key {
            kind,
            prov,
            parts: Some(kind.generate(prov, &seed)?),
        })
    }

    fn dup(key: &Key<K>, selection: Selection) -> Result<Key<K>> {
        let parts = match &key.parts {
            Some(parts) if selection.key() => Some(parts.duplicate(selection.private())),
            _ => None,
        };
        Ok(Key {
            kind: key.kind,
            prov: key.prov,
            parts,
        })
    }

    fn import(key: &mut Key<K>, selection: Selection, params: Params<'_>) -> Result<bool> {
        if !selection.key() {
            return Ok(false);
        }
        require_empty(key, "import into a key that already holds key material")?;
        let get = |name: &CStr| params.find(name).map(|p| p.octets()).transpose();
        let mut given = Given::default();
        if selection.private() {
            if K::HAS_SEED {
                given.seed = get(names::PKEY_ML_KEM_SEED)?;
            }
            given.private = get(names::PKEY_PRIV_KEY)?;
        }
        given.public = get(names::PKEY_PUB_KEY)?;
        key.parts = Some(key.kind.import(key.prov, given)?);
        Ok(true)
    }

    fn export(key: &Key<K>, selection: Selection, callback: ParamCallback<'_>) -> Result<c_int> {
        export(key, selection, callback)
    }
}

/// Passes the key's parts that `selection` asks for to `callback` (also
/// what a decoder exports).
pub(crate) fn export<K: KeyKind>(
    key: &Key<K>,
    selection: Selection,
    callback: ParamCallback<'_>,
) -> Result<c_int> {
    if !selection.key() {
        return Ok(0);
    }
    let parts = key.public()?;
    let (seed, private) = if selection.private() {
        (
            parts.seed().map(|s| Zeroizing::new(*s)),
            parts.private_key()?,
        )
    } else {
        (None, None)
    };
    let public = parts.public_key();
    let mut list = ParamList::new();
    if let Some(seed) = &seed {
        list = list.octets(names::PKEY_ML_KEM_SEED, seed.as_slice());
    }
    if let Some(private) = &private {
        list = list.octets(names::PKEY_PRIV_KEY, private);
    }
    if selection.public() {
        list = list.octets(names::PKEY_PUB_KEY, &public);
    }
    Ok(callback.call(&mut list))
}

/// The keymgmt dispatch table of each ML-KEM parameter set (with `validate`
/// and `load`, which the decoders' references need).
macro_rules! ml_kem_keymgmt {
    ($i:literal) => {
        keymgmt_functions!(
            KeyManagement<crate::algorithms::Algorithm, $i>,
            OSSL_FUNC_KEYMGMT_VALIDATE => OSSL_FUNC_keymgmt_validate_fn =
                crate::ffi::keymgmt::validate::<KeyManagement<crate::algorithms::Algorithm, $i>>,
            OSSL_FUNC_KEYMGMT_LOAD => OSSL_FUNC_keymgmt_load_fn = crate::ffi::keymgmt::load,
        )
    };
}

/// The keymgmt dispatch tables of the ML-KEM parameter sets, in table order.
pub(crate) const ML_KEM_FUNCTIONS: [&[OSSL_DISPATCH]; 3] =
    [ml_kem_keymgmt!(0), ml_kem_keymgmt!(1), ml_kem_keymgmt!(2)];

/// The keymgmt dispatch tables of the hybrid groups, in table order.
pub(crate) const HYBRID_FUNCTIONS: [&[OSSL_DISPATCH]; crate::hybrid::HYBRID_COUNT] = [
    keymgmt_functions!(KeyManagement<crate::hybrid::Hybrid, 0>),
    keymgmt_functions!(KeyManagement<crate::hybrid::Hybrid, 1>),
    keymgmt_functions!(KeyManagement<crate::hybrid::Hybrid, 2>),
    keymgmt_functions!(KeyManagement<crate::hybrid::Hybrid, 3>),
    keymgmt_functions!(KeyManagement<crate::hybrid::Hybrid, 4>),
];
