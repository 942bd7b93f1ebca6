//! The libcrypto and libssl calls the openssl crate does not wrap: what
//! OpenSSL says about itself, its configuration and its providers. Every
//! `unsafe` block of the check is in this file.

use std::ffi::{c_char, c_int, c_long, c_uint, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr;

use openssl::error::ErrorStack;
use openssl_sys::{OSSL_LIB_CTX, OSSL_PROVIDER};

#[repr(C)]
struct EvpKem {
    _opaque: [u8; 0],
}

#[repr(C)]
struct NconfHandle {
    _opaque: [u8; 0],
}

/// OpenSSL's `CONF_VALUE`: one `name = value` of a section.
#[repr(C)]
struct ConfValue {
    section: *mut c_char,
    name: *mut c_char,
    value: *mut c_char,
}

/// OpenSSL's `OSSL_PARAM`.
#[repr(C)]
struct OsslParam {
    key: *const c_char,
    data_type: c_uint,
    data: *mut c_void,
    data_size: usize,
    return_size: usize,
}

const OSSL_PARAM_UTF8_STRING: c_uint = 4;
// OpenSSL_version() keys (crypto.h).
const OPENSSL_VERSION: c_int = 0;
const OPENSSL_DIR: c_int = 4;
const OPENSSL_MODULES_DIR: c_int = 8;
const OPENSSL_INIT_LOAD_CONFIG: u64 = 0x0000_0040;

extern "C" {
    fn OSSL_PROVIDER_available(libctx: *mut OSSL_LIB_CTX, name: *const c_char) -> c_int;
    fn OSSL_PROVIDER_get_params(prov: *const OSSL_PROVIDER, params: *mut OsslParam) -> c_int;
    fn OSSL_LIB_CTX_load_config(ctx: *mut OSSL_LIB_CTX, config_file: *const c_char) -> c_int;
    fn EVP_KEM_fetch(
        ctx: *mut OSSL_LIB_CTX,
        algorithm: *const c_char,
        properties: *const c_char,
    ) -> *mut EvpKem;
    fn EVP_KEM_get0_provider(kem: *const EvpKem) -> *const OSSL_PROVIDER;
    fn EVP_KEM_free(kem: *mut EvpKem);
    fn OSSL_PROVIDER_get0_name(prov: *const OSSL_PROVIDER) -> *const c_char;
    fn NCONF_new(method: *mut c_void) -> *mut NconfHandle;
    fn NCONF_free(conf: *mut NconfHandle);
    fn NCONF_load(conf: *mut NconfHandle, file: *const c_char, eline: *mut c_long) -> c_int;
    fn NCONF_get_section(conf: *const NconfHandle, section: *const c_char) -> *mut c_void;
    fn OPENSSL_sk_num(stack: *const c_void) -> c_int;
    fn OPENSSL_sk_value(stack: *const c_void, index: c_int) -> *mut c_void;
}

fn text(p: *const c_char) -> Option<String> {
    // SAFETY: OpenSSL returns NUL-terminated strings it owns, or NULL.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// `OpenSSL_version(key)`, with the `NAME: "..."` wrapping of the directory
/// keys taken off.
fn version_text(key: c_int) -> String {
    // SAFETY: OpenSSL_version takes any key and returns a static string.
    let raw = text(unsafe { openssl_sys::OpenSSL_version(key) }).unwrap_or_default();
    match raw.split_once(": \"") {
        Some((_, rest)) => rest.trim_end_matches('"').to_owned(),
        None => raw,
    }
}

/// What the libcrypto in this process says about itself.
pub struct OpenSslInfo {
    /// `OpenSSL 3.0.13 30 Jan 2024`.
    pub version: String,
    /// OPENSSLDIR, where the default configuration file lives.
    pub openssl_dir: PathBuf,
    /// MODULESDIR, where `-provider NAME` looks for NAME.so.
    pub modules_dir: PathBuf,
    /// The file libssl was loaded from (which OpenSSL this is).
    pub libssl: Option<PathBuf>,
}

/// The version and directories of the OpenSSL this program runs on.
pub fn openssl_info() -> OpenSslInfo {
    OpenSslInfo {
        version: version_text(OPENSSL_VERSION),
        openssl_dir: version_text(OPENSSL_DIR).into(),
        modules_dir: version_text(OPENSSL_MODULES_DIR).into(),
        libssl: loaded_from(openssl_sys::SSL_CTX_new as *const c_void),
    }
}

/// The shared object that holds `symbol`.
fn loaded_from(symbol: *const c_void) -> Option<PathBuf> {
    // SAFETY: dladdr only reads the loader's tables; `info` is written by it.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `symbol` is only compared against loaded ranges.
    let found = unsafe { libc::dladdr(symbol, &mut info) };
    (found != 0).then(|| text(info.dli_fname).map(PathBuf::from))?
}

/// Initialises libssl as applications do (which reads the configuration
/// in effect); the errors if that failed (`config_diagnostics = 1` makes
/// configuration errors fail it).
pub fn init_ssl() -> Result<(), ErrorStack> {
    // SAFETY: a plain initialisation call; NULL settings take the defaults.
    let ok = unsafe {
        openssl_sys::OPENSSL_init_ssl(
            OPENSSL_INIT_LOAD_CONFIG | openssl_sys::OPENSSL_INIT_LOAD_SSL_STRINGS,
            ptr::null(),
        )
    };
    if ok == 1 {
        Ok(())
    } else {
        Err(ErrorStack::get())
    }
}

/// Whether a provider of this name is available in the default library
/// context (loaded by the configuration, or the implicit default).
pub fn provider_available(name: &str) -> bool {
    let name = CString::new(name).expect("provider names have no NUL");
    // SAFETY: NULL is the default library context; the name is a C string.
    unsafe { OSSL_PROVIDER_available(ptr::null_mut(), name.as_ptr()) == 1 }
}

/// The provider that serves `algorithm` (a KEM) to a default fetch, as
/// every program without property queries of its own gets it.
pub fn kem_provider(algorithm: &str) -> Option<String> {
    let algorithm = CString::new(algorithm).expect("algorithm names have no NUL");
    // SAFETY: a fetch from the default context with no properties; the
    // result is freed after its provider's name is copied.
    unsafe {
        let kem = EVP_KEM_fetch(ptr::null_mut(), algorithm.as_ptr(), ptr::null());
        if kem.is_null() {
            ErrorStack::get(); // the fetch's "unsupported" is the answer
            return None;
        }
        let name = text(OSSL_PROVIDER_get0_name(EVP_KEM_get0_provider(kem)));
        EVP_KEM_free(kem);
        name
    }
}

/// A library context of its own, freed on drop.
struct LibCtx(*mut OSSL_LIB_CTX);

impl LibCtx {
    fn new() -> Result<Self, ErrorStack> {
        // SAFETY: no arguments; NULL on failure.
        let ctx = unsafe { openssl_sys::OSSL_LIB_CTX_new() };
        if ctx.is_null() {
            Err(ErrorStack::get())
        } else {
            Ok(Self(ctx))
        }
    }
}

impl Drop for LibCtx {
    fn drop(&mut self) {
        // SAFETY: created by OSSL_LIB_CTX_new and freed once; the providers
        // loaded into it are unloaded with it.
        unsafe { openssl_sys::OSSL_LIB_CTX_free(self.0) }
    }
}

/// A configuration file as libcrypto's own parser reads it (`NCONF_load`:
/// includes, pragmas, quoting, escapes and `$variables` all OpenSSL's),
/// freed on drop.
pub struct Nconf(*mut NconfHandle);

impl Nconf {
    /// Reads `file` with OpenSSL's default configuration method; the error
    /// names OpenSSL's reason and the line it stopped at.
    pub fn load(file: &Path) -> Result<Self, String> {
        let path = CString::new(file.as_os_str().as_encoded_bytes())
            .map_err(|_| "the file name has a NUL byte".to_owned())?;
        // SAFETY: NULL asks for the default method; NULL on failure.
        let conf = Nconf(unsafe { NCONF_new(ptr::null_mut()) });
        if conf.0.is_null() {
            return Err(describe(&ErrorStack::get()));
        }
        let mut line: c_long = 0;
        // SAFETY: a live CONF, a C string and a long to write the line to.
        if unsafe { NCONF_load(conf.0, path.as_ptr(), &mut line) } != 1 {
            let why = describe(&ErrorStack::get());
            return Err(if line > 0 {
                format!("{why} (line {line}, counting the lines of included files)")
            } else {
                why
            });
        }
        // Includes OpenSSL skipped (a missing file is not an error) leave
        // their reasons queued: they are the explaining reader's to tell.
        ErrorStack::get();
        Ok(conf)
    }

    /// The `name = value` pairs of `section` in OpenSSL's order (a key
    /// set twice keeps its last value, at its last place), or `None` if
    /// the file has no such section.
    pub fn section(&self, section: &str) -> Option<Vec<(String, String)>> {
        let name = CString::new(section).ok()?;
        // SAFETY: a loaded CONF and a C string; the stack and its values
        // belong to the CONF, which outlives this borrow, and are copied.
        unsafe {
            let stack = NCONF_get_section(self.0, name.as_ptr());
            if stack.is_null() {
                ErrorStack::get();
                return None;
            }
            let values = (0..OPENSSL_sk_num(stack))
                .filter_map(|i| {
                    let value = OPENSSL_sk_value(stack, i).cast::<ConfValue>().as_ref()?;
                    Some((text(value.name)?, text(value.value)?))
                })
                .collect();
            Some(values)
        }
    }
}

impl Drop for Nconf {
    fn drop(&mut self) {
        // SAFETY: made by NCONF_new and freed once (NULL is accepted).
        unsafe { NCONF_free(self.0) }
    }
}

/// Loads a configuration file into a fresh library context with every
/// error reported (as `config_diagnostics = 1` would), then says whether
/// the named provider ended up available there.
pub fn load_config_strictly(file: &Path, provider: &str) -> Result<bool, ErrorStack> {
    let ctx = LibCtx::new()?;
    let file = CString::new(file.as_os_str().as_encoded_bytes()).map_err(|_| ErrorStack::get())?;
    let name = CString::new(provider).expect("provider names have no NUL");
    // SAFETY: a live context and C strings; the context outlives both calls.
    unsafe {
        if OSSL_LIB_CTX_load_config(ctx.0, file.as_ptr()) != 1 {
            return Err(ErrorStack::get());
        }
        Ok(OSSL_PROVIDER_available(ctx.0, name.as_ptr()) == 1)
    }
}

/// Loads a provider module from a path into a fresh library context and
/// returns its build information (`buildinfo`), as proof that it loads
/// and initialises in this OpenSSL.
pub fn probe_module(path: &Path) -> Result<String, ErrorStack> {
    let ctx = LibCtx::new()?;
    let path = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| ErrorStack::get())?;
    // SAFETY: a live context; a name with a '/' is loaded as that file.
    let prov = unsafe { openssl_sys::OSSL_PROVIDER_load(ctx.0, path.as_ptr()) };
    if prov.is_null() {
        return Err(ErrorStack::get());
    }
    let mut buffer = [0u8; 256];
    let mut params = [
        OsslParam {
            key: c"buildinfo".as_ptr(),
            data_type: OSSL_PARAM_UTF8_STRING,
            data: buffer.as_mut_ptr().cast(),
            data_size: buffer.len(),
            return_size: usize::MAX,
        },
        OsslParam {
            key: ptr::null(),
            data_type: 0,
            data: ptr::null_mut(),
            data_size: 0,
            return_size: 0,
        },
    ];
    // SAFETY: a terminated parameter array whose buffer outlives the call;
    // the provider is unloaded once, before its context is freed.
    let info = unsafe {
        let ok = OSSL_PROVIDER_get_params(prov, params.as_mut_ptr());
        openssl_sys::OSSL_PROVIDER_unload(prov);
        ok
    };
    let len = params[0].return_size.min(buffer.len());
    let buildinfo = if info == 1 && params[0].return_size != usize::MAX {
        String::from_utf8_lossy(&buffer[..len])
            .trim_end_matches('\0')
            .to_owned()
    } else {
        String::from("(no build information)")
    };
    Ok(buildinfo)
}

/// Loads `name` into the default library context, keeping the implicit
/// default provider if the configuration loaded none (remote mode, where
/// the provider need not be enabled system-wide).
pub fn load_provider(name: &str) -> Result<(), ErrorStack> {
    let name = CString::new(name).expect("provider names have no NUL");
    // SAFETY: NULL is the default context; the handle stays loaded for the
    // life of the process on purpose.
    let prov = unsafe { openssl_sys::OSSL_PROVIDER_try_load(ptr::null_mut(), name.as_ptr(), 1) };
    if prov.is_null() {
        Err(ErrorStack::get())
    } else {
        Ok(())
    }
}

/// The errors of a stack as one line: OpenSSL's reasons, most specific last.
pub fn describe(errors: &ErrorStack) -> String {
    let mut parts: Vec<String> = Vec::new();
    for e in errors.errors() {
        let mut part = e.reason().unwrap_or("unknown error").to_owned();
        if let Some(data) = e.data() {
            part.push_str(&format!(" ({data})"));
        }
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    if parts.is_empty() {
        "no reason given by OpenSSL".to_owned()
    } else {
        parts.join("; ")
    }
}
