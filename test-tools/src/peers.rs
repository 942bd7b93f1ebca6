//! Peer ML-KEM implementations, run as the bench runs kem-core (so their
//! timings compare) and cross-checked against it byte for byte: RustCrypto
//! `ml-kem` 0.3 (hazmat), `libcrux-ml-kem` 0.0.11 (`portable` and its
//! default API, see `peers-libcrux-avx2`), and liboqs (see [`liboqs`]).
//! Keygen is from the seed d ‖ z; encaps parses and checks the serialized ek
//! (FIPS 203 section 7.2), decaps the expanded dk (section 7.3) and the
//! ciphertext. Only RustCrypto has parsed keys for the cached-key rows.

use std::hint::black_box;

use kem_core::ParameterSet;
use libcrux_ml_kem::{MlKemCiphertext, MlKemPrivateKey, MlKemPublicKey};
#[allow(deprecated)]
use ml_kem::ExpandedKeyEncoding as _;
use ml_kem::{Decapsulate as _, KeyExport as _};

use crate::kem_core_ops::{seed, KnownAnswer, M};
use crate::measure::{Bench, Operation};

/// A peer implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Peer {
    /// RustCrypto `ml-kem` 0.3.
    RustCrypto,
    /// `libcrux-ml-kem`, its `portable` module.
    LibcruxPortable,
    /// `libcrux-ml-kem`, its default API with run-time platform selection.
    LibcruxAuto,
    /// liboqs (mlkem-native): the `oqs` crate's or the one installed here.
    #[cfg(any(feature = "peers-liboqs", liboqs_system))]
    Liboqs,
}

impl Peer {
    /// Every peer, in report order.
    pub const ALL: [Peer; 3 + cfg!(any(feature = "peers-liboqs", liboqs_system)) as usize] = [
        Peer::RustCrypto,
        Peer::LibcruxPortable,
        Peer::LibcruxAuto,
        #[cfg(any(feature = "peers-liboqs", liboqs_system))]
        Peer::Liboqs,
    ];

    /// Implementation label for tables, e.g. `"libcrux/auto(avx2)"`.
    pub fn label(self) -> String {
        match self {
            Peer::RustCrypto => "rustcrypto-ml-kem".to_owned(),
            Peer::LibcruxPortable => "libcrux/portable".to_owned(),
            Peer::LibcruxAuto => format!("libcrux/auto({})", libcrux_auto_platform()),
            #[cfg(any(feature = "peers-liboqs", liboqs_system))]
            Peer::Liboqs => liboqs::label(),
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
            #[cfg(any(feature = "peers-liboqs", liboqs_system))]
            Peer::Liboqs => liboqs::description(),
        }
    }

    /// The peer's outputs for kem-core's fixed inputs (panics if it rejects
    /// its own keys).
    pub fn known_answer<P: ParameterSet>(self) -> KnownAnswer {
        adapter(self, P::K, "").0
    }

    /// The peer's operations on kem-core's fixed inputs, ready to be timed.
    pub fn benches<P: ParameterSet>(self) -> Vec<Bench<'static>> {
        adapter(self, P::K, &self.label()).1
    }
}

/// Rust's run-time detection of an x86_64 feature (false elsewhere).
macro_rules! x86 {
    ($feature:tt) => {{
        #[cfg(target_arch = "x86_64")]
        let detected = std::arch::is_x86_feature_detected!($feature);
        #[cfg(not(target_arch = "x86_64"))]
        let detected = false;
        detected
    }};
}

/// The code path of libcrux's default API here, by libcrux-platform's checks
/// (AVX2 needs AVX, BMI1, BMI2, FMA and MOVBE) and its build switches.
fn libcrux_auto_platform() -> &'static str {
    let disabled = |switch: Option<&str>| matches!(switch, Some("1" | "y" | "Y"));
    let simd256 = !disabled(option_env!("LIBCRUX_DISABLE_SIMD256"));
    if cfg!(target_arch = "x86_64")
        && (cfg!(feature = "peers-libcrux-avx2") || simd256)
        && x86!("avx2")
        && x86!("avx")
        && x86!("bmi1")
        && x86!("bmi2")
        && x86!("fma")
        && x86!("movbe")
    {
        "avx2"
    } else if cfg!(target_arch = "aarch64") && !disabled(option_env!("LIBCRUX_DISABLE_SIMD128")) {
        "neon"
    } else {
        "portable"
    }
}

/// A serialized key or ciphertext.
trait Bytes: AsRef<[u8]> + 'static {}
impl<T: AsRef<[u8]> + 'static> Bytes for T {}

/// One peer on one parameter set, as `keygen` (whose result the keygen row
/// times), `export` (its ek and expanded dk bytes), and encaps and decaps
/// from bytes: its outputs for the fixed inputs, and its benches under
/// `label`.
fn run<K: 'static, Ek: Bytes, Dk: Bytes, Ct: Bytes>(
    label: &str,
    keygen: impl Fn([u8; 64]) -> K + 'static,
    export: impl FnOnce(&K) -> (Ek, Dk),
    encaps: impl Fn(&Ek, [u8; 32]) -> (Ct, [u8; 32]) + 'static,
    decaps: impl Fn(&Dk, &Ct) -> [u8; 32] + 'static,
) -> (KnownAnswer, Vec<Bench<'static>>) {
    let (seed, m) = (seed(), M);
    let (ek, dk) = export(&keygen(seed));
    let (ct, ss_encaps) = encaps(&ek, m);
    let answer = KnownAnswer {
        ek: ek.as_ref().to_vec(),
        dk: dk.as_ref().to_vec(),
        ct: ct.as_ref().to_vec(),
        ss_encaps,
        ss_decaps: decaps(&dk, &ct),
    };
    let benches = vec![
        Bench::new(label, Operation::Keygen, move || keygen(black_box(seed))),
        Bench::new(label, Operation::Encaps, move || {
            encaps(black_box(&ek), black_box(m))
        }),
        Bench::new(label, Operation::Decaps, move || {
            decaps(black_box(&dk), black_box(&ct))
        }),
    ];
    (answer, benches)
}

/// [`run`] on a libcrux module, e.g. `mlkem768::portable`, through its
/// packed (byte-array) types.
macro_rules! libcrux {
    ($label:expr, $($module:ident)::+) => {{
        use libcrux_ml_kem::$($module)::+ as lc;
        run(
            $label,
            lc::generate_key_pair,
            |pair| (*pair.pk(), *pair.sk()),
            |ek, m| {
                let pk = MlKemPublicKey::from(ek);
                assert!(lc::validate_public_key(&pk), "libcrux rejected its ek");
                lc::encapsulate(&pk, m)
            },
            |dk, ct| {
                let (sk, ct) = (MlKemPrivateKey::from(dk), MlKemCiphertext::from(ct.as_slice()));
                assert!(lc::validate_private_key(&sk, &ct), "libcrux rejected its dk");
                lc::decapsulate(&sk, &ct)
            },
        )
    }};
}

/// [`run`] on liboqs's ML-KEM-`$n` (`OQS_KEM_ml_kem_$n_*`, which pick their
/// code by the CPU themselves), with the sizes of `$ours`.
#[cfg(any(feature = "peers-liboqs", liboqs_system))]
macro_rules! liboqs {
    ($label:expr, $n:literal, $ours:ty) => {{
        use liboqs::{filled, Status};
        const EK: usize = <$ours as ParameterSet>::EK_LEN;
        const DK: usize = <$ours as ParameterSet>::DK_LEN;
        const CT: usize = <$ours as ParameterSet>::CT_LEN;
        unsafe extern "C" {
            #[link_name = concat!("OQS_KEM_ml_kem_", $n, "_keypair_derand")]
            fn keypair_derand(ek: *mut u8, dk: *mut u8, seed: *const u8) -> Status;
            #[cfg(feature = "peers-liboqs")]
            #[link_name = concat!("OQS_KEM_ml_kem_", $n, "_encaps")]
            fn encaps(ct: *mut u8, ss: *mut u8, ek: *const u8) -> Status;
            #[cfg(liboqs_system)]
            #[link_name = concat!("OQS_KEM_ml_kem_", $n, "_encaps_derand")]
            fn encaps(ct: *mut u8, ss: *mut u8, ek: *const u8, m: *const u8) -> Status;
            #[link_name = concat!("OQS_KEM_ml_kem_", $n, "_decaps")]
            fn decaps(ss: *mut u8, ct: *const u8, dk: *const u8) -> Status;
        }
        liboqs::init();
        // Each call gets buffers of the set's sizes, kem-core's (the same in
        // liboqs: FIPS 203's), a 64-byte seed and a 32-byte m.
        run(
            $label,
            |seed| {
                // SAFETY: `filled` passes EK- and DK-byte buffers; the seed
                // is 64 bytes, as keypair_derand reads.
                filled::<EK, DK>("liboqs keygen failed", |ek, dk| unsafe {
                    keypair_derand(ek, dk, seed.as_ptr())
                })
            },
            |keys| *keys,
            |ek, m| {
                #[cfg(feature = "peers-liboqs")] // 0.13 has no encaps_derand.
                liboqs::oqs_crate::set_coins(m);
                // SAFETY: CT- and 32-byte buffers, an EK-byte ek and a
                // 32-byte m, as encaps reads and writes them.
                filled::<CT, 32>("liboqs rejected its ek", |ct, ss| unsafe {
                    #[cfg(feature = "peers-liboqs")]
                    let status = encaps(ct, ss, ek.as_ptr());
                    #[cfg(liboqs_system)]
                    let status = encaps(ct, ss, ek.as_ptr(), m.as_ptr());
                    status
                })
            },
            |dk, ct| {
                // SAFETY: a 32-byte buffer, a CT-byte ct and a DK-byte dk,
                // as decaps reads and writes them.
                let (ss, []) = filled("liboqs rejected its dk", |ss, _| unsafe {
                    decaps(ss, ct.as_ptr(), dk.as_ptr())
                });
                ss
            },
        )
    }};
}

/// The arms of [`adapter`] for each parameter set: kem-core's and
/// RustCrypto's type (whose hazmat encaps is not generic), libcrux's module.
macro_rules! parameter_sets {
    ($($k:literal => $set:ident, $libcrux:ident, $n:literal;)+) => {
        /// [`run`] for `peer` on the parameter set with this `k`.
        #[allow(deprecated)] // RustCrypto deprecates FIPS 203's expanded dk.
        fn adapter(peer: Peer, k: usize, label: &str) -> (KnownAnswer, Vec<Bench<'static>>) {
            match (k, peer) {
                $(
                    ($k, Peer::RustCrypto) => {
                        type Dk = ml_kem::DecapsulationKey<ml_kem::$set>;
                        type Ek = ml_kem::EncapsulationKey<ml_kem::$set>;
                        type Ct = ml_kem::Ciphertext<ml_kem::$set>;
                        let keygen = |seed: [u8; 64]| Dk::from_seed(seed.into());
                        let (answer, mut benches) = run(
                            label,
                            keygen,
                            |dk| (dk.encapsulation_key().to_bytes().to_vec(), dk.to_expanded_bytes().to_vec()),
                            |ek, m| {
                                let bytes = ml_kem::Key::<Ek>::try_from(ek.as_slice()).expect("ek length");
                                let ek = Ek::new(&bytes).expect("RustCrypto rejected its ek");
                                let (ct, ss) = ek.encapsulate_deterministic(&m.into());
                                (ct, ss.into())
                            },
                            |dk, ct: &Ct| {
                                type DkBytes = ml_kem::ExpandedDecapsulationKey<ml_kem::$set>;
                                let bytes = DkBytes::try_from(dk.as_slice()).expect("dk length");
                                let ct = Ct::try_from(ct.as_slice()).expect("ct length");
                                let dk = Dk::from_expanded(&bytes).expect("RustCrypto rejected its dk");
                                dk.decapsulate(&ct).into()
                            },
                        );
                        // The cached-key rows, on RustCrypto's parsed keys.
                        let dk = keygen(seed());
                        let ek = dk.encapsulation_key().clone();
                        let m = ml_kem::B32::from(M);
                        let (ct, _) = ek.encapsulate_deterministic(&m);
                        benches.push(Bench::new(label, Operation::EncapsCached, move || {
                            black_box(&ek).encapsulate_deterministic(black_box(&m))
                        }));
                        benches.push(Bench::new(label, Operation::DecapsCached, move || {
                            black_box(&dk).decapsulate(black_box(&ct))
                        }));
                        (answer, benches)
                    }
                    ($k, Peer::LibcruxPortable) => libcrux!(label, $libcrux::portable),
                    ($k, Peer::LibcruxAuto) => libcrux!(label, $libcrux),
                    #[cfg(any(feature = "peers-liboqs", liboqs_system))]
                    ($k, Peer::Liboqs) => liboqs!(label, $n, kem_core::$set),
                )+
                (k, _) => unreachable!("no ML-KEM parameter set with k = {k}"),
            }
        }
    };
}

parameter_sets! {
    2 => MlKem512, mlkem512, "512";
    3 => MlKem768, mlkem768, "768";
    4 => MlKem1024, mlkem1024, "1024";
}

/// liboqs's ML-KEM: 0.13 through the `oqs` crate (`peers-liboqs`) or one
/// installed here (`peers-liboqs-system`, found by `build.rs`); never both
/// (same C symbols), `linked` is the one built. FFI from `oqs/*.h`.
#[cfg(any(feature = "peers-liboqs", liboqs_system))]
mod liboqs {
    use std::ffi::{c_char, c_int, CStr};
    use std::sync::Once;

    #[cfg(feature = "peers-liboqs")]
    use oqs_crate as linked;
    #[cfg(liboqs_system)]
    use system as linked;

    pub(super) use linked::description;

    /// `OQS_STATUS`, a C enum (`OQS_SUCCESS` = 0).
    pub(super) type Status = c_int;

    unsafe extern "C" {
        fn OQS_init();
        fn OQS_version() -> *const c_char;
        fn OQS_CPU_has_extension(ext: c_int) -> c_int;
    }

    /// `OQS_init` and (`oqs` crate) the RNG callback, once.
    pub(super) fn init() {
        static INIT: Once = Once::new();
        // SAFETY: liboqs's initialization; no arguments, idempotent.
        INIT.call_once(|| unsafe {
            OQS_init();
            #[cfg(feature = "peers-liboqs")]
            oqs_crate::install_rng();
        });
    }

    /// Two buffers filled by the liboqs call `fill`, which must succeed (else: `what`).
    pub(super) fn filled<const A: usize, const B: usize>(
        what: &str,
        fill: impl FnOnce(*mut u8, *mut u8) -> Status,
    ) -> ([u8; A], [u8; B]) {
        let (mut a, mut b) = ([0u8; A], [0u8; B]);
        assert!(fill(a.as_mut_ptr(), b.as_mut_ptr()) == 0, "{what}");
        (a, b)
    }

    /// The table label, e.g. `liboqs/auto(avx2)` or
    /// `liboqs-system-0.16.0/fixed(avx2)` (`auto`: code picked at run time;
    /// `fixed`: the only code the build carries).
    pub(super) fn label() -> String {
        #[cfg(feature = "peers-liboqs")]
        let name = "liboqs".to_owned();
        #[cfg(liboqs_system)]
        let name = format!("liboqs-system-{}", version());
        let how = if linked::DIST { "auto" } else { "fixed" };
        format!("{name}/{how}({})", platform())
    }

    /// `OQS_version()`, e.g. `"0.16.0"`.
    fn version() -> String {
        // SAFETY: returns a pointer to a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr(OQS_version()) };
        version.to_string_lossy().into_owned()
    }

    /// liboqs's ML-KEM code path here, by its own rule: in a portable
    /// (`OQS_DIST_BUILD`) build, x86_64 code on AVX2+BMI2+POPCNT CPUs, aarch64
    /// code on NEON; else the native code built in. (An extension whose
    /// `OQS_CPU_EXT` value is unknown is asked of Rust's detection.)
    fn platform() -> &'static str {
        let [avx2, bmi2, popcnt, neon] = linked::cpu_extensions();
        let has = |ext: Option<c_int>, detected: bool| match ext {
            Some(ext) => {
                init();
                // SAFETY: liboqs's CPU-feature query, initialized above.
                unsafe { OQS_CPU_has_extension(ext) != 0 }
            }
            None => detected,
        };
        match linked::NATIVE {
            "x86_64"
                if !linked::DIST
                    || has(avx2, x86!("avx2"))
                        && has(bmi2, x86!("bmi2"))
                        && has(popcnt, x86!("popcnt")) =>
            {
                "avx2"
            }
            "aarch64" if !linked::DIST || has(neon, cfg!(target_arch = "aarch64")) => "neon",
            _ => "portable",
        }
    }

    /// liboqs 0.13 through the `oqs` crate, a portable build.
    #[cfg(feature = "peers-liboqs")]
    pub(super) mod oqs_crate {
        use std::cell::Cell;
        use std::ffi::c_int;

        use oqs::ffi::common::OQS_CPU_EXT::*;

        pub(super) const DIST: bool = true;
        pub(super) const NATIVE: &str = std::env::consts::ARCH;

        /// The `OQS_CPU_EXT` values of AVX2, BMI2, POPCNT and ARM_NEON.
        pub(super) fn cpu_extensions() -> [Option<c_int>; 4] {
            [
                OQS_CPU_EXT_AVX2,
                OQS_CPU_EXT_BMI2,
                OQS_CPU_EXT_POPCNT,
                OQS_CPU_EXT_ARM_NEON,
            ]
            .map(|ext| Some(ext as c_int))
        }

        pub(crate) fn description() -> String {
            format!(
                "liboqs {} (mlkem-native; oqs crate 0.11, ML-KEM only, no OpenSSL), \
                 run-time selection -> {}; keygen via OQS_KEM_keypair_derand, encaps \
                 with m fed through a liboqs RNG callback",
                super::version(),
                super::platform()
            )
        }

        thread_local! {
            static COINS: Cell<Option<[u8; 32]>> = const { Cell::new(None) };
        }

        /// Makes the next `OQS_randombytes` call on this thread return `m`
        /// (mlkem-native's encaps draws its m in one call).
        #[inline(always)]
        pub(crate) fn set_coins(m: [u8; 32]) {
            COINS.with(|coins| coins.set(Some(m)));
        }

        /// Installs [`coins`] as liboqs's RNG, for the whole process.
        pub(super) fn install_rng() {
            // SAFETY: `coins` has the signature liboqs expects and lives for
            // the whole program.
            unsafe { oqs::ffi::rand::OQS_randombytes_custom_algorithm(Some(coins)) };
        }

        /// `OQS_randombytes` replacement: hands out the m of [`set_coins`],
        /// once; any other draw aborts, as nothing else here should use it.
        ///
        /// # Safety
        /// `out` must be valid for `len` bytes of writes (liboqs's contract).
        unsafe extern "C" fn coins(out: *mut u8, len: usize) {
            let Some(m) = COINS.with(Cell::take).filter(|m| m.len() == len) else {
                eprintln!(
                    "peers: liboqs drew {len} random bytes, not the 32 coins of one encaps \
                     through this adapter (the only use of liboqs's RNG here)"
                );
                std::process::abort();
            };
            // SAFETY: the caller passes a buffer of `len` bytes.
            unsafe { std::ptr::copy_nonoverlapping(m.as_ptr(), out, len) }
        }
    }

    /// The liboqs installed on this machine (any with derandomized encaps);
    /// `build.rs` passes on what its headers say as
    /// `TEST_TOOLS_LIBOQS_SYSTEM_*`.
    #[cfg(liboqs_system)]
    mod system {
        pub(super) const DIST: bool =
            matches!(env!("TEST_TOOLS_LIBOQS_SYSTEM_DIST").as_bytes(), b"1");
        pub(super) const NATIVE: &str = env!("TEST_TOOLS_LIBOQS_SYSTEM_NATIVE");

        /// The `OQS_CPU_EXT` values `build.rs` found in `oqs/common.h`.
        pub(super) fn cpu_extensions() -> [Option<std::ffi::c_int>; 4] {
            [
                option_env!("TEST_TOOLS_LIBOQS_SYSTEM_CPU_EXT_AVX2"),
                option_env!("TEST_TOOLS_LIBOQS_SYSTEM_CPU_EXT_BMI2"),
                option_env!("TEST_TOOLS_LIBOQS_SYSTEM_CPU_EXT_POPCNT"),
                option_env!("TEST_TOOLS_LIBOQS_SYSTEM_CPU_EXT_ARM_NEON"),
            ]
            .map(|value| value.and_then(|v| v.parse().ok()))
        }

        pub(crate) fn description() -> String {
            let version = super::version();
            let headers = env!("TEST_TOOLS_LIBOQS_SYSTEM_HEADER_VERSION");
            let mismatch = if headers != version {
                format!(" (but its headers say {headers:?})")
            } else {
                String::new()
            };
            let selection = if DIST {
                "portable build, run-time selection"
            } else {
                "non-portable build, fixed code path"
            };
            let sha3 = match env!("TEST_TOOLS_LIBOQS_SYSTEM_SHA3_OPENSSL") {
                "1" => "OpenSSL's",
                _ => "liboqs's own",
            };
            format!(
                "liboqs {version}{mismatch} installed on this machine, {} library in {} \
                 (found through {}; built for {}), mlkem-native, {selection} -> {}, SHA-3 \
                 {sha3}; OQS_KEM_ml_kem_NNN_keypair_derand / _encaps_derand / _decaps",
                env!("TEST_TOOLS_LIBOQS_SYSTEM_LINK"),
                env!("TEST_TOOLS_LIBOQS_SYSTEM_LIBDIR"),
                env!("TEST_TOOLS_LIBOQS_SYSTEM_SOURCE"),
                env!("TEST_TOOLS_LIBOQS_SYSTEM_BUILD_TARGET"),
                super::platform(),
            )
        }
    }
}
