//! The libcrypto functions the provider calls, resolved at init from the
//! libcrypto that loaded it.
//!
//! The module is not linked against libcrypto: a provider linked against
//! `libcrypto.so.3` would pull a second libcrypto into an OpenSSL 4.0
//! (`libcrypto.so.4`) process, and one linked against the system's would
//! bind to the wrong library in a 3.5 process that found its own through
//! an rpath. Instead, `dladdr` on one of the core's functions names the
//! library that is calling us, and `dlsym` on that library gives each
//! function. Every one used here exists with the same signature from 3.0
//! through 4.0.

use core::ffi::{c_char, c_int, c_long, c_uchar, c_uint, c_void, CStr};
use core::ptr;
use std::sync::OnceLock;

use super::sys::{OSSL_CORE_HANDLE, OSSL_DISPATCH, OSSL_PARAM};
use crate::error::{ProviderError, Reason};

/// `OSSL_LIB_CTX` (opaque).
pub(crate) type LibCtx = c_void;

/// The resolved functions.
pub(crate) struct LibCrypto {
    pub(crate) lib_ctx_new_child:
        unsafe extern "C" fn(*const OSSL_CORE_HANDLE, *const OSSL_DISPATCH) -> *mut LibCtx,
    pub(crate) lib_ctx_free: unsafe extern "C" fn(*mut LibCtx),
    pub(crate) rand_priv_bytes_ex:
        unsafe extern "C" fn(*mut LibCtx, *mut c_uchar, usize, c_uint) -> c_int,
    pub(crate) d2i_pkcs8_priv_key_info:
        unsafe extern "C" fn(*mut *mut c_void, *mut *const c_uchar, c_long) -> *mut c_void,
    pub(crate) pkcs8_priv_key_info_free: unsafe extern "C" fn(*mut c_void),
    pub(crate) evp_cipher_fetch:
        unsafe extern "C" fn(*mut LibCtx, *const c_char, *const c_char) -> *mut c_void,
    pub(crate) evp_cipher_free: unsafe extern "C" fn(*mut c_void),
    #[allow(clippy::type_complexity)]
    pub(crate) pkcs8_encrypt_ex: unsafe extern "C" fn(
        c_int,
        *const c_void,
        *const c_char,
        c_int,
        *const c_uchar,
        c_int,
        c_int,
        *mut c_void,
        *mut LibCtx,
        *const c_char,
    ) -> *mut c_void,
    pub(crate) i2d_x509_sig: unsafe extern "C" fn(*const c_void, *mut *mut c_uchar) -> c_int,
    pub(crate) x509_sig_free: unsafe extern "C" fn(*mut c_void),
    // EVP_PKEY, for the classical half of the hybrid groups.
    pub(crate) evp_pkey_ctx_new_from_name:
        unsafe extern "C" fn(*mut LibCtx, *const c_char, *const c_char) -> *mut c_void,
    pub(crate) evp_pkey_ctx_new_from_pkey:
        unsafe extern "C" fn(*mut LibCtx, *mut c_void, *const c_char) -> *mut c_void,
    pub(crate) evp_pkey_ctx_free: unsafe extern "C" fn(*mut c_void),
    pub(crate) evp_pkey_keygen_init: unsafe extern "C" fn(*mut c_void) -> c_int,
    pub(crate) evp_pkey_ctx_set_group_name:
        unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int,
    pub(crate) evp_pkey_keygen: unsafe extern "C" fn(*mut c_void, *mut *mut c_void) -> c_int,
    pub(crate) evp_pkey_fromdata_init: unsafe extern "C" fn(*mut c_void) -> c_int,
    pub(crate) evp_pkey_fromdata:
        unsafe extern "C" fn(*mut c_void, *mut *mut c_void, c_int, *mut OSSL_PARAM) -> c_int,
    pub(crate) evp_pkey_get_params: unsafe extern "C" fn(*const c_void, *mut OSSL_PARAM) -> c_int,
    pub(crate) evp_pkey_derive_init: unsafe extern "C" fn(*mut c_void) -> c_int,
    pub(crate) evp_pkey_derive_set_peer_ex:
        unsafe extern "C" fn(*mut c_void, *mut c_void, c_int) -> c_int,
    pub(crate) evp_pkey_derive:
        unsafe extern "C" fn(*mut c_void, *mut c_uchar, *mut usize) -> c_int,
    pub(crate) evp_pkey_up_ref: unsafe extern "C" fn(*mut c_void) -> c_int,
    pub(crate) evp_pkey_free: unsafe extern "C" fn(*mut c_void),
}

static LIBCRYPTO: OnceLock<Result<LibCrypto, String>> = OnceLock::new();

/// Resolves the functions from the library holding `anchor` (a core
/// function), once per process.
pub(crate) fn init(anchor: *const c_void) -> Result<&'static LibCrypto, ProviderError> {
    LIBCRYPTO
        .get_or_init(|| resolve(anchor))
        .as_ref()
        .map_err(|why| ProviderError::new(Reason::LibcryptoFailure).with_detail(why.clone()))
}

/// The resolved functions (after a successful `init`).
pub(crate) fn get() -> Result<&'static LibCrypto, ProviderError> {
    match LIBCRYPTO.get() {
        Some(Ok(lib)) => Ok(lib),
        _ => {
            Err(ProviderError::new(Reason::LibcryptoFailure).with_detail("libcrypto not resolved"))
        }
    }
}

fn resolve(anchor: *const c_void) -> Result<LibCrypto, String> {
    let handle = library_handle(anchor);
    let symbol = |name: &CStr| -> Result<*mut c_void, String> {
        // SAFETY: `handle` is a dlopen handle (or RTLD_DEFAULT) and `name`
        // a NUL-terminated symbol name.
        let f = unsafe { libc::dlsym(handle, name.as_ptr()) };
        if f.is_null() {
            Err(format!("libcrypto has no {}", name.to_string_lossy()))
        } else {
            Ok(f)
        }
    };
    // SAFETY: (each transmute) the symbol is the libcrypto function of that
    // name, whose C signature (OpenSSL 3.0-4.0) is the field's type.
    unsafe {
        Ok(LibCrypto {
            lib_ctx_new_child: function(symbol(c"OSSL_LIB_CTX_new_child")?),
            lib_ctx_free: function(symbol(c"OSSL_LIB_CTX_free")?),
            rand_priv_bytes_ex: function(symbol(c"RAND_priv_bytes_ex")?),
            d2i_pkcs8_priv_key_info: function(symbol(c"d2i_PKCS8_PRIV_KEY_INFO")?),
            pkcs8_priv_key_info_free: function(symbol(c"PKCS8_PRIV_KEY_INFO_free")?),
            evp_cipher_fetch: function(symbol(c"EVP_CIPHER_fetch")?),
            evp_cipher_free: function(symbol(c"EVP_CIPHER_free")?),
            pkcs8_encrypt_ex: function(symbol(c"PKCS8_encrypt_ex")?),
            i2d_x509_sig: function(symbol(c"i2d_X509_SIG")?),
            x509_sig_free: function(symbol(c"X509_SIG_free")?),
            evp_pkey_ctx_new_from_name: function(symbol(c"EVP_PKEY_CTX_new_from_name")?),
            evp_pkey_ctx_new_from_pkey: function(symbol(c"EVP_PKEY_CTX_new_from_pkey")?),
            evp_pkey_ctx_free: function(symbol(c"EVP_PKEY_CTX_free")?),
            evp_pkey_keygen_init: function(symbol(c"EVP_PKEY_keygen_init")?),
            evp_pkey_ctx_set_group_name: function(symbol(c"EVP_PKEY_CTX_set_group_name")?),
            evp_pkey_keygen: function(symbol(c"EVP_PKEY_keygen")?),
            evp_pkey_fromdata_init: function(symbol(c"EVP_PKEY_fromdata_init")?),
            evp_pkey_fromdata: function(symbol(c"EVP_PKEY_fromdata")?),
            evp_pkey_get_params: function(symbol(c"EVP_PKEY_get_params")?),
            evp_pkey_derive_init: function(symbol(c"EVP_PKEY_derive_init")?),
            evp_pkey_derive_set_peer_ex: function(symbol(c"EVP_PKEY_derive_set_peer_ex")?),
            evp_pkey_derive: function(symbol(c"EVP_PKEY_derive")?),
            evp_pkey_up_ref: function(symbol(c"EVP_PKEY_up_ref")?),
            evp_pkey_free: function(symbol(c"EVP_PKEY_free")?),
        })
    }
}

/// Reinterprets a `dlsym` result as the function type of its field.
///
/// # Safety
/// The symbol must be a function whose C signature is `F`.
unsafe fn function<F: Copy>(symbol: *mut c_void) -> F {
    const { assert!(size_of::<F>() == size_of::<*mut c_void>()) };
    // SAFETY: same size (checked at compile time); the caller guarantees
    // the signature.
    unsafe { core::mem::transmute_copy(&symbol) }
}

/// A `dlopen` handle for the object containing `anchor`, or `RTLD_DEFAULT`
/// when that cannot be found (a statically linked application).
fn library_handle(anchor: *const c_void) -> *mut c_void {
    if anchor.is_null() {
        return libc::RTLD_DEFAULT;
    }
    // SAFETY: `info` is plain data that dladdr fills in.
    let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
    // SAFETY: dladdr only inspects the address.
    if unsafe { libc::dladdr(anchor, &mut info) } == 0 || info.dli_fname.is_null() {
        return libc::RTLD_DEFAULT;
    }
    // SAFETY: `dli_fname` names an object already loaded (RTLD_NOLOAD), so
    // this only takes a reference to it; it is never closed, like libcrypto.
    let handle = unsafe { libc::dlopen(info.dli_fname, libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if handle.is_null() {
        libc::RTLD_DEFAULT
    } else {
        handle
    }
}

/// A child library context of the core's: fetches and randomness through
/// it follow the application's providers, properties and DRBG.
pub(crate) struct ChildLibCtx(*mut LibCtx);

// SAFETY: an OSSL_LIB_CTX is thread-safe; the pointer is owned.
unsafe impl Send for ChildLibCtx {}
// SAFETY: as above.
unsafe impl Sync for ChildLibCtx {}

impl ChildLibCtx {
    /// Creates the child context.
    ///
    /// # Safety
    /// `handle` and `input` are those passed to `OSSL_provider_init`.
    pub(super) unsafe fn new(
        lib: &LibCrypto,
        handle: *const OSSL_CORE_HANDLE,
        input: *const OSSL_DISPATCH,
    ) -> Result<Self, ProviderError> {
        // SAFETY: forwarded from the caller.
        let ctx = unsafe { (lib.lib_ctx_new_child)(handle, input) };
        if ctx.is_null() {
            return Err(ProviderError::new(Reason::LibcryptoFailure)
                .with_detail("OSSL_LIB_CTX_new_child failed"));
        }
        Ok(Self(ctx))
    }

    /// A context that is none, for unit tests that build objects holding a
    /// provider context but never fetch or draw randomness through it.
    #[cfg(test)]
    pub(crate) fn none() -> Self {
        Self(ptr::null_mut())
    }

    /// The raw pointer, for libcrypto calls.
    pub(super) fn as_ptr(&self) -> *mut LibCtx {
        self.0
    }

    /// Fills `out` from the context's private DRBG (`RAND_priv_bytes_ex`)
    /// at `strength` bits: the one OpenSSL keeps for values that must stay
    /// secret, apart from the public DRBG whose outputs (nonces, TLS
    /// randoms) are seen on the wire.
    pub(crate) fn private_random_bytes(
        &self,
        out: &mut [u8],
        strength: u32,
    ) -> Result<(), ProviderError> {
        let lib = get()?;
        // SAFETY: `out` is writable for its length; the context is live.
        let ok = unsafe { (lib.rand_priv_bytes_ex)(self.0, out.as_mut_ptr(), out.len(), strength) };
        if ok == 1 {
            Ok(())
        } else {
            Err(ProviderError::new(Reason::RandomFailure).with_detail("RAND_priv_bytes_ex failed"))
        }
    }
}

impl Drop for ChildLibCtx {
    fn drop(&mut self) {
        if self.0.is_null() {
            return;
        }
        if let Ok(lib) = get() {
            // SAFETY: we own the context; nothing uses it after drop.
            unsafe { (lib.lib_ctx_free)(self.0) };
        }
        self.0 = ptr::null_mut();
    }
}
