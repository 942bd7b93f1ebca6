//! Decoders (`OSSL_OP_DECODER`): DER PrivateKeyInfo (every ML-KEM private
//! key format OpenSSL 3.5 reads) and DER SubjectPublicKeyInfo. PEM and
//! encrypted PKCS#8 are unwrapped by OpenSSL's own decoders before ours.

use core::ffi::{c_int, c_void, CStr};

use crate::algorithms::{Algorithm, ML_KEM};
use crate::codec::{self, CodecError};
use crate::context::ProvCtx;
use crate::error::{ProviderError, Reason, Result};
use crate::ffi::dispatch_table;
use crate::ffi::guard::{c_bool, guard, non_null};
use crate::ffi::names;
use crate::ffi::params::ParamList;
use crate::ffi::sys::{
    OSSL_CALLBACK, OSSL_CORE_BIO, OSSL_DISPATCH, OSSL_KEYMGMT_SELECT_ALL_PARAMETERS,
    OSSL_KEYMGMT_SELECT_KEYPAIR, OSSL_KEYMGMT_SELECT_PRIVATE_KEY, OSSL_KEYMGMT_SELECT_PUBLIC_KEY,
    OSSL_OBJECT_PKEY, OSSL_PASSPHRASE_CALLBACK,
};
use crate::ffi::upcalls::bio_read_all;
use crate::key::MlKemKey;
use crate::keymgmt::{export_key, into_raw};

/// Larger than any ML-KEM PrivateKeyInfo (the oqs form of -1024 is about
/// 4.8 KiB); anything bigger is not ours.
const MAX_INPUT: usize = 64 * 1024;

/// The two input structures, indexed by the `STRUCTURE` const parameter.
const STRUCTURES: [(&CStr, c_int, &CStr); 2] = [
    (
        c"PrivateKeyInfo",
        OSSL_KEYMGMT_SELECT_PRIVATE_KEY as c_int,
        c"provider=mlkem,input=der,structure=PrivateKeyInfo",
    ),
    (
        c"SubjectPublicKeyInfo",
        OSSL_KEYMGMT_SELECT_PUBLIC_KEY as c_int,
        c"provider=mlkem,input=der,structure=SubjectPublicKeyInfo",
    ),
];

unsafe extern "C" fn newctx(provctx: *mut c_void) -> *mut c_void {
    guard(c"decoder_newctx", || {
        // SAFETY: the core passes our provctx; the decoder context is just
        // that pointer.
        unsafe { ProvCtx::from_ptr(provctx)? };
        Ok(provctx)
    })
}

unsafe extern "C" fn freectx(_ctx: *mut c_void) {}

/// As OpenSSL's DER decoders: the richest part of `selection` (private,
/// then public, then parameters) must be one the structure carries.
unsafe extern "C" fn does_selection<const STRUCTURE: usize>(
    _provctx: *mut c_void,
    selection: c_int,
) -> c_int {
    let mask = STRUCTURES[STRUCTURE].1;
    if selection == 0 {
        return 1;
    }
    for check in [
        OSSL_KEYMGMT_SELECT_PRIVATE_KEY as c_int,
        OSSL_KEYMGMT_SELECT_PUBLIC_KEY as c_int,
        OSSL_KEYMGMT_SELECT_ALL_PARAMETERS as c_int,
    ] {
        if selection & check != 0 {
            return c_bool(mask & check != 0);
        }
    }
    0
}

fn codec_error(alg: &Algorithm, error: CodecError) -> ProviderError {
    let reason = match error {
        CodecError::NoFormat | CodecError::NoFormatsEnabled => Reason::NoKeyFormat,
        CodecError::WrongKeyLength => Reason::InvalidLength,
        _ => Reason::BadEncoding,
    };
    ProviderError::new(reason).with_detail(format!("{}: {}", alg.layout.name, error.reason()))
}

/// Decodes `der` into a key of `alg`, or `Ok(None)` when it is not an
/// `alg` structure at all (another decoder's business).
fn decode_key(
    prov: &ProvCtx,
    alg: &'static Algorithm,
    structure: usize,
    der: &[u8],
) -> Result<Option<MlKemKey>> {
    let layout = &alg.layout;
    if structure == 0 {
        if codec::algorithm_oid_of_private_key_info(der) != Some(layout.oid) {
            return Ok(None);
        }
        let parts = codec::decode_private_key_info(layout, der, &prov.input_formats)
            .map_err(|e| codec_error(alg, e))?;
        let key = MlKemKey::from_parts(
            alg,
            prov.instance(),
            parts.seed.as_ref().map(|s| s.as_slice()),
            parts.dk.as_ref().map(|d| d.as_slice()),
            None,
        )?;
        if parts.seed.is_none() {
            // An expanded key alone gets the pairwise test, as in OpenSSL.
            key.pairwise_check()?;
        }
        let key = match key.data {
            Some(data) if !prov.retain_seed => MlKemKey {
                data: Some(data.without_seed()),
                ..key
            },
            _ => key,
        };
        Ok(Some(key))
    } else {
        if codec::algorithm_oid_of_spki(der) != Some(layout.oid) {
            return Ok(None);
        }
        let ek = codec::decode_spki(layout, der).map_err(|e| codec_error(alg, e))?;
        Ok(Some(MlKemKey::from_parts(
            alg,
            prov.instance(),
            None,
            None,
            Some(ek),
        )?))
    }
}

unsafe extern "C" fn decode<const ALG: usize, const STRUCTURE: usize>(
    ctx: *mut c_void,
    input: *mut OSSL_CORE_BIO,
    _selection: c_int,
    data_callback: OSSL_CALLBACK,
    data_arg: *mut c_void,
    _passphrase_callback: OSSL_PASSPHRASE_CALLBACK,
    _passphrase_arg: *mut c_void,
) -> c_int {
    guard(c"decoder_decode", || {
        // SAFETY: the decoder context is our provctx (see `newctx`).
        let prov = unsafe { ProvCtx::from_ptr(ctx)? };
        non_null(input, "input BIO")?;
        let callback = data_callback.ok_or_else(|| ProviderError::new(Reason::NullArgument))?;
        let alg = &ML_KEM[ALG];
        // SAFETY: `input` is the core's BIO for this call.
        let der = match unsafe { bio_read_all(input, MAX_INPUT) } {
            Ok(der) => der,
            // Too large to be ours: leave it to other decoders.
            Err(_) => return Ok(1),
        };
        // Not ours: "empty-handed" is success, so other decoders can try.
        let Some(key) = decode_key(prov, alg, STRUCTURE, &der)? else {
            return Ok(1);
        };
        let mut reference = into_raw(key);
        let object_type: c_int = OSSL_OBJECT_PKEY as c_int;
        let reference_bytes: &[u8] = {
            let ptr = core::ptr::from_ref(&reference).cast::<u8>();
            // SAFETY: views the pointer variable's own bytes; `load` reads
            // them back as a pointer and may clear them (through the core).
            unsafe { core::slice::from_raw_parts(ptr, size_of::<*mut c_void>()) }
        };
        let mut list = ParamList::new()
            .int(names::OBJECT_TYPE, &object_type)
            .utf8(names::OBJECT_DATA_TYPE, alg.name)
            .utf8(names::OBJECT_DATA_STRUCTURE, STRUCTURES[STRUCTURE].0)
            .octets(names::OBJECT_REFERENCE, reference_bytes);
        // SAFETY: the list and the reference outlive the call.
        let ok = unsafe { callback(list.as_ptr(), data_arg) };
        drop(list);
        // SAFETY: `load` cleared `reference` if it took the key; otherwise
        // it is still ours to free. Re-read it through a volatile read as
        // the core wrote it through a pointer.
        reference = unsafe { core::ptr::read_volatile(&reference) };
        if !reference.is_null() {
            // SAFETY: still the box made by `into_raw` above.
            drop(unsafe { Box::from_raw(reference.cast::<MlKemKey>()) });
        }
        Ok(ok)
    })
}

unsafe extern "C" fn export_object<const ALG: usize>(
    _ctx: *mut c_void,
    reference: *const c_void,
    reference_size: usize,
    export_callback: OSSL_CALLBACK,
    export_arg: *mut c_void,
) -> c_int {
    guard(c"decoder_export_object", || {
        non_null(reference, "object reference")?;
        if reference_size != size_of::<*mut c_void>() {
            return Err(ProviderError::new(Reason::InvalidParameter)
                .with_detail("bad object reference size"));
        }
        // SAFETY: the reference is the pointer our `decode` passed (size
        // checked); the key is alive during the callback that asks this.
        let key = unsafe { reference.cast::<*const MlKemKey>().read_unaligned() };
        non_null(key, "referenced key")?;
        // SAFETY: as above.
        let key = unsafe { &*key };
        export_key(
            key,
            OSSL_KEYMGMT_SELECT_KEYPAIR as c_int,
            export_callback,
            export_arg,
        )
    })
}

macro_rules! decoder_functions {
    ($alg:literal, $structure:literal) => {
        dispatch_table![
            OSSL_FUNC_DECODER_NEWCTX => OSSL_FUNC_decoder_newctx_fn = newctx,
            OSSL_FUNC_DECODER_FREECTX => OSSL_FUNC_decoder_freectx_fn = freectx,
            OSSL_FUNC_DECODER_DOES_SELECTION => OSSL_FUNC_decoder_does_selection_fn = does_selection::<$structure>,
            OSSL_FUNC_DECODER_DECODE => OSSL_FUNC_decoder_decode_fn = decode::<$alg, $structure>,
            OSSL_FUNC_DECODER_EXPORT_OBJECT => OSSL_FUNC_decoder_export_object_fn = export_object::<$alg>,
        ]
    };
}

const FUNCTIONS: [[&[OSSL_DISPATCH]; 2]; 3] = [
    [decoder_functions!(0, 0), decoder_functions!(0, 1)],
    [decoder_functions!(1, 0), decoder_functions!(1, 1)],
    [decoder_functions!(2, 0), decoder_functions!(2, 1)],
];

/// The decoders of each algorithm: properties and dispatch table.
pub(crate) const DECODERS: [[(&CStr, &[OSSL_DISPATCH]); 2]; 3] = {
    let mut out = [[(c"", FUNCTIONS[0][0]); 2]; 3];
    let mut alg = 0;
    while alg < 3 {
        let mut structure = 0;
        while structure < 2 {
            out[alg][structure] = (STRUCTURES[structure].2, FUNCTIONS[alg][structure]);
            structure += 1;
        }
        alg += 1;
    }
    out
};
