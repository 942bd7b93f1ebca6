//! Adapters that run peer ML-KEM implementations the way the bench runs
//! kem-core, so that their timings are comparable, and that give their
//! outputs for fixed inputs, to be cross-checked against kem-core byte for
//! byte.
//!
//! Peers: RustCrypto `ml-kem` 0.3 (feature `peers`, with its `hazmat`
//! `encapsulate_deterministic`); `libcrux-ml-kem` 0.0.11 twice, its
//! `portable` module and its default API, which picks AVX2 or NEON at run
//! time when compiled in (see the feature `peers-libcrux-avx2`); liboqs 0.13
//! through the `oqs` crate (feature `peers-liboqs`; encaps made
//! deterministic through [`liboqs_rng`]); a liboqs installed on this machine
//! (feature `peers-liboqs-system`, through [`liboqs_system_ffi`]; its label
//! carries `OQS_version()`, e.g. `liboqs-system-0.16.0/auto(avx2)`; left out
//! when `peers-liboqs` is on, as both are the same C symbols).
//!
//! What each operation covers (all deterministic, fixed inputs): keygen, the
//! key pair from the 64-byte seed d ‖ z; encaps, parse and check the
//! serialized ek (FIPS 203 section 7.2), then encapsulate with the given m;
//! decaps, parse and check the serialized expanded dk (section 7.3) and the
//! ciphertext, then decapsulate. RustCrypto also gets the cached-key rows
//! (its parsed key objects), as kem-core does; libcrux's packed API has no
//! parsed key to cache.

use std::hint::black_box;

use kem_core::ParameterSet;
use libcrux_ml_kem::{MlKemCiphertext, MlKemKeyPair, MlKemPrivateKey, MlKemPublicKey};

use crate::measure::{Bench, Operation};

/// Fixed inputs of the deterministic algorithms: KeyGen_internal(d, z) and
/// Encaps_internal(ek, m).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inputs {
    /// Key-generation seed d.
    pub d: [u8; 32],
    /// Implicit-rejection seed z.
    pub z: [u8; 32],
    /// Encapsulation randomness m.
    pub m: [u8; 32],
}

impl Inputs {
    /// The 64-byte seed d ‖ z.
    pub fn seed(&self) -> [u8; 64] {
        let mut seed = [0u8; 64];
        seed[..32].copy_from_slice(&self.d);
        seed[32..].copy_from_slice(&self.z);
        seed
    }
}

/// The outputs of one deterministic KeyGen, Encaps and Decaps, serialized in
/// the FIPS 203 formats.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownAnswer {
    /// Encapsulation key ek.
    pub ek: Vec<u8>,
    /// Expanded decapsulation key dk_PKE ‖ ek ‖ H(ek) ‖ z.
    pub dk: Vec<u8>,
    /// Ciphertext from Encaps(ek, m).
    pub ct: Vec<u8>,
    /// Shared secret from Encaps.
    pub ss_encaps: [u8; 32],
    /// Shared secret from Decaps(dk, ct), parsing dk and ct from bytes.
    pub ss_decaps: [u8; 32],
}

impl KnownAnswer {
    /// Names of the fields in which `self` and `other` differ (empty when
    /// they agree).
    pub fn differences(&self, other: &KnownAnswer) -> Vec<&'static str> {
        [
            ("ek", self.ek == other.ek),
            ("dk", self.dk == other.dk),
            ("ciphertext", self.ct == other.ct),
            ("shared secret (encaps)", self.ss_encaps == other.ss_encaps),
            ("shared secret (decaps)", self.ss_decaps == other.ss_decaps),
        ]
        .into_iter()
        .filter_map(|(field, same)| (!same).then_some(field))
        .collect()
    }
}

/// A peer implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Peer {
    /// RustCrypto `ml-kem` 0.3.
    RustCrypto,
    /// `libcrux-ml-kem`, its `portable` module.
    LibcruxPortable,
    /// `libcrux-ml-kem`, its default API with run-time platform selection.
    LibcruxAuto,
    /// liboqs (mlkem-native) through the `oqs` crate, run-time platform
    /// selection.
    #[cfg(feature = "peers-liboqs")]
    Liboqs,
    /// The liboqs installed on this machine (feature
    /// `peers-liboqs-system`), through [`liboqs_system_ffi`].
    #[cfg(liboqs_system)]
    LiboqsSystem,
}

impl Peer {
    /// Every peer, in report order.
    pub const ALL: [Peer;
        3 + cfg!(feature = "peers-liboqs") as usize + cfg!(liboqs_system) as usize] = [
        Peer::RustCrypto,
        Peer::LibcruxPortable,
        Peer::LibcruxAuto,
        #[cfg(feature = "peers-liboqs")]
        Peer::Liboqs,
        #[cfg(liboqs_system)]
        Peer::LiboqsSystem,
    ];

    /// Implementation label for tables, e.g. `"libcrux/auto(avx2)"`.
    pub fn label(self) -> String {
        match self {
            Peer::RustCrypto => "rustcrypto-ml-kem".to_owned(),
            Peer::LibcruxPortable => "libcrux/portable".to_owned(),
            Peer::LibcruxAuto => format!("libcrux/auto({})", libcrux_auto_platform()),
            #[cfg(feature = "peers-liboqs")]
            Peer::Liboqs => format!("liboqs/auto({})", liboqs_platform()),
            #[cfg(liboqs_system)]
            Peer::LiboqsSystem => liboqs_system::label(),
        }
    }

    /// One-line description for the report header.
    pub fn description(self) -> String {
        match self {
            Peer::RustCrypto => "RustCrypto ml-kem 0.3 (hazmat; decaps key in the \
                                 deprecated expanded form, as FIPS 203 stores it)"
                .to_owned(),
            Peer::LibcruxPortable => "libcrux-ml-kem 0.0.11, mlkemNNN::portable".to_owned(),
            Peer::LibcruxAuto => format!(
                "libcrux-ml-kem 0.0.11, default API, run-time selection -> {}",
                libcrux_auto_platform()
            ),
            #[cfg(feature = "peers-liboqs")]
            Peer::Liboqs => format!(
                "liboqs {} (mlkem-native; oqs crate 0.11, ML-KEM only, no OpenSSL), \
                 run-time selection -> {}; keygen via OQS_KEM_keypair_derand, encaps \
                 with m fed through a liboqs RNG callback",
                liboqs_version(),
                liboqs_platform()
            ),
            #[cfg(liboqs_system)]
            Peer::LiboqsSystem => liboqs_system::description(),
        }
    }

    /// The peer's outputs for `inputs`. Panics if the peer rejects its own
    /// keys (which would be a bug in the peer or in this adapter).
    pub fn known_answer<P: ParameterSet>(self, inputs: &Inputs) -> KnownAnswer {
        dispatch!(P, set => match self {
            Peer::RustCrypto => set::rustcrypto_known_answer(inputs),
            Peer::LibcruxPortable => libcrux_known_answer(&set::libcrux_portable(), inputs),
            Peer::LibcruxAuto => libcrux_known_answer(&set::libcrux_auto(), inputs),
            #[cfg(feature = "peers-liboqs")]
            Peer::Liboqs => liboqs_known_answer(&set::liboqs(), inputs),
            #[cfg(liboqs_system)]
            Peer::LiboqsSystem => liboqs_known_answer(&set::liboqs_system(), inputs),
        })
    }

    /// The peer's operations on `inputs`, ready to be timed (see
    /// [`crate::measure::measure_trials`]).
    pub fn benches<P: ParameterSet>(self, inputs: &Inputs) -> Vec<Bench<'static>> {
        let label = self.label();
        dispatch!(P, set => match self {
            Peer::RustCrypto => set::rustcrypto_benches(&label, inputs),
            Peer::LibcruxPortable => libcrux_benches(set::libcrux_portable(), &label, inputs),
            Peer::LibcruxAuto => libcrux_benches(set::libcrux_auto(), &label, inputs),
            #[cfg(feature = "peers-liboqs")]
            Peer::Liboqs => liboqs_benches(set::liboqs(), &label, inputs),
            #[cfg(liboqs_system)]
            Peer::LiboqsSystem => liboqs_benches(set::liboqs_system(), &label, inputs),
        })
    }
}

/// Which code path libcrux's default API takes on this machine: `"avx2"`,
/// `"neon"` or `"portable"`. Mirrors libcrux-platform's checks (AVX2 needs
/// AVX, BMI1, BMI2, FMA and MOVBE too) and libcrux's build-script switches.
pub fn libcrux_auto_platform() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        let compiled = cfg!(feature = "peers-libcrux-avx2")
            || !matches!(
                option_env!("LIBCRUX_DISABLE_SIMD256"),
                Some("1" | "y" | "Y")
            );
        let cpu = std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("avx")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("movbe");
        if compiled && cpu {
            return "avx2";
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        if !matches!(
            option_env!("LIBCRUX_DISABLE_SIMD128"),
            Some("1" | "y" | "Y")
        ) {
            return "neon";
        }
    }
    "portable"
}

/// Which ML-KEM code path liboqs takes on this machine: `"avx2"` (x86_64
/// with AVX2, BMI2 and POPCNT, liboqs's own test), `"neon"` (aarch64) or
/// `"portable"` (mlkem-native's C code). Asks liboqs's CPU detection.
#[cfg(feature = "peers-liboqs")]
pub fn liboqs_platform() -> &'static str {
    use oqs::ffi::common::{OQS_CPU_has_extension, OQS_CPU_EXT};
    oqs::init();
    // SAFETY: liboqs's CPU-feature query, initialized by `oqs::init`.
    let has = |ext| unsafe { OQS_CPU_has_extension(ext) } != 0;
    if cfg!(target_arch = "x86_64")
        && has(OQS_CPU_EXT::OQS_CPU_EXT_AVX2)
        && has(OQS_CPU_EXT::OQS_CPU_EXT_BMI2)
        && has(OQS_CPU_EXT::OQS_CPU_EXT_POPCNT)
    {
        return "avx2";
    }
    if cfg!(target_arch = "aarch64") && has(OQS_CPU_EXT::OQS_CPU_EXT_ARM_NEON) {
        return "neon";
    }
    "portable"
}

/// The version of the liboqs linked in, e.g. `"0.13.0"`.
#[cfg(feature = "peers-liboqs")]
pub fn liboqs_version() -> String {
    // SAFETY: returns a pointer to a static NUL-terminated string.
    let version = unsafe { std::ffi::CStr::from_ptr(oqs::ffi::common::OQS_version()) };
    version.to_string_lossy().into_owned()
}

/// The RNG callback that makes liboqs's encaps deterministic. liboqs 0.13
/// has `OQS_KEM_keypair_derand` but no derandomized encaps; mlkem-native's
/// `crypto_kem_enc` draws its 32-byte m with one `OQS_randombytes` call and
/// then runs `crypto_kem_enc_derand`. The callback installed here (for the
/// whole process, once) hands out the m that [`set_coins`] stored for the
/// calling thread, once; any other draw from liboqs's RNG aborts the
/// process, since nothing else in this program should use it.
///
/// [`set_coins`]: liboqs_rng::set_coins
#[cfg(feature = "peers-liboqs")]
mod liboqs_rng {
    use std::cell::Cell;
    use std::sync::Once;

    thread_local! {
        static COINS: Cell<Option<[u8; 32]>> = const { Cell::new(None) };
    }

    /// Makes the next `OQS_randombytes` call on this thread return `m`.
    #[inline(always)]
    pub(super) fn set_coins(m: [u8; 32]) {
        COINS.with(|coins| coins.set(Some(m)));
    }

    /// Installs the callback in liboqs (idempotent).
    pub(super) fn install() {
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            oqs::init();
            // SAFETY: `coins` has the signature liboqs expects and lives for
            // the whole program.
            unsafe { oqs::ffi::rand::OQS_randombytes_custom_algorithm(Some(coins)) };
        });
    }

    /// `OQS_randombytes` replacement.
    ///
    /// # Safety
    /// `out` must be valid for `len` bytes of writes (liboqs's contract).
    unsafe extern "C" fn coins(out: *mut u8, len: usize) {
        match COINS.with(Cell::take) {
            Some(m) if len == m.len() => {
                // SAFETY: the caller passes a buffer of `len` bytes.
                unsafe { std::ptr::copy_nonoverlapping(m.as_ptr(), out, len) }
            }
            pending => {
                eprintln!(
                    "peers: liboqs drew {len} random bytes with {} coins pending; only \
                     encaps through this adapter may use liboqs's RNG",
                    if pending.is_some() { "32" } else { "no" }
                );
                std::process::abort();
            }
        }
    }
}

/// One liboqs ML-KEM parameter set, as its derandomized keygen, encaps and
/// decaps function pointers (the per-algorithm functions that `OQS_KEM`
/// points to, which dispatch on the CPU themselves), on fixed-size buffers.
#[cfg(feature = "peers-liboqs")]
#[derive(Clone, Copy)]
struct Liboqs<const PK: usize, const SK: usize, const CT: usize> {
    keypair_derand:
        unsafe extern "C" fn(*mut u8, *mut u8, *const u8) -> oqs::ffi::common::OQS_STATUS,
    encaps: unsafe extern "C" fn(*mut u8, *mut u8, *const u8) -> oqs::ffi::common::OQS_STATUS,
    decaps: unsafe extern "C" fn(*mut u8, *const u8, *const u8) -> oqs::ffi::common::OQS_STATUS,
}

/// A liboqs ML-KEM parameter set on fixed-size buffers, either liboqs
/// (the `oqs` crate's or the system's), for the shared known-answer and
/// bench code.
#[cfg(any(feature = "peers-liboqs", liboqs_system))]
trait LiboqsKem<const PK: usize, const SK: usize, const CT: usize>: Copy + 'static {
    /// KeyGen_internal(d, z) from the seed d ‖ z: (ek, dk).
    fn keygen(&self, seed: &[u8; 64]) -> ([u8; PK], [u8; SK]);
    /// Encaps from serialized ek bytes with the given m (liboqs checks ek,
    /// section 7.2).
    fn encaps_from_bytes(&self, ek: &[u8; PK], m: [u8; 32]) -> ([u8; CT], [u8; 32]);
    /// Decaps from serialized dk and ct bytes (liboqs checks dk, section
    /// 7.3 hash check).
    fn decaps_from_bytes(&self, dk: &[u8; SK], ct: &[u8; CT]) -> [u8; 32];
}

#[cfg(feature = "peers-liboqs")]
impl<const PK: usize, const SK: usize, const CT: usize> Liboqs<PK, SK, CT> {
    /// Looks up `algorithm` in liboqs and checks its sizes against kem-core's.
    fn new(algorithm: oqs::kem::Algorithm) -> Self {
        liboqs_rng::install();
        let kem = oqs::kem::Kem::new(algorithm).expect("liboqs lacks the algorithm");
        assert_eq!(
            (
                kem.length_public_key(),
                kem.length_secret_key(),
                kem.length_ciphertext(),
                kem.length_shared_secret(),
                kem.length_keypair_seed(),
            ),
            (PK, SK, CT, 32, 64),
            "liboqs {} sizes",
            algorithm.name()
        );
        // The `oqs` crate keeps its `OQS_KEM` private; take the function
        // pointers from a second one of our own.
        // SAFETY: `to_id` is a NUL-terminated algorithm name; the returned
        // object is read and freed here; the functions it points to are
        // static and outlive it.
        unsafe {
            let raw = oqs::ffi::kem::OQS_KEM_new(algorithm.to_id());
            assert!(!raw.is_null(), "OQS_KEM_new failed");
            let api = Liboqs {
                keypair_derand: (*raw).keypair_derand.expect("keypair_derand"),
                encaps: (*raw).encaps.expect("encaps"),
                decaps: (*raw).decaps.expect("decaps"),
            };
            oqs::ffi::kem::OQS_KEM_free(raw);
            api
        }
    }
}

/// Two output buffers of `A` and `B` bytes, filled by the liboqs call
/// `fill`, which must report success (else a panic with `what`).
#[cfg(any(feature = "peers-liboqs", liboqs_system))]
#[inline(always)]
fn filled<const A: usize, const B: usize>(
    what: &str,
    fill: impl FnOnce(*mut u8, *mut u8) -> bool,
) -> ([u8; A], [u8; B]) {
    let (mut a, mut b) = ([0u8; A], [0u8; B]);
    assert!(fill(a.as_mut_ptr(), b.as_mut_ptr()), "{what}");
    (a, b)
}

#[cfg(feature = "peers-liboqs")]
impl<const PK: usize, const SK: usize, const CT: usize> LiboqsKem<PK, SK, CT>
    for Liboqs<PK, SK, CT>
{
    #[inline(always)]
    fn keygen(&self, seed: &[u8; 64]) -> ([u8; PK], [u8; SK]) {
        use oqs::ffi::common::OQS_STATUS::OQS_SUCCESS;
        // SAFETY: buffers of the sizes checked in `new`.
        filled("liboqs keygen failed", |ek, dk| {
            matches!(
                unsafe { (self.keypair_derand)(ek, dk, seed.as_ptr()) },
                OQS_SUCCESS
            )
        })
    }

    #[inline(always)]
    fn encaps_from_bytes(&self, ek: &[u8; PK], m: [u8; 32]) -> ([u8; CT], [u8; 32]) {
        use oqs::ffi::common::OQS_STATUS::OQS_SUCCESS;
        liboqs_rng::set_coins(m);
        // SAFETY: buffers of the sizes checked in `new`; the RNG callback
        // hands out m.
        filled("liboqs rejected its ek", |ct, ss| {
            matches!(unsafe { (self.encaps)(ct, ss, ek.as_ptr()) }, OQS_SUCCESS)
        })
    }

    #[inline(always)]
    fn decaps_from_bytes(&self, dk: &[u8; SK], ct: &[u8; CT]) -> [u8; 32] {
        use oqs::ffi::common::OQS_STATUS::OQS_SUCCESS;
        // SAFETY: a 32-byte shared-secret buffer; ct and dk of the sizes
        // checked in `new`.
        let (ss, []) = filled("liboqs rejected its dk", |ss, _| {
            matches!(
                unsafe { (self.decaps)(ss, ct.as_ptr(), dk.as_ptr()) },
                OQS_SUCCESS
            )
        });
        ss
    }
}

#[cfg(any(feature = "peers-liboqs", liboqs_system))]
fn liboqs_known_answer<const PK: usize, const SK: usize, const CT: usize>(
    api: &impl LiboqsKem<PK, SK, CT>,
    inputs: &Inputs,
) -> KnownAnswer {
    let (ek, dk) = api.keygen(&inputs.seed());
    let (ct, ss_encaps) = api.encaps_from_bytes(&ek, inputs.m);
    let ss_decaps = api.decaps_from_bytes(&dk, &ct);
    KnownAnswer {
        ek: ek.to_vec(),
        dk: dk.to_vec(),
        ct: ct.to_vec(),
        ss_encaps,
        ss_decaps,
    }
}

#[cfg(any(feature = "peers-liboqs", liboqs_system))]
fn liboqs_benches<const PK: usize, const SK: usize, const CT: usize>(
    api: impl LiboqsKem<PK, SK, CT>,
    label: &str,
    inputs: &Inputs,
) -> Vec<Bench<'static>> {
    let seed = inputs.seed();
    let m = inputs.m;
    let (ek, dk) = api.keygen(&seed);
    let ek: Box<[u8; PK]> = Box::new(ek);
    let dk: Box<[u8; SK]> = Box::new(dk);
    let (ct, _) = api.encaps_from_bytes(&ek, m);
    let ct: Box<[u8; CT]> = Box::new(ct);
    vec![
        Bench::new(label, Operation::Keygen, move || {
            api.keygen(black_box(&seed))
        }),
        Bench::new(label, Operation::Encaps, move || {
            api.encaps_from_bytes(black_box(&ek), black_box(m))
        }),
        Bench::new(label, Operation::Decaps, move || {
            api.decaps_from_bytes(black_box(&dk), black_box(&ct))
        }),
    ]
}

/// Hand-written declarations of the liboqs functions that the
/// `peers-liboqs-system` peer calls (from liboqs's `oqs/common.h`,
/// `oqs/kem.h` and `oqs/kem_ml_kem.h`). `build.rs` finds the library and
/// links it, static or shared.
#[cfg(liboqs_system)]
mod liboqs_system_ffi {
    use std::ffi::{c_char, c_int, CStr};

    /// `OQS_STATUS`, a C enum; `OQS_SUCCESS` is 0.
    pub(super) type OqsStatus = c_int;
    pub(super) const OQS_SUCCESS: OqsStatus = 0;

    /// The leading fields of `struct OQS_KEM` (`oqs/kem.h`; the same in
    /// every liboqs that has derandomized encaps). Only read, through the
    /// pointer that `OQS_KEM_new` returns; the function pointers after them
    /// are not declared (the per-set functions are called directly).
    #[repr(C)]
    pub(super) struct OqsKemHead {
        pub(super) method_name: *const c_char,
        pub(super) alg_version: *const c_char,
        pub(super) claimed_nist_level: u8,
        pub(super) ind_cca: bool,
        pub(super) length_public_key: usize,
        pub(super) length_secret_key: usize,
        pub(super) length_ciphertext: usize,
        pub(super) length_shared_secret: usize,
        pub(super) length_keypair_seed: usize,
        pub(super) length_encaps_seed: usize,
    }

    /// `OQS_KEM_ml_kem_NNN_keypair_derand(public_key, secret_key, seed)`.
    pub(super) type KeypairDerand = unsafe extern "C" fn(*mut u8, *mut u8, *const u8) -> OqsStatus;
    /// `OQS_KEM_ml_kem_NNN_encaps_derand(ciphertext, shared_secret,
    /// public_key, seed)`.
    pub(super) type EncapsDerand =
        unsafe extern "C" fn(*mut u8, *mut u8, *const u8, *const u8) -> OqsStatus;
    /// `OQS_KEM_ml_kem_NNN_decaps(shared_secret, ciphertext, secret_key)`.
    pub(super) type Decaps = unsafe extern "C" fn(*mut u8, *const u8, *const u8) -> OqsStatus;

    unsafe extern "C" {
        pub(super) fn OQS_init();
        pub(super) fn OQS_version() -> *const c_char;
        /// `ext` is an `OQS_CPU_EXT` constant (values from `oqs/common.h`,
        /// passed on by `build.rs`).
        pub(super) fn OQS_CPU_has_extension(ext: c_int) -> c_int;
        pub(super) fn OQS_KEM_new(method_name: *const c_char) -> *mut OqsKemHead;
        pub(super) fn OQS_KEM_free(kem: *mut OqsKemHead);
    }

    /// One parameter set: its liboqs name and functions.
    pub(super) struct Functions {
        pub(super) name: &'static CStr,
        pub(super) keypair_derand: KeypairDerand,
        pub(super) encaps_derand: EncapsDerand,
        pub(super) decaps: Decaps,
    }

    /// Declares one parameter set's three functions and `$set`, the
    /// [`Functions`] that names them.
    macro_rules! parameter_set {
        ($set:ident, $name:literal, $keypair:ident, $encaps:ident, $decaps:ident) => {
            unsafe extern "C" {
                fn $keypair(pk: *mut u8, sk: *mut u8, seed: *const u8) -> OqsStatus;
                fn $encaps(ct: *mut u8, ss: *mut u8, pk: *const u8, seed: *const u8) -> OqsStatus;
                fn $decaps(ss: *mut u8, ct: *const u8, sk: *const u8) -> OqsStatus;
            }
            pub(super) const $set: Functions = Functions {
                name: $name,
                keypair_derand: $keypair,
                encaps_derand: $encaps,
                decaps: $decaps,
            };
        };
    }
    parameter_set!(
        ML_KEM_512,
        c"ML-KEM-512",
        OQS_KEM_ml_kem_512_keypair_derand,
        OQS_KEM_ml_kem_512_encaps_derand,
        OQS_KEM_ml_kem_512_decaps
    );
    parameter_set!(
        ML_KEM_768,
        c"ML-KEM-768",
        OQS_KEM_ml_kem_768_keypair_derand,
        OQS_KEM_ml_kem_768_encaps_derand,
        OQS_KEM_ml_kem_768_decaps
    );
    parameter_set!(
        ML_KEM_1024,
        c"ML-KEM-1024",
        OQS_KEM_ml_kem_1024_keypair_derand,
        OQS_KEM_ml_kem_1024_encaps_derand,
        OQS_KEM_ml_kem_1024_decaps
    );
}

/// The `peers-liboqs-system` peer on top of [`liboqs_system_ffi`]: what the
/// library is, and its parameter sets on fixed-size buffers.
#[cfg(liboqs_system)]
mod liboqs_system {
    use std::ffi::{c_int, CStr};
    use std::sync::Once;

    use super::liboqs_system_ffi::{self as ffi, OQS_SUCCESS};
    use super::{filled, LiboqsKem};

    /// `OQS_init` (CPU detection), once.
    fn init() {
        static INIT: Once = Once::new();
        // SAFETY: liboqs's initialization; no arguments, idempotent.
        INIT.call_once(|| unsafe { ffi::OQS_init() });
    }

    /// `OQS_version()`, e.g. `"0.16.0"`.
    pub(super) fn version() -> String {
        init();
        // SAFETY: returns a pointer to a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr(ffi::OQS_version()) };
        version.to_string_lossy().into_owned()
    }

    /// Whether liboqs reports the CPU extension whose `OQS_CPU_EXT`
    /// value `build.rs` passed on, or `fallback()` if it found none.
    fn has(value: Option<&str>, fallback: fn() -> bool) -> bool {
        match value.and_then(|v| v.parse::<c_int>().ok()) {
            Some(ext) => {
                init();
                // SAFETY: liboqs's CPU-feature query, initialized above, with
                // a constant from this liboqs's own header.
                unsafe { ffi::OQS_CPU_has_extension(ext) != 0 }
            }
            None => fallback(),
        }
    }

    /// Which ML-KEM code path liboqs takes on this machine: `"avx2"`,
    /// `"neon"` or `"portable"`, by liboqs's own rule (its per-set
    /// functions: in a portable `OQS_DIST_BUILD`, the x86_64 code when the
    /// CPU has AVX2, BMI2 and POPCNT, the aarch64 code when it has NEON;
    /// otherwise whatever native code the build compiled in).
    pub(super) fn platform() -> &'static str {
        let dist = env!("TEST_TOOLS_LIBOQS_SYSTEM_DIST") == "1";
        match env!("TEST_TOOLS_LIBOQS_SYSTEM_NATIVE") {
            "x86_64"
                if !dist
                    || (has(option_env!("TEST_TOOLS_LIBOQS_SYSTEM_CPU_EXT_AVX2"), || {
                        x86("avx2")
                    }) && has(
                        option_env!("TEST_TOOLS_LIBOQS_SYSTEM_CPU_EXT_BMI2"),
                        || x86("bmi2"),
                    ) && has(
                        option_env!("TEST_TOOLS_LIBOQS_SYSTEM_CPU_EXT_POPCNT"),
                        || x86("popcnt"),
                    )) =>
            {
                "avx2"
            }
            "aarch64"
                if !dist
                    || has(
                        option_env!("TEST_TOOLS_LIBOQS_SYSTEM_CPU_EXT_ARM_NEON"),
                        || cfg!(target_arch = "aarch64"),
                    ) =>
            {
                "neon"
            }
            _ => "portable",
        }
    }

    /// Rust's detection of an x86_64 feature (the fallback of [`has`]).
    fn x86(feature: &str) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match feature {
                "avx2" => std::arch::is_x86_feature_detected!("avx2"),
                "bmi2" => std::arch::is_x86_feature_detected!("bmi2"),
                "popcnt" => std::arch::is_x86_feature_detected!("popcnt"),
                _ => false,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = feature;
            false
        }
    }

    /// The table label, e.g. `"liboqs-system-0.16.0/auto(avx2)"` (`auto`:
    /// picked at run time; `fixed`: the only code the build carries).
    pub(super) fn label() -> String {
        let how = if env!("TEST_TOOLS_LIBOQS_SYSTEM_DIST") == "1" {
            "auto"
        } else {
            "fixed"
        };
        format!("liboqs-system-{}/{how}({})", version(), platform())
    }

    /// One-line description for the report header.
    pub(super) fn description() -> String {
        let version = version();
        let headers = env!("TEST_TOOLS_LIBOQS_SYSTEM_HEADER_VERSION");
        let mismatch = if headers != version {
            format!(" (but its headers say {headers:?})")
        } else {
            String::new()
        };
        let selection = if env!("TEST_TOOLS_LIBOQS_SYSTEM_DIST") == "1" {
            "portable build, run-time selection"
        } else {
            "non-portable build, fixed code path"
        };
        let sha3 = if env!("TEST_TOOLS_LIBOQS_SYSTEM_SHA3_OPENSSL") == "1" {
            "OpenSSL's"
        } else {
            "liboqs's own"
        };
        format!(
            "liboqs {version}{mismatch} installed on this machine, {} library in {} (found \
             through {}; built for {}), mlkem-native, {selection} -> {}, SHA-3 {sha3}; \
             OQS_KEM_ml_kem_NNN_keypair_derand / _encaps_derand / _decaps",
            env!("TEST_TOOLS_LIBOQS_SYSTEM_LINK"),
            env!("TEST_TOOLS_LIBOQS_SYSTEM_LIBDIR"),
            env!("TEST_TOOLS_LIBOQS_SYSTEM_SOURCE"),
            env!("TEST_TOOLS_LIBOQS_SYSTEM_BUILD_TARGET"),
            platform(),
        )
    }

    /// One parameter set of the system's liboqs, as its derandomized
    /// keygen, encaps and decaps functions (which dispatch on the CPU
    /// themselves), on fixed-size buffers.
    #[derive(Clone, Copy)]
    pub(super) struct Kem<const PK: usize, const SK: usize, const CT: usize> {
        keypair_derand: ffi::KeypairDerand,
        encaps_derand: ffi::EncapsDerand,
        decaps: ffi::Decaps,
    }

    impl<const PK: usize, const SK: usize, const CT: usize> Kem<PK, SK, CT> {
        /// Checks that liboqs has `set` enabled, with kem-core's sizes.
        pub(super) fn new(set: &ffi::Functions) -> Self {
            init();
            // SAFETY: `set.name` is NUL-terminated; the returned object (or
            // null, for an algorithm liboqs lacks) is only read here, through
            // its leading fields, and freed.
            let (name, sizes) = unsafe {
                let raw = ffi::OQS_KEM_new(set.name.as_ptr());
                assert!(
                    !raw.is_null(),
                    "the system's liboqs has no {} (OQS_KEM_new failed)",
                    set.name.to_string_lossy()
                );
                let head = &*raw;
                let name = CStr::from_ptr(head.method_name).to_owned();
                let sizes = (
                    head.length_public_key,
                    head.length_secret_key,
                    head.length_ciphertext,
                    head.length_shared_secret,
                    head.length_keypair_seed,
                    head.length_encaps_seed,
                );
                ffi::OQS_KEM_free(raw);
                (name, sizes)
            };
            assert_eq!(name.as_c_str(), set.name, "liboqs's OQS_KEM layout");
            assert_eq!(
                sizes,
                (PK, SK, CT, 32, 64, 32),
                "liboqs {} sizes (ek, dk, ct, ss, keypair seed, encaps seed)",
                set.name.to_string_lossy()
            );
            Kem {
                keypair_derand: set.keypair_derand,
                encaps_derand: set.encaps_derand,
                decaps: set.decaps,
            }
        }
    }

    impl<const PK: usize, const SK: usize, const CT: usize> LiboqsKem<PK, SK, CT> for Kem<PK, SK, CT> {
        #[inline(always)]
        fn keygen(&self, seed: &[u8; 64]) -> ([u8; PK], [u8; SK]) {
            // SAFETY: buffers of the sizes checked in `new`.
            filled("liboqs keygen failed", |ek, dk| {
                OQS_SUCCESS == unsafe { (self.keypair_derand)(ek, dk, seed.as_ptr()) }
            })
        }

        #[inline(always)]
        fn encaps_from_bytes(&self, ek: &[u8; PK], m: [u8; 32]) -> ([u8; CT], [u8; 32]) {
            // SAFETY: buffers of the sizes checked in `new` (m: the 32-byte
            // encaps seed).
            filled("liboqs rejected its ek", |ct, ss| {
                OQS_SUCCESS == unsafe { (self.encaps_derand)(ct, ss, ek.as_ptr(), m.as_ptr()) }
            })
        }

        #[inline(always)]
        fn decaps_from_bytes(&self, dk: &[u8; SK], ct: &[u8; CT]) -> [u8; 32] {
            // SAFETY: a 32-byte shared-secret buffer; ct and dk of the sizes
            // checked in `new`.
            let (ss, []) = filled("liboqs rejected its dk", |ss, _| {
                OQS_SUCCESS == unsafe { (self.decaps)(ss, ct.as_ptr(), dk.as_ptr()) }
            });
            ss
        }
    }
}

/// Runs `$body` with `$set` naming the per-parameter-set module for `$p`.
macro_rules! dispatch {
    ($p:ty, $set:ident => $body:expr) => {
        match <$p as ParameterSet>::K {
            2 => {
                use k512 as $set;
                $body
            }
            3 => {
                use k768 as $set;
                $body
            }
            4 => {
                use k1024 as $set;
                $body
            }
            k => unreachable!("no ML-KEM parameter set with k = {k}"),
        }
    };
}
use dispatch;

/// One libcrux parameter set and code path, as pointers to its functions on
/// libcrux's packed (byte-array) types. (An indirect call costs a few
/// cycles, next to tens of thousands per operation.)
#[derive(Clone, Copy)]
struct Libcrux<const PK: usize, const SK: usize, const CT: usize> {
    keygen: fn([u8; 64]) -> MlKemKeyPair<SK, PK>,
    encaps: fn(&MlKemPublicKey<PK>, [u8; 32]) -> (MlKemCiphertext<CT>, [u8; 32]),
    decaps: fn(&MlKemPrivateKey<SK>, &MlKemCiphertext<CT>) -> [u8; 32],
    validate_public: fn(&MlKemPublicKey<PK>) -> bool,
    validate_private: fn(&MlKemPrivateKey<SK>, &MlKemCiphertext<CT>) -> bool,
}

impl<const PK: usize, const SK: usize, const CT: usize> Libcrux<PK, SK, CT> {
    /// Encaps from serialized ek bytes: wrap, validate (section 7.2),
    /// encapsulate.
    #[inline(always)]
    fn encaps_from_bytes(&self, ek: &[u8; PK], m: [u8; 32]) -> (MlKemCiphertext<CT>, [u8; 32]) {
        let pk = MlKemPublicKey::from(ek);
        assert!((self.validate_public)(&pk), "libcrux rejected its ek");
        (self.encaps)(&pk, m)
    }

    /// Decaps from serialized dk and ct bytes: wrap, validate (section 7.3
    /// hash check), decapsulate.
    #[inline(always)]
    fn decaps_from_bytes(&self, dk: &[u8; SK], ct: &[u8; CT]) -> [u8; 32] {
        let sk = MlKemPrivateKey::from(dk);
        let ct = MlKemCiphertext::from(ct);
        assert!((self.validate_private)(&sk, &ct), "libcrux rejected its dk");
        (self.decaps)(&sk, &ct)
    }
}

fn libcrux_known_answer<const PK: usize, const SK: usize, const CT: usize>(
    api: &Libcrux<PK, SK, CT>,
    inputs: &Inputs,
) -> KnownAnswer {
    let pair = (api.keygen)(inputs.seed());
    let (ct, ss_encaps) = api.encaps_from_bytes(pair.pk(), inputs.m);
    let ss_decaps = api.decaps_from_bytes(pair.sk(), ct.as_slice());
    KnownAnswer {
        ek: pair.pk().to_vec(),
        dk: pair.sk().to_vec(),
        ct: ct.as_slice().to_vec(),
        ss_encaps,
        ss_decaps,
    }
}

fn libcrux_benches<const PK: usize, const SK: usize, const CT: usize>(
    api: Libcrux<PK, SK, CT>,
    label: &str,
    inputs: &Inputs,
) -> Vec<Bench<'static>> {
    let seed = inputs.seed();
    let m = inputs.m;
    let pair = (api.keygen)(seed);
    let ek: Box<[u8; PK]> = Box::new(*pair.pk());
    let dk: Box<[u8; SK]> = Box::new(*pair.sk());
    let (ct, _) = api.encaps_from_bytes(&ek, m);
    let ct: Box<[u8; CT]> = Box::new(*ct.as_slice());
    vec![
        Bench::new(label, Operation::Keygen, move || {
            (api.keygen)(black_box(seed))
        }),
        Bench::new(label, Operation::Encaps, move || {
            api.encaps_from_bytes(black_box(&ek), black_box(m))
        }),
        Bench::new(label, Operation::Decaps, move || {
            api.decaps_from_bytes(black_box(&dk), black_box(&ct))
        }),
    ]
}

/// Builds the per-parameter-set module: RustCrypto adapters, the two
/// libcrux code paths, (feature `peers-liboqs`) liboqs and (feature
/// `peers-liboqs-system`) the system's liboqs.
macro_rules! peer_set {
    ($module:ident, $ours:ty, $rustcrypto:ty, $libcrux:ident, $liboqs:ident, $liboqs_system:ident) => {
        mod $module {
            use std::hint::black_box;

            use libcrux_ml_kem::$libcrux as lc;
            #[allow(deprecated)]
            use ml_kem::ExpandedKeyEncoding as _;
            use ml_kem::{Decapsulate as _, KeyExport as _};

            use kem_core::ParameterSet;

            use super::{Inputs, KnownAnswer, Libcrux};
            use crate::measure::{Bench, Operation};

            type Ek = ml_kem::EncapsulationKey<$rustcrypto>;
            type Dk = ml_kem::DecapsulationKey<$rustcrypto>;
            type EkBytes = ml_kem::Key<Ek>;
            type DkBytes = ml_kem::ExpandedDecapsulationKey<$rustcrypto>;
            type CtBytes = ml_kem::Ciphertext<$rustcrypto>;

            /// Encaps from serialized ek bytes: copy into RustCrypto's array,
            /// parse with the section 7.2 check, encapsulate.
            #[inline(always)]
            fn rc_encaps(ek: &[u8], m: &ml_kem::B32) -> (CtBytes, ml_kem::SharedKey) {
                let bytes = EkBytes::try_from(ek).expect("ek length");
                let ek = Ek::new(&bytes).expect("RustCrypto rejected its ek");
                ek.encapsulate_deterministic(m)
            }

            /// Decaps from serialized (expanded) dk and ct bytes: copy into
            /// RustCrypto's arrays, parse with the section 7.2 and 7.3
            /// checks, decapsulate.
            #[inline(always)]
            fn rc_decaps(dk: &[u8], ct: &[u8]) -> ml_kem::SharedKey {
                let bytes = DkBytes::try_from(dk).expect("dk length");
                let ct = CtBytes::try_from(ct).expect("ct length");
                #[allow(deprecated)]
                let dk = Dk::from_expanded(&bytes).expect("RustCrypto rejected its dk");
                dk.decapsulate(&ct)
            }

            fn rc_keygen(seed: [u8; 64]) -> Dk {
                Dk::from_seed(ml_kem::Seed::from(seed))
            }

            pub(super) fn rustcrypto_known_answer(inputs: &Inputs) -> KnownAnswer {
                let dk = rc_keygen(inputs.seed());
                let ek = dk.encapsulation_key().to_bytes().to_vec();
                #[allow(deprecated)]
                let dk = dk.to_expanded_bytes().to_vec();
                let (ct, ss_encaps) = rc_encaps(&ek, &ml_kem::B32::from(inputs.m));
                let ss_decaps = rc_decaps(&dk, &ct);
                KnownAnswer {
                    ek,
                    dk,
                    ct: ct.to_vec(),
                    ss_encaps: ss_encaps.into(),
                    ss_decaps: ss_decaps.into(),
                }
            }

            pub(super) fn rustcrypto_benches(label: &str, inputs: &Inputs) -> Vec<Bench<'static>> {
                let seed = inputs.seed();
                let m = ml_kem::B32::from(inputs.m);
                let dk = rc_keygen(seed);
                let ek = dk.encapsulation_key().clone();
                let ek_bytes = ek.to_bytes().to_vec();
                #[allow(deprecated)]
                let dk_bytes = dk.to_expanded_bytes().to_vec();
                let (ct, _) = ek.encapsulate_deterministic(&m);
                let ct_bytes = ct.to_vec();
                vec![
                    Bench::new(label, Operation::Keygen, move || rc_keygen(black_box(seed))),
                    Bench::new(label, Operation::Encaps, move || {
                        rc_encaps(black_box(&ek_bytes), black_box(&m))
                    }),
                    Bench::new(label, Operation::Decaps, move || {
                        rc_decaps(black_box(&dk_bytes), black_box(&ct_bytes))
                    }),
                    Bench::new(label, Operation::EncapsCached, move || {
                        black_box(&ek).encapsulate_deterministic(black_box(&m))
                    }),
                    Bench::new(label, Operation::DecapsCached, move || {
                        black_box(&dk).decapsulate(black_box(&ct))
                    }),
                ]
            }

            type Lc = Libcrux<
                { <$ours as ParameterSet>::EK_LEN },
                { <$ours as ParameterSet>::DK_LEN },
                { <$ours as ParameterSet>::CT_LEN },
            >;

            /// libcrux's explicit portable code path.
            pub(super) fn libcrux_portable() -> Lc {
                Libcrux {
                    keygen: lc::portable::generate_key_pair,
                    encaps: lc::portable::encapsulate,
                    decaps: lc::portable::decapsulate,
                    validate_public: lc::portable::validate_public_key,
                    validate_private: lc::portable::validate_private_key,
                }
            }

            /// libcrux's default API (run-time platform selection).
            pub(super) fn libcrux_auto() -> Lc {
                Libcrux {
                    keygen: lc::generate_key_pair,
                    encaps: lc::encapsulate,
                    decaps: lc::decapsulate,
                    validate_public: lc::validate_public_key,
                    validate_private: lc::validate_private_key,
                }
            }

            /// liboqs (mlkem-native), its run-time platform selection.
            #[cfg(feature = "peers-liboqs")]
            pub(super) fn liboqs() -> super::Liboqs<
                { <$ours as ParameterSet>::EK_LEN },
                { <$ours as ParameterSet>::DK_LEN },
                { <$ours as ParameterSet>::CT_LEN },
            > {
                super::Liboqs::new(oqs::kem::Algorithm::$liboqs)
            }

            /// The system's liboqs (mlkem-native), its run-time platform
            /// selection.
            #[cfg(liboqs_system)]
            pub(super) fn liboqs_system() -> super::liboqs_system::Kem<
                { <$ours as ParameterSet>::EK_LEN },
                { <$ours as ParameterSet>::DK_LEN },
                { <$ours as ParameterSet>::CT_LEN },
            > {
                super::liboqs_system::Kem::new(&super::liboqs_system_ffi::$liboqs_system)
            }
        }
    };
}

peer_set!(
    k512,
    kem_core::MlKem512,
    ml_kem::MlKem512,
    mlkem512,
    MlKem512,
    ML_KEM_512
);
peer_set!(
    k768,
    kem_core::MlKem768,
    ml_kem::MlKem768,
    mlkem768,
    MlKem768,
    ML_KEM_768
);
peer_set!(
    k1024,
    kem_core::MlKem1024,
    ml_kem::MlKem1024,
    mlkem1024,
    MlKem1024,
    ML_KEM_1024
);

#[cfg(all(test, liboqs_system))]
mod liboqs_system_tests {
    use super::{Inputs, Peer};

    /// The system's liboqs gives RustCrypto's bytes on every set, and its
    /// label names its version.
    #[test]
    fn liboqs_system_matches_rustcrypto() {
        let inputs = Inputs {
            d: [1; 32],
            z: [2; 32],
            m: [3; 32],
        };
        fn check<P: kem_core::ParameterSet>(inputs: &Inputs) {
            let ours = Peer::LiboqsSystem.known_answer::<P>(inputs);
            let theirs = Peer::RustCrypto.known_answer::<P>(inputs);
            assert_eq!(ours.differences(&theirs), Vec::<&str>::new(), "{}", P::NAME);
            assert_eq!(ours.ss_encaps, ours.ss_decaps, "{}", P::NAME);
        }
        check::<kem_core::MlKem512>(&inputs);
        check::<kem_core::MlKem768>(&inputs);
        check::<kem_core::MlKem1024>(&inputs);
        let label = Peer::LiboqsSystem.label();
        assert!(label.starts_with("liboqs-system-"), "{label}");
        assert!(label.contains(&super::liboqs_system::version()), "{label}");
    }
}
