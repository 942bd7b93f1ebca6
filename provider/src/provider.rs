//! The provider object: init and teardown, provider parameters, the
//! algorithm tables for each operation, capabilities and reason strings.

use core::ffi::{c_int, c_uint, c_void, CStr};

use kem_core::BackendKind;

use crate::algorithms::{Algorithm, ALGORITHMS, ML_KEM};
use crate::context::{ProvCtx, PROPERTY};
use crate::error::{ProviderError, Reason};
use crate::ffi::guard::{guard, non_null, SUCCESS};
use crate::ffi::libcrypto;
use crate::ffi::names;
use crate::ffi::params::{describe_int, describe_utf8, ParamList, ParamsMut, END};
use crate::ffi::sys::{
    self, OSSL_ALGORITHM, OSSL_CALLBACK, OSSL_CORE_HANDLE, OSSL_DISPATCH, OSSL_ITEM, OSSL_PARAM,
};
use crate::ffi::upcalls::Instance;
use crate::ffi::{dispatch_table, upcalls, StaticTable};
use crate::hybrid::{self, Hybrid, HYBRIDS, HYBRID_TABLE};
use crate::{decoder, encoder, kem, keymgmt};

/// Registers the OIDs with the core, for OpenSSL versions that lack them
/// (before 3.5). Already-known OIDs are accepted as they are.
fn register_oids(handle: *const OSSL_CORE_HANDLE) {
    for alg in &ML_KEM {
        // A failure only means the name is taken by an equal definition
        // or the core is older; decoding works by OID either way.
        let _ = upcalls::create_object(handle, alg.oid, alg.oid_short_name, alg.oid_long_name);
    }
}

/// The provider's entry point, called by OpenSSL when it loads the module.
///
/// # Safety
/// Called by OpenSSL's core with its handle, its dispatch table and two
/// out-pointers, as `OSSL_provider_init_fn` specifies.
#[no_mangle]
pub unsafe extern "C" fn OSSL_provider_init(
    handle: *const OSSL_CORE_HANDLE,
    input: *const OSSL_DISPATCH,
    out: *mut *const OSSL_DISPATCH,
    provctx: *mut *mut c_void,
) -> c_int {
    guard(c"OSSL_provider_init", || {
        non_null(out, "dispatch out-pointer")?;
        non_null(provctx, "provctx out-pointer")?;
        non_null(input, "core dispatch table")?;
        // SAFETY: `input` is the core's table (init's contract).
        let upcalls = unsafe { upcalls::register(handle, input) };
        Instance::from_handle(handle).enter();
        let result = (|| {
            let lib = libcrypto::init(upcalls.anchor)?;
            // SAFETY: `handle` and `input` are init's arguments.
            let ctx = unsafe { ProvCtx::new(lib, handle, input)? };
            register_oids(handle);
            Ok(Box::new(ctx))
        })();
        match result {
            Ok(ctx) => {
                // SAFETY: both out-pointers were checked non-NULL above.
                unsafe {
                    *out = PROVIDER_FUNCTIONS.as_ptr();
                    *provctx = Box::into_raw(ctx).cast();
                }
                SUCCESS
            }
            Err(error) => {
                // Raise while this handle is still registered, then forget it.
                upcalls::raise(&error, c"OSSL_provider_init");
                upcalls::unregister(handle);
                Ok(0)
            }
        }
    })
}

unsafe extern "C" fn teardown(provctx: *mut c_void) {
    guard(c"teardown", || {
        if provctx.is_null() {
            return Ok(());
        }
        // SAFETY: `provctx` came from `Box::into_raw` in init and the core
        // calls teardown once, after every object of ours is freed.
        let ctx = unsafe { Box::from_raw(provctx.cast::<ProvCtx>()) };
        ctx.instance().enter();
        upcalls::unregister(ctx.handle);
        drop(ctx);
        Ok(())
    })
}

static GETTABLE_PARAMS: StaticTable<[OSSL_PARAM; 6]> = StaticTable([
    describe_utf8(names::PROV_NAME),
    describe_utf8(names::PROV_VERSION),
    describe_utf8(names::PROV_BUILDINFO),
    describe_int(names::PROV_STATUS),
    describe_utf8(names::PROV_BACKEND),
    END,
]);

unsafe extern "C" fn gettable_params(_provctx: *mut c_void) -> *const OSSL_PARAM {
    GETTABLE_PARAMS.0.as_ptr()
}

fn backend_name(kind: BackendKind) -> &'static CStr {
    match kind.name() {
        "avx2" => c"avx2",
        "avx512" => c"avx512",
        _ => c"portable",
    }
}

unsafe extern "C" fn get_params(_provctx: *mut c_void, params: *mut OSSL_PARAM) -> c_int {
    guard(c"get_params", || {
        // SAFETY: the core passes a valid, terminated array (or NULL).
        let mut params = unsafe { ParamsMut::from_ptr(params) };
        if let Some(mut p) = params.find(names::PROV_NAME) {
            p.set_utf8(c"mlkem: ML-KEM (FIPS 203) provider in Rust")?;
        }
        if let Some(mut p) = params.find(names::PROV_VERSION) {
            p.set_utf8(VERSION)?;
        }
        if let Some(mut p) = params.find(names::PROV_BUILDINFO) {
            p.set_utf8(BUILDINFO)?;
        }
        if let Some(mut p) = params.find(names::PROV_STATUS) {
            p.set_int(1)?;
        }
        if let Some(mut p) = params.find(names::PROV_BACKEND) {
            p.set_utf8(backend_name(kem_core::active_backend()))?;
        }
        SUCCESS
    })
}

const VERSION: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(v) => v,
        Err(_) => panic!("version has no NUL"),
    };
const BUILDINFO: &CStr = match CStr::from_bytes_with_nul(
    concat!(
        "mlkem-provider ",
        env!("CARGO_PKG_VERSION"),
        " (kem-core, Rust)\0"
    )
    .as_bytes(),
) {
    Ok(v) => v,
    Err(_) => panic!("build info has no NUL"),
};

const ALGORITHM_END: OSSL_ALGORITHM = OSSL_ALGORITHM {
    algorithm_names: core::ptr::null(),
    property_definition: core::ptr::null(),
    implementation: core::ptr::null(),
    algorithm_description: core::ptr::null(),
};

const fn entry(
    alg: &Algorithm,
    properties: &'static CStr,
    implementation: &'static [OSSL_DISPATCH],
) -> OSSL_ALGORITHM {
    OSSL_ALGORITHM {
        algorithm_names: alg.names.as_ptr(),
        property_definition: properties.as_ptr(),
        implementation: implementation.as_ptr(),
        algorithm_description: alg.name.as_ptr(),
    }
}

/// One entry per algorithm, same properties, per-algorithm tables.
const fn per_algorithm(functions: [&'static [OSSL_DISPATCH]; 3]) -> [OSSL_ALGORITHM; 4] {
    [
        entry(&ALGORITHMS[0], PROPERTY, functions[0]),
        entry(&ALGORITHMS[1], PROPERTY, functions[1]),
        entry(&ALGORITHMS[2], PROPERTY, functions[2]),
        ALGORITHM_END,
    ]
}

/// The algorithm tables, fixed at compile time (nothing allocated, so
/// nothing to free when the module is unloaded).
const fn hybrid_entry(h: &Hybrid, implementation: &'static [OSSL_DISPATCH]) -> OSSL_ALGORITHM {
    OSSL_ALGORITHM {
        algorithm_names: h.name.as_ptr(),
        property_definition: PROPERTY.as_ptr(),
        implementation: implementation.as_ptr(),
        algorithm_description: h.name.as_ptr(),
    }
}

/// The pure ML-KEM algorithms, then the hybrids.
const fn with_hybrids(
    pure: [&'static [OSSL_DISPATCH]; 3],
    hybrid: [&'static [OSSL_DISPATCH]; 3],
) -> [OSSL_ALGORITHM; 7] {
    let pure = per_algorithm(pure);
    [
        pure[0],
        pure[1],
        pure[2],
        hybrid_entry(&HYBRID_TABLE[0], hybrid[0]),
        hybrid_entry(&HYBRID_TABLE[1], hybrid[1]),
        hybrid_entry(&HYBRID_TABLE[2], hybrid[2]),
        ALGORITHM_END,
    ]
}

static KEYMGMT_ALGORITHMS: StaticTable<[OSSL_ALGORITHM; 7]> =
    StaticTable(with_hybrids(keymgmt::FUNCTIONS, hybrid::KEYMGMT_FUNCTIONS));
static KEM_ALGORITHMS: StaticTable<[OSSL_ALGORITHM; 7]> = StaticTable(with_hybrids(
    [kem::FUNCTIONS; 3],
    [kem::HYBRID_FUNCTIONS; 3],
));
static ENCODER_ALGORITHMS: StaticTable<[OSSL_ALGORITHM; 22]> = StaticTable({
    let mut out = [ALGORITHM_END; 22];
    let mut i = 0;
    while i < 21 {
        let (properties, functions) = encoder::ENCODERS[i % 7];
        out[i] = entry(&ALGORITHMS[i / 7], properties, functions);
        i += 1;
    }
    out
});
static DECODER_ALGORITHMS: StaticTable<[OSSL_ALGORITHM; 7]> = StaticTable({
    let mut out = [ALGORITHM_END; 7];
    let mut i = 0;
    while i < 6 {
        let (properties, functions) = decoder::DECODERS[i / 2][i % 2];
        out[i] = entry(&ALGORITHMS[i / 2], properties, functions);
        i += 1;
    }
    out
});

unsafe extern "C" fn query_operation(
    _provctx: *mut c_void,
    operation_id: c_int,
    no_cache: *mut c_int,
) -> *const OSSL_ALGORITHM {
    guard(c"query_operation", || {
        if !no_cache.is_null() {
            // SAFETY: non-NULL out-pointer from the core.
            unsafe { *no_cache = 0 };
        }
        Ok(match operation_id as u32 {
            sys::OSSL_OP_KEYMGMT => KEYMGMT_ALGORITHMS.0.as_ptr(),
            sys::OSSL_OP_KEM => KEM_ALGORITHMS.0.as_ptr(),
            sys::OSSL_OP_ENCODER => ENCODER_ALGORITHMS.0.as_ptr(),
            sys::OSSL_OP_DECODER => DECODER_ALGORITHMS.0.as_ptr(),
            _ => core::ptr::null(),
        })
    })
}

/// TLS constants for the capability (from `tls1.h`).
const TLS1_3_VERSION: c_int = 0x0304;

unsafe extern "C" fn get_capabilities(
    _provctx: *mut c_void,
    capability: *const core::ffi::c_char,
    callback: OSSL_CALLBACK,
    arg: *mut c_void,
) -> c_int {
    guard(c"get_capabilities", || {
        non_null(capability, "capability name")?;
        let callback = callback.ok_or_else(|| ProviderError::new(Reason::NullArgument))?;
        // SAFETY: the core passes a NUL-terminated name.
        let capability = unsafe { CStr::from_ptr(capability) };
        if !capability
            .to_bytes()
            .eq_ignore_ascii_case(names::CAPABILITY_TLS_GROUP.to_bytes())
        {
            return SUCCESS;
        }
        let pure = ML_KEM
            .iter()
            .map(|alg| (&alg.tls_group, alg.name, alg.security_bits));
        let hybrids = HYBRIDS
            .iter()
            .map(|h| (&h.tls_group, h.name, ML_KEM[h.ml_kem].security_bits));
        for (group, algorithm, security_bits) in pure.chain(hybrids) {
            let id: c_uint = group.id;
            let security_bits: c_uint = security_bits;
            let (min_tls, max_tls, no_dtls, is_kem): (c_int, c_int, c_int, c_int) =
                (TLS1_3_VERSION, 0, -1, 1);
            let mut list = ParamList::new()
                .utf8(names::TLS_GROUP_NAME, group.name)
                .utf8(names::TLS_GROUP_NAME_INTERNAL, algorithm)
                .utf8(names::TLS_GROUP_ALG, algorithm)
                .uint(names::TLS_GROUP_ID, &id)
                .uint(names::TLS_GROUP_SECURITY_BITS, &security_bits)
                .int(names::TLS_GROUP_MIN_TLS, &min_tls)
                .int(names::TLS_GROUP_MAX_TLS, &max_tls)
                .int(names::TLS_GROUP_MIN_DTLS, &no_dtls)
                .int(names::TLS_GROUP_MAX_DTLS, &no_dtls)
                .int(names::TLS_GROUP_IS_KEM, &is_kem);
            // SAFETY: the list and everything it points at outlive the call.
            if unsafe { callback(list.as_ptr(), arg) } != 1 {
                return Ok(0);
            }
        }
        SUCCESS
    })
}

static REASON_STRINGS: StaticTable<[OSSL_ITEM; Reason::ALL.len() + 1]> = StaticTable({
    let mut items = [OSSL_ITEM {
        id: 0,
        ptr: core::ptr::null_mut(),
    }; Reason::ALL.len() + 1];
    let mut i = 0;
    while i < Reason::ALL.len() {
        items[i] = OSSL_ITEM {
            id: Reason::ALL[i] as u32,
            ptr: Reason::ALL[i].text().as_ptr().cast_mut().cast(),
        };
        i += 1;
    }
    items
});

unsafe extern "C" fn get_reason_strings(_provctx: *mut c_void) -> *const OSSL_ITEM {
    REASON_STRINGS.0.as_ptr()
}

static PROVIDER_FUNCTIONS: &[OSSL_DISPATCH] = dispatch_table![
    OSSL_FUNC_PROVIDER_TEARDOWN => OSSL_FUNC_provider_teardown_fn = teardown,
    OSSL_FUNC_PROVIDER_GETTABLE_PARAMS => OSSL_FUNC_provider_gettable_params_fn = gettable_params,
    OSSL_FUNC_PROVIDER_GET_PARAMS => OSSL_FUNC_provider_get_params_fn = get_params,
    OSSL_FUNC_PROVIDER_QUERY_OPERATION => OSSL_FUNC_provider_query_operation_fn = query_operation,
    OSSL_FUNC_PROVIDER_GET_CAPABILITIES => OSSL_FUNC_provider_get_capabilities_fn = get_capabilities,
    OSSL_FUNC_PROVIDER_GET_REASON_STRINGS => OSSL_FUNC_provider_get_reason_strings_fn = get_reason_strings,
];
