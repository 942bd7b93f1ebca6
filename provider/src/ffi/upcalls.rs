//! The core's functions handed to `OSSL_provider_init` ("upcalls"): error
//! reporting, configuration values, object registration and core BIOs.
//!
//! The function pointers are the same for every instance of the provider in
//! a process (they live in the one libcrypto that loaded us); the handle is
//! per instance. An error is raised through the instance that the failing
//! call's object belongs to (each entry point records it when it resolves
//! its object), so it carries that instance's library code and reason
//! strings.

use core::cell::Cell;
use core::ffi::{c_char, c_void, CStr};
use core::ptr;
use std::ffi::CString;
use std::sync::{Mutex, OnceLock};

use super::sys::{self, OSSL_CORE_HANDLE, OSSL_DISPATCH, OSSL_PARAM};
use crate::error::ProviderError;

/// The upcalls this provider uses.
pub(crate) struct Upcalls {
    get_params: sys::OSSL_FUNC_core_get_params_fn,
    new_error: sys::OSSL_FUNC_core_new_error_fn,
    set_error_debug: sys::OSSL_FUNC_core_set_error_debug_fn,
    vset_error: sys::OSSL_FUNC_core_vset_error_fn,
    obj_create: sys::OSSL_FUNC_core_obj_create_fn,
    pub(super) bio_read_ex: sys::OSSL_FUNC_BIO_read_ex_fn,
    pub(super) bio_write_ex: sys::OSSL_FUNC_BIO_write_ex_fn,
    /// One core function's address, to find the libcrypto that loaded us.
    pub(crate) anchor: *const c_void,
}

// SAFETY: plain function pointers into libcrypto, callable from any thread
// (OpenSSL's core functions are thread-safe).
unsafe impl Send for Upcalls {}
// SAFETY: as above; the struct is never mutated after init.
unsafe impl Sync for Upcalls {}

/// One loaded instance of the provider, as the core knows it (its handle).
/// Objects remember the instance that made them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Instance(usize);

impl Instance {
    /// No instance, for unit tests.
    #[cfg(test)]
    pub(crate) fn none() -> Self {
        Self(0)
    }

    /// The instance with this handle.
    pub(super) fn from_handle(handle: *const OSSL_CORE_HANDLE) -> Self {
        Self(handle as usize)
    }

    /// The core handle.
    pub(super) fn handle(self) -> *const OSSL_CORE_HANDLE {
        self.0 as *const OSSL_CORE_HANDLE
    }

    /// Records this instance as the one the current entry point works for:
    /// an error raised before the entry point returns goes through it.
    pub(crate) fn enter(self) {
        CURRENT.with(|c| c.set(Some(self)));
    }
}

thread_local! {
    /// The instance the running entry point works for (see `ffi::guard`).
    static CURRENT: Cell<Option<Instance>> = const { Cell::new(None) };
}

/// Clears the current instance, returning the previous one (entry points
/// start with none; nested calls restore the outer one).
pub(crate) fn take_current() -> Option<Instance> {
    CURRENT.with(|c| c.take())
}

/// Restores what `take_current` returned.
pub(crate) fn restore_current(previous: Option<Instance>) {
    CURRENT.with(|c| c.set(previous));
}

static UPCALLS: OnceLock<Upcalls> = OnceLock::new();
/// Handles of the live instances, most recent last (as integers).
static LIVE_HANDLES: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// Reads the upcalls from the core's dispatch table (first init only) and
/// records `handle` as live.
///
/// # Safety
/// `input` is the core's dispatch table passed to `OSSL_provider_init`.
pub(super) unsafe fn register(
    handle: *const OSSL_CORE_HANDLE,
    input: *const OSSL_DISPATCH,
) -> &'static Upcalls {
    let upcalls = UPCALLS.get_or_init(|| {
        let mut u = Upcalls {
            get_params: None,
            new_error: None,
            set_error_debug: None,
            vset_error: None,
            obj_create: None,
            bio_read_ex: None,
            bio_write_ex: None,
            anchor: ptr::null(),
        };
        let mut at = input;
        // SAFETY: the core's table is terminated by a zero function id;
        // each entry's function has the type its id names (the casts below).
        unsafe {
            while !at.is_null() && (*at).function_id != 0 {
                let f = (*at).function;
                match (*at).function_id as u32 {
                    sys::OSSL_FUNC_CORE_GET_PARAMS => {
                        u.get_params = cast(f);
                        u.anchor = f.map_or(ptr::null(), |f| f as *const c_void);
                    }
                    sys::OSSL_FUNC_CORE_NEW_ERROR => u.new_error = cast(f),
                    sys::OSSL_FUNC_CORE_SET_ERROR_DEBUG => u.set_error_debug = cast(f),
                    sys::OSSL_FUNC_CORE_VSET_ERROR => u.vset_error = cast(f),
                    sys::OSSL_FUNC_CORE_OBJ_CREATE => u.obj_create = cast(f),
                    sys::OSSL_FUNC_BIO_READ_EX => u.bio_read_ex = cast(f),
                    sys::OSSL_FUNC_BIO_WRITE_EX => u.bio_write_ex = cast(f),
                    _ => {}
                }
                at = at.add(1);
            }
        }
        u
    });
    if let Ok(mut live) = LIVE_HANDLES.lock() {
        live.push(handle as usize);
    }
    upcalls
}

/// Casts a dispatch entry's generic function to the type its id names.
///
/// # Safety
/// `F` must be the `Option<unsafe extern "C" fn(..)>` type of the entry's id.
unsafe fn cast<F: Copy>(f: Option<unsafe extern "C" fn()>) -> F {
    const { assert!(size_of::<F>() == size_of::<Option<unsafe extern "C" fn()>>()) };
    // SAFETY: same size (checked at compile time); the caller guarantees
    // the entry really has type `F`.
    unsafe { core::mem::transmute_copy(&f) }
}

/// Forgets `handle` (provider teardown).
pub(super) fn unregister(handle: *const OSSL_CORE_HANDLE) {
    if let Ok(mut live) = LIVE_HANDLES.lock() {
        if let Some(at) = live.iter().rposition(|&h| h == handle as usize) {
            live.remove(at);
        }
        if live.is_empty() {
            // Free the buffer: the module may be unloaded next, and a heap
            // block only its statics point to would show up as a leak.
            live.shrink_to_fit();
        }
    }
}

/// The upcalls, once any instance has been initialised.
pub(crate) fn upcalls() -> Option<&'static Upcalls> {
    UPCALLS.get()
}

/// Puts `error` on OpenSSL's error stack, attributed to `function`, through
/// the current instance (or, when an entry point had no object to tell, the
/// newest live one). The live-instance lock is held during the upcalls, so
/// no instance is torn down under them.
pub(crate) fn raise(error: &ProviderError, function: &'static CStr) {
    let Some(u) = upcalls() else {
        return;
    };
    let (Some(new_error), Some(vset_error)) = (u.new_error, u.vset_error) else {
        return;
    };
    let Ok(live) = LIVE_HANDLES.lock() else {
        return;
    };
    let current = CURRENT.with(Cell::get);
    let Some(instance) = current.or_else(|| live.last().map(|&h| Instance(h))) else {
        return;
    };
    let handle = instance.handle();
    // The detail becomes the format string, with every '%' doubled so that
    // it has no conversions and the (empty) argument list is never read.
    let detail = error
        .detail
        .as_deref()
        .map(|d| CString::new(d.replace('%', "%%").replace('\0', "")).unwrap_or_default());
    // SAFETY: `handle` is a live instance's handle (the current entry
    // point's object belongs to it, or it is in the live list, locked); the
    // strings outlive the calls; `args` is a zeroed va_list that vset_error
    // never reads because the format has no conversions (or is NULL).
    unsafe {
        new_error(handle);
        if let Some(set_debug) = u.set_error_debug {
            set_debug(handle, c"mlkem-provider".as_ptr(), 0, function.as_ptr());
        }
        let format = detail.as_ref().map_or(ptr::null(), |d| d.as_ptr());
        // x86-64's va_list is a one-element array (passed as a pointer),
        // AArch64's a struct passed by value.
        #[cfg(target_arch = "x86_64")]
        {
            let mut args: sys::__va_list_tag = core::mem::zeroed();
            vset_error(handle, error.reason.code(), format, &mut args);
        }
        #[cfg(target_arch = "aarch64")]
        vset_error(handle, error.reason.code(), format, core::mem::zeroed());
    }
    drop(live);
}

/// Reads one configuration value of this provider's `openssl.cnf` section.
pub(crate) fn config_value(instance: Instance, key: &CStr) -> Option<String> {
    let handle = instance.handle();
    let get_params = upcalls()?.get_params?;
    let mut value: *const c_char = ptr::null();
    let mut params = [
        OSSL_PARAM {
            key: key.as_ptr(),
            data_type: sys::OSSL_PARAM_UTF8_PTR,
            data: ptr::from_mut(&mut value).cast(),
            data_size: size_of::<*const c_char>(),
            return_size: usize::MAX,
        },
        super::params::END,
    ];
    // SAFETY: `params` is a terminated array whose one entry points at
    // `value`; the core stores a pointer to its own, longer-lived string.
    let ok = unsafe { get_params(handle, params.as_mut_ptr()) };
    if ok != 1 || value.is_null() {
        return None;
    }
    // SAFETY: the core returned a NUL-terminated configuration string.
    Some(
        unsafe { CStr::from_ptr(value) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// Registers an OID with its short and long names (`core_obj_create`);
/// true when the core knows it afterwards.
pub(crate) fn create_object(
    instance: Instance,
    oid: &CStr,
    short_name: &CStr,
    long_name: &CStr,
) -> bool {
    let handle = instance.handle();
    let Some(obj_create) = upcalls().and_then(|u| u.obj_create) else {
        return false;
    };
    // SAFETY: valid handle and NUL-terminated strings.
    unsafe {
        obj_create(
            handle,
            oid.as_ptr(),
            short_name.as_ptr(),
            long_name.as_ptr(),
        ) == 1
    }
}
