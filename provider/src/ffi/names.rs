//! Parameter, property and object names as `&'static CStr`.
//!
//! Names the system's (3.0) `core_names.h` has come from bindgen; those that
//! OpenSSL added later (ML-KEM's `seed`, the KEM's `ikme`) are spelled here,
//! exactly as OpenSSL 3.5 spells them.

use core::ffi::CStr;

use super::sys;

/// Turns a bindgen byte-string constant (`b"bits\0"`) into a `&CStr`.
pub(crate) const fn cstr(bytes: &'static [u8]) -> &'static CStr {
    match CStr::from_bytes_with_nul(bytes) {
        Ok(name) => name,
        Err(_) => panic!("a C string constant must end in its only NUL"),
    }
}

// Provider parameters.
pub(crate) const PROV_NAME: &CStr = cstr(sys::OSSL_PROV_PARAM_NAME);
pub(crate) const PROV_VERSION: &CStr = cstr(sys::OSSL_PROV_PARAM_VERSION);
pub(crate) const PROV_BUILDINFO: &CStr = cstr(sys::OSSL_PROV_PARAM_BUILDINFO);
pub(crate) const PROV_STATUS: &CStr = cstr(sys::OSSL_PROV_PARAM_STATUS);
/// The active kem-core backend (`portable`, `avx2`, `avx512-keccak`,
/// `avx512`, `neon`); ours.
pub(crate) const PROV_BACKEND: &CStr = c"backend";

// Provider configuration keys, read from `openssl.cnf` through the core.
/// Private-key output formats, in order of preference (as OpenSSL 3.5's
/// `ml-kem.output_formats`).
pub(crate) const CONF_OUTPUT_FORMATS: &CStr = c"ml-kem.output_formats";
/// Private-key input formats accepted (as OpenSSL 3.5's `ml-kem.input_formats`).
pub(crate) const CONF_INPUT_FORMATS: &CStr = c"ml-kem.input_formats";
/// Whether keys made from a seed keep it (as OpenSSL 3.5's `ml-kem.retain_seed`).
pub(crate) const CONF_RETAIN_SEED: &CStr = c"ml-kem.retain_seed";
/// Forces a kem-core backend (a `kem_core::BackendKind` name); ours.
pub(crate) const CONF_BACKEND: &CStr = c"backend";
/// RecipientInfo type of a key for CMS (`OSSL_PKEY_PARAM_CMS_RI_TYPE`).
pub(crate) const PKEY_CMS_RI_TYPE: &CStr = c"ri-type";
/// Default KDF of a KEM recipient (`OSSL_PKEY_PARAM_CMS_KEMRI_KDF_ALGORITHM`).
pub(crate) const PKEY_CMS_KEMRI_KDF_ALGORITHM: &CStr = c"kemri-kdf-alg";
/// The core's version string (`OSSL_PROV_PARAM_CORE_VERSION`).
pub(crate) const CORE_VERSION: &CStr = c"openssl-version";

// Key-management parameters.
pub(crate) const PKEY_BITS: &CStr = cstr(sys::OSSL_PKEY_PARAM_BITS);
pub(crate) const PKEY_SECURITY_BITS: &CStr = cstr(sys::OSSL_PKEY_PARAM_SECURITY_BITS);
pub(crate) const PKEY_MAX_SIZE: &CStr = cstr(sys::OSSL_PKEY_PARAM_MAX_SIZE);
pub(crate) const PKEY_PUB_KEY: &CStr = cstr(sys::OSSL_PKEY_PARAM_PUB_KEY);
pub(crate) const PKEY_PRIV_KEY: &CStr = cstr(sys::OSSL_PKEY_PARAM_PRIV_KEY);
pub(crate) const PKEY_ENCODED_PUBLIC_KEY: &CStr = cstr(sys::OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY);
pub(crate) const PKEY_PROPERTIES: &CStr = cstr(sys::OSSL_PKEY_PARAM_PROPERTIES);
pub(crate) const PKEY_GROUP_NAME: &CStr = cstr(sys::OSSL_PKEY_PARAM_GROUP_NAME);
/// `OSSL_PKEY_PARAM_ML_KEM_SEED` (OpenSSL 3.5): d ‖ z.
pub(crate) const PKEY_ML_KEM_SEED: &CStr = c"seed";
/// `OSSL_PKEY_PARAM_SECURITY_CATEGORY` (OpenSSL 3.5).
pub(crate) const PKEY_SECURITY_CATEGORY: &CStr = c"security-category";

// KEM parameters.
/// `OSSL_KEM_PARAM_IKME` (OpenSSL 3.3): the encapsulation's m, for tests.
pub(crate) const KEM_IKME: &CStr = c"ikme";

// Encoder parameters.
pub(crate) const ENCODER_CIPHER: &CStr = cstr(sys::OSSL_ENCODER_PARAM_CIPHER);
pub(crate) const ENCODER_PROPERTIES: &CStr = cstr(sys::OSSL_ENCODER_PARAM_PROPERTIES);

// Object parameters (decoder results).
pub(crate) const OBJECT_TYPE: &CStr = cstr(sys::OSSL_OBJECT_PARAM_TYPE);
pub(crate) const OBJECT_DATA_TYPE: &CStr = cstr(sys::OSSL_OBJECT_PARAM_DATA_TYPE);
pub(crate) const OBJECT_DATA_STRUCTURE: &CStr = cstr(sys::OSSL_OBJECT_PARAM_DATA_STRUCTURE);
pub(crate) const OBJECT_REFERENCE: &CStr = cstr(sys::OSSL_OBJECT_PARAM_REFERENCE);

// TLS-GROUP capability parameters.
pub(crate) const TLS_GROUP_NAME: &CStr = cstr(sys::OSSL_CAPABILITY_TLS_GROUP_NAME);
pub(crate) const TLS_GROUP_NAME_INTERNAL: &CStr =
    cstr(sys::OSSL_CAPABILITY_TLS_GROUP_NAME_INTERNAL);
pub(crate) const TLS_GROUP_ID: &CStr = cstr(sys::OSSL_CAPABILITY_TLS_GROUP_ID);
pub(crate) const TLS_GROUP_ALG: &CStr = cstr(sys::OSSL_CAPABILITY_TLS_GROUP_ALG);
pub(crate) const TLS_GROUP_SECURITY_BITS: &CStr =
    cstr(sys::OSSL_CAPABILITY_TLS_GROUP_SECURITY_BITS);
pub(crate) const TLS_GROUP_IS_KEM: &CStr = cstr(sys::OSSL_CAPABILITY_TLS_GROUP_IS_KEM);
pub(crate) const TLS_GROUP_MIN_TLS: &CStr = cstr(sys::OSSL_CAPABILITY_TLS_GROUP_MIN_TLS);
pub(crate) const TLS_GROUP_MAX_TLS: &CStr = cstr(sys::OSSL_CAPABILITY_TLS_GROUP_MAX_TLS);
pub(crate) const TLS_GROUP_MIN_DTLS: &CStr = cstr(sys::OSSL_CAPABILITY_TLS_GROUP_MIN_DTLS);
pub(crate) const TLS_GROUP_MAX_DTLS: &CStr = cstr(sys::OSSL_CAPABILITY_TLS_GROUP_MAX_DTLS);
/// The capability's name, passed to `get_capabilities`.
pub(crate) const CAPABILITY_TLS_GROUP: &CStr = c"TLS-GROUP";
