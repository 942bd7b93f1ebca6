//! KEMs of an OpenSSL provider, driven in process through EVP.
//!
//! A [`Library`] is a fresh `OSSL_LIB_CTX` of the linked libcrypto with one
//! provider loaded (plus `default`, which the hybrids' classical halves and
//! TLS need), so that implementations loaded side by side never shadow each
//! other; every fetch carries the property query `provider=<name>`, so an
//! algorithm always comes from the named provider even where `default` has
//! one of the same name (OpenSSL 3.5+).
//!
//! The objects mirror the loops of `openssl speed` (apps/speed.c): a
//! [`KeyGenerator`] is one reused keygen `EVP_PKEY_CTX`, an
//! [`Encapsulator`] / [`Decapsulator`] one reused context initialised for
//! `EVP_PKEY_encapsulate` / `EVP_PKEY_decapsulate` over one [`Key`]. Every
//! pointer is owned by a value that frees it, and keys and contexts borrow
//! their [`Library`], so none outlives the providers that made it. Failures
//! are `Err` with the text of OpenSSL's error queue.
//!
//! ```no_run
//! use std::path::Path;
//! use test_tools::evp_harness::Library;
//!
//! let ours = Library::load(Some(Path::new("target/provider")), "mlkem")?;
//! let key = ours.key_generator("ML-KEM-768")?.generate()?;
//! let (ciphertext, sent) = key.encapsulator()?.encapsulate_to_vec()?;
//! let received = key.decapsulator()?.decapsulate_to_vec(&ciphertext)?;
//! assert_eq!(sent, received);
//! # Ok::<(), String>(())
//! ```

use std::ffi::{c_char, CStr, CString};
use std::marker::PhantomData;
use std::path::Path;
use std::ptr::{self, NonNull};

use openssl::error::ErrorStack;
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
    let errors = ErrorStack::get();
    if errors.errors().is_empty() {
        "(OpenSSL's error queue is empty)".to_owned()
    } else {
        errors.to_string()
    }
}

/// Empties this thread's OpenSSL error queue, so that the text of a later
/// failure holds only that failure's entries.
pub fn clear_openssl_errors() {
    // SAFETY: no arguments; empties this thread's error queue.
    unsafe { ffi::ERR_clear_error() };
}

/// `s` as a C string, or an `Err` naming `what` if it holds a NUL byte.
fn c_string(what: &str, s: &str) -> Result<CString, String> {
    CString::new(s).map_err(|_| format!("{what} {s:?} contains a NUL byte"))
}

/// An owned `OSSL_LIB_CTX`.
struct LibCtx(NonNull<ffi::OSSL_LIB_CTX>);

impl Drop for LibCtx {
    fn drop(&mut self) {
        // SAFETY: the context is ours and freed once; its providers are
        // unloaded first (see `Library`'s field order).
        unsafe { ffi::OSSL_LIB_CTX_free(self.0.as_ptr()) };
    }
}

/// A provider loaded into a [`LibCtx`].
struct LoadedProvider(NonNull<ffi::OSSL_PROVIDER>);

impl Drop for LoadedProvider {
    fn drop(&mut self) {
        // SAFETY: our reference from OSSL_PROVIDER_load, released once,
        // while its library context is still alive.
        unsafe { ffi::OSSL_PROVIDER_unload(self.0.as_ptr()) };
    }
}

/// A fresh OpenSSL library context with one provider (and `default`)
/// loaded; see the [module docs](self).
pub struct Library {
    // Fields drop in declaration order: the providers are unloaded before
    // their context is freed.
    providers: Vec<LoadedProvider>,
    ctx: LibCtx,
    provider: String,
    propquery: CString,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library")
            .field("provider", &self.provider)
            .field("propquery", &self.propquery)
            .finish_non_exhaustive()
    }
}

impl Library {
    /// Creates a library context and loads `provider` into it, from
    /// `module_dir` when given (else from OpenSSL's default module
    /// directory), followed by the built-in `default` provider unless
    /// `provider` is `default` itself.
    pub fn load(module_dir: Option<&Path>, provider: &str) -> Result<Library, String> {
        let name = c_string("provider name", provider)?;
        let dir = module_dir
            .map(|d| {
                let text = d
                    .to_str()
                    .ok_or_else(|| format!("module directory {} is not UTF-8", d.display()))?;
                c_string("module directory", text)
            })
            .transpose()?;
        ffi::init();
        clear_openssl_errors();
        // SAFETY: no arguments; returns a new context or NULL.
        let ctx = NonNull::new(unsafe { ffi::OSSL_LIB_CTX_new() })
            .map(LibCtx)
            .ok_or_else(|| format!("OSSL_LIB_CTX_new failed: {}", take_openssl_errors()))?;
        if let Some(dir) = &dir {
            // SAFETY: a live context and a NUL-terminated path, which
            // libcrypto copies.
            let ok =
                unsafe { ffi::OSSL_PROVIDER_set_default_search_path(ctx.0.as_ptr(), dir.as_ptr()) };
            if ok != 1 {
                return Err(format!(
                    "setting the module directory {dir:?}: {}",
                    take_openssl_errors()
                ));
            }
        }
        let mut library = Library {
            providers: Vec::with_capacity(2),
            ctx,
            provider: provider.to_owned(),
            propquery: c_string("property query", &format!("provider={provider}"))?,
        };
        library.load_provider(&name, module_dir)?;
        if provider != "default" {
            library.load_provider(c"default", None)?;
        }
        Ok(library)
    }

    fn load_provider(&mut self, name: &CStr, module_dir: Option<&Path>) -> Result<(), String> {
        // SAFETY: a live context and a NUL-terminated name.
        let loaded = unsafe { ffi::OSSL_PROVIDER_load(self.ctx.0.as_ptr(), name.as_ptr()) };
        let loaded = NonNull::new(loaded).ok_or_else(|| {
            let from = module_dir.map_or_else(
                || "OpenSSL's default module directory".to_owned(),
                |d| d.display().to_string(),
            );
            format!(
                "loading provider {name:?} from {from}: {}",
                take_openssl_errors()
            )
        })?;
        self.providers.push(LoadedProvider(loaded));
        Ok(())
    }

    /// The name of the provider this library was loaded for.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The property query every fetch of this library uses:
    /// `provider=<name>`.
    pub fn propquery(&self) -> &CStr {
        &self.propquery
    }

    /// The raw library context, for OpenSSL calls this module does not wrap
    /// (such as `SSL_CTX_new_ex`). It stays valid while `self` lives.
    pub fn as_ptr(&self) -> *mut ffi::OSSL_LIB_CTX {
        self.ctx.0.as_ptr()
    }

    /// Whether the provider can generate `algorithm` keys (a keygen context
    /// can be made and initialised).
    pub fn supports(&self, algorithm: &str) -> bool {
        let supported = self.key_generator(algorithm).is_ok();
        clear_openssl_errors();
        supported
    }

    /// A reusable key generator for `algorithm` (for example `ML-KEM-768`).
    pub fn key_generator(&self, algorithm: &str) -> Result<KeyGenerator<'_>, String> {
        let name = c_string("algorithm name", algorithm)?;
        clear_openssl_errors();
        // SAFETY: a live context and NUL-terminated name and property query.
        let ctx = unsafe {
            ffi::EVP_PKEY_CTX_new_from_name(self.as_ptr(), name.as_ptr(), self.propquery.as_ptr())
        };
        let ctx = PkeyCtx::new(ctx).ok_or_else(|| {
            format!(
                "{algorithm}: no such algorithm in provider {}: {}",
                self.provider,
                take_openssl_errors()
            )
        })?;
        // SAFETY: a live context.
        if unsafe { ffi::EVP_PKEY_keygen_init(ctx.as_ptr()) } <= 0 {
            return Err(format!(
                "{algorithm}: EVP_PKEY_keygen_init in provider {}: {}",
                self.provider,
                take_openssl_errors()
            ));
        }
        Ok(KeyGenerator {
            ctx,
            library: self,
            algorithm: algorithm.to_owned(),
        })
    }
}

/// An owned `EVP_PKEY_CTX`.
struct PkeyCtx(NonNull<ffi::EVP_PKEY_CTX>);

impl PkeyCtx {
    fn new(ctx: *mut ffi::EVP_PKEY_CTX) -> Option<PkeyCtx> {
        NonNull::new(ctx).map(PkeyCtx)
    }

    fn as_ptr(&self) -> *mut ffi::EVP_PKEY_CTX {
        self.0.as_ptr()
    }
}

impl Drop for PkeyCtx {
    fn drop(&mut self) {
        // SAFETY: ours, freed once.
        unsafe { ffi::EVP_PKEY_CTX_free(self.0.as_ptr()) };
    }
}

/// One keygen `EVP_PKEY_CTX`, initialised once and reused for every key, as
/// `openssl speed` does.
pub struct KeyGenerator<'l> {
    ctx: PkeyCtx,
    library: &'l Library,
    algorithm: String,
}

impl<'l> KeyGenerator<'l> {
    /// The algorithm this generator makes keys of.
    pub fn algorithm(&self) -> &str {
        &self.algorithm
    }

    /// A fresh key pair (`EVP_PKEY_keygen`).
    pub fn generate(&mut self) -> Result<Key<'l>, String> {
        let mut key = ptr::null_mut();
        // SAFETY: a live context initialised for key generation and an
        // out-pointer; on success the new key is ours.
        let rc = unsafe { ffi::EVP_PKEY_keygen(self.ctx.as_ptr(), &mut key) };
        match NonNull::new(key) {
            Some(key) if rc > 0 => Ok(Key {
                key,
                library: self.library,
            }),
            leftover => {
                if let Some(key) = leftover {
                    // SAFETY: a key the failed call handed us anyway; ours
                    // to free.
                    unsafe { ffi::EVP_PKEY_free(key.as_ptr()) };
                }
                Err(format!(
                    "{}: EVP_PKEY_keygen: {}",
                    self.algorithm,
                    take_openssl_errors()
                ))
            }
        }
    }
}

/// A key pair made by a [`KeyGenerator`].
pub struct Key<'l> {
    key: NonNull<ffi::EVP_PKEY>,
    library: &'l Library,
}

impl Drop for Key<'_> {
    fn drop(&mut self) {
        // SAFETY: our reference, released once; contexts made from the key
        // hold references of their own.
        unsafe { ffi::EVP_PKEY_free(self.key.as_ptr()) };
    }
}

impl<'l> Key<'l> {
    /// A new context over this key (which it references), from the key's
    /// library.
    fn context(&self, what: &str) -> Result<PkeyCtx, String> {
        clear_openssl_errors();
        // SAFETY: a live context and key and a NUL-terminated property
        // query; the new context takes its own reference to the key.
        let ctx = unsafe {
            EVP_PKEY_CTX_new_from_pkey(
                self.library.as_ptr(),
                self.key.as_ptr(),
                self.library.propquery.as_ptr(),
            )
        };
        PkeyCtx::new(ctx).ok_or_else(|| {
            format!(
                "{what}: EVP_PKEY_CTX_new_from_pkey: {}",
                take_openssl_errors()
            )
        })
    }

    /// A context initialised for encapsulation to this key, reusable for
    /// any number of encapsulations.
    pub fn encapsulator(&self) -> Result<Encapsulator<'l>, String> {
        let ctx = self.context("encapsulator")?;
        // SAFETY: a live context; NULL means no parameters.
        if unsafe { ffi::EVP_PKEY_encapsulate_init(ctx.as_ptr(), ptr::null()) } <= 0 {
            return Err(format!(
                "EVP_PKEY_encapsulate_init: {}",
                take_openssl_errors()
            ));
        }
        let (mut ciphertext_len, mut secret_len) = (0usize, 0usize);
        // SAFETY: a live, initialised context; NULL output buffers ask for
        // the sizes, written to the two out-pointers.
        let rc = unsafe {
            ffi::EVP_PKEY_encapsulate(
                ctx.as_ptr(),
                ptr::null_mut(),
                &mut ciphertext_len,
                ptr::null_mut(),
                &mut secret_len,
            )
        };
        if rc <= 0 {
            return Err(format!(
                "EVP_PKEY_encapsulate (size query): {}",
                take_openssl_errors()
            ));
        }
        Ok(Encapsulator {
            ctx,
            ciphertext_len,
            secret_len,
            _library: PhantomData,
        })
    }

    /// A context initialised for decapsulation with this key, reusable for
    /// any number of decapsulations.
    pub fn decapsulator(&self) -> Result<Decapsulator<'l>, String> {
        let ctx = self.context("decapsulator")?;
        // SAFETY: a live context; NULL means no parameters.
        if unsafe { ffi::EVP_PKEY_decapsulate_init(ctx.as_ptr(), ptr::null()) } <= 0 {
            return Err(format!(
                "EVP_PKEY_decapsulate_init: {}",
                take_openssl_errors()
            ));
        }
        Ok(Decapsulator {
            ctx,
            _library: PhantomData,
        })
    }
}

/// An `EVP_PKEY_CTX` initialised for `EVP_PKEY_encapsulate` to one key.
pub struct Encapsulator<'l> {
    ctx: PkeyCtx,
    ciphertext_len: usize,
    secret_len: usize,
    _library: PhantomData<&'l Library>,
}

impl Encapsulator<'_> {
    /// The ciphertext length OpenSSL reported for this key.
    pub fn ciphertext_len(&self) -> usize {
        self.ciphertext_len
    }

    /// The shared-secret length OpenSSL reported for this key.
    pub fn secret_len(&self) -> usize {
        self.secret_len
    }

    /// Encapsulates into `ciphertext` and `secret`, which must be at least
    /// [`ciphertext_len`](Self::ciphertext_len) and
    /// [`secret_len`](Self::secret_len) long; returns the lengths written.
    pub fn encapsulate(
        &mut self,
        ciphertext: &mut [u8],
        secret: &mut [u8],
    ) -> Result<(usize, usize), String> {
        if ciphertext.len() < self.ciphertext_len || secret.len() < self.secret_len {
            return Err(format!(
                "encapsulate: buffers of {} and {} bytes, need {} and {}",
                ciphertext.len(),
                secret.len(),
                self.ciphertext_len,
                self.secret_len
            ));
        }
        let (mut ciphertext_len, mut secret_len) = (ciphertext.len(), secret.len());
        // SAFETY: a live, initialised context; both buffers are writable
        // for at least the sizes OpenSSL asked for (checked above).
        let rc = unsafe {
            ffi::EVP_PKEY_encapsulate(
                self.ctx.as_ptr(),
                ciphertext.as_mut_ptr(),
                &mut ciphertext_len,
                secret.as_mut_ptr(),
                &mut secret_len,
            )
        };
        if rc <= 0 {
            return Err(format!("EVP_PKEY_encapsulate: {}", take_openssl_errors()));
        }
        Ok((ciphertext_len, secret_len))
    }

    /// Encapsulates into new buffers: `(ciphertext, shared secret)`.
    pub fn encapsulate_to_vec(&mut self) -> Result<(Vec<u8>, Vec<u8>), String> {
        let mut ciphertext = vec![0u8; self.ciphertext_len];
        let mut secret = vec![0u8; self.secret_len];
        let (ciphertext_len, secret_len) = self.encapsulate(&mut ciphertext, &mut secret)?;
        ciphertext.truncate(ciphertext_len);
        secret.truncate(secret_len);
        Ok((ciphertext, secret))
    }
}

/// An `EVP_PKEY_CTX` initialised for `EVP_PKEY_decapsulate` with one key.
pub struct Decapsulator<'l> {
    ctx: PkeyCtx,
    _library: PhantomData<&'l Library>,
}

impl Decapsulator<'_> {
    /// The shared-secret length OpenSSL reports for `ciphertext`.
    pub fn secret_len(&mut self, ciphertext: &[u8]) -> Result<usize, String> {
        let mut len = 0usize;
        // SAFETY: a live, initialised context; a NULL output buffer asks for
        // the size, written to the out-pointer; the ciphertext is readable
        // for its length.
        let rc = unsafe {
            ffi::EVP_PKEY_decapsulate(
                self.ctx.as_ptr(),
                ptr::null_mut(),
                &mut len,
                ciphertext.as_ptr(),
                ciphertext.len(),
            )
        };
        if rc <= 0 {
            return Err(format!(
                "EVP_PKEY_decapsulate (size query): {}",
                take_openssl_errors()
            ));
        }
        Ok(len)
    }

    /// Decapsulates `ciphertext` into `secret` (whose length OpenSSL passes
    /// to the provider as the capacity); returns the length written.
    pub fn decapsulate(&mut self, ciphertext: &[u8], secret: &mut [u8]) -> Result<usize, String> {
        let mut len = secret.len();
        // SAFETY: a live, initialised context; `secret` is writable for
        // `len` bytes, which libcrypto hands the provider as the buffer
        // size; the ciphertext is readable for its length.
        let rc = unsafe {
            ffi::EVP_PKEY_decapsulate(
                self.ctx.as_ptr(),
                secret.as_mut_ptr(),
                &mut len,
                ciphertext.as_ptr(),
                ciphertext.len(),
            )
        };
        if rc <= 0 {
            return Err(format!("EVP_PKEY_decapsulate: {}", take_openssl_errors()));
        }
        if len > secret.len() {
            return Err(format!(
                "EVP_PKEY_decapsulate reported {len} bytes for a {}-byte buffer",
                secret.len()
            ));
        }
        Ok(len)
    }

    /// Decapsulates `ciphertext` into a new buffer.
    pub fn decapsulate_to_vec(&mut self, ciphertext: &[u8]) -> Result<Vec<u8>, String> {
        let mut secret = vec![0u8; self.secret_len(ciphertext)?];
        let len = self.decapsulate(ciphertext, &mut secret)?;
        secret.truncate(len);
        Ok(secret)
    }
}
