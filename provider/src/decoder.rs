//! Decoders (`OSSL_OP_DECODER`): DER PrivateKeyInfo (every ML-KEM private
//! key format OpenSSL 3.5 reads) and DER SubjectPublicKeyInfo. PEM and
//! encrypted PKCS#8 are unwrapped by OpenSSL's own decoders before ours.

use core::ffi::{c_int, CStr};

use crate::algorithms::{Algorithm, ML_KEM};
use crate::codec::{self, CodecError};
use crate::context::ProvCtx;
use crate::error::{ProviderError, Reason, Result};
use crate::ffi::decoder::{decoder_functions, Decoder};
use crate::ffi::params::ParamCallback;
use crate::ffi::sys::OSSL_DISPATCH;
use crate::ffi::Selection;
use crate::key::{Given, Key};
use crate::keymgmt;
use crate::ml_kem::{seed_as_configured, MlKemKey};

/// Larger than any ML-KEM PrivateKeyInfo (the oqs form of -1024 is about
/// 4.8 KiB); anything bigger is not ours.
const MAX_INPUT: usize = 64 * 1024;

/// The two input structures, indexed by the `STRUCTURE` const parameter:
/// name, whether it carries the private key, properties.
const STRUCTURES: [(&CStr, bool, &CStr); 2] = [
    (
        c"PrivateKeyInfo",
        true,
        c"provider=mlkem,input=der,structure=PrivateKeyInfo",
    ),
    (
        c"SubjectPublicKeyInfo",
        false,
        c"provider=mlkem,input=der,structure=SubjectPublicKeyInfo",
    ),
];

/// The decoder of `STRUCTURES[STRUCTURE]` for `ML_KEM[ALG]`.
pub(crate) struct MlKemDecoder<const ALG: usize, const STRUCTURE: usize>;

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
    prov: &'static ProvCtx,
    alg: &'static Algorithm,
    structure: usize,
    der: &[u8],
) -> Result<Option<MlKemKey>> {
    let layout = &alg.layout;
    let key = |data| Key {
        kind: alg,
        prov,
        parts: Some(data),
    };
    if structure == 0 {
        if codec::algorithm_oid_of_private_key_info(der) != Some(layout.oid) {
            return Ok(None);
        }
        let parts = codec::decode_private_key_info(layout, der, &prov.input_formats)
            .map_err(|e| codec_error(alg, e))?;
        let data = alg.key_data(Given {
            seed: parts.seed.as_ref().map(|s| s.as_slice()),
            private: parts.dk.as_ref().map(|d| d.as_slice()),
            public: None,
        })?;
        if parts.seed.is_none() {
            // An expanded key alone gets the pairwise test, as in OpenSSL.
            alg.pairwise_check(data.as_ref())?;
        }
        Ok(Some(key(seed_as_configured(prov, data))))
    } else {
        if codec::algorithm_oid_of_spki(der) != Some(layout.oid) {
            return Ok(None);
        }
        let ek = codec::decode_spki(layout, der).map_err(|e| codec_error(alg, e))?;
        let data = alg.key_data(Given {
            public: Some(ek),
            ..Given::default()
        })?;
        Ok(Some(key(data)))
    }
}

impl<const ALG: usize, const STRUCTURE: usize> Decoder for MlKemDecoder<ALG, STRUCTURE> {
    type Prov = ProvCtx;
    type Key = MlKemKey;

    const STRUCTURE: &'static CStr = STRUCTURES[STRUCTURE].0;
    const DATA_TYPE: &'static CStr = crate::algorithms::ALGORITHMS[ALG].name;
    const MAX_INPUT: usize = MAX_INPUT;

    /// As OpenSSL's DER decoders: the richest part of `selection` (private,
    /// then public, then parameters) must be one the structure carries.
    fn does_selection(selection: Selection) -> bool {
        let private = STRUCTURES[STRUCTURE].1;
        if selection.is_empty() {
            true
        } else if selection.private() {
            private
        } else if selection.public() {
            !private
        } else {
            // Neither structure carries parameters.
            false
        }
    }

    fn decode(prov: &'static ProvCtx, der: &[u8]) -> Result<Option<MlKemKey>> {
        decode_key(prov, &ML_KEM[ALG], STRUCTURE, der)
    }

    fn export(key: &MlKemKey, callback: ParamCallback<'_>) -> Result<c_int> {
        keymgmt::export(key, Selection::KEYPAIR, callback)
    }
}

const FUNCTIONS: [[&[OSSL_DISPATCH]; 2]; 3] = [
    [
        decoder_functions!(MlKemDecoder<0, 0>),
        decoder_functions!(MlKemDecoder<0, 1>),
    ],
    [
        decoder_functions!(MlKemDecoder<1, 0>),
        decoder_functions!(MlKemDecoder<1, 1>),
    ],
    [
        decoder_functions!(MlKemDecoder<2, 0>),
        decoder_functions!(MlKemDecoder<2, 1>),
    ],
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
