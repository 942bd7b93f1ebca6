//! The provider context: one per loaded instance of the provider (what the
//! core's `provctx` points at), with the instance's `openssl.cnf` settings
//! and its child library context, and the property string every algorithm
//! of this provider carries.
//!
//! The lowest layer above `ffi`, `codec` and `error`: every operation takes
//! the context; nothing here knows the algorithms or the dispatch tables.

use core::ffi::CStr;

use kem_core::BackendKind;

use crate::codec::{parse_format_list, PrivateKeyFormat};
use crate::error::{ProviderError, Reason, Result};
use crate::ffi::libcrypto::ChildLibCtx;
use crate::ffi::names;
use crate::ffi::object::Object;
use crate::ffi::provider::Core;
use crate::ffi::upcalls::{self, Instance};

/// The property every algorithm carries, for `-propquery provider=mlkem`.
pub(crate) const PROPERTY: &CStr = c"provider=mlkem";

/// Per-instance state: what `provctx` points at. Objects keep it as
/// `&'static ProvCtx`: `ffi::object` says why that is sound.
pub(crate) struct ProvCtx {
    /// The instance, as the core knows it.
    instance: Instance,
    /// Child of the core's library context: randomness, ciphers and the
    /// hybrids' classical halves.
    pub(crate) libctx: ChildLibCtx,
    /// Private-key output formats, most preferred first.
    pub(crate) output_formats: Vec<PrivateKeyFormat>,
    /// Private-key input formats accepted.
    pub(crate) input_formats: Vec<PrivateKeyFormat>,
    /// Whether keys keep their seed (`ml-kem.retain_seed`).
    pub(crate) retain_seed: bool,
    /// The major version of the OpenSSL that loaded this instance: how it
    /// prints keys, and which classical key types its EVP offers the
    /// hybrids.
    pub(crate) core_major: u32,
}

impl Object for ProvCtx {
    fn instance(&self) -> Instance {
        self.instance
    }
}

impl ProvCtx {
    /// Reads the instance's configuration and creates its child library
    /// context.
    pub(crate) fn new(instance: Instance, core: &Core) -> Result<Self> {
        let (output_formats, input_formats, retain_seed) = configure(instance)?;
        Ok(Self {
            instance,
            libctx: core.child_libctx()?,
            output_formats,
            input_formats,
            retain_seed,
            core_major: core_major_version(instance),
        })
    }

    /// Fills `out` with secret random bytes (a key's seed d ‖ z, an
    /// encapsulation's m) from OpenSSL's private DRBG at `strength` bits.
    /// OpenSSL's own ML-KEM draws the seed there too (`RAND_priv_bytes_ex`
    /// in `ossl_ml_kem_genkey`); m decides the shared secret, so it is drawn
    /// there as well.
    pub(crate) fn secret_random(&self, out: &mut [u8], strength: u32) -> Result<()> {
        self.libctx.private_random_bytes(out, strength)
    }

    /// Bytes per hex line of `-text` output, as the loading OpenSSL prints
    /// its own keys.
    pub(crate) fn text_bytes_per_line(&self) -> usize {
        crate::codec::bytes_per_line(self.core_major)
    }

    /// This instance, for objects to remember and errors to go through.
    pub(crate) fn instance(&self) -> Instance {
        self.instance
    }

    /// A context for unit tests: objects can hold it, but nothing can be
    /// fetched or drawn through it.
    #[cfg(test)]
    pub(crate) fn for_tests() -> &'static Self {
        Self::for_tests_retaining_seeds(true)
    }

    /// [`ProvCtx::for_tests`] with `ml-kem.retain_seed` set to `retain_seed`.
    #[cfg(test)]
    pub(crate) fn for_tests_retaining_seeds(retain_seed: bool) -> &'static Self {
        Box::leak(Box::new(Self {
            instance: Instance::none(),
            libctx: ChildLibCtx::none(),
            output_formats: crate::codec::PrivateKeyFormat::ALL.to_vec(),
            input_formats: crate::codec::PrivateKeyFormat::ALL.to_vec(),
            retain_seed,
            core_major: 3,
        }))
    }
}

/// The major version of the OpenSSL that loaded us (the core's
/// `openssl-version`, e.g. "3.0.13"), 3 if it does not say.
fn core_major_version(instance: Instance) -> u32 {
    upcalls::config_value(instance, names::CORE_VERSION)
        .and_then(|version| version.split('.').next()?.parse().ok())
        .unwrap_or(3)
}

fn parse_bool(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "1" | "yes" | "true" | "on" => Some(true),
        "0" | "no" | "false" | "off" => Some(false),
        _ => None,
    }
}

fn config_error(key: &CStr, value: &str) -> ProviderError {
    ProviderError::new(Reason::InvalidParameter).with_detail(format!(
        "invalid provider configuration {} = {value}",
        key.to_string_lossy()
    ))
}

/// Reads this instance's `openssl.cnf` settings.
fn configure(instance: Instance) -> Result<(Vec<PrivateKeyFormat>, Vec<PrivateKeyFormat>, bool)> {
    let formats = |key: &CStr| -> Result<Vec<PrivateKeyFormat>> {
        let value = upcalls::config_value(instance, key);
        parse_format_list(value.as_deref())
            .map_err(|_| config_error(key, value.as_deref().unwrap_or("")))
    };
    let output = formats(names::CONF_OUTPUT_FORMATS)?;
    let input = formats(names::CONF_INPUT_FORMATS)?;
    let retain_seed = match upcalls::config_value(instance, names::CONF_RETAIN_SEED) {
        None => true,
        Some(v) => parse_bool(&v).ok_or_else(|| config_error(names::CONF_RETAIN_SEED, &v))?,
    };
    if let Some(name) = upcalls::config_value(instance, names::CONF_BACKEND) {
        let kind = BackendKind::from_name(&name)
            .ok_or_else(|| config_error(names::CONF_BACKEND, &name))?;
        kem_core::set_backend(kind).map_err(|_| {
            ProviderError::new(Reason::BackendUnavailable)
                .with_detail(format!("backend {name} cannot run on this CPU"))
        })?;
    }
    Ok((output, input, retain_seed))
}
