//! The C face of decoders (`OSSL_OP_DECODER`): the functions of a decoder
//! dispatch table, each turning the core's pointers into typed arguments
//! for a [`Decoder`] implementation, and [`decoder_functions!`].
//!
//! A decoded key travels to the keymgmt by reference: `decode` passes the
//! core an `OSSL_OBJECT_PARAM_REFERENCE` holding the key's address; the
//! keymgmt's `load` (`ffi::keymgmt::load`) takes the key and clears the
//! reference, and what is not taken is freed here after the callback.

use core::ffi::{c_int, c_void, CStr};

use super::bio::CoreBio;
use super::guard::{c_bool, guard, non_null};
use super::names;
use super::object::{self, borrow, into_raw, provider_context, Object};
use super::params::{ParamCallback, ParamList};
use super::sys::{OSSL_CALLBACK, OSSL_CORE_BIO, OSSL_OBJECT_PKEY, OSSL_PASSPHRASE_CALLBACK};
use super::Selection;
use crate::error::{ProviderError, Reason, Result};

/// One decoder (input structure, one algorithm), in safe Rust.
pub(crate) trait Decoder: 'static {
    /// The provider context (also the decoder context).
    type Prov: Object;
    /// The key object it makes.
    type Key: Object;

    /// The input structure's name (`OSSL_OBJECT_PARAM_DATA_STRUCTURE`).
    const STRUCTURE: &'static CStr;
    /// The algorithm name of the keys it makes (`OSSL_OBJECT_PARAM_DATA_TYPE`).
    const DATA_TYPE: &'static CStr;
    /// Inputs longer than this are not ours.
    const MAX_INPUT: usize;

    /// Whether the structure carries what `selection` names.
    fn does_selection(selection: Selection) -> bool;
    /// Decodes `der`, or `Ok(None)` when it is not this decoder's input at
    /// all (another decoder's business).
    fn decode(prov: &'static Self::Prov, der: &[u8]) -> Result<Option<Self::Key>>;
    /// Passes a decoded key's parts to `callback`.
    fn export(key: &Self::Key, callback: ParamCallback<'_>) -> Result<c_int>;
}

/// `OSSL_FUNC_decoder_newctx`: the decoder context is the provider context.
pub(crate) unsafe extern "C" fn newctx<T: Decoder>(provctx: *mut c_void) -> *mut c_void {
    guard(c"decoder_newctx", || {
        // SAFETY: the core passes our provctx.
        unsafe { provider_context::<T::Prov>(provctx)? };
        Ok(provctx)
    })
}

/// `OSSL_FUNC_decoder_freectx`: nothing to free (see `newctx`).
pub(crate) unsafe extern "C" fn freectx(_ctx: *mut c_void) {}

/// `OSSL_FUNC_decoder_does_selection`.
pub(crate) unsafe extern "C" fn does_selection<T: Decoder>(
    _provctx: *mut c_void,
    selection: c_int,
) -> c_int {
    c_bool(T::does_selection(Selection(selection)))
}

/// `OSSL_FUNC_decoder_decode`.
pub(crate) unsafe extern "C" fn decode<T: Decoder>(
    ctx: *mut c_void,
    input: *mut OSSL_CORE_BIO,
    _selection: c_int,
    data_callback: OSSL_CALLBACK,
    data_arg: *mut c_void,
    _passphrase_callback: OSSL_PASSPHRASE_CALLBACK,
    _passphrase_arg: *mut c_void,
) -> c_int {
    guard(c"decoder_decode", || {
        // SAFETY: the decoder context is our provctx (see `newctx`); the
        // BIO and the callback are the core's for this call.
        let (prov, mut input, callback) = unsafe {
            (
                provider_context::<T::Prov>(ctx)?,
                CoreBio::new(input, "input BIO")?,
                ParamCallback::new(data_callback, data_arg)?,
            )
        };
        let Ok(der) = input.read_all(T::MAX_INPUT) else {
            // Too large to be ours: leave it to other decoders.
            return Ok(1);
        };
        // Not ours: "empty-handed" is success, so other decoders can try.
        let Some(key) = T::decode(prov, &der)? else {
            return Ok(1);
        };
        let mut reference = into_raw(key);
        let object_type: c_int = OSSL_OBJECT_PKEY as c_int;
        // `load` reads the reference back as a pointer and, when it takes
        // the key, clears it (through the core): the list holds the
        // variable's address, borrowed mutably until the list is dropped.
        let mut list = ParamList::new()
            .int(names::OBJECT_TYPE, &object_type)
            .utf8(names::OBJECT_DATA_TYPE, T::DATA_TYPE)
            .utf8(names::OBJECT_DATA_STRUCTURE, T::STRUCTURE)
            .reference(names::OBJECT_REFERENCE, &mut reference);
        let ok = callback.call(&mut list);
        drop(list);
        // SAFETY: NULL if `load` took the key, else still the box made by
        // `into_raw` above, ours to free.
        unsafe { object::free::<T::Key>(reference) };
        Ok(ok)
    })
}

/// `OSSL_FUNC_decoder_export_object`: exports the key a reference from
/// `decode` names.
pub(crate) unsafe extern "C" fn export_object<T: Decoder>(
    _ctx: *mut c_void,
    reference: *const c_void,
    reference_size: usize,
    export_callback: OSSL_CALLBACK,
    export_arg: *mut c_void,
) -> c_int {
    guard(c"decoder_export_object", || {
        non_null(reference, "object reference")?;
        if reference_size != size_of::<*mut c_void>() {
            return Err(ProviderError::new(Reason::InvalidParameter)
                .with_detail("bad object reference size"));
        }
        // SAFETY: the reference is the pointer our `decode` passed (size
        // checked); the key is alive during the callback that asks this.
        let key = unsafe { reference.cast::<*const c_void>().read_unaligned() };
        non_null(key, "referenced key")?;
        // SAFETY: as above; the callback is the core's, with its argument.
        let (key, callback) = unsafe {
            (
                borrow::<T::Key>(key, "referenced key")?,
                ParamCallback::new(export_callback, export_arg)?,
            )
        };
        T::export(key, callback)
    })
}

/// The decoder dispatch table of `$t` (a [`Decoder`]).
macro_rules! decoder_functions {
    ($t:ty) => {
        $crate::ffi::dispatch_table![
            OSSL_FUNC_DECODER_NEWCTX => OSSL_FUNC_decoder_newctx_fn = $crate::ffi::decoder::newctx::<$t>,
            OSSL_FUNC_DECODER_FREECTX => OSSL_FUNC_decoder_freectx_fn = $crate::ffi::decoder::freectx,
            OSSL_FUNC_DECODER_DOES_SELECTION => OSSL_FUNC_decoder_does_selection_fn = $crate::ffi::decoder::does_selection::<$t>,
            OSSL_FUNC_DECODER_DECODE => OSSL_FUNC_decoder_decode_fn = $crate::ffi::decoder::decode::<$t>,
            OSSL_FUNC_DECODER_EXPORT_OBJECT => OSSL_FUNC_decoder_export_object_fn = $crate::ffi::decoder::export_object::<$t>,
        ]
    };
}
pub(crate) use decoder_functions;
