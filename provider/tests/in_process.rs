//! In-process tests: the provider loaded into a fresh `OSSL_LIB_CTX` of this
//! process's libcrypto (the system OpenSSL 3.0, which has the EVP KEM API
//! but no ML-KEM of its own) and driven through EVP, with kem-core as the
//! reference for every deterministic value.
//!
//! Error checks read OpenSSL's (per-thread) error queue. The provider raises
//! each error through the instance that made the failing object
//! (`errors_are_raised_through_the_callers_instance` checks that with two
//! library contexts). [`LIFECYCLE`] additionally orders provider loading and
//! teardown against the EVP calls whose errors a test reads, so no test's
//! assertions depend on what other tests load at the same time.

mod common;

use std::collections::HashSet;
use std::ffi::{c_char, c_int, c_uchar, c_ulong, c_void, CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::ptr;
use std::sync::{PoisonError, RwLock};

use kem_core::{
    Ciphertext, DecapsulationKey, EncapsulationKey, MlKem1024, MlKem512, MlKem768, ParameterSet,
};
use openssl_sys as ffi;

// Functions of libcrypto 3.0 that openssl-sys does not declare.
extern "C" {
    fn EVP_PKEY_CTX_new_from_pkey(
        libctx: *mut ffi::OSSL_LIB_CTX,
        pkey: *mut ffi::EVP_PKEY,
        propquery: *const c_char,
    ) -> *mut ffi::EVP_PKEY_CTX;
    fn EVP_PKEY_set1_encoded_public_key(
        pkey: *mut ffi::EVP_PKEY,
        public: *const c_uchar,
        public_len: usize,
    ) -> c_int;
}

// ------------------------------------------------------------------ errors

/// Shared by EVP calls (from the call to the reading of its errors),
/// exclusive for provider loading and teardown; see the module docs.
static LIFECYCLE: RwLock<()> = RwLock::new(());

/// One entry of OpenSSL's error queue.
#[derive(Clone, Debug)]
struct ErrorEntry {
    code: c_ulong,
    lib: Option<String>,
    reason: Option<String>,
    function: String,
    data: String,
}

/// The error queue of a failed call, oldest first.
#[derive(Clone, Debug, Default)]
struct Errors(Vec<ErrorEntry>);

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
    fn has_reason(&self, reason: &str) -> bool {
        self.0.iter().any(|e| e.reason.as_deref() == Some(reason))
    }

    /// Whether any entry's detail text contains `needle`.
    fn has_detail(&self, needle: &str) -> bool {
        self.0.iter().any(|e| e.data.contains(needle))
    }

    /// Asserts the provider raised `reason` (and, if given, a detail
    /// containing `detail`).
    #[track_caller]
    fn assert_reason(&self, reason: &str, detail: Option<&str>) {
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
}

/// `Result::expect_err` without requiring (or printing) a `Debug` success
/// value: asserts the call failed and returns its error queue.
trait MustFail {
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
fn reason_text(code: c_ulong) -> Option<String> {
    // SAFETY: a plain look-up; the string returned is static or owned by
    // the (still registered) error library, and copied at once.
    unsafe { c_text(ffi::ERR_reason_error_string(code)) }
}

/// The library name registered for a packed error code, if any.
fn lib_text(code: c_ulong) -> Option<String> {
    // SAFETY: as for `reason_text`.
    unsafe { c_text(ffi::ERR_lib_error_string(code)) }
}

/// Drains this thread's error queue.
fn take_errors() -> Errors {
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

fn clear_errors() {
    // SAFETY: no arguments; clears this thread's queue.
    unsafe { ffi::ERR_clear_error() };
}

/// Runs an `int`-returning libcrypto call; `Ok` for a positive result, else
/// the error queue it left.
fn checked(call: impl FnOnce() -> c_int) -> Result<c_int, Errors> {
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
fn checked_ptr<T>(call: impl FnOnce() -> *mut T) -> Result<*mut T, Errors> {
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

/// `assert_eq!` for byte strings: on failure, the lengths, the first
/// differing offset and short hex excerpts rather than thousands of
/// decimal bytes.
macro_rules! assert_bytes_eq {
    ($actual:expr, $expected:expr $(,)?) => {
        assert_bytes_eq!($actual, $expected, "byte strings differ")
    };
    ($actual:expr, $expected:expr, $($what:tt)+) => {
        compare_bytes(
            AsRef::<[u8]>::as_ref(&$actual),
            AsRef::<[u8]>::as_ref(&$expected),
            true,
            &format!($($what)+),
        )
    };
}

/// `assert_ne!` for byte strings.
macro_rules! assert_bytes_ne {
    ($actual:expr, $other:expr $(,)?) => {
        assert_bytes_ne!($actual, $other, "byte strings are equal")
    };
    ($actual:expr, $other:expr, $($what:tt)+) => {
        compare_bytes(
            AsRef::<[u8]>::as_ref(&$actual),
            AsRef::<[u8]>::as_ref(&$other),
            false,
            &format!($($what)+),
        )
    };
}

fn hex(bytes: &[u8]) -> String {
    let shown: String = bytes.iter().take(16).map(|b| format!("{b:02x}")).collect();
    if bytes.len() > 16 {
        format!("{shown}...")
    } else {
        shown
    }
}

#[track_caller]
fn compare_bytes(actual: &[u8], expected: &[u8], want_equal: bool, what: &str) {
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

fn cstring(s: &str) -> CString {
    CString::new(s).expect("no NUL")
}

// ------------------------------------------------------------------ library context

/// A library context with the `mlkem` and `default` providers loaded.
struct Lib {
    ctx: *mut ffi::OSSL_LIB_CTX,
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
    fn new() -> Lib {
        Lib::new_with(true)
    }

    fn new_with(guarded: bool) -> Lib {
        ffi::init();
        let _exclusive = guarded.then(|| LIFECYCLE.write().unwrap_or_else(PoisonError::into_inner));
        // SAFETY: no arguments; returns a new context or NULL.
        let ctx = unsafe { ffi::OSSL_LIB_CTX_new() };
        assert!(!ctx.is_null(), "OSSL_LIB_CTX_new failed");
        let dir = cstring(common::module_dir().to_str().expect("UTF-8 module path"));
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
                common::module_dir().display(),
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
    fn ctx_for(&self, alg: &str) -> Result<PkeyCtx<'_>, Errors> {
        let name = cstring(alg);
        // SAFETY: a live context and a NUL-terminated name; NULL propquery.
        checked_ptr(|| unsafe {
            ffi::EVP_PKEY_CTX_new_from_name(self.ctx, name.as_ptr(), ptr::null())
        })
        .map(PkeyCtx::wrap)
    }

    /// A context for operations with `key`.
    fn ctx_for_key(&self, key: &Pkey<'_>) -> PkeyCtx<'_> {
        // SAFETY: a live context and key; NULL propquery.
        let p = checked_ptr(|| unsafe { EVP_PKEY_CTX_new_from_pkey(self.ctx, key.0, ptr::null()) })
            .unwrap_or_else(|e| panic!("EVP_PKEY_CTX_new_from_pkey failed:\n{e}"));
        PkeyCtx::wrap(p)
    }

    /// A fresh key of `alg` from `EVP_PKEY_keygen`, with an optional
    /// `seed` generation parameter.
    fn try_keygen(&self, alg: &str, seed: Option<&[u8]>) -> Result<Pkey<'_>, Errors> {
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
    fn keygen(&self, alg: &str, seed: Option<&[u8]>) -> Pkey<'_> {
        self.try_keygen(alg, seed)
            .unwrap_or_else(|e| panic!("{alg} keygen failed:\n{e}"))
    }

    /// An empty key (parameter generation), as TLS servers make.
    fn paramgen(&self, alg: &str) -> Pkey<'_> {
        let ctx = self.ctx_for(alg).expect("context");
        // SAFETY: a live context.
        checked(|| unsafe { ffi::EVP_PKEY_paramgen_init(ctx.0) }).expect("paramgen_init");
        let mut key = ptr::null_mut();
        // SAFETY: a live, initialised context and an out-pointer.
        checked(|| unsafe { ffi::EVP_PKEY_paramgen(ctx.0, &mut key) }).expect("paramgen");
        Pkey::wrap(key)
    }

    /// `EVP_PKEY_fromdata` with octet-string parameters.
    fn fromdata(
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
    fn try_encapsulator<'l>(
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
    fn encapsulator<'l>(&'l self, key: &Pkey<'l>, ikme: Option<&[u8]>) -> PkeyCtx<'l> {
        self.try_encapsulator(key, ikme)
            .unwrap_or_else(|e| panic!("encapsulate_init failed:\n{e}"))
    }

    /// A context initialised for decapsulation with `key`.
    fn try_decapsulator<'l>(&'l self, key: &Pkey<'l>) -> Result<PkeyCtx<'l>, Errors> {
        let ctx = self.ctx_for_key(key);
        // SAFETY: a live context; NULL parameters.
        checked(|| unsafe { ffi::EVP_PKEY_decapsulate_init(ctx.0, ptr::null()) })?;
        Ok(ctx)
    }

    #[track_caller]
    fn decapsulator<'l>(&'l self, key: &Pkey<'l>) -> PkeyCtx<'l> {
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
fn octet_params(parts: &[(&CStr, &[u8])]) -> Vec<ffi::OSSL_PARAM> {
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
struct Pkey<'l>(*mut ffi::EVP_PKEY, PhantomData<&'l Lib>);

// SAFETY: OpenSSL documents an EVP_PKEY as safe to use from several threads
// at once for read-only operations (creating contexts, encapsulating,
// decapsulating); the tests never modify a shared key.
unsafe impl Send for Pkey<'_> {}
// SAFETY: as above.
unsafe impl Sync for Pkey<'_> {}

impl Pkey<'_> {
    fn wrap(p: *mut ffi::EVP_PKEY) -> Self {
        assert!(!p.is_null());
        Pkey(p, PhantomData)
    }

    /// An octet-string key parameter, `None` if the key does not have it.
    fn octets(&self, name: &CStr) -> Option<Vec<u8>> {
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
    fn int(&self, name: &CStr) -> Option<c_int> {
        let mut value: c_int = 0;
        // SAFETY: a live key, a NUL-terminated name and an out-pointer.
        checked(|| unsafe { ffi::EVP_PKEY_get_int_param(self.0, name.as_ptr(), &mut value) })
            .ok()
            .map(|_| value)
    }

    #[track_caller]
    fn public(&self) -> Vec<u8> {
        self.octets(c"pub").expect("pub parameter")
    }

    fn is_a(&self, name: &str) -> bool {
        let name = cstring(name);
        // SAFETY: a live key and a NUL-terminated name.
        unsafe { ffi::EVP_PKEY_is_a(self.0, name.as_ptr()) == 1 }
    }

    /// `EVP_PKEY_set1_encoded_public_key`.
    fn set_encoded_public_key(&self, ek: &[u8]) -> Result<(), Errors> {
        // SAFETY: a live key (not shared with other threads here) and a
        // readable buffer of the given length.
        checked(|| unsafe { EVP_PKEY_set1_encoded_public_key(self.0, ek.as_ptr(), ek.len()) })
            .map(drop)
    }
}

impl Drop for Pkey<'_> {
    fn drop(&mut self) {
        // SAFETY: our reference, released once.
        unsafe { ffi::EVP_PKEY_free(self.0) };
    }
}

/// An `EVP_PKEY_CTX` of a [`Lib`].
struct PkeyCtx<'l>(*mut ffi::EVP_PKEY_CTX, PhantomData<&'l Lib>);

impl PkeyCtx<'_> {
    fn wrap(p: *mut ffi::EVP_PKEY_CTX) -> Self {
        assert!(!p.is_null());
        PkeyCtx(p, PhantomData)
    }

    fn set_params(&self, parts: &[(&CStr, &[u8])]) -> Result<(), Errors> {
        let params = octet_params(parts);
        // SAFETY: a live context and a terminated array outliving the call.
        checked(|| unsafe { ffi::EVP_PKEY_CTX_set_params(self.0, params.as_ptr()) }).map(drop)
    }

    /// The size query: `EVP_PKEY_encapsulate` with NULL buffers.
    fn encapsulate_sizes(&self) -> (usize, usize) {
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
    fn try_encapsulate_into(
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

    /// Encapsulates with buffers of the sizes the size query reports.
    #[track_caller]
    fn encapsulate(&self, ct_len: usize) -> (Vec<u8>, Vec<u8>) {
        self.try_encapsulate_into(ct_len, 32)
            .unwrap_or_else(|e| panic!("encapsulate failed:\n{e}"))
    }

    /// The size query: `EVP_PKEY_decapsulate` with a NULL secret buffer.
    fn decapsulate_size(&self, ct: &[u8]) -> usize {
        let mut len = 0usize;
        // SAFETY: a live context, a NULL output buffer with a length
        // out-pointer, and a readable ciphertext.
        checked(|| unsafe {
            ffi::EVP_PKEY_decapsulate(self.0, ptr::null_mut(), &mut len, ct.as_ptr(), ct.len())
        })
        .unwrap_or_else(|e| panic!("decapsulate size query failed:\n{e}"));
        len
    }

    fn try_decapsulate_into(&self, ct: &[u8], secret_cap: usize) -> Result<Vec<u8>, Errors> {
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

    #[track_caller]
    fn decapsulate(&self, ct: &[u8]) -> Vec<u8> {
        self.try_decapsulate_into(ct, 32)
            .unwrap_or_else(|e| panic!("decapsulate failed:\n{e}"))
    }
}

impl Drop for PkeyCtx<'_> {
    fn drop(&mut self) {
        // SAFETY: ours, freed once.
        unsafe { ffi::EVP_PKEY_CTX_free(self.0) };
    }
}

// ------------------------------------------------------------------ expectations

/// One parameter set: names and the FIPS 203 / OpenSSL 3.5 figures.
struct Set {
    name: &'static str,
    alias: &'static str,
    oid: &'static str,
    ek_len: usize,
    dk_len: usize,
    ct_len: usize,
    bits: c_int,
    security_bits: c_int,
    category: c_int,
}

const SETS: [Set; 3] = [
    Set {
        name: "ML-KEM-512",
        alias: "MLKEM512",
        oid: "2.16.840.1.101.3.4.4.1",
        ek_len: 800,
        dk_len: 1632,
        ct_len: 768,
        bits: 512,
        security_bits: 128,
        category: 1,
    },
    Set {
        name: "ML-KEM-768",
        alias: "MLKEM768",
        oid: "2.16.840.1.101.3.4.4.2",
        ek_len: 1184,
        dk_len: 2400,
        ct_len: 1088,
        bits: 768,
        security_bits: 192,
        category: 3,
    },
    Set {
        name: "ML-KEM-1024",
        alias: "MLKEM1024",
        oid: "2.16.840.1.101.3.4.4.3",
        ek_len: 1568,
        dk_len: 3168,
        ct_len: 1568,
        bits: 1024,
        security_bits: 256,
        category: 5,
    },
];

const ML_KEM_768: &Set = &SETS[1];

/// A fixed 64-byte seed d ‖ z.
fn seed(fill: u8) -> [u8; 64] {
    std::array::from_fn(|i| (i as u8).wrapping_mul(31).wrapping_add(fill))
}

/// A fixed 32-byte m.
fn message(fill: u8) -> [u8; 32] {
    std::array::from_fn(|i| (i as u8).wrapping_mul(13) ^ fill)
}

// ------------------------------------------------------------------ 1. round trip

#[test]
fn keygen_encapsulate_decapsulate_every_set() {
    let lib = Lib::new();
    for set in &SETS {
        let key = lib.keygen(set.name, None);
        assert!(key.is_a(set.name), "{} key is_a", set.name);
        assert_eq!(key.public().len(), set.ek_len, "{} ek length", set.name);
        assert_eq!(
            key.octets(c"priv").expect("priv").len(),
            set.dk_len,
            "{} dk length",
            set.name
        );

        let enc = lib.encapsulator(&key, None);
        assert_eq!(
            enc.encapsulate_sizes(),
            (set.ct_len, 32),
            "{} size query",
            set.name
        );
        let (ct, secret) = enc.encapsulate(set.ct_len);
        assert_eq!(ct.len(), set.ct_len);
        assert_eq!(secret.len(), 32);

        let dec = lib.decapsulator(&key);
        assert_eq!(
            dec.decapsulate_size(&ct),
            32,
            "{} decapsulate size query",
            set.name
        );
        assert_bytes_eq!(dec.decapsulate(&ct), secret, "{} shared secrets", set.name);

        // A second encapsulation draws fresh randomness.
        let (ct2, secret2) = enc.encapsulate(set.ct_len);
        assert_bytes_ne!(ct2, ct, "{} repeated ciphertext", set.name);
        assert_bytes_ne!(secret2, secret);
        assert_bytes_eq!(dec.decapsulate(&ct2), secret2);

        // Two generations give two keys.
        assert_bytes_ne!(lib.keygen(set.name, None).public(), key.public());
    }
}

#[test]
fn algorithm_found_by_alias_and_oid() {
    let lib = Lib::new();
    for set in &SETS {
        for name in [set.alias, set.oid, &set.name.to_ascii_lowercase()] {
            let key = lib
                .try_keygen(name, None)
                .unwrap_or_else(|e| panic!("keygen by '{name}' failed:\n{e}"));
            assert!(
                key.is_a(set.name),
                "key made by '{name}' is not {}",
                set.name
            );
            assert!(key.is_a(set.alias));
            assert_eq!(key.public().len(), set.ek_len, "key made by '{name}'");
            let (ct, secret) = lib.encapsulator(&key, None).encapsulate(set.ct_len);
            assert_eq!(ct.len(), set.ct_len);
            assert_bytes_eq!(lib.decapsulator(&key).decapsulate(&ct), secret);
        }
    }
    // A name no provider serves.
    assert!(lib.ctx_for("ML-KEM-2048").is_err());
}

// ------------------------------------------------------------------ 2. determinism

fn seeded_matches_kem_core<P: ParameterSet>(lib: &Lib, set: &Set) {
    assert_eq!(
        (P::EK_LEN, P::DK_LEN, P::CT_LEN),
        (set.ek_len, set.dk_len, set.ct_len)
    );
    let seed = seed(set.ct_len as u8);
    let reference = DecapsulationKey::<P>::from_seed(&seed).expect("kem-core key");

    let key = lib.keygen(set.name, Some(&seed));
    assert_bytes_eq!(
        key.public(),
        reference.encapsulation_key().as_bytes(),
        "{} pub",
        set.name
    );
    assert_bytes_eq!(
        key.octets(c"encoded-pub-key").expect("encoded-pub-key"),
        reference.encapsulation_key().as_bytes(),
        "{} encoded-pub-key",
        set.name
    );
    assert_bytes_eq!(
        key.octets(c"priv").expect("priv"),
        reference.to_bytes().as_ref(),
        "{} priv",
        set.name
    );
    assert_bytes_eq!(
        key.octets(c"seed").expect("seed"),
        seed,
        "{} seed",
        set.name
    );

    // ikme: a known m gives kem-core's ciphertext and secret.
    let m = message(set.bits as u8);
    let (ref_ct, ref_secret) = reference.encapsulation_key().encapsulate_deterministic(&m);
    let enc = lib.encapsulator(&key, Some(&m));
    let (ct, secret) = enc.encapsulate(set.ct_len);
    assert_bytes_eq!(ct, ref_ct.as_bytes(), "{} ikme ciphertext", set.name);
    assert_bytes_eq!(secret, ref_secret.as_bytes(), "{} ikme secret", set.name);

    // One-shot: the next encapsulation on the context is random again.
    let (ct2, secret2) = enc.encapsulate(set.ct_len);
    assert_bytes_ne!(ct2, ct, "{}: ikme was reused", set.name);
    assert_bytes_ne!(secret2, secret);
    let dec = lib.decapsulator(&key);
    assert_bytes_eq!(dec.decapsulate(&ct2), secret2);
    assert_bytes_eq!(dec.decapsulate(&ct), secret);

    // ikme set with EVP_PKEY_CTX_set_params after init works the same way.
    enc.set_params(&[(c"ikme", &m)]).expect("set ikme");
    let (ct3, secret3) = enc.encapsulate(set.ct_len);
    assert_bytes_eq!(ct3, ct, "{} ikme via set_params", set.name);
    assert_bytes_eq!(secret3, secret);

    // The generation seed is single use too: a context re-used for a second
    // generation makes a fresh key.
    let gen = lib.ctx_for(set.name).expect("context");
    // SAFETY: a live context.
    checked(|| unsafe { ffi::EVP_PKEY_keygen_init(gen.0) }).expect("keygen_init");
    gen.set_params(&[(c"seed", &seed)]).expect("set seed");
    let mut first = ptr::null_mut();
    let mut second = ptr::null_mut();
    // SAFETY: a live, initialised context and out-pointers.
    checked(|| unsafe { ffi::EVP_PKEY_keygen(gen.0, &mut first) }).expect("keygen");
    let first = Pkey::wrap(first);
    // SAFETY: as above.
    checked(|| unsafe { ffi::EVP_PKEY_keygen(gen.0, &mut second) }).expect("keygen");
    let second = Pkey::wrap(second);
    assert_bytes_eq!(first.public(), reference.encapsulation_key().as_bytes());
    assert_bytes_ne!(second.public(), first.public(), "{}: seed reused", set.name);
}

#[test]
fn seeded_keygen_and_ikme_match_kem_core() {
    let lib = Lib::new();
    seeded_matches_kem_core::<MlKem512>(&lib, &SETS[0]);
    seeded_matches_kem_core::<MlKem768>(&lib, &SETS[1]);
    seeded_matches_kem_core::<MlKem1024>(&lib, &SETS[2]);
}

#[test]
fn wrong_length_seed_and_ikme_rejected() {
    let lib = Lib::new();
    let set = ML_KEM_768;
    let errors = lib
        .try_keygen(set.name, Some(&[7u8; 63]))
        .must_fail("a 63-byte seed was accepted");
    errors.assert_reason("invalid length", Some("seed must be 64 bytes, got 63"));

    let key = lib.keygen(set.name, None);
    let errors = lib
        .try_encapsulator(&key, Some(&[1u8; 31]))
        .must_fail("a 31-byte ikme was accepted");
    errors.assert_reason("invalid length", Some("ikme must be 32 bytes, got 31"));
    let enc = lib.encapsulator(&key, None);
    enc.set_params(&[(c"ikme", &[1u8; 33])])
        .expect_err("a 33-byte ikme was accepted")
        .assert_reason("invalid length", Some("got 33"));
}

/// OpenSSL 3.5 (`ml_kem_encapsulate`) answers the size query before it
/// touches the one-shot `ikme`, so the usual query-then-encapsulate sequence
/// after `EVP_PKEY_encapsulate_init(ctx, {ikme})` is deterministic.
#[test]

fn ikme_survives_size_query() {
    let lib = Lib::new();
    let seed = seed(3);
    let m = message(9);
    let reference = DecapsulationKey::<MlKem768>::from_seed(&seed).expect("kem-core key");
    let (ref_ct, ref_secret) = reference.encapsulation_key().encapsulate_deterministic(&m);

    let key = lib.keygen(ML_KEM_768.name, Some(&seed));
    let enc = lib.encapsulator(&key, Some(&m));
    let (ct_len, secret_len) = enc.encapsulate_sizes();
    let (ct, secret) = enc
        .try_encapsulate_into(ct_len, secret_len)
        .expect("encapsulate");
    assert_bytes_eq!(
        ct,
        ref_ct.as_bytes(),
        "ikme was dropped by the size query: the ciphertext is random"
    );
    assert_bytes_eq!(secret, ref_secret.as_bytes());
}

// ------------------------------------------------------------------ 3. import / export

/// A seeded key, its kem-core twin, and one encapsulation to it.
fn reference_768(fill: u8) -> (DecapsulationKey<MlKem768>, Vec<u8>, Vec<u8>) {
    let dk = DecapsulationKey::<MlKem768>::from_seed(&seed(fill)).expect("kem-core key");
    let (ct, secret) = dk
        .encapsulation_key()
        .encapsulate_deterministic(&message(fill));
    let (ct, secret) = (ct.as_bytes().to_vec(), secret.as_bytes().to_vec());
    (dk, ct, secret)
}

#[test]
fn import_public_only() {
    let lib = Lib::new();
    let (dk, _, _) = reference_768(1);
    let ek = dk.encapsulation_key().as_bytes();
    let original = lib.keygen(ML_KEM_768.name, Some(&seed(1)));

    let public = lib
        .fromdata(ML_KEM_768.name, ffi::EVP_PKEY_PUBLIC_KEY, &[(c"pub", ek)])
        .unwrap_or_else(|e| panic!("public import failed:\n{e}"));
    assert_bytes_eq!(public.public(), ek);
    assert!(
        public.octets(c"priv").is_none(),
        "a public key exports priv"
    );
    assert!(
        public.octets(c"seed").is_none(),
        "a public key exports seed"
    );
    // SAFETY: two live keys.
    assert_eq!(unsafe { ffi::EVP_PKEY_eq(public.0, original.0) }, 1);

    // It encapsulates (deterministically, to kem-core's values)...
    let m = message(5);
    let (ref_ct, ref_secret) = dk.encapsulation_key().encapsulate_deterministic(&m);
    let (ct, secret) = lib
        .encapsulator(&public, Some(&m))
        .encapsulate(ML_KEM_768.ct_len);
    assert_bytes_eq!(ct, ref_ct.as_bytes());
    assert_bytes_eq!(secret, ref_secret.as_bytes());
    let (ct, secret) = lib
        .encapsulator(&public, None)
        .encapsulate(ML_KEM_768.ct_len);
    assert_bytes_eq!(lib.decapsulator(&original).decapsulate(&ct), secret);

    // ...but cannot decapsulate.
    let errors = lib
        .try_decapsulator(&public)
        .must_fail("decapsulate_init accepted a public key");
    errors.assert_reason(
        "missing private key",
        Some("ML-KEM-768 key has no private part"),
    );

    // A keypair import of only `pub` is a public key too.
    let keypair_selected = lib
        .fromdata(ML_KEM_768.name, ffi::EVP_PKEY_KEYPAIR, &[(c"pub", ek)])
        .expect("keypair-selection import of pub");
    assert!(keypair_selected.octets(c"priv").is_none());
}

#[test]
fn import_private_only() {
    let lib = Lib::new();
    let (dk, _, _) = reference_768(2);
    let original = lib.keygen(ML_KEM_768.name, Some(&seed(2)));
    let priv_bytes = original.octets(c"priv").expect("priv");
    assert_bytes_eq!(priv_bytes, dk.to_bytes().as_ref());

    let private = lib
        .fromdata(
            ML_KEM_768.name,
            ffi::EVP_PKEY_KEYPAIR,
            &[(c"priv", &priv_bytes)],
        )
        .unwrap_or_else(|e| panic!("private import failed:\n{e}"));
    assert_bytes_eq!(private.public(), original.public(), "pub derived from priv");
    assert_bytes_eq!(private.octets(c"priv").expect("priv"), priv_bytes);
    assert!(
        private.octets(c"seed").is_none(),
        "a key from priv has no seed"
    );

    // It decapsulates what the original's public key encapsulated.
    for _ in 0..3 {
        let (ct, secret) = lib
            .encapsulator(&original, None)
            .encapsulate(ML_KEM_768.ct_len);
        assert_bytes_eq!(lib.decapsulator(&private).decapsulate(&ct), secret);
    }

    // priv with a matching pub is fine; with another key's pub it is not.
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_KEYPAIR,
        &[(c"priv", &priv_bytes), (c"pub", &original.public())],
    )
    .expect("priv + matching pub");
    let other = lib.keygen(ML_KEM_768.name, Some(&seed(99)));
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_KEYPAIR,
        &[(c"priv", &priv_bytes), (c"pub", &other.public())],
    )
    .must_fail("priv + mismatching pub accepted")
    .assert_reason("invalid key", Some("public key does not match private"));

    // A private key whose stored H(ek) is wrong fails the FIPS 203 check.
    let mut bad = priv_bytes.clone();
    let h_at = ML_KEM_768.dk_len - 64;
    bad[h_at] ^= 1;
    lib.fromdata(ML_KEM_768.name, ffi::EVP_PKEY_KEYPAIR, &[(c"priv", &bad)])
        .must_fail("a dk with a wrong H(ek) was accepted")
        .assert_reason("invalid key", None);
}

#[test]
fn import_seed_only_and_seed_with_mismatching_priv() {
    let lib = Lib::new();
    let original = lib.keygen(ML_KEM_768.name, Some(&seed(3)));
    let from_seed = lib
        .fromdata(
            ML_KEM_768.name,
            ffi::EVP_PKEY_KEYPAIR,
            &[(c"seed", &seed(3))],
        )
        .unwrap_or_else(|e| panic!("seed import failed:\n{e}"));
    assert_bytes_eq!(from_seed.public(), original.public());
    assert_bytes_eq!(
        from_seed.octets(c"priv").expect("priv"),
        original.octets(c"priv").expect("priv")
    );
    assert_bytes_eq!(from_seed.octets(c"seed").expect("seed"), seed(3));
    // SAFETY: two live keys.
    assert_eq!(unsafe { ffi::EVP_PKEY_eq(from_seed.0, original.0) }, 1);
    let (ct, secret) = lib
        .encapsulator(&original, None)
        .encapsulate(ML_KEM_768.ct_len);
    assert_bytes_eq!(lib.decapsulator(&from_seed).decapsulate(&ct), secret);

    // seed + its own priv is accepted.
    let priv_bytes = original.octets(c"priv").expect("priv");
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_KEYPAIR,
        &[(c"seed", &seed(3)), (c"priv", &priv_bytes)],
    )
    .expect("seed + matching priv");

    // seed + another (valid) key's priv is not.
    let other = lib.keygen(ML_KEM_768.name, Some(&seed(4)));
    let other_priv = other.octets(c"priv").expect("priv");
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_KEYPAIR,
        &[(c"seed", &seed(3)), (c"priv", &other_priv)],
    )
    .must_fail("seed + mismatching priv accepted")
    .assert_reason("invalid key", Some("private key does not match seed"));

    // A public-key selection ignores the seed: nothing left to import.
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_PUBLIC_KEY,
        &[(c"seed", &seed(3))],
    )
    .must_fail("public selection with only a seed accepted")
    .assert_reason("missing public key", None);
}

#[test]
fn import_wrong_lengths_rejected() {
    let lib = Lib::new();
    let key = lib.keygen(ML_KEM_768.name, None);
    let ek = key.public();
    let dk = key.octets(c"priv").expect("priv");

    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_PUBLIC_KEY,
        &[(c"pub", &ek[..1183])],
    )
    .must_fail("1183-byte pub accepted")
    .assert_reason(
        "invalid length",
        Some("ML-KEM-768 public key must be 1184 bytes, got 1183"),
    );

    let mut long = ek.clone();
    long.push(0);
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_PUBLIC_KEY,
        &[(c"pub", &long)],
    )
    .must_fail("1185-byte pub accepted")
    .assert_reason("invalid length", Some("got 1185"));

    // An ML-KEM-512 public key is not an ML-KEM-768 one.
    let small = lib.keygen("ML-KEM-512", None);
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_PUBLIC_KEY,
        &[(c"pub", &small.public())],
    )
    .must_fail("ML-KEM-512 pub imported as ML-KEM-768")
    .assert_reason("invalid length", Some("got 800"));

    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_KEYPAIR,
        &[(c"priv", &dk[..2399])],
    )
    .must_fail("2399-byte priv accepted")
    .assert_reason(
        "invalid length",
        Some("private key must be 2400 bytes, got 2399"),
    );

    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_KEYPAIR,
        &[(c"seed", &[0u8; 32])],
    )
    .must_fail("32-byte seed accepted")
    .assert_reason("invalid length", Some("seed must be 64 bytes, got 32"));

    // A public key with a coefficient >= q fails the FIPS 203 check.
    let mut unreduced = ek.clone();
    unreduced[0] = 0xff;
    unreduced[1] |= 0x0f;
    lib.fromdata(
        ML_KEM_768.name,
        ffi::EVP_PKEY_PUBLIC_KEY,
        &[(c"pub", &unreduced)],
    )
    .must_fail("an unreduced ek was accepted")
    .assert_reason("invalid key", None);
}

#[test]
fn key_parameters_every_set() {
    let lib = Lib::new();
    for set in &SETS {
        let key = lib.keygen(set.name, None);
        assert_eq!(key.int(c"bits"), Some(set.bits), "{} bits", set.name);
        assert_eq!(
            key.int(c"security-bits"),
            Some(set.security_bits),
            "{} security-bits",
            set.name
        );
        assert_eq!(
            key.int(c"max-size"),
            Some(set.ct_len as c_int),
            "{} max-size",
            set.name
        );
        assert_eq!(
            key.int(c"security-category"),
            Some(set.category),
            "{} security-category",
            set.name
        );
        // The same figures through libcrypto's cached accessors.
        // SAFETY: a live key (each call).
        unsafe {
            assert_eq!(ffi::EVP_PKEY_get_bits(key.0), set.bits);
            assert_eq!(ffi::EVP_PKEY_get_security_bits(key.0), set.security_bits);
            assert_eq!(ffi::EVP_PKEY_get_size(key.0), set.ct_len as c_int);
        }
        assert_bytes_eq!(
            key.octets(c"encoded-pub-key").expect("encoded-pub-key"),
            key.public(),
            "{} encoded-pub-key",
            set.name
        );
        assert_eq!(
            key.octets(c"seed").map(|s| s.len()),
            Some(64),
            "{} seed kept",
            set.name
        );
    }
    let key = lib.keygen(ML_KEM_768.name, None);
    assert_eq!(key.int(c"bits"), Some(768));
    assert_eq!(key.int(c"security-bits"), Some(192));
    assert_eq!(key.int(c"max-size"), Some(1088));
}

// ------------------------------------------------------------------ 4. bad input

#[test]
fn decapsulate_wrong_length_ciphertext() {
    let lib = Lib::new();
    let key = lib.keygen(ML_KEM_768.name, None);
    let (ct, secret) = lib.encapsulator(&key, None).encapsulate(ML_KEM_768.ct_len);
    let dec = lib.decapsulator(&key);
    for len in [1, 768, 1087, 1089, 1568] {
        let mut bad = ct.clone();
        bad.resize(len, 0);
        let errors = dec
            .try_decapsulate_into(&bad, 32)
            .err()
            .unwrap_or_else(|| panic!("a {len}-byte ciphertext was decapsulated"));
        errors.assert_reason(
            "invalid length",
            Some(&format!(
                "ML-KEM-768 ciphertext must be 1088 bytes, got {len}"
            )),
        );
    }
    // The context still works afterwards.
    assert_bytes_eq!(dec.decapsulate(&ct), secret);
}

fn implicit_rejection<P: ParameterSet>(lib: &Lib, set: &Set) {
    let seed = seed(7);
    let reference = DecapsulationKey::<P>::from_seed(&seed).expect("kem-core key");
    let key = lib.keygen(set.name, Some(&seed));
    let (ct, secret) = lib.encapsulator(&key, None).encapsulate(set.ct_len);
    let dec = lib.decapsulator(&key);
    for at in [0, set.ct_len / 2, set.ct_len - 1] {
        let mut corrupted = ct.clone();
        corrupted[at] ^= 0x01;
        let rejected = dec.decapsulate(&corrupted);
        assert_eq!(rejected.len(), 32);
        assert_bytes_ne!(
            rejected,
            secret,
            "{}: corrupted ciphertext accepted",
            set.name
        );
        let expected = reference
            .decapsulate(&Ciphertext::<P>::from_bytes(&corrupted).expect("kem-core ciphertext"));
        assert_bytes_eq!(rejected, expected.as_bytes(), "{}: J(z ‖ c)", set.name);
        // Deterministic: the same corrupted ciphertext, the same secret.
        assert_bytes_eq!(dec.decapsulate(&corrupted), rejected);
    }
    // kem-core agrees on the genuine one too.
    let genuine = reference.decapsulate(&Ciphertext::<P>::from_bytes(&ct).expect("ciphertext"));
    assert_bytes_eq!(secret, genuine.as_bytes());
    // And a public key parsed by kem-core encapsulates to our key.
    let ek = EncapsulationKey::<P>::from_bytes(&key.public()).expect("kem-core ek");
    let (ct, secret) = ek.encapsulate_deterministic(&message(1));
    assert_bytes_eq!(dec.decapsulate(ct.as_bytes()), secret.as_bytes());
}

#[test]
fn corrupted_ciphertext_gives_implicit_rejection_secret() {
    let lib = Lib::new();
    implicit_rejection::<MlKem512>(&lib, &SETS[0]);
    implicit_rejection::<MlKem768>(&lib, &SETS[1]);
    implicit_rejection::<MlKem1024>(&lib, &SETS[2]);
}

#[test]
fn output_buffers_too_small() {
    let lib = Lib::new();
    let key = lib.keygen(ML_KEM_768.name, None);
    let enc = lib.encapsulator(&key, None);
    enc.try_encapsulate_into(1087, 32)
        .must_fail("1087-byte ciphertext buffer accepted")
        .assert_reason(
            "output buffer too small",
            Some("ciphertext buffer too small"),
        );
    enc.try_encapsulate_into(1088, 31)
        .must_fail("31-byte secret buffer accepted")
        .assert_reason(
            "output buffer too small",
            Some("shared-secret buffer too small"),
        );
    // Larger buffers are fine; the lengths come back exact.
    let (ct, secret) = enc.try_encapsulate_into(4096, 64).expect("large buffers");
    assert_eq!((ct.len(), secret.len()), (1088, 32));

    let dec = lib.decapsulator(&key);
    dec.try_decapsulate_into(&ct, 31)
        .must_fail("31-byte secret buffer accepted")
        .assert_reason(
            "output buffer too small",
            Some("shared-secret buffer too small"),
        );
    assert_bytes_eq!(
        dec.try_decapsulate_into(&ct, 64).expect("large buffer"),
        secret
    );
}

#[test]
fn encoded_public_key_only_on_empty_key() {
    let lib = Lib::new();
    let key = lib.keygen(ML_KEM_768.name, None);
    let other = lib.keygen(ML_KEM_768.name, None);
    let before = key.public();

    // A key with material is immutable.
    key.set_encoded_public_key(&other.public())
        .must_fail("encoded public key replaced a key's material")
        .assert_reason("key cannot be modified", None);
    assert_bytes_eq!(key.public(), before);
    let public = lib
        .fromdata(
            ML_KEM_768.name,
            ffi::EVP_PKEY_PUBLIC_KEY,
            &[(c"pub", &before)],
        )
        .expect("public import");
    public
        .set_encoded_public_key(&other.public())
        .must_fail("encoded public key replaced a public key")
        .assert_reason("key cannot be modified", None);

    // An empty key (paramgen, as a TLS server makes) takes a public key
    // once, of the right length, and can then encapsulate to it.
    let empty = lib.paramgen(ML_KEM_768.name);
    assert!(
        empty.octets(c"pub").is_none(),
        "paramgen key has a public key"
    );
    assert_eq!(empty.int(c"bits"), Some(768));
    empty
        .set_encoded_public_key(&before[..1000])
        .must_fail("short encoded public key accepted")
        .assert_reason("invalid length", Some("got 1000"));
    empty
        .set_encoded_public_key(&before)
        .unwrap_or_else(|e| panic!("set encoded public key failed:\n{e}"));
    assert_bytes_eq!(empty.public(), before);
    let (ct, secret) = lib.encapsulator(&empty, None).encapsulate(1088);
    assert_bytes_eq!(lib.decapsulator(&key).decapsulate(&ct), secret);
    empty
        .set_encoded_public_key(&other.public())
        .must_fail("second encoded public key accepted")
        .assert_reason("key cannot be modified", None);

    // An empty key neither encapsulates nor decapsulates.
    let empty = lib.paramgen(ML_KEM_768.name);
    lib.try_encapsulator(&empty, None)
        .must_fail("encapsulate_init on an empty key")
        .assert_reason("missing public key", None);
    lib.try_decapsulator(&empty)
        .must_fail("decapsulate_init on an empty key")
        .assert_reason("missing private key", None);
}

// ------------------------------------------------------------------ 5. threads

#[test]
fn one_key_shared_by_eight_threads() {
    const THREADS: usize = 8;
    let rounds = if cfg!(debug_assertions) { 50 } else { 500 };
    let lib = Lib::new();
    let key = lib.keygen(ML_KEM_768.name, None);
    let ciphertexts: Vec<Vec<Vec<u8>>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                let (lib, key) = (&lib, &key);
                scope.spawn(move || {
                    let enc = lib.encapsulator(key, None);
                    let dec = lib.decapsulator(key);
                    let mut seen = Vec::with_capacity(rounds);
                    for round in 0..rounds {
                        let (ct, secret) = enc.encapsulate(1088);
                        assert_bytes_eq!(dec.decapsulate(&ct), secret, "round {round}");
                        seen.push(ct);
                    }
                    seen
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker panicked"))
            .collect()
    });
    let all: HashSet<&Vec<u8>> = ciphertexts.iter().flatten().collect();
    assert_eq!(
        all.len(),
        THREADS * rounds,
        "repeated ciphertexts across threads"
    );
}

// ------------------------------------------------------------------ 6. load / unload

#[test]
fn provider_load_unload_cycles() {
    for cycle in 0..200 {
        let lib = Lib::new();
        let set = &SETS[cycle % 3];
        let key = lib.keygen(set.name, None);
        assert_eq!(key.public().len(), set.ek_len, "cycle {cycle}");
        if cycle % 20 == 0 {
            let (ct, secret) = lib.encapsulator(&key, None).encapsulate(set.ct_len);
            assert_bytes_eq!(
                lib.decapsulator(&key).decapsulate(&ct),
                secret,
                "cycle {cycle}"
            );
        }
    }
}

#[test]
fn reload_in_one_library_context() {
    let lib = Lib::new();
    for cycle in 0..50 {
        // A second activation of the same provider, then its release.
        let exclusive = LIFECYCLE.write().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: a live context and a NUL-terminated name.
        let extra = unsafe { ffi::OSSL_PROVIDER_load(lib.ctx, c"mlkem".as_ptr()) };
        drop(exclusive);
        assert!(!extra.is_null(), "cycle {cycle}: {}", take_errors());
        let key = lib.keygen(ML_KEM_768.name, None);
        {
            let _exclusive = LIFECYCLE.write().unwrap_or_else(PoisonError::into_inner);
            // SAFETY: the reference loaded above, released once.
            assert_eq!(unsafe { ffi::OSSL_PROVIDER_unload(extra) }, 1);
        }
        // The key outlives the extra activation.
        let (ct, secret) = lib.encapsulator(&key, None).encapsulate(1088);
        assert_bytes_eq!(
            lib.decapsulator(&key).decapsulate(&ct),
            secret,
            "cycle {cycle}"
        );
    }
}

/// Errors go through the instance whose object failed: with two library
/// contexts, an error from the first carries the first instance's library
/// code and keeps its reason text after the second instance is unloaded.
#[test]
fn errors_are_raised_through_the_callers_instance() {
    // Hold off every other test's loading and teardown while this test
    // compares two instances.
    let exclusive = LIFECYCLE.write().unwrap_or_else(PoisonError::into_inner);
    let first = Lib::new_with(false);
    let key = first.keygen_unguarded(ML_KEM_768.name);
    // Decapsulates a 10-byte ciphertext with the first instance's key and
    // leaves the error on the queue: its library code and reason text.
    let fail_in_first = || -> (c_int, Option<String>) {
        let ctx = first.raw_ctx_for_key(&key);
        clear_errors();
        let short = [0u8; 10];
        let mut secret = [0u8; 32];
        let mut len = secret.len();
        // SAFETY: a live context initialised for decapsulation, a writable
        // 32-byte buffer and a readable 10-byte ciphertext.
        let rc = unsafe {
            ffi::EVP_PKEY_decapsulate(
                ctx,
                secret.as_mut_ptr(),
                &mut len,
                short.as_ptr(),
                short.len(),
            )
        };
        assert!(rc <= 0);
        // SAFETY: ours, freed once.
        unsafe { ffi::EVP_PKEY_CTX_free(ctx) };
        // SAFETY: reads this thread's queue.
        let code = unsafe { ffi::ERR_peek_last_error() };
        (ffi::ERR_GET_LIB(code), reason_text(code))
    };
    let (alone_lib, alone_reason) = fail_in_first();
    assert_eq!(alone_reason.as_deref(), Some("invalid length"));

    // Load a second instance, fail in the first again, and unload the
    // second while that error is still queued.
    let second = Lib::new_with(false);
    let (raised_lib, _) = fail_in_first();
    drop(second);
    // SAFETY: reads this thread's queue.
    let code = unsafe { ffi::ERR_peek_last_error() };
    let reason = reason_text(code);
    clear_errors();
    drop(key);
    drop(first);
    drop(exclusive);
    assert!(
        raised_lib == alone_lib && reason.as_deref() == Some("invalid length"),
        "an error of the first instance's key was raised with library code {raised_lib} \
         (the second instance's; the first's is {alone_lib}), and once the second instance \
         was unloaded its reason text was {reason:?}"
    );
}

impl Lib {
    /// Keygen without [`LIFECYCLE`] (for a caller holding it exclusively).
    fn keygen_unguarded(&self, alg: &str) -> Pkey<'_> {
        let name = cstring(alg);
        // SAFETY: a live context, a NUL-terminated name; the generation
        // context is freed below, the key handed to the caller.
        unsafe {
            let ctx = ffi::EVP_PKEY_CTX_new_from_name(self.ctx, name.as_ptr(), ptr::null());
            assert!(!ctx.is_null());
            assert_eq!(ffi::EVP_PKEY_keygen_init(ctx), 1);
            let mut key = ptr::null_mut();
            assert_eq!(ffi::EVP_PKEY_keygen(ctx, &mut key), 1);
            ffi::EVP_PKEY_CTX_free(ctx);
            Pkey::wrap(key)
        }
    }

    /// A raw decapsulation context (the caller frees it), without
    /// [`LIFECYCLE`].
    fn raw_ctx_for_key(&self, key: &Pkey<'_>) -> *mut ffi::EVP_PKEY_CTX {
        // SAFETY: a live context and key; NULL propquery and parameters.
        unsafe {
            let ctx = EVP_PKEY_CTX_new_from_pkey(self.ctx, key.0, ptr::null());
            assert!(!ctx.is_null());
            assert_eq!(ffi::EVP_PKEY_decapsulate_init(ctx, ptr::null()), 1);
            ctx
        }
    }
}
