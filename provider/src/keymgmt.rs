//! Key management (`OSSL_OP_KEYMGMT`): key objects, generation, import and
//! export, parameters — with OpenSSL 3.5's `ml_kem_kmgmt.c` behaviour.

use core::ffi::{c_int, c_void, CStr};
use std::ffi::CString;

use kem_core::SEED_LEN;
use zeroize::Zeroizing;

use crate::algorithms::{Algorithm, ML_KEM};
use crate::context::ProvCtx;
use crate::error::{check_length, ProviderError, Reason, Result};
use crate::ffi::guard::{c_bool, guard, non_null, SUCCESS};
use crate::ffi::names;
use crate::ffi::params::{
    describe_int, describe_octets, describe_utf8, ParamList, Params, ParamsMut, END,
};
use crate::ffi::sys::{
    OSSL_CALLBACK, OSSL_DISPATCH, OSSL_KEYMGMT_SELECT_KEYPAIR, OSSL_KEYMGMT_SELECT_PRIVATE_KEY,
    OSSL_KEYMGMT_SELECT_PUBLIC_KEY, OSSL_PARAM,
};
use crate::ffi::{dispatch_table, StaticTable};
use crate::key::{KemKey, MlKemKey};

const SELECT_PRIVATE: c_int = OSSL_KEYMGMT_SELECT_PRIVATE_KEY as c_int;
const SELECT_PUBLIC: c_int = OSSL_KEYMGMT_SELECT_PUBLIC_KEY as c_int;
const SELECT_KEYPAIR: c_int = OSSL_KEYMGMT_SELECT_KEYPAIR as c_int;

/// Moves a key to the heap for OpenSSL.
pub(crate) fn into_raw(key: MlKemKey) -> *mut c_void {
    Box::into_raw(Box::new(key)).cast()
}

/// Borrows a key OpenSSL hands back.
///
/// # Safety
/// `ptr` is NULL or a live key from [`into_raw`].
pub(crate) unsafe fn key_ref<'a>(ptr: *const c_void) -> Result<&'a MlKemKey> {
    non_null(ptr, "key")?;
    // SAFETY: the caller's contract.
    let key = unsafe { &*ptr.cast::<MlKemKey>() };
    key.instance.enter();
    Ok(key)
}

/// Mutably borrows a key OpenSSL hands back.
///
/// # Safety
/// As [`key_ref`], and no other reference to the key is in use.
unsafe fn key_mut<'a>(ptr: *mut c_void) -> Result<&'a mut MlKemKey> {
    non_null(ptr, "key")?;
    // SAFETY: the caller's contract.
    let key = unsafe { &mut *ptr.cast::<MlKemKey>() };
    key.instance.enter();
    Ok(key)
}

unsafe extern "C" fn new<const ALG: usize>(provctx: *mut c_void) -> *mut c_void {
    guard(c"keymgmt_new", || {
        // SAFETY: the core passes our provctx.
        let prov = unsafe { ProvCtx::from_ptr(provctx)? };
        Ok(into_raw(MlKemKey::empty(&ML_KEM[ALG], prov.instance())))
    })
}

/// `free` for any key type.
pub(crate) unsafe extern "C" fn free<K: KemKey>(key: *mut c_void) {
    guard(c"keymgmt_free", || {
        // SAFETY: the core frees each of our keys once.
        unsafe { crate::ffi::drop_boxed::<K>(key) };
        Ok(())
    })
}

/// `has`: whether the key holds what `selection` names.
fn has_selection(key: &impl KemKey, selection: c_int) -> bool {
    match selection & SELECT_KEYPAIR {
        0 => true,
        SELECT_PUBLIC => key.has_public(),
        _ => key.has_private(),
    }
}

/// `has` for any key type.
pub(crate) unsafe extern "C" fn has<K: KemKey>(key: *const c_void, selection: c_int) -> c_int {
    guard(c"keymgmt_has", || {
        // SAFETY: the core passes one of our keys (or NULL).
        let key = unsafe { crate::key::key_ref::<K>(key)? };
        Ok(c_bool(has_selection(key, selection)))
    })
}

unsafe extern "C" fn match_keys(a: *const c_void, b: *const c_void, selection: c_int) -> c_int {
    guard(c"keymgmt_match", || {
        // SAFETY: the core passes two of our keys.
        let (a, b) = unsafe { (key_ref(a)?, key_ref(b)?) };
        if !core::ptr::eq(a.alg, b.alg) {
            return Ok(0);
        }
        if selection & SELECT_KEYPAIR == 0 {
            return SUCCESS;
        }
        Ok(match (&a.data, &b.data) {
            (Some(x), Some(y)) => c_bool(x.public_key() == y.public_key()),
            _ => 0,
        })
    })
}

unsafe extern "C" fn validate(key: *const c_void, selection: c_int, _check_type: c_int) -> c_int {
    guard(c"keymgmt_validate", || {
        // SAFETY: the core passes one of our keys.
        let key = unsafe { key_ref(key)? };
        if !has_selection(key, selection) {
            return Ok(0);
        }
        // The FIPS 203 section 7.2/7.3 checks ran when the key was parsed;
        // a key pair also gets the pairwise test, as OpenSSL does.
        if selection & SELECT_KEYPAIR == SELECT_KEYPAIR {
            key.pairwise_check()?;
        }
        SUCCESS
    })
}

// ---------------------------------------------------------------- params

static GETTABLE: StaticTable<[OSSL_PARAM; 9]> = StaticTable([
    describe_int(names::PKEY_BITS),
    describe_int(names::PKEY_SECURITY_BITS),
    describe_int(names::PKEY_SECURITY_CATEGORY),
    describe_int(names::PKEY_MAX_SIZE),
    describe_octets(names::PKEY_ML_KEM_SEED),
    describe_octets(names::PKEY_PRIV_KEY),
    describe_octets(names::PKEY_PUB_KEY),
    describe_octets(names::PKEY_ENCODED_PUBLIC_KEY),
    END,
]);

unsafe extern "C" fn gettable_params(_provctx: *mut c_void) -> *const OSSL_PARAM {
    GETTABLE.0.as_ptr()
}

unsafe extern "C" fn get_params(key: *mut c_void, params: *mut OSSL_PARAM) -> c_int {
    guard(c"keymgmt_get_params", || {
        // SAFETY: the core passes one of our keys and a valid array.
        let (key, mut params) = unsafe { (key_ref(key)?, ParamsMut::from_ptr(params)) };
        let alg = key.alg;
        for (name, value) in [
            (names::PKEY_BITS, alg.bits),
            (names::PKEY_SECURITY_BITS, alg.security_bits),
            (names::PKEY_SECURITY_CATEGORY, alg.security_category),
            (names::PKEY_MAX_SIZE, alg.ct_len as u32),
        ] {
            if let Some(mut p) = params.find(name) {
                p.set_int(i64::from(value))?;
            }
        }
        if let Some(data) = key.data.as_deref() {
            for name in [names::PKEY_PUB_KEY, names::PKEY_ENCODED_PUBLIC_KEY] {
                if let Some(mut p) = params.find(name) {
                    p.set_octets(data.public_key())?;
                }
            }
            if let Some(mut p) = params.find(names::PKEY_PRIV_KEY) {
                if let Some(dk) = data.private_key() {
                    p.set_octets(&dk)?;
                }
            }
            if let Some(mut p) = params.find(names::PKEY_ML_KEM_SEED) {
                if let Some(seed) = data.seed() {
                    p.set_octets(seed)?;
                }
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
    guard(c"keymgmt_set_params", || {
        // SAFETY: the core passes one of our keys, not in use elsewhere
        // while it is being set, and a valid array.
        let (key, params) = unsafe { (key_mut(key)?, Params::from_ptr(params)) };
        let Some(p) = params.find(names::PKEY_ENCODED_PUBLIC_KEY) else {
            return SUCCESS;
        };
        let ek = p.octets()?;
        check_length(
            key.alg.layout.name,
            "public key",
            ek.len(),
            key.alg.layout.ek_len,
        )?;
        if key.has_public() {
            return Err(ProviderError::new(Reason::KeyImmutable)
                .with_detail("ML-KEM keys cannot be mutated"));
        }
        key.data = Some((key.alg.from_public)(ek)?);
        SUCCESS
    })
}

// ---------------------------------------------------------------- import / export

unsafe extern "C" fn import(
    key: *mut c_void,
    selection: c_int,
    params: *const OSSL_PARAM,
) -> c_int {
    guard(c"keymgmt_import", || {
        // SAFETY: the core passes one of our (empty) keys and a valid array.
        let (key, params) = unsafe { (key_mut(key)?, Params::from_ptr(params)) };
        if selection & SELECT_KEYPAIR == 0 {
            return Ok(0);
        }
        if key.has_public() {
            return Err(ProviderError::new(Reason::KeyImmutable)
                .with_detail("import into a key that already holds key material"));
        }
        let private = selection & SELECT_PRIVATE != 0;
        let get = |name: &CStr| params.find(name).map(|p| p.octets()).transpose();
        let (seed, dk) = if private {
            (get(names::PKEY_ML_KEM_SEED)?, get(names::PKEY_PRIV_KEY)?)
        } else {
            (None, None)
        };
        let ek = get(names::PKEY_PUB_KEY)?;
        let imported = MlKemKey::from_parts(key.alg, key.instance, seed, dk, ek)?;
        if imported.has_private() {
            imported.pairwise_check()?;
        }
        *key = imported;
        SUCCESS
    })
}

/// Calls `callback` with the key's parts that `selection` asks for.
pub(crate) fn export_key(
    key: &MlKemKey,
    selection: c_int,
    callback: OSSL_CALLBACK,
    arg: *mut c_void,
) -> Result<c_int> {
    let callback = callback.ok_or_else(|| ProviderError::new(Reason::NullArgument))?;
    if selection & SELECT_KEYPAIR == 0 {
        return Ok(0);
    }
    let data = key.public()?;
    let private = selection & SELECT_PRIVATE != 0;
    let dk = if private { data.private_key() } else { None };
    let seed = if private {
        data.seed().map(|s| Zeroizing::new(*s))
    } else {
        None
    };
    let mut list = ParamList::new();
    if let Some(seed) = &seed {
        list = list.octets(names::PKEY_ML_KEM_SEED, seed.as_slice());
    }
    if let Some(dk) = &dk {
        list = list.octets(names::PKEY_PRIV_KEY, dk);
    }
    if selection & SELECT_PUBLIC != 0 {
        list = list.octets(names::PKEY_PUB_KEY, data.public_key());
    }
    // SAFETY: the list and the buffers it points at outlive the call.
    Ok(unsafe { callback(list.as_ptr(), arg) })
}

unsafe extern "C" fn export(
    key: *mut c_void,
    selection: c_int,
    callback: OSSL_CALLBACK,
    arg: *mut c_void,
) -> c_int {
    guard(c"keymgmt_export", || {
        // SAFETY: the core passes one of our keys.
        let key = unsafe { key_ref(key)? };
        export_key(key, selection, callback, arg)
    })
}

static KEY_TYPES: StaticTable<[OSSL_PARAM; 4]> = StaticTable([
    describe_octets(names::PKEY_ML_KEM_SEED),
    describe_octets(names::PKEY_PRIV_KEY),
    describe_octets(names::PKEY_PUB_KEY),
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
    guard(c"keymgmt_dup", || {
        // SAFETY: the core passes one of our keys.
        let key = unsafe { key_ref(key)? };
        let data = match &key.data {
            Some(data) if selection & SELECT_KEYPAIR != 0 => {
                Some(data.duplicate(selection & SELECT_PRIVATE != 0))
            }
            _ => None,
        };
        Ok(into_raw(MlKemKey {
            alg: key.alg,
            instance: key.instance,
            data,
        }))
    })
}

unsafe extern "C" fn load(reference: *const c_void, reference_size: usize) -> *mut c_void {
    guard(c"keymgmt_load", || {
        non_null(reference, "key reference")?;
        if reference_size != size_of::<*mut c_void>() {
            return Err(
                ProviderError::new(Reason::InvalidParameter).with_detail("bad key reference size")
            );
        }
        // The reference holds the address of a key our decoder made; taking
        // it clears the reference so the decoder does not free it.
        let slot = reference.cast::<*mut c_void>().cast_mut();
        // SAFETY: the decoder passed the address of its key pointer, whose
        // size was checked; OpenSSL hands it to us unchanged.
        let key = unsafe { slot.read_unaligned() };
        non_null(key, "referenced key")?;
        // SAFETY: as above; we own the key from here on.
        unsafe { slot.write_unaligned(core::ptr::null_mut()) };
        Ok(key)
    })
}

// ---------------------------------------------------------------- generation

/// A generation context: the parameter set, the selection, and an optional
/// one-shot seed.
struct GenCtx {
    prov: &'static ProvCtx,
    alg: &'static Algorithm,
    selection: c_int,
    seed: Option<Zeroizing<[u8; SEED_LEN]>>,
    _properties: Option<CString>,
}

fn gen_set(ctx: &mut GenCtx, params: Params<'_>) -> Result<()> {
    if let Some(p) = params.find(names::PKEY_PROPERTIES) {
        ctx._properties = p
            .utf8_or_null()?
            .map(|s| CString::new(s).unwrap_or_default());
    }
    if let Some(p) = params.find(names::PKEY_ML_KEM_SEED) {
        let seed = p.octets()?;
        let seed: [u8; SEED_LEN] = seed.try_into().map_err(|_| {
            ProviderError::new(Reason::InvalidLength)
                .with_detail(format!("seed must be {SEED_LEN} bytes, got {}", seed.len()))
        })?;
        ctx.seed = Some(Zeroizing::new(seed));
    }
    Ok(())
}

unsafe extern "C" fn gen_init<const ALG: usize>(
    provctx: *mut c_void,
    selection: c_int,
    params: *const OSSL_PARAM,
) -> *mut c_void {
    guard(c"keymgmt_gen_init", || {
        // SAFETY: the core passes our provctx, alive while this context is.
        let prov: &'static ProvCtx = unsafe { ProvCtx::from_ptr(provctx)? };
        let mut ctx = GenCtx {
            prov,
            alg: &ML_KEM[ALG],
            selection,
            seed: None,
            _properties: None,
        };
        // SAFETY: a valid array from the core.
        gen_set(&mut ctx, unsafe { Params::from_ptr(params) })?;
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

unsafe extern "C" fn gen_set_params(ctx: *mut c_void, params: *const OSSL_PARAM) -> c_int {
    guard(c"keymgmt_gen_set_params", || {
        // SAFETY: the core passes our context and a valid array.
        let (ctx, params) = unsafe { (gen_ctx(ctx)?, Params::from_ptr(params)) };
        gen_set(ctx, params)?;
        SUCCESS
    })
}

static GEN_SETTABLE: StaticTable<[OSSL_PARAM; 3]> = StaticTable([
    describe_octets(names::PKEY_ML_KEM_SEED),
    describe_utf8(names::PKEY_PROPERTIES),
    END,
]);

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
    guard(c"keymgmt_gen", || {
        // SAFETY: the core passes our context.
        let ctx = unsafe { gen_ctx(ctx)? };
        if ctx.selection & SELECT_KEYPAIR == 0 {
            // Parameter generation: an empty key (TLS servers fill it with
            // the peer's public key).
            return Ok(into_raw(MlKemKey::empty(ctx.alg, ctx.prov.instance())));
        }
        // The seed is single use: a re-call on the same context (as
        // `openssl speed` does) makes a fresh random key.
        let seed = match ctx.seed.take() {
            Some(seed) => seed,
            None => {
                let mut seed = Zeroizing::new([0u8; SEED_LEN]);
                ctx.prov
                    .random(seed.as_mut_slice(), ctx.alg.security_bits)?;
                seed
            }
        };
        let data = (ctx.alg.from_seed)(seed.as_slice())?;
        let data = if ctx.prov.retain_seed {
            data
        } else {
            data.without_seed()
        };
        Ok(into_raw(MlKemKey {
            alg: ctx.alg,
            instance: ctx.prov.instance(),
            data: Some(data),
        }))
    })
}

unsafe extern "C" fn gen_cleanup(ctx: *mut c_void) {
    guard(c"keymgmt_gen_cleanup", || {
        // SAFETY: from `gen_init`; the core frees it once.
        unsafe { crate::ffi::drop_boxed::<GenCtx>(ctx) };
        Ok(())
    })
}

macro_rules! keymgmt_functions {
    ($alg:literal) => {
        dispatch_table![
            OSSL_FUNC_KEYMGMT_NEW => OSSL_FUNC_keymgmt_new_fn = new::<$alg>,
            OSSL_FUNC_KEYMGMT_FREE => OSSL_FUNC_keymgmt_free_fn = free::<MlKemKey>,
            OSSL_FUNC_KEYMGMT_GET_PARAMS => OSSL_FUNC_keymgmt_get_params_fn = get_params,
            OSSL_FUNC_KEYMGMT_GETTABLE_PARAMS => OSSL_FUNC_keymgmt_gettable_params_fn = gettable_params,
            OSSL_FUNC_KEYMGMT_SET_PARAMS => OSSL_FUNC_keymgmt_set_params_fn = set_params,
            OSSL_FUNC_KEYMGMT_SETTABLE_PARAMS => OSSL_FUNC_keymgmt_settable_params_fn = settable_params,
            OSSL_FUNC_KEYMGMT_HAS => OSSL_FUNC_keymgmt_has_fn = has::<MlKemKey>,
            OSSL_FUNC_KEYMGMT_MATCH => OSSL_FUNC_keymgmt_match_fn = match_keys,
            OSSL_FUNC_KEYMGMT_VALIDATE => OSSL_FUNC_keymgmt_validate_fn = validate,
            OSSL_FUNC_KEYMGMT_GEN_INIT => OSSL_FUNC_keymgmt_gen_init_fn = gen_init::<$alg>,
            OSSL_FUNC_KEYMGMT_GEN_SET_PARAMS => OSSL_FUNC_keymgmt_gen_set_params_fn = gen_set_params,
            OSSL_FUNC_KEYMGMT_GEN_SETTABLE_PARAMS => OSSL_FUNC_keymgmt_gen_settable_params_fn = gen_settable_params,
            OSSL_FUNC_KEYMGMT_GEN => OSSL_FUNC_keymgmt_gen_fn = generate,
            OSSL_FUNC_KEYMGMT_GEN_CLEANUP => OSSL_FUNC_keymgmt_gen_cleanup_fn = gen_cleanup,
            OSSL_FUNC_KEYMGMT_LOAD => OSSL_FUNC_keymgmt_load_fn = load,
            OSSL_FUNC_KEYMGMT_DUP => OSSL_FUNC_keymgmt_dup_fn = dup,
            OSSL_FUNC_KEYMGMT_IMPORT => OSSL_FUNC_keymgmt_import_fn = import,
            OSSL_FUNC_KEYMGMT_IMPORT_TYPES => OSSL_FUNC_keymgmt_import_types_fn = import_export_types,
            OSSL_FUNC_KEYMGMT_EXPORT => OSSL_FUNC_keymgmt_export_fn = export,
            OSSL_FUNC_KEYMGMT_EXPORT_TYPES => OSSL_FUNC_keymgmt_export_types_fn = import_export_types,
        ]
    };
}

/// The keymgmt dispatch table of each entry of `ML_KEM`.
pub(crate) const FUNCTIONS: [&[OSSL_DISPATCH]; 3] = [
    keymgmt_functions!(0),
    keymgmt_functions!(1),
    keymgmt_functions!(2),
];

#[cfg(test)]
mod zeroize_tests;
