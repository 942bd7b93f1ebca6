//! The one wrapper around every entry point: runs the safe body, catches any
//! panic, and turns an error into an OpenSSL error plus the C failure value.

use core::ffi::{c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::upcalls;
use crate::error::{ProviderError, Reason, Result};

/// A C return type and the value that means failure.
pub(crate) trait FfiReturn {
    /// 0, NULL or nothing.
    const FAILURE: Self;
}

impl FfiReturn for c_int {
    const FAILURE: Self = 0;
}

impl<T> FfiReturn for *mut T {
    const FAILURE: Self = core::ptr::null_mut();
}

impl<T> FfiReturn for *const T {
    const FAILURE: Self = core::ptr::null();
}

impl FfiReturn for () {
    const FAILURE: Self = ();
}

/// Runs `body`; on `Err` or panic, raises the error (attributed to
/// `function`) and returns `R::FAILURE`. No panic crosses into C.
pub(crate) fn guard<R: FfiReturn>(function: &'static CStr, body: impl FnOnce() -> Result<R>) -> R {
    // The body records which instance it works for (`Instance::enter`) as
    // it resolves its object; start with none, and restore the caller's
    // afterwards (the core may call back into us from inside an entry).
    let outer = upcalls::take_current();
    let result = run(function, body);
    upcalls::restore_current(outer);
    result
}

fn run<R: FfiReturn>(function: &'static CStr, body: impl FnOnce() -> Result<R>) -> R {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value,
        Ok(Err(error)) => {
            upcalls::raise(&error, function);
            R::FAILURE
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            let error = ProviderError::new(Reason::InternalError).with_detail(what);
            // Raising must not panic again; a failure here is swallowed.
            let _ = catch_unwind(AssertUnwindSafe(|| upcalls::raise(&error, function)));
            R::FAILURE
        }
    }
}

/// `Ok(1)`: the C "success" for `int` entry points.
pub(crate) const SUCCESS: Result<c_int> = Ok(1);

/// Turns a boolean into the C `int` convention.
pub(crate) fn c_bool(value: bool) -> c_int {
    c_int::from(value)
}

/// Fails with `NullArgument` when `ptr` is NULL.
pub(crate) fn non_null<T>(ptr: *const T, what: &str) -> Result<()> {
    if ptr.is_null() {
        Err(ProviderError::new(Reason::NullArgument).with_detail(format!("NULL {what}")))
    } else {
        Ok(())
    }
}
