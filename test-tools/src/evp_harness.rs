//! KEMs of an OpenSSL provider, driven in process through EVP as `openssl speed`
//! (apps/speed.c) drives them. A [`Library`] is a fresh `OSSL_LIB_CTX` with one
//! provider (plus `default`, which hybrids and TLS need), every fetch with
//! `provider=<name>`, so implementations side by side never shadow each other.
//! Failures are `Err` with OpenSSL's error queue as text.
//!
//! ```no_run
//! use test_tools::evp_harness::Library;
//!
//! let ours = Library::load(Some("target/provider".as_ref()), "mlkem")?;
//! let ciphertext = ours.kem("ML-KEM-768")?.round_trip()?;
//! # Ok::<(), String>(())
//! ```

use std::ffi::{c_char, c_int, CStr, CString};
use std::marker::PhantomData;
use std::path::Path;
use std::ptr;

use foreign_types_shared::ForeignType;
use openssl::error::ErrorStack;
use openssl::lib_ctx::LibCtx;
use openssl::pkey::{PKey, Private};
use openssl::pkey_ctx::PkeyCtx;
use openssl::provider::Provider;
use openssl_sys as ffi;

// libcrypto 3.0 functions that openssl-sys does not declare.
extern "C" {
    fn EVP_PKEY_CTX_new_from_pkey(
        libctx: *mut ffi::OSSL_LIB_CTX,
        pkey: *mut ffi::EVP_PKEY,
        propquery: *const c_char,
    ) -> *mut ffi::EVP_PKEY_CTX;
}

/// Drains this thread's OpenSSL error queue into one line of text.
pub fn take_openssl_errors() -> String {
    describe(&ErrorStack::get())
}

fn describe(errors: &ErrorStack) -> String {
    match errors.errors() {
        [] => "(OpenSSL's error queue is empty)".to_owned(),
        _ => errors.to_string(),
    }
}

/// Empties this thread's OpenSSL error queue, so that the text of a later
/// failure holds only that failure's entries.
pub fn clear_openssl_errors() {
    // SAFETY: no arguments; empties this thread's error queue.
    unsafe { ffi::ERR_clear_error() };
}

/// Describes a failed call of the openssl crate as `what: <its errors>`.
fn failed(what: impl std::fmt::Display) -> impl FnOnce(ErrorStack) -> String {
    move |errors| format!("{what}: {}", describe(&errors))
}

/// `Ok` when an EVP call returned `rc` > 0, else `Err` naming `call`.
fn check(rc: c_int, call: &str) -> Result<(), String> {
    let failed = || format!("{call}: {}", take_openssl_errors());
    (rc > 0).then_some(()).ok_or_else(failed)
}

/// Owns `ctx`, just made by libcrypto, or an `Err` naming `call` if NULL.
fn owned(ctx: *mut ffi::EVP_PKEY_CTX, call: &str) -> Result<PkeyCtx<Private>, String> {
    match ctx.is_null() {
        true => Err(format!("{call}: {}", take_openssl_errors())),
        // SAFETY: a fresh context that nothing else frees.
        false => Ok(unsafe { PkeyCtx::from_ptr(ctx) }),
    }
}

/// A fresh OpenSSL library context with one provider (and `default`)
/// loaded; see the [module docs](self).
pub struct Library {
    // Fields drop in declaration order: the providers are unloaded before
    // their context is freed.
    _providers: Vec<Provider>,
    ctx: LibCtx,
    provider: String,
    propquery: CString,
}

impl Library {
    /// Creates a library context and loads `provider` from `module_dir` (else
    /// OpenSSL's default module directory), then `default` unless that is it.
    pub fn load(module_dir: Option<&Path>, provider: &str) -> Result<Library, String> {
        let propquery = CString::new(format!("provider={provider}"))
            .map_err(|_| format!("provider name {provider:?} contains a NUL byte"))?;
        let dir = module_dir.map(|d| d.to_str().filter(|s| !s.contains('\0')).ok_or(d));
        let dir = dir.transpose().map_err(|d| {
            format!(
                "module directory {} is not UTF-8 or holds a NUL",
                d.display()
            )
        })?;
        ffi::init();
        clear_openssl_errors();
        let ctx = LibCtx::new().map_err(failed("OSSL_LIB_CTX_new failed"))?;
        if let Some(dir) = dir {
            let setting = format!("setting the module directory {dir:?}");
            Provider::set_default_search_path(Some(&ctx), dir).map_err(failed(setting))?;
        }
        let from = dir.unwrap_or("OpenSSL's default module directory");
        let loading = format!("loading provider {provider:?} from {from}");
        let mut providers = vec![Provider::load(Some(&ctx), provider).map_err(failed(loading))?];
        if provider != "default" {
            let loading = "loading provider \"default\"";
            providers.push(Provider::load(Some(&ctx), "default").map_err(failed(loading))?);
        }
        Ok(Library {
            _providers: providers,
            ctx,
            provider: provider.to_owned(),
            propquery,
        })
    }

    /// `provider=<name>`, the property query of every fetch.
    pub fn propquery(&self) -> &CStr {
        &self.propquery
    }

    /// The raw library context (valid while `self` lives), for calls such as
    /// `SSL_CTX_new_ex`.
    pub fn as_ptr(&self) -> *mut ffi::OSSL_LIB_CTX {
        self.ctx.as_ptr()
    }

    /// Whether the provider can generate `algorithm` keys.
    pub fn supports(&self, algorithm: &str) -> bool {
        // A failure drains the error queue into its text.
        self.keygen_context(algorithm).is_ok()
    }

    /// A keygen context for `algorithm` (for example `ML-KEM-768`).
    fn keygen_context(&self, algorithm: &str) -> Result<PkeyCtx<Private>, String> {
        let name = CString::new(algorithm)
            .map_err(|_| format!("algorithm name {algorithm:?} contains a NUL byte"))?;
        let provider = &self.provider;
        clear_openssl_errors();
        // SAFETY: a live context and NUL-terminated name and property query.
        let ctx = unsafe {
            ffi::EVP_PKEY_CTX_new_from_name(self.as_ptr(), name.as_ptr(), self.propquery.as_ptr())
        };
        let missing = format!("{algorithm}: no such algorithm in provider {provider}");
        let mut ctx = owned(ctx, &missing)?;
        let init = format!("{algorithm}: EVP_PKEY_keygen_init in provider {provider}");
        ctx.keygen_init().map_err(failed(init))?;
        Ok(ctx)
    }

    /// A context over `key`, initialised by `init` for `operation` (`encapsulate`...).
    fn context_over(
        &self,
        key: &PKey<Private>,
        operation: &str,
        init: unsafe extern "C" fn(*mut ffi::EVP_PKEY_CTX, *const ffi::OSSL_PARAM) -> c_int,
    ) -> Result<PkeyCtx<Private>, String> {
        clear_openssl_errors();
        // SAFETY: a live context, key and property query; the new context
        // takes its own reference to the key.
        let ctx = unsafe {
            EVP_PKEY_CTX_new_from_pkey(self.as_ptr(), key.as_ptr(), self.propquery.as_ptr())
        };
        let ctx = owned(ctx, &format!("{operation}: EVP_PKEY_CTX_new_from_pkey"))?;
        // SAFETY: a live context; NULL means no parameters.
        let rc = unsafe { init(ctx.as_ptr(), ptr::null()) };
        check(rc, &format!("EVP_PKEY_{operation}_init"))?;
        Ok(ctx)
    }

    /// `algorithm` set up as `openssl speed` sets it up; see [`Kem`].
    pub fn kem(&self, algorithm: &str) -> Result<Kem<'_>, String> {
        let mut keygen = self.keygen_context(algorithm)?;
        let keygen_failed = failed(format!("{algorithm}: EVP_PKEY_keygen"));
        let key = keygen.keygen().map_err(keygen_failed)?;
        let encaps = self.context_over(&key, "encapsulate", ffi::EVP_PKEY_encapsulate_init)?;
        let decaps = self.context_over(&key, "decapsulate", ffi::EVP_PKEY_decapsulate_init)?;
        let (mut ciphertext_len, mut secret_len) = (0, 0);
        // SAFETY: a live, initialised context; NULL buffers ask for the sizes.
        let rc = unsafe {
            ffi::EVP_PKEY_encapsulate(
                encaps.as_ptr(),
                ptr::null_mut(),
                &mut ciphertext_len,
                ptr::null_mut(),
                &mut secret_len,
            )
        };
        check(rc, "EVP_PKEY_encapsulate (size query)")?;
        Ok(Kem {
            algorithm: algorithm.to_owned(),
            keygen,
            encaps,
            decaps,
            ciphertext: vec![0; ciphertext_len],
            secret: vec![0; secret_len],
            _library: PhantomData,
        })
    }
}

/// One algorithm of a [`Library`]'s provider: a keygen context reused for
/// every key, and contexts initialised for encapsulation and decapsulation
/// reused over one key it generated, writing to reused output buffers.
pub struct Kem<'l> {
    algorithm: String,
    keygen: PkeyCtx<Private>,
    encaps: PkeyCtx<Private>,
    decaps: PkeyCtx<Private>,
    /// Output buffers, of the sizes OpenSSL reported for the key.
    ciphertext: Vec<u8>,
    secret: Vec<u8>,
    _library: PhantomData<&'l Library>,
}

impl Kem<'_> {
    /// Generates a key pair (`EVP_PKEY_keygen`) and frees it.
    pub fn keygen(&mut self) -> Result<(), String> {
        let keygen = format!("{}: EVP_PKEY_keygen", self.algorithm);
        self.keygen.keygen().map(drop).map_err(failed(keygen))
    }

    /// Encapsulates to the key: `(ciphertext, shared secret)`.
    pub fn encapsulate(&mut self) -> Result<(&[u8], &[u8]), String> {
        let (mut ciphertext_len, mut secret_len) = (self.ciphertext.len(), self.secret.len());
        // SAFETY: a live, initialised context; both buffers are writable
        // for the lengths passed, the sizes OpenSSL asked for.
        let rc = unsafe {
            ffi::EVP_PKEY_encapsulate(
                self.encaps.as_ptr(),
                self.ciphertext.as_mut_ptr(),
                &mut ciphertext_len,
                self.secret.as_mut_ptr(),
                &mut secret_len,
            )
        };
        check(rc, "EVP_PKEY_encapsulate")?;
        let ciphertext = self.ciphertext.get(..ciphertext_len);
        let secret = self.secret.get(..secret_len);
        let overrun = || "EVP_PKEY_encapsulate reported more bytes than it had".to_owned();
        ciphertext.zip(secret).ok_or_else(overrun)
    }

    /// Decapsulates `ciphertext` with the key: the shared secret.
    pub fn decapsulate(&mut self, ciphertext: &[u8]) -> Result<&[u8], String> {
        let mut len = self.secret.len();
        // SAFETY: a live, initialised context; the secret buffer is writable
        // for `len` bytes, which libcrypto hands the provider as its size;
        // the ciphertext is readable for its length.
        let rc = unsafe {
            ffi::EVP_PKEY_decapsulate(
                self.decaps.as_ptr(),
                self.secret.as_mut_ptr(),
                &mut len,
                ciphertext.as_ptr(),
                ciphertext.len(),
            )
        };
        check(rc, "EVP_PKEY_decapsulate")?;
        let overrun = || format!("EVP_PKEY_decapsulate reported {len} bytes, more than it had");
        self.secret.get(..len).ok_or_else(overrun)
    }

    /// Encapsulates to the key and decapsulates the ciphertext: the
    /// ciphertext, or an error unless both sides got one non-empty secret.
    pub fn round_trip(&mut self) -> Result<Vec<u8>, String> {
        let (ciphertext, sent) = self.encapsulate()?;
        let (ciphertext, sent) = (ciphertext.to_vec(), sent.to_vec());
        let received = self.decapsulate(&ciphertext)?;
        if sent.is_empty() || sent != received {
            let (got, algorithm) = (received.len(), &self.algorithm);
            let differ = format!(
                "decaps(encaps) gave a different secret ({got} vs {} bytes)",
                sent.len()
            );
            return Err(format!("{algorithm}: {differ}"));
        }
        Ok(ciphertext)
    }
}
