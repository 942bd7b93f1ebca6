//! The hybrid TLS groups of draft-ietf-tls-ecdhe-mlkem, as OpenSSL 3.5
//! names and lays them out: X25519MLKEM768 (ML-KEM part first),
//! SecP256r1MLKEM768 and SecP384r1MLKEM1024 (EC point first). Public key,
//! ciphertext and shared secret are the two parts' concatenations in that
//! order; the private key is ML-KEM's expanded dk and the classical private
//! key, in the same order.
//!
//! The ML-KEM half runs on kem-core directly; the classical half through
//! EVP in the child library context ([`ClassicalKey`]), built once per key.

use core::ffi::{c_int, c_void, CStr};

use kem_core::{MESSAGE_LEN, SHARED_SECRET_LEN};
use zeroize::{Zeroize, Zeroizing};

use crate::algorithms::{Algorithm, TlsGroup, ML_KEM};
use crate::classical::{ClassicalKey, Curve, P256, P384, X25519};
use crate::context::ProvCtx;
use crate::error::{check_length, ProviderError, Reason, Result};
use crate::ffi::drop_boxed;
use crate::ffi::guard::{c_bool, guard, non_null, SUCCESS};
use crate::ffi::names;
use crate::ffi::params::{
    describe_int, describe_octets, describe_utf8, ParamList, Params, ParamsMut, END,
};
use crate::ffi::sys::{
    OSSL_CALLBACK, OSSL_DISPATCH, OSSL_KEYMGMT_SELECT_KEYPAIR, OSSL_KEYMGMT_SELECT_PRIVATE_KEY,
    OSSL_KEYMGMT_SELECT_PUBLIC_KEY, OSSL_PARAM,
};
use crate::ffi::upcalls::Instance;
use crate::ffi::{dispatch_table, StaticTable};
use crate::key::{key_ref, KemKey};
use crate::keymgmt::{free, has};
use crate::material::KeyData;

const SELECT_PRIVATE: c_int = OSSL_KEYMGMT_SELECT_PRIVATE_KEY as c_int;
const SELECT_PUBLIC: c_int = OSSL_KEYMGMT_SELECT_PUBLIC_KEY as c_int;
const SELECT_KEYPAIR: c_int = OSSL_KEYMGMT_SELECT_KEYPAIR as c_int;

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
    /// The TLS 1.3 group.
    pub(crate) tls_group: TlsGroup,
}

impl Hybrid {
    fn ml_kem(&self) -> &'static Algorithm {
        &ML_KEM[self.ml_kem]
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

    fn ciphertext_len(&self) -> usize {
        self.ml_kem().ct_len + self.curve.public_len
    }
}

/// The three hybrid groups, in OpenSSL 3.5's terms (a `const` for the
/// compile-time algorithm tables; [`HYBRIDS`] is the same as a `static`).
pub(crate) const HYBRID_TABLE: [Hybrid; 3] = [
    Hybrid {
        name: c"X25519MLKEM768",
        ml_kem: 1,
        curve: &X25519,
        ml_kem_first: true,
        tls_group: TlsGroup {
            name: c"X25519MLKEM768",
            id: 0x11EC,
        },
    },
    Hybrid {
        name: c"SecP256r1MLKEM768",
        ml_kem: 1,
        curve: &P256,
        ml_kem_first: false,
        tls_group: TlsGroup {
            name: c"SecP256r1MLKEM768",
            id: 0x11EB,
        },
    },
    Hybrid {
        name: c"SecP384r1MLKEM1024",
        ml_kem: 2,
        curve: &P384,
        ml_kem_first: false,
        tls_group: TlsGroup {
            name: c"SecP384r1MLKEM1024",
            id: 0x11ED,
        },
    },
];

/// The hybrid groups, for keys to hold `&'static Hybrid`.
pub(crate) static HYBRIDS: [Hybrid; 3] = HYBRID_TABLE;

/// A hybrid key: empty (from `new` or paramgen), public, or a key pair.
pub(crate) struct HybridKey {
    hybrid: &'static Hybrid,
    /// The instance that made the key: its child library context serves
    /// the classical half.
    prov: &'static ProvCtx,
    parts: Option<(Box<dyn KeyData>, ClassicalKey)>,
}

impl HybridKey {
    fn empty(hybrid: &'static Hybrid, prov: &'static ProvCtx) -> Self {
        Self {
            hybrid,
            prov,
            parts: None,
        }
    }

    fn parts(&self) -> Result<&(Box<dyn KeyData>, ClassicalKey)> {
        self.parts.as_ref().ok_or_else(|| {
            ProviderError::new(Reason::MissingPublicKey)
                .with_detail(format!("empty {} key", self.hybrid.name.to_string_lossy()))
        })
    }

    fn has_public(&self) -> bool {
        self.parts.is_some()
    }

    fn has_private(&self) -> bool {
        self.parts
            .as_ref()
            .is_some_and(|(m, x)| m.has_private() && x.has_private())
    }

    fn public_key(&self) -> Result<Zeroizing<Vec<u8>>> {
        let (m, x) = self.parts()?;
        Ok(self.hybrid.join(m.public_key(), x.public_key()))
    }

    fn private_key(&self) -> Result<Zeroizing<Vec<u8>>> {
        self.require_private()?;
        let (m, x) = self.parts()?;
        let dk = m.private_key().unwrap_or_default();
        Ok(self.hybrid.join(&dk, &x.private_key()?))
    }

    /// Parses the concatenated public key.
    fn from_public(prov: &'static ProvCtx, hybrid: &'static Hybrid, public: &[u8]) -> Result<Self> {
        check_length(
            &hybrid.name.to_string_lossy(),
            "public key",
            public.len(),
            hybrid.public_len(),
        )?;
        let (ek, x) = hybrid.split(public, hybrid.ml_kem().layout.ek_len);
        let ml_kem = (hybrid.ml_kem().from_public)(ek)?;
        let classical = ClassicalKey::from_public(prov, hybrid.curve, x)?;
        Ok(Self {
            hybrid,
            prov,
            parts: Some((ml_kem, classical)),
        })
    }

    /// Parses the concatenated private key (the public key is needed for
    /// the EC groups, whose import OpenSSL does not derive it in).
    fn from_private(
        prov: &'static ProvCtx,
        hybrid: &'static Hybrid,
        private: &[u8],
        public: Option<&[u8]>,
    ) -> Result<Self> {
        check_length(
            &hybrid.name.to_string_lossy(),
            "private key",
            private.len(),
            hybrid.private_len(),
        )?;
        let (dk, x_private) = hybrid.split(private, hybrid.ml_kem().layout.dk_len);
        let ml_kem = (hybrid.ml_kem().from_private)(dk)?;
        let x_public = match public {
            Some(public) if public.len() == hybrid.public_len() => {
                Some(hybrid.split(public, hybrid.ml_kem().layout.ek_len).1)
            }
            _ => None,
        };
        let classical = ClassicalKey::from_private(prov, hybrid.curve, x_private, x_public)?;
        let key = Self {
            hybrid,
            prov,
            parts: Some((ml_kem, classical)),
        };
        key.check_consistency(public)?;
        Ok(key)
    }

    /// Checks an imported key pair: a given public key must be this key's
    /// (ML-KEM's ek is embedded in dk; an EC import takes the point as
    /// given), and the classical pair must agree, tested by key agreement
    /// with a fresh ephemeral key from both sides.
    fn check_consistency(&self, public: Option<&[u8]>) -> Result<()> {
        let (_, own) = self.parts()?;
        let mismatch = || {
            ProviderError::new(Reason::InvalidKey).with_detail(format!(
                "explicit {} public key does not match private",
                self.name()
            ))
        };
        if let Some(public) = public.filter(|p| !p.is_empty()) {
            if *self.public_key()? != *public {
                return Err(mismatch());
            }
        }
        let ephemeral = ClassicalKey::generate(self.prov, self.hybrid.curve)?;
        let peer = ClassicalKey::from_public(self.prov, self.hybrid.curve, own.public_key())?;
        if *ephemeral.derive(self.prov, &peer)? != *own.derive(self.prov, &ephemeral)? {
            return Err(mismatch());
        }
        Ok(())
    }
}

impl KemKey for HybridKey {
    fn instance(&self) -> Instance {
        self.prov.instance()
    }

    fn has_public(&self) -> bool {
        HybridKey::has_public(self)
    }

    fn has_private(&self) -> bool {
        HybridKey::has_private(self)
    }

    fn require_public(&self) -> Result<()> {
        self.parts().map(drop)
    }

    fn require_private(&self) -> Result<()> {
        if self.has_private() {
            Ok(())
        } else {
            Err(ProviderError::new(Reason::MissingPrivateKey)
                .with_detail(format!("{} key has no private part", self.name())))
        }
    }

    fn name(&self) -> &'static str {
        match self.hybrid.name.to_str() {
            Ok(name) => name,
            Err(_) => "hybrid",
        }
    }

    fn ciphertext_len(&self) -> usize {
        self.hybrid.ciphertext_len()
    }

    fn secret_len(&self) -> usize {
        SHARED_SECRET_LEN + self.hybrid.curve.secret_len
    }

    fn security_bits(&self) -> u32 {
        self.hybrid.ml_kem().security_bits
    }

    fn encapsulate(
        &self,
        prov: &ProvCtx,
        m: &[u8; MESSAGE_LEN],
        ct: &mut [u8],
        secret: &mut [u8],
    ) -> Result<()> {
        let result = self.encapsulate_parts(prov, m, ct, secret);
        if result.is_err() {
            // Leave no half-made secret behind.
            secret.zeroize();
        }
        result
    }

    fn decapsulate(&self, prov: &ProvCtx, ct: &[u8], secret: &mut [u8]) -> Result<()> {
        let result = self.decapsulate_parts(prov, ct, secret);
        if result.is_err() {
            secret.zeroize();
        }
        result
    }
}

impl HybridKey {
    fn encapsulate_parts(
        &self,
        prov: &ProvCtx,
        m: &[u8; MESSAGE_LEN],
        ct: &mut [u8],
        secret: &mut [u8],
    ) -> Result<()> {
        let hybrid = self.hybrid;
        let (ml_kem, peer) = self.parts()?;
        let (ct_m, ct_x) = hybrid.split_mut(ct, hybrid.ml_kem().ct_len);
        let (ss_m, ss_x) = hybrid.split_mut(secret, SHARED_SECRET_LEN);
        let ss_m: &mut [u8; SHARED_SECRET_LEN] = ss_m
            .try_into()
            .map_err(|_| ProviderError::new(Reason::InternalError).with_detail("secret split"))?;
        ml_kem.encapsulate(m, ct_m, ss_m);
        // The classical "ciphertext" is an ephemeral public key; the secret
        // is the key agreement with the peer's public key.
        let ephemeral = ClassicalKey::generate(prov, hybrid.curve)?;
        ct_x.copy_from_slice(ephemeral.public_key());
        ss_x.copy_from_slice(&ephemeral.derive(prov, peer)?);
        Ok(())
    }

    fn decapsulate_parts(&self, prov: &ProvCtx, ct: &[u8], secret: &mut [u8]) -> Result<()> {
        let hybrid = self.hybrid;
        let (ml_kem, own) = self.parts()?;
        let (ct_m, ct_x) = hybrid.split(ct, hybrid.ml_kem().ct_len);
        let (ss_m, ss_x) = hybrid.split_mut(secret, SHARED_SECRET_LEN);
        let ss_m: &mut [u8; SHARED_SECRET_LEN] = ss_m
            .try_into()
            .map_err(|_| ProviderError::new(Reason::InternalError).with_detail("secret split"))?;
        ml_kem.decapsulate(ct_m, ss_m)?;
        let ephemeral = ClassicalKey::from_public(prov, hybrid.curve, ct_x)?;
        ss_x.copy_from_slice(&own.derive(prov, &ephemeral)?);
        Ok(())
    }
}

// ---------------------------------------------------------------- keymgmt

fn into_raw(key: HybridKey) -> *mut c_void {
    Box::into_raw(Box::new(key)).cast()
}

/// Mutably borrows a hybrid key.
///
/// # Safety
/// `ptr` is NULL or a live key from [`into_raw`], not otherwise in use.
unsafe fn key_mut<'a>(ptr: *mut c_void) -> Result<&'a mut HybridKey> {
    non_null(ptr, "key")?;
    // SAFETY: the caller's contract.
    let key = unsafe { &mut *ptr.cast::<HybridKey>() };
    key.prov.instance().enter();
    Ok(key)
}

unsafe extern "C" fn new<const H: usize>(provctx: *mut c_void) -> *mut c_void {
    guard(c"hybrid_new", || {
        // SAFETY: the core passes our provctx.
        let prov: &'static ProvCtx = unsafe { ProvCtx::from_ptr(provctx)? };
        Ok(into_raw(HybridKey::empty(&HYBRIDS[H], prov)))
    })
}

unsafe extern "C" fn match_keys(a: *const c_void, b: *const c_void, selection: c_int) -> c_int {
    guard(c"hybrid_match", || {
        // SAFETY: the core passes two of our keys.
        let (a, b) = unsafe { (key_ref::<HybridKey>(a)?, key_ref::<HybridKey>(b)?) };
        if !core::ptr::eq(a.hybrid, b.hybrid) {
            return Ok(0);
        }
        if selection & SELECT_KEYPAIR == 0 {
            return SUCCESS;
        }
        Ok(match (&a.parts, &b.parts) {
            (None, None) => 1,
            (Some((am, ax)), Some((bm, bx))) => {
                c_bool(am.public_key() == bm.public_key() && ax == bx)
            }
            _ => 0,
        })
    })
}

static GETTABLE: StaticTable<[OSSL_PARAM; 7]> = StaticTable([
    describe_int(names::PKEY_BITS),
    describe_int(names::PKEY_SECURITY_BITS),
    describe_int(names::PKEY_MAX_SIZE),
    describe_octets(names::PKEY_ENCODED_PUBLIC_KEY),
    describe_octets(names::PKEY_PUB_KEY),
    describe_octets(names::PKEY_PRIV_KEY),
    END,
]);

unsafe extern "C" fn gettable_params(_provctx: *mut c_void) -> *const OSSL_PARAM {
    GETTABLE.0.as_ptr()
}

unsafe extern "C" fn get_params(key: *mut c_void, params: *mut OSSL_PARAM) -> c_int {
    guard(c"hybrid_get_params", || {
        // SAFETY: the core passes one of our keys and a valid array.
        let (key, mut params) =
            unsafe { (key_ref::<HybridKey>(key)?, ParamsMut::from_ptr(params)) };
        let hybrid = key.hybrid;
        // Bits and security bits are the ML-KEM part's, as in OpenSSL.
        for (name, value) in [
            (names::PKEY_BITS, hybrid.ml_kem().bits as usize),
            (
                names::PKEY_SECURITY_BITS,
                hybrid.ml_kem().security_bits as usize,
            ),
            (names::PKEY_MAX_SIZE, hybrid.ciphertext_len()),
        ] {
            if let Some(mut p) = params.find(name) {
                p.set_int(value as i64)?;
            }
        }
        if key.has_public() {
            let public = key.public_key()?;
            for name in [names::PKEY_ENCODED_PUBLIC_KEY, names::PKEY_PUB_KEY] {
                if let Some(mut p) = params.find(name) {
                    p.set_octets(&public)?;
                }
            }
        }
        if key.has_private() {
            if let Some(mut p) = params.find(names::PKEY_PRIV_KEY) {
                p.set_octets(&key.private_key()?)?;
            }
        }
        SUCCESS
    })
}

static SETTABLE: StaticTable<[OSSL_PARAM; 2]> =
    StaticTable([describe_octets(names::PKEY_ENCODED_PUBLIC_KEY), END]);

unsafe extern "C" fn settable_params(_provctx: *mut c_void) -> *const OSSL_PARAM {
    SETTABLE.0.as_ptr()
}

unsafe extern "C" fn set_params(key: *mut c_void, params: *const OSSL_PARAM) -> c_int {
    guard(c"hybrid_set_params", || {
        // SAFETY: the core passes one of our keys and a valid array.
        let (key, params) = unsafe { (key_mut(key)?, Params::from_ptr(params)) };
        let Some(p) = params.find(names::PKEY_ENCODED_PUBLIC_KEY) else {
            return SUCCESS;
        };
        if key.has_public() {
            return Err(ProviderError::new(Reason::KeyImmutable)
                .with_detail("hybrid keys cannot be mutated"));
        }
        *key = HybridKey::from_public(key.prov, key.hybrid, p.octets()?)?;
        SUCCESS
    })
}

unsafe extern "C" fn import(
    key: *mut c_void,
    selection: c_int,
    params: *const OSSL_PARAM,
) -> c_int {
    guard(c"hybrid_import", || {
        // SAFETY: the core passes one of our (empty) keys and a valid array.
        let (key, params) = unsafe { (key_mut(key)?, Params::from_ptr(params)) };
        if selection & SELECT_KEYPAIR == 0 {
            return Ok(0);
        }
        if key.has_public() {
            return Err(ProviderError::new(Reason::KeyImmutable)
                .with_detail("import into a key that already holds key material"));
        }
        let prov = key.prov;
        let public = params
            .find(names::PKEY_PUB_KEY)
            .map(|p| p.octets())
            .transpose()?;
        let private = if selection & SELECT_PRIVATE != 0 {
            params
                .find(names::PKEY_PRIV_KEY)
                .map(|p| p.octets())
                .transpose()?
        } else {
            None
        };
        *key = match (private, public) {
            (Some(private), public) if !private.is_empty() => {
                HybridKey::from_private(prov, key.hybrid, private, public)?
            }
            (_, Some(public)) if !public.is_empty() => {
                HybridKey::from_public(prov, key.hybrid, public)?
            }
            _ => {
                return Err(ProviderError::new(Reason::MissingPublicKey)
                    .with_detail("no public or private key given"))
            }
        };
        SUCCESS
    })
}

unsafe extern "C" fn export(
    key: *mut c_void,
    selection: c_int,
    callback: OSSL_CALLBACK,
    arg: *mut c_void,
) -> c_int {
    guard(c"hybrid_export", || {
        // SAFETY: the core passes one of our keys.
        let key = unsafe { key_ref::<HybridKey>(key)? };
        let callback = callback.ok_or_else(|| ProviderError::new(Reason::NullArgument))?;
        if selection & SELECT_KEYPAIR == 0 {
            return Ok(0);
        }
        let public = key.public_key()?;
        let private = if selection & SELECT_PRIVATE != 0 && key.has_private() {
            Some(key.private_key()?)
        } else {
            None
        };
        let mut list = ParamList::new();
        if selection & SELECT_PUBLIC != 0 {
            list = list.octets(names::PKEY_PUB_KEY, &public);
        }
        if let Some(private) = &private {
            list = list.octets(names::PKEY_PRIV_KEY, private);
        }
        // SAFETY: the list and its buffers outlive the call.
        Ok(unsafe { callback(list.as_ptr(), arg) })
    })
}

static KEY_TYPES: StaticTable<[OSSL_PARAM; 3]> = StaticTable([
    describe_octets(names::PKEY_PUB_KEY),
    describe_octets(names::PKEY_PRIV_KEY),
    END,
]);

unsafe extern "C" fn import_export_types(selection: c_int) -> *const OSSL_PARAM {
    if selection & SELECT_KEYPAIR != 0 {
        KEY_TYPES.0.as_ptr()
    } else {
        core::ptr::null()
    }
}

unsafe extern "C" fn dup(key: *const c_void, selection: c_int) -> *mut c_void {
    guard(c"hybrid_dup", || {
        // SAFETY: the core passes one of our keys.
        let key = unsafe { key_ref::<HybridKey>(key)? };
        let parts = match &key.parts {
            Some((m, x)) if selection & SELECT_KEYPAIR != 0 => {
                Some((m.duplicate(selection & SELECT_PRIVATE != 0), x.clone()))
            }
            _ => None,
        };
        Ok(into_raw(HybridKey {
            hybrid: key.hybrid,
            prov: key.prov,
            parts,
        }))
    })
}

/// A generation context.
struct GenCtx {
    prov: &'static ProvCtx,
    hybrid: &'static Hybrid,
    selection: c_int,
}

unsafe extern "C" fn gen_init<const H: usize>(
    provctx: *mut c_void,
    selection: c_int,
    _params: *const OSSL_PARAM,
) -> *mut c_void {
    guard(c"hybrid_gen_init", || {
        // SAFETY: the core passes our provctx, alive while the context is.
        let prov: &'static ProvCtx = unsafe { ProvCtx::from_ptr(provctx)? };
        let ctx = GenCtx {
            prov,
            hybrid: &HYBRIDS[H],
            selection,
        };
        Ok(Box::into_raw(Box::new(ctx)).cast::<c_void>())
    })
}

/// Borrows a generation context.
///
/// # Safety
/// `ptr` is NULL or a live context from `gen_init`.
unsafe fn gen_ctx<'a>(ptr: *mut c_void) -> Result<&'a mut GenCtx> {
    non_null(ptr, "generation context")?;
    // SAFETY: the caller's contract.
    let ctx = unsafe { &mut *ptr.cast::<GenCtx>() };
    ctx.prov.instance().enter();
    Ok(ctx)
}

unsafe extern "C" fn gen_set_params(ctx: *mut c_void, _params: *const OSSL_PARAM) -> c_int {
    guard(c"hybrid_gen_set_params", || {
        // SAFETY: the core passes our context. The only parameter,
        // `properties`, does not apply: both halves use the provider's.
        unsafe { gen_ctx(ctx)? };
        SUCCESS
    })
}

static GEN_SETTABLE: StaticTable<[OSSL_PARAM; 2]> =
    StaticTable([describe_utf8(names::PKEY_PROPERTIES), END]);

unsafe extern "C" fn gen_settable_params(
    _ctx: *mut c_void,
    _provctx: *mut c_void,
) -> *const OSSL_PARAM {
    GEN_SETTABLE.0.as_ptr()
}

unsafe extern "C" fn generate(
    ctx: *mut c_void,
    _callback: OSSL_CALLBACK,
    _arg: *mut c_void,
) -> *mut c_void {
    guard(c"hybrid_gen", || {
        // SAFETY: the core passes our context.
        let ctx = unsafe { gen_ctx(ctx)? };
        let hybrid = ctx.hybrid;
        if ctx.selection & SELECT_KEYPAIR == 0 {
            // Parameter generation: an empty key (the TLS server's).
            return Ok(into_raw(HybridKey::empty(hybrid, ctx.prov)));
        }
        let mut seed = Zeroizing::new([0u8; kem_core::SEED_LEN]);
        ctx.prov
            .random(seed.as_mut_slice(), hybrid.ml_kem().security_bits)?;
        let ml_kem = (hybrid.ml_kem().from_seed)(seed.as_slice())?;
        let classical = ClassicalKey::generate(ctx.prov, hybrid.curve)?;
        Ok(into_raw(HybridKey {
            hybrid,
            prov: ctx.prov,
            parts: Some((ml_kem, classical)),
        }))
    })
}

unsafe extern "C" fn gen_cleanup(ctx: *mut c_void) {
    guard(c"hybrid_gen_cleanup", || {
        // SAFETY: from `gen_init`; the core frees it once.
        unsafe { drop_boxed::<GenCtx>(ctx) };
        Ok(())
    })
}

macro_rules! hybrid_keymgmt {
    ($h:literal) => {
        dispatch_table![
            OSSL_FUNC_KEYMGMT_NEW => OSSL_FUNC_keymgmt_new_fn = new::<$h>,
            OSSL_FUNC_KEYMGMT_FREE => OSSL_FUNC_keymgmt_free_fn = free::<HybridKey>,
            OSSL_FUNC_KEYMGMT_GET_PARAMS => OSSL_FUNC_keymgmt_get_params_fn = get_params,
            OSSL_FUNC_KEYMGMT_GETTABLE_PARAMS => OSSL_FUNC_keymgmt_gettable_params_fn = gettable_params,
            OSSL_FUNC_KEYMGMT_SET_PARAMS => OSSL_FUNC_keymgmt_set_params_fn = set_params,
            OSSL_FUNC_KEYMGMT_SETTABLE_PARAMS => OSSL_FUNC_keymgmt_settable_params_fn = settable_params,
            OSSL_FUNC_KEYMGMT_HAS => OSSL_FUNC_keymgmt_has_fn = has::<HybridKey>,
            OSSL_FUNC_KEYMGMT_MATCH => OSSL_FUNC_keymgmt_match_fn = match_keys,
            OSSL_FUNC_KEYMGMT_GEN_INIT => OSSL_FUNC_keymgmt_gen_init_fn = gen_init::<$h>,
            OSSL_FUNC_KEYMGMT_GEN_SET_PARAMS => OSSL_FUNC_keymgmt_gen_set_params_fn = gen_set_params,
            OSSL_FUNC_KEYMGMT_GEN_SETTABLE_PARAMS => OSSL_FUNC_keymgmt_gen_settable_params_fn = gen_settable_params,
            OSSL_FUNC_KEYMGMT_GEN => OSSL_FUNC_keymgmt_gen_fn = generate,
            OSSL_FUNC_KEYMGMT_GEN_CLEANUP => OSSL_FUNC_keymgmt_gen_cleanup_fn = gen_cleanup,
            OSSL_FUNC_KEYMGMT_DUP => OSSL_FUNC_keymgmt_dup_fn = dup,
            OSSL_FUNC_KEYMGMT_IMPORT => OSSL_FUNC_keymgmt_import_fn = import,
            OSSL_FUNC_KEYMGMT_IMPORT_TYPES => OSSL_FUNC_keymgmt_import_types_fn = import_export_types,
            OSSL_FUNC_KEYMGMT_EXPORT => OSSL_FUNC_keymgmt_export_fn = export,
            OSSL_FUNC_KEYMGMT_EXPORT_TYPES => OSSL_FUNC_keymgmt_export_types_fn = import_export_types,
        ]
    };
}

/// The keymgmt dispatch table of each entry of `HYBRIDS`.
pub(crate) const KEYMGMT_FUNCTIONS: [&[OSSL_DISPATCH]; 3] =
    [hybrid_keymgmt!(0), hybrid_keymgmt!(1), hybrid_keymgmt!(2)];
