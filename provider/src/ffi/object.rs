//! The objects the provider hands the core as `void *`, and how pointers
//! to them become references again.
//!
//! Every object (key, operation context, and the provider context itself)
//! is a `Box` turned into a raw pointer by [`into_raw`]; the core passes it
//! back to our functions and frees it once, through the dispatch table's
//! `free`/`freectx`/`gen_cleanup`/`teardown`, which [`free`] implements.
//! Only this module turns those pointers back into references.
//!
//! # Why objects may hold `&'static` provider context
//!
//! [`provider_context`] hands out the provider context as `&'static`, and
//! keys and operation contexts keep that reference. It is sound because of
//! OpenSSL's teardown order: every method the core fetched from this
//! provider (`EVP_KEYMGMT`, `EVP_KEM`, `OSSL_ENCODER`, `OSSL_DECODER`)
//! holds a reference to the provider, every key and operation context holds
//! a reference to its method, and the core calls `teardown` (which frees
//! the context) only when the provider's last reference is released. No
//! object of ours outlives the context, so the reference is never used
//! after teardown; the `'static` only says that no borrow checker can see
//! that end.

use core::ffi::{c_int, c_void, CStr};

use super::guard::{guard, non_null, SUCCESS};
use super::params::Params;
use super::sys::OSSL_PARAM;
use super::upcalls::Instance;
use crate::error::{ProviderError, Reason, Result};

/// An object the core holds for us: it remembers the provider instance
/// that made it, so that errors raised while working on it go through that
/// instance.
pub(crate) trait Object: Send + Sync + 'static {
    /// The instance the object belongs to.
    fn instance(&self) -> Instance;
}

/// Moves `object` to the heap for the core.
pub(crate) fn into_raw<T: Object>(object: T) -> *mut c_void {
    Box::into_raw(Box::new(object)).cast()
}

/// Borrows an object the core hands back, and records its instance for
/// errors.
///
/// # Safety
/// `ptr` is NULL or a live `T` from [`into_raw`], not mutably borrowed.
pub(super) unsafe fn borrow<'a, T: Object>(ptr: *const c_void, what: &str) -> Result<&'a T> {
    non_null(ptr, what)?;
    // SAFETY: the caller's contract.
    let object = unsafe { &*ptr.cast::<T>() };
    object.instance().enter();
    Ok(object)
}

/// Mutably borrows an object the core hands back.
///
/// # Safety
/// As [`borrow`], and no other reference to the object is in use (the core
/// does not share an object while it is being changed).
pub(super) unsafe fn borrow_mut<'a, T: Object>(ptr: *mut c_void, what: &str) -> Result<&'a mut T> {
    non_null(ptr, what)?;
    // SAFETY: the caller's contract.
    let object = unsafe { &mut *ptr.cast::<T>() };
    object.instance().enter();
    Ok(object)
}

/// Borrows the provider context behind a `provctx` pointer, for as long as
/// the objects made with it (see the module documentation).
///
/// # Safety
/// `ptr` is NULL or the `provctx` this provider's init returned, not yet
/// torn down.
pub(super) unsafe fn provider_context<P: Object>(ptr: *mut c_void) -> Result<&'static P> {
    // SAFETY: the caller's contract; the context lives until teardown,
    // after every object that may keep this reference (module docs).
    unsafe { borrow::<P>(ptr, "provider context") }
}

/// Frees an object the core hands back; NULL is ignored.
///
/// # Safety
/// `ptr` is NULL or a `T` from [`into_raw`], not used again.
pub(crate) unsafe fn free<T>(ptr: *mut c_void) {
    if !ptr.is_null() {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(ptr.cast::<T>()) });
    }
}

/// The body of every `new`/`newctx` entry: borrows the provider context
/// and hands the core the object `make` builds with it.
///
/// # Safety
/// As [`provider_context`].
pub(super) unsafe fn new_object<P: Object, T: Object>(
    function: &'static CStr,
    provctx: *mut c_void,
    make: impl FnOnce(&'static P) -> Result<T>,
) -> *mut c_void {
    guard(function, || {
        // SAFETY: the caller's contract.
        let prov = unsafe { provider_context::<P>(provctx)? };
        Ok(into_raw(make(prov)?))
    })
}

/// The body of every `free`/`freectx`/`gen_cleanup` entry.
///
/// # Safety
/// As [`free`].
pub(super) unsafe fn free_object<T>(function: &'static CStr, ptr: *mut c_void) {
    guard(function, || {
        // SAFETY: the caller's contract.
        unsafe { free::<T>(ptr) };
        Ok(())
    })
}

/// The body of every `set_params`-like entry: borrows the object mutably
/// and the caller's array, and runs `set`.
///
/// # Safety
/// As [`borrow_mut`] for `ptr`; `params` as `Params::from_ptr`'s.
pub(super) unsafe fn set_object_params<T: Object>(
    function: &'static CStr,
    ptr: *mut c_void,
    what: &str,
    params: *const OSSL_PARAM,
    set: impl FnOnce(&mut T, Params<'_>) -> Result<()>,
) -> c_int {
    guard(function, || {
        // SAFETY: the caller's contract.
        let (object, params) = unsafe { (borrow_mut::<T>(ptr, what)?, Params::from_ptr(params)) };
        set(object, params)?;
        SUCCESS
    })
}

/// A reference the core lends us for longer than one call: the key an
/// operation context works on, which the core keeps alive for as long as
/// the context (an `EVP_PKEY_CTX` holds its `EVP_PKEY`).
pub(crate) struct Lent<T: Object>(core::ptr::NonNull<T>);

// SAFETY: a shared reference to a `Sync` object.
unsafe impl<T: Object> Send for Lent<T> {}
// SAFETY: as above.
unsafe impl<T: Object> Sync for Lent<T> {}

impl<T: Object> Clone for Lent<T> {
    fn clone(&self) -> Self {
        Self(self.0)
    }
}

impl<T: Object> Lent<T> {
    /// Keeps the object behind `ptr`.
    ///
    /// # Safety
    /// `ptr` is a live `T` from [`into_raw`] that outlives the holder of
    /// the returned value.
    pub(super) unsafe fn new(ptr: *mut c_void) -> Result<Self> {
        non_null(ptr, "key")?;
        core::ptr::NonNull::new(ptr.cast::<T>())
            .map(Self)
            .ok_or_else(|| ProviderError::new(Reason::NullArgument))
    }

    /// The object.
    pub(crate) fn get(&self) -> &T {
        // SAFETY: `new`'s contract: alive while `self` is.
        unsafe { self.0.as_ref() }
    }
}
