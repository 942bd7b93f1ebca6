//! The C face of the provider object: `OSSL_provider_init`'s work, and the
//! functions of the provider's own dispatch table, each turning the core's
//! pointers into typed arguments for a [`Provider`] implementation.

use core::ffi::{c_char, c_int, c_void, CStr};

use super::guard::{guard, non_null, SUCCESS};
use super::libcrypto::{self, ChildLibCtx};
use super::object::{self, provider_context, Object};
use super::params::{ParamCallback, ParamsMut};
use super::sys::{
    OSSL_ALGORITHM, OSSL_CALLBACK, OSSL_CORE_HANDLE, OSSL_DISPATCH, OSSL_ITEM, OSSL_PARAM,
};
use super::upcalls::{self, Instance};
use crate::error::Result;

/// The provider, in safe Rust.
pub(crate) trait Provider: 'static {
    /// The per-instance context (what `provctx` points at).
    type Ctx: Object;
    /// The provider's dispatch table ([`provider_functions!`]).
    const FUNCTIONS: &'static [OSSL_DISPATCH];
    /// Parameters `get_params` answers.
    const GETTABLE: &'static [OSSL_PARAM];
    /// The reason strings, terminated by a zero entry.
    const REASON_STRINGS: &'static [OSSL_ITEM];

    /// Sets up one instance.
    fn init(instance: Instance, core: &Core) -> Result<Self::Ctx>;
    /// Answers the provider parameters asked for.
    fn get_params(params: &mut ParamsMut<'_>) -> Result<()>;
    /// The algorithms of an operation on this instance, terminated by an
    /// empty entry, or `None` for an operation the provider does not serve.
    fn query_operation(ctx: &Self::Ctx, operation: u32) -> Option<&'static [OSSL_ALGORITHM]>;
    /// Reports `capability` of this instance to `callback`, once per item
    /// (TLS groups); the callback's failure stops the report with 0.
    fn capabilities(
        ctx: &Self::Ctx,
        capability: &CStr,
        callback: ParamCallback<'_>,
    ) -> Result<c_int>;
}

/// What `OSSL_provider_init` got from the core, for setting up an instance.
pub(crate) struct Core {
    handle: *const OSSL_CORE_HANDLE,
    input: *const OSSL_DISPATCH,
}

impl Core {
    /// A child of the core's library context: fetches and randomness
    /// through it follow the application's providers, properties and DRBG.
    pub(crate) fn child_libctx(&self) -> Result<ChildLibCtx> {
        let lib = libcrypto::get()?;
        // SAFETY: `handle` and `input` are init's arguments (see `init`).
        unsafe { ChildLibCtx::new(lib, self.handle, self.input) }
    }
}

/// The work of `OSSL_provider_init`: records the instance and the core's
/// functions, resolves libcrypto, sets the instance up, and hands the core
/// the dispatch table and the context.
///
/// # Safety
/// The arguments are `OSSL_provider_init`'s, from OpenSSL's core.
pub(crate) unsafe fn init<T: Provider>(
    handle: *const OSSL_CORE_HANDLE,
    input: *const OSSL_DISPATCH,
    out: *mut *const OSSL_DISPATCH,
    provctx: *mut *mut c_void,
) -> c_int {
    guard(c"OSSL_provider_init", || {
        non_null(out, "dispatch out-pointer")?;
        non_null(provctx, "provctx out-pointer")?;
        non_null(input, "core dispatch table")?;
        // SAFETY: `input` is the core's table (init's contract).
        let upcalls = unsafe { upcalls::register(handle, input) };
        let instance = Instance::from_handle(handle);
        instance.enter();
        let result = libcrypto::init(upcalls.anchor)
            .and_then(|_| T::init(instance, &Core { handle, input }));
        match result {
            Ok(ctx) => {
                // SAFETY: both out-pointers were checked non-NULL above.
                unsafe {
                    *out = T::FUNCTIONS.as_ptr();
                    *provctx = object::into_raw(ctx);
                }
                SUCCESS
            }
            Err(error) => {
                // Raise while this handle is still registered, then forget it.
                upcalls::raise(&error, c"OSSL_provider_init");
                upcalls::unregister(handle);
                Ok(0)
            }
        }
    })
}

/// `OSSL_FUNC_provider_teardown`.
pub(crate) unsafe extern "C" fn teardown<T: Provider>(provctx: *mut c_void) {
    guard(c"teardown", || {
        if provctx.is_null() {
            return Ok(());
        }
        // SAFETY: `provctx` came from `init`; the core tears it down once,
        // after every object of ours is freed (see `ffi::object`).
        let instance = unsafe { provider_context::<T::Ctx>(provctx)? }.instance();
        upcalls::unregister(instance.handle());
        // SAFETY: as above; nothing uses the context from here on.
        unsafe { object::free::<T::Ctx>(provctx) };
        Ok(())
    })
}

/// `OSSL_FUNC_provider_gettable_params`.
pub(crate) unsafe extern "C" fn gettable_params<T: Provider>(
    _provctx: *mut c_void,
) -> *const OSSL_PARAM {
    T::GETTABLE.as_ptr()
}

/// `OSSL_FUNC_provider_get_params`.
pub(crate) unsafe extern "C" fn get_params<T: Provider>(
    _provctx: *mut c_void,
    params: *mut OSSL_PARAM,
) -> c_int {
    guard(c"get_params", || {
        // SAFETY: the core passes a valid, terminated array (or NULL).
        T::get_params(&mut unsafe { ParamsMut::from_ptr(params) })?;
        SUCCESS
    })
}

/// `OSSL_FUNC_provider_query_operation`.
pub(crate) unsafe extern "C" fn query_operation<T: Provider>(
    provctx: *mut c_void,
    operation_id: c_int,
    no_cache: *mut c_int,
) -> *const OSSL_ALGORITHM {
    guard(c"query_operation", || {
        if !no_cache.is_null() {
            // SAFETY: non-NULL out-pointer from the core.
            unsafe { *no_cache = 0 };
        }
        // SAFETY: the core passes the `provctx` init returned.
        let ctx = unsafe { provider_context::<T::Ctx>(provctx)? };
        let operation = u32::try_from(operation_id).unwrap_or(0);
        Ok(T::query_operation(ctx, operation).map_or(core::ptr::null(), <[_]>::as_ptr))
    })
}

/// `OSSL_FUNC_provider_get_capabilities`.
pub(crate) unsafe extern "C" fn get_capabilities<T: Provider>(
    provctx: *mut c_void,
    capability: *const c_char,
    callback: OSSL_CALLBACK,
    arg: *mut c_void,
) -> c_int {
    guard(c"get_capabilities", || {
        non_null(capability, "capability name")?;
        // SAFETY: the core passes the `provctx` init returned, a
        // NUL-terminated name, and a callback with the argument it expects.
        let (ctx, capability, callback) = unsafe {
            (
                provider_context::<T::Ctx>(provctx)?,
                CStr::from_ptr(capability),
                ParamCallback::new(callback, arg)?,
            )
        };
        T::capabilities(ctx, capability, callback)
    })
}

/// `OSSL_FUNC_provider_get_reason_strings`.
pub(crate) unsafe extern "C" fn get_reason_strings<T: Provider>(
    _provctx: *mut c_void,
) -> *const OSSL_ITEM {
    T::REASON_STRINGS.as_ptr()
}

/// The provider dispatch table of `$t` (a [`Provider`]).
macro_rules! provider_functions {
    ($t:ty) => {
        $crate::ffi::dispatch_table![
            OSSL_FUNC_PROVIDER_TEARDOWN => OSSL_FUNC_provider_teardown_fn = $crate::ffi::provider::teardown::<$t>,
            OSSL_FUNC_PROVIDER_GETTABLE_PARAMS => OSSL_FUNC_provider_gettable_params_fn = $crate::ffi::provider::gettable_params::<$t>,
            OSSL_FUNC_PROVIDER_GET_PARAMS => OSSL_FUNC_provider_get_params_fn = $crate::ffi::provider::get_params::<$t>,
            OSSL_FUNC_PROVIDER_QUERY_OPERATION => OSSL_FUNC_provider_query_operation_fn = $crate::ffi::provider::query_operation::<$t>,
            OSSL_FUNC_PROVIDER_GET_CAPABILITIES => OSSL_FUNC_provider_get_capabilities_fn = $crate::ffi::provider::get_capabilities::<$t>,
            OSSL_FUNC_PROVIDER_GET_REASON_STRINGS => OSSL_FUNC_provider_get_reason_strings_fn = $crate::ffi::provider::get_reason_strings::<$t>,
        ]
    };
}
pub(crate) use provider_functions;
