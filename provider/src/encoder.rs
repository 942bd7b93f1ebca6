//! Encoders (`OSSL_OP_ENCODER`): PrivateKeyInfo, EncryptedPrivateKeyInfo
//! and SubjectPublicKeyInfo, each as DER or PEM, and text — the set
//! OpenSSL 3.5 registers for ML-KEM.

use core::ffi::{c_char, c_int, c_void, CStr};
use std::ffi::CString;

use zeroize::Zeroizing;

use crate::codec::{self, CodecError};
use crate::context::ProvCtx;
use crate::error::{ProviderError, Reason, Result};
use crate::ffi::evp::encrypt_private_key_info;
use crate::ffi::guard::{c_bool, guard, non_null, SUCCESS};
use crate::ffi::names;
use crate::ffi::params::{describe_utf8, Params, END};
use crate::ffi::sys::{
    OSSL_CORE_BIO, OSSL_DISPATCH, OSSL_KEYMGMT_SELECT_KEYPAIR, OSSL_KEYMGMT_SELECT_PRIVATE_KEY,
    OSSL_KEYMGMT_SELECT_PUBLIC_KEY, OSSL_PARAM, OSSL_PASSPHRASE_CALLBACK,
};
use crate::ffi::upcalls::bio_write_all;
use crate::ffi::{dispatch_table, StaticTable};
use crate::key::MlKemKey;
use crate::keymgmt::key_ref;

/// What one encoder writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Structure {
    PrivateKeyInfo,
    EncryptedPrivateKeyInfo,
    SubjectPublicKeyInfo,
    Text,
}

/// The encoders, indexed by the `KIND` const parameter of their functions:
/// structure, PEM or not, and the algorithm properties.
const KINDS: [(Structure, bool, &CStr); 7] = [
    (
        Structure::PrivateKeyInfo,
        false,
        c"provider=mlkem,output=der,structure=PrivateKeyInfo",
    ),
    (
        Structure::PrivateKeyInfo,
        true,
        c"provider=mlkem,output=pem,structure=PrivateKeyInfo",
    ),
    (
        Structure::EncryptedPrivateKeyInfo,
        false,
        c"provider=mlkem,output=der,structure=EncryptedPrivateKeyInfo",
    ),
    (
        Structure::EncryptedPrivateKeyInfo,
        true,
        c"provider=mlkem,output=pem,structure=EncryptedPrivateKeyInfo",
    ),
    (
        Structure::SubjectPublicKeyInfo,
        false,
        c"provider=mlkem,output=der,structure=SubjectPublicKeyInfo",
    ),
    (
        Structure::SubjectPublicKeyInfo,
        true,
        c"provider=mlkem,output=pem,structure=SubjectPublicKeyInfo",
    ),
    (Structure::Text, false, c"provider=mlkem,output=text"),
];

/// An encoder context: the cipher for EncryptedPrivateKeyInfo, if any.
struct EncoderCtx {
    prov: &'static ProvCtx,
    cipher: Option<CString>,
    cipher_properties: Option<CString>,
}

/// Borrows an encoder context.
///
/// # Safety
/// `ptr` is NULL or a live context from `newctx`.
unsafe fn encoder_ctx<'a>(ptr: *mut c_void) -> Result<&'a mut EncoderCtx> {
    non_null(ptr, "encoder context")?;
    // SAFETY: the caller's contract.
    let ctx = unsafe { &mut *ptr.cast::<EncoderCtx>() };
    ctx.prov.instance().enter();
    Ok(ctx)
}

unsafe extern "C" fn newctx(provctx: *mut c_void) -> *mut c_void {
    guard(c"encoder_newctx", || {
        // SAFETY: the core passes our provctx.
        let prov: &'static ProvCtx = unsafe { ProvCtx::from_ptr(provctx)? };
        let ctx = EncoderCtx {
            prov,
            cipher: None,
            cipher_properties: None,
        };
        Ok(Box::into_raw(Box::new(ctx)).cast::<c_void>())
    })
}

unsafe extern "C" fn freectx(ctx: *mut c_void) {
    guard(c"encoder_freectx", || {
        // SAFETY: from `newctx`; the core frees it once.
        unsafe { crate::ffi::drop_boxed::<EncoderCtx>(ctx) };
        Ok(())
    })
}

unsafe extern "C" fn set_ctx_params(ctx: *mut c_void, params: *const OSSL_PARAM) -> c_int {
    guard(c"encoder_set_ctx_params", || {
        // SAFETY: the core passes our context and a valid array.
        let (ctx, params) = unsafe { (encoder_ctx(ctx)?, Params::from_ptr(params)) };
        if let Some(p) = params.find(names::ENCODER_CIPHER) {
            // A NULL cipher name clears the intent to encrypt.
            let name = p.utf8_or_null()?.filter(|n| !n.is_empty());
            ctx.cipher = name.map(|n| CString::new(n).unwrap_or_default());
            ctx.cipher_properties = match params.find(names::ENCODER_PROPERTIES) {
                Some(p) => p
                    .utf8_or_null()?
                    .map(|s| CString::new(s).unwrap_or_default()),
                None => None,
            };
        }
        SUCCESS
    })
}

static SETTABLE: StaticTable<[OSSL_PARAM; 3]> = StaticTable([
    describe_utf8(names::ENCODER_CIPHER),
    describe_utf8(names::ENCODER_PROPERTIES),
    END,
]);

unsafe extern "C" fn settable_ctx_params(_provctx: *mut c_void) -> *const OSSL_PARAM {
    SETTABLE.0.as_ptr()
}

/// The selections each structure serves; as OpenSSL's encoders, a richer
/// selection is checked first (private, then public).
fn serves(structure: Structure, selection: c_int) -> bool {
    let private = OSSL_KEYMGMT_SELECT_PRIVATE_KEY as c_int;
    let public = OSSL_KEYMGMT_SELECT_PUBLIC_KEY as c_int;
    if selection == 0 {
        return true;
    }
    match structure {
        Structure::Text => selection & OSSL_KEYMGMT_SELECT_KEYPAIR as c_int != 0,
        Structure::PrivateKeyInfo | Structure::EncryptedPrivateKeyInfo => selection & private != 0,
        Structure::SubjectPublicKeyInfo => selection & private == 0 && selection & public != 0,
    }
}

unsafe extern "C" fn does_selection<const KIND: usize>(
    _provctx: *mut c_void,
    selection: c_int,
) -> c_int {
    c_bool(serves(KINDS[KIND].0, selection))
}

fn codec_error(error: CodecError) -> ProviderError {
    let reason = match error {
        CodecError::MissingKey => Reason::MissingPrivateKey,
        CodecError::NoFormat | CodecError::NoFormatsEnabled => Reason::NoKeyFormat,
        _ => Reason::BadEncoding,
    };
    ProviderError::new(reason).with_detail(error.reason())
}

/// The DER PrivateKeyInfo of `key`, in the first enabled format it fits.
fn private_key_info(ctx: &EncoderCtx, key: &MlKemKey) -> Result<Zeroizing<Vec<u8>>> {
    let data = key.private()?;
    let dk = data.private_key().unwrap_or_default();
    codec::encode_private_key_info(
        &key.alg.layout,
        data.seed(),
        &dk,
        data.public_key(),
        &ctx.prov.output_formats,
    )
    .map_err(codec_error)
}

/// Encrypts a PrivateKeyInfo with the context's cipher and a passphrase
/// from `callback` (PKCS#5 v2 through libcrypto's `PKCS8_encrypt_ex`).
fn encrypt(
    ctx: &EncoderCtx,
    pki: &[u8],
    callback: OSSL_PASSPHRASE_CALLBACK,
    arg: *mut c_void,
) -> Result<Vec<u8>> {
    let fail =
        |why: &str| ProviderError::new(Reason::EncryptionFailure).with_detail(why.to_owned());
    let cipher_name = ctx.cipher.as_ref().ok_or_else(|| fail("no cipher set"))?;
    let callback = callback.ok_or_else(|| fail("no passphrase callback"))?;
    let mut pass = Zeroizing::new([0u8; 1024]);
    let mut pass_len = 0usize;
    // SAFETY: the buffer has room for its length; the core's callback
    // writes at most that and sets `pass_len`.
    let ok = unsafe {
        callback(
            pass.as_mut_ptr().cast::<c_char>(),
            pass.len(),
            &mut pass_len,
            core::ptr::null(),
            arg,
        )
    };
    if ok != 1 || pass_len > pass.len() {
        return Err(fail("unable to get passphrase"));
    }
    let passphrase = pass.get(..pass_len).unwrap_or_default();
    encrypt_private_key_info(
        &ctx.prov.libctx,
        cipher_name,
        ctx.cipher_properties.as_deref(),
        pki,
        passphrase,
    )
}

unsafe extern "C" fn encode<const KIND: usize>(
    ctx: *mut c_void,
    out: *mut OSSL_CORE_BIO,
    object: *const c_void,
    abstract_object: *const OSSL_PARAM,
    selection: c_int,
    callback: OSSL_PASSPHRASE_CALLBACK,
    callback_arg: *mut c_void,
) -> c_int {
    guard(c"encoder_encode", || {
        // SAFETY: the core passes our context and one of our keys.
        let ctx = unsafe { encoder_ctx(ctx)? };
        if object.is_null() && !abstract_object.is_null() {
            return Err(ProviderError::new(Reason::WrongKeyType)
                .with_detail("only keys of this provider can be encoded"));
        }
        // SAFETY: as above.
        let key = unsafe { key_ref(object)? };
        non_null(out, "output BIO")?;
        let (structure, pem, _) = KINDS[KIND];
        let layout = &key.alg.layout;
        // A cipher set on a PrivateKeyInfo encoder means "encrypt", as in
        // OpenSSL's own encoders.
        let structure = match structure {
            Structure::PrivateKeyInfo if ctx.cipher.is_some() => Structure::EncryptedPrivateKeyInfo,
            other => other,
        };
        let output: Zeroizing<Vec<u8>> = match structure {
            Structure::PrivateKeyInfo => {
                let der = private_key_info(ctx, key)?;
                if pem {
                    Zeroizing::new(codec::pem_encode("PRIVATE KEY", &der).as_bytes().to_vec())
                } else {
                    der
                }
            }
            Structure::EncryptedPrivateKeyInfo => {
                let der = encrypt(ctx, &private_key_info(ctx, key)?, callback, callback_arg)?;
                if pem {
                    Zeroizing::new(
                        codec::pem_encode("ENCRYPTED PRIVATE KEY", &der)
                            .as_bytes()
                            .to_vec(),
                    )
                } else {
                    Zeroizing::new(der)
                }
            }
            Structure::SubjectPublicKeyInfo => {
                let der = codec::encode_spki(layout, key.public()?.public_key());
                if pem {
                    Zeroizing::new(codec::pem_encode("PUBLIC KEY", &der).as_bytes().to_vec())
                } else {
                    Zeroizing::new(der)
                }
            }
            Structure::Text => {
                let data = key.public()?;
                let private = selection & OSSL_KEYMGMT_SELECT_PRIVATE_KEY as c_int != 0;
                let dk = if private { data.private_key() } else { None };
                let text = codec::key_to_text(
                    layout,
                    data.seed(),
                    dk.as_deref().map(Vec::as_slice),
                    Some(data.public_key()),
                    private,
                )
                .map_err(codec_error)?;
                Zeroizing::new(text.as_bytes().to_vec())
            }
        };
        // SAFETY: `out` is the core's BIO for this call.
        unsafe { bio_write_all(out, &output)? };
        SUCCESS
    })
}

macro_rules! encoder_functions {
    ($kind:literal) => {
        dispatch_table![
            OSSL_FUNC_ENCODER_NEWCTX => OSSL_FUNC_encoder_newctx_fn = newctx,
            OSSL_FUNC_ENCODER_FREECTX => OSSL_FUNC_encoder_freectx_fn = freectx,
            OSSL_FUNC_ENCODER_SET_CTX_PARAMS => OSSL_FUNC_encoder_set_ctx_params_fn = set_ctx_params,
            OSSL_FUNC_ENCODER_SETTABLE_CTX_PARAMS => OSSL_FUNC_encoder_settable_ctx_params_fn = settable_ctx_params,
            OSSL_FUNC_ENCODER_DOES_SELECTION => OSSL_FUNC_encoder_does_selection_fn = does_selection::<$kind>,
            OSSL_FUNC_ENCODER_ENCODE => OSSL_FUNC_encoder_encode_fn = encode::<$kind>,
        ]
    };
}

const FUNCTIONS: [&[OSSL_DISPATCH]; 7] = [
    encoder_functions!(0),
    encoder_functions!(1),
    encoder_functions!(2),
    encoder_functions!(3),
    encoder_functions!(4),
    encoder_functions!(5),
    encoder_functions!(6),
];

/// The encoders of every algorithm: properties and dispatch table (the
/// functions serve all three parameter sets; the key knows its own).
pub(crate) const ENCODERS: [(&CStr, &[OSSL_DISPATCH]); 7] = {
    let mut out = [(c"", FUNCTIONS[0]); 7];
    let mut kind = 0;
    while kind < 7 {
        out[kind] = (KINDS[kind].2, FUNCTIONS[kind]);
        kind += 1;
    }
    out
};
