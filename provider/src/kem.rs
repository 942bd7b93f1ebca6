//! The KEM operation (`OSSL_OP_KEM`): encapsulate and decapsulate, with
//! OpenSSL 3.5's size-query semantics and its one-shot `ikme` parameter.

use core::ffi::{c_int, c_void};

use kem_core::MESSAGE_LEN;
use zeroize::Zeroizing;

use crate::context::ProvCtx;
use crate::error::{check_length, ProviderError, Reason, Result};
use crate::ffi::guard::{guard, non_null, SUCCESS};
use crate::ffi::names;
use crate::ffi::params::{describe_octets, Params, END};
use crate::ffi::sys::{OSSL_DISPATCH, OSSL_PARAM};
use crate::ffi::{dispatch_table, StaticTable};
use crate::key::{key_ref, KemKey};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Operation {
    None,
    Encapsulate,
    Decapsulate,
}

/// A KEM context: the key (owned by OpenSSL, alive while the context uses
/// it), the operation, and a one-shot m from `ikme` (for a hybrid, the
/// ML-KEM half's m; the classical half stays random).
struct KemCtx<K> {
    prov: &'static ProvCtx,
    key: *const K,
    operation: Operation,
    ikme: Option<Zeroizing<[u8; MESSAGE_LEN]>>,
}

impl<K> Clone for KemCtx<K> {
    fn clone(&self) -> Self {
        Self {
            prov: self.prov,
            key: self.key,
            operation: self.operation,
            ikme: self.ikme.clone(),
        }
    }
}

/// Borrows a KEM context.
///
/// # Safety
/// `ptr` is NULL or a live context from `newctx`/`dupctx`.
unsafe fn kem_ctx<'a, K>(ptr: *mut c_void) -> Result<&'a mut KemCtx<K>> {
    non_null(ptr, "KEM context")?;
    // SAFETY: the caller's contract.
    let ctx = unsafe { &mut *ptr.cast::<KemCtx<K>>() };
    ctx.prov.instance().enter();
    Ok(ctx)
}

impl<K: KemKey> KemCtx<K> {
    /// The key set by `*_init` (borrowed from OpenSSL, not from `self`).
    fn key<'k>(&self) -> Result<&'k K> {
        if self.key.is_null() {
            return Err(
                ProviderError::new(Reason::CallOutOfOrder).with_detail("no key: call *_init first")
            );
        }
        // SAFETY: set by *_init from the core's key, which the EVP_PKEY_CTX
        // keeps alive while this context exists.
        Ok(unsafe { &*self.key })
    }

    fn set_params(&mut self, params: Params<'_>) -> Result<()> {
        if self.operation == Operation::Decapsulate {
            // Decapsulation is deterministic.
            self.ikme = None;
        }
        if self.operation != Operation::Encapsulate {
            return Ok(());
        }
        if let Some(p) = params.find(names::KEM_IKME) {
            let m = p.octets()?;
            let m: [u8; MESSAGE_LEN] = m.try_into().map_err(|_| {
                ProviderError::new(Reason::InvalidLength)
                    .with_detail(format!("ikme must be {MESSAGE_LEN} bytes, got {}", m.len()))
            })?;
            self.ikme = Some(Zeroizing::new(m));
        }
        Ok(())
    }
}

unsafe extern "C" fn newctx<K: KemKey>(provctx: *mut c_void) -> *mut c_void {
    guard(c"kem_newctx", || {
        // SAFETY: the core passes our provctx, alive while the context is.
        let prov: &'static ProvCtx = unsafe { ProvCtx::from_ptr(provctx)? };
        let ctx = KemCtx::<K> {
            prov,
            key: core::ptr::null(),
            operation: Operation::None,
            ikme: None,
        };
        Ok(Box::into_raw(Box::new(ctx)).cast::<c_void>())
    })
}

unsafe extern "C" fn freectx<K: KemKey>(ctx: *mut c_void) {
    guard(c"kem_freectx", || {
        // SAFETY: from `newctx`/`dupctx`; the core frees it once.
        unsafe { crate::ffi::drop_boxed::<KemCtx<K>>(ctx) };
        Ok(())
    })
}

unsafe extern "C" fn dupctx<K: KemKey>(ctx: *mut c_void) -> *mut c_void {
    guard(c"kem_dupctx", || {
        // SAFETY: the core passes our context.
        let ctx = unsafe { kem_ctx::<K>(ctx)? };
        Ok(Box::into_raw(Box::new(ctx.clone())).cast::<c_void>())
    })
}

fn init<K: KemKey>(
    ctx: *mut c_void,
    key: *mut c_void,
    params: *const OSSL_PARAM,
    operation: Operation,
) -> Result<c_int> {
    // SAFETY: the core passes our context, one of our keys, a valid array.
    let (ctx, key_obj, params) = unsafe {
        (
            kem_ctx::<K>(ctx)?,
            key_ref::<K>(key)?,
            Params::from_ptr(params),
        )
    };
    match operation {
        Operation::Decapsulate => key_obj.require_private()?,
        _ => key_obj.require_public()?,
    }
    ctx.key = key.cast_const().cast();
    ctx.operation = operation;
    ctx.ikme = None;
    ctx.set_params(params)?;
    SUCCESS
}

unsafe extern "C" fn encapsulate_init<K: KemKey>(
    ctx: *mut c_void,
    key: *mut c_void,
    params: *const OSSL_PARAM,
) -> c_int {
    guard(c"kem_encapsulate_init", || {
        init::<K>(ctx, key, params, Operation::Encapsulate)
    })
}

unsafe extern "C" fn decapsulate_init<K: KemKey>(
    ctx: *mut c_void,
    key: *mut c_void,
    params: *const OSSL_PARAM,
) -> c_int {
    guard(c"kem_decapsulate_init", || {
        init::<K>(ctx, key, params, Operation::Decapsulate)
    })
}

fn too_small(what: &str) -> ProviderError {
    ProviderError::new(Reason::OutputBufferTooSmall).with_detail(format!("{what} buffer too small"))
}

/// Checks a caller's `*len` against `need` and sets it.
///
/// # Safety
/// `len` is NULL or valid for reads and writes.
unsafe fn claim(len: *mut usize, need: usize, what: &str) -> Result<()> {
    non_null(len, &format!("{what} length pointer"))?;
    // SAFETY: non-NULL, the caller's contract.
    unsafe {
        if *len < need {
            return Err(too_small(what));
        }
        *len = need;
    }
    Ok(())
}

unsafe extern "C" fn encapsulate<K: KemKey>(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    secret: *mut u8,
    secret_len: *mut usize,
) -> c_int {
    guard(c"kem_encapsulate", || {
        // SAFETY: the core passes our context.
        let ctx = unsafe { kem_ctx::<K>(ctx)? };
        if ctx.operation != Operation::Encapsulate {
            return Err(ProviderError::new(Reason::CallOutOfOrder)
                .with_detail("encapsulate_init not called"));
        }
        let key = ctx.key()?;
        key.require_public()?;
        let (ct_len, ss_len) = (key.ciphertext_len(), key.secret_len());
        if out.is_null() {
            // Size query.
            if out_len.is_null() && secret_len.is_null() {
                return Ok(0);
            }
            // SAFETY: non-NULL out-pointers from the caller.
            unsafe {
                if !out_len.is_null() {
                    *out_len = ct_len;
                }
                if !secret_len.is_null() {
                    *secret_len = ss_len;
                }
            }
            return SUCCESS;
        }
        // One-shot entropy: a real attempt uses it up, whatever happens
        // below (a size query above leaves it, as in OpenSSL).
        let ikme = ctx.ikme.take();
        non_null(secret, "shared-secret buffer")?;
        // SAFETY: the caller's length pointers (NULL is rejected).
        unsafe {
            claim(out_len, ct_len, "ciphertext")?;
            claim(secret_len, ss_len, "shared-secret")?;
        }
        let m = match ikme {
            Some(m) => m,
            None => {
                let mut m = Zeroizing::new([0u8; MESSAGE_LEN]);
                ctx.prov.random(m.as_mut_slice(), key.security_bits())?;
                m
            }
        };
        // SAFETY: the caller provides `ct_len` and `ss_len` writable bytes
        // (the lengths it declared were checked above).
        let (ct, k) = unsafe {
            (
                core::slice::from_raw_parts_mut(out, ct_len),
                core::slice::from_raw_parts_mut(secret, ss_len),
            )
        };
        key.encapsulate(ctx.prov, &m, ct, k)?;
        SUCCESS
    })
}

unsafe extern "C" fn decapsulate<K: KemKey>(
    ctx: *mut c_void,
    secret: *mut u8,
    secret_len: *mut usize,
    ct: *const u8,
    ct_len: usize,
) -> c_int {
    guard(c"kem_decapsulate", || {
        // SAFETY: the core passes our context.
        let ctx = unsafe { kem_ctx::<K>(ctx)? };
        if ctx.operation != Operation::Decapsulate {
            return Err(ProviderError::new(Reason::CallOutOfOrder)
                .with_detail("decapsulate_init not called"));
        }
        let key = ctx.key()?;
        key.require_private()?;
        let ss_len = key.secret_len();
        if secret.is_null() {
            non_null(secret_len, "shared-secret length pointer")?;
            // SAFETY: non-NULL out-pointer.
            unsafe { *secret_len = ss_len };
            return SUCCESS;
        }
        if !secret_len.is_null() {
            // SAFETY: the caller's length pointer.
            unsafe { claim(secret_len, ss_len, "shared-secret")? };
        }
        non_null(ct, "ciphertext")?;
        check_length(key.name(), "ciphertext", ct_len, key.ciphertext_len())?;
        // SAFETY: `ct` holds `ct_len` readable bytes; `secret` `ss_len`
        // writable ones.
        let (ct, k) = unsafe {
            (
                core::slice::from_raw_parts(ct, ct_len),
                core::slice::from_raw_parts_mut(secret, ss_len),
            )
        };
        key.decapsulate(ctx.prov, ct, k)?;
        SUCCESS
    })
}

unsafe extern "C" fn set_ctx_params<K: KemKey>(
    ctx: *mut c_void,
    params: *const OSSL_PARAM,
) -> c_int {
    guard(c"kem_set_ctx_params", || {
        // SAFETY: the core passes our context and a valid array.
        let (ctx, params) = unsafe { (kem_ctx::<K>(ctx)?, Params::from_ptr(params)) };
        ctx.set_params(params)?;
        SUCCESS
    })
}

static SETTABLE: StaticTable<[OSSL_PARAM; 2]> =
    StaticTable([describe_octets(names::KEM_IKME), END]);

unsafe extern "C" fn settable_ctx_params(
    _ctx: *mut c_void,
    _provctx: *mut c_void,
) -> *const OSSL_PARAM {
    SETTABLE.0.as_ptr()
}

macro_rules! kem_functions {
    ($key:ty) => {
        dispatch_table![
            OSSL_FUNC_KEM_NEWCTX => OSSL_FUNC_kem_newctx_fn = newctx::<$key>,
            OSSL_FUNC_KEM_FREECTX => OSSL_FUNC_kem_freectx_fn = freectx::<$key>,
            OSSL_FUNC_KEM_DUPCTX => OSSL_FUNC_kem_dupctx_fn = dupctx::<$key>,
            OSSL_FUNC_KEM_ENCAPSULATE_INIT => OSSL_FUNC_kem_encapsulate_init_fn = encapsulate_init::<$key>,
            OSSL_FUNC_KEM_ENCAPSULATE => OSSL_FUNC_kem_encapsulate_fn = encapsulate::<$key>,
            OSSL_FUNC_KEM_DECAPSULATE_INIT => OSSL_FUNC_kem_decapsulate_init_fn = decapsulate_init::<$key>,
            OSSL_FUNC_KEM_DECAPSULATE => OSSL_FUNC_kem_decapsulate_fn = decapsulate::<$key>,
            OSSL_FUNC_KEM_SET_CTX_PARAMS => OSSL_FUNC_kem_set_ctx_params_fn = set_ctx_params::<$key>,
            OSSL_FUNC_KEM_SETTABLE_CTX_PARAMS => OSSL_FUNC_kem_settable_ctx_params_fn = settable_ctx_params,
        ]
    };
}

/// The KEM dispatch table of the pure ML-KEM algorithms (shared by the
/// three parameter sets: the key knows its own).
pub(crate) const FUNCTIONS: &[OSSL_DISPATCH] = kem_functions!(crate::key::MlKemKey);

/// The KEM dispatch table of the hybrid algorithms.
pub(crate) const HYBRID_FUNCTIONS: &[OSSL_DISPATCH] = kem_functions!(crate::hybrid::HybridKey);
