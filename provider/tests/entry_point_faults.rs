//! A table of faults, one or more per provider entry point, each driven
//! through OpenSSL's public API (EVP, OSSL_ENCODER, OSSL_DECODER,
//! OSSL_PROVIDER) of the system's libcrypto (3.0) with the provider loaded
//! in a fresh library context.
//!
//! Every case names the entry point it aims at, the fault, and the
//! expected result:
//!
//! - [`Expect::Ours`]: the call fails and the error queue holds the
//!   provider's reason string (`provider/src/error.rs`), raised under the
//!   provider's own error library;
//! - [`Expect::OpenSsl`]: OpenSSL's own layer rejects the call before it
//!   reaches the provider: it fails with OpenSSL's reason and nothing of
//!   ours is raised;
//! - [`Expect::OpenSslSilent`]: OpenSSL's layer returns a failure before
//!   reaching the provider and raises nothing (3.0's argument checks in
//!   `EVP_PKEY_encapsulate` / `EVP_PKEY_decapsulate` do that);
//! - [`Expect::No`]: a check or comparison reaches the provider, which
//!   answers "no" (0) without raising anything, as OpenSSL 3.5's own
//!   ML-KEM does for the same question.
//!
//! Every case runs (a panic inside one is caught and reported as that
//! case's failure); the test prints each case and fails at the end with all
//! the cases that did not behave as expected.

mod common;

use std::ffi::{c_int, c_uint, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::PoisonError;

use openssl_sys as ffi;

use common::evp::{
    checked, checked_ptr, clear_errors, lib_text, message, take_errors, Errors, Lib, Pkey, PkeyCtx,
    LIFECYCLE,
};

// Functions of libcrypto 3.0 that openssl-sys does not declare.
extern "C" {
    fn EVP_PKEY_private_check(ctx: *mut ffi::EVP_PKEY_CTX) -> c_int;
    fn EVP_PKEY_CTX_dup(ctx: *const ffi::EVP_PKEY_CTX) -> *mut ffi::EVP_PKEY_CTX;
    fn OSSL_PROVIDER_get_params(
        provider: *const ffi::OSSL_PROVIDER,
        params: *mut ffi::OSSL_PARAM,
    ) -> c_int;
}

/// The name the provider's errors are registered under (its error
/// library's name).
const OUR_LIBRARY: &str = "mlkem";

// ------------------------------------------------------------------ parameters

/// `OSSL_PARAM` data types (`core.h`).
const INTEGER: c_uint = 1;
const UTF8_STRING: c_uint = 4;
const OCTET_STRING: c_uint = 5;
/// `OSSL_PARAM_UNMODIFIED`.
const UNMODIFIED: usize = usize::MAX;

/// One parameter of any type, pointing at `data` (which must outlive its
/// use; set-parameter calls only read it).
fn param(
    name: &'static CStr,
    data_type: c_uint,
    data: *mut c_void,
    size: usize,
) -> ffi::OSSL_PARAM {
    ffi::OSSL_PARAM {
        key: name.as_ptr(),
        data_type,
        data,
        data_size: size,
        return_size: UNMODIFIED,
    }
}

/// An octet-string parameter to be read.
fn octets(name: &'static CStr, value: &[u8]) -> ffi::OSSL_PARAM {
    param(
        name,
        OCTET_STRING,
        value.as_ptr().cast_mut().cast(),
        value.len(),
    )
}

/// A UTF-8 string parameter to be read.
fn utf8(name: &'static CStr, value: &'static CStr) -> ffi::OSSL_PARAM {
    let bytes = value.to_bytes();
    param(
        name,
        UTF8_STRING,
        bytes.as_ptr().cast_mut().cast(),
        bytes.len(),
    )
}

/// An integer parameter to be read or written.
fn int(name: &'static CStr, value: &mut c_int) -> ffi::OSSL_PARAM {
    param(
        name,
        INTEGER,
        ptr::from_mut(value).cast(),
        size_of::<c_int>(),
    )
}

/// `parts` with the terminator.
fn terminated(parts: impl IntoIterator<Item = ffi::OSSL_PARAM>) -> Vec<ffi::OSSL_PARAM> {
    let mut list: Vec<ffi::OSSL_PARAM> = parts.into_iter().collect();
    // SAFETY: builds the terminator.
    list.push(unsafe { ffi::OSSL_PARAM_construct_end() });
    list
}

// ------------------------------------------------------------------ the fixture

/// Keys and inputs every case may use, all from one library context.
struct Fixture<'l> {
    lib: &'l Lib,
    /// A seeded ML-KEM-768 key pair.
    full: Pkey<'l>,
    /// Its public half alone.
    public: Pkey<'l>,
    /// An ML-KEM-768 key without material (parameter generation).
    empty: Pkey<'l>,
    /// An X25519 key of the default provider.
    x25519: Pkey<'l>,
    /// A ciphertext to `full`.
    ct: Vec<u8>,
    /// `full`'s encoded public key and expanded private key.
    ek: Vec<u8>,
    dk: Vec<u8>,
    /// `full`'s DER PrivateKeyInfo, from our encoder.
    private_der: Vec<u8>,
}

impl<'l> Fixture<'l> {
    fn new(lib: &'l Lib) -> Self {
        let seed: [u8; 64] = std::array::from_fn(|i| (i as u8).wrapping_mul(29) ^ 0x5a);
        let full = lib.keygen("ML-KEM-768", Some(&seed));
        let ek = full.public();
        let dk = full.private();
        let public = lib
            .fromdata("ML-KEM-768", ffi::EVP_PKEY_PUBLIC_KEY, &[(c"pub", &ek)])
            .unwrap_or_else(|e| panic!("public import:\n{e}"));
        let (ct, _) = lib
            .encapsulator(&full, None)
            .try_encapsulate_into(1088, 32)
            .unwrap_or_else(|e| panic!("encapsulate:\n{e}"));
        let private_der = encode(&full, ffi::EVP_PKEY_KEYPAIR, c"PrivateKeyInfo", None)
            .unwrap_or_else(|e| panic!("PrivateKeyInfo:\n{e}"));
        Fixture {
            lib,
            public,
            empty: lib.paramgen("ML-KEM-768"),
            x25519: lib.keygen("X25519", None),
            ct,
            ek,
            dk,
            private_der,
            full,
        }
    }

    /// `EVP_PKEY_fromdata` of ML-KEM-768 with any parameters.
    fn import(
        &self,
        selection: c_int,
        parts: impl IntoIterator<Item = ffi::OSSL_PARAM>,
    ) -> Result<(), Errors> {
        let ctx = self.lib.ctx_for("ML-KEM-768")?;
        // SAFETY: a live context.
        checked(|| unsafe { ffi::EVP_PKEY_fromdata_init(ctx.0) })?;
        let mut params = terminated(parts);
        let mut key = ptr::null_mut();
        // SAFETY: a live, initialised context, an out-pointer and a
        // terminated array whose buffers outlive the call.
        checked(|| unsafe {
            ffi::EVP_PKEY_fromdata(ctx.0, &mut key, selection, params.as_mut_ptr())
        })?;
        drop(Pkey::wrap(key));
        Ok(())
    }

    /// An ML-KEM-768 generation context after `EVP_PKEY_keygen_init`.
    fn generator(&self) -> PkeyCtx<'l> {
        let ctx = self.lib.ctx_for("ML-KEM-768").expect("context");
        // SAFETY: a live context.
        checked(|| unsafe { ffi::EVP_PKEY_keygen_init(ctx.0) }).expect("keygen_init");
        ctx
    }
}

/// `EVP_PKEY_CTX_set_params` with any parameters.
fn set_ctx_params(
    ctx: &PkeyCtx<'_>,
    parts: impl IntoIterator<Item = ffi::OSSL_PARAM>,
) -> Result<(), Errors> {
    let params = terminated(parts);
    // SAFETY: a live context and a terminated array outliving the call.
    checked(|| unsafe { ffi::EVP_PKEY_CTX_set_params(ctx.0, params.as_ptr()) }).map(drop)
}

/// `EVP_PKEY_get_params` with any parameters.
fn get_params(
    key: &Pkey<'_>,
    parts: impl IntoIterator<Item = ffi::OSSL_PARAM>,
) -> Result<(), Errors> {
    let mut params = terminated(parts);
    // SAFETY: a live key and a terminated array whose buffers are writable
    // for their declared sizes.
    checked(|| unsafe { ffi::EVP_PKEY_get_params(key.0, params.as_mut_ptr()) }).map(drop)
}

/// `EVP_PKEY_set_params` with any parameters.
fn set_params(
    key: &Pkey<'_>,
    parts: impl IntoIterator<Item = ffi::OSSL_PARAM>,
) -> Result<(), Errors> {
    let mut params = terminated(parts);
    // SAFETY: a live key (not shared with other threads) and a terminated
    // array outliving the call.
    checked(|| unsafe { ffi::EVP_PKEY_set_params(key.0, params.as_mut_ptr()) }).map(drop)
}

/// `EVP_PKEY_encapsulate` with raw arguments (NULL where a slice is
/// `None`).
fn encapsulate_raw(
    ctx: &PkeyCtx<'_>,
    ct: Option<&mut [u8]>,
    ct_len: Option<&mut usize>,
    secret: Option<&mut [u8]>,
    secret_len: Option<&mut usize>,
) -> Result<(), Errors> {
    let ct = ct.map_or(ptr::null_mut(), |b| b.as_mut_ptr());
    let secret = secret.map_or(ptr::null_mut(), |b| b.as_mut_ptr());
    let ct_len = ct_len.map_or(ptr::null_mut(), ptr::from_mut);
    let secret_len = secret_len.map_or(ptr::null_mut(), ptr::from_mut);
    // SAFETY: a live context; each buffer is NULL or writable for at least
    // the length its length pointer holds.
    checked(|| unsafe { ffi::EVP_PKEY_encapsulate(ctx.0, ct, ct_len, secret, secret_len) })
        .map(drop)
}

/// `EVP_PKEY_decapsulate` with raw arguments.
fn decapsulate_raw(
    ctx: &PkeyCtx<'_>,
    secret: Option<&mut [u8]>,
    secret_len: Option<&mut usize>,
    ct: Option<&[u8]>,
) -> Result<(), Errors> {
    let secret = secret.map_or(ptr::null_mut(), |b| b.as_mut_ptr());
    let secret_len = secret_len.map_or(ptr::null_mut(), ptr::from_mut);
    let (ct, ct_len) = ct.map_or((ptr::null(), 0), |c| (c.as_ptr(), c.len()));
    // SAFETY: a live context; the secret buffer is NULL or writable for its
    // declared length; the ciphertext NULL or readable for `ct_len` bytes.
    checked(|| unsafe { ffi::EVP_PKEY_decapsulate(ctx.0, secret, secret_len, ct, ct_len) })
        .map(drop)
}

/// Encodes `key` to DER `structure` with `selection` through
/// `OSSL_ENCODER`, encrypted with `cipher` (a name, and the passphrase if
/// any) if given.
fn encode(
    key: &Pkey<'_>,
    selection: c_int,
    structure: &CStr,
    cipher: Option<(&CStr, Option<&[u8]>)>,
) -> Result<Vec<u8>, Errors> {
    // SAFETY: a live key and NUL-terminated strings; NULL propquery.
    let ctx = checked_ptr(|| unsafe {
        ffi::OSSL_ENCODER_CTX_new_for_pkey(
            key.0,
            selection,
            c"DER".as_ptr(),
            structure.as_ptr(),
            ptr::null(),
        )
    })?;
    let result = (|| {
        if let Some((cipher, passphrase)) = cipher {
            // SAFETY: a live encoder context and a cipher name.
            checked(|| unsafe {
                ffi::OSSL_ENCODER_CTX_set_cipher(ctx, cipher.as_ptr(), ptr::null())
            })?;
            if let Some(passphrase) = passphrase {
                // SAFETY: a live encoder context and a readable buffer of
                // the given length (copied by libcrypto).
                checked(|| unsafe {
                    ffi::OSSL_ENCODER_CTX_set_passphrase(ctx, passphrase.as_ptr(), passphrase.len())
                })?;
            }
        }
        let mut data: *mut u8 = ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: a live encoder context and two out-pointers; the output
        // is libcrypto's allocation, copied and freed below.
        checked(|| unsafe { ffi::OSSL_ENCODER_to_data(ctx, &mut data, &mut len) })?;
        // SAFETY: `data` holds `len` bytes allocated by libcrypto.
        let der = unsafe { std::slice::from_raw_parts(data, len) }.to_vec();
        // SAFETY: libcrypto's allocation, freed once.
        unsafe { ffi::CRYPTO_free(data.cast(), c"".as_ptr(), 0) };
        Ok(der)
    })();
    // SAFETY: ours, freed once.
    unsafe { ffi::OSSL_ENCODER_CTX_free(ctx) };
    result
}

/// Decodes DER `structure` as a `keytype` key through `OSSL_DECODER`.
fn decode(lib: &Lib, der: &[u8], structure: &CStr, keytype: &CStr) -> Result<(), Errors> {
    let mut key: *mut ffi::EVP_PKEY = ptr::null_mut();
    // SAFETY: an out-pointer for the key, NUL-terminated strings and a live
    // library context; NULL propquery.
    let ctx = checked_ptr(|| unsafe {
        ffi::OSSL_DECODER_CTX_new_for_pkey(
            &mut key,
            c"DER".as_ptr(),
            structure.as_ptr(),
            keytype.as_ptr(),
            ffi::EVP_PKEY_KEYPAIR,
            lib.ctx,
            ptr::null(),
        )
    })?;
    let mut data = der.as_ptr();
    let mut len = der.len();
    // SAFETY: a live decoder context and the input's pointer and length,
    // which the call advances.
    let result = checked(|| unsafe { ffi::OSSL_DECODER_from_data(ctx, &mut data, &mut len) });
    // SAFETY: ours, freed once; the key (if any) likewise.
    unsafe {
        ffi::OSSL_DECODER_CTX_free(ctx);
        if !key.is_null() {
            ffi::EVP_PKEY_free(key);
        }
    }
    result.map(drop)
}

// ------------------------------------------------------------------ the table

/// What a case must produce.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// A failure with this reason of ours (and a detail containing the
    /// text, if given).
    Ours(&'static str, Option<&'static str>),
    /// A failure raised by OpenSSL itself with this reason, before the
    /// provider is reached: nothing of ours on the queue.
    OpenSsl(&'static str),
    /// A failure from OpenSSL's own argument checks, with an empty queue.
    OpenSslSilent,
    /// The provider answers 0 ("no") and raises nothing.
    No,
}

/// What a case's calls did: the return value that matters (or 1 for a
/// success of a multi-step case) and the error queue of its failing call.
struct Outcome {
    rc: c_int,
    errors: Errors,
}

impl From<Result<(), Errors>> for Outcome {
    fn from(result: Result<(), Errors>) -> Self {
        match result {
            Ok(()) => Outcome {
                rc: 1,
                errors: Errors::default(),
            },
            Err(errors) => Outcome { rc: 0, errors },
        }
    }
}

impl From<Result<c_int, Errors>> for Outcome {
    fn from(result: Result<c_int, Errors>) -> Self {
        match result {
            Ok(rc) => Outcome {
                rc,
                errors: Errors::default(),
            },
            Err(errors) => Outcome { rc: 0, errors },
        }
    }
}

/// One row of the table.
struct Case {
    /// The provider entry point the fault is aimed at: `<operation>
    /// <function>`, with `+` joining the functions a case passes through.
    entry: &'static str,
    /// The fault, and (in the source) how OpenSSL gets it there.
    fault: &'static str,
    expect: Expect,
    run: fn(&Fixture<'_>) -> Outcome,
}

/// A raw `int` result with the queue it left (for calls whose failure
/// value matters, such as `EVP_PKEY_eq`'s -1).
fn raw(call: impl FnOnce() -> c_int) -> Outcome {
    let _shared = LIFECYCLE.read().unwrap_or_else(PoisonError::into_inner);
    clear_errors();
    let rc = call();
    Outcome {
        rc,
        errors: take_errors(),
    }
}

/// Another operation's `EVP_PKEY_*_init` on a context for the full
/// ML-KEM-768 key (which has no such operation).
fn init_on_full_key(
    f: &Fixture<'_>,
    init: unsafe extern "C" fn(*mut ffi::EVP_PKEY_CTX) -> c_int,
) -> Outcome {
    let ctx = f.lib.ctx_for_key(&f.full);
    // SAFETY: a live context, the only argument of an EVP `*_init`.
    checked(|| unsafe { init(ctx.0) }).into()
}

/// The ML-KEM-768 public key with its first coefficient set to 4095 >= q.
fn unreduced(ek: &[u8]) -> Vec<u8> {
    let mut bad = ek.to_vec();
    bad[0] = 0xff;
    bad[1] |= 0x0f;
    bad
}

/// The table.
fn cases() -> Vec<Case> {
    vec![
        // ---------------------------------------------------------- keymgmt
        Case {
            entry: "keymgmt new + import",
            fault: "EVP_PKEY_fromdata (key pair) with no key parameters at all",
            expect: Expect::Ours(
                "missing public key",
                Some("no ML-KEM-768 seed, private or public key"),
            ),
            run: |f| f.import(ffi::EVP_PKEY_KEYPAIR, Vec::new()).into(),
        },
        Case {
            entry: "keymgmt import",
            fault: "public key one byte short",
            expect: Expect::Ours(
                "invalid length",
                Some("public key must be 1184 bytes, got 1183"),
            ),
            run: |f| {
                f.import(ffi::EVP_PKEY_PUBLIC_KEY, [octets(c"pub", &f.ek[..1183])])
                    .into()
            },
        },
        Case {
            entry: "keymgmt import",
            fault: "public key passed as a UTF-8 string",
            expect: Expect::Ours("invalid parameter", Some("'pub' must be an octet string")),
            run: |f| {
                f.import(ffi::EVP_PKEY_PUBLIC_KEY, [utf8(c"pub", c"not a key")])
                    .into()
            },
        },
        Case {
            entry: "keymgmt import",
            fault: "private key passed as an integer",
            expect: Expect::Ours("invalid parameter", Some("'priv' must be an octet string")),
            run: |f| {
                let mut value: c_int = 7;
                f.import(ffi::EVP_PKEY_KEYPAIR, [int(c"priv", &mut value)])
                    .into()
            },
        },
        Case {
            entry: "keymgmt import",
            fault: "private key one byte short",
            expect: Expect::Ours(
                "invalid length",
                Some("private key must be 2400 bytes, got 2399"),
            ),
            run: |f| {
                f.import(ffi::EVP_PKEY_KEYPAIR, [octets(c"priv", &f.dk[..2399])])
                    .into()
            },
        },
        Case {
            entry: "keymgmt import",
            fault: "63-byte seed",
            expect: Expect::Ours("invalid length", Some("seed must be 64 bytes, got 63")),
            run: |f| {
                f.import(ffi::EVP_PKEY_KEYPAIR, [octets(c"seed", &[1u8; 63])])
                    .into()
            },
        },
        Case {
            entry: "keymgmt import",
            fault: "private key with another key's public key",
            expect: Expect::Ours("invalid key", Some("public key does not match private")),
            run: |f| {
                let other = f.lib.keygen("ML-KEM-768", None).public();
                f.import(
                    ffi::EVP_PKEY_KEYPAIR,
                    [octets(c"priv", &f.dk), octets(c"pub", &other)],
                )
                .into()
            },
        },
        Case {
            entry: "keymgmt import",
            fault: "private key whose stored H(ek) is corrupted (FIPS 203 7.3)",
            expect: Expect::Ours("invalid key", None),
            run: |f| {
                let mut dk = f.dk.clone();
                dk[2400 - 64] ^= 1;
                f.import(ffi::EVP_PKEY_KEYPAIR, [octets(c"priv", &dk)])
                    .into()
            },
        },
        Case {
            entry: "keymgmt import",
            fault: "public key with a coefficient >= q (FIPS 203 7.2)",
            expect: Expect::Ours("invalid key", None),
            run: |f| {
                let bad = unreduced(&f.ek);
                f.import(ffi::EVP_PKEY_PUBLIC_KEY, [octets(c"pub", &bad)])
                    .into()
            },
        },
        Case {
            entry: "keymgmt import",
            fault: "public-key selection given only a private key",
            expect: Expect::Ours("missing public key", None),
            run: |f| {
                f.import(ffi::EVP_PKEY_PUBLIC_KEY, [octets(c"priv", &f.dk)])
                    .into()
            },
        },
        Case {
            entry: "keymgmt gen_set_params",
            fault: "63-byte seed on a generation context",
            expect: Expect::Ours("invalid length", Some("seed must be 64 bytes, got 63")),
            run: |f| set_ctx_params(&f.generator(), [octets(c"seed", &[1u8; 63])]).into(),
        },
        Case {
            entry: "keymgmt gen_set_params",
            fault: "seed passed as a UTF-8 string",
            expect: Expect::Ours("invalid parameter", Some("'seed' must be an octet string")),
            run: |f| set_ctx_params(&f.generator(), [utf8(c"seed", c"0123")]).into(),
        },
        Case {
            entry: "keymgmt gen_set_params",
            fault: "properties passed as an octet string",
            expect: Expect::Ours(
                "invalid parameter",
                Some("'properties' must be a UTF-8 string"),
            ),
            run: |f| set_ctx_params(&f.generator(), [octets(c"properties", b"x")]).into(),
        },
        Case {
            entry: "keymgmt gen_init + gen",
            // EVP_PKEY_keygen checks the context's operation first.
            fault: "EVP_PKEY_keygen without EVP_PKEY_keygen_init",
            expect: Expect::OpenSsl("operation not initialized"),
            run: |f| {
                let ctx = f.lib.ctx_for("ML-KEM-768").expect("context");
                let mut key = ptr::null_mut();
                // SAFETY: a live context and an out-pointer.
                let out: Outcome =
                    checked(|| unsafe { ffi::EVP_PKEY_keygen(ctx.0, &mut key) }).into();
                if !key.is_null() {
                    drop(Pkey::wrap(key));
                }
                out
            },
        },
        Case {
            entry: "keymgmt export",
            fault: "EVP_PKEY_todata of a key without material (parameter generation)",
            expect: Expect::Ours("missing public key", Some("empty ML-KEM-768 key")),
            run: |f| {
                let mut params = ptr::null_mut();
                // SAFETY: a live key and an out-pointer; the array (if any)
                // is libcrypto's, freed below.
                let out = checked(|| unsafe {
                    ffi::EVP_PKEY_todata(f.empty.0, ffi::EVP_PKEY_KEYPAIR, &mut params)
                });
                // SAFETY: NULL or libcrypto's array, freed once.
                unsafe { ffi::OSSL_PARAM_free(params) };
                out.into()
            },
        },
        Case {
            entry: "keymgmt get_params",
            fault: "pub into a 100-byte buffer",
            expect: Expect::Ours("output buffer too small", Some("'pub' needs 1184 bytes")),
            run: |f| {
                let mut buf = [0u8; 100];
                let p = param(c"pub", OCTET_STRING, buf.as_mut_ptr().cast(), buf.len());
                get_params(&f.full, [p]).into()
            },
        },
        Case {
            entry: "keymgmt get_params",
            fault: "bits asked for as an octet string",
            expect: Expect::Ours(
                "invalid parameter",
                Some("'bits' must be a 32- or 64-bit integer"),
            ),
            run: |f| {
                let mut buf = [0u8; 8];
                let p = param(c"bits", OCTET_STRING, buf.as_mut_ptr().cast(), buf.len());
                get_params(&f.full, [p]).into()
            },
        },
        Case {
            entry: "keymgmt get_params",
            fault: "priv asked for as an integer",
            expect: Expect::Ours("invalid parameter", Some("'priv' must be an octet string")),
            run: |f| {
                let mut value: c_int = 0;
                get_params(&f.full, [int(c"priv", &mut value)]).into()
            },
        },
        Case {
            entry: "keymgmt set_params",
            fault: "encoded public key one byte short, on a key without material",
            expect: Expect::Ours(
                "invalid length",
                Some("public key must be 1184 bytes, got 1183"),
            ),
            run: |f| {
                let empty = f.lib.paramgen("ML-KEM-768");
                set_params(&empty, [octets(c"encoded-pub-key", &f.ek[..1183])]).into()
            },
        },
        Case {
            entry: "keymgmt set_params",
            fault: "encoded public key on a key that already has one",
            expect: Expect::Ours("key cannot be modified", None),
            run: |f| set_params(&f.public, [octets(c"encoded-pub-key", &f.ek)]).into(),
        },
        Case {
            entry: "keymgmt set_params",
            fault: "encoded public key passed as a UTF-8 string",
            expect: Expect::Ours(
                "invalid parameter",
                Some("'encoded-pub-key' must be an octet string"),
            ),
            run: |f| {
                let empty = f.lib.paramgen("ML-KEM-768");
                set_params(&empty, [utf8(c"encoded-pub-key", c"abc")]).into()
            },
        },
        Case {
            entry: "keymgmt has + validate",
            // EVP_PKEY_private_check -> our validate, whose `has` is false.
            fault: "EVP_PKEY_private_check on a public-only key",
            expect: Expect::No,
            run: |f| {
                let ctx = f.lib.ctx_for_key(&f.public);
                // SAFETY: a live context.
                raw(|| unsafe { EVP_PKEY_private_check(ctx.0) })
            },
        },
        Case {
            entry: "keymgmt validate",
            fault: "EVP_PKEY_check (key pair) on a key without material",
            expect: Expect::No,
            run: |f| {
                let ctx = f.lib.ctx_for_key(&f.empty);
                // SAFETY: a live context.
                raw(|| unsafe { ffi::EVP_PKEY_check(ctx.0) })
            },
        },
        Case {
            entry: "keymgmt has + match",
            // EVP_PKEY_eq asks `has` for both public keys, then `match`.
            fault: "EVP_PKEY_eq of a key without material and a key pair",
            expect: Expect::No,
            // SAFETY: two live keys, only read.
            run: |f| raw(|| unsafe { ffi::EVP_PKEY_eq(f.empty.0, f.full.0) }),
        },
        Case {
            entry: "keymgmt match",
            fault: "EVP_PKEY_eq of two different ML-KEM-768 key pairs",
            expect: Expect::No,
            run: |f| {
                let other = f.lib.keygen("ML-KEM-768", None);
                // SAFETY: two live keys, only read.
                raw(|| unsafe { ffi::EVP_PKEY_eq(f.full.0, other.0) })
            },
        },
        Case {
            entry: "keymgmt match",
            // Different key types: EVP answers -1 without asking us.
            fault: "EVP_PKEY_eq of an ML-KEM-768 and an X25519 key",
            expect: Expect::OpenSsl("different key types"),
            // SAFETY: two live keys, only read.
            run: |f| raw(|| unsafe { ffi::EVP_PKEY_eq(f.full.0, f.x25519.0) }),
        },
        Case {
            entry: "keymgmt dup",
            fault: "EVP_PKEY_dup of a public-only key, then decapsulate_init on the copy",
            expect: Expect::Ours("missing private key", Some("has no private part")),
            run: |f| {
                let copy = match f.public.dup() {
                    Ok(copy) => copy,
                    Err(errors) => return Outcome { rc: 0, errors },
                };
                f.lib.try_decapsulator(&copy).map(drop).into()
            },
        },
        // ---------------------------------------------------------- kem
        Case {
            entry: "kem encapsulate_init",
            // 3.0 has no KEM for X25519 (nor is ours fetched for it).
            fault: "EVP_PKEY_encapsulate_init with an X25519 key",
            expect: Expect::OpenSsl("operation not supported for this keytype"),
            run: |f| f.lib.try_encapsulator(&f.x25519, None).map(drop).into(),
        },
        Case {
            entry: "kem (not an asymmetric cipher)",
            // Our key to an RSA-style operation: no ML-KEM asym cipher.
            fault: "EVP_PKEY_encrypt_init with an ML-KEM key",
            expect: Expect::OpenSsl("operation not supported for this keytype"),
            run: |f| init_on_full_key(f, ffi::EVP_PKEY_encrypt_init),
        },
        Case {
            entry: "kem (not a signature)",
            fault: "EVP_PKEY_sign_init with an ML-KEM key",
            expect: Expect::OpenSsl("operation not supported for this keytype"),
            run: |f| init_on_full_key(f, ffi::EVP_PKEY_sign_init),
        },
        Case {
            entry: "kem (not a key exchange)",
            fault: "EVP_PKEY_derive_init with an ML-KEM key",
            expect: Expect::OpenSsl("operation not supported for this keytype"),
            run: |f| init_on_full_key(f, ffi::EVP_PKEY_derive_init),
        },
        Case {
            entry: "kem encapsulate_init",
            fault: "key without material (parameter generation)",
            expect: Expect::Ours("missing public key", Some("empty ML-KEM-768 key")),
            run: |f| f.lib.try_encapsulator(&f.empty, None).map(drop).into(),
        },
        Case {
            entry: "kem encapsulate_init",
            fault: "31-byte ikme",
            expect: Expect::Ours("invalid length", Some("ikme must be 32 bytes, got 31")),
            run: |f| {
                f.lib
                    .try_encapsulator(&f.full, Some(&[1u8; 31]))
                    .map(drop)
                    .into()
            },
        },
        Case {
            entry: "kem decapsulate_init",
            fault: "public-only key (decapsulation needs the private half)",
            expect: Expect::Ours("missing private key", Some("has no private part")),
            run: |f| f.lib.try_decapsulator(&f.public).map(drop).into(),
        },
        Case {
            entry: "kem decapsulate_init",
            fault: "key without material",
            expect: Expect::Ours("missing private key", None),
            run: |f| f.lib.try_decapsulator(&f.empty).map(drop).into(),
        },
        Case {
            entry: "kem encapsulate",
            // EVP_PKEY_encapsulate checks the context's operation first.
            fault: "EVP_PKEY_encapsulate without EVP_PKEY_encapsulate_init",
            expect: Expect::OpenSsl("operation not initialized"),
            run: |f| {
                let ctx = f.lib.ctx_for_key(&f.full);
                let (mut ct, mut ss) = ([0u8; 1088], [0u8; 32]);
                let (mut ct_len, mut ss_len) = (ct.len(), ss.len());
                encapsulate_raw(
                    &ctx,
                    Some(&mut ct),
                    Some(&mut ct_len),
                    Some(&mut ss),
                    Some(&mut ss_len),
                )
                .into()
            },
        },
        Case {
            entry: "kem encapsulate",
            fault: "EVP_PKEY_encapsulate on a context initialised for decapsulation",
            expect: Expect::OpenSsl("operation not initialized"),
            run: |f| {
                let ctx = f.lib.decapsulator(&f.full);
                let (mut ct, mut ss) = ([0u8; 1088], [0u8; 32]);
                let (mut ct_len, mut ss_len) = (ct.len(), ss.len());
                encapsulate_raw(
                    &ctx,
                    Some(&mut ct),
                    Some(&mut ct_len),
                    Some(&mut ss),
                    Some(&mut ss_len),
                )
                .into()
            },
        },
        Case {
            entry: "kem encapsulate",
            fault: "ciphertext buffer one byte short",
            expect: Expect::Ours(
                "output buffer too small",
                Some("ciphertext buffer too small"),
            ),
            run: |f| {
                f.lib
                    .encapsulator(&f.full, None)
                    .try_encapsulate_into(1087, 32)
                    .map(drop)
                    .into()
            },
        },
        Case {
            entry: "kem encapsulate",
            fault: "shared-secret buffer one byte short",
            expect: Expect::Ours(
                "output buffer too small",
                Some("shared-secret buffer too small"),
            ),
            run: |f| {
                f.lib
                    .encapsulator(&f.full, None)
                    .try_encapsulate_into(1088, 31)
                    .map(drop)
                    .into()
            },
        },
        Case {
            entry: "kem encapsulate",
            fault: "buffers given but a NULL ciphertext length pointer",
            expect: Expect::Ours("null argument", Some("NULL ciphertext length pointer")),
            run: |f| {
                let ctx = f.lib.encapsulator(&f.full, None);
                let (mut ct, mut ss) = ([0u8; 1088], [0u8; 32]);
                let mut ss_len = ss.len();
                encapsulate_raw(&ctx, Some(&mut ct), None, Some(&mut ss), Some(&mut ss_len)).into()
            },
        },
        Case {
            entry: "kem encapsulate",
            // 3.0's EVP_PKEY_encapsulate: `out != NULL && secret == NULL`
            // returns 0 before calling the provider.
            fault: "a ciphertext buffer but a NULL shared-secret buffer",
            expect: Expect::OpenSslSilent,
            run: |f| {
                let ctx = f.lib.encapsulator(&f.full, None);
                let mut ct = [0u8; 1088];
                let (mut ct_len, mut ss_len) = (ct.len(), 32usize);
                encapsulate_raw(
                    &ctx,
                    Some(&mut ct),
                    Some(&mut ct_len),
                    None,
                    Some(&mut ss_len),
                )
                .into()
            },
        },
        Case {
            entry: "kem decapsulate",
            fault: "EVP_PKEY_decapsulate without EVP_PKEY_decapsulate_init",
            expect: Expect::OpenSsl("operation not initialized"),
            run: |f| {
                let ctx = f.lib.ctx_for_key(&f.full);
                let mut ss = [0u8; 32];
                let mut ss_len = ss.len();
                decapsulate_raw(&ctx, Some(&mut ss), Some(&mut ss_len), Some(&f.ct)).into()
            },
        },
        Case {
            entry: "kem decapsulate",
            fault: "EVP_PKEY_decapsulate on a context initialised for encapsulation",
            expect: Expect::OpenSsl("operation not initialized"),
            run: |f| {
                let ctx = f.lib.encapsulator(&f.full, None);
                let mut ss = [0u8; 32];
                let mut ss_len = ss.len();
                decapsulate_raw(&ctx, Some(&mut ss), Some(&mut ss_len), Some(&f.ct)).into()
            },
        },
        Case {
            entry: "kem decapsulate",
            fault: "ciphertext one byte short",
            expect: Expect::Ours(
                "invalid length",
                Some("ML-KEM-768 ciphertext must be 1088 bytes, got 1087"),
            ),
            run: |f| {
                f.lib
                    .decapsulator(&f.full)
                    .try_decapsulate_into(&f.ct[..1087], 32)
                    .map(drop)
                    .into()
            },
        },
        Case {
            entry: "kem decapsulate",
            fault: "ciphertext one byte long",
            expect: Expect::Ours("invalid length", Some("got 1089")),
            run: |f| {
                let mut long = f.ct.clone();
                long.push(0);
                f.lib
                    .decapsulator(&f.full)
                    .try_decapsulate_into(&long, 32)
                    .map(drop)
                    .into()
            },
        },
        Case {
            entry: "kem decapsulate",
            fault: "shared-secret buffer one byte short",
            expect: Expect::Ours(
                "output buffer too small",
                Some("shared-secret buffer too small"),
            ),
            run: |f| {
                f.lib
                    .decapsulator(&f.full)
                    .try_decapsulate_into(&f.ct, 31)
                    .map(drop)
                    .into()
            },
        },
        Case {
            entry: "kem decapsulate",
            // 3.0's EVP_PKEY_decapsulate: `in == NULL || inlen == 0`
            // returns 0 before calling the provider.
            fault: "NULL ciphertext",
            expect: Expect::OpenSslSilent,
            run: |f| {
                let ctx = f.lib.decapsulator(&f.full);
                let mut ss = [0u8; 32];
                let mut ss_len = ss.len();
                decapsulate_raw(&ctx, Some(&mut ss), Some(&mut ss_len), None).into()
            },
        },
        Case {
            entry: "kem decapsulate",
            // Likewise for `secret == NULL && secretlen == NULL`.
            fault: "NULL shared-secret buffer and NULL length pointer",
            expect: Expect::OpenSslSilent,
            run: |f| {
                let ctx = f.lib.decapsulator(&f.full);
                decapsulate_raw(&ctx, None, None, Some(&f.ct)).into()
            },
        },
        Case {
            entry: "kem set_ctx_params",
            fault: "33-byte ikme after encapsulate_init",
            expect: Expect::Ours("invalid length", Some("ikme must be 32 bytes, got 33")),
            run: |f| {
                set_ctx_params(
                    &f.lib.encapsulator(&f.full, None),
                    [octets(c"ikme", &[2u8; 33])],
                )
                .into()
            },
        },
        Case {
            entry: "kem set_ctx_params",
            fault: "ikme passed as an integer",
            expect: Expect::Ours("invalid parameter", Some("'ikme' must be an octet string")),
            run: |f| {
                let mut value: c_int = 1;
                set_ctx_params(
                    &f.lib.encapsulator(&f.full, None),
                    [int(c"ikme", &mut value)],
                )
                .into()
            },
        },
        Case {
            entry: "kem set_ctx_params",
            // No operation yet: EVP has no algorithm context to pass it to.
            fault: "EVP_PKEY_CTX_set_params (ikme) on a context never initialised",
            expect: Expect::OpenSslSilent,
            run: |f| {
                let m = message(1);
                set_ctx_params(&f.lib.ctx_for_key(&f.full), [octets(c"ikme", &m)]).into()
            },
        },
        Case {
            entry: "kem get_ctx_params",
            // The KEM has no get_ctx_params (neither has OpenSSL 3.5's
            // ML-KEM): EVP answers 0 without calling the provider.
            fault: "EVP_PKEY_CTX_get_params on an encapsulation context",
            expect: Expect::OpenSslSilent,
            run: |f| {
                let ctx = f.lib.encapsulator(&f.full, None);
                let mut buf = [0u8; 32];
                let mut params = terminated([param(
                    c"ikme",
                    OCTET_STRING,
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                )]);
                // SAFETY: a live context and a terminated array whose
                // buffer is writable for its size.
                checked(|| unsafe { ffi::EVP_PKEY_CTX_get_params(ctx.0, params.as_mut_ptr()) })
                    .into()
            },
        },
        Case {
            entry: "kem dupctx",
            fault: "EVP_PKEY_CTX_dup of a decapsulation context; short ciphertext on the copy",
            expect: Expect::Ours("invalid length", Some("got 10")),
            run: |f| {
                let ctx = f.lib.decapsulator(&f.full);
                // SAFETY: a live context.
                let copy = match checked_ptr(|| unsafe { EVP_PKEY_CTX_dup(ctx.0) }) {
                    Ok(copy) => PkeyCtx::wrap(copy),
                    Err(errors) => return Outcome { rc: 0, errors },
                };
                drop(ctx);
                copy.try_decapsulate_into(&f.ct[..10], 32).map(drop).into()
            },
        },
        Case {
            entry: "kem dupctx",
            fault: "EVP_PKEY_CTX_dup of an encapsulation context; short buffer on the copy",
            expect: Expect::Ours(
                "output buffer too small",
                Some("ciphertext buffer too small"),
            ),
            run: |f| {
                let ctx = f.lib.encapsulator(&f.full, None);
                // SAFETY: a live context.
                let copy = match checked_ptr(|| unsafe { EVP_PKEY_CTX_dup(ctx.0) }) {
                    Ok(copy) => PkeyCtx::wrap(copy),
                    Err(errors) => return Outcome { rc: 0, errors },
                };
                drop(ctx);
                copy.try_encapsulate_into(100, 32).map(drop).into()
            },
        },
        // ---------------------------------------------------------- encoder
        Case {
            entry: "encoder encode",
            fault: "PrivateKeyInfo of a public-only key",
            expect: Expect::Ours("missing private key", None),
            run: |f| {
                encode(&f.public, ffi::EVP_PKEY_KEYPAIR, c"PrivateKeyInfo", None)
                    .map(drop)
                    .into()
            },
        },
        Case {
            entry: "encoder encode",
            fault: "SubjectPublicKeyInfo of a key without material",
            expect: Expect::Ours("missing public key", None),
            run: |f| {
                encode(
                    &f.empty,
                    ffi::EVP_PKEY_PUBLIC_KEY,
                    c"SubjectPublicKeyInfo",
                    None,
                )
                .map(drop)
                .into()
            },
        },
        Case {
            entry: "encoder set_ctx_params + encode",
            fault: "EncryptedPrivateKeyInfo with a cipher no provider has",
            expect: Expect::Ours(
                "private key encryption failed",
                Some("unknown cipher NO-SUCH-CIPHER"),
            ),
            run: |f| {
                let cipher = (c"NO-SUCH-CIPHER", Some(&b"secret"[..]));
                encode(
                    &f.full,
                    ffi::EVP_PKEY_KEYPAIR,
                    c"EncryptedPrivateKeyInfo",
                    Some(cipher),
                )
                .map(drop)
                .into()
            },
        },
        Case {
            entry: "encoder encode",
            // The core's passphrase callback raises "No password method
            // specified" first; our encoder then fails with its reason.
            fault: "EncryptedPrivateKeyInfo (AES-256-CBC) without a passphrase",
            expect: Expect::Ours(
                "private key encryption failed",
                Some("unable to get passphrase"),
            ),
            run: |f| {
                let cipher = (c"AES-256-CBC", None);
                encode(
                    &f.full,
                    ffi::EVP_PKEY_KEYPAIR,
                    c"EncryptedPrivateKeyInfo",
                    Some(cipher),
                )
                .map(drop)
                .into()
            },
        },
        // ---------------------------------------------------------- decoder
        Case {
            entry: "decoder decode",
            // The cut envelope does not parse, so its OID cannot be seen to
            // be ours: our decoder passes it on empty-handed (as decoders
            // must for input of other algorithms), and OSSL_DECODER reports
            // that no decoder took it.
            fault: "PrivateKeyInfo cut in half",
            expect: Expect::OpenSsl("unsupported"),
            run: |f| {
                let half = &f.private_der[..f.private_der.len() / 2];
                decode(f.lib, half, c"PrivateKeyInfo", c"ML-KEM-768").into()
            },
        },
        Case {
            entry: "decoder decode",
            // The payload's length picks its format, as in OpenSSL; 2473
            // bytes fits none.
            fault: "PrivateKeyInfo whose payload lost its last byte (lengths fixed up)",
            expect: Expect::Ours(
                "no matching key format",
                Some("no matching enabled ML-KEM private key format"),
            ),
            run: |f| {
                let der = shortened_private_key_info(&f.private_der);
                decode(f.lib, &der, c"PrivateKeyInfo", c"ML-KEM-768").into()
            },
        },
        Case {
            entry: "decoder decode",
            // The seed-and-expanded-key payload ends with dk, whose last
            // byte (of z) no longer matches what the seed derives.
            fault: "PrivateKeyInfo whose expanded key disagrees with its seed",
            expect: Expect::Ours("invalid key", Some("private key does not match seed")),
            run: |f| {
                let mut der = f.private_der.clone();
                *der.last_mut().expect("non-empty DER") ^= 1;
                decode(f.lib, &der, c"PrivateKeyInfo", c"ML-KEM-768").into()
            },
        },
        Case {
            entry: "decoder decode",
            // Not our OID for this key type: every decoder passes.
            fault: "an X25519 PrivateKeyInfo decoded as ML-KEM-768",
            expect: Expect::OpenSsl("unsupported"),
            run: |f| {
                let der = encode(&f.x25519, ffi::EVP_PKEY_KEYPAIR, c"PrivateKeyInfo", None)
                    .unwrap_or_else(|e| panic!("X25519 PrivateKeyInfo:\n{e}"));
                decode(f.lib, &der, c"PrivateKeyInfo", c"ML-KEM-768").into()
            },
        },
        // ---------------------------------------------------------- provider
        Case {
            entry: "provider get_params",
            fault: "the provider's name asked for as an integer",
            expect: Expect::Ours("invalid parameter", Some("'name' must be")),
            run: |f| {
                let mut value: c_int = 0;
                let mut params = terminated([int(c"name", &mut value)]);
                let provider = {
                    let _exclusive = LIFECYCLE.write().unwrap_or_else(PoisonError::into_inner);
                    // SAFETY: a live context and a NUL-terminated name: a
                    // second reference to the loaded provider.
                    unsafe { ffi::OSSL_PROVIDER_load(f.lib.ctx, c"mlkem".as_ptr()) }
                };
                assert!(!provider.is_null(), "mlkem provider reference");
                // SAFETY: a live provider and a terminated array whose
                // buffer is writable for its size.
                let out =
                    checked(|| unsafe { OSSL_PROVIDER_get_params(provider, params.as_mut_ptr()) });
                let _exclusive = LIFECYCLE.write().unwrap_or_else(PoisonError::into_inner);
                // SAFETY: the reference taken above, released once.
                unsafe { ffi::OSSL_PROVIDER_unload(provider) };
                out.into()
            },
        },
    ]
}

/// `der` (a PrivateKeyInfo of the seed-and-expanded-key form, 2-byte
/// lengths) with its inner payload one byte shorter and every enclosing
/// length fixed, so only our decoder's payload check can object.
fn shortened_private_key_info(der: &[u8]) -> Vec<u8> {
    // 30 82 LL LL | 02 01 00 | 30 0b 06 09 <OID> | 04 82 LL LL <payload>
    const PAYLOAD_HEADER: usize = 20;
    let mut bad = der[..der.len() - 1].to_vec();
    assert_eq!(
        (bad[0], bad[1], bad[PAYLOAD_HEADER], bad[PAYLOAD_HEADER + 1]),
        (0x30, 0x82, 0x04, 0x82),
        "PrivateKeyInfo layout"
    );
    let total = bad.len() - 4;
    bad[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    let payload = bad.len() - (PAYLOAD_HEADER + 4);
    bad[PAYLOAD_HEADER + 2..PAYLOAD_HEADER + 4].copy_from_slice(&(payload as u16).to_be_bytes());
    bad
}

/// Whether an entry came from the provider's error library.
fn ours(errors: &Errors) -> bool {
    errors
        .0
        .iter()
        .any(|e| lib_text(e.code).as_deref() == Some(OUR_LIBRARY))
}

/// Checks one outcome against its expectation; `Err` says why not.
fn judge(expect: Expect, outcome: &Outcome) -> Result<(), String> {
    let errors = &outcome.errors;
    if outcome.rc > 0 {
        return Err(format!("succeeded (returned {})", outcome.rc));
    }
    match expect {
        Expect::Ours(reason, detail) => {
            let found = errors.0.iter().any(|e| {
                e.reason.as_deref() == Some(reason)
                    && lib_text(e.code).as_deref() == Some(OUR_LIBRARY)
                    && detail.is_none_or(|d| e.data.contains(d))
            });
            if found {
                Ok(())
            } else {
                Err(format!(
                    "expected our reason '{reason}'{} in the queue",
                    detail.map_or(String::new(), |d| format!(" with detail '{d}'"))
                ))
            }
        }
        Expect::OpenSsl(reason) => {
            if ours(errors) {
                Err("expected OpenSSL to reject it before the provider, but we raised".into())
            } else if errors.has_reason(reason) {
                Ok(())
            } else {
                Err(format!("expected OpenSSL's reason '{reason}'"))
            }
        }
        Expect::OpenSslSilent => {
            if errors.0.is_empty() {
                Ok(())
            } else {
                Err("expected a silent failure (empty queue)".into())
            }
        }
        Expect::No => {
            if outcome.rc != 0 {
                Err(format!("expected 0, got {}", outcome.rc))
            } else if ours(errors) {
                Err("expected a plain 0, but we raised".into())
            } else {
                Ok(())
            }
        }
    }
}

#[test]
fn every_entry_point_fails_cleanly() {
    let lib = Lib::new();
    let fixture = Fixture::new(&lib);
    let cases = cases();
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let outcome = catch_unwind(AssertUnwindSafe(|| (case.run)(&fixture)));
        let verdict = match &outcome {
            Ok(outcome) => judge(case.expect, outcome),
            Err(panic) => Err(format!(
                "panicked: {}",
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default()
            )),
        };
        // The provider's entry if it raised one, else OpenSSL's first.
        let shown = outcome.as_ref().ok().and_then(|o| {
            let errors = &o.errors.0;
            errors
                .iter()
                .find(|e| lib_text(e.code).as_deref() == Some(OUR_LIBRARY))
                .or(errors.first())
                .cloned()
        });
        let shown = shown.map_or_else(
            || "(empty queue)".to_owned(),
            |e| {
                format!(
                    "{}: {}{}",
                    e.lib.as_deref().unwrap_or("?"),
                    e.reason.as_deref().unwrap_or("?"),
                    if e.data.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", e.data)
                    }
                )
            },
        );
        let status = if verdict.is_ok() { "ok  " } else { "FAIL" };
        println!(
            "{status} {:2} {:<34} {:<70} {:?} -> {shown}",
            i + 1,
            case.entry,
            case.fault,
            case.expect
        );
        if let Err(why) = verdict {
            let queue = outcome
                .as_ref()
                .map_or_else(|_| String::new(), |o| o.errors.to_string());
            failures.push(format!(
                "case {} ({}: {}): {why}\n{queue}",
                i + 1,
                case.entry,
                case.fault
            ));
        }
    }
    // Keys live until every case has run.
    drop(fixture);
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Every entry point that takes caller input has a case. Left out: those
/// with nothing a caller can get wrong through the public API (`free`,
/// `gen_cleanup`, `newctx` / `freectx`, `does_selection`, the
/// settable/gettable tables) and keymgmt `load`, which only ever receives
/// the references our own decoder made.
#[test]
fn table_covers_every_entry_point() {
    let entries: Vec<&str> = cases().iter().map(|c| c.entry).collect();
    for entry in [
        "keymgmt new",
        "keymgmt gen_init",
        "keymgmt gen_set_params",
        "keymgmt import",
        "keymgmt export",
        "keymgmt get_params",
        "keymgmt set_params",
        "keymgmt has",
        "keymgmt match",
        "keymgmt validate",
        "keymgmt dup",
        "kem encapsulate_init",
        "kem encapsulate",
        "kem decapsulate_init",
        "kem decapsulate",
        "kem set_ctx_params",
        "kem get_ctx_params",
        "kem dupctx",
        "encoder encode",
        "encoder set_ctx_params",
        "decoder decode",
        "provider get_params",
    ] {
        let (kind, function) = entry.split_once(' ').expect("two words");
        let covered = entries.iter().any(|e| {
            let mut words = e.split([' ', '+']).filter(|w| !w.is_empty());
            words.next() == Some(kind) && words.any(|w| w == function)
        });
        assert!(covered, "no case for {entry}");
    }
}
