//! The provider context: one per loaded instance of the provider (what the
//! core's `provctx` points at), with the instance's `openssl.cnf` settings
//! and its child library context, and the property string every algorithm
//! of this provider carries.
//!
//! The lowest layer above `ffi`, `codec` and `error`: every operation takes
//! the context; nothing here knows the algorithms or the dispatch tables.

use core::ffi::{c_void, CStr};

use kem_core::BackendKind;

use crate::codec::{parse_format_list, PrivateKeyFormat};
use crate::error::{ProviderError, Reason, Result};
use crate::ffi::guard::non_null;
use crate::ffi::libcrypto::{ChildLibCtx, LibCrypto};
use crate::ffi::names;
use crate::ffi::sys::{OSSL_CORE_HANDLE, OSSL_DISPATCH};
use crate::ffi::upcalls::{self, Instance};

/// The property every algorithm carries, for `-propquery provider=mlkem`.
pub(crate) const PROPERTY: &CStr = c"provider=mlkem";

/// Per-instance state: what `provctx` points at.
pub(crate) struct ProvCtx {
    pub(crate) handle: *const OSSL_CORE_HANDLE,
    /// Child of the core's library context: randomness and ciphers.
    pub(crate) libctx: ChildLibCtx,
    /// Private-key output formats, most preferred first.
    pub(crate) output_formats: Vec<PrivateKeyFormat>,
    /// Private-key input formats accepted.
    pub(crate) input_formats: Vec<PrivateKeyFormat>,
    /// Whether keys keep their seed (`ml-kem.retain_seed`).
    pub(crate) retain_seed: bool,
}

// SAFETY: `handle` is an opaque token the core accepts from any thread; the
// rest is owned, thread-safe data, immutable after init.
unsafe impl Send for ProvCtx {}
// SAFETY: as above.
unsafe impl Sync for ProvCtx {}

impl ProvCtx {
    /// Fills `out` from OpenSSL's DRBG at `strength` bits.
    pub(crate) fn random(&self, out: &mut [u8], strength: u32) -> Result<()> {
        self.libctx.random_bytes(out, strength)
    }

    /// Borrows the context behind a `provctx` pointer.
    ///
    /// # Safety
    /// `ptr` is NULL or a `provctx` this provider returned from init that
    /// has not been torn down.
    pub(crate) unsafe fn from_ptr<'a>(ptr: *mut c_void) -> Result<&'a ProvCtx> {
        non_null(ptr, "provider context")?;
        // SAFETY: the caller's contract.
        let ctx = unsafe { &*ptr.cast::<ProvCtx>() };
        ctx.instance().enter();
        Ok(ctx)
    }

    /// This instance, for objects to remember and errors to go through.
    pub(crate) fn instance(&self) -> Instance {
        Instance::from_handle(self.handle)
    }

    /// Reads the instance's configuration and creates its child library
    /// context.
    ///
    /// # Safety
    /// `handle` and `input` are those passed to `OSSL_provider_init`.
    pub(crate) unsafe fn new(
        lib: &LibCrypto,
        handle: *const OSSL_CORE_HANDLE,
        input: *const OSSL_DISPATCH,
    ) -> Result<Self> {
        let (output_formats, input_formats, retain_seed) = configure(handle)?;
        // SAFETY: forwarded from the caller.
        let libctx = unsafe { ChildLibCtx::new(lib, handle, input)? };
        Ok(Self {
            handle,
            libctx,
            output_formats,
            input_formats,
            retain_seed,
        })
    }
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
fn configure(
    handle: *const OSSL_CORE_HANDLE,
) -> Result<(Vec<PrivateKeyFormat>, Vec<PrivateKeyFormat>, bool)> {
    let formats = |key: &CStr| -> Result<Vec<PrivateKeyFormat>> {
        let value = upcalls::config_value(handle, key);
        parse_format_list(value.as_deref())
            .map_err(|_| config_error(key, value.as_deref().unwrap_or("")))
    };
    let output = formats(names::CONF_OUTPUT_FORMATS)?;
    let input = formats(names::CONF_INPUT_FORMATS)?;
    let retain_seed = match upcalls::config_value(handle, names::CONF_RETAIN_SEED) {
        None => true,
        Some(v) => parse_bool(&v).ok_or_else(|| config_error(names::CONF_RETAIN_SEED, &v))?,
    };
    if let Some(name) = upcalls::config_value(handle, names::CONF_BACKEND) {
        let kind = BackendKind::from_name(&name)
            .ok_or_else(|| config_error(names::CONF_BACKEND, &name))?;
        kem_core::set_backend(kind).map_err(|_| {
            ProviderError::new(Reason::BackendUnavailable)
                .with_detail(format!("backend {name} cannot run on this CPU"))
        })?;
    }
    Ok((output, input, retain_seed))
}
