//! The libssl and libcrypto calls the openssl crate lacks.

use std::ffi::{c_char, c_int, c_long, CStr};

use foreign_types_shared::ForeignTypeRef;
use openssl::pkey::PKeyRef;
use openssl::ssl::SslRef;
use openssl_sys as ffi;

extern "C" {
    /// libssl 3.0's, which openssl-sys does not declare.
    pub(crate) fn SSL_CTX_new_ex(
        libctx: *mut ffi::OSSL_LIB_CTX,
        propq: *const c_char,
        method: *const ffi::SSL_METHOD,
    ) -> *mut ffi::SSL_CTX;
    fn SSL_group_to_name(s: *mut ffi::SSL, id: c_int) -> *const c_char;
    fn EVP_PKEY_get0_provider(key: *const ffi::EVP_PKEY) -> *const ffi::OSSL_PROVIDER;
    fn OSSL_PROVIDER_get0_name(provider: *const ffi::OSSL_PROVIDER) -> *const c_char;
}

/// `SSL_get_negotiated_group(s)` is `SSL_ctrl(s, this, 0, NULL)`.
const SSL_CTRL_GET_NEGOTIATED_GROUP: c_int = 134;

/// What `SSL_get_negotiated_group` reports: a NID, or
/// [`crate::groups::TLSEXT_NID_UNKNOWN`] | the code point for a group libssl
/// has no NID for.
pub(crate) fn negotiated_group(ssl: &SslRef) -> c_long {
    let null = std::ptr::null_mut();
    // SAFETY: a live SSL (borrowed); this control reads state and takes no
    // pointer.
    unsafe { ffi::SSL_ctrl(ssl.as_ptr(), SSL_CTRL_GET_NEGOTIATED_GROUP, 0, null) }
}

/// libssl's name (`SSL_group_to_name`) of what [`negotiated_group`]
/// reported, if it has one.
pub(crate) fn group_name(ssl: &SslRef, reported: c_long) -> Option<&CStr> {
    let id = c_int::try_from(reported).ok()?;
    // SAFETY: a live SSL (borrowed); the name returned, if any, is libssl's
    // own (static, or the SSL_CTX's group list's), which outlives the borrow.
    let name = unsafe { SSL_group_to_name(ssl.as_ptr(), id) };
    // SAFETY: NULL or a NUL-terminated string, as above.
    (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) })
}

/// The name of the provider whose key management `key` belongs to (none
/// for a legacy key).
pub(crate) fn provider_of<T>(key: &PKeyRef<T>) -> Option<&CStr> {
    // SAFETY: a live EVP_PKEY (borrowed); its provider stays loaded while
    // the key lives.
    let provider = unsafe { EVP_PKEY_get0_provider(key.as_ptr()) };
    if provider.is_null() {
        return None;
    }
    // SAFETY: a live provider; its name is a NUL-terminated string it owns.
    let name = unsafe { OSSL_PROVIDER_get0_name(provider) };
    // SAFETY: as above.
    (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) })
}
