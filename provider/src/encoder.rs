//! Encoders (`OSSL_OP_ENCODER`): PrivateKeyInfo, EncryptedPrivateKeyInfo
//! and SubjectPublicKeyInfo, each as DER or PEM, and text — the set
//! OpenSSL 3.5 registers for ML-KEM.

use core::ffi::CStr;
use std::ffi::CString;

use zeroize::Zeroizing;

use crate::codec::{self, CodecError};
use crate::context::ProvCtx;
use crate::error::{ProviderError, Reason, Result};
use crate::ffi::encoder::{encoder_functions, Encoder, Passphrase};
use crate::ffi::evp::encrypt_private_key_info;
use crate::ffi::names;
use crate::ffi::object::Object;
use crate::ffi::params::{describe_utf8, Params, END};
use crate::ffi::sys::{OSSL_DISPATCH, OSSL_PARAM};
use crate::ffi::upcalls::Instance;
use crate::ffi::Selection;
use crate::ml_kem::MlKemKey;

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

/// The encoder of `KINDS[KIND]`, for every ML-KEM parameter set (the key
/// knows its own).
pub(crate) struct MlKemEncoder<const KIND: usize>;

/// An encoder context: the cipher for EncryptedPrivateKeyInfo, if any.
pub(crate) struct EncoderCtx {
    prov: &'static ProvCtx,
    cipher: Option<CString>,
    cipher_properties: Option<CString>,
}

impl Object for EncoderCtx {
    fn instance(&self) -> Instance {
        self.prov.instance()
    }
}

/// The selections each structure serves; as OpenSSL's encoders, a richer
/// selection is checked first (private, then public).
fn serves(structure: Structure, selection: Selection) -> bool {
    if selection.is_empty() {
        return true;
    }
    match structure {
        Structure::Text => selection.key(),
        Structure::PrivateKeyInfo | Structure::EncryptedPrivateKeyInfo => selection.private(),
        Structure::SubjectPublicKeyInfo => !selection.private() && selection.public(),
    }
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
        &key.kind.layout,
        data.seed(),
        &dk,
        data.public_key(),
        &ctx.prov.output_formats,
    )
    .map_err(codec_error)
}

/// Encrypts a PrivateKeyInfo with the context's cipher and a passphrase
/// from the core's callback (PKCS#5 v2 through libcrypto).
fn encrypt(ctx: &EncoderCtx, pki: &[u8], passphrase: Passphrase<'_>) -> Result<Vec<u8>> {
    let fail =
        |why: &str| ProviderError::new(Reason::EncryptionFailure).with_detail(why.to_owned());
    let cipher = ctx.cipher.as_ref().ok_or_else(|| fail("no cipher set"))?;
    if !passphrase.is_set() {
        return Err(fail("no passphrase callback"));
    }
    let mut pass = Zeroizing::new([0u8; 1024]);
    let len = passphrase
        .read(pass.as_mut_slice())
        .ok_or_else(|| fail("unable to get passphrase"))?;
    encrypt_private_key_info(
        &ctx.prov.libctx,
        cipher,
        ctx.cipher_properties.as_deref(),
        pki,
        &pass[..len],
    )
}

/// Armours `der` as PEM with `label` when `pem`.
fn armour(pem: bool, label: &str, der: Zeroizing<Vec<u8>>) -> Result<Zeroizing<Vec<u8>>> {
    if !pem {
        return Ok(der);
    }
    let mut text = codec::pem_encode(label, &der).map_err(codec_error)?;
    Ok(Zeroizing::new(core::mem::take(&mut *text).into_bytes()))
}

impl<const KIND: usize> Encoder for MlKemEncoder<KIND> {
    type Prov = ProvCtx;
    type Key = MlKemKey;
    type Ctx = EncoderCtx;

    const SETTABLE: &'static [OSSL_PARAM] = &[
        describe_utf8(names::ENCODER_CIPHER),
        describe_utf8(names::ENCODER_PROPERTIES),
        END,
    ];

    fn new(prov: &'static ProvCtx) -> Result<EncoderCtx> {
        Ok(EncoderCtx {
            prov,
            cipher: None,
            cipher_properties: None,
        })
    }

    fn set_params(ctx: &mut EncoderCtx, params: Params<'_>) -> Result<()> {
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
        Ok(())
    }

    fn does_selection(selection: Selection) -> bool {
        serves(KINDS[KIND].0, selection)
    }

    fn encode(
        ctx: &EncoderCtx,
        key: &MlKemKey,
        selection: Selection,
        passphrase: Passphrase<'_>,
    ) -> Result<Zeroizing<Vec<u8>>> {
        let (structure, pem, _) = KINDS[KIND];
        let layout = &key.kind.layout;
        // A cipher set on a PrivateKeyInfo encoder means "encrypt", as in
        // OpenSSL's own encoders.
        let structure = match structure {
            Structure::PrivateKeyInfo if ctx.cipher.is_some() => Structure::EncryptedPrivateKeyInfo,
            other => other,
        };
        Ok(match structure {
            Structure::PrivateKeyInfo => armour(pem, "PRIVATE KEY", private_key_info(ctx, key)?)?,
            Structure::EncryptedPrivateKeyInfo => {
                let der = encrypt(ctx, &private_key_info(ctx, key)?, passphrase)?;
                armour(pem, "ENCRYPTED PRIVATE KEY", Zeroizing::new(der))?
            }
            Structure::SubjectPublicKeyInfo => {
                let der = codec::encode_spki(layout, key.public()?.public_key());
                armour(pem, "PUBLIC KEY", Zeroizing::new(der))?
            }
            Structure::Text => {
                let data = key.public()?;
                let private = selection.private();
                let dk = if private { data.private_key() } else { None };
                let text = codec::key_to_text(
                    layout,
                    data.seed(),
                    dk.as_deref().map(Vec::as_slice),
                    Some(data.public_key()),
                    private,
                    ctx.prov.text_bytes_per_line(),
                )
                .map_err(codec_error)?;
                Zeroizing::new(text.as_bytes().to_vec())
            }
        })
    }
}

const FUNCTIONS: [&[OSSL_DISPATCH]; 7] = [
    encoder_functions!(MlKemEncoder<0>),
    encoder_functions!(MlKemEncoder<1>),
    encoder_functions!(MlKemEncoder<2>),
    encoder_functions!(MlKemEncoder<3>),
    encoder_functions!(MlKemEncoder<4>),
    encoder_functions!(MlKemEncoder<5>),
    encoder_functions!(MlKemEncoder<6>),
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
