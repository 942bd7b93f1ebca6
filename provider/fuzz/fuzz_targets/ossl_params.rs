//! Fuzz target: the provider's `OSSL_PARAM` handling, driven through
//! libcrypto exactly as applications drive it: key import
//! (`EVP_PKEY_fromdata`), generation parameters, `EVP_PKEY_set_params`,
//! `EVP_PKEY_get_params`, export (`EVP_PKEY_todata`) and the KEM's
//! init/`set_ctx_params`, with parameter arrays built from the fuzz input.
//!
//! The provider is not loaded from `mlkem.so`: its Rust code is linked into
//! this binary (an rlib, instrumented for coverage like the harness) and
//! registered in a fresh `OSSL_LIB_CTX` with `OSSL_PROVIDER_add_builtin`,
//! so libcrypto (the system's, through openssl-sys) calls the same entry
//! points it calls in the module.
//!
//! Input layout (bytes past the end read as zero):
//!
//! ```text
//! algorithm  u8   % 7: ML-KEM-512/768/1024, X25519MLKEM768,
//!                 SecP256r1MLKEM768, SecP384r1MLKEM1024, X448MLKEM1024
//! source     u8   % 3: import (fromdata), keygen, paramgen (an empty key)
//! selection  u8   the import's selection (see `selection`)
//! create     list import params, or the generation context's params
//! set        list EVP_PKEY_set_params on the key
//! get        list EVP_PKEY_get_params on the key (writable buffers)
//! enc_init   list EVP_PKEY_encapsulate_init params
//! enc_set    list EVP_PKEY_CTX_set_params on the encapsulation context
//! ct_slack   i8   ciphertext buffer length minus the length needed
//! ss_slack   i8   shared-secret buffer length minus the length needed
//! dec_init   list EVP_PKEY_decapsulate_init params
//! rest            a ciphertext to decapsulate
//!
//! list  := count:u8 (% 5) param*
//! param := name:u8 type:u8 flags:u8 len:u16le data[len]
//! ```
//!
//! Names come from the provider's real parameter names (plus one it does
//! not know); types are every `OSSL_PARAM` type plus invalid ones; sizes
//! are arbitrary. Each array is built as OpenSSL's `OSSL_PARAM_construct_*`
//! builds one (for the `*_PTR` types `data` points at the pointer and
//! `data_size` is the pointee's length, `return_size` is
//! `OSSL_PARAM_UNMODIFIED`), with the flags varying what callers may vary.
//!
//! Checked, besides "never crashes": a successful get_params never reports
//! more than a buffer holds; an exported key imports back equal; an
//! encapsulation succeeds exactly when the buffers are large enough and
//! reports the sizes the size query gave; decapsulating it gives the same
//! secret; an ML-KEM ciphertext of the right length always decapsulates.

#![no_main]

use core::ffi::{c_char, c_int, c_uint, c_void, CStr};
use core::ptr;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use openssl_sys as ffi;

extern "C" {
    // libcrypto 3.0 functions that openssl-sys does not declare.
    fn OSSL_PROVIDER_add_builtin(
        libctx: *mut ffi::OSSL_LIB_CTX,
        name: *const c_char,
        init: ProviderInit,
    ) -> c_int;
    fn EVP_PKEY_CTX_new_from_pkey(
        libctx: *mut ffi::OSSL_LIB_CTX,
        pkey: *mut ffi::EVP_PKEY,
        propquery: *const c_char,
    ) -> *mut ffi::EVP_PKEY_CTX;
}

/// `OSSL_provider_init_fn`.
type ProviderInit = unsafe extern "C" fn(
    *const c_void,
    *const c_void,
    *mut *const c_void,
    *mut *mut c_void,
) -> c_int;

/// `OSSL_PARAM_UNMODIFIED`.
const UNMODIFIED: usize = usize::MAX;

// The `OSSL_PARAM` data types (`openssl/core.h`).
const OSSL_PARAM_INTEGER: c_uint = 1;
const OSSL_PARAM_UNSIGNED_INTEGER: c_uint = 2;
const OSSL_PARAM_REAL: c_uint = 3;
const OSSL_PARAM_UTF8_STRING: c_uint = 4;
const OSSL_PARAM_OCTET_STRING: c_uint = 5;
const OSSL_PARAM_UTF8_PTR: c_uint = 6;
const OSSL_PARAM_OCTET_PTR: c_uint = 7;

/// The algorithms the provider serves.
const ALGORITHMS: [&CStr; 7] = [
    c"ML-KEM-512",
    c"ML-KEM-768",
    c"ML-KEM-1024",
    c"X25519MLKEM768",
    c"SecP256r1MLKEM768",
    c"SecP384r1MLKEM1024",
    c"X448MLKEM1024",
];

/// Every parameter name the provider reads or writes on keys, generation
/// and KEM contexts, and one it does not know.
const NAMES: [&CStr; 12] = [
    c"seed",
    c"priv",
    c"pub",
    c"encoded-pub-key",
    c"bits",
    c"security-bits",
    c"security-category",
    c"max-size",
    c"properties",
    c"ikme",
    c"group",
    c"no-such-param",
];

/// Every `OSSL_PARAM` data type, then two that are none.
const TYPES: [c_uint; 9] = [
    OSSL_PARAM_INTEGER,
    OSSL_PARAM_UNSIGNED_INTEGER,
    OSSL_PARAM_REAL,
    OSSL_PARAM_UTF8_STRING,
    OSSL_PARAM_OCTET_STRING,
    OSSL_PARAM_UTF8_PTR,
    OSSL_PARAM_OCTET_PTR,
    0,
    0xdead,
];

/// Largest parameter data; the biggest real one (an ML-KEM-1024 hybrid
/// private key) is about 3.2 KiB.
const MAX_PARAM_LEN: u16 = 8192;

/// `OSSL_KEYMGMT_SELECT_*` combinations for the import.
fn selection(byte: u8) -> c_int {
    const PRIVATE: c_int = 0x01;
    const PUBLIC: c_int = 0x02;
    const ALL_PARAMETERS: c_int = 0x84;
    match byte % 6 {
        0 => ALL_PARAMETERS | PUBLIC | PRIVATE, // EVP_PKEY_KEYPAIR
        1 => ALL_PARAMETERS | PUBLIC,           // EVP_PKEY_PUBLIC_KEY
        2 => ALL_PARAMETERS,                    // EVP_PKEY_KEY_PARAMETERS
        3 => PRIVATE,
        4 => 0,
        _ => c_int::from(byte),
    }
}

fuzz_target!(|data: &[u8]| {
    let case = Case::read(&mut Input(data));
    run(lib(), &case);
    // SAFETY: clears this thread's error queue; no arguments.
    unsafe { ffi::ERR_clear_error() };
});

// ------------------------------------------------------------ the input

/// A cursor over the fuzz input; reads past the end give zeros.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    /// `len` bytes, zero-padded past the end.
    fn bytes(&mut self, len: usize) -> Vec<u8> {
        let (given, rest) = self.0.split_at(len.min(self.0.len()));
        self.0 = rest;
        let mut out = given.to_vec();
        out.resize(len, 0);
        out
    }

    /// Everything not read yet.
    fn rest(&mut self) -> &'a [u8] {
        core::mem::take(&mut self.0)
    }
}

/// How the key is made.
#[derive(Debug)]
enum Source {
    Import(c_int),
    Generate,
    ParameterGenerate,
}

/// One parameter, as read from the input.
#[derive(Debug)]
struct ParamSpec {
    name: &'static CStr,
    data_type: c_uint,
    /// `data` is NULL (a size query, when getting).
    null_data: bool,
    /// For the `*_PTR` types: the pointer `data` points at is NULL.
    null_pointee: bool,
    /// `return_size` as a caller may leave it: `OSSL_PARAM_UNMODIFIED` (as
    /// `OSSL_PARAM_construct_*` sets it), 0, or the data's length.
    return_size: ReturnSize,
    bytes: Vec<u8>,
}

#[derive(Clone, Copy, Debug)]
enum ReturnSize {
    Unmodified,
    Zero,
    DataLength,
}

impl ParamSpec {
    fn read(input: &mut Input<'_>) -> Self {
        let name = NAMES[usize::from(input.byte()) % NAMES.len()];
        let data_type = TYPES[usize::from(input.byte()) % TYPES.len()];
        let flags = input.byte();
        let len = input.u16() % (MAX_PARAM_LEN + 1);
        Self {
            name,
            data_type,
            null_data: flags & 1 != 0,
            null_pointee: flags & 2 != 0,
            return_size: match flags >> 2 & 3 {
                0 | 3 => ReturnSize::Unmodified,
                1 => ReturnSize::Zero,
                _ => ReturnSize::DataLength,
            },
            bytes: input.bytes(usize::from(len)),
        }
    }

    /// The `return_size` the entry starts with.
    fn initial_return_size(&self) -> usize {
        match self.return_size {
            ReturnSize::Unmodified => UNMODIFIED,
            ReturnSize::Zero => 0,
            ReturnSize::DataLength => self.bytes.len(),
        }
    }

    fn read_list(input: &mut Input<'_>) -> Vec<Self> {
        let count = input.byte() % 5;
        (0..count).map(|_| Self::read(input)).collect()
    }
}

#[derive(Debug)]
struct Case<'a> {
    algorithm: &'static CStr,
    source: Source,
    create: Vec<ParamSpec>,
    set: Vec<ParamSpec>,
    get: Vec<ParamSpec>,
    encapsulate_init: Vec<ParamSpec>,
    encapsulate_set: Vec<ParamSpec>,
    ct_slack: i8,
    ss_slack: i8,
    decapsulate_init: Vec<ParamSpec>,
    ciphertext: &'a [u8],
}

impl<'a> Case<'a> {
    fn read(input: &mut Input<'a>) -> Self {
        let algorithm = ALGORITHMS[usize::from(input.byte()) % ALGORITHMS.len()];
        let source = match input.byte() % 3 {
            0 => Source::Import(selection(input.byte())),
            1 => Source::Generate,
            _ => Source::ParameterGenerate,
        };
        if !matches!(source, Source::Import(_)) {
            input.byte();
        }
        Self {
            algorithm,
            source,
            create: ParamSpec::read_list(input),
            set: ParamSpec::read_list(input),
            get: ParamSpec::read_list(input),
            encapsulate_init: ParamSpec::read_list(input),
            encapsulate_set: ParamSpec::read_list(input),
            ct_slack: input.byte() as i8,
            ss_slack: input.byte() as i8,
            decapsulate_init: ParamSpec::read_list(input),
            ciphertext: input.rest(),
        }
    }

    fn is_pure_ml_kem(&self) -> bool {
        self.algorithm.to_bytes().starts_with(b"ML-KEM")
    }
}

// ------------------------------------------------------------ OSSL_PARAM arrays

/// A terminated `OSSL_PARAM` array and the buffers its entries point at.
struct ParamArray {
    params: Vec<ffi::OSSL_PARAM>,
    /// Data buffers, pointer slots and pointees. Each is a separate heap
    /// allocation, which does not move while the array lives.
    _buffers: Vec<Box<[u8]>>,
}

impl ParamArray {
    fn build(specs: &[ParamSpec]) -> Self {
        let mut buffers: Vec<Box<[u8]>> = Vec::new();
        let mut params = Vec::with_capacity(specs.len() + 1);
        for spec in specs {
            let is_ptr = matches!(spec.data_type, OSSL_PARAM_UTF8_PTR | OSSL_PARAM_OCTET_PTR);
            let (data, data_size) = if spec.null_data {
                (ptr::null_mut(), spec.bytes.len())
            } else if is_ptr {
                // As OSSL_PARAM_construct_{utf8,octet}_ptr: `data` is the
                // address of a pointer, `data_size` the pointee's length.
                let pointee = if spec.null_pointee {
                    ptr::null()
                } else {
                    let mut bytes = spec.bytes.clone();
                    if spec.data_type == OSSL_PARAM_UTF8_PTR {
                        bytes.push(0);
                    }
                    let mut pointee = bytes.into_boxed_slice();
                    let at = pointee.as_mut_ptr();
                    buffers.push(pointee);
                    at.cast_const()
                };
                let mut slot = (pointee as usize).to_ne_bytes().to_vec().into_boxed_slice();
                let at = slot.as_mut_ptr();
                buffers.push(slot);
                (at.cast::<c_void>(), spec.bytes.len())
            } else {
                let mut buffer = spec.bytes.clone().into_boxed_slice();
                let at = buffer.as_mut_ptr();
                buffers.push(buffer);
                (at.cast::<c_void>(), spec.bytes.len())
            };
            params.push(ffi::OSSL_PARAM {
                key: spec.name.as_ptr(),
                data_type: spec.data_type,
                data,
                data_size,
                return_size: spec.initial_return_size(),
            });
        }
        params.push(ffi::OSSL_PARAM {
            key: ptr::null(),
            data_type: 0,
            data: ptr::null_mut(),
            data_size: 0,
            return_size: 0,
        });
        Self {
            params,
            _buffers: buffers,
        }
    }

    fn as_ptr(&self) -> *const ffi::OSSL_PARAM {
        self.params.as_ptr()
    }

    fn as_mut_ptr(&mut self) -> *mut ffi::OSSL_PARAM {
        self.params.as_mut_ptr()
    }

    /// After a successful get_params: no string parameter was told it got
    /// more than its buffer holds.
    fn check_filled(&self, specs: &[ParamSpec]) {
        for (param, spec) in self.params.iter().zip(specs) {
            let fills_buffer = matches!(
                param.data_type,
                OSSL_PARAM_OCTET_STRING | OSSL_PARAM_UTF8_STRING
            );
            let set =
                param.return_size != UNMODIFIED && param.return_size != spec.initial_return_size();
            if fills_buffer && !param.data.is_null() && set {
                assert!(
                    param.return_size <= param.data_size,
                    "get_params: '{}' claims {} bytes in a {}-byte buffer",
                    spec.name.to_string_lossy(),
                    param.return_size,
                    param.data_size
                );
            }
        }
    }
}

// ------------------------------------------------------------ libcrypto

/// A fresh library context with the default provider and ours (built in).
struct Lib {
    ctx: *mut ffi::OSSL_LIB_CTX,
}

// SAFETY: OpenSSL documents OSSL_LIB_CTX as usable from any thread; the
// target is single-threaded anyway.
unsafe impl Send for Lib {}
// SAFETY: as above.
unsafe impl Sync for Lib {}

fn lib() -> &'static Lib {
    static LIB: OnceLock<Lib> = OnceLock::new();
    LIB.get_or_init(|| {
        ffi::init();
        // SAFETY: plain constructor; the context lives for the process.
        let ctx = unsafe { ffi::OSSL_LIB_CTX_new() };
        assert!(!ctx.is_null(), "OSSL_LIB_CTX_new failed");
        // SAFETY: the provider's init function has OpenSSL's
        // `OSSL_provider_init_fn` signature; its argument types are
        // pointers, the same as `ProviderInit`'s.
        let init: ProviderInit = unsafe {
            core::mem::transmute::<unsafe extern "C" fn(_, _, _, _) -> c_int, ProviderInit>(
                mlkem::OSSL_provider_init,
            )
        };
        // SAFETY: a live context, a NUL-terminated name, a valid init.
        let added = unsafe { OSSL_PROVIDER_add_builtin(ctx, c"mlkem".as_ptr(), init) };
        assert_eq!(added, 1, "OSSL_PROVIDER_add_builtin failed");
        for name in [c"default", c"mlkem"] {
            // SAFETY: a live context and a NUL-terminated name; the
            // provider stays loaded for the process.
            let provider = unsafe { ffi::OSSL_PROVIDER_load(ctx, name.as_ptr()) };
            assert!(!provider.is_null(), "loading {name:?} failed");
        }
        Lib { ctx }
    })
}

/// An owned `EVP_PKEY`.
struct Pkey(*mut ffi::EVP_PKEY);

impl Drop for Pkey {
    fn drop(&mut self) {
        // SAFETY: we own the key; NULL is ignored by EVP_PKEY_free.
        unsafe { ffi::EVP_PKEY_free(self.0) };
    }
}

/// An owned `EVP_PKEY_CTX`.
struct PkeyCtx(*mut ffi::EVP_PKEY_CTX);

impl Drop for PkeyCtx {
    fn drop(&mut self) {
        // SAFETY: we own the context; NULL is ignored.
        unsafe { ffi::EVP_PKEY_CTX_free(self.0) };
    }
}

impl PkeyCtx {
    fn for_algorithm(lib: &Lib, algorithm: &CStr) -> Option<Self> {
        // SAFETY: a live library context and a NUL-terminated name.
        let ctx =
            unsafe { ffi::EVP_PKEY_CTX_new_from_name(lib.ctx, algorithm.as_ptr(), ptr::null()) };
        (!ctx.is_null()).then_some(Self(ctx))
    }

    fn for_key(lib: &Lib, key: &Pkey) -> Option<Self> {
        // SAFETY: a live library context and key.
        let ctx = unsafe { EVP_PKEY_CTX_new_from_pkey(lib.ctx, key.0, ptr::null()) };
        (!ctx.is_null()).then_some(Self(ctx))
    }
}

/// Imports `params` as a key of `algorithm`.
fn import(lib: &Lib, algorithm: &CStr, selection: c_int, params: &mut ParamArray) -> Option<Pkey> {
    let ctx = PkeyCtx::for_algorithm(lib, algorithm)?;
    let mut key = ptr::null_mut();
    // SAFETY: a live context; `params` is terminated and its buffers live.
    let ok = unsafe {
        ffi::EVP_PKEY_fromdata_init(ctx.0) == 1
            && ffi::EVP_PKEY_fromdata(ctx.0, &mut key, selection, params.as_mut_ptr()) == 1
    };
    let key = Pkey(key);
    (ok && !key.0.is_null()).then_some(key)
}

/// Generates a key (or, with `parameters_only`, an empty one) with `params`
/// set on the generation context.
fn generate(
    lib: &Lib,
    algorithm: &CStr,
    parameters_only: bool,
    params: &ParamArray,
) -> Option<Pkey> {
    let ctx = PkeyCtx::for_algorithm(lib, algorithm)?;
    let mut key = ptr::null_mut();
    // SAFETY: a live context; `params` is terminated and its buffers live.
    // Generation goes ahead whether or not the parameters were accepted.
    let ok = unsafe {
        let init = if parameters_only {
            ffi::EVP_PKEY_paramgen_init(ctx.0)
        } else {
            ffi::EVP_PKEY_keygen_init(ctx.0)
        };
        if init != 1 {
            return None;
        }
        ffi::EVP_PKEY_CTX_set_params(ctx.0, params.as_ptr());
        if parameters_only {
            ffi::EVP_PKEY_paramgen(ctx.0, &mut key) == 1
        } else {
            ffi::EVP_PKEY_keygen(ctx.0, &mut key) == 1
        }
    };
    let key = Pkey(key);
    (ok && !key.0.is_null()).then_some(key)
}

// ------------------------------------------------------------ the run

fn run(lib: &Lib, case: &Case<'_>) {
    let mut create = ParamArray::build(&case.create);
    let key = match case.source {
        Source::Import(selection) => import(lib, case.algorithm, selection, &mut create),
        Source::Generate => generate(lib, case.algorithm, false, &create),
        Source::ParameterGenerate => generate(lib, case.algorithm, true, &create),
    };
    let Some(key) = key else {
        return;
    };

    let mut set = ParamArray::build(&case.set);
    // SAFETY: a live key; a terminated array whose buffers live.
    unsafe { ffi::EVP_PKEY_set_params(key.0, set.as_mut_ptr()) };

    let mut get = ParamArray::build(&case.get);
    // SAFETY: a live key; a terminated array of writable buffers of the
    // declared sizes.
    if unsafe { ffi::EVP_PKEY_get_params(key.0, get.as_mut_ptr()) } == 1 {
        get.check_filled(&case.get);
    }

    check_export(lib, case.algorithm, &key);
    let encapsulated = encapsulate(lib, case, &key);
    decapsulate(lib, case, &key, encapsulated);
}

/// An exported key imports back, equal.
fn check_export(lib: &Lib, algorithm: &CStr, key: &Pkey) {
    const KEYPAIR: c_int = 0x87;
    let mut exported: *mut ffi::OSSL_PARAM = ptr::null_mut();
    // SAFETY: a live key; `exported` receives an array we free below.
    if unsafe { ffi::EVP_PKEY_todata(key.0, KEYPAIR, &mut exported) } != 1 {
        return;
    }
    let ctx = PkeyCtx::for_algorithm(lib, algorithm).expect("the key's algorithm is fetchable");
    let mut imported = ptr::null_mut();
    // SAFETY: a live context; `exported` is libcrypto's terminated array.
    let ok = unsafe {
        ffi::EVP_PKEY_fromdata_init(ctx.0) == 1
            && ffi::EVP_PKEY_fromdata(ctx.0, &mut imported, KEYPAIR, exported) == 1
    };
    let imported = Pkey(imported);
    // SAFETY: allocated by EVP_PKEY_todata, not used again.
    unsafe { ffi::OSSL_PARAM_free(exported) };
    assert!(ok, "{algorithm:?}: an exported key does not import back");
    // SAFETY: two live keys.
    let equal = unsafe { ffi::EVP_PKEY_eq(key.0, imported.0) };
    assert_eq!(equal, 1, "{algorithm:?}: the re-imported key differs");
}

/// Buffer length `needed + slack`, at least 0.
fn with_slack(needed: usize, slack: i8) -> usize {
    needed.saturating_add_signed(isize::from(slack))
}

/// Encapsulates to `key` with the case's parameters and buffer sizes;
/// returns the ciphertext and secret when that succeeded.
fn encapsulate(lib: &Lib, case: &Case<'_>, key: &Pkey) -> Option<(Vec<u8>, Vec<u8>)> {
    let ctx = PkeyCtx::for_key(lib, key)?;
    let init = ParamArray::build(&case.encapsulate_init);
    let set = ParamArray::build(&case.encapsulate_set);
    // SAFETY: a live context; terminated arrays whose buffers live.
    unsafe {
        if ffi::EVP_PKEY_encapsulate_init(ctx.0, init.as_ptr()) != 1 {
            return None;
        }
        ffi::EVP_PKEY_CTX_set_params(ctx.0, set.as_ptr());
    }
    let (mut ct_len, mut ss_len) = (0usize, 0usize);
    // SAFETY: a size query: NULL buffers, valid length pointers.
    let sized = unsafe {
        ffi::EVP_PKEY_encapsulate(
            ctx.0,
            ptr::null_mut(),
            &mut ct_len,
            ptr::null_mut(),
            &mut ss_len,
        )
    };
    if sized != 1 {
        return None;
    }
    let mut ct = vec![0u8; with_slack(ct_len, case.ct_slack)];
    let mut ss = vec![0u8; with_slack(ss_len, case.ss_slack)];
    let (mut ct_out, mut ss_out) = (ct.len(), ss.len());
    // SAFETY: buffers of the lengths passed in `ct_out` and `ss_out`.
    let ok = unsafe {
        ffi::EVP_PKEY_encapsulate(
            ctx.0,
            ct.as_mut_ptr(),
            &mut ct_out,
            ss.as_mut_ptr(),
            &mut ss_out,
        )
    };
    let fits = ct.len() >= ct_len && ss.len() >= ss_len;
    assert_eq!(
        ok == 1,
        fits,
        "{:?}: encapsulation into {}/{} bytes (needs {ct_len}/{ss_len})",
        case.algorithm,
        ct.len(),
        ss.len()
    );
    if ok != 1 {
        return None;
    }
    assert_eq!((ct_out, ss_out), (ct_len, ss_len), "sizes as queried");
    ct.truncate(ct_out);
    ss.truncate(ss_out);
    Some((ct, ss))
}

/// Decapsulates `encapsulated` (must give its secret) and the input's
/// ciphertext.
fn decapsulate(lib: &Lib, case: &Case<'_>, key: &Pkey, encapsulated: Option<(Vec<u8>, Vec<u8>)>) {
    let Some(ctx) = PkeyCtx::for_key(lib, key) else {
        return;
    };
    let init = ParamArray::build(&case.decapsulate_init);
    // SAFETY: a live context; a terminated array whose buffers live.
    if unsafe { ffi::EVP_PKEY_decapsulate_init(ctx.0, init.as_ptr()) } != 1 {
        return;
    }
    let mut secret = [0u8; 128];
    if let Some((ct, expected)) = encapsulated {
        let mut len = secret.len();
        // SAFETY: `secret` holds `len` bytes; `ct` is readable.
        let ok = unsafe {
            ffi::EVP_PKEY_decapsulate(ctx.0, secret.as_mut_ptr(), &mut len, ct.as_ptr(), ct.len())
        };
        assert_eq!(
            ok, 1,
            "{:?}: decapsulating our own ciphertext",
            case.algorithm
        );
        assert_eq!(
            &secret[..len],
            expected.as_slice(),
            "{:?}: decapsulated secret differs from the encapsulated one",
            case.algorithm
        );
    }
    let mut ct_len = 0usize;
    // The ciphertext length, from the key (`max-size`).
    // SAFETY: a live key, a NUL-terminated name, a valid out-pointer.
    let size_known =
        unsafe { ffi::EVP_PKEY_get_size_t_param(key.0, c"max-size".as_ptr(), &mut ct_len) == 1 };
    let mut len = secret.len();
    // SAFETY: `secret` holds `len` bytes; the ciphertext is readable.
    let ok = unsafe {
        ffi::EVP_PKEY_decapsulate(
            ctx.0,
            secret.as_mut_ptr(),
            &mut len,
            case.ciphertext.as_ptr(),
            case.ciphertext.len(),
        )
    };
    if case.is_pure_ml_kem() && size_known && case.ciphertext.len() == ct_len {
        assert_eq!(
            ok, 1,
            "{:?}: a full-length ciphertext must decapsulate",
            case.algorithm
        );
    }
}
