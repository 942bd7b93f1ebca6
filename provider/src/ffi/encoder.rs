//! The C face of encoders (`OSSL_OP_ENCODER`): the functions of an encoder
//! dispatch table, each turning the core's pointers into typed arguments
//! for an [`Encoder`] implementation, and [`encoder_functions!`].

use core::ffi::{c_char, c_int, c_void};

use zeroize::Zeroizing;

use super::bio::CoreBio;
use super::guard::{c_bool, guard, SUCCESS};
use super::object::{borrow, free_object, new_object, set_object_params, Object};
use super::params::Params;
use super::sys::{OSSL_CORE_BIO, OSSL_PARAM, OSSL_PASSPHRASE_CALLBACK};
use super::Selection;
use crate::error::{ProviderError, Reason, Result};

/// One encoder (output structure and format), in safe Rust.
pub(crate) trait Encoder: 'static {
    /// The provider context.
    type Prov: Object;
    /// The key object it encodes.
    type Key: Object;
    /// The encoder context.
    type Ctx: Object;

    /// Parameters `set_ctx_params` takes.
    const SETTABLE: &'static [OSSL_PARAM];

    /// A new context.
    fn new(prov: &'static Self::Prov) -> Result<Self::Ctx>;
    /// Sets context parameters.
    fn set_params(ctx: &mut Self::Ctx, params: Params<'_>) -> Result<()>;
    /// Whether the encoder writes what `selection` names.
    fn does_selection(selection: Selection) -> bool;
    /// The encoding of `key` (secret-safe: it may hold a private key).
    fn encode(
        ctx: &Self::Ctx,
        key: &Self::Key,
        selection: Selection,
        passphrase: Passphrase<'_>,
    ) -> Result<Zeroizing<Vec<u8>>>;
}

/// The passphrase callback the core passes to `encode`, with its argument.
pub(crate) struct Passphrase<'a> {
    callback: OSSL_PASSPHRASE_CALLBACK,
    arg: *mut c_void,
    _call: core::marker::PhantomData<&'a ()>,
}

impl Passphrase<'_> {
    /// Whether the core gave a callback.
    pub(crate) fn is_set(&self) -> bool {
        self.callback.is_some()
    }

    /// Asks for the passphrase into `buffer`; its length, or `None` when
    /// there is no callback or it failed.
    pub(crate) fn read(&self, buffer: &mut [u8]) -> Option<usize> {
        let callback = self.callback?;
        let mut len = 0usize;
        // SAFETY: the core's callback and argument for this call; the
        // buffer has room for its length, and the callback writes at most
        // that and sets `len`.
        let ok = unsafe {
            callback(
                buffer.as_mut_ptr().cast::<c_char>(),
                buffer.len(),
                &mut len,
                core::ptr::null(),
                self.arg,
            )
        };
        (ok == 1 && len <= buffer.len()).then_some(len)
    }
}

/// `OSSL_FUNC_encoder_newctx`.
pub(crate) unsafe extern "C" fn newctx<T: Encoder>(provctx: *mut c_void) -> *mut c_void {
    // SAFETY: the core passes our provctx.
    unsafe { new_object(c"encoder_newctx", provctx, T::new) }
}

/// `OSSL_FUNC_encoder_freectx`.
pub(crate) unsafe extern "C" fn freectx<T: Encoder>(ctx: *mut c_void) {
    // SAFETY: from `newctx`; the core frees it once.
    unsafe { free_object::<T::Ctx>(c"encoder_freectx", ctx) }
}

/// `OSSL_FUNC_encoder_set_ctx_params`.
pub(crate) unsafe extern "C" fn set_ctx_params<T: Encoder>(
    ctx: *mut c_void,
    params: *const OSSL_PARAM,
) -> c_int {
    // SAFETY: the core passes our context and a valid array.
    unsafe {
        set_object_params(
            c"encoder_set_ctx_params",
            ctx,
            "encoder context",
            params,
            T::set_params,
        )
    }
}

/// `OSSL_FUNC_encoder_settable_ctx_params`.
pub(crate) unsafe extern "C" fn settable_ctx_params<T: Encoder>(
    _provctx: *mut c_void,
) -> *const OSSL_PARAM {
    T::SETTABLE.as_ptr()
}

/// `OSSL_FUNC_encoder_does_selection`.
pub(crate) unsafe extern "C" fn does_selection<T: Encoder>(
    _provctx: *mut c_void,
    selection: c_int,
) -> c_int {
    c_bool(T::does_selection(Selection(selection)))
}

/// `OSSL_FUNC_encoder_encode`: only keys of this provider (`object`), not
/// another provider's exported parameters (`abstract_object`).
pub(crate) unsafe extern "C" fn encode<T: Encoder>(
    ctx: *mut c_void,
    out: *mut OSSL_CORE_BIO,
    object: *const c_void,
    abstract_object: *const OSSL_PARAM,
    selection: c_int,
    callback: OSSL_PASSPHRASE_CALLBACK,
    callback_arg: *mut c_void,
) -> c_int {
    guard(c"encoder_encode", || {
        // SAFETY: the core passes our context.
        let ctx = unsafe { borrow::<T::Ctx>(ctx, "encoder context")? };
        if object.is_null() && !abstract_object.is_null() {
            return Err(ProviderError::new(Reason::WrongKeyType)
                .with_detail("only keys of this provider can be encoded"));
        }
        // SAFETY: the core passes one of our keys, and its BIO for this
        // call.
        let (key, mut out) = unsafe {
            (
                borrow::<T::Key>(object, "key")?,
                CoreBio::new(out, "output BIO")?,
            )
        };
        let passphrase = Passphrase {
            callback,
            arg: callback_arg,
            _call: core::marker::PhantomData,
        };
        out.write_all(&T::encode(ctx, key, Selection(selection), passphrase)?)?;
        SUCCESS
    })
}

/// The encoder dispatch table of `$t` (an [`Encoder`]).
macro_rules! encoder_functions {
    ($t:ty) => {
        $crate::ffi::dispatch_table![
            OSSL_FUNC_ENCODER_NEWCTX => OSSL_FUNC_encoder_newctx_fn = $crate::ffi::encoder::newctx::<$t>,
            OSSL_FUNC_ENCODER_FREECTX => OSSL_FUNC_encoder_freectx_fn = $crate::ffi::encoder::freectx::<$t>,
            OSSL_FUNC_ENCODER_SET_CTX_PARAMS => OSSL_FUNC_encoder_set_ctx_params_fn = $crate::ffi::encoder::set_ctx_params::<$t>,
            OSSL_FUNC_ENCODER_SETTABLE_CTX_PARAMS => OSSL_FUNC_encoder_settable_ctx_params_fn = $crate::ffi::encoder::settable_ctx_params::<$t>,
            OSSL_FUNC_ENCODER_DOES_SELECTION => OSSL_FUNC_encoder_does_selection_fn = $crate::ffi::encoder::does_selection::<$t>,
            OSSL_FUNC_ENCODER_ENCODE => OSSL_FUNC_encoder_encode_fn = $crate::ffi::encoder::encode::<$t>,
        ]
    };
}
pub(crate) use encoder_functions;
