//! The C face of the KEM operation (`OSSL_OP_KEM`): the functions of a KEM
//! dispatch table, each turning the core's pointers into typed arguments
//! for a [`Kem`] implementation, and [`kem_functions!`].

use core::ffi::{c_int, c_void};

use super::guard::{guard, non_null, SUCCESS};
use super::object::{
    borrow, borrow_mut, free_object, into_raw, new_object, set_object_params, Lent, Object,
};
use super::params::Params;
use super::sys::OSSL_PARAM;
use crate::error::{ProviderError, Reason, Result};

/// The KEM operation for one kind of key, in safe Rust.
pub(crate) trait Kem: 'static {
    /// The provider context.
    type Prov: Object;
    /// The key object (made by the matching keymgmt).
    type Key: Object;
    /// The operation context.
    type Ctx: Object + Clone;

    /// Parameters `set_ctx_params` takes.
    const SETTABLE: &'static [OSSL_PARAM];

    /// A new context.
    fn new(prov: &'static Self::Prov) -> Result<Self::Ctx>;
    /// Starts an encapsulation (`decapsulate` false) or decapsulation with
    /// `key`.
    fn init(
        ctx: &mut Self::Ctx,
        key: Lent<Self::Key>,
        decapsulate: bool,
        params: Params<'_>,
    ) -> Result<()>;
    /// Sets context parameters.
    fn set_params(ctx: &mut Self::Ctx, params: Params<'_>) -> Result<()>;
    /// Encapsulates into the caller's buffers, or answers a size query.
    fn encapsulate(ctx: &mut Self::Ctx, output: Encapsulation<'_>) -> Result<c_int>;
    /// The ciphertext and shared-secret lengths of the context's key, for a
    /// decapsulation.
    fn decapsulation_lens(ctx: &Self::Ctx) -> Result<(usize, usize)>;
    /// Decapsulates `ct` (of the expected length) into `secret`.
    fn decapsulate(ctx: &Self::Ctx, ct: &[u8], secret: &mut [u8]) -> Result<()>;
    /// The key's name, for error details.
    fn key_name(ctx: &Self::Ctx) -> Result<&'static str>;
}

/// `OSSL_FUNC_kem_newctx`.
pub(crate) unsafe extern "C" fn newctx<T: Kem>(provctx: *mut c_void) -> *mut c_void {
    // SAFETY: the core passes our provctx.
    unsafe { new_object(c"kem_newctx", provctx, T::new) }
}

/// `OSSL_FUNC_kem_freectx`.
pub(crate) unsafe extern "C" fn freectx<T: Kem>(ctx: *mut c_void) {
    // SAFETY: from `newctx`/`dupctx`; the core frees it once.
    unsafe { free_object::<T::Ctx>(c"kem_freectx", ctx) }
}

/// `OSSL_FUNC_kem_dupctx`.
pub(crate) unsafe extern "C" fn dupctx<T: Kem>(ctx: *mut c_void) -> *mut c_void {
    guard(c"kem_dupctx", || {
        // SAFETY: the core passes our context.
        let ctx = unsafe { borrow::<T::Ctx>(ctx, "KEM context")? };
        Ok(into_raw(ctx.clone()))
    })
}

/// `OSSL_FUNC_kem_encapsulate_init` and, with `DECAPSULATE`,
/// `OSSL_FUNC_kem_decapsulate_init`.
pub(crate) unsafe extern "C" fn init<T: Kem, const DECAPSULATE: bool>(
    ctx: *mut c_void,
    key: *mut c_void,
    params: *const OSSL_PARAM,
) -> c_int {
    let function = if DECAPSULATE {
        c"kem_decapsulate_init"
    } else {
        c"kem_encapsulate_init"
    };
    guard(function, || {
        // SAFETY: the core passes our context, one of our keys (which it
        // keeps alive while the context uses it) and a valid array;
        // `borrow` checks the key and records its instance before the
        // context keeps it.
        let (ctx, key, params) = unsafe {
            borrow::<T::Key>(key, "key")?;
            (
                borrow_mut::<T::Ctx>(ctx, "KEM context")?,
                Lent::new(key)?,
                Params::from_ptr(params),
            )
        };
        T::init(ctx, key, DECAPSULATE, params)?;
        SUCCESS
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

/// Writes `value` to `out` unless it is NULL.
///
/// # Safety
/// `out` is NULL or valid for writes.
unsafe fn report(out: *mut usize, value: usize) {
    if !out.is_null() {
        // SAFETY: the caller's contract.
        unsafe { *out = value };
    }
}

/// Where an encapsulation goes: the caller's ciphertext and shared-secret
/// buffers and their lengths.
pub(crate) struct Encapsulation<'a> {
    out: *mut u8,
    out_len: *mut usize,
    secret: *mut u8,
    secret_len: *mut usize,
    _call: core::marker::PhantomData<&'a mut [u8]>,
}

impl<'a> Encapsulation<'a> {
    /// Whether the caller only asks for the lengths (a NULL ciphertext
    /// buffer).
    pub(crate) fn is_size_query(&self) -> bool {
        self.out.is_null()
    }

    /// Answers a size query: 0 when the caller gave nowhere to put it.
    pub(crate) fn report_lens(&mut self, ct_len: usize, ss_len: usize) -> c_int {
        if self.out_len.is_null() && self.secret_len.is_null() {
            return 0;
        }
        // SAFETY: the caller's out-pointers (or NULL).
        unsafe {
            report(self.out_len, ct_len);
            report(self.secret_len, ss_len);
        }
        1
    }

    /// The buffers, of exactly these lengths, after checking the caller's
    /// declared lengths and setting them.
    pub(crate) fn buffers(
        self,
        ct_len: usize,
        ss_len: usize,
    ) -> Result<(&'a mut [u8], &'a mut [u8])> {
        non_null(self.out, "ciphertext buffer")?;
        non_null(self.secret, "shared-secret buffer")?;
        // SAFETY: the caller's length pointers (NULL is rejected).
        unsafe {
            claim(self.out_len, ct_len, "ciphertext")?;
            claim(self.secret_len, ss_len, "shared-secret")?;
        }
        // SAFETY: the caller provides `ct_len` and `ss_len` writable bytes
        // (the lengths it declared were checked above).
        Ok(unsafe {
            (
                core::slice::from_raw_parts_mut(self.out, ct_len),
                core::slice::from_raw_parts_mut(self.secret, ss_len),
            )
        })
    }
}

/// `OSSL_FUNC_kem_encapsulate`.
pub(crate) unsafe extern "C" fn encapsulate<T: Kem>(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    secret: *mut u8,
    secret_len: *mut usize,
) -> c_int {
    guard(c"kem_encapsulate", || {
        // SAFETY: the core passes our context.
        let ctx = unsafe { borrow_mut::<T::Ctx>(ctx, "KEM context")? };
        let output = Encapsulation {
            out,
            out_len,
            secret,
            secret_len,
            _call: core::marker::PhantomData,
        };
        T::encapsulate(ctx, output)
    })
}

/// `OSSL_FUNC_kem_decapsulate`: a NULL `secret` asks for its length.
pub(crate) unsafe extern "C" fn decapsulate<T: Kem>(
    ctx: *mut c_void,
    secret: *mut u8,
    secret_len: *mut usize,
    ct: *const u8,
    ct_len: usize,
) -> c_int {
    guard(c"kem_decapsulate", || {
        // SAFETY: the core passes our context.
        let ctx = unsafe { borrow::<T::Ctx>(ctx, "KEM context")? };
        let (expected_ct_len, ss_len) = T::decapsulation_lens(ctx)?;
        if secret.is_null() {
            non_null(secret_len, "shared-secret length pointer")?;
            // SAFETY: non-NULL out-pointer.
            unsafe { report(secret_len, ss_len) };
            return SUCCESS;
        }
        if !secret_len.is_null() {
            // SAFETY: the caller's length pointer.
            unsafe { claim(secret_len, ss_len, "shared-secret")? };
        }
        non_null(ct, "ciphertext")?;
        crate::error::check_length(T::key_name(ctx)?, "ciphertext", ct_len, expected_ct_len)?;
        // SAFETY: `ct` holds `ct_len` readable bytes; `secret` `ss_len`
        // writable ones.
        let (ct, k) = unsafe {
            (
                core::slice::from_raw_parts(ct, ct_len),
                core::slice::from_raw_parts_mut(secret, ss_len),
            )
        };
        T::decapsulate(ctx, ct, k)?;
        SUCCESS
    })
}

/// `OSSL_FUNC_kem_set_ctx_params`.
pub(crate) unsafe extern "C" fn set_ctx_params<T: Kem>(
    ctx: *mut c_void,
    params: *const OSSL_PARAM,
) -> c_int {
    // SAFETY: the core passes our context and a valid array.
    unsafe {
        set_object_params(
            c"kem_set_ctx_params",
            ctx,
            "KEM context",
            params,
            T::set_params,
        )
    }
}

/// `OSSL_FUNC_kem_settable_ctx_params`.
pub(crate) unsafe extern "C" fn settable_ctx_params<T: Kem>(
    _ctx: *mut c_void,
    _provctx: *mut c_void,
) -> *const OSSL_PARAM {
    T::SETTABLE.as_ptr()
}

/// The KEM dispatch table of `$t` (a [`Kem`]).
macro_rules! kem_functions {
    ($t:ty) => {
        $crate::ffi::dispatch_table![
            OSSL_FUNC_KEM_NEWCTX => OSSL_FUNC_kem_newctx_fn = $crate::ffi::kem::newctx::<$t>,
            OSSL_FUNC_KEM_FREECTX => OSSL_FUNC_kem_freectx_fn = $crate::ffi::kem::freectx::<$t>,
            OSSL_FUNC_KEM_DUPCTX => OSSL_FUNC_kem_dupctx_fn = $crate::ffi::kem::dupctx::<$t>,
            OSSL_FUNC_KEM_ENCAPSULATE_INIT => OSSL_FUNC_kem_encapsulate_init_fn = $crate::ffi::kem::init::<$t, false>,
            OSSL_FUNC_KEM_ENCAPSULATE => OSSL_FUNC_kem_encapsulate_fn = $crate::ffi::kem::encapsulate::<$t>,
            OSSL_FUNC_KEM_DECAPSULATE_INIT => OSSL_FUNC_kem_decapsulate_init_fn = $crate::ffi::kem::init::<$t, true>,
            OSSL_FUNC_KEM_DECAPSULATE => OSSL_FUNC_kem_decapsulate_fn = $crate::ffi::kem::decapsulate::<$t>,
            OSSL_FUNC_KEM_SET_CTX_PARAMS => OSSL_FUNC_kem_set_ctx_params_fn = $crate::ffi::kem::set_ctx_params::<$t>,
            OSSL_FUNC_KEM_SETTABLE_CTX_PARAMS => OSSL_FUNC_kem_settable_ctx_params_fn = $crate::ffi::kem::settable_ctx_params::<$t>,
        ]
    };
}
pub(crate) use kem_functions;
