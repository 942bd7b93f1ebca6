//! Owning wrappers for the libcrypto objects the provider makes: keys and
//! key contexts for the classical half of the hybrid groups, and the
//! cipher, PKCS#8 and `X509_SIG` objects of private-key encryption. Each is
//! freed on drop; the code above sees only these types and slices.

use core::ffi::{c_int, c_long, c_void, CStr};
use core::ptr::{self, NonNull};

use super::libcrypto::{self, ChildLibCtx, LibCrypto};
use super::params::{ParamList, END};
use super::sys::OSSL_PARAM;
use crate::error::{ProviderError, Reason};

/// An `EVP_PKEY`: one reference, released on drop; `clone` takes another.
pub(crate) struct Pkey(NonNull<c_void>);

// SAFETY: an EVP_PKEY may be used from several threads for operations that
// do not change it (OpenSSL's threading rules); nothing here changes it
// after construction, and its reference count is atomic.
unsafe impl Send for Pkey {}
// SAFETY: as above.
unsafe impl Sync for Pkey {}

impl Drop for Pkey {
    fn drop(&mut self) {
        if let Ok(lib) = libcrypto::get() {
            // SAFETY: we own one reference to the key.
            unsafe { (lib.evp_pkey_free)(self.0.as_ptr()) };
        }
    }
}

impl Clone for Pkey {
    fn clone(&self) -> Self {
        if let Ok(lib) = libcrypto::get() {
            // SAFETY: a live key; the new reference is released by the
            // clone's drop.
            unsafe { (lib.evp_pkey_up_ref)(self.0.as_ptr()) };
        }
        Self(self.0)
    }
}

impl Pkey {
    /// Reads one parameter (`EVP_PKEY_get_params`) of type `data_type` into
    /// `out`; the length OpenSSL wrote, or `None` when it failed.
    pub(crate) fn get_param(&self, name: &CStr, data_type: u32, out: &mut [u8]) -> Option<usize> {
        let lib = libcrypto::get().ok()?;
        let mut params = [
            OSSL_PARAM {
                key: name.as_ptr(),
                data_type,
                data: out.as_mut_ptr().cast(),
                data_size: out.len(),
                return_size: usize::MAX,
            },
            END,
        ];
        // SAFETY: a live key and a terminated array whose one buffer has
        // the declared size.
        let ok = unsafe { (lib.evp_pkey_get_params)(self.0.as_ptr(), params.as_mut_ptr()) };
        (ok == 1 && params[0].return_size <= out.len()).then_some(params[0].return_size)
    }
}

/// An `EVP_PKEY_CTX`, freed on drop.
pub(crate) struct PkeyCtx {
    lib: &'static LibCrypto,
    ctx: NonNull<c_void>,
}

impl Drop for PkeyCtx {
    fn drop(&mut self) {
        // SAFETY: we own the context.
        unsafe { (self.lib.evp_pkey_ctx_free)(self.ctx.as_ptr()) };
    }
}

impl PkeyCtx {
    /// A context for keys of `key_type` (`X25519`, `EC`) from `libctx`'s
    /// providers.
    pub(crate) fn for_type(libctx: &ChildLibCtx, key_type: &CStr) -> Option<Self> {
        let lib = libcrypto::get().ok()?;
        // SAFETY: a live library context and a NUL-terminated name.
        let ctx = unsafe {
            (lib.evp_pkey_ctx_new_from_name)(libctx.as_ptr(), key_type.as_ptr(), ptr::null())
        };
        Some(Self {
            lib,
            ctx: NonNull::new(ctx)?,
        })
    }

    /// A context for operations with `key`.
    pub(crate) fn for_key(libctx: &ChildLibCtx, key: &Pkey) -> Option<Self> {
        let lib = libcrypto::get().ok()?;
        // SAFETY: a live library context and a live key.
        let ctx = unsafe {
            (lib.evp_pkey_ctx_new_from_pkey)(libctx.as_ptr(), key.0.as_ptr(), ptr::null())
        };
        Some(Self {
            lib,
            ctx: NonNull::new(ctx)?,
        })
    }

    /// A fresh key pair, on the EC `group` if one is given.
    pub(crate) fn generate(&self, group: Option<&CStr>) -> Option<Pkey> {
        let (lib, ctx) = (self.lib, self.ctx.as_ptr());
        let mut pkey = ptr::null_mut();
        // SAFETY: a live context; `pkey` receives a new key we then own.
        let ok = unsafe {
            (lib.evp_pkey_keygen_init)(ctx) == 1
                && group.is_none_or(|g| (lib.evp_pkey_ctx_set_group_name)(ctx, g.as_ptr()) == 1)
                && (lib.evp_pkey_keygen)(ctx, &mut pkey) == 1
        };
        NonNull::new(pkey).map(Pkey).filter(|_| ok)
    }

    /// A key made from `params` (`EVP_PKEY_fromdata` with `selection`).
    pub(crate) fn key_from_data(
        &self,
        selection: c_int,
        params: &mut ParamList<'_>,
    ) -> Option<Pkey> {
        let (lib, ctx) = (self.lib, self.ctx.as_ptr());
        let mut pkey = ptr::null_mut();
        // SAFETY: a live context and a terminated parameter array whose data
        // outlives the call; `pkey` receives a key we then own.
        let ok = unsafe {
            (lib.evp_pkey_fromdata_init)(ctx) == 1
                && (lib.evp_pkey_fromdata)(ctx, &mut pkey, selection, params.as_ptr().cast_mut())
                    == 1
        };
        NonNull::new(pkey).map(Pkey).filter(|_| ok)
    }

    /// Key agreement of this context's key with `peer` into `secret`; the
    /// length written.
    pub(crate) fn derive(&self, peer: &Pkey, secret: &mut [u8]) -> Option<usize> {
        let (lib, ctx) = (self.lib, self.ctx.as_ptr());
        let mut len = secret.len();
        // SAFETY: a live context and peer key; `secret` has `len` bytes.
        let ok = unsafe {
            (lib.evp_pkey_derive_init)(ctx) == 1
                && (lib.evp_pkey_derive_set_peer_ex)(ctx, peer.0.as_ptr(), 0) == 1
                && (lib.evp_pkey_derive)(ctx, secret.as_mut_ptr(), &mut len) == 1
        };
        (ok && len <= secret.len()).then_some(len)
    }
}

/// An object of libcrypto's freed with `free` on drop.
struct Owned {
    ptr: NonNull<c_void>,
    free: unsafe extern "C" fn(*mut c_void),
}

impl Owned {
    fn new(ptr: *mut c_void, free: unsafe extern "C" fn(*mut c_void)) -> Option<Self> {
        Some(Self {
            ptr: NonNull::new(ptr)?,
            free,
        })
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: we own the object, and `free` is its type's free function.
        unsafe { (self.free)(self.ptr.as_ptr()) };
    }
}

/// Encrypts the DER PrivateKeyInfo `pki` into a DER EncryptedPrivateKeyInfo
/// with the cipher `cipher` (fetched with `properties` from `libctx`) and
/// `passphrase`: PKCS#5 v2 through libcrypto's `PKCS8_encrypt_ex`.
pub(crate) fn encrypt_private_key_info(
    libctx: &ChildLibCtx,
    cipher: &CStr,
    properties: Option<&CStr>,
    pki: &[u8],
    passphrase: &[u8],
) -> Result<Vec<u8>, ProviderError> {
    let fail = |why: String| ProviderError::new(Reason::EncryptionFailure).with_detail(why);
    let lib = libcrypto::get()?;
    let properties = properties.map_or(ptr::null(), CStr::as_ptr);
    // SAFETY: a live library context and NUL-terminated strings.
    let fetched = unsafe { (lib.evp_cipher_fetch)(libctx.as_ptr(), cipher.as_ptr(), properties) };
    let cipher = Owned::new(fetched, lib.evp_cipher_free)
        .ok_or_else(|| fail(format!("unknown cipher {}", cipher.to_string_lossy())))?;
    let mut input = pki.as_ptr();
    let len = c_long::try_from(pki.len()).map_err(|_| fail("key too large".into()))?;
    // SAFETY: `input` points at `len` readable bytes; the result is a new
    // object we own.
    let parsed = unsafe { (lib.d2i_pkcs8_priv_key_info)(ptr::null_mut(), &mut input, len) };
    let p8 = Owned::new(parsed, lib.pkcs8_priv_key_info_free)
        .ok_or_else(|| fail("PKCS8_encrypt_ex failed".into()))?;
    let pass_len = c_int::try_from(passphrase.len()).map_err(|_| fail("passphrase".into()))?;
    // SAFETY: every pointer is live for the call (the passphrase for its
    // length); the result is a new object we own.
    let encrypted = unsafe {
        (lib.pkcs8_encrypt_ex)(
            -1,
            cipher.ptr.as_ptr(),
            passphrase.as_ptr().cast(),
            pass_len,
            ptr::null(),
            0,
            0,
            p8.ptr.as_ptr(),
            libctx.as_ptr(),
            ptr::null(),
        )
    };
    let sig = Owned::new(encrypted, lib.x509_sig_free)
        .ok_or_else(|| fail("PKCS8_encrypt_ex failed".into()))?;
    // SAFETY: a live X509_SIG; a NULL output asks for the length.
    let len = unsafe { (lib.i2d_x509_sig)(sig.ptr.as_ptr(), ptr::null_mut()) };
    let mut out = vec![0u8; usize::try_from(len).unwrap_or(0)];
    let mut cursor = out.as_mut_ptr();
    let written = if out.is_empty() {
        0
    } else {
        // SAFETY: `out` has room for the `len` bytes i2d said it writes.
        unsafe { (lib.i2d_x509_sig)(sig.ptr.as_ptr(), &mut cursor) }
    };
    if written <= 0 || written != len {
        return Err(fail("i2d_X509_SIG failed".into()));
    }
    Ok(out)
}
