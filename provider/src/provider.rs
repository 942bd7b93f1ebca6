//! The provider object: the entry point OpenSSL calls, instance setup,
//! provider parameters, the algorithm tables of each operation,
//! capabilities and reason strings. The top of the module graph: it builds
//! the tables from every operation, and nothing imports it.

use core::ffi::{c_int, c_uint, c_void, CStr};

use kem_core::BackendKind;

use crate::algorithms::{Algorithm, ALGORITHMS, ML_KEM};
use crate::context::{ProvCtx, PROPERTY};
use crate::error::{Reason, Result};
use crate::ffi::names;
use crate::ffi::params::{describe_int, describe_utf8, ParamCallback, ParamList, ParamsMut, END};
use crate::ffi::provider::{provider_functions, Core, Provider};
use crate::ffi::sys::{
    self, OSSL_ALGORITHM, OSSL_CORE_HANDLE, OSSL_DISPATCH, OSSL_ITEM, OSSL_PARAM,
};
use crate::ffi::upcalls::{self, Instance};
use crate::ffi::StaticTable;
use crate::hybrid::{Hybrid, HYBRIDS, HYBRID_COUNT, HYBRID_TABLE, OPENSSL_3_HYBRIDS};
use crate::{decoder, encoder, kem, keymgmt};

/// The provider's entry point, called by OpenSSL when it loads the module.
///
/// # Safety
/// Called by OpenSSL's core with its handle, its dispatch table and two
/// out-pointers, as `OSSL_provider_init_fn` specifies.
#[allow(unsafe_code)]
#[no_mangle]
pub unsafe extern "C" fn OSSL_provider_init(
    handle: *const OSSL_CORE_HANDLE,
    input: *const OSSL_DISPATCH,
    out: *mut *const OSSL_DISPATCH,
    provctx: *mut *mut c_void,
) -> c_int {
    // SAFETY: forwarded from the core (this function's contract).
    unsafe { crate::ffi::provider::init::<Mlkem>(handle, input, out, provctx) }
}

/// The mlkem provider.
pub(crate) struct Mlkem;

/// Registers the OIDs with the core, for OpenSSL versions that lack them
/// (before 3.5). Already-known OIDs are accepted as they are.
fn register_oids(instance: Instance) {
    for alg in &ML_KEM {
        // A failure only means the name is taken by an equal definition
        // or the core is older; decoding works by OID either way.
        let _ = upcalls::create_object(instance, alg.oid, alg.oid_short_name, alg.oid_long_name);
    }
}

/// `kind`'s name (`BackendKind::name`) as the C string OpenSSL reads, and
/// the build info naming it (`openssl list -providers -verbose` prints the
/// build info, not our `backend` parameter).
fn backend_names(kind: BackendKind) -> (&'static CStr, &'static CStr) {
    macro_rules! backend {
        ($name:literal) => {{
            const NAMES: (&CStr, &CStr) = (
                names::cstr(concat!($name, "\0").as_bytes()),
                names::cstr(
                    concat!(
                        "mlkem-provider ",
                        env!("CARGO_PKG_VERSION"),
                        " (kem-core, Rust; backend ",
                        $name,
                        ")\0"
                    )
                    .as_bytes(),
                ),
            );
            NAMES
        }};
    }
    match kind.name() {
        "avx2" => backend!("avx2"),
        "avx512-keccak" => backend!("avx512-keccak"),
        "avx512" => backend!("avx512"),
        "neon" => backend!("neon"),
        _ => backend!("portable"),
    }
}

/// TLS constants for the capability (from `tls1.h`).
const TLS1_3_VERSION: c_int = 0x0304;

impl Provider for Mlkem {
    type Ctx = ProvCtx;

    const FUNCTIONS: &'static [OSSL_DISPATCH] = provider_functions!(Mlkem);
    const GETTABLE: &'static [OSSL_PARAM] = &[
        describe_utf8(names::PROV_NAME),
        describe_utf8(names::PROV_VERSION),
        describe_utf8(names::PROV_BUILDINFO),
        describe_int(names::PROV_STATUS),
        describe_utf8(names::PROV_BACKEND),
        END,
    ];
    const REASON_STRINGS: &'static [OSSL_ITEM] = &REASON_STRINGS.0;

    fn init(instance: Instance, core: &Core) -> Result<ProvCtx> {
        let ctx = ProvCtx::new(instance, core)?;
        register_oids(instance);
        Ok(ctx)
    }

    fn get_params(params: &mut ParamsMut<'_>) -> Result<()> {
        if let Some(mut p) = params.find(names::PROV_NAME) {
            p.set_utf8(c"mlkem: ML-KEM (FIPS 203) provider in Rust")?;
        }
        if let Some(mut p) = params.find(names::PROV_VERSION) {
            p.set_utf8(VERSION)?;
        }
        let (backend, buildinfo) = backend_names(kem_core::active_backend());
        if let Some(mut p) = params.find(names::PROV_BUILDINFO) {
            p.set_utf8(buildinfo)?;
        }
        if let Some(mut p) = params.find(names::PROV_STATUS) {
            p.set_int(1)?;
        }
        if let Some(mut p) = params.find(names::PROV_BACKEND) {
            p.set_utf8(backend)?;
        }
        Ok(())
    }

    fn query_operation(ctx: &ProvCtx, operation: u32) -> Option<&'static [OSSL_ALGORITHM]> {
        let every_hybrid = HYBRIDS.iter().all(|h| h.available_on(ctx.core_major));
        match operation {
            sys::OSSL_OP_KEYMGMT if every_hybrid => Some(&KEYMGMT_ALGORITHMS.0),
            sys::OSSL_OP_KEYMGMT => Some(&KEYMGMT_ALGORITHMS_OPENSSL_3.0),
            sys::OSSL_OP_KEM if every_hybrid => Some(&KEM_ALGORITHMS.0),
            sys::OSSL_OP_KEM => Some(&KEM_ALGORITHMS_OPENSSL_3.0),
            sys::OSSL_OP_ENCODER => Some(&ENCODER_ALGORITHMS.0),
            sys::OSSL_OP_DECODER => Some(&DECODER_ALGORITHMS.0),
            _ => None,
        }
    }

    fn capabilities(
        ctx: &ProvCtx,
        capability: &CStr,
        callback: ParamCallback<'_>,
    ) -> Result<c_int> {
        if !capability
            .to_bytes()
            .eq_ignore_ascii_case(names::CAPABILITY_TLS_GROUP.to_bytes())
        {
            return Ok(1);
        }
        let pure = ML_KEM
            .iter()
            .map(|alg| (alg.tls_group, alg.name, alg.security_bits));
        let hybrids = HYBRIDS
            .iter()
            .filter(|h| h.available_on(ctx.core_major))
            .filter_map(|h| {
                let group = h.tls_group?;
                Some((group, h.name, ML_KEM[h.ml_kem].security_bits))
            });
        // Each name of a group (the IANA one first, which libssl's lookups
        // by code point then find) as an entry with the same code point:
        // OpenSSL before 3.5 compares group names case-sensitively, so each
        // spelling existing configurations use (oqsprovider's, crypto-
        // policies') is a group of its own.
        let entries = pure
            .chain(hybrids)
            .flat_map(|(group, algorithm, security_bits)| {
                group
                    .names
                    .iter()
                    .map(move |&name| (name, group.code_point, algorithm, security_bits))
            });
        for (name, id, algorithm, security_bits) in entries {
            let id = c_uint::from(id);
            let security_bits: c_uint = security_bits;
            let (min_tls, max_tls, no_dtls, is_kem): (c_int, c_int, c_int, c_int) =
                (TLS1_3_VERSION, 0, -1, 1);
            let mut list = ParamList::new()
                .utf8(names::TLS_GROUP_NAME, name)
                .utf8(names::TLS_GROUP_NAME_INTERNAL, algorithm)
                .utf8(names::TLS_GROUP_ALG, algorithm)
                .uint(names::TLS_GROUP_ID, &id)
                .uint(names::TLS_GROUP_SECURITY_BITS, &security_bits)
                .int(names::TLS_GROUP_MIN_TLS, &min_tls)
                .int(names::TLS_GROUP_MAX_TLS, &max_tls)
                .int(names::TLS_GROUP_MIN_DTLS, &no_dtls)
                .int(names::TLS_GROUP_MAX_DTLS, &no_dtls)
                .int(names::TLS_GROUP_IS_KEM, &is_kem);
            if callback.call(&mut list) != 1 {
                return Ok(0);
            }
        }
        Ok(1)
    }
}

const VERSION: &CStr = names::cstr(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes());

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

/// A keymgmt or KEM table: the pure ML-KEM algorithms, then the first
/// `N - 4` hybrids, then the terminator.
const fn with_hybrids<const N: usize>(
    pure: [&'static [OSSL_DISPATCH]; 3],
    hybrid: [&'static [OSSL_DISPATCH]; HYBRID_COUNT],
) -> [OSSL_ALGORITHM; N] {
    let pure = per_algorithm(pure);
    let mut out = [ALGORITHM_END; N];
    let mut i = 0;
    while i < 3 {
        out[i] = pure[i];
        i += 1;
    }
    while i < N - 1 {
        out[i] = hybrid_entry(&HYBRID_TABLE[i - 3], hybrid[i - 3]);
        i += 1;
    }
    out
}

/// Every hybrid (OpenSSL 4.0 and later).
const ALL: usize = 3 + HYBRID_COUNT + 1;
/// The hybrids every OpenSSL 3 can run.
const OPENSSL_3: usize = 3 + OPENSSL_3_HYBRIDS + 1;

static KEYMGMT_ALGORITHMS: StaticTable<[OSSL_ALGORITHM; ALL]> = StaticTable(with_hybrids(
    keymgmt::ML_KEM_FUNCTIONS,
    keymgmt::HYBRID_FUNCTIONS,
));
static KEYMGMT_ALGORITHMS_OPENSSL_3: StaticTable<[OSSL_ALGORITHM; OPENSSL_3]> = StaticTable(
    with_hybrids(keymgmt::ML_KEM_FUNCTIONS, keymgmt::HYBRID_FUNCTIONS),
);
static KEM_ALGORITHMS: StaticTable<[OSSL_ALGORITHM; ALL]> = StaticTable(with_hybrids(
    [kem::ML_KEM_FUNCTIONS; 3],
    [kem::HYBRID_FUNCTIONS; HYBRID_COUNT],
));
static KEM_ALGORITHMS_OPENSSL_3: StaticTable<[OSSL_ALGORITHM; OPENSSL_3]> =
    StaticTable(with_hybrids(
        [kem::ML_KEM_FUNCTIONS; 3],
        [kem::HYBRID_FUNCTIONS; HYBRID_COUNT],
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
