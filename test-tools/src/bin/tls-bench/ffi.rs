//! The libssl calls the openssl crate lacks.

use std::ffi::{c_char, c_int, c_long};

use openssl_sys as ffi;

extern "C" {
    /// libssl 3.0's, which openssl-sys does not declare.
    pub(crate) fn SSL_CTX_new_ex(
        libctx: *mut ffi::OSSL_LIB_CTX,
        propq: *const c_char,
        method: *const ffi::SSL_METHOD,
    ) -> *mut ffi::SSL_CTX;
}

/// `SSL_get_negotiated_group(s)` is `SSL_ctrl(s, this, 0, NULL)`.
pub(crate) const SSL_CTRL_GET_NEGOTIATED_GROUP: c_int = 134;
/// libssl reports a group it has no NID for as this bit or'ed with the
/// group's TLS code point.
pub(crate) const TLSEXT_NID_UNKNOWN: c_long = 0x100_0000;
