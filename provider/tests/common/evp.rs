//! Safe wrappers around OpenSSL's EVP API (through openssl-sys) for the
//! in-process tests: a fresh `OSSL_LIB_CTX` of this process's libcrypto (the
//! system OpenSSL 3.0) with the provider loaded, its keys and contexts, and
//! the (per-thread) error queue of each call.
//!
//! The provider raises each error through the instance that made the
//! failing object. [`LIFECYCLE`] additionally orders provider loading and
//! teardown against the EVP calls whose errors a test reads, so no test's
//! assertions depend on what other tests load at the same time.
//!
//! The operations whose expectations differ between the tests (how long a
//! ciphertext or a secret must be) stay in the test files, as further
//! `impl` blocks of [`PkeyCtx`].

use std::ffi::{c_char, c_int, c_uchar, c_ulong, c_void, CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::ptr;
use std::sync::{PoisonError, RwLock};

use openssl_sys as ffi;

// Functions of libcrypto 3.0 that openssl-sys does not declare.
extern "C" {
    pub fn EVP_PKEY_CTX_new_from_pkey(
        libctx: *mut ffi::OSSL_LIB_CTX,
        pkey: *mut ffi::EVP_PKEY,
        propquery: *const c_char,
    ) -> *mut ffi::EVP_PKEY_CTX;
    pub fn EVP_PKEY_set1_encoded_public_key(
        pkey: *mut ffi::EVP_PKEY,
        public: *const c_uchar,
        public_len: usize,
    ) -> c_int;
    pub fn EVP_PKEY_dup(pkey: *mut ffi::EVP_PKEY) -> *mut ffi::EVP_PKEY;
}

// ------------------------------------------------------------------ errors

/// Shared by EVP calls (from the call to the reading of its errors),
/// exclusive for provider loading and teardown; see the module docs.
pub static LIFECYCLE: RwLock<()> = RwLock::new(());

/// One entry of OpenSSL's error queue.
#[derive(Clone, Debug)]
pub struct ErrorEntry {
    pub code: c_ulong,
    pub lib: Option<String>,
    pub reason: Option<String>,
    pub function: String,
    pub data: String,
}

/// The error queue of a failed call, oldest first.
#[derive(Clone, Debug, Default)]
pub struct Errors(pub Vec<ErrorEntry>);

impl fmt::Display for Errors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(empty error queue)");
        }
        for e in &self.0 {
            writeln!(
                f,
                "[{:#x}] {}: {} ({}): {}",
                e.code,
                e.lib.as_deref().unwrap_or("?"),
                e.reason.as_deref().unwrap_or("?"),
                e.function,
                e.data
            )?;
        }
        Ok(())
    }
}

impl Errors {
    /// Whether an entry has exactly this reason text.
    pub fn has_reason(&self, reason: &str) -> bool {
        self.0.iter().any(|e| e.reason.as_deref() == Some(reason))
    }

    /// Whether any entry's detail text contains `needle`.
    pub fn has_detail(&self, needle: &str) -> bool {
        self.0.iter().any(|e| e.data.contains(needle))
    }

    /// Asserts the provider raised `reason` (and, if given, a detail
    /// containing `detail`).
    #[track_caller]
    pub fn assert_reason(&self, reason: &str, detail: Option<&str>) {
        assert!(
            self.has_reason(reason),
            "expected reason '{reason}' in the error queue:\n{self}"
        );
        if let Some(detail) = detail {
            assert!(
                self.has_detail(detail),
                "expected '{detail}' in the error details:\n{self}"
            );
        }
    }

    /// Asserts the failed call left at least one error on the queue.
    #[track_caller]
    pub fn assert_not_empty(&self, what: &str) {
        assert!(
            !self.0.is_empty(),
            "{what}: failed with an empty error queue"
        );
    }
}

/// `Result::expect_err` without requiring (or printing) a `Debug` success
/// value: asserts the call failed and returns its error queue.
pub trait MustFail {
    fn must_fail(self, what: &str) -> Errors;
}

impl<T> MustFail for Result<T, Errors> {
    #[track_caller]
    fn must_fail(self, what: &str) -> Errors {
        match self {
            Ok(_) => panic!("{what}"),
            Err(errors) => errors,
        }
    }
}

/// Copies a C string libcrypto returned.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string that stays valid during the call.
unsafe fn c_text(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: the caller's contract.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

/// The reason text registered for a packed error code, if any.
pub fn reason_text(code: c_ulong) -> Option<String> {
    // SAFETY: a plain look-up; the string returned is static or owned by
    // the (still registered) error library, and copied at once.
    unsafe { c_text(ffi::ERR_reason_error_string(code)) }
}

/// The library name registered for a packed error code, if any.
pub fn lib_text(code: c_ulong) -> Option<String> {
    // SAFETY: as for `reason_text`.
    unsafe { c_text(ffi::ERR_lib_error_string(code)) }
}

/// Drains this thread's error queue.
pub fn take_errors() -> Errors {
    let mut out = Vec::new();
    loop {
        let mut file: *const c_char = ptr::null();
        let mut line: c_int = 0;
        let mut func: *const c_char = ptr::null();
        let mut data: *const c_char = ptr::null();
        let mut flags: c_int = 0;
        // SAFETY: all five out-pointers are valid locals.
        let code = unsafe {
            ffi::ERR_get_error_all(&mut file, &mut line, &mut func, &mut data, &mut flags)
        };
        if code == 0 {
            break;
        }
        let data = if flags & ffi::ERR_TXT_STRING != 0 {
            // SAFETY: a text entry's data is a NUL-terminated string owned
            // by the error queue, valid until the next ERR call.
            unsafe { c_text(data) }.unwrap_or_default()
        } else {
            String::new()
        };
        // SAFETY: NULL or the function name recorded with the entry.
        let function = unsafe { c_text(func) }.unwrap_or_default();
        out.push(ErrorEntry {
            code,
            lib: lib_text(code),
            reason: reason_text(code),
            function,
            data,
        });
    }
    Errors(out)
}

pub fn clear_errors() {
    // SAFETY: no arguments; clears this thread's queue.
    unsafe { ffi::ERR_clear_error() };
}

/// Runs an `int`-returning libcrypto call; `Ok` for a positive result, else
/// the error queue it left.
pub fn checked(call: impl FnOnce() -> c_int) -> Result<c_int, Errors> {
    let _shared = LIFECYCLE.read().unwrap_or_else(PoisonError::into_inner);
    clear_errors();
    let rc = call();
    let errors = take_errors();
    if rc > 0 {
        Ok(rc)
    } else {
        Err(errors)
    }
}

/// As [`checked`] for a pointer-returning call (`Err` for NULL).
pub fn checked_ptr<T>(call: impl FnOnce() -> *mut T) -> Result<*mut T, Errors> {
    let _shared = LIFECYCLE.read().unwrap_or_else(PoisonError::into_inner);
    clear_errors();
    let p = call();
    let errors = take_errors();
    if p.is_null() {
        Err(errors)
    } else {
        Ok(p)
    }
}

// ------------------------------------------------------------------ byte strings

/// `assert_eq!` for byte strings: on failure, the lengths, the first
/// differing offset and short hex excerpts rather than thousands of
/// decimal bytes.
#[allow(unused_macros)] // unused by the test binaries without EVP, as `dead_code`
macro_rules! assert_bytes_eq {
    ($actual:expr, $expected:expr $(,)?) => {
        $crate::common::evp::assert_bytes_eq!($actual, $expected, "byte strings differ")
    };
    ($actual:expr, $expected:expr, $($what:tt)+) => {
        $crate::common::evp::compare_bytes(
            AsRef::<[u8]>::as_ref(&$actual),
            AsRef::<[u8]>::as_ref(&$expected),
            true,
            &format!($($what)+),
        )
    };
}

/// `assert_ne!` for byte strings.
#[allow(unused_macros)] // likewise
macro_rules! assert_bytes_ne {
    ($actual:expr, $other:expr $(,)?) => {
        $crate::common::evp::assert_bytes_ne!($actual, $other, "byte strings are equal")
    };
    ($actual:expr, $other:expr, $($what:tt)+) => {
        $crate::common::evp::compare_bytes(
            AsRef::<[u8]>::as_ref(&$actual),
            AsRef::<[u8]>::as_ref(&$other),
            false,
            &format!($($what)+),
        )
    };
}

#[allow(unused_imports)] // likewise
pub(crate) use {assert_bytes_eq, assert_bytes_ne};

/// Up to 16 bytes of `bytes` as hex, with "..." if there are more.
pub fn hex(bytes: &[u8]) -> String {
    let shown: String = bytes.iter().take(16).map(|b| format!("{b:02x}")).collect();
    if bytes.len() > 16 {
        format!("{shown}...")
    } else {
        shown
    }
}

#[track_caller]
pub fn compare_bytes(actual: &[u8], expected: &[u8], want_equal: bool, what: &str) {
    if (actual == expected) == want_equal {
        return;
    }
    if want_equal {
        let at = actual
            .iter()
            .zip(expected)
            .position(|(a, b)| a != b)
            .unwrap_or(actual.len().min(expected.len()));
        panic!(
            "{what}: got {} bytes, expected {}; first difference at offset {at}: \
             got {} expected {}",
            actual.len(),
            expected.len(),
            hex(&actual[at.min(actual.len())..]),
            hex(&expected[at.min(expected.len())..]),
        );
    } else {
        panic!(
            "{what}: both are the same {} bytes {}",
            actual.len(),
            hex(actual)
        );
    }
}

pub fn cstring(s: &str) -> CString {
    CString::new(s).expect("no NUL")
}

/// A fixed 32-byte m (the `ikme` / ML-KEM.Encaps_internal input).
pub fn message(fill: u8) -> [u8; 32] {
    std::array::from_fn(|i| (i as u8).wrapping_mul(13) ^ fill)
}

// ------------------------------------------------------------------ library context

/// A library context with the `mlkem` and `default` providers loaded.
pub struct Lib {
    pub ctx: *mut ffi::OSSL_LIB_CTX,
    mlkem: *mut ffi::OSSL_PROVIDER,
    default: *mut ffi::OSSL_PROVIDER,
    /// Whether loading and teardown take [`LIFECYCLE`] (false only where
    /// the caller already holds it exclusively).
    guarded: bool,
}

// SAFETY: OpenSSL documents OSSL_LIB_CTX and OSSL_PROVIDER as usable from
// several threads at once; the tests only fetch through them while they
// live, and free them once (in Drop), after every thread is joined.
unsafe impl Send for Lib {}
// SAFETY: as above.
unsafe impl Sync for Lib {}

impl Lib {
    pub fn new() -> Lib {
        Lib::new_with(true)
    }

    pub fn new_with(guarded: bool) -> Lib {
        ffi::init();
        let _exclusive = guarded.then(|| LIFECYCLE.write().unwrap_or_else(PoisonError::into_inner));
        // SAFETY: no arguments; returns a new context or NULL.
        let ctx = unsafe { ffi::OSSL_LIB_CTX_new() };
        assert!(!ctx.is_null(), "OSSL_LIB_CTX_new failed");
        let dir = cstring(super::module_dir().to_str().expect("UTF-8 module path"));
        // SAFETY: a live context and a NUL-terminated path (copied by
        // libcrypto).
        let ok = unsafe { ffi::OSSL_PROVIDER_set_default_search_path(ctx, dir.as_ptr()) };
        assert_eq!(ok, 1, "OSSL_PROVIDER_set_default_search_path failed");
        let load = |name: &CStr| {
            // SAFETY: a live context and a NUL-terminated name.
            let p = unsafe { ffi::OSSL_PROVIDER_load(ctx, name.as_ptr()) };
            assert!(
                !p.is_null(),
                "loading provider {name:?} from {} failed:\n{}",
                super::module_dir().display(),
                take_errors()
            );
            p
        };
        let mlkem = load(c"mlkem");
        let default = load(c"default");
        Lib {
            ctx,
            mlkem,
            default,
            guarded,
        }
    }

    /// A context for generating or importing `alg` keys.
    pub fn ctx_for(&self, alg: &str) -> Result<PkeyCtx<'_>, Errors> {
        let name = cstring(alg);
        // SAFETY: a live context and a NUL-terminated name; NULL propquery.
        checked_ptr(|| unsafe {
            ffi::EVP_PKEY_CTX_new_from_name(self.ctx, name.as_ptr(), ptr::null())
        })
        .map(PkeyCtx::wrap)
    }

    /// A context for operations with `key`.
    pub fn ctx_for_key(&self, key: &Pkey<'_>) -> PkeyCtx<'_> {
        // SAFETY: a live context and key; NULL propquery.
        let p = checked_ptr(|| unsafe { EVP_PKEY_CTX_new_from_pkey(self.ctx, key.0, ptr::null()) })
            .unwrap_or_else(|e| panic!("EVP_PKEY_CTX_new_from_pkey failed:\n{e}"));
        PkeyCtx::wrap(p)
    }

    /// A fresh key of `alg` from `EVP_PKEY_keygen`, with an optional
    /// `seed` generation parameter.
    pub fn try_keygen(&self, alg: &str, seed: Option<&[u8]>) -> Result<Pkey<'_>, Errors> {
        let ctx = self.ctx_for(alg)?;
        // SAFETY: a live context.
        checked(|| unsafe { ffi::EVP_PKEY_keygen_init(ctx.0) })?;
        if let Some(seed) = seed {
            ctx.set_params(&[(c"seed", seed)])?;
        }
        let mut key = ptr::null_mut();
        // SAFETY: a live, initialised context and an out-pointer.
        checked(|| unsafe { ffi::EVP_PKEY_keygen(ctx.0, &mut key) })?;
        Ok(Pkey::wrap(key))
    }

    #[track_caller]
    pub fn keygen(&self, alg: &str, seed: Option<&[u8]>) -> Pkey<'_> {
        self.try_keygen(alg, seed)
            .unwrap_or_else(|e| panic!("{alg} keygen failed:\n{e}"))
    }

    /// An empty key (parameter generation), as TLS servers make.
    #[track_caller]
    pub fn paramgen(&self, alg: &str) -> Pkey<'_> {
        let ctx = self
            .ctx_for(alg)
            .unwrap_or_else(|e| panic!("{alg} context failed:\n{e}"));
        // SAFETY: a live context.
        checked(|| unsafe { ffi::EVP_PKEY_paramgen_init(ctx.0) })
            .unwrap_or_else(|e| panic!("{alg} paramgen_init failed:\n{e}"));
        let mut key = ptr::null_mut();
        // SAFETY: a live, initialised context and an out-pointer.
        checked(|| unsafe { ffi::EVP_PKEY_paramgen(ctx.0, &mut key) })
            .unwrap_or_else(|e| panic!("{alg} paramgen failed:\n{e}"));
        Pkey::wrap(key)
    }

    /// `EVP_PKEY_fromdata` with octet-string parameters.
    pub fn fromdata(
        &self,
        alg: &str,
        selection: c_int,
        parts: &[(&CStr, &[u8])],
    ) -> Result<Pkey<'_>, Errors> {
        let ctx = self.ctx_for(alg)?;
        // SAFETY: a live context.
        checked(|| unsafe { ffi::EVP_PKEY_fromdata_init(ctx.0) })?;
        let mut params = octet_params(parts);
        let mut key = ptr::null_mut();
        // SAFETY: a live, initialised context, an out-pointer, and a
        // terminated parameter array whose buffers outlive the call (the
        // import only reads them).
        checked(|| unsafe {
            ffi::EVP_PKEY_fromdata(ctx.0, &mut key, selection, params.as_mut_ptr())
        })?;
        Ok(Pkey::wrap(key))
    }

    /// A context initialised for encapsulation to `key`, with `ikme` if
    /// given.
    pub fn try_encapsulator<'l>(
        &'l self,
        key: &Pkey<'l>,
        ikme: Option<&[u8]>,
    ) -> Result<PkeyCtx<'l>, Errors> {
        let ctx = self.ctx_for_key(key);
        let params = ikme.map(|m| octet_params(&[(c"ikme", m)]));
        let params_ptr = params.as_ref().map_or(ptr::null(), |p| p.as_ptr());
        // SAFETY: a live context; NULL or a terminated array that outlives
        // the call.
        checked(|| unsafe { ffi::EVP_PKEY_encapsulate_init(ctx.0, params_ptr) })?;
        Ok(ctx)
    }

    #[track_caller]
    pub fn encapsulator<'l>(&'l self, key: &Pkey<'l>, ikme: Option<&[u8]>) -> PkeyCtx<'l> {
        self.try_encapsulator(key, ikme)
            .unwrap_or_else(|e| panic!("encapsulate_init failed:\n{e}"))
    }

    /// A context initialised for decapsulation with `key`.
    pub fn try_decapsulator<'l>(&'l self, key: &Pkey<'l>) -> Result<PkeyCtx<'l>, Errors> {
        let ctx = self.ctx_for_key(key);
        // SAFETY: a live context; NULL parameters.
        checked(|| unsafe { ffi::EVP_PKEY_decapsulate_init(ctx.0, ptr::null()) })?;
        Ok(ctx)
    }

    #[track_caller]
    pub fn decapsulator<'l>(&'l self, key: &Pkey<'l>) -> PkeyCtx<'l> {
        self.try_decapsulator(key)
            .unwrap_or_else(|e| panic!("decapsulate_init failed:\n{e}"))
    }
}

impl Drop for Lib {
    fn drop(&mut self) {
        let _exclusive = self
            .guarded
            .then(|| LIFECYCLE.write().unwrap_or_else(PoisonError::into_inner));
        // SAFETY: the providers and the context are ours, freed once; every
        // key and context made from them is gone (their lifetimes borrow
        // this Lib).
        unsafe {
            assert_eq!(ffi::OSSL_PROVIDER_unload(self.mlkem), 1);
            assert_eq!(ffi::OSSL_PROVIDER_unload(self.default), 1);
            ffi::OSSL_LIB_CTX_free(self.ctx);
        }
    }
}

/// A terminated `OSSL_PARAM` array of octet strings, pointing into `parts`.
pub fn octet_params(parts: &[(&CStr, &[u8])]) -> Vec<ffi::OSSL_PARAM> {
    let mut params: Vec<ffi::OSSL_PARAM> = parts
        .iter()
        .map(|(name, value)| {
            // SAFETY: only builds the struct; the name and buffer must
            // outlive its use, which the callers' borrows ensure. The
            // buffer is only read (set/import parameters), so the cast to
            // *mut is never written through.
            unsafe {
                ffi::OSSL_PARAM_construct_octet_string(
                    name.as_ptr(),
                    value.as_ptr().cast_mut().cast::<c_void>(),
                    value.len(),
                )
            }
        })
        .collect();
    // SAFETY: builds the terminator.
    params.push(unsafe { ffi::OSSL_PARAM_construct_end() });
    params
}

// ------------------------------------------------------------------ keys and contexts

/// An `EVP_PKEY` of a [`Lib`].
pub struct Pkey<'l>(pub *mut ffi::EVP_PKEY, PhantomData<&'l Lib>);

// SAFETY: OpenSSL documents an EVP_PKEY as safe to use from several threads
// at once for read-only operations (creating contexts, encapsulating,
// decapsulating); the tests never modify a shared key.
unsafe impl Send for Pkey<'_> {}
// SAFETY: as above.
unsafe impl Sync for Pkey<'_> {}

impl Pkey<'_> {
    pub fn wrap(p: *mut ffi::EVP_PKEY) -> Self {
        assert!(!p.is_null());
        Pkey(p, PhantomData)
    }

    /// An octet-string key parameter, `None` if the key does not have it.
    pub fn octets(&self, name: &CStr) -> Option<Vec<u8>> {
        let mut buf = vec![0u8; 8192];
        let mut len = 0usize;
        // SAFETY: a live key, a NUL-terminated name, a writable buffer of
        // the given size and an out-pointer.
        let ok = checked(|| unsafe {
            ffi::EVP_PKEY_get_octet_string_param(
                self.0,
                name.as_ptr(),
                buf.as_mut_ptr(),
                buf.len(),
                &mut len,
            )
        });
        ok.ok().map(|_| {
            buf.truncate(len);
            buf
        })
    }

    /// An integer key parameter.
    pub fn int(&self, name: &CStr) -> Option<c_int> {
        let mut value: c_int = 0;
        // SAFETY: a live key, a NUL-terminated name and an out-pointer.
        checked(|| unsafe { ffi::EVP_PKEY_get_int_param(self.0, name.as_ptr(), &mut value) })
            .ok()
            .map(|_| value)
    }

    /// The `pub` parameter.
    #[track_caller]
    pub fn public(&self) -> Vec<u8> {
        self.octets(c"pub").expect("pub parameter")
    }

    /// The `encoded-pub-key` parameter (what TLS sends).
    #[track_caller]
    pub fn encoded_public(&self) -> Vec<u8> {
        self.octets(c"encoded-pub-key")
            .expect("encoded-pub-key parameter")
    }

    /// The `priv` parameter.
    #[track_caller]
    pub fn private(&self) -> Vec<u8> {
        self.octets(c"priv").expect("priv parameter")
    }

    pub fn is_a(&self, name: &str) -> bool {
        let name = cstring(name);
        // SAFETY: a live key and a NUL-terminated name.
        unsafe { ffi::EVP_PKEY_is_a(self.0, name.as_ptr()) == 1 }
    }

    /// `EVP_PKEY_set1_encoded_public_key`.
    pub fn set_encoded_public_key(&self, public: &[u8]) -> Result<(), Errors> {
        // SAFETY: a live key (not shared with other threads here) and a
        // readable buffer of the given length.
        checked(|| unsafe {
            EVP_PKEY_set1_encoded_public_key(self.0, public.as_ptr(), public.len())
        })
        .map(drop)
    }

    /// `EVP_PKEY_eq`: 1 equal, 0 different, negative for "cannot compare".
    pub fn eq_raw(&self, other: &Pkey<'_>) -> c_int {
        let _shared = LIFECYCLE.read().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: two live keys, only read.
        let rc = unsafe { ffi::EVP_PKEY_eq(self.0, other.0) };
        clear_errors();
        rc
    }

    /// `EVP_PKEY_dup`.
    pub fn dup(&self) -> Result<Self, Errors> {
        // SAFETY: a live key; the copy is a new reference we own.
        checked_ptr(|| unsafe { EVP_PKEY_dup(self.0) }).map(Pkey::wrap)
    }
}

impl Drop for Pkey<'_> {
    fn drop(&mut self) {
        // SAFETY: our reference, released once.
        unsafe { ffi::EVP_PKEY_free(self.0) };
    }
}

/// An `EVP_PKEY_CTX` of a [`Lib`].
pub struct PkeyCtx<'l>(pub *mut ffi::EVP_PKEY_CTX, PhantomData<&'l Lib>);

impl PkeyCtx<'_> {
    pub fn wrap(p: *mut ffi::EVP_PKEY_CTX) -> Self {
        assert!(!p.is_null());
        PkeyCtx(p, PhantomData)
    }

    pub fn set_params(&self, parts: &[(&CStr, &[u8])]) -> Result<(), Errors> {
        let params = octet_params(parts);
        // SAFETY: a live context and a terminated array outliving the call.
        checked(|| unsafe { ffi::EVP_PKEY_CTX_set_params(self.0, params.as_ptr()) }).map(drop)
    }

    /// The size query: `EVP_PKEY_encapsulate` with NULL buffers.
    #[track_caller]
    pub fn encapsulate_sizes(&self) -> (usize, usize) {
        let (mut ct_len, mut secret_len) = (0usize, 0usize);
        // SAFETY: a live context; NULL buffers and two length out-pointers.
        checked(|| unsafe {
            ffi::EVP_PKEY_encapsulate(
                self.0,
                ptr::null_mut(),
                &mut ct_len,
                ptr::null_mut(),
                &mut secret_len,
            )
        })
        .unwrap_or_else(|e| panic!("encapsulate size query failed:\n{e}"));
        (ct_len, secret_len)
    }

    /// Encapsulates into buffers of the given capacities; the outputs are
    /// truncated to the lengths the call reports.
    pub fn try_encapsulate_into(
        &self,
        ct_cap: usize,
        secret_cap: usize,
    ) -> Result<(Vec<u8>, Vec<u8>), Errors> {
        let mut ct = vec![0u8; ct_cap];
        let mut secret = vec![0u8; secret_cap];
        let (mut ct_len, mut secret_len) = (ct_cap, secret_cap);
        // SAFETY: a live context; the buffers are writable for the
        // capacities passed in the length arguments.
        checked(|| unsafe {
            ffi::EVP_PKEY_encapsulate(
                self.0,
                ct.as_mut_ptr(),
                &mut ct_len,
                secret.as_mut_ptr(),
                &mut secret_len,
            )
        })?;
        assert!(ct_len <= ct_cap && secret_len <= secret_cap);
        ct.truncate(ct_len);
        secret.truncate(secret_len);
        Ok((ct, secret))
    }

    /// The size query: `EVP_PKEY_decapsulate` with a NULL secret buffer.
    #[track_caller]
    pub fn decapsulate_size(&self, ct: &[u8]) -> usize {
        let mut len = 0usize;
        // SAFETY: a live context, a NULL output buffer with a length
        // out-pointer, and a readable ciphertext.
        checked(|| unsafe {
            ffi::EVP_PKEY_decapsulate(self.0, ptr::null_mut(), &mut len, ct.as_ptr(), ct.len())
        })
        .unwrap_or_else(|e| panic!("decapsulate size query failed:\n{e}"));
        len
    }

    /// Decapsulates into a buffer of the given capacity; the output is
    /// truncated to the length the call reports.
    pub fn try_decapsulate_into(&self, ct: &[u8], secret_cap: usize) -> Result<Vec<u8>, Errors> {
        let mut secret = vec![0u8; secret_cap];
        let mut len = secret_cap;
        // SAFETY: a live context, a buffer writable for `len` bytes and a
        // readable ciphertext.
        checked(|| unsafe {
            ffi::EVP_PKEY_decapsulate(self.0, secret.as_mut_ptr(), &mut len, ct.as_ptr(), ct.len())
        })?;
        assert!(len <= secret_cap);
        secret.truncate(len);
        Ok(secret)
    }
}

impl Drop for PkeyCtx<'_> {
    fn drop(&mut self) {
        // SAFETY: ours, freed once.
        unsafe { ffi::EVP_PKEY_CTX_free(self.0) };
    }
}
