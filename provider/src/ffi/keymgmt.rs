//! The C face of key management (`OSSL_OP_KEYMGMT`): the functions of a
//! keymgmt dispatch table, each turning the core's pointers into typed
//! arguments for a [`Keymgmt`] implementation, and [`keymgmt_functions!`],
//! which builds the table.

use core::ffi::{c_int, c_void};

use super::guard::{c_bool, guard, non_null, SUCCESS};
use super::object::{
    borrow, borrow_mut, free_object, into_raw, new_object, provider_context, set_object_params,
    Object,
};
use super::params::{ParamCallback, Params, ParamsMut};
use super::sys::{OSSL_CALLBACK, OSSL_PARAM};
use super::Selection;
use crate::error::{ProviderError, Reason, Result};

/// Key management for one algorithm, in safe Rust.
pub(crate) trait Keymgmt: 'static {
    /// The provider context.
    type Prov: Object;
    /// The key object.
    type Key: Object;
    /// The key-generation context.
    type GenCtx: Object;

    /// Parameters `get_params` answers.
    const GETTABLE: &'static [OSSL_PARAM];
    /// Parameters `set_params` takes.
    const SETTABLE: &'static [OSSL_PARAM];
    /// Parameters generation takes.
    const GEN_SETTABLE: &'static [OSSL_PARAM];
    /// Parameters import takes and export gives, for a key-pair selection.
    const KEY_TYPES: &'static [OSSL_PARAM];

    /// An empty key.
    fn new(prov: &'static Self::Prov) -> Result<Self::Key>;
    /// Whether the key holds what `selection` names.
    fn has(key: &Self::Key, selection: Selection) -> bool;
    /// Whether two keys are equal in what `selection` names.
    fn matches(a: &Self::Key, b: &Self::Key, selection: Selection) -> bool;
    /// Checks the parts `selection` names.
    fn validate(key: &Self::Key, selection: Selection) -> Result<bool>;
    /// Answers the parameters asked for.
    fn get_params(key: &Self::Key, params: &mut ParamsMut<'_>) -> Result<()>;
    /// Sets parameters.
    fn set_params(key: &mut Self::Key, params: Params<'_>) -> Result<()>;
    /// Starts a key (or, with no key-pair selection, parameter) generation.
    fn gen_init(
        prov: &'static Self::Prov,
        selection: Selection,
        params: Params<'_>,
    ) -> Result<Self::GenCtx>;
    /// Sets generation parameters.
    fn gen_set_params(ctx: &mut Self::GenCtx, params: Params<'_>) -> Result<()>;
    /// Generates a key.
    fn generate(ctx: &mut Self::GenCtx) -> Result<Self::Key>;
    /// A copy of the parts `selection` names.
    fn dup(key: &Self::Key, selection: Selection) -> Result<Self::Key>;
    /// Fills an empty key from parameters; false when `selection` names no
    /// key part.
    fn import(key: &mut Self::Key, selection: Selection, params: Params<'_>) -> Result<bool>;
    /// Passes the parts `selection` names to `callback`; its result, or 0
    /// when `selection` names no key part.
    fn export(key: &Self::Key, selection: Selection, callback: ParamCallback<'_>) -> Result<c_int>;
}

/// `OSSL_FUNC_keymgmt_new`.
pub(crate) unsafe extern "C" fn new<T: Keymgmt>(provctx: *mut c_void) -> *mut c_void {
    // SAFETY: the core passes our provctx.
    unsafe { new_object(c"keymgmt_new", provctx, T::new) }
}

/// `OSSL_FUNC_keymgmt_free`.
pub(crate) unsafe extern "C" fn free<T: Keymgmt>(key: *mut c_void) {
    // SAFETY: the core frees each of our keys once.
    unsafe { free_object::<T::Key>(c"keymgmt_free", key) }
}

/// `OSSL_FUNC_keymgmt_has`.
pub(crate) unsafe extern "C" fn has<T: Keymgmt>(key: *const c_void, selection: c_int) -> c_int {
    guard(c"keymgmt_has", || {
        // SAFETY: the core passes one of our keys (or NULL).
        let key = unsafe { borrow::<T::Key>(key, "key")? };
        Ok(c_bool(T::has(key, Selection(selection))))
    })
}

/// `OSSL_FUNC_keymgmt_match`.
pub(crate) unsafe extern "C" fn match_keys<T: Keymgmt>(
    a: *const c_void,
    b: *const c_void,
    selection: c_int,
) -> c_int {
    guard(c"keymgmt_match", || {
        // SAFETY: the core passes two of our keys.
        let (a, b) = unsafe { (borrow::<T::Key>(a, "key")?, borrow::<T::Key>(b, "key")?) };
        Ok(c_bool(T::matches(a, b, Selection(selection))))
    })
}

/// `OSSL_FUNC_keymgmt_validate`.
pub(crate) unsafe extern "C" fn validate<T: Keymgmt>(
    key: *const c_void,
    selection: c_int,
    _check_type: c_int,
) -> c_int {
    guard(c"keymgmt_validate", || {
        // SAFETY: the core passes one of our keys.
        let key = unsafe { borrow::<T::Key>(key, "key")? };
        Ok(c_bool(T::validate(key, Selection(selection))?))
    })
}

/// `OSSL_FUNC_keymgmt_gettable_params`.
pub(crate) unsafe extern "C" fn gettable_params<T: Keymgmt>(
    _provctx: *mut c_void,
) -> *const OSSL_PARAM {
    T::GETTABLE.as_ptr()
}

/// `OSSL_FUNC_keymgmt_get_params`.
pub(crate) unsafe extern "C" fn get_params<T: Keymgmt>(
    key: *mut c_void,
    params: *mut OSSL_PARAM,
) -> c_int {
    guard(c"keymgmt_get_params", || {
        // SAFETY: the core passes one of our keys and a valid array.
        let (key, mut params) =
            unsafe { (borrow::<T::Key>(key, "key")?, ParamsMut::from_ptr(params)) };
        T::get_params(key, &mut params)?;
        SUCCESS
    })
}

/// `OSSL_FUNC_keymgmt_settable_params`.
pub(crate) unsafe extern "C" fn settable_params<T: Keymgmt>(
    _provctx: *mut c_void,
) -> *const OSSL_PARAM {
    T::SETTABLE.as_ptr()
}

/// `OSSL_FUNC_keymgmt_set_params`.
pub(crate) unsafe extern "C" fn set_params<T: Keymgmt>(
    key: *mut c_void,
    params: *const OSSL_PARAM,
) -> c_int {
    // SAFETY: the core passes one of our keys, not in use elsewhere while
    // it is being set, and a valid array.
    unsafe { set_object_params(c"keymgmt_set_params", key, "key", params, T::set_params) }
}

/// `OSSL_FUNC_keymgmt_gen_init`.
pub(crate) unsafe extern "C" fn gen_init<T: Keymgmt>(
    provctx: *mut c_void,
    selection: c_int,
    params: *const OSSL_PARAM,
) -> *mut c_void {
    guard(c"keymgmt_gen_init", || {
        // SAFETY: the core passes our provctx and a valid array.
        let (prov, params) = unsafe {
            (
                provider_context::<T::Prov>(provctx)?,
                Params::from_ptr(params),
            )
        };
        Ok(into_raw(T::gen_init(prov, Selection(selection), params)?))
    })
}

/// `OSSL_FUNC_keymgmt_gen_set_params`.
pub(crate) unsafe extern "C" fn gen_set_params<T: Keymgmt>(
    ctx: *mut c_void,
    params: *const OSSL_PARAM,
) -> c_int {
    // SAFETY: the core passes our context and a valid array.
    unsafe {
        set_object_params(
            c"keymgmt_gen_set_params",
            ctx,
            "generation context",
            params,
            T::gen_set_params,
        )
    }
}

/// `OSSL_FUNC_keymgmt_gen_settable_params`.
pub(crate) unsafe extern "C" fn gen_settable_params<T: Keymgmt>(
    _ctx: *mut c_void,
    _provctx: *mut c_void,
) -> *const OSSL_PARAM {
    T::GEN_SETTABLE.as_ptr()
}

/// `OSSL_FUNC_keymgmt_gen`.
pub(crate) unsafe extern "C" fn generate<T: Keymgmt>(
    ctx: *mut c_void,
    _callback: OSSL_CALLBACK,
    _arg: *mut c_void,
) -> *mut c_void {
    guard(c"keymgmt_gen", || {
        // SAFETY: the core passes our context.
        let ctx = unsafe { borrow_mut::<T::GenCtx>(ctx, "generation context")? };
        Ok(into_raw(T::generate(ctx)?))
    })
}

/// `OSSL_FUNC_keymgmt_gen_cleanup`.
pub(crate) unsafe extern "C" fn gen_cleanup<T: Keymgmt>(ctx: *mut c_void) {
    // SAFETY: from `gen_init`; the core frees it once.
    unsafe { free_object::<T::GenCtx>(c"keymgmt_gen_cleanup", ctx) }
}

/// `OSSL_FUNC_keymgmt_load`: takes the key a decoder of ours made, whose
/// address the reference holds, and clears the reference so that the
/// decoder does not free the key too (see `ffi::decoder`).
pub(crate) unsafe extern "C" fn load(
    reference: *const c_void,
    reference_size: usize,
) -> *mut c_void {
    guard(c"keymgmt_load", || {
        non_null(reference, "key reference")?;
        if reference_size != size_of::<*mut c_void>() {
            return Err(
                ProviderError::new(Reason::InvalidParameter).with_detail("bad key reference size")
            );
        }
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

/// `OSSL_FUNC_keymgmt_dup`.
pub(crate) unsafe extern "C" fn dup<T: Keymgmt>(
    key: *const c_void,
    selection: c_int,
) -> *mut c_void {
    guard(c"keymgmt_dup", || {
        // SAFETY: the core passes one of our keys.
        let key = unsafe { borrow::<T::Key>(key, "key")? };
        Ok(into_raw(T::dup(key, Selection(selection))?))
    })
}

/// `OSSL_FUNC_keymgmt_import`.
pub(crate) unsafe extern "C" fn import<T: Keymgmt>(
    key: *mut c_void,
    selection: c_int,
    params: *const OSSL_PARAM,
) -> c_int {
    guard(c"keymgmt_import", || {
        // SAFETY: the core passes one of our (empty) keys and a valid array.
        let (key, params) =
            unsafe { (borrow_mut::<T::Key>(key, "key")?, Params::from_ptr(params)) };
        Ok(c_bool(T::import(key, Selection(selection), params)?))
    })
}

/// `OSSL_FUNC_keymgmt_export`.
pub(crate) unsafe extern "C" fn export<T: Keymgmt>(
    key: *mut c_void,
    selection: c_int,
    callback: OSSL_CALLBACK,
    arg: *mut c_void,
) -> c_int {
    guard(c"keymgmt_export", || {
        // SAFETY: the core passes one of our keys, and a callback with the
        // argument it expects.
        let (key, callback) = unsafe {
            (
                borrow::<T::Key>(key, "key")?,
                ParamCallback::new(callback, arg)?,
            )
        };
        T::export(key, Selection(selection), callback)
    })
}

/// `OSSL_FUNC_keymgmt_import_types` and `OSSL_FUNC_keymgmt_export_types`.
pub(crate) unsafe extern "C" fn key_types<T: Keymgmt>(selection: c_int) -> *const OSSL_PARAM {
    if Selection(selection).key() {
        T::KEY_TYPES.as_ptr()
    } else {
        core::ptr::null()
    }
}

/// The keymgmt dispatch table of `$t` (a [`Keymgmt`]), with the extra
/// entries given after it.
macro_rules! keymgmt_functions {
    ($t:ty $(, $id:ident => $fty:ident = $f:expr)* $(,)?) => {
        $crate::ffi::dispatch_table![
            OSSL_FUNC_KEYMGMT_NEW => OSSL_FUNC_keymgmt_new_fn = $crate::ffi::keymgmt::new::<$t>,
            OSSL_FUNC_KEYMGMT_FREE => OSSL_FUNC_keymgmt_free_fn = $crate::ffi::keymgmt::free::<$t>,
            OSSL_FUNC_KEYMGMT_GET_PARAMS => OSSL_FUNC_keymgmt_get_params_fn = $crate::ffi::keymgmt::get_params::<$t>,
            OSSL_FUNC_KEYMGMT_GETTABLE_PARAMS => OSSL_FUNC_keymgmt_gettable_params_fn = $crate::ffi::keymgmt::gettable_params::<$t>,
            OSSL_FUNC_KEYMGMT_SET_PARAMS => OSSL_FUNC_keymgmt_set_params_fn = $crate::ffi::keymgmt::set_params::<$t>,
            OSSL_FUNC_KEYMGMT_SETTABLE_PARAMS => OSSL_FUNC_keymgmt_settable_params_fn = $crate::ffi::keymgmt::settable_params::<$t>,
            OSSL_FUNC_KEYMGMT_HAS => OSSL_FUNC_keymgmt_has_fn = $crate::ffi::keymgmt::has::<$t>,
            OSSL_FUNC_KEYMGMT_MATCH => OSSL_FUNC_keymgmt_match_fn = $crate::ffi::keymgmt::match_keys::<$t>,
            OSSL_FUNC_KEYMGMT_GEN_INIT => OSSL_FUNC_keymgmt_gen_init_fn = $crate::ffi::keymgmt::gen_init::<$t>,
            OSSL_FUNC_KEYMGMT_GEN_SET_PARAMS => OSSL_FUNC_keymgmt_gen_set_params_fn = $crate::ffi::keymgmt::gen_set_params::<$t>,
            OSSL_FUNC_KEYMGMT_GEN_SETTABLE_PARAMS => OSSL_FUNC_keymgmt_gen_settable_params_fn = $crate::ffi::keymgmt::gen_settable_params::<$t>,
            OSSL_FUNC_KEYMGMT_GEN => OSSL_FUNC_keymgmt_gen_fn = $crate::ffi::keymgmt::generate::<$t>,
            OSSL_FUNC_KEYMGMT_GEN_CLEANUP => OSSL_FUNC_keymgmt_gen_cleanup_fn = $crate::ffi::keymgmt::gen_cleanup::<$t>,
            OSSL_FUNC_KEYMGMT_DUP => OSSL_FUNC_keymgmt_dup_fn = $crate::ffi::keymgmt::dup::<$t>,
            OSSL_FUNC_KEYMGMT_IMPORT => OSSL_FUNC_keymgmt_import_fn = $crate::ffi::keymgmt::import::<$t>,
            OSSL_FUNC_KEYMGMT_IMPORT_TYPES => OSSL_FUNC_keymgmt_import_types_fn = $crate::ffi::keymgmt::key_types::<$t>,
            OSSL_FUNC_KEYMGMT_EXPORT => OSSL_FUNC_keymgmt_export_fn = $crate::ffi::keymgmt::export::<$t>,
            OSSL_FUNC_KEYMGMT_EXPORT_TYPES => OSSL_FUNC_keymgmt_export_types_fn = $crate::ffi::keymgmt::key_types::<$t>,
            $($id => $fty = $f,)*
        ]
    };
}
pub(crate) use keymgmt_functions;

#[cfg(test)]
mod zeroize_tests;
